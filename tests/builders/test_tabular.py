"""CSV, JSONL and Parquet sources give the same records; renaming, keys and quoting work."""
from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfrecord_builder as tb
from tfrecord_builder.errors import DataError, SpecError
from tfrecord_builder.tools.verify import verify
from tfrecord_builder.write.info import read_info

from support.cli import run_cli, show
from conftest import batches_as_numpy, write_spec

ROWS = [
    {"id": 1, "Temp (C)": 21.5, "words": ["a", "b c"], "city": "Oslo, Norway"},
    {"id": 2, "Temp (C)": -3.0, "words": [], "city": 'say "hi"'},
    {"id": 3, "Temp (C)": 0.25, "words": ["z"], "city": "Zürich"},
]
FEATURES = {
    "id": {"dtype": "int64"},
    "temperature": {"dtype": "float32", "source": "Temp (C)"},
    "words": {"dtype": "string", "shape": [None]},
    "city": {"dtype": "string"},
}


def _csv():
    lines = ['id,Temp (C),words,city\n']
    for row in ROWS:
        city = row["city"].replace('"', '""')
        lines.append(f'{row["id"]},{row["Temp (C)"]},"{json.dumps(row["words"]).replace(chr(34), chr(34) * 2)}",'
                     f'"{city}"\n')
        lines.append("\n")  # blank lines are skipped
    return "".join(lines)


def _jsonl():
    return "".join(json.dumps(row) + "\n\n" for row in ROWS)


def _parquet(path):
    pq.write_table(pa.Table.from_pylist(ROWS), path)


def _read(info):
    examples = {}
    for batch in batches_as_numpy(tb.input_fn(info.path, "train", batch_size=10, shuffle=False)):
        for index, identifier in enumerate(batch["id"].tolist()):
            examples[identifier] = (float(batch["temperature"][index]), batch["words"][index],
                                    batch["city"][index].decode())
    return examples


EXPECTED = {1: (21.5, [b"a", b"b c"], "Oslo, Norway"), 2: (-3.0, [], 'say "hi"'), 3: (0.25, [b"z"], "Zürich")}


@pytest.mark.parametrize("builder", ["csv", "jsonl", "parquet"])
def test_each_table_format_gives_the_same_records(tf, tmp_path, builder):
    name = f"data.{builder}"
    if builder == "parquet":
        _parquet(tmp_path / name)
        files = {}
    else:
        files = {name: _csv() if builder == "csv" else _jsonl()}
    spec = {"name": "t", "source": {"builder": builder, "path": name}, "features": FEATURES}
    info = tb.build(write_spec(tmp_path, spec, files), output=tmp_path / "out")
    assert _read(info) == EXPECTED


def test_a_key_column_gives_stable_keys_and_duplicates_fail(tmp_path):
    spec = {"name": "t", "source": {"builder": "jsonl", "path": "d.jsonl", "key": "id"},
            "features": {"id": {"dtype": "int64"}}}
    data = '{"id": 1}\n{"id": 2}\n{"id": 1}\n'
    with pytest.raises(DataError, match=r"d.jsonl, line 3: duplicate key '1' \(also yielded at d.jsonl, line 1\)"):
        tb.build(write_spec(tmp_path, spec, {"d.jsonl": data}), output=tmp_path / "out")


def test_identical_rows_without_a_key_column_are_kept(tmp_path):
    spec = {"name": "t", "source": {"builder": "csv", "path": "d.csv"}, "features": {"x": {"dtype": "int64"}}}
    info = tb.build(write_spec(tmp_path, spec, {"d.csv": "x\n1\n1\n2\n"}), output=tmp_path / "out")
    assert info.splits["train"].num_examples == 3


