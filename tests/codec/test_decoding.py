"""The one wire decoder (codec/arrays.py) and its one error policy, against TensorFlow's own
serialiser and parser: packed and unpacked lists, empty features, unknown fields, wrong wire
types, and random damage (only DatasetErrors naming the shard and record, never a crash or hang)."""
from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tfrecord_builder.codec.arrays import NO_KIND, kind_of, parse_arrays
from tfrecord_builder.codec.columns import Layout, read_columns
from tfrecord_builder.codec.example_reader import parse_record
from tfrecord_builder.codec.wire import varint
from tfrecord_builder.errors import DatasetError

from support.wire import encode, reference, sequence_records, tables, tf_feature

WHERE = "train.tfrecord-00000-of-00001: record 7"


def _expected(kind, values):
    if kind == "float":
        return np.array(values, dtype=np.float32)
    if kind == "int64":
        return np.array(values, dtype=np.int64)
    array = np.empty(len(values), dtype=object)
    array[:] = list(values)
    return array


def _same(found: np.ndarray, kind: str, values) -> bool:
    """The decoded array holds `values` as a list of `kind` (an empty Feature: of no kind)."""
    expected = _expected(kind, values)
    return (kind_of(found) in (kind, NO_KIND) if not len(values) else kind_of(found) == kind) and (
        found.tolist() == expected.tolist())


# ---- round trips against TensorFlow's serialiser ----------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(tables())
def test_examples_tensorflow_serialises_decode_to_their_values(tf, drawn):
    num_rows, table = drawn
    for row in range(num_rows):
        record = reference(tf, table, row)
        lists, steps = parse_arrays(record)
        stored, _ = parse_record(record)
        assert steps is None and sorted(lists) == sorted(table)
        for key, (kind, rows) in table.items():
            assert lists[key].dtype == _expected(kind, []).dtype  # a set but empty list keeps its kind
            assert _same(lists[key], kind, rows[row])
            assert stored[key] == (kind, lists[key].tolist())


@settings(max_examples=40, deadline=None)
@given(sequence_records())
def test_sequence_examples_tensorflow_serialises_decode_to_their_values(tf, drawn):
    num_records, context, sequence = drawn
    for index in range(num_records):
        example = tf.train.SequenceExample()
        for key, (kind, rows) in context.items():
            example.context.feature[key].CopyFrom(tf_feature(tf, kind, rows[index]))
        for key, (kind, records) in sequence.items():
            steps = example.feature_lists.feature_list[key]  # a map's [] adds the entry: none left out
            for step in records[index]:
                steps.feature.add().CopyFrom(tf_feature(tf, kind, step))
        lists, steps = parse_arrays(example.SerializeToString())
        assert sorted(lists) == sorted(context)
        assert all(_same(lists[key], kind, rows[index]) for key, (kind, rows) in context.items())
        assert sorted(steps) == sorted(sequence)
        for key, (kind, records) in sequence.items():
            assert [step.tolist() for step in steps[key]] == [_expected(kind, step).tolist() for step in records[index]]


# ---- unpacked lists, written by hand: protobuf reads either, so must we ---------------------------

def _field(number: int, content: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(content)) + content


def _example(entries: dict[str, bytes]) -> bytes:
    """An Example whose features map holds each key's serialised Feature."""
    return _field(1, b"".join(_field(1, _field(1, key.encode()) + _field(2, feature)) for key, feature in entries.items()))


def _unpacked_int64s(values) -> bytes:
    return _field(3, b"".join(b"\x08" + varint(value) for value in values))


def _unpacked_floats(values) -> bytes:
    return _field(2, b"".join(b"\x0d" + struct.pack("<f", value) for value in values))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=6), st.lists(st.floats(width=32, allow_nan=False), max_size=6))
def test_unpacked_lists_decode_as_tensorflow_parses_them(tf, ints, floats):
    record = _example({"i": _unpacked_int64s(ints), "f": _unpacked_floats(floats)})
    theirs = tf.train.Example.FromString(record).features.feature
    assert list(theirs["i"].int64_list.value) == ints and list(theirs["f"].float_list.value) == floats
    lists, _ = parse_arrays(record)
    assert lists["i"].tolist() == ints and lists["i"].dtype == np.int64
    assert lists["f"].tolist() == floats and lists["f"].dtype == np.float32
    assert parse_record(record)[0] == {"i": ("int64", ints), "f": ("float", floats)}
    parsed = tf.io.parse_single_example(record, {"i": tf.io.VarLenFeature(tf.int64), "f": tf.io.VarLenFeature(tf.float32)})
    assert parsed["i"].values.numpy().tolist() == ints and parsed["f"].values.numpy().tolist() == floats


