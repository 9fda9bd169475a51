"""Delta Lake and Iceberg tables as sources (`builder: delta`, `builder: iceberg`): real tables
written by their own libraries (deltalake; pyiceberg with a SQL catalog on SQLite), read at a
version or the latest, which the dataset's metadata records.

Every value is checked against the table's rows read by the library itself, and the shards are
byte for byte those of the same rows written to a Parquet file and built from it."""
from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import numpy
import pyarrow as pa
import pyarrow.parquet as parquet
import pytest

import tfrecord_builder as tb
from tfrecord_builder.builders.sources import source_builders
from tfrecord_builder.spec.load import load_spec
from tfrecord_builder.tools.diff import describe_change, diff

from conftest import write_spec
from support.cli import run_cli
from support.engines import stopped_before_metadata
from support.reading import assert_same_files, files_of

deltalake = pytest.importorskip("deltalake")
sql_catalog = pytest.importorskip("pyiceberg.catalog.sql")

FEATURES = {
    "id": {"dtype": "int64"},
    "count": {"dtype": "int64", "default": -1},
    "score": {"dtype": "float64", "default": 0.5},
    "name": {"dtype": "string", "default": ""},
    "ok": {"dtype": "bool", "default": False},
    "day": {"dtype": "string"},
    "at": {"dtype": "int64", "time_unit": "us"},
    "local": {"dtype": "string", "default": ""},
    "tags": {"dtype": "int64", "shape": [None]},
    "blob": {"dtype": "bytes"},
}
UTC = datetime.timezone.utc


def _rows(start: int, count: int, tag: str = "") -> pa.Table:
    """Rows of every kind of column: integers, floats, text, booleans and lists with nulls (and
    empty lists), dates, timestamps with and without a time zone, bytes. (Dates and times with
    nulls and a `default:` are refused by the date rules whatever the source, Parquet too.)"""
    ids = list(range(start, start + count))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "count": pa.array([None if i % 5 == 0 else i * 7 - 300 for i in ids], pa.int64()),
        "score": pa.array([None if i % 7 == 0 else i / 3 for i in ids], pa.float64()),
        "name": pa.array([None if i % 6 == 0 else f"{tag}row {i} é" for i in ids], pa.string()),
        "ok": pa.array([None if i % 4 == 0 else i % 3 == 0 for i in ids], pa.bool_()),
        "day": pa.array([datetime.date(2020, 1, 1) + datetime.timedelta(days=i) for i in ids],
                        pa.date32()),
        "at": pa.array([datetime.datetime(2021, 3, 1, 12, tzinfo=UTC)
                        + datetime.timedelta(seconds=i * 3601, microseconds=i) for i in ids], pa.timestamp("us", "UTC")),
        "local": pa.array([datetime.datetime(2022, 5, 1) + datetime.timedelta(minutes=i) for i in ids],
                          pa.timestamp("us")),
        "tags": pa.array([None if i % 10 == 0 else list(range(i % 4)) for i in ids], pa.list_(pa.int64())),
        "blob": pa.array([bytes([i % 256, 0, 255]) for i in ids], pa.binary()),
    })


def _expected(table: pa.Table) -> dict[int, dict[str, Any]]:
    """Each row's values as the spec's features store them, from the rows as pyarrow gives them."""
    expected = {}
    for row in table.to_pylist():
        expected[row["id"]] = {
            "count": -1 if row["count"] is None else row["count"],
            "score": 0.5 if row["score"] is None else float(numpy.float32(row["score"])),  # float32 on the wire
            "name": b"" if row["name"] is None else row["name"].encode(),
            "ok": False if row["ok"] is None else row["ok"],
            "day": row["day"].isoformat().encode(),
            "at": (row["at"] - datetime.datetime(1970, 1, 1, tzinfo=UTC))
            // datetime.timedelta(microseconds=1),
            "local": row["local"].isoformat().encode(),
            "tags": row["tags"] or [],
            "blob": row["blob"],
        }
    return expected


