"""Reads serialised `tf.train.Example`s back into plain values, without TensorFlow.

For `inspect` (what keys and list types a file holds) and for checking records against a spec.
Accepts packed and unpacked lists, as any protobuf writer may produce.
"""
from __future__ import annotations

import struct
from typing import Any

from ..errors import DatasetError

_KINDS = {1: "bytes", 2: "float", 3: "int64"}
_ITEM_WIRES = {"bytes": {2}, "float": {2, 5}, "int64": {2, 0}}  # packed, or one value a field


Stored = dict[str, tuple[str, list[Any]]]  # key -> (list kind, values)


def parse_record(data: bytes) -> tuple[Stored, dict[str, list[tuple[str, list[Any]]]] | None]:
    """An Example's features, or a SequenceExample's context and its feature lists (each a list of
    steps); the feature lists are None for an Example (the two share field 1)."""
    try:
        features: Stored = {}
        lists: dict[str, list[tuple[str, list[Any]]]] | None = None
        for number, wire, value in _fields(data):
            if number == 1:
                for entry_number, entry_wire, entry in _fields(_delimited(wire, value)):
                    if entry_number == 1:
                        key, feature = _map_entry(_delimited(entry_wire, entry))
                        features[key] = feature
            elif number == 2:
                lists = {} if lists is None else lists
                for entry_number, entry_wire, entry in _fields(_delimited(wire, value)):
                    if entry_number == 1:
                        key, steps = _list_entry(_delimited(entry_wire, entry))
                        lists[key] = steps
        return features, lists
    except (IndexError, struct.error, UnicodeDecodeError, ValueError) as error:
        raise DatasetError(f"not a valid tf.train.Example or SequenceExample: {error}") from None


def _list_entry(data: bytes) -> tuple[str, list[tuple[str, list[Any]]]]:
    key, steps = "", []
    for number, wire, value in _fields(data):
        if number == 1:
            key = _delimited(wire, value).decode("utf-8")
        elif number == 2:
            steps = [_feature(_delimited(step_wire, step))
                     for step_number, step_wire, step in _fields(_delimited(wire, value)) if step_number == 1]
    return key, steps


def _map_entry(data: bytes) -> tuple[str, tuple[str, list[Any]]]:
    key, feature = "", ("bytes", [])
    for number, wire, value in _fields(data):
        if number == 1:
            key = _delimited(wire, value).decode("utf-8")
        elif number == 2:
            feature = _feature(_delimited(wire, value))
    return key, feature


def _feature(data: bytes) -> tuple[str, list[Any]]:
    kind, values = "bytes", []
    for number, wire, value in _fields(data):
        if number not in _KINDS:
            continue  # an unknown field, as protobuf skips one
        kind = _KINDS[number]
        for item_number, item_wire, item in _fields(_delimited(wire, value)):
            if item_number != 1:
                continue
            if item_wire not in _ITEM_WIRES[kind]:
                raise ValueError(f"a {kind} list holds a value of wire type {item_wire}")
            if kind == "bytes":
                values.append(item)
            elif kind == "float":
                values.extend(struct.unpack(f"<{len(item) // 4}f", item) if item_wire == 2 else [item])
            else:
                values.extend(_signed(v) for v in (_varints(item) if item_wire == 2 else [item]))
    return kind, values


def _fields(data: bytes):
    position = 0
    while position < len(data):
        tag, position = _varint(data, position)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, position = _varint(data, position)
        elif wire == 2:
            length, position = _varint(data, position)
            if position + length > len(data):
                raise ValueError("field runs past the end of the record")
            value, position = data[position : position + length], position + length
        elif wire == 5:
            (value,) = struct.unpack_from("<f", data, position)
            position += 4
        elif wire == 1:
            (value,) = struct.unpack_from("<d", data, position)
            position += 8
        else:
            raise ValueError(f"unsupported wire type {wire}")
        yield number, wire, value


def _delimited(wire: int, value: Any) -> bytes:
    """A field that holds a message or a string: any wire type but length-delimited is damage
    (which would otherwise be read on as if it were bytes)."""
    if wire != 2:
        raise ValueError(f"a field of wire type {wire} where a message or string belongs")
    return value


def _varint(data: bytes, position: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, position
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _varints(data: bytes) -> list[int]:
    values, position = [], 0
    while position < len(data):
        value, position = _varint(data, position)
        values.append(value)
    return values


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value
