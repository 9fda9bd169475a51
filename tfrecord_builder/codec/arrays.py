"""The one wire decoder of serialised `tf.train.Example`s and `SequenceExample`s, without TensorFlow.

`tb.read`, `Dataset.record`, `verify` (record by record, and for what its column-wise reader sets
aside) and `inspect` all read records here, so one record reads one way everywhere: each list as
an array (int64, float32, or an object array of bytes), packed or not, as any protobuf writer may
write it. The error policy, in protobuf's terms:

- a field this decoder doesn't know is skipped by its wire type, as protobuf skips one
  (TensorFlow's fast parser is stricter: it refuses one inside a list or a map entry);
- a known field of the wrong wire type (a varint where a message belongs, a fixed64 in a float
  list), a field running past its message, a bad varint or a key that isn't UTF-8 is refused:
  ValueError here, which the callers turn into a DatasetError naming the shard and record;
- a Feature with no list set (protobuf's empty oneof) is an empty list of no kind, `NO_VALUES`:
  as TensorFlow's parser takes it, it matches whichever kind the spec expects.
"""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from ..errors import DatasetError

Lists = dict[str, np.ndarray]  # record key -> its values
Steps = dict[str, list[np.ndarray]]  # record key -> each step's values

NO_KIND = "-"  # the kind of an empty Feature's list: none (TensorFlow's parser: DT_INVALID)
# an empty Feature's values: bool is none of the three kinds, and casts to any of them
NO_VALUES = np.zeros(0, dtype=bool)
NO_VALUES.flags.writeable = False
_EMPTY = {1: np.zeros(0, dtype=object), 2: np.zeros(0, dtype=np.float32), 3: np.zeros(0, dtype=np.int64)}
_KIND_OF_DTYPE = {"O": "bytes", "f": "float", "i": "int64"}


def kind_of(values: np.ndarray) -> str:
    """The list kind an array of `parse_arrays` was read from (`NO_KIND` for an empty Feature)."""
    return _KIND_OF_DTYPE.get(values.dtype.kind, NO_KIND)


def refused(where: str, error: ValueError) -> DatasetError:
    """The one error for a record the decoder refuses; `where` names the shard and record."""
    return DatasetError(f"{where}: not a valid tf.train.Example or SequenceExample: {error}")


def parse_arrays(data: bytes, keys: frozenset[str] | None = None) -> tuple[Lists, Steps | None]:
    """An Example's features (a SequenceExample's context) and a SequenceExample's feature lists
    (None for an Example: the two share field 1). `keys`: only these record keys of the features
    are parsed (None: all), so a few features of a record of thousands cost little.
    A record that breaks the error policy (above) raises ValueError saying what."""
    try:
        return _parse(memoryview(data), keys)
    except IndexError:
        raise ValueError("a field runs past the end of its message") from None
    except UnicodeDecodeError:
        raise ValueError("a key is not UTF-8") from None


def _parse(view: memoryview, keys: frozenset[str] | None = None) -> tuple[Lists, Steps | None]:
    features: Lists = {}
    lists: Steps | None = None
    wanted = None if keys is None else {key.encode("utf-8") for key in keys}
    for number, start, end in _fields(view, 0, len(view), "Example", _TWO):
        if number == 1 and wanted is not None:
            _wanted_entries(view, start, end, wanted, features)
        elif number == 1:
            for entry, entry_start, entry_end in _fields(view, start, end, "Features", _ONE):
                if entry == 1:
                    key, (first, last) = _entry(view, entry_start, entry_end, "Features entry")
                    features[key] = _feature(view, first, last)
        elif number == 2:
            lists = {} if lists is None else lists
            for entry, entry_start, entry_end in _fields(view, start, end, "FeatureLists", _ONE):
                if entry == 1:
                    key, (first, last) = _entry(view, entry_start, entry_end, "FeatureLists entry")
                    lists[key] = [_feature(view, step_start, step_end)
                                  for step, step_start, step_end in _fields(view, first, last, "FeatureList", _ONE)
                                  if step == 1]
    return features, lists


def _wanted_entries(view: memoryview, start: int, end: int, wanted: set[bytes], features: Lists) -> None:
    """The Features map's entries whose key is `wanted`; the others are skipped unread where the
    key comes first (as every writer puts it), which makes a few features of thousands cheap."""
    for entry, entry_start, entry_end in _fields(view, start, end, "Features", _ONE):
        if entry != 1:
            continue
        if entry_end - entry_start >= 2 and view[entry_start] == 0x0A and view[entry_start + 1] < 0x80:
            size = view[entry_start + 1]
            if bytes(view[entry_start + 2:entry_start + 2 + size]) not in wanted:
                continue
        key, (first, last) = _entry(view, entry_start, entry_end, "Features entry")
        if key.encode("utf-8") in wanted:
            features[key] = _feature(view, first, last)