def test_an_absent_json_field_is_fine_with_a_default_but_a_csv_column_missing_from_the_header_is_not(tf, tmp_path):
    """A JSON record may leave a field out; a header that lacks a column most likely misspells it,
    which a default would hide as a constant feature."""
    spec = {"name": "t", "source": {"builder": "jsonl", "path": "d.jsonl"},
            "features": {"x": {"dtype": "int64"}, "w": {"dtype": "float32", "default": 1.0}}}
    info = tb.build(write_spec(tmp_path / "j", spec, {"d.jsonl": '{"x": 1}\n{"x": 2}\n'}), output=tmp_path / "j" / "out")
    (batch,) = batches_as_numpy(tb.input_fn(info.path, "train", shuffle=False))
    assert batch["w"].tolist() == [1.0, 1.0]
    spec["source"] = {"builder": "csv", "path": "d.csv"}
    with pytest.raises(DataError, match=r"^d.csv: feature `w`: no column `w` in the source; its columns: x$"):
        tb.build(write_spec(tmp_path / "c", spec, {"d.csv": "x\n1\n2\n"}), output=tmp_path / "c" / "out")


def test_a_missing_column_without_default_names_the_columns(tmp_path):
    spec = {"name": "t", "source": {"builder": "csv", "path": "d.csv"}, "features": {"y": {"dtype": "int64"}}}
    with pytest.raises(DataError, match=r"d.csv: feature `y`: no column `y` in the source; its columns: x, z"):
        tb.build(write_spec(tmp_path, spec, {"d.csv": "x,z\n1,2\n"}), output=tmp_path / "out")


def test_a_quoted_cell_spanning_lines_keeps_later_line_numbers_right(tmp_path):
    spec = {"name": "t", "source": {"builder": "csv", "path": "d.csv"},
            "features": {"note": {"dtype": "string"}, "x": {"dtype": "int64"}}}
    data = 'note,x\n"two\nlines",1\nok,oops\n'
    with pytest.raises(DataError, match=r"d.csv, line 4: feature `x`: expected an integer"):
        tb.build(write_spec(tmp_path, spec, {"d.csv": data}), output=tmp_path / "out")


def test_other_delimiters(tmp_path):
    spec = {"name": "t", "source": {"builder": "csv", "path": "d.tsv", "delimiter": "\t"},
            "features": {"a": {"dtype": "int64"}, "b": {"dtype": "string"}}}
    info = tb.build(write_spec(tmp_path, spec, {"d.tsv": "a\tb\n1\tx y\n"}), output=tmp_path / "out")
    assert info.splits["train"].num_examples == 1


def test_parquet_refuses_a_string_where_a_list_belongs_and_a_column_named_twice(tmp_path):
    spec = {"name": "p", "source": {"builder": "parquet", "path": "d.parquet"},
            "features": {"id": {"dtype": "int64"}, "words": {"dtype": "string", "shape": [None]}}}
    pq.write_table(pa.Table.from_pylist([{"id": 1, "words": "new york"}]), tmp_path / "d.parquet")
    path = write_spec(tmp_path, spec)
    with pytest.raises(DataError, match=r"^d\.parquet, row 1: feature `words`: expected a list of shape \[null\], "
                                        r"received the string 'new york'$"):
        tb.build(path, output=tmp_path / "out")
    pq.write_table(pa.Table.from_arrays([pa.array([1]), pa.array([["a"]]), pa.array([2])], names=["id", "words", "id"]),
                   tmp_path / "d.parquet")
    with pytest.raises(DataError, match=r"^d\.parquet: column `id` appears 2 times; expected unique column names$"):
        tb.build(path, output=tmp_path / "out")


def test_a_csv_list_cell_still_splits_on_whitespace(tmp_path):
    """What JSON and Parquet sources refuse (the test above, tests/cli/test_bad_input.py) is the CSV
    way of writing a list."""
    spec = {"name": "c", "source": {"builder": "csv", "path": "d.csv"},
            "features": {"id": {"dtype": "int64"}, "words": {"dtype": "string", "shape": [None]}}}
    info = tb.build(write_spec(tmp_path, spec, {"d.csv": "id,words\n1,new york\n"}), output=tmp_path / "out")
    (batch,) = batches_as_numpy(tb.input_fn(info.path, "train", shuffle=False))
    assert batch["words"] == [[b"new", b"york"]]


