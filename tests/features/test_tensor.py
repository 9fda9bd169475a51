"""Table-driven encoding of the tensor and class_label types: raw value in, storage out, or the error."""
from __future__ import annotations

import numpy as np
import pytest

import tfrecord_builder as tb
from tfrecord_builder.errors import DataError
from tfrecord_builder.features import ClassLabelFeature, TensorFeature
from tfrecord_builder.spec.fields import At, convert
from tfrecord_builder.spec.yaml_source import Document


def feature(**declaration):
    return convert(TensorFeature if declaration.get("type", "tensor") == "tensor" else ClassLabelFeature,
                   {key: value for key, value in declaration.items() if key != "type"},
                   At(Document(None, "spec.yaml"))).named("f")


def encode(declaration, values):
    result = feature(**declaration).encode(values, tb.EncodeContext(lambda row: f"data.csv, line {row + 2}"))
    (only,) = result.values()
    values = only.values if isinstance(only.values, list) else only.values.tolist()
    return only.kind, values, only.counts.tolist()


GOOD = [
    ({"dtype": "float32"}, ["1.5", "-2", " 3e2 "], ("float", [1.5, -2.0, 300.0], [1, 1, 1])),
    ({"dtype": "float32"}, [1, 2.5], ("float", [1.0, 2.5], [1, 1])),
    ({"dtype": "float32", "default": 7}, ["1", None], ("float", [1.0, 7.0], [1, 1])),
    ({"dtype": "float32", "allow_nan": True}, ["nan", "inf"], ("float", [np.nan, np.inf], [1, 1])),
    ({"dtype": "float64"}, ["0.1"], ("float", [float(np.float32(0.1))], [1])),
    ({"dtype": "float16"}, ["0.1"], ("float", [float(np.float16(0.1))], [1])),
    # float32's largest as NumPy prints it (3.4028235e38 rounds down to it, as the cast does)
    ({"dtype": "float32"}, ["3.4028235e38", "-3.4028235e38"], ("float", [3.4028235e38, -3.4028235e38], [1, 1])),
    ({"dtype": "int64"}, ["9223372036854775807", "-9223372036854775808"],
     ("int64", [2**63 - 1, -(2**63)], [1, 1])),
    ({"dtype": "int64"}, [3.0, 4], ("int64", [3, 4], [1, 1])),
    # a whole decimal in text, as pandas writes an int column with gaps, is read as JSON's 2.0 is
    ({"dtype": "int64"}, ["2.0", "-3.", " 4.00 ", "5"], ("int64", [2, -3, 4, 5], [1, 1, 1, 1])),
    ({"dtype": "uint8"}, ["0", "255"], ("int64", [0, 255], [1, 1])),
    ({"dtype": "int32"}, [-(2**31)], ("int64", [-(2**31)], [1])),
    ({"dtype": "bool"}, ["true", "False", "1", "0", True], ("int64", [1, 0, 1, 0, 1], [1] * 5)),
    ({"dtype": "string"}, ["héllo", ""], ("bytes", ["héllo".encode(), b""], [1, 1])),
    ({"dtype": "string"}, [12], ("bytes", [b"12"], [1])),
    ({"dtype": "bytes"}, [b"\xff\x00"], ("bytes", [b"\xff\x00"], [1])),
    ({"dtype": "float32", "shape": [3]}, ["1 2 3", "[4, 5, 6]", [7, 8, 9]],
     ("float", [1, 2, 3, 4, 5, 6, 7, 8, 9], [3, 3, 3])),
    ({"dtype": "float32", "shape": [2, 2]}, ["[[1, 2], [3, 4]]", "5 6 7 8"],
     ("float", [1, 2, 3, 4, 5, 6, 7, 8], [4, 4])),
    ({"dtype": "float32", "shape": [3], "default": 0}, [None], ("float", [0, 0, 0], [3])),
    ({"dtype": "string", "shape": [None]}, ["a b  c", "", None, '["x y", "z"]', ["p"]],
     ("bytes", [b"a", b"b", b"c", b"x y", b"z", b"p"], [3, 0, 0, 2, 1])),
    ({"dtype": "int64", "shape": [None, 2]}, ["1 2 3 4", "[[5, 6]]", []], ("int64", [1, 2, 3, 4, 5, 6], [4, 2, 0])),
    ({"type": "class_label", "names": ["cat", "dog"]}, ["dog", "cat", 1, "0", " dog "],
     ("int64", [1, 0, 1, 0, 1], [1] * 5)),
    # names spelled as numbers: a value is a name, as text, an integer or a whole decimal
    ({"type": "class_label", "names": ["10", "20"]}, ["10", 20, "20.0", 10.0], ("int64", [0, 1, 1, 0], [1] * 4)),
    ({"type": "class_label", "names": ["01", "02", "03"]}, [3, "02", "1"], ("int64", [2, 1, 0], [1] * 3)),
    # JSON integers beside a whole number written 2.0 stay exact (NumPy made the batch float64)
    ({"dtype": "int64"}, [9007199254740993, 2.0, 123456789012345678, 9223372036854775807],
     ("int64", [9007199254740993, 2, 123456789012345678, 9223372036854775807], [1] * 4)),
    ({"dtype": "int64", "shape": [2]}, [[9007199254740993, 2.0], [1, -9223372036854775807]],
     ("int64", [9007199254740993, 2, 1, -9223372036854775807], [2, 2])),
    ({"dtype": "int64", "shape": [None]}, [[9007199254740993, 2.0], [123456789012345678]],
     ("int64", [9007199254740993, 2, 123456789012345678], [2, 1])),
    ({"type": "class_label", "num_classes": 3}, ["2", 0], ("int64", [2, 0], [1, 1])),
    ({"type": "class_label", "names": ["a", "b"], "shape": [None]}, ["a b b", ""],
     ("int64", [0, 1, 1], [3, 0])),
]


