"""builder: sql over real DuckDB and SQLite files: values exact against the database's own reading,
shards byte-identical to the same rows built from Parquet, partitions, snapshots, bad input."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tfrecord_builder as tb
from tfrecord_builder.build.runners import local
from tfrecord_builder.builders.sources import source_builders
from tfrecord_builder.builders import sql as sql_module
from tfrecord_builder.builders.sql import SqlBuilder
from tfrecord_builder.spec.load import load_spec

from conftest import write_spec
from support.engines import stopped_before_metadata
from support.reading import built_as_from_parquet, files_of

ROWS = """
SELECT i AS id, (i - 100)::TINYINT AS small, (i * 3)::UINTEGER AS unsigned, (i * 7)::UBIGINT AS big,
       i * 1.25::DOUBLE AS x, (i / 4)::FLOAT AS y, i % 2 = 0 AS flag, 'row ' || i || ' é' AS name,
       ('\\x' || lpad(format('{:x}', i % 256), 2, '0'))::BLOB AS raw, [i, i + 1, i + 2] AS ids,
       DATE '2020-01-01' + i::INTEGER AS day, TIMESTAMPTZ '2021-03-04 05:06:07+02' + to_seconds(i) AS at,
       ('{"n": ' || i || '}')::JSON AS doc, CASE WHEN i % 5 = 0 THEN NULL ELSE i * 2 END AS gaps
FROM range(200) t(i)"""
FEATURES = {"small": {"dtype": "int64"}, "unsigned": {"dtype": "int64"}, "big": {"dtype": "int64"},
            "x": {"dtype": "float64"}, "y": {"dtype": "float32"}, "flag": {"dtype": "bool"},
            "name": {"dtype": "string"}, "raw": {"dtype": "bytes"}, "ids": {"dtype": "int64", "shape": [3]},
            "doc": {"dtype": "string"},
            "gaps": {"dtype": "int64", "default": -1}}


DUCKDB_TABLE = {"builder": "sql", "table": "rows", "connection": "duckdb:///../rows.duckdb"}


def _database(folder: Path) -> Path:
    path = folder / "rows.duckdb"
    with duckdb.connect(str(path)) as connection:
        connection.execute(f"CREATE TABLE rows AS {ROWS}")
    return path


def _records(info: tb.DatasetInfo, split: str = "train") -> list[dict]:
    return list(tb.read(info.path, split))


def test_every_type_exact_and_byte_identical_to_the_same_rows_from_parquet(tmp_path):
    database = _database(tmp_path)
    with duckdb.connect(str(database), read_only=True) as connection:
        expected = connection.sql("SELECT * FROM rows ORDER BY id").fetchall()
        columns = connection.sql("SELECT * FROM rows").columns
        pq.write_table(connection.sql("SELECT * FROM rows").to_arrow_table(), tmp_path / "rows.parquet")
    features = FEATURES | {"id": {"dtype": "int64"}}  # dates and times: the next test
    built = built_as_from_parquet(tmp_path, DUCKDB_TABLE, features)
    found = {int(record["id"]): record for record in _records(built)}
    assert len(found) == 200
    for row in expected:
        value = dict(zip(columns, row))
        record = found[value["id"]]
        for name in ("small", "unsigned", "big", "x", "flag"):
            assert record[name] == value[name], name
        assert record["y"] == np.float32(value["y"])
        assert record["name"].decode() == value["name"] and record["raw"] == value["raw"]
        assert record["ids"].tolist() == value["ids"]
        assert record["doc"].decode() == value["doc"]
        assert record["gaps"] == (-1 if value["gaps"] is None else value["gaps"])
    snapshot = json.loads((Path(built.path) / "tfrecord_builder.json").read_text())["source_snapshots"]
    assert snapshot["*"]["engine"] == "duckdb" and snapshot["*"]["rows"] == 200


def test_dates_and_times_with_zones_go_through_the_date_rules_as_from_parquet(tmp_path):
    """DATE and TIMESTAMPTZ into ISO 8601 text and counts since 1970 (a time with a zone in UTC),
    each value exact against DuckDB's own reading, the shards those of the same rows from Parquet."""
    import datetime

    database = _database(tmp_path)
    with duckdb.connect(str(database), read_only=True) as connection:
        expected = {row[0]: row[1:] for row in connection.sql('SELECT id, day, "at" FROM rows').fetchall()}
        pq.write_table(connection.sql("SELECT * FROM rows").to_arrow_table(), tmp_path / "rows.parquet")
    features = {"id": {"dtype": "int64"}, "day": {"dtype": "string"},
                "days": {"dtype": "int64", "source": "day", "time_unit": "days"},
                "at": {"dtype": "string"}, "at_s": {"dtype": "int64", "source": "at"}}
    built = built_as_from_parquet(tmp_path, DUCKDB_TABLE, features)
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    records = _records(built)
    assert len(records) == 200
    for record in records:
        day, at = expected[int(record["id"])]
        utc = at.astimezone(datetime.timezone.utc)
        assert record["day"].decode() == day.isoformat()
        assert record["days"] == (day - datetime.date(1970, 1, 1)).days
        assert record["at"].decode() == utc.replace(tzinfo=None).isoformat()
        assert record["at_s"] == int((utc - epoch).total_seconds())


