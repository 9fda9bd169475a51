"""Real exports: what R, pandas, polars and duckdb files hold, built exactly.

Each case is one quirk of a real export (a whole number written 2.0 beside large integers, a
Parquet timestamp, R's `NA`, an unnamed row-name column, a gzipped CSV...) and the exact values
it must give. Records are read back with the package's own TensorFlow-free reader.
"""
from __future__ import annotations

import bz2
import datetime
import gzip
import json
import lzma
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tfrecord_builder as tb
from tfrecord_builder.builders.arrow_rows import row_keys
from tfrecord_builder.codec.example_reader import parse_record
from tfrecord_builder.codec.tfrecord import open_records, read_records

from conftest import write_spec


def records(info: tb.DatasetInfo, split: str = "train") -> list[dict]:
    """Every record of a split, in shard order: {key: values} ({key: [values per step]} for
    feature lists), strings decoded."""
    out = []
    for shard in info.splits[split].shards:
        with open_records(str(Path(info.path) / shard["file"]), info.spec.output.compression) as stream:
            for record in read_records(stream, shard["file"]):
                features, lists = parse_record(record)
                row = {key: _text(values) for key, (_, values) in features.items()}
                row.update({key: [_text(values) for _, values in steps] for key, steps in (lists or {}).items()})
                out.append(row)
    return out


def _text(values: list) -> list:
    return [value.decode() if isinstance(value, bytes) else value for value in values]


def build(folder: Path, spec: dict, files: dict, **options) -> tb.DatasetInfo:
    spec.setdefault("name", "export")
    spec.setdefault("output", {"shuffle": False})
    return tb.build(write_spec(folder, spec, files), output=folder / "out", workers=1, **options)


# ---- integers that share a batch with a whole number written 2.0 (item 1) --------------------

BIG = [9007199254740993, 123456789012345678, 9223372036854775807, -9223372036854775808]


def test_jsonl_integers_stay_exact_beside_a_whole_number_written_with_a_point(tmp_path):
    lines = [{"v": BIG[0], "l": [BIG[0], 2.0]}, {"v": 2.0, "l": [1]}, {"v": BIG[1], "l": [BIG[1]]},
             {"v": BIG[2], "l": [BIG[3]]}]
    spec = {"source": {"builder": "jsonl", "path": "rows.jsonl"},
            "features": {"v": {"dtype": "int64"}, "l": {"dtype": "int64", "shape": [None]}},
            "on_error": "skip"}
    info = build(tmp_path, spec, {"rows.jsonl": "".join(json.dumps(line) + "\n" for line in lines)})
    got = records(info)
    assert [row["v"] for row in got] == [[BIG[0]], [2], [BIG[1]], [BIG[2]]]
    assert [row["l"] for row in got] == [[BIG[0], 2], [1], [BIG[1]], [BIG[3]]]
    assert info.skipped == 0  # 2^63 - 1 beside 2.0 was refused, blaming a valid line


def test_sequence_jsonl_steps_stay_exact_beside_a_whole_number_written_with_a_point(tmp_path):
    lines = [{"id": "a", "steps": [BIG[0], 2.0, BIG[1]], "pairs": [[BIG[2], 1.0], [3, 4]]}]
    spec = {"format": "sequence_example", "source": {"builder": "sequence_jsonl", "path": "rows.jsonl"},
            "context": {"id": {"dtype": "string"}},
            "sequence": {"steps": {"dtype": "int64"}, "pairs": {"dtype": "int64", "shape": [2]}},
            "sequence_lengths": "free"}
    info = build(tmp_path, spec, {"rows.jsonl": json.dumps(lines[0]) + "\n"})
    (row,) = records(info)
    assert row["steps"] == [[BIG[0]], [2], [BIG[1]]]
    assert row["pairs"] == [[BIG[2], 1], [3, 4]]


# ---- Parquet: keys from the data's own bytes; dates and times (items 2 and 9) ----------------

def _timestamps_table(rows: int = 1000) -> pa.Table:
    stamps = np.arange(rows, dtype=np.int64) * 86_400_000_000_123  # ns: a day and 123 ns apart
    return pa.table({"when": pa.array(stamps, pa.timestamp("ns")), "x": pa.array(np.arange(rows) * 0.5)})


