"""builder: sql over a real PostgreSQL server (tests/support/postgres_server.py): every type's
values exact against psycopg's reading of the same rows, shards byte-identical to the same rows
from Parquet, partitions, the snapshot and a refused resume, passwords from the environment and
~/.pgpass and never written, bad input in one line. One server for the session, tables per module."""
from __future__ import annotations

import datetime
import io
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from PIL import Image

import tfrecord_builder as tb
from tfrecord_builder.builders.sources import source_builders
from tfrecord_builder.spec.load import load_spec

from conftest import write_spec
from support.engines import stopped_before_metadata
from support.cli import assert_no_dataset_info
from support.reading import built_as_from_parquet, files_of

pytestmark = pytest.mark.server

ROWS = 300
TABLE = f"""
CREATE TABLE every AS
SELECT i AS id, (i - 100)::smallint AS small, (i * 3)::integer AS mid, (i::bigint * 1000000007) AS big,
       (i / 4.0)::real AS r, (i * 1.25)::double precision AS d, (i * 1.5 + 0.01)::numeric(10, 2) AS price,
       i % 2 = 0 AS flag, 'row ' || i || ' é' AS name, ('v' || i)::varchar(8) AS short, 'ab'::char(4) AS fixed,
       decode(lpad(to_hex(i % 256), 2, '0') || 'ff', 'hex') AS raw, ARRAY[i, i + 1, i + 2] AS ids,
       ARRAY['a' || i, 'b'] AS words, ARRAY[i * 0.5::float8] AS floats,
       DATE '2020-01-01' + i AS day, TIMESTAMP '2021-03-04 05:06:07.123456' + i * INTERVAL '1 hour' AS seen,
       TIMESTAMPTZ '2021-03-04 05:06:07+02' + i * INTERVAL '1 second' AS at,
       ('{{"n": ' || i || '}}')::json AS doc, ('{{"m":  ' || i || '}}')::jsonb AS docb,
       md5(i::text)::uuid AS uid, CASE WHEN i % 5 = 0 THEN NULL ELSE i * 2 END AS gaps,
       CASE WHEN i % 7 = 0 THEN NULL ELSE 'g' || i END AS text_gaps
FROM generate_series(0, {ROWS - 1}) AS t(i)"""
FEATURES = {"id": {"dtype": "int64"}, "small": {"dtype": "int64"}, "mid": {"dtype": "int64"}, "big": {"dtype": "int64"},
            "r": {"dtype": "float32"}, "d": {"dtype": "float64"}, "price": {"dtype": "float64"},
            "flag": {"dtype": "bool"}, "name": {"dtype": "string"}, "short": {"dtype": "string"},
            "fixed": {"dtype": "string"}, "raw": {"dtype": "bytes"}, "ids": {"dtype": "int64", "shape": [3]},
            "words": {"dtype": "string", "shape": [2]}, "floats": {"dtype": "float64", "shape": [1]},
            "day": {"dtype": "string"}, "days": {"dtype": "int64", "source": "day", "time_unit": "days"},
            "seen": {"dtype": "string"}, "at": {"dtype": "string"}, "at_s": {"dtype": "int64", "source": "at"},
            "doc": {"dtype": "string"}, "docb": {"dtype": "string"}, "uid": {"dtype": "string"},
            "gaps": {"dtype": "int64", "default": -1}, "text_gaps": {"dtype": "string", "default": "none"}}
# the same rows' Arrow types, as the Parquet file of the reference build holds them
ARROW = {"id": pa.int32(), "small": pa.int16(), "mid": pa.int32(), "big": pa.int64(), "r": pa.float32(),
         "d": pa.float64(), "price": pa.float64(), "flag": pa.bool_(), "name": pa.string(), "short": pa.string(),
         "fixed": pa.string(), "raw": pa.binary(), "ids": pa.list_(pa.int32()), "words": pa.list_(pa.string()),
         "floats": pa.list_(pa.float64()), "day": pa.date32(), "seen": pa.timestamp("us"),
         "at": pa.timestamp("us", tz="UTC"), "doc": pa.string(), "docb": pa.string(), "uid": pa.string(),
         "gaps": pa.int32(), "text_gaps": pa.string()}