def test_sqlite_values_exact_against_sqlite3(tmp_path):
    database = tmp_path / "rows.db"
    with sqlite3.connect(database) as connection:
        connection.execute("CREATE TABLE t (id INTEGER, x REAL, name TEXT, raw BLOB, gaps INTEGER)")
        connection.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)",
                               [(i, i / 3, f"n{i}", bytes([i % 256, 7]), None if i % 4 == 0 else -i) for i in range(300)])
    spec = write_spec(tmp_path, {"name": "s", "source": {"builder": "sql", "query": "SELECT * FROM t WHERE id < 250",
                                                         "connection": "sqlite:///rows.db", "key": "id"},
                                 "features": {"id": {"dtype": "int64"}, "x": {"dtype": "float64"},
                                              "name": {"dtype": "string"}, "raw": {"dtype": "bytes"},
                                              "gaps": {"dtype": "int64", "default": 0}}})
    info = tb.build(spec, output=tmp_path / "out")
    found = {int(record["id"]): record for record in _records(info)}
    with sqlite3.connect(database) as connection:
        rows = connection.execute("SELECT * FROM t WHERE id < 250").fetchall()
    assert sorted(found) == [row[0] for row in rows]
    for id_, x, name, raw, gaps in rows:
        record = found[id_]
        assert record["x"] == np.float32(x) and record["name"].decode() == name and record["raw"] == raw
        assert record["gaps"] == (0 if gaps is None else gaps)



def _wav(samples: np.ndarray, rate: int) -> bytes:
    """A 16-bit mono WAV file's bytes, written by the standard library's `wave`."""
    import io
    import wave

    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(rate)
        file.writeframes(samples.astype("<i2").tobytes())
    return buffer.getvalue()