@pytest.mark.parametrize("declaration, values, expected", GOOD)
def test_values_encode_to_storage(declaration, values, expected):
    kind, stored, counts = encode(declaration, values)
    assert (kind, counts) == (expected[0], expected[2])
    if kind == "float":
        np.testing.assert_array_equal(np.array(stored, np.float32), np.array(expected[1], np.float32))
    else:
        assert stored == expected[1]


BAD = [
    ({"dtype": "float32"}, ["1", "abc"], "data.csv, line 3: feature `f`: expected a number (float32), received 'abc'"),
    ({"dtype": "float32"}, ["1", None], "data.csv, line 3: feature `f`: missing value (the spec gives no `default`)"),
    ({"dtype": "float32"}, ["nan"], "data.csv, line 2: feature `f`: 'nan' is not allowed (set `allow_nan: true`"),
    ({"dtype": "float32"}, ["1e39"], "data.csv, line 2: feature `f`: '1e39' is out of range for float32"),
    ({"dtype": "float32"}, ["3.4028236e38"], "'3.4028236e38' is out of range for float32"),
    ({"dtype": "float64"}, ["1e300"], "'1e300' is out of range for float64 (stored as float32)"),
    ({"dtype": "float32"}, [True], "feature `f`: expected a number (float32), received True"),
    ({"dtype": "int64"}, ["99999999999999999999"],
     "line 2: feature `f`: expected an integer in [-9223372036854775808, 9223372036854775807] (int64)"),
    ({"dtype": "int64"}, ["1.5"], "line 2: feature `f`: expected an integer"),
    # a batch made only of one-item lists once passed as a column of numbers
    ({"dtype": "int64"}, [[1], [2]], "line 2: feature `f`: expected an integer in [-9223372036854775808, "
                                     "9223372036854775807] (int64), received [1]"),
    ({"dtype": "float32"}, [[[1.5]]], "line 2: feature `f`: expected a number (float32), received [[1.5]]"),
    ({"dtype": "int64"}, [2**64], "line 2: feature `f`: expected an integer"),
    ({"dtype": "uint8"}, ["7", "300"], "line 3: feature `f`: expected an integer in [0, 255] (uint8), received '300'"),
    ({"dtype": "int32"}, [2**31], "expected an integer in [-2147483648, 2147483647] (int32)"),
    ({"dtype": "bool"}, ["maybe"], "expected a boolean (true/false/1/0), received 'maybe'"),
    ({"dtype": "string"}, [1.5], "expected a string, received 1.5"),
    ({"dtype": "string"}, [b"\xff"], "bytes that are not valid UTF-8 (at byte 0)"),
    ({"dtype": "float32", "shape": [3]}, ["1 2"], "line 2: feature `f`: expected shape [3], received shape [2] (2 values)"),
    ({"dtype": "float32", "shape": [3]}, ["1 x 3"], "line 2: feature `f`: element 1: expected a number (float32), received 'x'"),
    ({"dtype": "float32", "shape": [3]}, [5], "expected a list of shape [3], received 5"),
    ({"dtype": "float32", "shape": [3]}, ["[1, 2"], "a list cell starting with `[` must be a JSON array"),
    ({"dtype": "int64", "shape": [None, 2]}, ["1 2 3"], "expected shape [null, 2], received shape [3]"),
    ({"dtype": "int64", "shape": [None, 2]}, [[[1, 2], [3]]], "received a ragged list"),
    ({"type": "class_label", "names": ["cat", "dog"]}, ["cow"],
     "line 2: feature `f`: expected a class name (cat, dog) or an index in [0, 2), received 'cow'"),
    ({"type": "class_label", "names": ["cat", "dog"]}, [2], "or an index in [0, 2), received 2"),
    ({"type": "class_label", "num_classes": 2}, ["-1"], "expected a class index in [0, 2), received '-1'"),
    # names spelled as numbers: a month 3 is no index (it was class "8"), a stray 0 no class "1"
    ({"type": "class_label", "names": ["5", "6", "7", "8", "9"]}, ["5", 3],
     "line 3: feature `f`: expected a class name (5, 6, 7, 8, 9), received 3 (the class names are numbers, "
     "so a value is a name, never an index)"),
    ({"type": "class_label", "names": ["1", "2", "3"]}, ["0"], "expected a class name (1, 2, 3), received '0'"),
    ({"type": "class_label", "names": ["1", "2", "3"]}, [2.5], "expected a class name (1, 2, 3), received 2.5"),
    ({"dtype": "int64"}, [2.0, 2.5, 9007199254740993], "line 3: feature `f`: expected an integer"),
]


