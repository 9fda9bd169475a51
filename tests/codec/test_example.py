"""The column-wise encoder gives exactly TensorFlow's deterministic serialisation."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tfrecord_builder.codec.bytecolumn import ByteColumn, join
from tfrecord_builder.codec.wire import varint, varints
from tfrecord_builder.codec.example import examples, feature_column, features_entries
from tfrecord_builder.features.values import Values

from support.wire import FLOAT32, INT64, encode, reference, tables

LONG = {"int64": INT64, "float": FLOAT32, "bytes": st.binary(min_size=100, max_size=400)}


@settings(max_examples=200, deadline=None)
@given(tables())
def test_records_equal_tensorflow_deterministic_serialisation(tf, drawn):
    num_rows, table = drawn
    records = encode(table)
    assert len(records) == num_rows
    for row in range(num_rows):
        assert records[row] == reference(tf, table, row)


@settings(max_examples=60, deadline=None)
@given(tables(max_values=40, kinds=LONG))
def test_long_values_get_multi_byte_lengths_as_tensorflow_writes_them(tf, drawn):
    """Lists and strings longer than 127 bytes: their fields' lengths are varints of 2 bytes."""
    num_rows, table = drawn
    records = encode(table)
    for row in range(num_rows):
        assert records[row] == reference(tf, table, row)


def test_framed_records_are_what_tensorflow_writes(tf, tmp_path):
    """Records framed in the join that assembles them equal TFRecordWriter's file, byte for byte."""
    num_rows, table = 3, {"a": ("bytes", [[b"x" * 300], [], [b"y", b"z"]]), "b": ("int64", [[1], [2**40], [-1]])}
    columns = {key: Values(kind, [v for r in rows for v in r], np.array([len(r) for r in rows], np.int64))
               for key, (kind, rows) in table.items()}
    framed = examples(features_entries(columns), framed=True)
    path = str(tmp_path / "reference.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for row in range(num_rows):
            writer.write(reference(tf, table, row))
    with open(path, "rb") as file:
        assert framed.data[: framed.offsets[-1]].tobytes() == file.read()


@given(st.lists(INT64, max_size=50))
def test_varints_match_the_scalar_encoder(values):
    column = varints(np.array(values, dtype=np.int64))
    assert column.rows() == [varint(value) for value in values]


@given(st.sampled_from([2**7, 2**14, 2**21, 2**28, 2**35]).flatmap(
    lambda top: st.lists(st.integers(0, top - 1) | st.sampled_from([0, 127, 128, top - 1]), max_size=50)))
def test_varints_of_narrow_values_match_the_scalar_encoder(values):
    """The narrow paths (values under 2^14: at most two bytes; under 2^28: 32-bit groups)."""
    column = varints(np.array(values, dtype=np.int64))
    assert column.rows() == [varint(value) for value in values]


def test_join_concatenates_rows():
    left = ByteColumn.from_rows([b"a", b"", b"ccc"])
    right = ByteColumn.from_rows([b"1", b"22", b""])
    assert join([left, right]).rows() == [b"a1", b"22", b"ccc"]


ROWS = st.lists(st.binary(max_size=30) | st.binary(min_size=500, max_size=900), min_size=1, max_size=8)


@given(st.data())
@settings(max_examples=200, deadline=None)
def test_arrow_and_numpy_joins_give_the_same_bytes(data):
    """`join` takes Arrow's kernel where rows differ in length; NumPy's joins (fixed widths, the
    scatter, bytes slices for long rows), which make the same bytes, stay for any other case."""
    from tfrecord_builder.codec import bytecolumn

    num_rows = data.draw(st.integers(1, 8))
    columns = []
    for _ in range(data.draw(st.integers(1, 6))):
        width = data.draw(st.none() | st.integers(0, 9))
        rows = [data.draw(st.binary(min_size=width, max_size=width)) for _ in range(num_rows)] if width is not None \
            else data.draw(ROWS.filter(lambda drawn: len(drawn) >= num_rows))[:num_rows]
        column = ByteColumn.from_rows([b"pad"] + rows)  # offsets not starting at 0, as a slice of a batch has
        columns.append(ByteColumn(column.data, column.offsets[1:]))
    expected = [b"".join(parts) for parts in zip(*(column.rows() for column in columns))]
    for arrow in (True, False):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(bytecolumn, "ARROW_JOIN", arrow)
            joined = join(columns)
        assert joined.rows() == expected


def test_take_reorders_rows():
    column = ByteColumn.from_rows([b"zero", b"", b"two", b"3"])
    assert column.take(np.array([3, 0, 2, 1])).rows() == [b"3", b"zero", b"two", b""]


def test_a_feature_column_is_a_serialised_feature(tf):
    values = Values("float", np.array([1.5, 2, 3], np.float32), np.array([2, 0, 1]))
    expected = [tf.train.Feature(float_list=tf.train.FloatList(value=row)).SerializeToString()
                for row in ([1.5, 2], [], [3])]
    assert feature_column(values).rows() == expected