def test_audio_kept_in_a_blob_gives_its_samples_exactly_and_a_cut_one_is_refused_naming_its_row(tmp_path):
    generator = np.random.default_rng(3)
    clips = {i: generator.integers(-32768, 32768, 800 + 100 * i).astype(np.int16) for i in range(1, 4)}
    database = tmp_path / "clips.db"
    with sqlite3.connect(database) as connection:
        connection.execute("CREATE TABLE clips (id INTEGER, clip BLOB)")
        connection.executemany("INSERT INTO clips VALUES (?, ?)", [(i, _wav(s, 8000)) for i, s in clips.items()])
    features = {"id": {"dtype": "int64"}, "clip": {"type": "audio", "sample_rate": 8000}}
    spec = write_spec(tmp_path, {"name": "clips", "features": features,
                                 "source": {"builder": "sql", "table": "clips", "connection": "sqlite:///clips.db",
                                            "key": "id"}})
    info = tb.build(spec, output=tmp_path / "out")
    found = {int(record["id"]): record["clip"] for record in _records(info)}
    assert sorted(found) == sorted(clips)
    for i, samples in clips.items():  # read back as float32 in [-1, 1): the 16-bit samples / 32768
        assert found[i].dtype == np.float32 and np.array_equal(found[i] * 32768, samples), i

    with sqlite3.connect(database) as connection:  # a WAV whose last 100 bytes of samples are gone
        connection.execute("INSERT INTO clips VALUES (9, ?)", (_wav(clips[1], 8000)[:-100],))
    result = subprocess.run([sys.executable, "-m", "tfrecord_builder", "build", str(spec), "--output",
                             str(tmp_path / "again")], capture_output=True, text=True)
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "row 4: feature `clip`" in result.stderr and "truncated" in result.stderr, result.stderr
    assert not (tmp_path / "again" / "clips" / "1.0.0").exists()

def _tasks_rows(spec_path: Path) -> list[list]:
    spec = load_spec(spec_path)
    [(split, builder)] = source_builders(spec)
    tasks = builder.tasks(split)
    return [[key for batch in builder.batches(split, ["id"], 17, task) for key in batch.columns["id"]]
            for task in tasks]


@pytest.mark.parametrize("engine", ["duckdb", "sqlite"])
def test_partitions_read_each_row_once_nulls_included(tmp_path, engine):
    ids = [None, None, *range(-5, 95), 1000, None]
    if engine == "duckdb":
        with duckdb.connect(str(tmp_path / "p.duckdb")) as connection:
            connection.execute("CREATE TABLE p (id BIGINT, v VARCHAR)")
            connection.executemany("INSERT INTO p VALUES (?, ?)", [(i, f"v{n}") for n, i in enumerate(ids)])
        connection_url = "duckdb:///p.duckdb"
    else:
        with sqlite3.connect(tmp_path / "p.db") as connection:
            connection.execute("CREATE TABLE p (id INTEGER, v TEXT)")
            connection.executemany("INSERT INTO p VALUES (?, ?)", [(i, f"v{n}") for n, i in enumerate(ids)])
        connection_url = "sqlite:///p.db"
    spec = write_spec(tmp_path, {"name": "p", "source": {"builder": "sql", "table": "p", "connection": connection_url,
                                                         "partition_by": "id", "partitions": 4},
                                 "features": {"id": {"dtype": "int64", "default": 0}}})
    parts = _tasks_rows(spec)
    assert len(parts) == 5  # 4 ranges of equal width and the NULLs
    assert parts[0] == list(range(-5, 95)) and parts[3] == [1000]  # the first and last ranges are open-ended
    together = [value for part in parts for value in part]
    assert sorted(together, key=lambda v: (v is None, v)) == sorted(ids, key=lambda v: (v is None, v))
    assert parts[-1] == [None, None, None]


def test_a_resumed_build_whose_rows_changed_is_refused(tmp_path, monkeypatch):
    with duckdb.connect(str(tmp_path / "big.duckdb")) as connection:
        connection.execute("CREATE TABLE big AS SELECT i AS id, repeat('x', 60) || i AS text FROM range(150000) t(i)")
    spec = write_spec(tmp_path, {"name": "big", "output": {"shards": 12},
                                 "source": {"builder": "sql", "table": "big", "connection": "big.duckdb"},
                                 "features": {"id": {"dtype": "int64"}, "text": {"dtype": "string"}}})
    stopped_before_metadata(monkeypatch, spec, tmp_path / "out")
    with duckdb.connect(str(tmp_path / "big.duckdb")) as connection:
        connection.execute("UPDATE big SET text = 'changed' WHERE id = 7")
    result = subprocess.run([sys.executable, "-m", "tfrecord_builder", "build", str(spec), "--output",
                             str(tmp_path / "out"), "--resume"], capture_output=True, text=True)
    assert result.returncode != 0 and result.stderr.count("\n") == 1, result.stderr
    assert "--resume: the source changed since the build began (*: " in result.stderr
    assert "build again without --resume" in result.stderr
    with duckdb.connect(str(tmp_path / "big.duckdb")) as connection:
        connection.execute("UPDATE big SET text = repeat('x', 60) || id WHERE id = 7")
    resumed = tb.build(spec, output=tmp_path / "out", resume=True, workers=1)  # the same rows again: resumed
    assert resumed.splits["train"].num_examples == 150000