def _records(info: tb.DatasetInfo) -> dict[int, dict[str, Any]]:
    found = {}
    for split in info.splits:
        for record in tb.read(info.path, split):
            found[int(record["id"])] = {name: (value.tolist() if hasattr(value, "tolist") else value)
                                        for name, value in record.items() if name != "id"}
    return found


def _shards(folder: Path) -> dict[str, bytes]:
    """The shards and their index files: what the rows decide (the metadata also names the source)."""
    return {name: data for name, data in files_of(folder).items() if ".tfrecord-" in name or name.startswith("index")}


def _dataset(info: tb.DatasetInfo) -> dict[str, bytes]:
    """Every file of a dataset but its module, which names the folder it was built in."""
    return {name: data for name, data in files_of(info.path).items() if name != f"{info.name}_input.py"}


def _spec(tmp_path: Path, source: dict[str, Any], name: str = "spec.yaml") -> Path:
    return write_spec(tmp_path, {"name": "lake", "source": source, "splits": {"train": 0.75, "test": 0.25},
                                 "features": FEATURES, "output": {"shards": 2}}, name=name)


def _parquet_build(tmp_path: Path, table: pa.Table) -> dict[str, bytes]:
    parquet.write_table(table, tmp_path / "rows.parquet", row_group_size=50)
    info = tb.build(_spec(tmp_path, {"builder": "parquet", "path": "rows.parquet"}, "parquet.yaml"),
                    output=tmp_path / "from_parquet", workers=1)
    return _shards(Path(info.path))


def _catalog(tmp_path: Path) -> Any:
    catalog = sql_catalog.SqlCatalog("default", uri=f"sqlite:///{tmp_path}/catalog.db",
                                     warehouse=f"file://{tmp_path}/warehouse")
    catalog.create_namespace("shop")
    return catalog


ICEBERG_CATALOG = {"uri": "sqlite:///catalog.db", "warehouse": "warehouse"}  # relative to the spec's folder


def test_a_delta_table_gives_every_value_and_the_bytes_of_the_same_rows_from_parquet(tmp_path):
    first, second = _rows(0, 120), _rows(120, 80)
    deltalake.write_deltalake(tmp_path / "events", first)
    deltalake.write_deltalake(tmp_path / "events", second, mode="append")  # two data files: two read tasks
    info = tb.build(_spec(tmp_path, {"builder": "delta", "path": "events"}), output=tmp_path / "out", workers=2)
    rows = deltalake.DeltaTable(tmp_path / "events").to_pyarrow_table()
    assert _records(info) == _expected(rows)
    assert info.source_snapshots == {"*": {"format": "delta", "version": 1}}
    metadata = json.loads((Path(info.path) / "tfrecord_builder.json").read_text())
    assert metadata["source_snapshots"] == {"*": {"format": "delta", "version": 1}}
    assert_same_files(_parquet_build(tmp_path, pa.concat_tables([first, second])), _shards(Path(info.path)))


def test_an_iceberg_table_gives_every_value_and_the_bytes_of_the_same_rows_from_parquet(tmp_path):
    first, second = _rows(0, 120), _rows(120, 80)
    table = _catalog(tmp_path).create_table("shop.events", schema=first.schema)
    table.append(first)
    table.append(second)
    spec = _spec(tmp_path, {"builder": "iceberg", "table": "shop.events", "catalog": ICEBERG_CATALOG})
    info = tb.build(spec, output=tmp_path / "out", workers=2)
    assert _records(info) == _expected(table.scan().to_arrow())
    current = table.current_snapshot().snapshot_id
    assert info.source_snapshots == {"*": {"format": "iceberg", "table": "shop.events", "snapshot": current}}
    assert_same_files(_parquet_build(tmp_path, pa.concat_tables([first, second])), _shards(Path(info.path)))


