"""Serialised `tf.train.Example`s and `SequenceExample`s read into NumPy arrays, without TensorFlow.

What `tb.read` and `Dataset.record` parse records with: each list as an array (int64, float32,
or an object array of bytes), packed or not, as any protobuf writer may write them. Unknown fields
are skipped as protobuf skips them; a malformed record raises ValueError.
"""
from __future__ import annotations

from typing import Any

import numpy as np

Lists = dict[str, np.ndarray]  # record key -> its values
Steps = dict[str, list[np.ndarray]]  # record key -> each step's values

_EMPTY = {1: np.zeros(0, dtype=object), 2: np.zeros(0, dtype=np.float32), 3: np.zeros(0, dtype=np.int64)}


def parse_arrays(data: bytes, keys: frozenset[str] | None = None) -> tuple[Lists, Steps | None]:
    """An Example's features (a SequenceExample's context) and a SequenceExample's feature lists
    (None for an Example: the two share field 1). `keys`: only these record keys of the features
    are parsed (None: all), so a few features of a record of thousands cost little."""
    try:
        return _parse(memoryview(data), keys)
    except (IndexError, UnicodeDecodeError) as error:
        raise ValueError(f"a field runs past the end of its message ({error})") from None


def _parse(view: memoryview, keys: frozenset[str] | None = None) -> tuple[Lists, Steps | None]:
    features: Lists = {}
    lists: Steps | None = None
    wanted = None if keys is None else {key.encode("utf-8") for key in keys}
    for number, start, end in _fields(view, 0, len(view)):
        if number == 1 and wanted is not None:
            _wanted_entries(view, start, end, wanted, features)
        elif number == 1:
            for entry, entry_start, entry_end in _fields(view, start, end):
                if entry == 1:
                    key, (first, last) = _entry(view, entry_start, entry_end)
                    features[key] = _feature(view, first, last)
        elif number == 2:
            lists = {} if lists is None else lists
            for entry, entry_start, entry_end in _fields(view, start, end):
                if entry == 1:
                    key, (first, last) = _entry(view, entry_start, entry_end)
                    lists[key] = [_feature(view, step_start, step_end)
                                  for step, step_start, step_end in _fields(view, first, last) if step == 1]
    return features, lists


def _wanted_entries(view: memoryview, start: int, end: int, wanted: set[bytes], features: Lists) -> None:
    """The Features map's entries whose key is `wanted`; the others are skipped unread where the
    key comes first (as every writer puts it), which makes a few features of thousands cheap."""
    position = start
    while position < end:
        tag, position = _varint(view, position)
        if tag != 0x0A:  # not a map entry (field 1, length-delimited)
            position = _skip(view, tag, position, end)
            continue
        length, position = _varint(view, position)
        entry_start, entry_end = position, position + length
        _check(entry_end <= end)
        position = entry_end
        if view[entry_start] == 0x0A and view[entry_start + 1] < 0x80:
            size = view[entry_start + 1]
            if bytes(view[entry_start + 2:entry_start + 2 + size]) not in wanted:
                continue
        key, (first, last) = _entry(view, entry_start, entry_end)
        if key.encode("utf-8") in wanted:
            features[key] = _feature(view, first, last)


def _entry(view: memoryview, start: int, end: int) -> tuple[str, tuple[int, int]]:
    """A map entry's key and its value's span."""
    key, value = "", (start, start)
    for number, first, last in _fields(view, start, end):
        if number == 1:
            key = bytes(view[first:last]).decode("utf-8")
        elif number == 2:
            value = (first, last)
    return key, value


def _feature(view: memoryview, start: int, end: int) -> np.ndarray:
    """A tf.train.Feature's one list as an array (an absent list: an empty float one, as protobuf
    would read it: no list at all)."""
    found: np.ndarray | None = None
    for number, first, last in _fields(view, start, end):
        if number in _EMPTY:
            found = _values(view, number, first, last)
    return found if found is not None else _EMPTY[2]


def _values(view: memoryview, kind: int, start: int, end: int) -> np.ndarray:
    """A BytesList (1), FloatList (2) or Int64List (3): its `value` fields, packed or one per field."""
    if kind == 1:
        items = [bytes(view[first:last]) for number, first, last in _fields(view, start, end) if number == 1]
        array = np.empty(len(items), dtype=object)
        array[:] = items
        return array
    position = start
    if kind == 2:
        parts = []
        while position < end:
            tag, position = _varint(view, position)
            if tag == 0x0A:  # packed
                length, position = _varint(view, position)
                _check(position + length <= end and length % 4 == 0)
                parts.append(np.frombuffer(view[position : position + length], dtype="<f4"))
                position += length
            elif tag == 0x0D:  # one value
                _check(position + 4 <= end)
                parts.append(np.frombuffer(view[position : position + 4], dtype="<f4"))
                position += 4
            else:
                position = _skip(view, tag, position, end)
        return np.concatenate(parts).astype(np.float32) if parts else _EMPTY[2]
    values: list[int] = []
    while position < end:
        tag, position = _varint(view, position)
        if tag == 0x0A:  # packed
            length, position = _varint(view, position)
            stop = position + length
            _check(stop <= end)
            while position < stop:
                value, position = _varint(view, position)
                values.append(value)
            _check(position == stop)
        elif tag == 0x08:  # one value
            value, position = _varint(view, position)
            values.append(value)
        else:
            position = _skip(view, tag, position, end)
    return np.array(values, dtype=np.uint64).view(np.int64) if values else _EMPTY[3]


def _fields(view: memoryview, start: int, end: int) -> Any:
    """(field number, content start, content end) of each length-delimited field in a span;
    fields of other wire types are skipped."""
    position = start
    while position < end:
        tag, position = _varint(view, position)
        if tag & 7 == 2:
            length, position = _varint(view, position)
            _check(position + length <= end)
            yield tag >> 3, position, position + length
            position += length
        else:
            position = _skip(view, tag, position, end)


def _skip(view: memoryview, tag: int, position: int, end: int) -> int:
    wire = tag & 7
    if wire == 0:
        _, position = _varint(view, position)
    elif wire == 1:
        position += 8
    elif wire == 5:
        position += 4
    elif wire == 2:
        length, position = _varint(view, position)
        position += length
    else:
        raise ValueError(f"unsupported wire type {wire}")
    _check(position <= end)
    return position


def _varint(view: memoryview, position: int) -> tuple[int, int]:
    byte = view[position]
    if byte < 0x80:
        return byte, position + 1
    result, shift = byte & 0x7F, 7
    while True:
        position += 1
        byte = view[position]
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result & 0xFFFFFFFFFFFFFFFF, position + 1
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _check(condition: bool) -> None:
    if not condition:
        raise ValueError("a field runs past the end of its message")

