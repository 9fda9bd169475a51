"""The rules behind infer's guesses, checked in this process: feature names, YAML quoting, what a
column's values make of it, and more tables built (`tb.build`) from specs `infer` wrote."""
from __future__ import annotations

import gzip
import warnings

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrecord_builder as tb
from tfrecord_builder.errors import DataError
from tfrecord_builder.tools.infer import infer, write_spec
from tfrecord_builder.tools.infer.columns import guess, profile
from tfrecord_builder.tools.infer.names import dataset_name, feature_names, identifier
from tfrecord_builder.tools.infer.spec_text import flow, scalar

from .helpers import by_key, comment, write_jsonl


# ---- names -------------------------------------------------------------------------------------
@pytest.mark.parametrize("column, name", [
    ("alcohol", "alcohol"), ("Ozone", "Ozone"), ("petal length (cm)", "petal_length_cm"), ("2nd", "_2nd"),
    ("class", "class_"), ("None", "none"), ("Solar.R", "solar_r"), ("userId", "userId"), ("user Id", "user_id"),
    ("Größe X", "grosse_x"),
    ("%%%", "column"), ("lambda", "lambda_"),
])
def test_a_column_name_becomes_an_identifier(column, name):
    assert identifier(column) == name


def test_feature_names_are_unique_and_avoid_taken_ones():
    assert feature_names(["a b", "a_b", "a-b", "", "sequence_length"], taken={"sequence_length"}) == {
        "a b": "a_b", "a_b": "a_b_2", "a-b": "a_b_3", "": "row", "sequence_length": "sequence_length_2"}


@pytest.mark.parametrize("path, name", [("data/wine.csv", "wine"), ("x/rows.csv.gz", "rows"),
                                        ("2024 sales.jsonl", "_2024_sales"), ("pics/", "pics"),
                                        ("frame.parquet", "frame")])
def test_the_dataset_is_named_after_the_file(path, name):
    assert dataset_name(path) == name


# ---- YAML text ---------------------------------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(st.text(max_size=20))
def test_any_text_is_written_so_yaml_reads_it_back(text):
    assert yaml.safe_load(f"key: {scalar(text)}") == {"key": text}
    assert yaml.safe_load(f"key: {flow({'names': [text, 'x'], text or 'k': 1})}") == \
        {"key": {"names": [text, "x"], text or "k": 1}}


@pytest.mark.parametrize("text, written", [("cat", "cat"), ("../data/x.csv", "../data/x.csv"), ("no", '"no"'),
                                           ("1", '"1"'), ("null", '"null"'), ("", '""'), ("a: b", '"a: b"'),
                                           ("petal length (cm)", '"petal length (cm)"'), ("light blue", "light blue")])
def test_plain_where_yaml_allows_it_quoted_elsewhere(text, written):
    assert scalar(text) == written


# ---- what a column says ------------------------------------------------------------------------
def _guess(values, language="text", na_values=frozenset()):
    return guess(profile(values, language), "c", lambda row: f"line {row + 2}", language, frozenset(na_values))


@pytest.mark.parametrize("values, dtype, shape, default", [
    (["1", "-2", "30"], "int64", [], None),
    (["1", "2.5", "3e2"], "float32", [], None),
    (["2.0", "", "3.0"], "int64", [], -1),  # pandas' integers with gaps; -1: a value the data never holds
    (["2.0", "3.0"], "float32", [], None),  # no gaps: floats written whole
    (["true", "FALSE", "True"], "bool", [], None),
    (["1", "0", "1"], "int64", [], None),  # 0/1: numbers, not plainly booleans
    (["1 2", "3 4", ""], "int64", [2], -1),
    (["-3 2", "3 4", ""], "int64", [2], -4),  # below the least value, which is negative
    (["1 2", "3", "[4, 5, 6]"], "int64", [None], None),
    (["[[1, 2]]", "[[3, 4], [5, 6]]", "[]"], "int64", [None, 2], None),
    (["99999999999999999999", "1"], "string", [], None),  # beyond int64
    (["x", "", "y"], "string", [], ""),
    ([None, None], "string", [], ""),
])
def test_text_cells(values, dtype, shape, default):
    found = _guess([value or None for value in values])
    assert (found.dtype, found.shape, found.default) == (dtype, shape, default)


@pytest.mark.parametrize("values, dtype, shape, allow_nan", [
    ([1, 2.5, None], "float32", [], True),  # a gap is NaN
    ([1.0, float("nan")], "float32", [], True),
    ([True, False], "bool", [], False),
    ([[1.5, 2], [3, 4]], "float32", [2], False),
    ([["a", "b"], [], ["c"]], "string", [None], False),
    ([1, "x"], "string", [], False),  # JSON whole numbers read as text beside text
])
def test_json_values(values, dtype, shape, allow_nan):
    found = _guess(values, "json")
    assert (found.dtype, found.shape, found.allow_nan) == (dtype, shape, allow_nan)


