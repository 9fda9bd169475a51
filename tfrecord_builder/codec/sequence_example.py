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
from .bytecolumn import ByteColumn, join
from .wire import nest_parts
from .example import entry_parts, feature_levels, join_records, key_field, map_order

_CONTEXT_TAG, _FEATURE_LISTS_TAG = 0x0A, 0x12
_ENTRY_TAG, _MAP_VALUE_TAG, _STEP_TAG = 0x0A, 0x12, 0x0A


def feature_list_entry_parts(key: str, values: Values) -> list[ByteColumn]:
    """Each record's `FeatureLists.feature_list` map entry for `key` (a Feature per step), as parts."""
    payload, levels = feature_levels(values)
    steps = join(nest_parts(payload, levels + [(_STEP_TAG, b"", False)]))  # every step as FeatureList.feature
    boundaries = np.zeros(len(values.steps) + 1, dtype=np.int64)
    np.cumsum(values.steps, out=boundaries[1:])
    feature_lists = ByteColumn(steps.data, steps.offsets[boundaries])
    return nest_parts([feature_lists], [(_MAP_VALUE_TAG, b"", False), (_ENTRY_TAG, key_field(key), False)])


def sequence_examples(context: Mapping[str, Values], sequence: Mapping[str, Values],
                      framed: bool = False) -> ByteColumn:
    """Serialised SequenceExamples from the context values and the per-step sequence values
    (`framed`: each framed as a TFRecord in the same join)."""
    parts = []
    if context:
        entries = [part for key in sorted(context, key=map_order) for part in entry_parts(key, context[key])]
        parts += nest_parts(entries, [(_CONTEXT_TAG, b"", False)])
    lists = [part for key in sorted(sequence, key=map_order) for part in feature_list_entry_parts(key, sequence[key])]
    parts += nest_parts(lists, [(_FEATURE_LISTS_TAG, b"", False)])
    return join_records(parts, framed)