@pytest.mark.parametrize("source, features, expected", [
    ({"query": "SELECT * FROM nowhere"}, {"a": {"dtype": "int64"}},
     "source.query: the database refused the query: Catalog Error: Table with name nowhere does not exist"),
    ({"query": "SELECT * FROM 'missing.parquet'"}, {"a": {"dtype": "int64"}}, "missing.parquet"),
    ({"query": "SELECT 1 AS a\nFROM WHERE"}, {"a": {"dtype": "int64"}}, "(query line 2:"),
    ({"query": "SELECT 1 AS a"}, {"b": {"dtype": "int64"}}, "query: feature `b`: no column `b` in the source"),
    ({"query": "SELECT 1.5 AS a"}, {"a": {"dtype": "float64"}}, "column `a` (DECIMAL(2,1)): a decimal"),
    ({"query": "SELECT INTERVAL 1 DAY AS a"}, {"a": {"dtype": "int64"}}, "column `a` (INTERVAL)"),
    ({"query": "SELECT 1::HUGEINT AS a"}, {"a": {"dtype": "int64"}}, "column `a` (HUGEINT): no exact mapping"),
    ({"query": "SELECT 18446744073709551615::UBIGINT AS a"}, {"a": {"dtype": "int64"}},
     "query, row 1: column `a` (UBIGINT): 18446744073709551615 is past the largest int64"),
    ({"query": "SELECT 1 AS a", "connection": "mysql://me:secret@db/x"}, {"a": {"dtype": "int64"}},
     "received a mysql: connection (mysql://me:***@db/x); expected duckdb:///path.duckdb"),
    ({"query": "SELECT 1 AS a", "connection": "sqlite:///none.db"}, {"a": {"dtype": "int64"}},
     "none.db: no such database file"),
    ({"query": "SELECT 1 AS a", "partition_by": "a", "partitions": 0}, {"a": {"dtype": "int64"}},
     "source.partitions: expected a whole number of ranges, 1 or more, received 0"),
])
def test_bad_input_is_one_line(tmp_path, source, features, expected):
    spec = write_spec(tmp_path, {"name": "bad", "source": {"builder": "sql", **source}, "features": features})
    result = subprocess.run([sys.executable, "-m", "tfrecord_builder", "build", str(spec), "--output",
                             str(tmp_path / "out")], capture_output=True, text=True)
    assert result.returncode in (1, 2) and result.stderr.count("\n") == 1, result.stderr
    assert expected in result.stderr and "secret" not in result.stderr


def test_decimals_read_as_the_spec_says(tmp_path):
    for rule, dtype, expected in (("float", "float64", 12.25), ("text", "string", b"12.25")):
        spec = write_spec(tmp_path / rule, {"name": "d", "source": {"builder": "sql", "decimals": rule,
                                                                    "query": "SELECT 12.25::DECIMAL(6,2) AS a"},
                                            "features": {"a": {"dtype": dtype}}})
        [record] = _records(tb.build(spec, output=tmp_path / rule / "out"))
        assert record["a"] == expected


def test_files_in_the_query_are_read_from_the_spec_folder(tmp_path):
    (tmp_path / "data").mkdir()
    with duckdb.connect() as connection:
        connection.execute(f"COPY (SELECT i AS a FROM range(5) t(i)) TO '{tmp_path / 'data' / 'a.parquet'}'")
    spec = write_spec(tmp_path, {"name": "f", "source": {"builder": "sql", "query": "SELECT * FROM 'data/a.parquet'"},
                                 "features": {"a": {"dtype": "int64"}}})
    info = tb.build(spec, output=tmp_path / "out")
    assert sorted(int(record["a"]) for record in _records(info)) == [0, 1, 2, 3, 4]


