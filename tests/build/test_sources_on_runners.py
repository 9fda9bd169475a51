"""Sources of rows that live elsewhere on every runner: `builder: sql` (DuckDB and SQLite files,
with `partition_by`, and DuckDB over a Parquet file in place), `builder: delta`, `builder: iceberg`,
and a frame given from Python on Beam's DirectRunner. The same spec built by the local runner, on
Beam (the DirectRunner, 2 worker processes, in .venv-beam) and on Spark (the run's one session on
the cluster of tests/support/spark_cluster.py) gives the same files byte for byte, the snapshot
recorded the same, and every row once: a partition's range is read by one task, once."""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as parquet
import pytest

import tfrecord_builder as tb

from conftest import ROOT, write_spec
from support.engines import BEAM_PYTHON, SMALL_TASKS, run_beam
from support.reading import assert_same_files, files_of

duckdb = pytest.importorskip("duckdb")
deltalake = pytest.importorskip("deltalake")
sql_catalog = pytest.importorskip("pyiceberg.catalog.sql")

ROWS = 3000
FEATURES = {"id": {"dtype": "int64"}, "x": {"dtype": "float32"}, "name": {"dtype": "string", "default": ""}, "ids": {"dtype": "int64", "shape": [None]},
            "label": {"type": "class_label", "names": ["ant", "bee", "cat"]}}
SOURCES = {
    "duckdb-partitioned": {"builder": "sql", "table": "rows", "connection": "duckdb:///rows.duckdb",
                           "partition_by": "id", "partitions": 4},
    "sqlite-partitioned": {"builder": "sql", "query": "SELECT id, x, name, label FROM rows",
                           "connection": "sqlite:///rows.db", "partition_by": "id", "partitions": 3},
    "duckdb-over-parquet": {"builder": "sql", "query": "SELECT * FROM 'rows.parquet'"},
    "delta": {"builder": "delta", "path": "events"},
    "iceberg": {"builder": "iceberg", "table": "shop.events", "catalog": {"uri": "sqlite:///catalog.db",
                                                                          "warehouse": "warehouse"}},
}


def _rows() -> pa.Table:
    ids = list(range(ROWS))
    return pa.table({"id": pa.array(ids, pa.int64()), "x": pa.array([i * 1.25 for i in ids], pa.float64()),
                     "name": pa.array([None if i % 11 == 0 else f"row {i} é" for i in ids], pa.string()),
                     "ids": pa.array([list(range(i % 4)) for i in ids], pa.list_(pa.int64())),
                     "label": pa.array([["ant", "bee", "cat"][i % 3] for i in ids], pa.string())})


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """The same rows as a DuckDB file, an SQLite file (without the list column), a Parquet file,
    a Delta table and an Iceberg table (each table in two writes: two data files), and a spec
    (`KIND.yaml`) of each."""
    here = tmp_path_factory.mktemp("sources")
    rows = _rows()
    parquet.write_table(rows, here / "rows.parquet", row_group_size=500)
    with duckdb.connect(str(here / "rows.duckdb")) as connection:
        connection.execute("CREATE TABLE rows AS SELECT * FROM rows")
    with sqlite3.connect(here / "rows.db") as connection:
        connection.execute("CREATE TABLE rows (id INTEGER, x REAL, name TEXT, label TEXT)")
        connection.executemany("INSERT INTO rows VALUES (?, ?, ?, ?)",
                               [(row["id"], row["x"], row["name"], row["label"]) for row in rows.to_pylist()])
    deltalake.write_deltalake(here / "events", rows.slice(0, 2000))
    deltalake.write_deltalake(here / "events", rows.slice(2000), mode="append")
    catalog = sql_catalog.SqlCatalog("default", uri=f"sqlite:///{here}/catalog.db", warehouse=f"file://{here}/warehouse")
    catalog.create_namespace("shop")
    table = catalog.create_table("shop.events", schema=rows.schema)
    table.append(rows.slice(0, 2000))
    table.append(rows.slice(2000))
    for kind, source in SOURCES.items():
        features = {name: value for name, value in FEATURES.items() if name != "ids" or "sqlite" not in kind}
        write_spec(here, {"name": "rows", "source": source, "features": features,
                          "splits": {"train": 0.7, "test": 0.3}, "output": {"shards": 2}}, name=f"{kind}.yaml")
    return here