def test_an_iceberg_table_of_many_files_is_planned_once_not_once_a_file(tmp_path, monkeypatch):
    """Each data file's task reads the table's plan (its manifests): planned again for every file,
    a table of n files cost n plans (a 200-file table built 5x slower)."""
    from tfrecord_builder.builders import iceberg

    table = _catalog(tmp_path).create_table("shop.events", schema=_rows(0, 1).schema)
    for start in range(0, 60, 10):
        table.append(_rows(start, 10))  # six data files: six read tasks
    plans = []
    monkeypatch.setattr(iceberg, "planned", lambda *args, real=iceberg.planned: plans.append(args) or real(*args))
    spec = _spec(tmp_path, {"builder": "iceberg", "table": "shop.events", "catalog": ICEBERG_CATALOG})
    info = tb.build(spec, output=tmp_path / "out", workers=1)
    assert _records(info) == _expected(table.scan().to_arrow())
    assert len(plans) == 2  # the files listed for the tasks, then every file's read from one plan


def test_a_delta_version_read_again_after_the_table_moved_on_gives_the_same_bytes(tmp_path):
    deltalake.write_deltalake(tmp_path / "events", _rows(0, 60))
    pinned = _spec(tmp_path, {"builder": "delta", "path": "events", "version": 0})
    before = _dataset(tb.build(pinned, output=tmp_path / "before", workers=1))
    deltalake.write_deltalake(tmp_path / "events", _rows(10, 60, tag="changed "), mode="overwrite")  # version 1
    again = tb.build(pinned, output=tmp_path / "again", workers=1)
    assert_same_files(before, _dataset(again))
    latest = tb.build(_spec(tmp_path, {"builder": "delta", "path": "events"}, "latest.yaml"),
                      output=tmp_path / "latest", workers=1)
    assert latest.source_snapshots == {"*": {"format": "delta", "version": 1}}
    assert _records(latest) == _expected(_rows(10, 60, tag="changed "))
    lines = [describe_change(change) for change in diff(again.path, latest.path).spec]
    assert 'source_snapshots: {"*": {"format": "delta", "version": 0}} -> {"*": {"format": "delta", "version": 1}}' \
        in "\n".join(lines).replace("'", '"'), lines


def test_an_iceberg_snapshot_read_again_after_the_table_moved_on_gives_the_same_bytes(tmp_path):
    rows = _rows(0, 60)
    table = _catalog(tmp_path).create_table("shop.events", schema=rows.schema)
    table.append(rows)
    first = table.current_snapshot().snapshot_id
    pinned = _spec(tmp_path, {"builder": "iceberg", "table": "shop.events", "snapshot": first,
                              "catalog": ICEBERG_CATALOG})
    before = _dataset(tb.build(pinned, output=tmp_path / "before", workers=1))
    table.overwrite(_rows(10, 60, tag="changed "))
    again = tb.build(pinned, output=tmp_path / "again", workers=1)
    assert_same_files(before, _dataset(again))
    assert again.source_snapshots == {"*": {"format": "iceberg", "table": "shop.events", "snapshot": first}}


def test_resume_after_the_table_moved_on_is_refused_and_a_pinned_version_resumes(tmp_path, monkeypatch):
    deltalake.write_deltalake(tmp_path / "events", _rows(0, 60))
    latest = _spec(tmp_path, {"builder": "delta", "path": "events"})
    stopped_before_metadata(monkeypatch, latest, tmp_path / "out")
    deltalake.write_deltalake(tmp_path / "events", _rows(60, 5), mode="append")
    with pytest.raises(tb.UsageError) as refused:
        tb.build(latest, output=tmp_path / "out", resume=True, workers=1)
    assert str(refused.value) == ('--resume: the source changed since the build began (*: {"format": "delta", '
                                  '"version": 0}, now {"format": "delta", "version": 1}); build again without --resume')
    result = run_cli("build", latest, "--output", tmp_path / "out", "--resume", cwd=tmp_path)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "the source changed" in result.stderr

    pinned = _spec(tmp_path, {"builder": "delta", "path": "events", "version": 0}, "pinned.yaml")
    stopped_before_metadata(monkeypatch, pinned, tmp_path / "pinned")
    resumed = tb.build(pinned, output=tmp_path / "pinned", resume=True, workers=1)
    whole = tb.build(pinned, output=tmp_path / "whole", workers=1)
    assert_same_files(_dataset(whole), _dataset(resumed))