EDGES = """
SELECT i AS id, (CASE WHEN i = 0 THEN 18014399583223809 ELSE i * 1000003 END)::BIGINT AS big,
       (i - 50)::INTEGER AS mid, (i / 3)::FLOAT AS y, i / 7 AS x, CASE WHEN i % 4 = 0 THEN '' ELSE 'é ' || i END AS name,
       [i, i + 1] AS ids, [i / 2, i / 5] AS floats, CASE WHEN i % 5 = 0 THEN NULL ELSE i END AS gaps,
       CASE WHEN i % 6 = 0 THEN NULL ELSE 'g' || i END AS text_gaps
FROM range(120) t(i)"""


def test_numbers_and_text_taken_at_once_give_the_bytes_of_the_same_rows_from_parquet(tmp_path):
    # each column to a feature of its own kind and of another: the integer past 2**53 into a float
    # feature takes the careful path (Arrow refuses that cast), as from Parquet
    with duckdb.connect() as connection:
        pq.write_table(connection.sql(EDGES).to_arrow_table(), tmp_path / "rows.parquet")
    features = {"id": {"dtype": "int64"}, "big": {"dtype": "int64"}, "big_f": {"dtype": "float32", "source": "big"},
                "mid": {"dtype": "int64"}, "mid_f": {"dtype": "float64", "source": "mid"},
                "y": {"dtype": "float64"}, "x": {"dtype": "float32"}, "name": {"dtype": "string"},
                "ids": {"dtype": "int64", "shape": [2]}, "floats": {"dtype": "float32", "shape": [None]},
                "gaps": {"dtype": "int64", "default": -1}, "text_gaps": {"dtype": "string", "default": "none"}}
    built = built_as_from_parquet(tmp_path, {"builder": "sql", "query": "SELECT * FROM '../rows.parquet'"}, features)
    found = {int(record["id"]): record for record in _records(built)}
    assert found[0]["big"] == 18014399583223809 and found[0]["big_f"] == np.float32(18014399583223809)
    assert found[4]["name"] == b"" and found[5]["name"] == "é 5".encode() and found[6]["text_gaps"] == b"none"


def test_a_query_batch_is_sent_to_the_worker_that_encodes_it_as_its_arrow_rows(tmp_path):
    import pickle

    from tfrecord_builder.builders.base import PendingBatch, parsed_batch
    from tfrecord_builder.features.cells import TypedValues

    with duckdb.connect() as connection:
        expected = connection.sql(EDGES + " ORDER BY id").fetchall()
        names = connection.sql(EDGES).columns
        pq.write_table(connection.sql(EDGES).to_arrow_table(), tmp_path / "rows.parquet")
    spec = write_spec(tmp_path, {"name": "p", "source": {"builder": "sql", "query": "SELECT * FROM 'rows.parquet'",
                                                         "key": "id"},
                                 "features": {name: {"dtype": "int64"} for name in ("id", "mid")}})
    [(split, builder)] = source_builders(load_spec(spec))
    pending = list(builder.encoding_batches(split, names, 50))
    assert pending and all(isinstance(batch, PendingBatch) for batch in pending)
    batches = [parsed_batch(pickle.loads(pickle.dumps(batch))) for batch in pending]  # as a worker gets it
    assert all(isinstance(batch.columns[name], TypedValues) for batch in batches for name in ("id", "big", "x", "name"))
    rows = sorted(zip(*[[value for batch in batches for value in batch.columns[name]] for name in names]))
    assert rows == expected
    assert [key for batch in batches for key in batch.keys] == [str(row[0]) for row in rows]