def _png(value: int) -> bytes:
    out = io.BytesIO()
    Image.fromarray(np.full((3, 4, 3), value, dtype=np.uint8)).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture(scope="module")
def tables(postgres):
    """The tables of these tests, made once: `every` (each type), `parts` (ids with NULLs), `pictures`."""
    with postgres.connect() as connection:
        for name in ("every", "parts", "pictures", "big", "odd"):
            connection.execute(f"DROP TABLE IF EXISTS {name}")
        connection.execute(TABLE)
        connection.execute("CREATE TABLE parts (id bigint, v text)")
        ids = [None, None, *range(-5, 95), 1000, None]
        with connection.cursor() as cursor:
            cursor.executemany("INSERT INTO parts VALUES (%s, %s)", [(i, f"v{n}") for n, i in enumerate(ids)])
            connection.execute("CREATE TABLE pictures (id int, picture bytea)")
            cursor.executemany("INSERT INTO pictures VALUES (%s, %s)", [(i, _png(i * 40)) for i in range(5)])
        connection.execute("CREATE TABLE big AS SELECT i AS id, repeat('x', 60) || i AS text "
                           "FROM generate_series(0, 29999) AS t(i)")
        connection.execute("CREATE TABLE odd AS SELECT 1 AS id, INTERVAL '1 day' AS span, 3.5::money AS cash, "
                           "TIME '01:02' AS clock, ARRAY[[1, 2], [3, 4]] AS grid, '1.2.3.4'::inet AS address, "
                           "2.5::numeric AS amount")
    return ids


def _source(postgres, **keys) -> dict:
    return {"builder": "sql", "connection": postgres.url(), **keys}


def _read(postgres, query: str) -> list[tuple]:
    with postgres.connect() as connection:
        return connection.execute(query).fetchall()


def test_every_type_exact_and_byte_identical_to_the_same_rows_from_parquet(postgres, tables, tmp_path):
    columns = list(ARROW)
    select = ", ".join(f"{name}::text" if name in ("doc", "docb", "uid") else
                       "price::float8" if name == "price" else name for name in columns)
    rows = _read(postgres, f"SELECT {select} FROM every ORDER BY id")
    # the reference: psycopg's values, written to Parquet with the types the server's columns have
    pq.write_table(pa.table({name: pa.array([row[index] for row in rows], type=ARROW[name])
                             for index, name in enumerate(columns)}), tmp_path / "rows.parquet")
    built = built_as_from_parquet(tmp_path, _source(postgres, table="every", decimals="float"), FEATURES)
    found = {int(record["id"]): record for record in tb.read(built.path, "train")}
    assert sorted(found) == list(range(ROWS))
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    for row in rows:
        value = dict(zip(columns, row))
        record = found[value["id"]]
        for name in ("small", "mid", "big", "flag"):
            assert record[name] == value[name], name
        for name in ("r", "d", "price"):  # float64 features are stored as float32
            assert record[name] == np.float32(value[name]), name
        for name in ("name", "short", "fixed", "doc", "docb", "uid"):
            assert record[name].decode() == value[name], name
        assert record["fixed"] == b"ab  "  # char(4) as the server holds it, blank-padded
        assert record["raw"] == value["raw"]
        assert record["ids"].tolist() == value["ids"] and [word.decode() for word in record["words"]] == value["words"]
        assert record["floats"].tolist() == [np.float32(x) for x in value["floats"]]
        assert record["day"].decode() == value["day"].isoformat()
        assert record["days"] == (value["day"] - datetime.date(1970, 1, 1)).days
        assert record["seen"].decode() == value["seen"].isoformat()
        utc = value["at"].astimezone(datetime.timezone.utc)
        assert record["at"].decode() == utc.replace(tzinfo=None).isoformat()
        assert record["at_s"] == int((utc - epoch).total_seconds())
        assert record["gaps"] == (-1 if value["gaps"] is None else value["gaps"])
        assert record["text_gaps"].decode() == ("none" if value["text_gaps"] is None else value["text_gaps"])
    metadata = json.loads((Path(built.path) / "tfrecord_builder.json").read_text())
    snapshot = metadata["source_snapshots"]["*"]
    assert snapshot["engine"] == "postgresql" and snapshot["rows"] == ROWS and len(snapshot["keys_sha256"]) == 64
    assert metadata["spec"]["source"]["connection"] == postgres.url(password=False) + "?connect_timeout=10" \
        or metadata["spec"]["source"]["connection"] == postgres.url(password=False)


