"""infer gathers a run of many numbered number columns into one `columns:` feature (tools/infer/gathered.py)."""
from __future__ import annotations

import math
import warnings

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

import tfrecord_builder as tb
from tfrecord_builder.tools.infer import infer, write_spec

from .helpers import comment


def _table(tmp_path, name, header, rows):
    (tmp_path / name).write_text(",".join(header) + "\n" + "".join(",".join(map(str, row)) + "\n" for row in rows))


def _built(tmp_path, data):
    text = infer(tmp_path / data, tmp_path / "spec.yaml")
    write_spec(text, tmp_path / "spec.yaml", overwrite=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tb.BuildWarning)  # (a few rows may leave a split empty)
        info = tb.build(tmp_path / "spec.yaml", output=tmp_path / "out", workers=1, overwrite=True)
    records = [record for split in info.splits for record in tb.read(info.path, split)]
    return text, yaml.safe_load(text), info, records


def test_a_run_of_numbered_float_columns_becomes_one_feature_in_file_order(tmp_path):
    genes = [f"gene_{index}" for index in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20)[::-1]]
    header = ["id", *genes, "gene_name", "label"]  # a text column the pattern "gene_*" would also match
    rows = [[row, *[f"{row + column / 4}" for column in range(20)], f"g{row}", "ab"[row % 2]] for row in range(8)]
    _table(tmp_path, "expr.csv", header, rows)
    text, spec, info, records = _built(tmp_path, "expr.csv")
    assert spec["features"]["genes"] == {"dtype": "float32", "columns": "gene_[0-9]*"}
    assert comment(text, "  genes:") == ("guessed: gathers the 20 float32 columns gene_20 ... gene_1, in the file's "
                                         "order, into one [20] tensor: one feature, not 20")
    assert list(spec["features"]) == ["id", "genes", "gene_name", "label"]
    assert info.spec.features["genes"].columns == genes and info.spec.features["genes"].shape == [20]
    by_id = {int(record["id"]): record["genes"].tolist() for record in records}
    assert by_id == {row[0]: [float(value) for value in row[1:21]] for row in rows}


def test_short_runs_runs_of_two_dtypes_and_unnumbered_columns_stay_apart(tmp_path):
    header = [f"x{index}" for index in range(15)] + [f"a{index}" for index in range(10)] + \
             [f"a{index}" for index in range(10, 20)] + ["left", "right"]
    rows = [[*[row] * 15, *[row] * 10, *[row + 0.5] * 10, 1.5, 2.5] for row in range(4)]
    _table(tmp_path, "t.csv", header, rows)
    _, spec, _, _ = _built(tmp_path, "t.csv")
    assert not any("columns" in declared for declared in spec["features"].values())
    assert len(spec["features"]) == len(header)


def test_a_run_with_missing_values_shares_its_default_and_parquet_runs_gather_too(tmp_path):
    table = {"id": list(range(6)), **{f"px{index}": [index + row + 0.5 if (row + index) % 5 else None
                                                     for row in range(6)] for index in range(18)}}
    pq.write_table(pa.table(table), tmp_path / "pixels.parquet")
    text, spec, info, records = _built(tmp_path, "pixels.parquet")
    declared = spec["features"]["pxs"]
    assert math.isnan(declared.pop("default"))  # a gap stays a gap (infer's float default)
    assert declared == {"dtype": "float32", "columns": "px*", "allow_nan": True}
    assert "a missing cell takes the default" in comment(text, "  pxs:")
    by_id = {int(record["id"]): record["pxs"].tolist() for record in records}
    expected = {row: [table[f"px{index}"][row] for index in range(18)] for row in range(6)}
    assert {row: [None if math.isnan(value) else value for value in values] for row, values in by_id.items()} == expected


def test_a_long_run_of_unnumbered_number_columns_is_listed_and_the_key_stays_apart(tmp_path):
    genes = [f"{'ABCDEFGHIJ'[index // 12]}{'klmnopqrstuv'[index % 12]}" for index in range(120)]  # no numbers
    header = ["sample_id", *genes, "tumor"]
    rows = [[row, *[row * 10 + index for index in range(120)], "xy"[row % 2]] for row in range(6)]
    _table(tmp_path, "symbols.csv", header, rows)
    text, spec, info, records = _built(tmp_path, "symbols.csv")
    assert spec["source"]["key"] == "sample_id" and spec["features"]["sample_id"] == {"dtype": "int64"}
    assert spec["features"]["values"] == {"dtype": "int64", "columns": genes}
    assert comment(text, "  values:") == ("guessed: gathers the 120 int64 columns Ak ... Jv, in this order, into one "
                                          "[120] tensor: one feature, not 120")
    by_id = {int(record["sample_id"]): record["values"].tolist() for record in records}
    assert by_id == {row[0]: row[1:121] for row in rows}
