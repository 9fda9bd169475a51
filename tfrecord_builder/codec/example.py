"""Serialises `tf.train.Example` records column-wise, without TensorFlow or protobuf objects.

The bytes are exactly what `tf.train.Example.SerializeToString(deterministic=True)` gives with
protobuf's default runtime (see `map_order`), so output is byte-identical from run to run. (Any
order of map entries parses to the same Example; only byte-identity depends on it.) Field
numbers are those of tensorflow/core/example/{example,feature}.proto:

    Example.features = 1; Features.feature = 1 (map: key = 1, value = 2);
    Feature.bytes_list = 1, float_list = 2, int64_list = 3; each list's repeated value = 1.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ..features.values import Values
from .bytecolumn import ByteColumn, join
from .wire import LIST_TAG, nest_parts, varint, varints
from .tfrecord import framed_join

_VALUE_TAG = 0x0A  # the lists' `value`, and Example.features / Features.feature / FeatureList.feature
_MAP_KEY_TAG, _MAP_VALUE_TAG = 0x0A, 0x12

Level = tuple[int, bytes, bool]


def feature_column(values: Values) -> ByteColumn:
    """The serialised `tf.train.Feature` of each row."""
    payload, levels = feature_levels(values)
    return join(nest_parts(payload, levels))


def entry_parts(key: str, values: Values) -> list[ByteColumn]:
    """Each row's `Features.feature` map entry for `key` (the Feature wrapped with its key, in one
    pass), as parts not yet joined."""
    payload, levels = feature_levels(values)
    return nest_parts(payload, levels + [(_MAP_VALUE_TAG, b"", False), (_VALUE_TAG, key_field(key), False)])


def key_field(key: str) -> bytes:
    """A map entry's key field."""
    encoded = key.encode("utf-8")
    return bytes([_MAP_KEY_TAG]) + varint(len(encoded)) + encoded


def examples(entries: Mapping[str, list[ByteColumn]], framed: bool = False) -> ByteColumn:
    """Serialised Examples from each key's map-entry parts, entries in `map_order`: one join
    (`framed`: each record framed as a TFRecord in the same join)."""
    parts = [part for key in sorted(entries, key=map_order) for part in entries[key]]
    return join_records(nest_parts(parts, [(_VALUE_TAG, b"", False)]), framed)


def join_records(parts: list[ByteColumn], framed: bool) -> ByteColumn:
    """The records whose row-wise join the parts are; framed as TFRecords if `framed`."""
    return framed_join(parts) if framed else join(parts)


def map_order(key: str) -> bytes:
    """The order deterministic serialisation gives map keys under protobuf's default (upb) runtime.

    upb compares the shared prefix bytewise and puts the longer key first when one key is a
    prefix of the other ("ab" before "a"). 0xFF never occurs in UTF-8, so appending it sorts a
    key after every key it is a prefix of.
    """
    return key.encode("utf-8") + b"\xff"


def feature_levels(values: Values) -> tuple[list[ByteColumn], list[Level]]:
    """A Feature's innermost payload per row (per step, for a sequence), as parts whose row-wise
    join it is, and the fields that wrap it."""
    boundaries = np.zeros(values.num_rows + 1, dtype=np.int64)
    np.cumsum(values.counts, out=boundaries[1:])
    if values.kind == "bytes":
        items = nest_parts([ByteColumn.from_rows(values.values)], [(_VALUE_TAG, b"", False)])
        if len(values.values) == values.num_rows and (values.counts == 1).all():
            return items, [(LIST_TAG["bytes"], b"", False)]  # one value a row: joined only once, at the end
        joined = join(items)
        return [ByteColumn(joined.data, joined.offsets[boundaries])], [(LIST_TAG["bytes"], b"", False)]
    if values.kind == "float":
        flat = np.ascontiguousarray(values.values, dtype="<f4").reshape(-1)
        payload = ByteColumn(flat.view(np.uint8), boundaries * 4)
    else:
        items = varints(np.asarray(values.values, dtype=np.int64))
        payload = ByteColumn(items.data, items.offsets[boundaries])
    # packed values are left out entirely when a list is empty, as protobuf does
    return [payload], [(_VALUE_TAG, b"", True), (LIST_TAG[values.kind], b"", False)]


def features_entries(values: Mapping[str, Values]) -> dict[str, list[ByteColumn]]:
    """Every record key's map-entry parts."""
    return {key: entry_parts(key, item) for key, item in values.items()}
