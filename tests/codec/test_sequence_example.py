"""The column-wise SequenceExample encoder gives exactly TensorFlow's deterministic serialisation."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tfrecord_builder.codec.sequence_example import sequence_examples
from tfrecord_builder.features.values import Values

KINDS = {"int64": st.integers(-(2**63), 2**63 - 1), "float": st.floats(width=32, allow_nan=False),
         "bytes": st.binary(max_size=20)}
KEYS = st.text(min_size=1, max_size=6)


def _flat(kind, values):
    if kind == "float":
        return np.array(values, dtype=np.float32)
    if kind == "int64":
        return np.array(values, dtype=np.int64)
    return list(values)


@st.composite
def records(draw):
    num_records = draw(st.integers(1, 4))
    keys = draw(st.lists(KEYS, min_size=1, max_size=4, unique=True))
    split = draw(st.integers(0, len(keys) - 1))
    context, sequence = {}, {}
    for key in keys[:split]:
        kind = draw(st.sampled_from(sorted(KINDS)))
        context[key] = (kind, [draw(st.lists(KINDS[kind], max_size=3)) for _ in range(num_records)])
    for key in keys[split:]:
        kind = draw(st.sampled_from(sorted(KINDS)))
        sequence[key] = (kind, [[draw(st.lists(KINDS[kind], max_size=3)) for _ in range(draw(st.integers(0, 3)))]
                                for _ in range(num_records)])
    return num_records, context, sequence


def _feature(tf, kind, values):
    if kind == "float":
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))
    if kind == "int64":
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))


@settings(max_examples=150, deadline=None)
@given(records())
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
            example.context.feature[key].CopyFrom(_feature(tf, kind, rows[index]))
        for key, (kind, records) in sequence.items():
            feature_list = example.feature_lists.feature_list[key]
            feature_list.SetInParent()
            for step in records[index]:
                feature_list.feature.add().CopyFrom(_feature(tf, kind, step))
        assert ours[index] == example.SerializeToString(deterministic=True)