def test_packed_and_unpacked_runs_of_one_list_join_in_order(tf):
    packed = b"\x0a" + varint(2) + varint(5) + varint(6)
    record = _example({"i": _field(3, b"\x08\x01" + packed + b"\x08\x07")})
    assert list(tf.train.Example.FromString(record).features.feature["i"].int64_list.value) == [1, 5, 6, 7]
    assert parse_arrays(record)[0]["i"].tolist() == [1, 5, 6, 7]


# ---- empty features ----------------------------------------------------------------------------------

def test_an_empty_feature_is_an_empty_list_of_no_kind_as_tensorflow_parses_it(tf):
    """No list set (protobuf's empty oneof): TensorFlow's parser matches it to any dtype a spec
    asks for, as an empty list; ours is an empty list of no kind, the same in every reader."""
    record = tf.train.Example(features=tf.train.Features(feature={"x": tf.train.Feature()})).SerializeToString()
    for dtype in (tf.int64, tf.float32, tf.string):
        parsed = tf.io.parse_single_example(record, {"x": tf.io.VarLenFeature(dtype)})
        assert parsed["x"].values.dtype == dtype and parsed["x"].values.shape == (0,)
    lists, _ = parse_arrays(record)
    assert kind_of(lists["x"]) == NO_KIND == "-" and lists["x"].shape == (0,)
    for dtype in (np.int64, np.float32, object):  # and it becomes an empty list of any stored dtype
        assert lists["x"].astype(dtype).dtype == dtype
    assert parse_record(record) == ({"x": ("-", [])}, None)


# ---- unknown fields ----------------------------------------------------------------------------------

UNKNOWN = b"\x78\x05" + b"\x79" + bytes(8) + b"\x7a\x02ab" + b"\x7d" + bytes(4)  # field 15 in wire types 0, 1, 2, 5


def test_unknown_fields_of_every_wire_type_are_skipped_at_every_level(tf):
    """As protobuf skips them: in the Example, the Features, a Feature and each list (protobuf's
    values for the same bytes are the reference), and in a map entry, where protobuf's Python
    runtime drops the whole entry (C++ protobuf keeps it, as we do)."""
    feature = _field(3, UNKNOWN + b"\x0a\x02\x01\x02" + UNKNOWN) + UNKNOWN
    floats = _field(2, UNKNOWN + b"\x0d" + struct.pack("<f", 1.5))
    bytes_list = _field(1, UNKNOWN + _field(1, b"xy") + UNKNOWN)
    features = UNKNOWN + _field(1, _field(1, b"i") + _field(2, feature)) + UNKNOWN + _field(
        1, _field(1, b"f") + _field(2, floats)) + UNKNOWN + _field(1, _field(1, b"b") + _field(2, bytes_list))
    record = UNKNOWN + _field(1, features) + UNKNOWN
    theirs = tf.train.Example.FromString(record).features.feature
    expected = {"i": [1, 2], "f": [1.5], "b": [b"xy"]}
    assert {key: list(getattr(theirs[key], theirs[key].WhichOneof("kind")).value) for key in theirs} == expected
    lists, steps = parse_arrays(record)
    assert steps is None and {key: values.tolist() for key, values in lists.items()} == expected
    in_entry = _field(1, _field(1, UNKNOWN + _field(1, b"i") + UNKNOWN + _field(2, _field(3, b"\x08\x05")) + UNKNOWN))
    assert parse_record(in_entry) == ({"i": ("int64", [5])}, None)


# ---- wrong wire types: refused, with the shard and record named --------------------------------------

