"""`infer` on a table where it lives: a DuckDB or SQLite table, a query, a Delta table and an
Iceberg table give the spec the same rows give as a Parquet file, but for the lines that say
where the rows are; the spec validates and builds as it is written."""
from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path

import deltalake
import duckdb
import pyarrow as pa
import pyarrow.parquet as parquet
import pytest
from pyiceberg.catalog import sql as sql_catalog

import tfrecord_builder as tb

from support.cli import run_cli

ROWS = 40
LABELS = ["cat", "dog", "owl"]
_WHERE = ("  builder:", "  path:", "  connection:", "  table:", "  query:", "  catalog:")


def _rows(rows: int = ROWS) -> pa.Table:
    """Numbers, booleans, text, bytes, lists, dates and timestamps, with gaps, and a label."""
    ids = list(range(rows))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "f32": pa.array([i / 4 for i in ids], pa.float32()),
        "f64": pa.array([i / 3 if i % 5 else None for i in ids], pa.float64()),
        "flag": pa.array([None if i % 7 == 3 else i % 2 == 0 for i in ids], pa.bool_()),
        "text": pa.array([None if i % 6 == 1 else f"r{i}é" for i in ids], pa.string()),
        "raw": pa.array([bytes([i % 256, 0, 255]) for i in ids], pa.binary()),
        "ints": pa.array([None if i % 9 == 2 else list(range(i % 4)) for i in ids], pa.list_(pa.int64())),
        "day": pa.array([None if i % 8 == 5 else dt.date(2020, 1, 1) + dt.timedelta(days=37 * i) for i in ids],
                        pa.date32()),
        "when": pa.array([dt.datetime(2024, 3, 1, 12, tzinfo=dt.timezone.utc) + dt.timedelta(hours=5 * i)
                          for i in ids], pa.timestamp("us", tz="UTC")),
        "label": pa.array([LABELS[i % 3] for i in ids], pa.string()),
    })


def _sqlite_rows(rows: int = ROWS) -> pa.Table:
    """The columns SQLite keeps with their types: integers, reals, text, bytes."""
    return _rows(rows).select(["id", "f64", "text", "raw", "label"])


def _guesses(text: str, where: str) -> str:
    """The spec text without the lines that say where the rows are (its header line checked) and
    the dataset's name (a table's is the table's, checked apart)."""
    lines = text.splitlines()
    assert lines[0] == f"# Written by `tfrecord-builder infer` from {where}: all {ROWS} rows read.", lines[0]
    return "\n".join(line for line in lines[1:] if not line.startswith(_WHERE + ("name:",)))


def _source(text: str) -> list[str]:
    return [line.split("#")[0].rstrip() for line in text.splitlines() if line.startswith(_WHERE)]


def _as_parquet(tmp_path: Path, table: pa.Table) -> str:
    parquet.write_table(table, tmp_path / "rows.parquet")
    return tb.infer(tmp_path / "rows.parquet", tmp_path / "spec.yaml")


def _builds(tmp_path: Path, text: str) -> None:
    """The spec as it is written validates and builds every row."""
    spec = tmp_path / "inferred.yaml"
    spec.write_text(text)
    info = tb.build(spec, output=tmp_path / "out", progress=False, workers=1)
    assert sum(split.num_examples for split in info.splits.values()) == ROWS


def _duckdb(tmp_path: Path, table: pa.Table, name: str = "rows", *more: str) -> Path:
    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as connection:
        for each in (name, *more):
            connection.register("given", table)
            connection.execute(f"CREATE TABLE {each} AS SELECT * FROM given")
    return path


def _sqlite(tmp_path: Path, table: pa.Table, *names: str) -> Path:
    path = tmp_path / "shop.db"
    with sqlite3.connect(path) as connection:
        for name in names or ("rows",):
            connection.execute(f"CREATE TABLE {name} (id INTEGER, f64 REAL, text TEXT, raw BLOB, label TEXT)")
            connection.executemany(f"INSERT INTO {name} VALUES (?, ?, ?, ?, ?)", zip(*table.to_pydict().values()))
    connection.close()
    return path


def test_a_duckdb_table_gives_the_guesses_of_its_rows_in_a_parquet_file(tmp_path):
    expected = _as_parquet(tmp_path, _rows())
    _duckdb(tmp_path, _rows())
    text = tb.infer(tmp_path / "shop.duckdb", tmp_path / "spec.yaml")
    assert _source(text) == ["  builder: sql", "  connection: shop.duckdb", "  table: rows"]
    assert "\nname: rows\n" in text
    assert _guesses(text, "table rows of shop.duckdb") == _guesses(expected, "rows.parquet")
    _builds(tmp_path, text)