def test_a_keyless_parquet_file_with_nanosecond_timestamps_splits_by_its_bytes(tmp_path):
    """The key was repr() of pyarrow's Python values: pandas Timestamps with pandas installed,
    a crash without it. Now it is the values' bytes: the split is pinned."""
    pq.write_table(_timestamps_table(), tmp_path / "t.parquet")
    spec = {"source": {"builder": "parquet", "path": "t.parquet"}, "splits": {"train": 0.5, "test": 0.5},
            "features": {"x": {"dtype": "float32"}}, "output": {"shuffle": True}}
    info = build(tmp_path, spec, {})
    assert (info.splits["train"].num_examples, info.splits["test"].num_examples) == (521, 479)
    xs = sorted(value for split in ("train", "test") for row in records(info, split) for value in row["x"])
    assert xs == [index * 0.5 for index in range(1000)]


def test_row_keys_are_the_values_bytes_whatever_the_chunking():
    table = pa.table({
        "s": pa.array(["a", None, "", "bc"]), "i": pa.array([1, None, 0, 2], pa.int32()),
        "l": pa.array([[1, 2], None, [], [3]]), "t": pa.array([0, 1, None, 3], pa.timestamp("us")),
        "st": pa.array([{"a": 1}, None, {"a": None}, {"a": 2}]), "b": pa.array([True, False, None, True]),
    })
    whole = row_keys(table.to_batches()[0], "t")
    assert len(set(whole)) == 4  # null, empty and zero are told apart
    sliced = [key for start in range(4) for key in row_keys(table.slice(start, 1).to_batches()[0], "t")]
    assert sliced == whole
    again = pa.Table.from_batches([pa.record_batch([column.combine_chunks() for column in table.columns],
                                                   names=table.column_names)])
    assert row_keys(again.to_batches()[0], "t") == whole


def test_row_keys_of_sliced_lists_are_those_of_the_same_rows_copied():
    rows = 50
    table = pa.table({
        "l": pa.array([[index, index + 1] if index % 7 else None for index in range(rows)]),
        "ll": pa.array([[[index], [], None] if index % 5 else [] for index in range(rows)],
                       pa.large_list(pa.list_(pa.int64()))),
        "f": pa.array([[index, -index] for index in range(rows)], pa.list_(pa.int32(), 2)),
        "m": pa.array([[("k", index)] if index % 3 else [] for index in range(rows)], pa.map_(pa.string(), pa.int64())),
        "ls": pa.array([[str(index), None] if index % 4 else None for index in range(rows)]),
    })
    for start, count in [(0, rows), (3, 10), (17, 1), (49, 1), (20, 0)]:
        sliced = table.slice(start, count).to_batches()
        copied = pa.Table.from_pylist(table.slice(start, count).to_pylist(), schema=table.schema).to_batches()
        assert [key for batch in sliced for key in row_keys(batch, "t")] == \
            [key for batch in copied for key in row_keys(batch, "t")]


def test_row_keys_of_a_slice_read_only_its_own_list_items():
    """A frame's batch is a slice of its whole table: a list column's key work is its own items',
    not the whole column's (which made each batch cost the column's length)."""
    from tfrecord_builder.builders.arrow_rows import _encoded

    whole = pa.array([list(range(100))] * 1000)
    held = sum(len(column.data) for column in _encoded(whole.slice(500, 1)))
    assert held < 2000  # one row's 100 items, each 17 bytes framed: not 100,000 items


def test_parquet_dates_and_timestamps_go_into_string_and_int64(tmp_path):
    table = pa.table({
        "when": pa.array([0, 1_500_000_000_123_000_000, None], pa.timestamp("ns")),
        "day": pa.array([datetime.date(2024, 2, 29), datetime.date(1969, 12, 31), None]),
        "utc": pa.array([0, 1, 2], pa.timestamp("ms", tz="Europe/Oslo")),
    })
    pq.write_table(table, tmp_path / "t.parquet")
    spec = {"source": {"builder": "parquet", "path": "t.parquet"},
            "features": {"text": {"dtype": "string", "source": "when", "default": "1970-01-01"},
                         "ms": {"dtype": "int64", "source": "when", "time_unit": "ms", "default": -1},
                         "day": {"dtype": "string", "default": ""},
                         "days": {"dtype": "int64", "source": "day", "time_unit": "days", "default": 0},
                         "seconds": {"dtype": "int64", "source": "day", "default": 0},
                         "utc": {"dtype": "string"}}}
    got = records(build(tmp_path, spec, {}))
    assert [row["text"] for row in got] == [["1970-01-01T00:00:00"], ["2017-07-14T02:40:00.123000000"],
                                            ["1970-01-01"]]
    assert [row["ms"] for row in got] == [[0], [1_500_000_000_123], [-1]]
    assert [row["day"] for row in got] == [["2024-02-29"], ["1969-12-31"], [""]]
    assert [row["days"] for row in got] == [[19782], [-1], [0]]
    assert [row["seconds"] for row in got] == [[19782 * 86400], [-86400], [0]]
    assert [row["utc"] for row in got] == [["1970-01-01T00:00:00"], ["1970-01-01T00:00:00.001"],
                                           ["1970-01-01T00:00:00.002"]]