@pytest.mark.parametrize("declaration, values, message", BAD)
def test_bad_values_name_the_row_and_feature(declaration, values, message):
    with pytest.raises(DataError) as error:
        encode(declaration, values)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("language, values, message", [
    ("json", [True], "expected a class name (cat, dog) or an index in [0, 2), received true"),
    ("json", ["cow"], 'received "cow"'),
    ("text", ["cow"], "received 'cow'"),
    ("python", [True], "received True"),
])
def test_a_bad_value_is_named_as_its_source_writes_it(language, values, message):
    with pytest.raises(DataError) as error:
        feature(type="class_label", names=["cat", "dog"]).encode(
            values, tb.EncodeContext(lambda row: f"line {row + 2}", language=language))
    assert message in str(error.value)


def test_describe():
    assert feature(dtype="float32", shape=[None, 4]).describe() == "float32 [null, 4] (ragged)"
    assert feature(type="class_label", names=["a", "b"]).describe() == "class_label (2 classes) []"


def test_a_float_at_two_to_the_63_is_refused_for_int64_not_wrapped():
    """float(2**63) compared with the int64 bound (2**63 - 1, which rounds to 2**63) looked in
    range, and the cast wrapped it to -2**63."""
    from tfrecord_builder.features.dtypes import DTYPES, Invalid

    with pytest.raises(Invalid, match=r"expected an integer in \[-9223372036854775808, 9223372036854775807\]"):
        DTYPES["int64"].convert([1.0, 2.0**63])
    assert DTYPES["int64"].convert([-(2.0**63), 5.0]).tolist() == [-(2**63), 5]


def test_float64_values_come_back_with_float32_subnormals_intact(tf):
    """TensorFlow's CPU cast flushes float32 subnormals to zero; exact_float64 rebuilds them."""
    from tfrecord_builder.read.tfdata import exact_float64

    stored = np.array([1.4e-45, -1e-40, 1.1754942e-38, 1.5, 0.0, -0.0, 3.4028235e38, np.inf, -np.inf],
                      np.float32)
    widened = exact_float64(tf.constant(stored)).numpy()
    assert widened.dtype == np.float64
    np.testing.assert_array_equal(widened, stored.astype(np.float64))
    assert np.signbit(widened).tolist() == np.signbit(stored).tolist()
    assert np.isnan(exact_float64(tf.constant([np.nan], tf.float32)).numpy()).all()
    ragged = exact_float64(tf.ragged.constant([[1e-45], [], [2.0, -1e-40]], dtype=tf.float32))
    assert [row.tolist() for row in ragged.numpy()] == [[float(np.float32(1e-45))], [], [2.0, float(np.float32(-1e-40))]]