CSV_WITH_BROKEN_ROWS = "n,x\n1,1.5\n2,2.5,extra\n3,3.5\n4\n5,5.5\n"
JSONL_WITH_BROKEN_LINES = b'{"n": 1, "x": 1.5}\n{"n": 2, "x": 2.5\n{"n": 3, "x": 3.5}\n[4, 4.5]\n{"n": 5, "x": "\xff"}\n'


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("batch_rows", [2, 16384])
@pytest.mark.parametrize("data", ["csv", "csv with a quoted cell", "csv with a quote in a plain cell", "jsonl"])
def test_on_error_skip_also_skips_rows_the_reader_cannot_read(tf, tmp_path, monkeypatch, workers, batch_rows, data):
    """A row with the wrong number of fields, a line that isn't a JSON object or isn't UTF-8: under
    `on_error: skip` each is skipped and listed like a bad value, by the fast readers (and their
    fallback in a worker) and the plain ones alike."""
    from tfrecord_builder.features import TensorFeature

    monkeypatch.setattr(TensorFeature, "batch_rows", batch_rows)
    name = "d.jsonl" if data == "jsonl" else "d.csv"
    text = JSONL_WITH_BROKEN_LINES if data == "jsonl" else CSV_WITH_BROKEN_ROWS
    if data == "csv with a quoted cell":  # Arrow reads it, quoted
        text = text.replace("5,5.5", '5,"5.5"')
    if data == "csv with a quote in a plain cell":  # the csv module's reader reads the whole file
        text = 'n,x,note\n1,1.5,5" screen\n2,2.5,a,extra\n3,3.5,\n4\n5,5.5,\n'
    spec = {"name": "s", "source": {"builder": name.split(".")[1], "path": name}, "on_error": "skip",
            "features": {"n": {"dtype": "int64"}, "x": {"dtype": "float32"}}}
    info = tb.build(write_spec(tmp_path, spec, {name: text}), output=tmp_path / "out", workers=workers)
    (batch,) = batches_as_numpy(tb.input_fn(info.path, "train", shuffle=False))
    skipped = [json.loads(line) for line in (tmp_path / "out" / "s" / "1.0.0" / "skipped.jsonl").read_text().splitlines()]
    if data == "jsonl":
        assert sorted(batch["n"].tolist()) == [1, 3]
        assert skipped == [
            {"record": "d.jsonl, line 2", "reason": "d.jsonl, line 2: invalid JSON: Expecting ',' delimiter at column 18"},
            {"record": "d.jsonl, line 4", "reason": "d.jsonl, line 4: expected a JSON object, received list"},
            {"record": "d.jsonl, line 5", "reason": "d.jsonl, line 5: not valid utf-8 text (byte 0xff)"}]
    else:
        width = 3 if data == "csv with a quote in a plain cell" else 2
        assert sorted(batch["n"].tolist()) == [1, 3, 5]
        assert skipped == [
            {"record": "d.csv, line 3", "reason": f"d.csv, line 3: expected {width} fields (as in the header), "
                                                  f"received {width + 1}"},
            {"record": "d.csv, line 5", "reason": f"d.csv, line 5: expected {width} fields (as in the header), "
                                                  "received 1"}]
    assert info.skipped == len(skipped)


def test_when_every_record_is_skipped_the_error_says_so(tmp_path):
    spec = {"name": "s", "source": {"builder": "csv", "path": "d.csv"}, "on_error": "skip",
            "features": {"n": {"dtype": "int64"}}}
    with pytest.raises(DataError, match=r"^.*d\.csv: every record was skipped \(2\); the first: d\.csv, line 2: "
                                        r"feature `n`: expected an integer"):
        tb.build(write_spec(tmp_path, spec, {"d.csv": "n\nx\ny\n"}), output=tmp_path / "out")