def test_a_batch_whose_first_dates_are_missing_stores_the_default_and_the_dates(tmp_path):
    """The default fills the first rows before the dates are recognised: it must not make the
    column look like text (it did: `row 2: expected a string, received "2021-05-01"`)."""
    table = pa.table({"day": pa.array([None, datetime.date(2021, 5, 1), None], pa.date32()),
                      "when": pa.array([None, 1_600_000_000, None], pa.timestamp("s"))})
    pq.write_table(table, tmp_path / "t.parquet")
    spec = {"source": {"builder": "parquet", "path": "t.parquet"},
            "features": {"day": {"dtype": "string", "default": "2020-01-01"},
                         "days": {"dtype": "int64", "source": "day", "time_unit": "days", "default": 18262},
                         "when": {"dtype": "string", "default": "1970-01-01T00:00:00"}}}
    got = records(build(tmp_path, spec, {}))
    assert [row["day"] for row in got] == [["2020-01-01"], ["2021-05-01"], ["2020-01-01"]]
    assert [row["days"] for row in got] == [[18262], [18748], [18262]]
    assert [row["when"] for row in got] == [["1970-01-01T00:00:00"], ["2020-09-13T12:26:40"], ["1970-01-01T00:00:00"]]


def test_a_time_is_not_rounded_into_a_coarser_unit(tmp_path):
    pq.write_table(pa.table({"when": pa.array([1_500_000_000_123_000_000], pa.timestamp("ns"))}),
                   tmp_path / "t.parquet")
    spec = {"source": {"builder": "parquet", "path": "t.parquet"}, "features": {"when": {"dtype": "int64"}}}
    with pytest.raises(tb.DataError) as error:
        build(tmp_path, spec, {})
    assert str(error.value) == ("t.parquet, row 1: feature `when`: 2017-07-14T02:40:00.123000000 is not a whole "
                                "number of seconds; set `time_unit` to ms or us to keep it")


def test_text_dates_with_a_format(tmp_path):
    files = {"rows.csv": "d,t\n02/01/2020,2020-01-02T03:04:05+01:00\n31/12/1969,1999-12-31\n",
             "rows.jsonl": '{"d": "02/01/2020", "t": "2020-01-02T03:04:05+01:00"}\n'
                           '{"d": "31/12/1969", "t": "1999-12-31"}\n'}
    features = {"d": {"dtype": "string", "format": "%d/%m/%Y"},
                "n": {"dtype": "int64", "format": "%d/%m/%Y", "source": "d"},
                "t": {"dtype": "string", "format": "iso8601"}}
    for builder in ("csv", "jsonl"):
        spec = {"source": {"builder": builder, "path": f"rows.{builder}"}, "features": features}
        got = records(build(tmp_path / builder, spec, files))
        assert [row["d"] for row in got] == [["2020-01-02"], ["1969-12-31"]]
        assert [row["n"] for row in got] == [[1577923200], [-86400]]
        assert [row["t"] for row in got] == [["2020-01-02T02:04:05"], ["1999-12-31"]]  # (in UTC)
    bad = {"rows.csv": "d\n2020-01-02\n"}
    spec = {"source": {"builder": "csv", "path": "rows.csv"}, "features": {"d": features["d"]}}
    with pytest.raises(tb.DataError, match=r"rows.csv, line 2: feature `d`: expected a date or time as text in "
                                           r"the format '%d/%m/%Y', received '2020-01-02'"):
        build(tmp_path / "bad", spec, bad)


@pytest.mark.parametrize("declaration, message", [
    ({"dtype": "float32", "format": "%Y"}, "features.d.format: dates and times go into dtype string"),
    ({"dtype": "string", "time_unit": "ms"}, "features.d.time_unit: a time unit applies to dtype int64"),
    ({"type": "class_label", "names": ["a"], "format": "%Y"}, "features.d.format: a class_label reads names"),
])
def test_date_keys_where_they_mean_nothing_are_spec_errors(tmp_path, declaration, message):
    spec = {"name": "x", "source": {"builder": "csv", "path": "rows.csv"}, "features": {"d": declaration}}
    with pytest.raises(tb.SpecError, match=message.replace(".", r"\.")):
        tb.load_spec(write_spec(tmp_path, spec, {"rows.csv": "d\n1\n"}))