def test_inf_in_a_csv_keeps_nan_allowed_and_says_where():
    found = _guess(["1.5", "inf", "2"])
    assert (found.dtype, found.allow_nan) == ("float32", True)
    assert found.notes == ["line 3 holds inf or NaN: kept (allow_nan)"]


def test_na_spellings_count_as_missing_only_when_listed():
    assert _guess(["1", "NA", "3"]).dtype == "string"
    listed = _guess(["1", "NA", "3"], na_values={"NA"})
    assert (listed.dtype, listed.default, listed.missing) == ("int64", -1, 1)


def test_lists_that_cant_be_shaped_leave_the_column_out():
    assert _guess([[[1, 2], [3]]], "json").problem == \
        "line 2 holds nested lists of different lengths; no shape reads them"
    assert _guess([[[1, 2]], [[1, 2, 3]]], "json").problem == \
        "its nested lists vary in length below the first level; only the first dimension may vary"


def test_a_json_mixture_no_dtype_reads_is_an_error():
    with pytest.raises(DataError, match=r"^line 4: column `c`: expected a number like the values before it "
                                        r"\(line 2: 1.5\), received \"x\""):
        _guess([1.5, 2, "x"], "json")


# ---- more tables, built in this process ------------------------------------------------------------
def _build(tmp_path, data, **options):
    spec = tmp_path / "spec.yaml"
    text = infer(tmp_path / data, spec, **options)
    write_spec(text, spec)
    info = tb.build(spec, output=tmp_path / "out", workers=1)
    return text, yaml.safe_load(text), {split: list(tb.read(info.path, split)) for split in info.splits}


def test_a_long_table_ordered_by_dates_written_as_text_gets_their_format(tmp_path):
    """`Jan 1 2000` positions: the order column is declared with the format that reads them (which
    the build needs to order the steps by date rather than as text), day/month ambiguity noted."""
    rows = [("a", "Feb 1 2000", 2), ("a", "Jan 1 2000", 1), ("b", "Apr 1 2001", 5), ("a", "Apr 1 2000", 4),
            ("b", "Mar 3 2001", 3), ("a", "Dec 1 1999", 0), ("a", "Mar 1 2000", 3)]
    (tmp_path / "dated.csv").write_text("id,date,value\n" + "".join(f"{i},{d},{v}\n" for i, d, v in rows))
    text, spec, records = _build(tmp_path, "dated.csv", group_by="id", order_by="date")
    assert spec["sequence"]["date"] == {"dtype": "int64", "format": "%b %d %Y", "time_unit": "days"}
    assert comment(text, "date:") == "guessed: dates written as text, read by format '%b %d %Y': the steps are " \
                                     "ordered by date"
    found = {record["id"].decode(): record for split in records.values() for record in split}
    assert {name: record["value"].tolist() for name, record in found.items()} == {"a": [0, 1, 2, 3, 4], "b": [3, 5]}
    (tmp_path / "slashed.csv").write_text("id,date,value\na,03/04/2024,1\na,05/06/2024,2\nb,07/08/2024,1\n"
                                          "b,01/02/2024,0\n")
    text = infer(tmp_path / "slashed.csv", tmp_path / "s.yaml", group_by="id", order_by="date")
    assert yaml.safe_load(text)["sequence"]["date"]["format"] == "%m/%d/%Y"
    assert comment(text, "date:").endswith("(they read as '%d/%m/%Y' too: check which)")


