"""Serialises `tf.train.SequenceExample` records column-wise, like `example.py` does Examples.

    SequenceExample.context = 1 (a Features), feature_lists = 2 (FeatureLists);
    FeatureLists.feature_list = 1 (map: key = 1, value = 2, a FeatureList);
    FeatureList.feature = 1 (one Feature per step).

The context is left out when the spec declares none, as protobuf leaves out an unset message.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ..features.values import Values
from .bytecolumn import ByteColumn, field, join, nest
from .example import entry_column, feature_levels, key_field, map_order

_CONTEXT_TAG, _FEATURE_LISTS_TAG = 0x0A, 0x12
_ENTRY_TAG, _MAP_VALUE_TAG, _STEP_TAG = 0x0A, 0x12, 0x0A


def feature_list_entry_column(key: str, values: Values) -> ByteColumn:
    """Each record's `FeatureLists.feature_list` map entry for `key` (a Feature per step)."""
    payload, levels = feature_levels(values)
    steps = nest(payload, levels + [(_STEP_TAG, b"", False)])  # every step as FeatureList.feature
    boundaries = np.zeros(len(values.steps) + 1, dtype=np.int64)
    np.cumsum(values.steps, out=boundaries[1:])
    feature_lists = ByteColumn(steps.data, steps.offsets[boundaries])
    return nest(feature_lists, [(_MAP_VALUE_TAG, b"", False), (_ENTRY_TAG, key_field(key), False)])


def sequence_examples(context: Mapping[str, Values], sequence: Mapping[str, Values]) -> ByteColumn:
    """Serialised SequenceExamples from the context values and the per-step sequence values."""
    parts = []
    if context:
        entries = [entry_column(key, context[key]) for key in sorted(context, key=map_order)]
        parts.append(field(_CONTEXT_TAG, join(entries)))
    lists = [feature_list_entry_column(key, sequence[key]) for key in sorted(sequence, key=map_order)]
    parts.append(field(_FEATURE_LISTS_TAG, join(lists)))
    return join(parts)