def test_a_version_or_table_that_does_not_exist_is_named_with_those_there(tmp_path):
    deltalake.write_deltalake(tmp_path / "events", _rows(0, 5))
    deltalake.write_deltalake(tmp_path / "events", _rows(5, 5), mode="append")
    with pytest.raises(tb.SpecError, match=r"source\.version: events: no version 7; the table's versions are 0 to 1"):
        tb.build(_spec(tmp_path, {"builder": "delta", "path": "events", "version": 7}), output=tmp_path / "out")
    (tmp_path / "empty").mkdir()
    with pytest.raises(tb.DataError, match=r"empty: not a readable Delta table"):
        tb.build(_spec(tmp_path, {"builder": "delta", "path": "empty"}), output=tmp_path / "out")

    rows = _rows(0, 5)
    table = _catalog(tmp_path).create_table("shop.events", schema=rows.schema)
    table.append(rows)
    known = table.current_snapshot().snapshot_id
    with pytest.raises(tb.SpecError, match=r"source\.table: no table `shop\.sales` in the iceberg catalog; the "
                                           r"catalog's tables in `shop`: shop\.events"):
        tb.build(_spec(tmp_path, {"builder": "iceberg", "table": "shop.sales", "catalog": ICEBERG_CATALOG}),
                 output=tmp_path / "out")
    with pytest.raises(tb.SpecError, match=r"source\.table: no table `web\.events` in the iceberg catalog; the "
                                           r"catalog's namespaces: shop"):
        tb.build(_spec(tmp_path, {"builder": "iceberg", "table": "web.events", "catalog": ICEBERG_CATALOG}),
                 output=tmp_path / "out")
    with pytest.raises(tb.SpecError, match=rf"source\.snapshot: shop\.events: no snapshot 12; the table's "
                                           rf"snapshots: {known}$"):
        tb.build(_spec(tmp_path, {"builder": "iceberg", "table": "shop.events", "snapshot": 12,
                                  "catalog": ICEBERG_CATALOG}), output=tmp_path / "out")


def test_a_column_the_table_lacks_and_a_decimal_column_are_named(tmp_path):
    deltalake.write_deltalake(tmp_path / "events", _rows(0, 5).drop_columns(["blob"]))
    with pytest.raises(tb.DataError, match=r"events, .*\.parquet: feature `blob`: no column `blob` in the source; "
                                           r"its columns: id, count, score"):
        tb.build(_spec(tmp_path, {"builder": "delta", "path": "events"}), output=tmp_path / "out")
    prices = pa.table({"id": pa.array([1, 2], pa.int64()), "price": pa.array([1, 2], pa.decimal128(10, 2))})
    deltalake.write_deltalake(tmp_path / "prices", prices)
    spec = write_spec(tmp_path, {"name": "prices", "source": {"builder": "delta", "path": "prices"},
                                 "features": {"id": {"dtype": "int64"}, "price": {"dtype": "float64"}}}, name="p.yaml")
    with pytest.raises(tb.DataError, match=r"prices: column `price` of type decimal128\(10, 2\): no exact mapping"):
        tb.build(spec, output=tmp_path / "out")


def test_the_spec_keys_are_checked_where_they_are_read(tmp_path):
    with pytest.raises(tb.SpecError, match=r"source\.snapshot: `snapshot` is read by the iceberg builder, not by delta"):
        tb.build(_spec(tmp_path, {"builder": "delta", "path": ".", "snapshot": 3}))
    with pytest.raises(tb.SpecError, match=r"the iceberg builder needs `table: namespace.name`"):
        tb.build(_spec(tmp_path, {"builder": "iceberg"}))
    with pytest.raises(tb.SpecError, match=r"source\.catalog\.uri: the URI holds a password") as error:
        tb.build(_spec(tmp_path, {"builder": "iceberg", "table": "a.b",
                                  "catalog": {"uri": "postgresql://me:hunter2@db/iceberg"}}))
    assert "hunter2" not in str(error.value)
    with pytest.raises(tb.SpecError, match=r"source\.version: expected a whole number of 0 or more"):
        tb.build(_spec(tmp_path, {"builder": "delta", "path": ".", "version": -1}))