def test_tsv_gzip_r_row_names_and_names_yaml_would_misread(tmp_path):
    """A tab-separated, gzipped export from R: its unnamed row-name column, `NA`, and columns
    named `no` and `on`, which YAML would read as booleans unless quoted."""
    lines = ['"" "Ozone" "no" "on" "Wind"'.replace(" ", "\t")]
    for row in range(1, 9):
        ozone = "NA" if row in (3, 6) else str(row * 7)
        lines.append("\t".join([f'"{row}"', ozone, str(row % 2), ["x", "y"][row % 2], f"{row * 1.5:g}"]))
    (tmp_path / "air.tsv.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    text, spec, records = _build(tmp_path, "air.tsv.gz")
    assert spec["source"] == {"builder": "csv", "path": "air.tsv.gz", "delimiter": "\t",
                              "options": {"na_values": ["NA"]}}
    assert spec["features"] == {"row": {"dtype": "int64", "source": ""}, "Ozone": {"dtype": "int64", "default": -1},
                                "no": {"dtype": "int64"}, "on": {"type": "class_label", "names": ["x", "y"]},
                                "Wind": {"dtype": "float32"}}
    assert '\n  "no": ' in text and '\n  "on": ' in text
    found = by_key(records, "row")
    assert [found[row]["Ozone"] for row in range(1, 9)] == [-1 if row in (3, 6) else row * 7 for row in range(1, 9)]
    assert [found[row]["on"] for row in range(1, 9)] == [row % 2 for row in range(1, 9)]


def test_sequences_of_uneven_lengths_and_missing_steps(tmp_path):
    """Step fields whose lengths differ within a record get `sequence_lengths: free`; a null step
    takes the default; a label-named column of whole numbers 0..k-1 is a class index."""
    records_in = [{"id": f"r{i}", "label": i % 3, "a": [1, None, 3][: 1 + i % 3], "b": ["x", "y", "z"][: 1 + i % 3],
                   "c": list(range(i % 4))} for i in range(9)]
    write_jsonl(tmp_path / "seq.jsonl", records_in)
    text, spec, records = _build(tmp_path, "seq.jsonl", sequence=True)
    assert spec["sequence_lengths"] == "free"
    assert spec["context"] == {"id": {"dtype": "string"}, "label": {"type": "class_label", "num_classes": 3}}
    assert spec["sequence"] == {"a": {"dtype": "int64", "default": -1}, "b": {"type": "class_label",
                                                                           "names": ["x", "y", "z"]},
                                "c": {"dtype": "int64"}}
    assert spec["source"]["key"] == "id" and spec["label"] == "label"
    assert comment(text, "format:").startswith("--sequence: `a`, `b`, `c` hold a record's steps; their lengths "
                                               "differ within a record")
    found = by_key(records, "id")
    for i, given_record in enumerate(records_in):
        record = found[f"r{i}"]
        assert record["label"] == i % 3
        assert record["a"].tolist() == [-1 if value is None else value for value in given_record["a"]]
        assert record["c"].tolist() == given_record["c"]


def test_a_large_file_is_sampled_and_the_spec_says_so(tmp_path):
    rows = 100_010
    with open(tmp_path / "big.csv", "w", encoding="utf-8") as file:
        file.write("id,kind\n")
        file.writelines(f"{row},{'ab'[row % 2]}\n" for row in range(rows))
    text = infer(tmp_path / "big.csv", tmp_path / "big.yaml")
    assert text.splitlines()[0] == ("# Written by `tfrecord-builder infer` from big.csv: only the first 100,000 rows "
                                    "read (a sample: the file has more; check classes, ranges and missing values "
                                    "against the rest).")
    assert comment(text, "key:").startswith("guessed: unique in the first 100,000 rows read")
    assert comment(text, "kind:") == ("guessed: 2 distinct values in 100,000 rows (of the rows read: a class seen "
                                      "only later stops the build)")


# ---- whatever the cells, the spec builds (or infer says why not) ---------------------------------
CELLS = ["", "NA", "n/a", "1", "-3", "2.0", "2.5", "1e5", "inf", "nan", "true", "False", "x", "y", "a b", "1 2",
         "3 4", "[1, 2]", '["a", "b c"]', "[oops", "[]", "[[1, 2], [3, 4]]", "2024-01-01", "None",
         "99999999999999999999", " 5"]
# JSON columns of one kind each (numbers, text, lists...), with nulls, NA, NaN and such among them
JSON_KINDS = [
    [None, 0, 1, -2, 2.5, 3.0, float("nan"), "NA"],
    [None, "x", "y", "NA", "", " a ", "2024-01-01"],
    [None, True, False],
    [None, [1, 2], [3, 4], [], [1.5], [0, 1, 2]],
    [None, ["a"], [], ["b", "c d"], "NA"],
    [None, [[1, 2]], [[3, 4], [5, 6]], []],
    [None, {"k": 1}],
    [None, 1, "x", [1], True, 2.5],  # a mixture: infer refuses it (or reads the whole numbers as text)
]


def _builds_or_refuses(tmp_path, data: str) -> None:
    """infer's spec builds, and every row comes back; or infer refuses with a DataError."""
    try:
        text = infer(tmp_path / data, tmp_path / "spec.yaml")
    except DataError:
        return
    write_spec(text, tmp_path / "spec.yaml", overwrite=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tb.BuildWarning)  # (6 rows may leave a split empty)
        info = tb.build(tmp_path / "spec.yaml", output=tmp_path / "out", workers=1, overwrite=True)
    assert sum(split.num_examples for split in info.splits.values()) == 6


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(CELLS), min_size=3, max_size=3), min_size=6, max_size=6))
def test_any_csv_cells_give_a_spec_that_builds(tmp_path_factory, rows):
    tmp_path = tmp_path_factory.mktemp("cells")
    lines = ["id,a,b,c"] + [",".join([str(index)] + [f'"{cell}"' if "," in cell or '"' in cell else cell
                                                      for cell in [value.replace('"', '""') for value in row]])
                                     for index, row in enumerate(rows)]
    (tmp_path / "rows.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    _builds_or_refuses(tmp_path, "rows.csv")


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_any_json_values_give_a_spec_that_builds_or_a_reason(tmp_path_factory, data):
    tmp_path = tmp_path_factory.mktemp("values")
    kinds = [data.draw(st.sampled_from(JSON_KINDS)) for _ in range(3)]
    columns = [data.draw(st.lists(st.sampled_from(kind), min_size=6, max_size=6)) for kind in kinds]
    write_jsonl(tmp_path / "rows.jsonl", [{"id": row, "a": columns[0][row], "b": columns[1][row], "c": columns[2][row]}
                                          for row in range(6)])
    _builds_or_refuses(tmp_path, "rows.jsonl")