# ---- class names spelled as numbers (item 3) -------------------------------------------------

def test_class_names_spelled_as_numbers_accept_only_names(tmp_path):
    spec = {"source": {"builder": "csv", "path": "rows.csv"},
            "features": {"month": {"type": "class_label", "names": ["5", "6", "7", "8", "9"]}}}
    info = build(tmp_path / "good", spec, {"rows.csv": "month\n5\n9\n6.0\n"})
    assert [row["month"] for row in records(info)] == [[0], [4], [1]]
    with pytest.raises(tb.DataError) as error:
        build(tmp_path / "bad", spec, {"rows.csv": "month\n5\n3\n"})
    assert str(error.value).startswith("rows.csv, line 3: feature `month`: expected a class name (5, 6, 7, 8, 9), "
                                       "received '3'")


# ---- R's NA and pandas' missing values (item 8) ----------------------------------------------

@pytest.mark.parametrize("quoted", [False, True], ids=["fast reader", "csv module"])
def test_na_values_in_a_csv_are_missing(tmp_path, quoted):
    text = 'id,Ozone,name\n1,41,a\n2,NA,NA\n3,12,"c"\n' if quoted else "id,Ozone,name\n1,41,a\n2,NA,NA\n3,12,c\n"
    spec = {"source": {"builder": "csv", "path": "rows.csv", "options": {"na_values": ["NA"]}},
            "features": {"id": {"dtype": "int64"}, "Ozone": {"dtype": "float32", "default": -1},
                         "name": {"dtype": "string", "default": "?"}}}
    got = records(build(tmp_path, spec, {"rows.csv": text}))
    assert [row["Ozone"] for row in got] == [[41.0], [-1.0], [12.0]]
    assert [row["name"] for row in got] == [["a"], ["?"], ["c"]]


def test_pandas_na_values_in_jsonl_strings(tmp_path):
    lines = [{"s": "x", "n": 1}, {"s": "NaN", "n": 2}, {"s": "<NA>", "n": 3}, {"s": "ok", "n": 4}]
    spec = {"source": {"builder": "jsonl", "path": "rows.jsonl", "options": {"na_values": "pandas"}},
            "features": {"s": {"dtype": "string", "default": "-"}, "n": {"dtype": "int64"}}}
    got = records(build(tmp_path, spec, {"rows.jsonl": "".join(json.dumps(line) + "\n" for line in lines)}))
    assert [row["s"] for row in got] == [["x"], ["-"], ["-"], ["ok"]]


def test_without_na_values_an_NA_is_a_bad_number(tmp_path):
    spec = {"source": {"builder": "csv", "path": "rows.csv"}, "features": {"Ozone": {"dtype": "float32"}}}
    with pytest.raises(tb.DataError, match=r"rows.csv, line 3: feature `Ozone`: expected a number \(float32\), "
                                           r"received 'NA'"):
        build(tmp_path, spec, {"rows.csv": "Ozone\n41\nNA\n"})


# ---- the unnamed row-name column of R and pandas (item 13) -----------------------------------

def test_source_empty_string_reads_the_unnamed_column(tmp_path):
    files = {"airquality.csv": '"","Ozone"\n"1",41\n"2",36\n'}
    spec = {"source": {"builder": "csv", "path": "airquality.csv"},
            "features": {"row": {"dtype": "int64", "source": ""}, "Ozone": {"dtype": "int64"}}}
    assert [row["row"] for row in records(build(tmp_path / "a", spec, files))] == [[1], [2]]
    spec["features"]["row"]["source"] = "rownames"
    with pytest.raises(tb.DataError) as error:
        build(tmp_path / "b", spec, files)
    assert str(error.value) == ('airquality.csv: feature `row`: no column `rownames` in the source; its columns: "", '
                                "Ozone; the column without a name (R's and pandas' row names) is read with "
                                '`source: ""`')


# ---- compressed sources (item 10) ------------------------------------------------------------

CSV_TEXT = "".join(["id,x,words\n"] + [f"{index},{index * 0.25},w{index} v{index % 7}\n" for index in range(300)])