WRONG = [
    # a varint where the Features message belongs
    (b"\x08\x01", "field 1 of a Example has wire type 0 (varint), where a length-delimited field belongs"),
    # a fixed32 where a map entry belongs
    (_field(1, b"\x0d" + bytes(4)), "field 1 of a Features has wire type 5 (fixed32), where a length-delimited field belongs"),
    # a varint key
    (_field(1, _field(1, b"\x08\x01")), "field 1 of a Features entry has wire type 0 (varint), where a length-delimited field belongs"),
    # a varint where a Feature's Int64List belongs
    (_example({"i": b"\x18\x05"}), "field 3 of a Feature has wire type 0 (varint), where a length-delimited field belongs"),
    # a fixed64 (a double) in a FloatList
    (_example({"f": _field(2, b"\x09" + bytes(8))}),
     "field 1 of a FloatList has wire type 1 (fixed64), where a float (fixed32) or a packed list belongs"),
    # a fixed32 in an Int64List
    (_example({"i": _field(3, b"\x0d" + bytes(4))}),
     "field 1 of a Int64List has wire type 5 (fixed32), where a varint or a packed list belongs"),
    # a varint in a BytesList
    (_example({"b": _field(1, b"\x08\x01")}), "field 1 of a BytesList has wire type 0 (varint), where a length-delimited field belongs"),
]


@pytest.mark.parametrize("record, problem", WRONG)
def test_wrong_wire_types_are_refused_naming_shard_and_record(record, problem):
    with pytest.raises(ValueError) as raised:
        parse_arrays(record)
    assert str(raised.value) == problem
    with pytest.raises(DatasetError) as raised:
        parse_record(record, WHERE)
    assert str(raised.value) == f"{WHERE}: not a valid tf.train.Example or SequenceExample: {problem}"


def test_a_packed_float_list_cut_mid_value_is_refused():
    with pytest.raises(DatasetError) as raised:
        parse_record(_example({"f": _field(2, b"\x0a\x03abc")}), WHERE)
    assert str(raised.value) == (f"{WHERE}: not a valid tf.train.Example or SequenceExample: "
                                 "a packed FloatList of 3 bytes (not a multiple of 4)")


# ---- bounded fuzzing: random bytes and damaged records ------------------------------------------------

def _decodes_or_names_where(data: bytes) -> None:
    try:
        parse_record(data, WHERE)
        parse_arrays(data, frozenset({"a", "b"}))
    except DatasetError as error:
        assert str(error).startswith(f"{WHERE}: not a valid tf.train.Example or SequenceExample: ")
    except ValueError as error:  # parse_arrays' own, which its callers turn into the DatasetError above
        assert str(error)


FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.binary(max_size=200))
def test_random_bytes_decode_or_are_refused(data):
    _decodes_or_names_where(data)


@FUZZ
@given(tables(), st.data())
def test_damaged_records_decode_or_are_refused(drawn, data):
    _, table = drawn
    record = bytearray(encode(table)[0])
    for _ in range(data.draw(st.integers(1, 4))):
        where = data.draw(st.integers(0, len(record)))
        action = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        if action == "flip" and where < len(record):
            record[where] = data.draw(st.integers(0, 255))
        elif action == "cut":
            del record[where:]
        else:
            record[where:where] = data.draw(st.binary(min_size=1, max_size=3))
    _decodes_or_names_where(bytes(record))


# ---- verify's column-wise reader against the decoder ---------------------------------------------------

@settings(max_examples=80, deadline=None)
@given(tables(), st.data())
def test_the_column_reader_agrees_with_the_decoder_or_sets_the_record_aside(drawn, data):
    """verify reads blocks of records as columns (codec/columns.py): every record it keeps must
    read as the decoder reads it, and every record the decoder refuses must be set aside."""
    _, table = drawn
    records = [bytearray(record) for record in encode(table)]
    for record in records:
        if data.draw(st.booleans()) and record:
            record[data.draw(st.integers(0, len(record) - 1))] = data.draw(st.integers(0, 255))
    block = b"".join(records)
    ends = np.cumsum([len(record) for record in records])
    starts = ends - [len(record) for record in records]
    layout = Layout.of({key: kind for key, (kind, _) in table.items()})
    columns = read_columns(np.frombuffer(block, np.uint8), starts, ends, layout)
    for row, index in enumerate(columns.regular.tolist()):
        lists, _ = parse_arrays(bytes(records[index]))  # a regular record must decode
        assert sorted(lists) == sorted(table)
        for key, (kind, _) in table.items():
            column = columns.context[key]
            values = column.values[column.offsets[row]:column.offsets[row + 1]]
            if kind == "bytes":  # the column holds each item's length
                assert values.tolist() == [len(item) for item in lists[key].tolist()]
            else:
                assert values.tolist() == lists[key].tolist() and kind_of(lists[key]) in (kind, NO_KIND)