def test_decimals_as_text_are_the_servers_digits(postgres, tables, tmp_path):
    spec = write_spec(tmp_path, {"name": "d", "source": _source(postgres, query="SELECT id, price FROM every",
                                                                 decimals="text"),
                                 "features": {"id": {"dtype": "int64"}, "price": {"dtype": "string"}}})
    expected = dict(_read(postgres, "SELECT id, price::text FROM every"))
    found = {int(record["id"]): record["price"].decode() for record in tb.read(tb.build(spec, output=tmp_path / "o").path,
                                                                               "train")}
    assert found == expected and found[1] == "1.51"


def test_bytea_as_png_images(postgres, tables, tmp_path):
    spec = write_spec(tmp_path, {"name": "p", "source": _source(postgres, table="pictures"),
                                 "features": {"id": {"dtype": "int64"}, "picture": {"type": "image"}}})
    records = {int(record["id"]): record for record in tb.read(tb.build(spec, output=tmp_path / "o").path, "train")}
    for id_, data in _read(postgres, "SELECT id, picture FROM pictures"):
        assert records[id_]["picture"].tolist() == np.asarray(Image.open(io.BytesIO(data))).tolist()


def _tasks_rows(spec_path: Path) -> list[list]:
    spec = load_spec(spec_path)
    [(split, builder)] = source_builders(spec)
    return [[key for batch in builder.batches(split, ["id"], 17, task) for key in batch.columns["id"]]
            for task in builder.tasks(split)]


def test_partitions_read_each_row_once_nulls_included(postgres, tables, tmp_path):
    ids = tables
    spec = write_spec(tmp_path, {"name": "p", "source": _source(postgres, table="parts", partition_by="id",
                                                                partitions=4),
                                 "features": {"id": {"dtype": "int64", "default": 0}, "v": {"dtype": "string"}}})
    parts = _tasks_rows(spec)
    assert len(parts) == 5 and parts[0] == list(range(-5, 95)) and parts[3] == [1000] and parts[-1] == [None] * 3
    together = sorted((value for part in parts for value in part), key=lambda v: (v is None, v))
    assert together == sorted(ids, key=lambda v: (v is None, v))
    built = tb.build(spec, output=tmp_path / "o", workers=2)
    assert sorted(record["v"].decode() for record in tb.read(built.path, "train")) == \
        sorted(v for (v,) in _read(postgres, "SELECT v FROM parts"))


def test_a_resumed_build_whose_rows_changed_is_refused(postgres, tables, tmp_path, monkeypatch):
    spec = write_spec(tmp_path, {"name": "big", "output": {"shards": 6},
                                 "source": _source(postgres, table="big", key="id"),
                                 "features": {"id": {"dtype": "int64"}, "text": {"dtype": "string"}}})
    stopped_before_metadata(monkeypatch, spec, tmp_path / "out")
    with postgres.connect() as connection:
        connection.execute("UPDATE big SET id = 1000000 WHERE id = 7")
    try:
        result = subprocess.run([sys.executable, "-m", "tfrecord_builder", "build", str(spec), "--output",
                                 str(tmp_path / "out"), "--resume"], capture_output=True, text=True)
    finally:
        with postgres.connect() as connection:
            connection.execute("UPDATE big SET id = 7 WHERE id = 1000000")
    assert result.returncode != 0 and result.stderr.count("\n") == 1, result.stderr
    assert "--resume: the source changed since the build began (*: " in result.stderr
    assert postgres.password not in result.stderr
    resumed = tb.build(spec, output=tmp_path / "out", resume=True, workers=1)  # the same rows again: resumed
    assert resumed.splits["train"].num_examples == 30000