@pytest.mark.parametrize("suffix, compress", [
    (".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress),
    (".zst", lambda data: pa.compress(data, "zstd", asbytes=True)),
])
def test_compressed_sources_build_the_same_shards_as_the_plain_file(tmp_path, suffix, compress):
    spec = {"source": {"builder": "csv", "path": "rows.csv"}, "splits": {"train": 0.7, "test": 0.3},
            "features": {"id": {"dtype": "int64"}, "x": {"dtype": "float32"},
                         "words": {"dtype": "string", "shape": [None]}}, "output": {"shuffle": True}}
    plain = build(tmp_path / "plain", dict(spec), {"rows.csv": CSV_TEXT})
    spec["source"] = {"builder": "csv", "path": "rows.csv" + suffix}
    packed = build(tmp_path / "packed", spec, {"rows.csv" + suffix: compress(CSV_TEXT.encode())})
    for split in ("train", "test"):
        assert [shard["sha256"] for shard in packed.splits[split].shards] == \
               [shard["sha256"] for shard in plain.splits[split].shards]


def test_a_compressed_jsonl_manifest_is_read_by_its_plain_name(tmp_path):
    lines = "".join(json.dumps({"a": index, "s": f"t{index}"}) + "\n" for index in range(5))
    spec = {"source": {"builder": "jsonl", "path": "rows.jsonl.gz"},
            "features": {"a": {"dtype": "int64"}, "s": {"dtype": "string"}}}
    got = records(build(tmp_path, spec, {"rows.jsonl.gz": gzip.compress(lines.encode())}))
    assert [row["a"] for row in got] == [[index] for index in range(5)]


def test_a_cut_compressed_file_is_one_error_naming_it(tmp_path):
    spec = {"source": {"builder": "csv", "path": "rows.csv.gz"}, "features": {"id": {"dtype": "int64"}}}
    data = gzip.compress(CSV_TEXT.encode())
    with pytest.raises(tb.DataError) as error:
        build(tmp_path, spec, {"rows.csv.gz": data[: len(data) // 2]})
    assert str(error.value).startswith("rows.csv.gz: cannot be decompressed as gzip")


# ---- repeated rows and the fractions asked (item 6) ------------------------------------------

def test_repeated_rows_that_skew_the_splits_are_warned_about(tmp_path):
    rows = "".join(f"{index % 6}\n" for index in range(1000))
    spec = {"source": {"builder": "csv", "path": "rows.csv"}, "splits": {"train": 0.8, "test": 0.2},
            "features": {"a": {"dtype": "int64"}}, "output": {"shuffle": True}}
    with pytest.warns(tb.BuildWarning) as caught:
        info = build(tmp_path / "few", spec, {"rows.csv": "a\n" + rows})
    made = info.splits["train"].num_examples / 1000
    assert abs(made - 0.8) > 0.05
    issued = [str(item.message) for item in caught if item.category is tb.BuildWarning]
    assert issued == info.warnings
    (message,) = [text for text in issued if "far from" in text]
    assert f"train {made:.2f}" in message and "far from the 0.8, 0.2 asked" in message
    assert "the 1,000 records have only 6 different keys" in message and "`source.key`" in message
    unique = "".join(f"{index}\n" for index in range(1000))
    with warnings.catch_warnings():
        warnings.simplefilter("error", tb.BuildWarning)
        assert build(tmp_path / "many", spec, {"rows.csv": "a\n" + unique}).warnings == []


def test_a_duration_column_is_refused_by_name_and_still_keys_its_row(tmp_path):
    """Python gives nanosecond durations and times of day only with pandas: a clear error, not a crash."""
    table = pa.table({"wait": pa.array([1, 2], pa.duration("ns")), "x": [1, 2]})
    for folder in ("read", "keyed"):
        (tmp_path / folder).mkdir()
        pq.write_table(table, tmp_path / folder / "t.parquet")
    spec = {"source": {"builder": "parquet", "path": "t.parquet"}, "features": {"wait": {"dtype": "int64"}}}
    with pytest.raises(tb.DataError) as error:
        build(tmp_path / "read", spec, {})
    assert str(error.value) == ("t.parquet: column `wait`: a duration[ns] column can't be read yet (only dates and "
                                "timestamps are); cast it to int64 before writing the file")
    spec["features"] = {"x": {"dtype": "int64"}}  # not read, but part of each row's key
    assert [row["x"] for row in records(build(tmp_path / "keyed", spec, {}))] == [[1], [2]]


def test_a_bad_json_value_is_named_in_json(tmp_path):
    spec = {"source": {"builder": "jsonl", "path": "rows.jsonl"},
            "features": {"kind": {"type": "class_label", "names": ["cat", "dog"]}}}
    with pytest.raises(tb.DataError) as error:
        build(tmp_path, spec, {"rows.jsonl": '{"kind": "cat"}\n{"kind": true}\n'})
    assert str(error.value) == ("rows.jsonl, line 2: feature `kind`: expected a class name (cat, dog) or an index "
                                "in [0, 2), received true")