@pytest.mark.parametrize("builder", ["csv", "parquet"])
def test_which_features_the_spec_reads_does_not_move_rows_between_splits(tf, tmp_path, builder):
    """A row's key is the whole row, not just the columns the spec reads: a model with one more
    feature is scored on the same test set."""
    rows = [{"id": index, "a": index % 7, "b": float(index % 5)} for index in range(400)]
    if builder == "parquet":
        pq.write_table(pa.Table.from_pylist(rows), tmp_path / "d.parquet")
    else:
        (tmp_path / "d.csv").write_text("id,a,b\n" + "".join(f"{r['id']},{r['a']},{r['b']}\n" for r in rows))
    members = []
    for features in ({"id": {"dtype": "int64"}}, {"id": {"dtype": "int64"}, "b": {"dtype": "float32"}}):
        spec = {"name": f"s{len(features)}", "source": {"builder": builder, "path": f"d.{builder}"},
                "splits": {"train": 0.8, "test": 0.2}, "features": features}
        info = tb.build(write_spec(tmp_path, spec), output=tmp_path / "out")
        members.append(sorted(int(x) for batch in tb.input_fn(info.path, "test", shuffle=False)
                              for x in batch["id"].numpy()))
    assert members[0] == members[1] and 40 < len(members[0]) < 120


@pytest.mark.parametrize("encoding, prefix", [("utf-8", b"\xef\xbb\xbf"), ("utf-16", b""), ("utf-16-le", b"")])
def test_jsonl_with_a_byte_order_mark_or_in_utf16_reads_as_csv_does(tf, tmp_path, encoding, prefix):
    text = '{"n": 1, "s": "Zürich"}\r\n{"n": 2, "s": "ü"}\n'
    data = prefix + text.encode(encoding)
    spec = {"name": "e", "source": {"builder": "jsonl", "path": "d.jsonl", "encoding": encoding},
            "features": {"n": {"dtype": "int64"}, "s": {"dtype": "string"}}, "output": {"shuffle": False}}
    info = tb.build(write_spec(tmp_path, spec, {"d.jsonl": data}), output=tmp_path / "out")
    (batch,) = batches_as_numpy(tb.input_fn(info.path, "train", shuffle=False))
    assert sorted(zip(batch["n"].tolist(), [s.decode() for s in batch["s"]])) == [(1, "Zürich"), (2, "ü")]


@pytest.mark.parametrize("cell, shown", [("valid", "'valid'"), ("", "an empty cell")])
def test_a_split_column_value_that_names_no_split_is_an_error_naming_the_row(tmp_path, cell, shown):
    spec = {"name": "s", "source": {"builder": "csv", "path": "d.csv", "split_column": "part"},
            "splits": {"train": {}, "test": {}}, "features": {"n": {"dtype": "int64"}}}
    path = write_spec(tmp_path, spec, {"d.csv": f"n,part\n1,train\n2,{cell}\n"})
    with pytest.raises(DataError, match=rf"^d\.csv, line 3: split column `part`: expected one of train, test, "
                                        rf"received {shown}$"):
        tb.build(path, output=tmp_path / "out")


# ---- several columns gathered into one feature (`columns:`) ----------------------------------
# the file's order of the g_ columns is not their names' order: a pattern keeps the file's
GATHERED_HEADER = ["id", "g_10", "label", "g_2", "g_1"]
GATHERED_ROWS = [[1, 0.5, "a", -2.25, 3.0], [2, 0.125, "b", 4.0, -0.0], [3, 7.5, "a", 8.0, 1.5]]


def _gathered_source(tmp_path, builder, quoted=False):
    name = f"d.{builder}"
    if builder == "parquet":
        pq.write_table(pa.Table.from_pylist([dict(zip(GATHERED_HEADER, row)) for row in GATHERED_ROWS]), tmp_path / name)
    elif builder == "jsonl":
        (tmp_path / name).write_text("".join(json.dumps(dict(zip(GATHERED_HEADER, row))) + "\n" for row in GATHERED_ROWS))
    else:  # (Arrow reads quoted cells as the csv module does)
        cells = [[f'"{value}"' if quoted and column == "label" else str(value) for column, value in zip(GATHERED_HEADER, row)]
                 for row in GATHERED_ROWS]
        (tmp_path / name).write_text(",".join(GATHERED_HEADER) + "\n" + "".join(",".join(row) + "\n" for row in cells))
    return name


