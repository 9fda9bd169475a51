"""`builder: spark_table` and `tb.build(spec, source=spark_frame, runner="spark")`: a Spark table's
partitions encoded by the executors of a standalone cluster (tests/support/spark_cluster.py), the
shards byte-identical to the same rows written to Parquet and built locally, and to the same rows
in 1 or 3 partitions; every value exact against Spark's own reading; the snapshot recorded; bad
input in one line."""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import tfrecord_builder as tb

from conftest import write_spec
from support.engines import stopped_before_metadata
from support.reading import files_of

pyspark = pytest.importorskip("pyspark")

ROWS = 240
FEATURES = {"id": {"dtype": "int64"}, "l": {"dtype": "int64"}, "i": {"dtype": "int64"}, "s": {"dtype": "int64"},
            "b": {"dtype": "int64"}, "d": {"dtype": "float64"}, "f": {"dtype": "float32"}, "flag": {"dtype": "bool"},
            "name": {"dtype": "string"}, "raw": {"dtype": "bytes"}, "picture": {"type": "image", "encoding": "png"},
            "ids": {"dtype": "int64", "shape": [3]}, "day": {"dtype": "string"},
            "days": {"dtype": "int64", "source": "day", "time_unit": "days"},
            "at": {"dtype": "string"}, "price": {"dtype": "float64"}, "gaps": {"dtype": "int64", "default": -1}}


def _png(shade: int) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (4, 3), (shade, 255 - shade, 7)).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture(scope="module")
def spark(spark):
    """The run's one session on the cluster (support/spark_cluster.py: a master and two workers,
    each a JVM of its own, its warehouse a folder every executor sees), on UTC for the module,
    with the table `db.events` of every type mapped; the database dropped after the module."""
    session = spark
    zone = session.conf.get("spark.sql.session.timeZone")
    session.conf.set("spark.sql.session.timeZone", "UTC")
    pictures = session.createDataFrame([(shade, bytearray(_png(shade))) for shade in range(0, 256, 32)],
                                       "shade int, picture binary")
    pictures.createOrReplaceTempView("pictures")
    session.sql("CREATE DATABASE IF NOT EXISTS db")
    session.sql(f"""
        SELECT id, id * 1000000007 AS l, CAST(id - 100 AS INT) AS i, CAST(id * 3 AS SMALLINT) AS s,
               CAST(id % 128 - 64 AS TINYINT) AS b, id / 3.0D AS d, CAST(id / 7.0D AS FLOAT) AS f, id % 2 = 0 AS flag,
               concat('row ', id, ' é') AS name, CAST(concat('raw', id) AS BINARY) AS raw, p.picture,
               array(id, id + 1, id + 2) AS ids, date_add(DATE'2020-01-01', CAST(id AS INT)) AS day,
               TIMESTAMP'2021-03-04 05:06:07' + make_interval(0, 0, 0, 0, 0, 0, id) AS at,
               CAST(id / 4.0 AS DECIMAL(10, 2)) AS price, CASE WHEN id % 5 = 0 THEN NULL ELSE id * 2 END AS gaps
        FROM range({ROWS}) JOIN pictures p ON p.shade = (id % 8) * 32""").repartition(2).write.saveAsTable("db.events")
    yield session
    session.sql("DROP DATABASE db CASCADE")
    session.catalog.dropTempView("pictures")
    session.conf.set("spark.sql.session.timeZone", zone)


def _spec(folder: Path, source: dict, **more) -> Path:
    return write_spec(folder, {"name": "events", "source": source, "features": FEATURES,
                               "splits": {"train": 0.8, "test": 0.2}, **more})


def _shards(info: tb.DatasetInfo) -> dict[str, bytes]:
    return {name: data for name, data in files_of(info.path).items() if ".tfrecord" in name}