def _noting_reads(reads: Path, monkeypatch) -> Path:
    """The folder `reads`, where each range a SqlBuilder reads leaves a file `PID-TASK`: which
    process read which range (workers are forked, so a file, not a list)."""
    reads.mkdir()
    original = SqlBuilder.read_batches

    def noted(self, needed, batch_size, task=None):
        (reads / f"{os.getpid()}-{task}").write_text("")
        return original(self, needed, batch_size, task)

    monkeypatch.setattr(SqlBuilder, "read_batches", noted)
    return reads


@pytest.mark.parametrize("engine", ["duckdb", "sqlite"])
def test_with_workers_each_range_is_read_once_by_a_worker_byte_identical(tmp_path, engine, monkeypatch):
    """The local runner's workers read the ranges of `partition_by` themselves (each range once,
    none by the build's process; each worker opens the database once for all its ranges), and the
    shards are those of the same rows from Parquet."""
    rows = [(i, f"row {i}" if i % 7 else None, i * 0.5) for i in range(-300, 20000)] + [(None, "no id", 1.0)]
    table = pa.table({"id": pa.array([r[0] for r in rows], pa.int64()), "v": pa.array([r[1] for r in rows]),
                      "x": pa.array([r[2] for r in rows], pa.float64())})
    if engine == "duckdb":
        with duckdb.connect(str(tmp_path / "p.duckdb")) as connection:
            connection.execute("CREATE TABLE p (id BIGINT, v VARCHAR, x DOUBLE)")
            connection.register("given", table)  # one insert of the rows (executemany: a statement a row, ~10 s)
            connection.execute("INSERT INTO p SELECT id, v, x FROM given")
        connection_url = "duckdb:///../p.duckdb"
    else:
        with sqlite3.connect(tmp_path / "p.db") as connection:
            connection.execute("CREATE TABLE p (id INTEGER, v TEXT, x REAL)")
            connection.executemany("INSERT INTO p VALUES (?, ?, ?)", rows)
        connection_url = "sqlite:///../p.db"
    pq.write_table(table, tmp_path / "rows.parquet")
    reads = _noting_reads(tmp_path / "reads", monkeypatch)
    opens = tmp_path / "opens"
    opens.mkdir()
    original_opened = sql_module.opened

    def opened(*args):  # which process opened the database how often
        (opens / f"{os.getpid()}-{len(list(opens.iterdir()))}").write_text("")
        return original_opened(*args)

    monkeypatch.setattr(sql_module, "opened", opened)
    if engine == "sqlite":  # a worker's run of a task's records written every 64 kB: runs of part of a task
        monkeypatch.setattr(local, "SPILL_BYTES", 64 * 1024)
    features = {"id": {"dtype": "int64", "default": 0}, "v": {"dtype": "string", "default": ""},
                "x": {"dtype": "float64"}}
    source = {"builder": "sql", "table": "p", "connection": connection_url, "partition_by": "id", "partitions": 4}
    sql = write_spec(tmp_path / "sql", {"name": "t", "source": source, "features": features})
    built = tb.build(sql, output=tmp_path / "a", workers=2)
    by_process: dict[str, list[str]] = {}
    for read in reads.iterdir():
        process, task = read.name.split("-", 1)
        by_process.setdefault(process, []).append(task)
    ranges = sorted(task for tasks in by_process.values() for task in tasks if task != "None")
    assert len(ranges) == 5 and len(set(ranges)) == 5  # 4 ranges and the NULLs, each read once
    assert str(os.getpid()) not in by_process  # the build's process read none of them
    opened_by = [read.name.split("-")[0] for read in opens.iterdir()]
    workers = set(by_process)
    assert {process: opened_by.count(process) for process in workers} == {process: 1 for process in workers}
    reference = tb.build(write_spec(tmp_path / "pq", {"name": "t", "source": {"builder": "parquet",
                                                                              "path": "../rows.parquet"},
                                                      "features": features}), output=tmp_path / "b")
    shards = {name: data for name, data in files_of(built.path).items() if ".tfrecord" in name}
    assert shards and shards == {name: data for name, data in files_of(reference.path).items()
                                 if ".tfrecord" in name}
    found = sorted((record["id"], record["v"], record["x"]) for record in _records(built)
                   for record in [{k: v.item() if hasattr(v, "item") else v for k, v in record.items()}])
    assert found == sorted((i if i is not None else 0, (v or "").encode(), x) for i, v, x in rows)