def _entry(view: memoryview, start: int, end: int, message: str) -> tuple[str, tuple[int, int]]:
    """A map entry's key and its value's span (protobuf's defaults where either is left out)."""
    key, value = "", (start, start)
    for number, first, last in _fields(view, start, end, message, _TWO):
        if number == 1:
            key = bytes(view[first:last]).decode("utf-8")
        elif number == 2:
            value = (first, last)
    return key, value


def _feature(view: memoryview, start: int, end: int) -> np.ndarray:
    """A tf.train.Feature's one list as an array; a kind set twice merges, as protobuf merges a
    message field, and the last kind set wins (a oneof); none set: `NO_VALUES`."""
    found: np.ndarray | None = None
    found_kind = 0
    for number, first, last in _fields(view, start, end, "Feature", _THREE):
        if number in _EMPTY:
            values = _values(view, number, first, last)
            found = np.concatenate([found, values]) if number == found_kind and found is not None else values
            found_kind = number
    return found if found is not None else NO_VALUES


def _values(view: memoryview, kind: int, start: int, end: int) -> np.ndarray:
    """A BytesList (1), FloatList (2) or Int64List (3): its `value` fields, packed or one per field."""
    if kind == 1:
        items = [bytes(view[first:last]) for number, first, last in _fields(view, start, end, "BytesList", _ONE)
                 if number == 1]
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
                _check(position + length <= end)
                if length % 4:
                    raise ValueError(f"a packed FloatList of {length} bytes (not a multiple of 4)")
                parts.append(np.frombuffer(view[position : position + length], dtype="<f4"))
                position += length
            elif tag == 0x0D:  # one value
                _check(position + 4 <= end)
                parts.append(np.frombuffer(view[position : position + 4], dtype="<f4"))
                position += 4
            else:
                position = _skip(view, tag, position, end, "FloatList", "a float (fixed32) or a packed list")
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
            position = _skip(view, tag, position, end, "Int64List", "a varint or a packed list")
    return np.array(values, dtype=np.uint64).view(np.int64) if values else _EMPTY[3]


# field numbers known in a message, all of them length-delimited: any other wire type is refused
_ONE, _TWO, _THREE = frozenset({1}), frozenset({1, 2}), frozenset({1, 2, 3})
_NAMES = {0: "varint", 1: "fixed64", 3: "start group", 4: "end group", 5: "fixed32"}


def _fields(view: memoryview, start: int, end: int, message: str, known: frozenset[int]) -> Iterator[Any]:
    """(field number, content start, content end) of each length-delimited field in a span;
    fields unknown to `message` are skipped by wire type, known ones of another are refused."""
    position = start
    while position < end:
        tag, position = _varint(view, position)
        if tag & 7 == 2:
            length, position = _varint(view, position)
            _check(position + length <= end)
            yield tag >> 3, position, position + length
            position += length
        elif tag >> 3 in known:
            raise ValueError(_wrong_wire(message, tag, "a length-delimited field"))
        else:
            position = _skip(view, tag, position, end, message)


def _skip(view: memoryview, tag: int, position: int, end: int, message: str, expected: str | None = None) -> int:
    """Past an unknown field. `expected`: a list's field 1 (its values) reached here, whose wire
    type is none of those it may have (`expected` says which), and is refused."""
    wire = tag & 7
    if tag >> 3 == 0:
        raise ValueError(f"a {message} holds field number 0, which no message has")
    if expected is not None and tag >> 3 == 1:
        raise ValueError(_wrong_wire(message, tag, expected))
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
        raise ValueError(f"a {message} holds a field of wire type {wire}"
                         f"{' (' + _NAMES[wire] + ')' if wire in _NAMES else ''}, which this reader doesn't skip")
    _check(position <= end)
    return position


def _wrong_wire(message: str, tag: int, expected: str) -> str:
    wire = tag & 7
    named = f" ({_NAMES[wire]})" if wire in _NAMES else ""
    return f"field {tag >> 3} of a {message} has wire type {wire}{named}, where {expected} belongs"


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
            raise ValueError("a varint longer than 10 bytes")


def _check(condition: bool) -> None:
    if not condition:
        raise ValueError("a field runs past the end of its message")