@pytest.mark.spark
def test_a_spark_table_builds_the_bytes_of_its_rows_from_parquet_however_partitioned(spark, tmp_path):
    table = spark.table("db.events")
    read = table.toArrow()  # the test's own reading of the rows, on the driver
    as_parquet = read.set_column(read.schema.get_field_index("price"), "price",
                                 pc.cast(read.column("price"), pa.float64()))  # what `decimals: float` reads
    pq.write_table(as_parquet, tmp_path / "rows.parquet")
    reference = tb.build(_spec(tmp_path / "pq", {"builder": "parquet", "path": "../rows.parquet"}),
                         output=tmp_path / "pq-out", workers=2, progress=False)
    built = tb.build(_spec(tmp_path / "t", {"builder": "spark_table", "table": "db.events", "decimals": "float"}),
                     output=tmp_path / "t-out", runner="spark", progress=False)
    assert _shards(built) and _shards(built) == _shards(reference)
    for count in (1, 3):
        frame = tb.build(_spec(tmp_path / f"f{count}", {"builder": "spark_table", "decimals": "float"}),
                         output=tmp_path / f"f{count}-out", runner="spark", progress=False,
                         source=table.repartition(count))
        assert _shards(frame) == _shards(reference), count

    rows = {row["id"]: row for row in read.to_pylist()}
    found = [record for split in ("train", "test") for record in tb.read(built.path, split)]
    assert sorted(int(record["id"]) for record in found) == sorted(rows)
    for record in found:
        row = rows[int(record["id"])]
        for name in ("l", "i", "s", "b", "flag"):
            assert record[name] == row[name], name
        assert record["d"] == np.float32(row["d"]) and record["f"] == np.float32(row["f"])  # a FloatList's float32
        assert record["name"].decode() == row["name"] and record["raw"] == row["raw"]
        assert list(record["ids"]) == row["ids"]
        assert record["day"].decode() == row["day"].isoformat()
        assert record["days"] == (row["day"].toordinal() - 719163)
        assert record["at"].decode() == row["at"].replace(tzinfo=None).isoformat()
        assert record["price"] == np.float32(float(row["price"]))
        assert record["gaps"] == (-1 if row["gaps"] is None else row["gaps"])
        from PIL import Image
        assert np.array_equal(np.asarray(record["picture"]),
                              np.asarray(Image.open(io.BytesIO(row["picture"])).convert("RGB")))

    metadata = json.loads((Path(built.path) / "tfrecord_builder.json").read_text())
    snapshot = metadata["source_snapshots"]["*"]
    assert snapshot["table"] == "db.events" and snapshot["rows"] == ROWS
    assert json.loads((Path(frame.path) / "tfrecord_builder.json").read_text())["source_snapshots"]["*"][
        "keys_xxhash64"] == snapshot["keys_xxhash64"]  # the same rows, in 3 partitions: the same order-free hash


@pytest.mark.spark
def test_a_spark_table_s_bad_input_is_one_line(spark, tmp_path):
    with pytest.raises(tb.SpecError) as error:
        tb.build(_spec(tmp_path / "a", {"builder": "spark_table", "table": "db.event"}), output=tmp_path / "a-out",
                 runner="spark", progress=False)
    assert str(error.value).endswith("source.table: no table `db.event` in the Spark session's catalog; the tables of "
                                     "database `db`: events")
    with pytest.raises(tb.DataError) as error:
        tb.build(_spec(tmp_path / "b", {"builder": "spark_table", "table": "db.events"}), output=tmp_path / "b-out",
                 runner="spark", progress=False)
    assert str(error.value) == ("table db.events: column `price` (decimal(10,2)): a decimal has no exact mapping to "
                                "a feature's numbers; give `source.decimals: float` (to the nearest float64) or "
                                "`text` (its digits), or cast it in Spark")
    spec = write_spec(tmp_path / "c", {"name": "events", "source": {"builder": "spark_table", "table": "db.events"},
                                       "features": {"missing": {"dtype": "int64"}}})
    with pytest.raises(tb.DataError) as error:
        tb.build(spec, output=tmp_path / "c-out", runner="spark", progress=False)
    assert str(error.value).startswith("table db.events: feature `missing`: no column `missing` in the source; "
                                       "its columns: id, l, i, s, b, d, f, flag, name")
    assert not list((tmp_path / "a-out").glob("events/*/*.tfrecord*")) and not list((tmp_path / "b-out").glob("events/*/*.tfrecord*"))