def _cli_build(spec: Path, output: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tfrecord_builder", "build", str(spec), "--output", str(output)],
                          capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=120)


def _dataset(output: Path) -> Path:
    [info] = output.rglob("dataset_info.json")
    return info.parent


def _no_password_written(folder: Path, password: str) -> None:
    for name, data in files_of(folder).items():
        assert password.encode() not in data, name


@pytest.mark.parametrize("how", ["PGPASSWORD", "pgpass"])
def test_the_password_from_the_environment_or_pgpass_and_never_written(postgres, tables, tmp_path, how):
    url = postgres.url(password=False)
    if how == "PGPASSWORD":
        env = {"PGPASSWORD": postgres.password}
    else:
        (tmp_path / "pgpass").write_text(f"{postgres.host}:{postgres.port}:*:{postgres.user}:{postgres.password}\n")
        (tmp_path / "pgpass").chmod(0o600)
        env = {"PGPASSFILE": str(tmp_path / "pgpass")}
    spec = write_spec(tmp_path / "spec", {"name": "w", "source": {"builder": "sql", "connection": url,
                                                                   "query": "SELECT id, v FROM parts WHERE id < 10"},
                                          "features": {"id": {"dtype": "int64"}, "v": {"dtype": "string"}}})
    result = _cli_build(spec, tmp_path / "out", env)
    assert result.returncode == 0, result.stderr
    assert sorted(int(record["id"]) for record in tb.read(str(_dataset(tmp_path / "out")), "train")) == list(range(-5, 10))
    _no_password_written(tmp_path / "out", postgres.password)
    assert postgres.password not in result.stdout + result.stderr


def test_a_wrong_password_names_user_host_and_database_never_the_password(postgres, tables, tmp_path):
    wrong = "not-the-Password-123"
    url = postgres.url(password=False).replace(f"{postgres.user}@", f"{postgres.user}:{wrong}@")
    spec = write_spec(tmp_path / "spec", {"name": "w", "source": {"builder": "sql", "connection": url, "table": "parts"},
                                          "features": {"id": {"dtype": "int64"}}})
    result = _cli_build(spec, tmp_path / "out", {"PGPASSWORD": "", "PGPASSFILE": str(tmp_path / "none")})
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert f"postgresql://{postgres.user}@{postgres.host}:{postgres.port}/{postgres.database}" in result.stderr
    assert "password authentication failed" in result.stderr
    assert wrong not in result.stderr + result.stdout
    assert_no_dataset_info(tmp_path / "out")


@pytest.fixture
def silent_server():
    """A socket that takes connections and never says a word (a server hung, a firewall's black hole)."""
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(8)
        accepted: list[socket.socket] = []
        stop = threading.Event()

        def take() -> None:
            listening.settimeout(0.2)
            while not stop.is_set():
                try:
                    accepted.append(listening.accept()[0])
                except OSError:
                    pass
        taking = threading.Thread(target=take, daemon=True)
        taking.start()
        yield listening.getsockname()[1]
        stop.set()
        taking.join()
        for connection in accepted:
            connection.close()


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("where", ["closed", "silent"])
def test_a_server_that_does_not_answer_is_said_in_one_line(tmp_path, where, request):
    port = request.getfixturevalue("silent_server") if where == "silent" else _closed_port()
    spec = write_spec(tmp_path, {"name": "n", "source": {"builder": "sql", "table": "t",
                                                         "connection": f"postgresql://me:hush@127.0.0.1:{port}/db"},
                                 "features": {"id": {"dtype": "int64"}}})
    result = _cli_build(spec, tmp_path / "out")  # libpq's connect_timeout (10 s): the timeout here is a bound
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert f"postgresql://me@127.0.0.1:{port}/db" in result.stderr and "hush" not in result.stderr
    assert ("timeout" in result.stderr) if where == "silent" else ("Connection refused" in result.stderr)
    assert_no_dataset_info(tmp_path / "out")