def test_with_workers_a_bad_value_in_a_later_range_is_one_line(tmp_path):
    with duckdb.connect(str(tmp_path / "p.duckdb")) as connection:
        connection.execute("CREATE TABLE p AS SELECT i AS id, (CASE WHEN i = 15000 THEN 18446744073709551615 "
                           "ELSE i END)::UBIGINT AS big FROM range(20000) t(i)")
    spec = write_spec(tmp_path, {"name": "p", "source": {"builder": "sql", "table": "p", "connection": "p.duckdb",
                                                         "partition_by": "id", "partitions": 4},
                                 "features": {"big": {"dtype": "int64"}}})
    result = subprocess.run([sys.executable, "-m", "tfrecord_builder", "build", str(spec), "--output",
                             str(tmp_path / "out"), "--workers", "2"], capture_output=True, text=True)
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "table p (15000 <= id), row 1: column `big` (UBIGINT): 18446744073709551615 is past the largest int64" \
        in result.stderr


def test_a_resumed_build_reads_the_ranges_after_its_checkpoint_in_workers(tmp_path, monkeypatch):
    """`--resume` of a build with `partition_by` stopped after a checkpoint: the checkpointed ranges
    are read again by the build's process (their keys checked, not encoded), the ranges after them
    by the workers, each once, and the shards are the ones a build that didn't stop writes."""
    with duckdb.connect(str(tmp_path / "p.duckdb")) as connection:
        connection.execute("CREATE TABLE p AS SELECT i AS id, 'row ' || i AS v FROM range(20000) t(i)")
    spec = write_spec(tmp_path, {"name": "p", "output": {"shards": 3},
                                 "source": {"builder": "sql", "table": "p", "connection": "p.duckdb",
                                            "partition_by": "id", "partitions": 6},
                                 "features": {"id": {"dtype": "int64"}, "v": {"dtype": "string"}}})
    reference = tb.build(spec, output=tmp_path / "reference", workers=2)
    from tfrecord_builder.write import checkpoint

    saves = []
    original_save = local.CheckpointedEncoding.save

    def save_then_stop(self):  # a checkpoint after every range a worker returns; stopped after the second
        original_save(self)
        saves.append(self.state.batches)
        if len(saves) == 2:
            raise KeyboardInterrupt
    with monkeypatch.context() as patched:
        patched.setattr(checkpoint, "INTERVAL", 0)
        patched.setattr(local.CheckpointedEncoding, "save", save_then_stop)
        with pytest.raises(KeyboardInterrupt):
            tb.build(spec, output=tmp_path / "out", workers=2)
    reads = _noting_reads(tmp_path / "reads", monkeypatch)
    resumed = tb.build(spec, output=tmp_path / "out", resume=True, workers=2)
    here = sorted(read.name.split("-", 1)[1] for read in reads.iterdir() if read.name.startswith(f"{os.getpid()}-"))
    elsewhere = sorted(read.name.split("-", 1)[1] for read in reads.iterdir()
                       if not read.name.startswith(f"{os.getpid()}-"))
    assert len(here) == 2 and len(elsewhere) == 5 and not set(here) & set(elsewhere)  # 6 ranges and the NULLs
    assert resumed.to_dict()["splits"] == reference.to_dict()["splits"]  # every shard's sha256
    shards = {name: data for name, data in files_of(resumed.path).items() if ".tfrecord" in name}
    assert shards == {name: data for name, data in files_of(reference.path).items() if ".tfrecord" in name}