def _ids_by_split(info: tb.DatasetInfo) -> dict[str, set[int]]:
    return {split: {int(record["id"]) for record in tb.read(info.path, split)} for split in info.splits}


def _kept_across_versions(tmp_path: Path, source: dict[str, Any], append: Any, snapshot_key: str) -> None:
    """Built at the table's first version, rebuilt with --keep-splits after rows were appended:
    each earlier row stays in its split, the new ones are assigned, the metadata names the version."""
    spec = _spec(tmp_path, {**source, "key": "id"})
    old = tb.build(spec, output=tmp_path / "old", workers=1)
    append(_rows(120, 80))
    kept = tb.build(spec, output=tmp_path / "kept", workers=1, keep_splits=old.path)
    assert kept.membership["kept_splits"] == {"dataset": old.path, "kept": 120, "new": 80}
    before, after = _ids_by_split(old), _ids_by_split(kept)
    for split in before:
        assert before[split] <= after[split]
    assert set().union(*after.values()) == set(range(200))
    first = json.loads((Path(old.path) / "tfrecord_builder.json").read_text())["source_snapshots"]["*"]
    now = json.loads((Path(kept.path) / "tfrecord_builder.json").read_text())["source_snapshots"]["*"]
    assert first[snapshot_key] != now[snapshot_key]
    return first[snapshot_key], now[snapshot_key]


def test_keep_splits_across_delta_versions_keeps_each_row_in_its_split(tmp_path):
    deltalake.write_deltalake(tmp_path / "events", _rows(0, 120))
    versions = _kept_across_versions(
        tmp_path, {"builder": "delta", "path": "events"},
        lambda rows: deltalake.write_deltalake(tmp_path / "events", rows, mode="append"), "version")
    assert versions == (0, 1)


def test_keep_splits_across_iceberg_snapshots_keeps_each_row_in_its_split(tmp_path):
    table = _catalog(tmp_path).create_table("shop.events", schema=_rows(0, 1).schema)
    table.append(_rows(0, 120))
    first = table.current_snapshot().snapshot_id
    versions = _kept_across_versions(tmp_path, {"builder": "iceberg", "table": "shop.events",
                                                "catalog": ICEBERG_CATALOG}, table.append, "snapshot")
    assert versions == (first, table.refresh().current_snapshot().snapshot_id)


def test_a_partitioned_delta_table_gives_every_value_of_every_partition(tmp_path):
    rows = _rows(0, 120)
    rows = rows.append_column("part", pa.array([f"p{i % 3}" for i in range(120)], pa.string()))
    deltalake.write_deltalake(tmp_path / "events", rows, partition_by=["part"])
    assert sorted(path.name for path in (tmp_path / "events").iterdir() if path.name.startswith("part=")) == \
        ["part=p0", "part=p1", "part=p2"]  # hive-style folders
    spec = write_spec(tmp_path, {"name": "lake", "source": {"builder": "delta", "path": "events"},
                                 "splits": {"train": 0.75, "test": 0.25},
                                 "features": {**FEATURES, "part": {"dtype": "string"}}}, name="parts.yaml")
    info = tb.build(spec, output=tmp_path / "out", workers=1)
    independent = deltalake.DeltaTable(tmp_path / "events").to_pyarrow_table().sort_by("id")
    expected = _expected(independent.drop(["part"]))
    found = _records(info)
    assert {i: {k: v for k, v in record.items() if k != "part"} for i, record in found.items()} == expected
    assert {i: record["part"] for i, record in found.items()} == \
        {i: f"p{i % 3}".encode() for i in range(120)}