@pytest.mark.parametrize("keys, features, expected", [
    ({"query": "SELECT id\nFROM every WHER id > 1"}, {"id": {"dtype": "int64"}},
     'source.query: the database refused the query: syntax error at or near "id" (query line 2)'),
    ({"table": "nowhere"}, {"id": {"dtype": "int64"}}, 'relation "nowhere" does not exist'),
    ({"table": "odd"}, {"span": {"dtype": "int64"}}, "column `span` (interval): no exact mapping"),
    ({"table": "odd"}, {"cash": {"dtype": "int64"}}, "column `cash` (money): no exact mapping"),
    ({"table": "odd"}, {"clock": {"dtype": "int64"}}, "column `clock` (time): no exact mapping"),
    ({"table": "odd"}, {"address": {"dtype": "string"}}, "column `address` (inet): no exact mapping"),
    ({"table": "odd"}, {"amount": {"dtype": "float64"}}, "column `amount` (numeric): a decimal has no exact mapping"),
    ({"table": "odd"}, {"grid": {"dtype": "int64", "shape": [4]}},
     "table odd, row 1: column `grid` (int4[]): a 2-dimensional array"),
])
def test_bad_input_is_one_line(postgres, tables, tmp_path, keys, features, expected):
    spec = write_spec(tmp_path, {"name": "bad", "source": _source(postgres, **keys), "features": features})
    result = _cli_build(spec, tmp_path / "out")
    assert result.returncode in (1, 2) and result.stderr.count("\n") == 1, result.stderr
    assert expected in result.stderr and postgres.password not in result.stderr
    assert_no_dataset_info(tmp_path / "out")


def test_infer_reads_a_table_of_the_server_as_the_same_rows_in_parquet(postgres, tables, tmp_path, monkeypatch):
    """`infer URL --table`: the features guessed as for the same rows in a Parquet file, the source
    the server's table; the spec builds as written. A URL with a password is refused (the spec
    would keep it)."""
    monkeypatch.setenv("PGPASSWORD", postgres.password)
    spec_path = tmp_path / "parts.yaml"
    inferred = yaml.safe_load(tb.infer(postgres.url(password=False), spec_path, table="parts"))
    rows = _read(postgres, "SELECT id, v FROM parts")
    pq.write_table(pa.table({"id": pa.array([row[0] for row in rows], pa.int64()),
                             "v": pa.array([row[1] for row in rows], pa.string())}), tmp_path / "parts.parquet")
    from_parquet = yaml.safe_load(tb.infer(tmp_path / "parts.parquet", tmp_path / "p.yaml"))
    guessed = {key: value for key, value in from_parquet["source"].items() if key not in ("builder", "path")}
    assert inferred["source"] == {"builder": "sql", "connection": postgres.url(password=False), "table": "parts",
                                  **guessed}  # (the key column guessed alike)
    assert inferred["features"] == from_parquet["features"]
    spec_path.write_text(yaml.safe_dump(inferred))
    info = tb.build(spec_path, output=tmp_path / "out")
    assert sum(info.splits[split].num_examples for split in info.splits) == len(rows)
    with pytest.raises(tb.UsageError) as error:
        tb.infer(postgres.url(), tmp_path / "x.yaml", table="parts")
    assert postgres.password not in str(error.value) and "\n" not in str(error.value)