@pytest.mark.parametrize("columns, order", [("g_*", ["g_10", "g_2", "g_1"]), (["g_1", "g_10"], ["g_1", "g_10"])],
                         ids=["pattern", "list"])
@pytest.mark.parametrize("builder", ["csv", "csv quoted", "jsonl", "parquet"])
def test_columns_gather_into_one_feature_in_order(tmp_path, builder, columns, order):
    """`columns:` reads each row's cells of those columns as one [n] tensor: a list in its own order,
    a pattern in the file's; the build records the columns it read and the shape."""
    name = _gathered_source(tmp_path, builder.split()[0], quoted=builder == "csv quoted")
    spec = {"name": "g", "source": {"builder": builder.split()[0], "path": name}, "output": {"shuffle": False},
            "features": {"id": {"dtype": "int64"}, "genes": {"dtype": "float32", "columns": columns}}}
    info = tb.build(write_spec(tmp_path, spec), output=tmp_path / "out")
    feature = info.spec.features["genes"]
    assert (feature.columns, feature.shape) == (order, [len(order)])
    assert read_info(info.path).spec.features["genes"].columns == order  # as recorded in tfrecord_builder.json
    positions = [GATHERED_HEADER.index(column) for column in order]
    read = [(record["id"], record["genes"].tolist()) for record in tb.read(info.path, "train")]
    assert read == [(row[0], [row[position] for position in positions]) for row in GATHERED_ROWS]
    assert all(record["genes"].dtype == np.float32 and record["genes"].shape == (len(order),)
               for record in tb.read(info.path, "train"))
    per_column = info.statistics["train"]["genes"]["per_column"]
    assert per_column["min"] == [min(row[position] for row in GATHERED_ROWS) for position in positions]
    assert per_column["num_missing"] == [0] * len(order)


