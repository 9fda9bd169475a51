"""Serialises `tf.train.Example` records column-wise, without TensorFlow or protobuf objects.

The bytes are exactly what `tf.train.Example.SerializeToString(deterministic=True)` gives (map
entries sorted by key), so output is byte-identical from run to run. Field numbers are those of
tensorflow/core/example/{example,feature}.proto.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ..features.values import Values
from .bytecolumn import ByteColumn, field, join, varint, varints

# Feature.kind: bytes_list = 1, float_list = 2, int64_list = 3; each list's `value` = 1.
_LIST_TAG = {"bytes": 0x0A, "float": 0x12, "int64": 0x1A}
_VALUE_TAG = 0x0A
_MAP_KEY_TAG, _MAP_VALUE_TAG = 0x0A, 0x12
_FEATURES_TAG = 0x0A  # Example.features, Features.feature and FeatureList.feature are all field 1


def feature_column(values: Values) -> ByteColumn:
    """The serialised `tf.train.Feature` of each row."""
    if values.kind == "float":
        flat = np.ascontiguousarray(values.values, dtype="<f4").reshape(-1)
        payload = ByteColumn(flat.view(np.uint8), _boundaries(values.counts) * 4)
        inner = field(_VALUE_TAG, payload, omit_empty=True)
    elif values.kind == "int64":
        flat = np.asarray(values.values, dtype=np.int64)
        inner = field(_VALUE_TAG, _group(varints(flat), values.counts), omit_empty=True)
    else:
        items = field(_VALUE_TAG, ByteColumn.from_rows(values.values))
        inner = _group(items, values.counts)
    return field(_LIST_TAG[values.kind], inner)


def examples(columns: Mapping[str, ByteColumn]) -> ByteColumn:
    """Serialised `tf.train.Example`s from each record key's serialised Feature column."""
    return field(_FEATURES_TAG, features_message(columns))


def features_message(columns: Mapping[str, ByteColumn]) -> ByteColumn:
    """The body of a `tf.train.Features` map (entries sorted by key, as deterministic protobuf does)."""
    entries = []
    for key in sorted(columns, key=lambda name: name.encode("utf-8")):
        column = columns[key]
        key_field = bytes([_MAP_KEY_TAG]) + varint(len(key.encode())) + key.encode()
        entry = join([ByteColumn.constant(key_field, column.num_rows), field(_MAP_VALUE_TAG, column)])
        entries.append(field(_FEATURES_TAG, entry))
    return join(entries)


def _group(items: ByteColumn, counts: np.ndarray) -> ByteColumn:
    """Merges consecutive rows of `items` into one row per record, `counts[i]` items each."""
    return ByteColumn(items.data, items.offsets[_boundaries(counts)])


def _boundaries(counts: np.ndarray) -> np.ndarray:
    boundaries = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=boundaries[1:])
    return boundaries
