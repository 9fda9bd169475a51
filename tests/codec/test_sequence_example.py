"""The column-wise SequenceExample encoder gives exactly TensorFlow's deterministic serialisation."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings

from tfrecord_builder.codec.sequence_example import sequence_examples
from tfrecord_builder.features.values import Values

from support.wire import sequence_records, tf_feature


def _flat(kind, values):
    if kind == "float":
        return np.array(values, dtype=np.float32)
    if kind == "int64":
        return np.array(values, dtype=np.int64)
    return list(values)


@settings(max_examples=150, deadline=None)
@given(sequence_records())
def test_sequence_examples_equal_tensorflow_deterministic_serialisation(tf, drawn):
    num_records, context, sequence = drawn
    context_values = {
        key: Values(kind, _flat(kind, [v for row in rows for v in row]), np.array([len(row) for row in rows]))
        for key, (kind, rows) in context.items()}
    sequence_values = {
        key: Values(kind, _flat(kind, [v for steps in records for step in steps for v in step]),
                    np.array([len(step) for steps in records for step in steps], np.int64),
                    np.array([len(steps) for steps in records], np.int64))
        for key, (kind, records) in sequence.items()}
    ours = sequence_examples(context_values, sequence_values).rows()
    for index in range(num_records):
        example = tf.train.SequenceExample()
        for key, (kind, rows) in context.items():
            example.context.feature[key].CopyFrom(tf_feature(tf, kind, rows[index]))
        for key, (kind, records) in sequence.items():
            feature_list = example.feature_lists.feature_list[key]
            feature_list.SetInParent()
            for step in records[index]:
                feature_list.feature.add().CopyFrom(tf_feature(tf, kind, step))
        assert ours[index] == example.SerializeToString(deterministic=True)