def test_a_partitioned_iceberg_table_with_a_delete_applied_lacks_the_deleted_rows(tmp_path):
    rows = _rows(0, 120)
    rows = rows.append_column("part", pa.array([f"p{i % 3}" for i in range(120)], pa.string()))
    catalog = _catalog(tmp_path)
    table = catalog.create_table("shop.events", schema=rows.schema, properties={"format-version": "2"})
    with table.update_spec() as update:
        update.add_identity("part")
    assert [(field.name, str(field.transform)) for field in table.spec().fields] == [("part", "identity")]
    table.append(rows)
    before = table.current_snapshot().summary
    # a row-level delete inside data files that keep other rows: pyiceberg (0.12) applies it by
    # rewriting those files without the rows (copy-on-write), in a snapshot of its own
    table.delete("id >= 30 and id < 50")
    summary = table.refresh().current_snapshot().summary
    assert (before["total-records"], summary["total-records"], summary["deleted-records"], summary["added-records"]) \
        == ("120", "100", "120", "100"), summary
    spec = write_spec(tmp_path, {"name": "lake", "source": {"builder": "iceberg", "table": "shop.events",
                                                            "catalog": ICEBERG_CATALOG},
                                 "splits": {"train": 0.75, "test": 0.25},
                                 "features": {**FEATURES, "part": {"dtype": "string"}}}, name="parts.yaml")
    info = tb.build(spec, output=tmp_path / "out", workers=1)
    independent = table.scan().to_arrow().sort_by("id")
    assert sorted(independent.column("id").to_pylist()) == [i for i in range(120) if not 30 <= i < 50]
    found = _records(info)
    assert sorted(found) == [i for i in range(120) if not 30 <= i < 50]
    assert {i: {k: v for k, v in record.items() if k != "part"} for i, record in found.items()} == \
        _expected(independent.drop(["part"]))
    assert {i: record["part"] for i, record in found.items()} == {i: f"p{i % 3}".encode() for i in found}


def test_position_delete_files_are_applied_to_the_data_files_they_name_and_equality_deletes_refused(tmp_path):
    from support.iceberg_deletes import delete_equal, delete_positions

    first, second = _rows(0, 60), _rows(60, 60)
    table = _catalog(tmp_path).create_table("shop.events", schema=first.schema, properties={"format-version": "2"})
    table.append(first)
    table.append(second)  # two data files, two read tasks: each must get its own deletes
    files = [task.file.file_path for task in table.scan().plan_files()]
    second_file = next(path for path in files if parquet.read_table(path.removeprefix("file://"))["id"][0].as_py() == 60)
    table = delete_positions(table, second_file, [3, 17, 40], tmp_path / "warehouse")
    independent = table.scan().to_arrow().sort_by("id")
    assert independent["id"].to_pylist() == [i for i in range(120) if i not in (63, 77, 100)]
    spec = _spec(tmp_path, {"builder": "iceberg", "table": "shop.events", "catalog": ICEBERG_CATALOG})
    info = tb.build(spec, output=tmp_path / "out", workers=2)
    assert _records(info) == _expected(independent)
    assert_same_files(_parquet_build(tmp_path, independent), _shards(Path(info.path)))

    delete_equal(table, "id", [5], tmp_path / "warehouse")  # as Flink writes row-level deletes
    done = run_cli("build", spec, "--output", tmp_path / "again", cwd=tmp_path)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "shop.events, snapshot " in done.stderr and "equality delete files, which pyiceberg can't apply" \
        in done.stderr, done.stderr
    assert not (tmp_path / "again" / "lake" / "1.0.0").exists()

@pytest.mark.parametrize("group_by", [None, "name"], ids=["a-task-per-file", "grouped-one-task"])
def test_tasks_planned_before_the_table_moved_on_read_the_planned_version_where_the_builder_is_made_anew(
        tmp_path, group_by):
    """A Beam or Spark worker makes the builder from the spec: the version the tasks name is read,
    not the one latest where the task runs."""
    deltalake.write_deltalake(tmp_path / "events", _rows(0, 30))
    source = {"builder": "delta", "path": "events", **({"group_by": group_by} if group_by else {})}
    spec = load_spec(_spec(tmp_path, source))
    [(split, planner)] = source_builders(spec)
    tasks = planner.tasks(split)
    assert {task.version for task in tasks} == {0}
    deltalake.write_deltalake(tmp_path / "events", _rows(100, 5, tag="new "), mode="overwrite")  # version 1
    [(_, worker)] = source_builders(spec)
    read = [row for task in tasks for batch in worker.read_batches(["id", "name"], 7, task)
            for row in batch.columns["id"]]
    assert sorted(read) == list(range(30))
