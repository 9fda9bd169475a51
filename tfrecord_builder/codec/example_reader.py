"""Reads serialised `tf.train.Example`s back into plain values, without TensorFlow.

For `inspect` (what keys and list types a file holds) and for checking records against a spec.
Accepts packed and unpacked lists, as any protobuf writer may produce.
"""
from __future__ import annotations

import struct
from typing import Any

from ..errors import DatasetError

_KINDS = {1: "bytes", 2: "float", 3: "int64"}


Stored = dict[str, tuple[str, list[Any]]]  # key -> (list kind, values)


def parse_example(data: bytes) -> Stored:
    """`{key: (kind, values)}` of one serialised Example; raises DatasetError if malformed."""
    features, _ = parse_record(data)
    return features


def parse_record(data: bytes) -> tuple[Stored, dict[str, list[tuple[str, list[Any]]]] | None]:
    """An Example's features, or a SequenceExample's context and its feature lists (each a list of
    steps); the feature lists are None for an Example (the two share field 1)."""
    try:
        features: Stored = {}
        lists: dict[str, list[tuple[str, list[Any]]]] | None = None
        for number, _, value in _fields(data):
            if number == 1:
                for entry_number, _, entry in _fields(value):
                    if entry_number == 1:
                        key, feature = _map_entry(entry)
                        features[key] = feature
            elif number == 2:
                lists = {} if lists is None else lists
                for entry_number, _, entry in _fields(value):
                    if entry_number == 1:
                        key, steps = _list_entry(entry)
                        lists[key] = steps
        return features, lists
    except (IndexError, struct.error, UnicodeDecodeError, ValueError) as error:
        raise DatasetError(f"not a valid tf.train.Example or SequenceExample: {error}") from None


def _list_entry(data: bytes) -> tuple[str, list[tuple[str, list[Any]]]]:
    key, steps = "", []
    for number, _, value in _fields(data):
        if number == 1:
            key = value.decode("utf-8")
        elif number == 2:
            steps = [_feature(step) for step_number, _, step in _fields(value) if step_number == 1]
    return key, steps


def _map_entry(data: bytes) -> tuple[str, tuple[str, list[Any]]]:
    key, feature = "", ("bytes", [])
    for number, _, value in _fields(data):
        if number == 1:
            key = value.decode("utf-8")
        elif number == 2:
            feature = _feature(value)
    return key, feature


def _feature(data: bytes) -> tuple[str, list[Any]]:
    kind, values = "bytes", []
    for number, wire, value in _fields(data):
        kind = _KINDS.get(number, kind)
        for item_number, item_wire, item in _fields(value):
            if item_number != 1:
                continue
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