@pytest.mark.parametrize("builder", ["csv", "jsonl", "parquet"])
def test_a_missing_cell_of_gathered_columns_takes_the_default_or_is_refused_by_row_and_column(tmp_path, builder):
    rows = [{"id": 1, "a": 1.0, "b": 2.0}, {"id": 2, "a": None, "b": 4.0}]
    if builder == "parquet":
        pq.write_table(pa.Table.from_pylist(rows), tmp_path / "d.parquet")
    elif builder == "jsonl":
        (tmp_path / "d.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    else:
        (tmp_path / "d.csv").write_text("id,a,b\n1,1.0,2.0\n2,,4.0\n")
    where = "line 3" if builder == "csv" else "line 2" if builder == "jsonl" else "row 2"
    spec = {"name": "g", "source": {"builder": builder, "path": f"d.{builder}"}, "output": {"shuffle": False},
            "features": {"v": {"dtype": "float32", "columns": ["a", "b"]}}}
    with pytest.raises(DataError, match=rf"^d\.{builder}, {where}: feature `v`, column `a`: missing value "
                                        r"\(the spec gives no `default`\)$"):
        tb.build(write_spec(tmp_path, spec), output=tmp_path / "out")
    spec["features"]["v"]["default"] = -1
    info = tb.build(write_spec(tmp_path, spec), output=tmp_path / "out", overwrite=True)
    assert [record["v"].tolist() for record in tb.read(info.path, "train")] == [[1.0, 2.0], [-1.0, 4.0]]
    assert info.statistics["train"]["v"]["num_missing"] == 1
    assert info.statistics["train"]["v"]["per_column"]["num_missing"] == [1, 0]


def test_gathered_columns_of_mixed_types_name_the_column(tmp_path):
    spec = {"name": "g", "source": {"builder": "csv", "path": "d.csv"},
            "features": {"v": {"dtype": "float32", "columns": "c*"}}}
    with pytest.raises(DataError, match=r"^d\.csv, line 3: feature `v`, column `c2`: expected a number \(float32\), "
                                        r"received 'high'$"):
        tb.build(write_spec(tmp_path, spec, {"d.csv": "c1,c2\n1,2\n3,high\n"}), output=tmp_path / "out")
    pq.write_table(pa.table({"c1": [1.0], "c2": ["x"]}), tmp_path / "d.parquet")
    spec["source"] = {"builder": "parquet", "path": "d.parquet"}
    with pytest.raises(DataError, match=r"^d\.parquet, row 1: feature `v`, column `c2`: expected a number"):
        tb.build(write_spec(tmp_path, spec), output=tmp_path / "out")


def test_a_pattern_that_matches_no_column_names_it_and_the_columns(tmp_path):
    header = ",".join(f"x{index}" for index in range(12))
    spec = {"name": "g", "source": {"builder": "csv", "path": "d.csv"},
            "features": {"v": {"dtype": "float32", "columns": "gene_*"}}}
    path = write_spec(tmp_path, spec, {"d.csv": header + "\n" + ",".join("1" * 12) + "\n"})
    message = (r"spec\.yaml, line 8: features\.v\.columns: the pattern 'gene_\*' matches no column of d\.csv "
               r"\(fnmatch-style, case-sensitive\); its columns: x0, x1, x2, x3, x4, x5, x6, x7 and 4 more$")
    with pytest.raises(SpecError, match=message):
        tb.build(path, output=tmp_path / "out")
    with pytest.raises(SpecError, match=message):
        tb.generate_module(path)
    spec["features"]["v"]["shape"] = [3]
    spec["features"]["v"]["columns"] = "x?"
    with pytest.raises(SpecError, match=r"features\.v\.shape: shape \[3\] doesn't match the 10 columns gathered; "
                                        r"omit `shape` \(it becomes \[10\]\) or give \[10\] \(the pattern 'x\?' matches "
                                        r"10 columns of d\.csv\)$"):
        tb.build(write_spec(tmp_path, spec), output=tmp_path / "out")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(table=st.integers(1, 6).flatmap(lambda width: st.lists(
    st.lists(st.integers(-10**6, 10**6), min_size=width, max_size=width), min_size=1, max_size=5)))
def test_gathered_columns_round_trip_exactly(tmp_path_factory, table):
    """Any table of whole numbers, through `columns:` of a CSV, reads back cell for cell."""
    folder = tmp_path_factory.mktemp("g")
    width = len(table[0])
    header = [f"c{(index * 7) % width}_{index}" for index in range(width)]  # names not in file order
    (folder / "d.csv").write_text(",".join(header) + "\n" + "".join(",".join(map(str, row)) + "\n" for row in table))
    spec = {"name": "g", "source": {"builder": "csv", "path": "d.csv"}, "output": {"shuffle": False},
            "features": {"v": {"dtype": "int64", "columns": "c*"}}}
    info = tb.build(write_spec(folder, spec), output=folder / "out")
    assert info.spec.features["v"].columns == header
    assert [record["v"].tolist() for record in tb.read(info.path, "train")] == table


def test_a_gathered_feature_validates_verifies_and_inspects_with_its_shape(tmp_path):
    """What reads a built dataset knows `n` from the columns the build recorded, the source unread."""
    name = _gathered_source(tmp_path, "csv")
    spec = {"name": "g", "source": {"builder": "csv", "path": name}, "output": {"dir": "out"},
            "features": {"genes": {"dtype": "float32", "columns": "g_*"}}}
    write_spec(tmp_path, spec)
    result = run_cli("validate", "spec.yaml", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout == "spec.yaml: ok: g 1.0.0, 1 features, splits: train 1\n", show(result)
    info = tb.build(tmp_path / "spec.yaml")
    (tmp_path / name).unlink()
    verification = verify(info.path, workers=1)
    assert verification.ok and verification.num_records == len(GATHERED_ROWS)
    result = run_cli("inspect", info.path, cwd=tmp_path)
    assert "genes    float32 [3]  genes: tf.io.FixedLenFeature([3], tf.float32)" in result.stdout, show(result)
    assert "'genes': {'sequence': False, 'parse': {'genes': ('fixed', 'float32', [3])}" in \
        tb.generate_module(read_info(info.path).spec)