# the local runner's files of each spec, built once a folder: the module's `folder` is made again when the
# shared Spark session's tests (run apart from the file's others) have torn it down, and the generated
# module names the folder it was built in
_LOCAL: dict[tuple[Path, str], dict[str, bytes]] = {}


def _same_as_local(folder: Path, kind: str, build: Callable[[Path, Path], None]) -> None:
    """`build(spec, out)` of KIND's spec makes the local runner's files, the snapshot recorded the
    same, every row once."""
    spec, out = folder / f"{kind}.yaml", folder / f"out-{kind}"
    if (folder, kind) not in _LOCAL:
        tb.build(spec, output=out, workers=2)
        _LOCAL[folder, kind] = files_of(out)
    shutil.rmtree(out, ignore_errors=True)
    build(spec, out)
    built = files_of(out)
    assert_same_files(_LOCAL[folder, kind], built)
    snapshot = json.loads(built["rows/1.0.0/tfrecord_builder.json"])["source_snapshots"]["*"]
    expected = {"delta": {"format": "delta", "version": 1}}.get(kind)
    if kind == "iceberg":
        current = sql_catalog.SqlCatalog("default", uri=f"sqlite:///{folder}/catalog.db").load_table("shop.events")
        expected = {"format": "iceberg", "table": "shop.events", "snapshot": current.current_snapshot().snapshot_id}
    assert snapshot == expected if expected else snapshot["rows"] == ROWS
    dataset = out / "rows" / "1.0.0"
    ids = sorted(int(record["id"]) for split in ("train", "test") for record in tb.read(dataset, split))
    assert ids == list(range(ROWS))  # every row once: each range (each data file) read by one task


@pytest.mark.beam
@pytest.mark.parametrize("kind", SOURCES)
def test_a_source_elsewhere_builds_the_same_bytes_on_beam(folder, kind):
    def build(spec: Path, out: Path) -> None:
        done = run_beam("build", str(spec), "--output", str(out), "--workers", "2", env=SMALL_TASKS)
        assert done.returncode == 0, done.stderr

    _same_as_local(folder, kind, build)


@pytest.mark.spark
@pytest.mark.parametrize("kind", SOURCES)
def test_a_source_elsewhere_builds_the_same_bytes_on_spark(folder, kind, spark):
    _same_as_local(folder, kind, lambda spec, out: tb.build(spec, output=out, runner="spark"))


FRAME_ON_BEAM = """
import sys
import pyarrow.parquet as parquet
import tfrecord_builder as tb
try:
    tb.build(sys.argv[1], source=parquet.read_table(sys.argv[2]), output=sys.argv[3], runner="beam",
             runner_options={"runner": "DataflowRunner"})
except tb.UsageError as error:
    print(error)
tb.build(sys.argv[1], source=parquet.read_table(sys.argv[2]), output=sys.argv[3], runner="beam", workers=2)
"""


@pytest.mark.beam
def test_a_frame_builds_the_same_bytes_on_beams_direct_runner_and_a_remote_runner_is_refused(folder, monkeypatch):
    """The frame's rows written as Arrow where the build begins are mapped by the DirectRunner's
    worker processes on this machine; a remote runner's workers are other machines."""
    spec = write_spec(folder, {"name": "rows", "features": FEATURES, "splits": {"train": 0.7, "test": 0.3},
                               "output": {"shards": 2}}, name="frame.yaml")
    out = folder / "out-frame"
    for name, value in SMALL_TASKS.items():  # the same tasks (statistics merge task by task): several
        monkeypatch.setenv(name, value)
    tb.build(spec, source=parquet.read_table(folder / "rows.parquet"), output=out, workers=2)
    local = files_of(out)
    shutil.rmtree(out)
    done = subprocess.run([str(BEAM_PYTHON), "-c", FRAME_ON_BEAM, str(spec), str(folder / "rows.parquet"), str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=600,
                          env={**os.environ, **SMALL_TASKS, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        "source=: a frame's rows are written to this machine's disk for the workers to map, and the "
        "DataflowRunner's workers are other machines; write the frame to Parquet in a bucket and name it in the "
        "spec (source: {builder: parquet, path: gs://...}), or run on the DirectRunner")
    assert_same_files(local, files_of(out))