def test_a_spark_table_on_another_runner_is_refused_naming_the_spark_runner(tmp_path):
    spec = _spec(tmp_path, {"builder": "spark_table", "table": "db.events"})
    with pytest.raises(tb.UsageError) as error:
        tb.build(spec, output=tmp_path / "out", progress=False)
    assert str(error.value) == ("source: builder spark_table on the local runner: its rows are read by the spark "
                                "runner, where they are: --runner spark (runner=\"spark\" in Python)")
    assert not (tmp_path / "out").exists()


@pytest.mark.spark
def test_a_split_column_of_a_spark_table_puts_each_row_in_the_split_it_names(spark, tmp_path):
    spark.sql("""SELECT id, id * 7 AS x, CASE WHEN id % 5 = 0 THEN 'test' WHEN id % 5 = 1 THEN 'validation'
                 ELSE 'train' END AS part FROM range(300)""").repartition(3).write.saveAsTable("db.parted")
    spec = {"name": "parted", "features": {"id": {"dtype": "int64"}, "x": {"dtype": "int64"}},
            "splits": {"train": {}, "validation": {}, "test": {}}, "output": {"shards": 2}}
    built = tb.build(write_spec(tmp_path / "t", {**spec, "source": {"builder": "spark_table", "table": "db.parted",
                                                                     "split_column": "part"}}),
                     output=tmp_path / "t-out", runner="spark", progress=False)
    read = spark.table("db.parted").toArrow()  # the test's own reading of the rows
    pq.write_table(read, tmp_path / "rows.parquet")
    reference = tb.build(write_spec(tmp_path / "pq", {**spec, "source": {"builder": "parquet", "path": "../rows.parquet",
                                                                          "split_column": "part"}}),
                         output=tmp_path / "pq-out", workers=2, progress=False)
    assert _shards(built) and _shards(built) == _shards(reference)
    named = {row["id"]: (row["part"], row["x"]) for row in read.to_pylist()}
    for split in ("train", "validation", "test"):
        found = {int(record["id"]): (split, int(record["x"])) for record in tb.read(built.path, split)}
        assert found == {key: value for key, value in named.items() if value[0] == split}, split
        assert built.splits[split].num_examples == len(found) == {"train": 180, "validation": 60, "test": 60}[split]


@pytest.mark.spark
def test_a_resumed_build_whose_spark_table_changed_is_refused(spark, tmp_path, monkeypatch):
    spark.sql("SELECT id, concat('row ', id) AS text FROM range(5000)").repartition(2).write.saveAsTable("db.resumed")
    spec = write_spec(tmp_path, {"name": "resumed", "output": {"shards": 4},
                                 "source": {"builder": "spark_table", "table": "db.resumed", "key": "id"},
                                 "features": {"id": {"dtype": "int64"}, "text": {"dtype": "string"}}})
    stopped_before_metadata(monkeypatch, spec, tmp_path / "out", runner="spark", progress=False)
    spark.sql("INSERT INTO db.resumed VALUES (5000, 'row 5000')")
    with pytest.raises(tb.UsageError) as error:
        tb.build(spec, output=tmp_path / "out", resume=True, runner="spark", progress=False)
    message = str(error.value)
    assert "\n" not in message and message.startswith("--resume: the source changed since the build began (*: ")
    assert '"rows": 5000' in message and '"rows": 5001' in message and message.endswith(
        "; build again without --resume")
    assert not list((tmp_path / "out").rglob("dataset_info.json"))  # nothing finished with two versions
    spark.sql("INSERT OVERWRITE db.resumed SELECT id, concat('row ', id) AS text FROM range(5000)")
    resumed = tb.build(spec, output=tmp_path / "out", resume=True, runner="spark", progress=False)  # the same rows
    assert resumed.splits["train"].num_examples == 5000
