"""The order of class names found in data: a categorical column's own order (a Parquet dictionary,
as pandas writes a categorical), and numbers in numeric order (labels 0-10, folders 0..10)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrecord_builder as tb
from tfrecord_builder.features.class_label import class_order
from tfrecord_builder.tools.infer import infer, write_spec

from .helpers import comment, pixels, write_image, write_jsonl

MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def _months(path, rows: int = 40) -> list[int]:
    """A Parquet file as pandas writes `pd.Categorical(..., categories=MONTHS)`: a dictionary-encoded
    column whose dictionary is every category in order (Dec unused here), the codes its indices."""
    codes = [(row * 5) % 11 for row in range(rows)]
    month = pa.DictionaryArray.from_arrays(pa.array(codes, pa.int8()), pa.array(MONTHS))
    pq.write_table(pa.table({"id": list(range(rows)), "month": month}), path)
    return codes


def _built(tmp_path, spec_text: str | None, data: str):
    spec = tmp_path / "spec.yaml"
    text = spec_text if spec_text is not None else infer(tmp_path / data, spec)
    write_spec(text, spec, overwrite=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tb.BuildWarning)
        info = tb.build(spec, output=tmp_path / "out", workers=1, overwrite=True)
    records = [record for split in info.splits for record in tb.read(info.path, split)]
    return text, info, records


def test_a_parquet_categorical_keeps_its_order_and_records_hold_its_codes(tmp_path):
    codes = _months(tmp_path / "months.parquet")
    text, info, records = _built(tmp_path, None, "months.parquet")
    assert yaml.safe_load(text)["features"]["month"] == {"type": "class_label", "names": MONTHS}
    assert comment(text, "month:") == ("guessed: a categorical column; its 12 categories in the file's order "
                                       "(a record holds the category's code)")
    assert info.spec.features["month"].names == MONTHS
    assert {int(record["id"]): int(record["month"]) for record in records} == dict(enumerate(codes))


def test_a_class_label_without_names_takes_a_parquet_dictionary_in_its_order(tmp_path):
    codes = _months(tmp_path / "months.parquet")
    spec = ("name: months\nversion: 1.0.0\nsource: {builder: parquet, path: months.parquet, key: id}\n"
            "splits: {train: 0.5, test: 0.5}\nfeatures:\n  id: {dtype: int64}\n  month: {type: class_label}\n")
    _, info, records = _built(tmp_path, spec, "months.parquet")
    assert info.spec.features["month"].names == MONTHS
    assert {int(record["id"]): int(record["month"]) for record in records} == dict(enumerate(codes))


@pytest.mark.parametrize("writer", ["pandas", "polars"])
def test_a_categorical_as_pandas_and_polars_write_it_keeps_their_codes(tmp_path, writer):
    """The exports themselves: pandas' ordered `Categorical` and polars' `Enum`, with a category
    (Dec) no row uses, in a shuffled table; a record holds pandas' `.cat.codes`."""
    months = [MONTHS[(row * 7) % 11] for row in range(60)]
    path = tmp_path / "months.parquet"
    if writer == "pandas":
        pd = pytest.importorskip("pandas")
        pd.DataFrame({"id": range(60), "month": pd.Categorical(months, categories=MONTHS, ordered=True)}).to_parquet(path)
    else:
        pl = pytest.importorskip("polars")
        pl.DataFrame({"id": range(60), "month": pl.Series(months, dtype=pl.Enum(MONTHS))}).write_parquet(path)
    pd = pytest.importorskip("pandas")
    codes = pd.read_parquet(path)["month"].astype(pd.CategoricalDtype(MONTHS)).cat.codes.tolist()
    text, info, records = _built(tmp_path, None, "months.parquet")
    assert yaml.safe_load(text)["features"]["month"] == {"type": "class_label", "names": MONTHS}
    assert {int(record["id"]): int(record["month"]) for record in records} == dict(enumerate(codes))
    assert codes[:3] == [0, 7, 3]  # Jan, Aug, Apr: not their places in alphabetical order (4, 1, 0)


def test_labels_0_to_10_are_in_numeric_order(tmp_path):
    write_jsonl(tmp_path / "digits.jsonl", [{"digit": str(row % 11), "v": row} for row in range(44)])
    text, _, records = _built(tmp_path, None, "digits.jsonl")
    names = [str(number) for number in range(11)]
    assert yaml.safe_load(text)["features"]["digit"] == {"type": "class_label", "names": names}
    assert comment(text, "digit:") == "guessed: 11 distinct values in 44 rows, numbers in numeric order"
    assert {int(record["v"]): int(record["digit"]) for record in records} == {row: row % 11 for row in range(44)}


def test_image_folders_named_0_to_10_are_classes_0_to_10(tmp_path):
    for digit in range(11):
        write_image(tmp_path / "digits" / str(digit) / "a.png", pixels(2, 2, digit))
    text, info, records = _built(tmp_path, None, "digits")
    assert comment(text, "  label:").startswith("names: the 11 sub-folders, sorted by number: 0, 1, 2, ")
    assert info.spec.features["label"].names == [str(number) for number in range(11)]
    found = {int(record["label"]) for record in records
             if np.array_equal(record["image"], np.asarray(pixels(2, 2, 10)))}
    assert found == {10}


@settings(max_examples=100, deadline=None)
@given(st.sets(st.integers(-1000, 1000), min_size=1, max_size=30), st.randoms())
def test_numbers_as_names_sort_by_number_whatever_order_they_come_in(numbers, random):
    texts = [str(number) for number in numbers]
    random.shuffle(texts)
    assert class_order(texts) == [str(number) for number in sorted(numbers)]


def test_names_that_are_not_all_numbers_sort_as_text():
    assert class_order(["b", "10", "2", "a", "b"]) == ["10", "2", "a", "b"]
    assert class_order(["1.5", "0.25", "10"]) == ["0.25", "1.5", "10"]