def test_a_sqlite_table_gives_the_guesses_of_its_rows_in_a_parquet_file(tmp_path):
    expected = _as_parquet(tmp_path, _sqlite_rows())
    _sqlite(tmp_path, _sqlite_rows())
    text = tb.infer(f"sqlite:///{tmp_path}/shop.db", tmp_path / "spec.yaml")
    assert _source(text) == ["  builder: sql", "  connection: \"sqlite:///shop.db\"", "  table: rows"]
    assert _guesses(text, "table rows of sqlite:///" + f"{tmp_path}/shop.db") == _guesses(expected, "rows.parquet")
    _builds(tmp_path, text)


def test_a_query_over_files_and_a_query_of_a_database_give_the_guesses_of_their_rows(tmp_path):
    expected = _as_parquet(tmp_path, _rows())
    text = tb.infer(query="SELECT * FROM 'rows.parquet'", spec=tmp_path / "spec.yaml")  # from the spec's folder
    assert _source(text) == ["  builder: sql", "  query: \"SELECT * FROM 'rows.parquet'\""]
    assert _guesses(text, "the query") == _guesses(expected, "rows.parquet")
    _builds(tmp_path, text)
    _duckdb(tmp_path, _rows(), "rows", "other")
    text = tb.infer(tmp_path / "shop.duckdb", tmp_path / "spec.yaml", query="SELECT * FROM rows")
    assert _source(text) == ["  builder: sql", "  connection: shop.duckdb", '  query: "SELECT * FROM rows"']
    assert _guesses(text, "the query of shop.duckdb") == _guesses(expected, "rows.parquet")


def test_a_delta_table_gives_the_guesses_of_its_rows_with_the_version_it_saw(tmp_path):
    expected = _as_parquet(tmp_path, _rows())
    deltalake.write_deltalake(tmp_path / "rows", _rows().slice(0, 25))
    deltalake.write_deltalake(tmp_path / "rows", _rows().slice(25), mode="append")
    text = tb.infer(tmp_path / "rows", tmp_path / "spec.yaml")
    assert _source(text) == ["  builder: delta", "  path: rows"]
    assert "without `version:` the build reads its latest, 1 when this was written" in text
    assert _guesses(text, "Delta table rows (version 1)") == _guesses(expected, "rows.parquet")
    _builds(tmp_path, text)


def test_an_iceberg_table_gives_the_guesses_of_its_rows_with_the_snapshot_it_saw(tmp_path):
    expected = _as_parquet(tmp_path, _rows())
    catalog = sql_catalog.SqlCatalog("default", uri=f"sqlite:///{tmp_path}/catalog.db",
                                     warehouse=f"file://{tmp_path}/warehouse")
    catalog.create_namespace("shop")
    table = catalog.create_table("shop.rows", schema=_rows().schema)
    table.append(_rows())
    snapshot = table.current_snapshot().snapshot_id
    result = run_cli("infer", "--catalog", "sqlite:///catalog.db", "--table", "shop.rows", "-o", "spec.yaml",
                     cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "spec.yaml").read_text()
    assert _source(text) == ["  builder: iceberg", "  table: shop.rows", "  catalog: {uri: \"sqlite:///catalog.db\"}"]
    assert f"its current snapshot, {snapshot} when this was written" in text
    assert _guesses(text, f"Iceberg table shop.rows (snapshot {snapshot})") == _guesses(expected, "rows.parquet")
    _builds(tmp_path, text)


def test_the_command_reads_a_database_file_and_picks_its_table(tmp_path):
    _sqlite(tmp_path, _sqlite_rows(), "rows", "other")
    result = run_cli("infer", "shop.db", "--table", "rows", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert _source(result.stdout) == ["  builder: sql", "  connection: shop.db", "  table: rows"]


@pytest.mark.parametrize("args, code, message", [
    (["shop.db"], 2, "shop.db: the database has 2 tables (other, rows); pick one with --table NAME, or read a "
                     "query with --query \"SELECT ...\""),
    (["shop.db", "--table", "nope"], 1, "shop.db: no table `nope`; its tables: other, rows"),
    (["shop.db", "--query", "SELECT nope FROM rows"], 1,
     "shop.db: the database refused the query: no such column: nope"),
    (["not_delta"], 1, None),
    (["--catalog", "sqlite:///catalog.db", "--table", "shop.nope"], 1,
     "no table `shop.nope` in the iceberg catalog; the catalog's namespaces: none"),
])
def test_bad_input_is_said_in_one_line(tmp_path, args, code, message):
    _sqlite(tmp_path, _sqlite_rows(), "rows", "other")
    (tmp_path / "not_delta" / "_delta_log").mkdir(parents=True)
    sql_catalog.SqlCatalog("default", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/w")
    result = run_cli("infer", *args, cwd=tmp_path)
    assert result.returncode == code, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    if message is None:
        assert lines[0].startswith("error: ") and "not a readable Delta table" in lines[0], lines[0]
    else:
        assert lines[0] == f"error: {message}"
