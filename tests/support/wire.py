"""Records drawn by Hypothesis and what TensorFlow makes of them: tables of Example features and
SequenceExamples of context and steps, encoded by our column-wise encoder and by TensorFlow's
protobuf classes (deterministic serialisation), for the codec's tests to compare byte for byte."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tfrecord_builder.codec.example import examples, features_entries
from tfrecord_builder.features.values import Values

INT64 = st.integers(-(2**63), 2**63 - 1)
FLOAT32 = st.floats(width=32, allow_nan=False)
BYTES = st.binary(max_size=40)
KINDS = {"int64": INT64, "float": FLOAT32, "bytes": BYTES}
SEQUENCE_KINDS = {"int64": st.integers(-(2**63), 2**63 - 1), "float": st.floats(width=32, allow_nan=False),
                  "bytes": st.binary(max_size=20)}
SEQUENCE_KEYS = st.text(min_size=1, max_size=6)


@st.composite
def tables(draw, max_values=5, kinds=KINDS, keys=st.text(min_size=1, max_size=12)):
    """A batch of records: per key, a list kind and each row's list of values."""
    num_rows = draw(st.integers(1, 6))
    keys = draw(st.lists(keys, min_size=1, max_size=5, unique=True))
    table = {}
    for key in keys:
        kind = draw(st.sampled_from(sorted(kinds)))
        rows = [draw(st.lists(kinds[kind], max_size=max_values)) for _ in range(num_rows)]
        table[key] = (kind, rows)
    return num_rows, table


def encode(table):
    """A `tables` table's records, serialised by our column-wise encoder."""
    columns = {}
    for key, (kind, rows) in table.items():
        flat = [value for row in rows for value in row]
        if kind == "float":
            flat = np.array(flat, dtype=np.float32)
        elif kind == "int64":
            flat = np.array(flat, dtype=np.int64)
        columns[key] = Values(kind, flat, np.array([len(row) for row in rows], np.int64))
    return examples(features_entries(columns)).rows()


def reference(tf, table, row):
    """The table's record `row` as TensorFlow serialises it (deterministic)."""
    feature = {}
    for key, (kind, rows) in table.items():
        if kind == "float":
            feature[key] = tf.train.Feature(float_list=tf.train.FloatList(value=rows[row]))
        elif kind == "int64":
            feature[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=rows[row]))
        else:
            feature[key] = tf.train.Feature(bytes_list=tf.train.BytesList(value=rows[row]))
    example = tf.train.Example(features=tf.train.Features(feature=feature))
    return example.SerializeToString(deterministic=True)


@st.composite
def sequence_records(draw):
    """SequenceExamples to encode: (number of records, {key: (kind, each record's list)} of the
    context, {key: (kind, each record's steps, each a list)} of the sequence)."""
    num_records = draw(st.integers(1, 4))
    keys = draw(st.lists(SEQUENCE_KEYS, min_size=1, max_size=4, unique=True))
    split = draw(st.integers(0, len(keys) - 1))
    context, sequence = {}, {}
    for key in keys[:split]:
        kind = draw(st.sampled_from(sorted(SEQUENCE_KINDS)))
        context[key] = (kind, [draw(st.lists(SEQUENCE_KINDS[kind], max_size=3)) for _ in range(num_records)])
    for key in keys[split:]:
        kind = draw(st.sampled_from(sorted(SEQUENCE_KINDS)))
        sequence[key] = (kind, [[draw(st.lists(SEQUENCE_KINDS[kind], max_size=3)) for _ in range(draw(st.integers(0, 3)))]
                                for _ in range(num_records)])
    return num_records, context, sequence


def tf_feature(tf, kind, values):
    """A tf.train.Feature of one list kind (`tf`: TensorFlow)."""
    if kind == "float":
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))
    if kind == "int64":
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
