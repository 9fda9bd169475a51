"""The plan both runners execute: read tasks that cover the source exactly once, in order, with the
records (and line numbers) a whole read gives; and `tb.build`'s runner arguments."""
from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tfrecord_builder as tb
from tfrecord_builder.builders.base import parsed_batch
from tfrecord_builder.builders.sources import source_builders
from tfrecord_builder.errors import UsageError
from tfrecord_builder.build.plan import read_tasks, task_batches
from tfrecord_builder.spec.load import load_spec

from conftest import write_spec


@pytest.fixture
def small_tasks(monkeypatch):
    monkeypatch.setenv("TFRECORD_BUILDER_TASK_BYTES", "2000")


def _records(spec_path: Path) -> tuple[int, list, list[str]]:
    """The plan's task count, and every record's key and origin, task after task."""
    spec = load_spec(spec_path)
    builders = source_builders(spec)
    tasks = read_tasks(builders)
    keys, origins = [], []
    for task in tasks:
        for batch in task_batches(spec, dict(builders)[task.split], task):
            batch = parsed_batch(batch)
            keys += list(batch.keys)
            origins += [batch.origin(row) for row in range(len(batch))]
    return len(tasks), keys, origins


def _csv(rows: int, quoted: str | None = None) -> str:
    lines = ["id,x,name"] + [f"{row},{row * 0.5},{quoted if quoted and row == 7 else f'n{row}'}" for row in range(rows)]
    return "\n".join(lines) + "\n"


SPEC = {"name": "t", "source": {"builder": "csv", "path": "rows.csv"},
        "features": {"x": {"dtype": "float32"}, "name": {"dtype": "string"}}, "splits": {"train": 1.0}}


def test_windows_cover_a_large_file_once_with_its_line_numbers(tmp_path, small_tasks, monkeypatch):
    path = write_spec(tmp_path, SPEC, {"rows.csv": _csv(1000)})
    count, keys, origins = _records(path)
    monkeypatch.setenv("TFRECORD_BUILDER_TASK_BYTES", str(10**9))
    whole_count, whole_keys, whole_origins = _records(path)
    assert (whole_count, count > 5) == (1, True)
    assert keys == whole_keys and origins == whole_origins
    assert origins[0] == "rows.csv, line 2" and origins[-1] == "rows.csv, line 1001"


def test_windows_of_jsonl_keep_line_numbers_past_blank_lines(tmp_path, small_tasks):
    lines = [f'{{"x": {row}, "name": "n{row}"}}' for row in range(600)]
    lines.insert(300, "")
    spec = {**SPEC, "source": {"builder": "jsonl", "path": "rows.jsonl"}}
    count, keys, origins = _records(write_spec(tmp_path, spec, {"rows.jsonl": "\n".join(lines) + "\n"}))
    assert count > 5 and len(keys) == 600
    assert origins[299:301] == ["rows.jsonl, line 300", "rows.jsonl, line 302"]


def test_windows_of_a_quoted_csv_end_where_rows_end(tmp_path, small_tasks, monkeypatch):
    """A quoted cell may hold the delimiter and newlines: windows are cut where rows end, and
    each row keeps the line it starts on."""
    rows = [f'{row},{row * 0.5},"n{row}' + (',\nsecond line""' if row % 3 == 0 else "") + '"' for row in range(600)]
    path = write_spec(tmp_path, SPEC, {"rows.csv": '"id","x","name"\n' + "\n".join(rows) + "\n"})
    count, keys, origins = _records(path)
    monkeypatch.setenv("TFRECORD_BUILDER_TASK_BYTES", str(10**9))
    whole_count, whole_keys, whole_origins = _records(path)
    assert (whole_count, count > 5) == (1, True)
    assert keys == whole_keys and origins == whole_origins and len(keys) == 600
    assert origins[:5] == ["rows.csv, line 2", "rows.csv, line 4", "rows.csv, line 5", "rows.csv, line 6",
                           "rows.csv, line 8"]


@pytest.mark.parametrize("content", [_csv(1000, quoted='5" screen'), _csv(1000, quoted=' "spaced"'),
                                     _csv(1000).replace("\n", "\r", 1), gzip.compress(_csv(1000).encode(), mtime=0)],
                         ids=["quote in a plain cell", "quote after a space", "cr", "gzip"])
def test_a_file_whose_lines_may_not_be_records_is_one_task(tmp_path, small_tasks, content):
    count, keys, _ = _records(write_spec(tmp_path, SPEC, {"rows.csv": content}))
    assert count == 1 and len(keys) >= 999


def test_parquet_row_groups_and_image_folders_are_cut_in_order(tmp_path, small_tasks):
    table = pa.table({"x": [float(row) for row in range(3000)], "name": [f"n{row}" for row in range(3000)]})
    pq.write_table(table, tmp_path / "rows.parquet", row_group_size=100)
    spec = {**SPEC, "source": {"builder": "parquet", "path": "rows.parquet"}}
    count, keys, origins = _records(write_spec(tmp_path, spec))
    assert count > 5 and len(keys) == 3000 and origins[2999] == "rows.parquet, row 3000"
    from PIL import Image

    for index in range(40):
        folder = tmp_path / "images" / f"c{index % 2}"
        folder.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (8, 8), (index, 0, 0)).save(folder / f"{index:02d}.png")
    spec = {"name": "i", "source": {"builder": "image_folder", "path": "images"},
            "features": {"image": {"type": "image", "shape": [8, 8, 3]}, "label": {"type": "class_label"}},
            "splits": {"train": 1.0}}
    count, keys, _ = _records(write_spec(tmp_path, spec, name="images.yaml"))
    assert count >= 2 and keys == sorted(keys) and len(keys) == 40


def test_shards_do_not_depend_on_how_the_source_is_cut(tmp_path, small_tasks, monkeypatch):
    path = write_spec(tmp_path, {**SPEC, "output": {"shards": 3}}, {"rows.csv": _csv(2000)})
    cut = tb.build(path, output=tmp_path / "cut", workers=1)
    monkeypatch.setenv("TFRECORD_BUILDER_TASK_BYTES", str(10**9))
    whole = tb.build(path, output=tmp_path / "whole", workers=1)
    for shard in whole.splits["train"].shards:
        assert shard["sha256"] == hashlib.sha256((Path(cut.path) / shard["file"]).read_bytes()).hexdigest()


def test_runner_arguments_are_checked_before_anything_is_written(tmp_path):
    path = write_spec(tmp_path, SPEC, {"rows.csv": _csv(10)})
    with pytest.raises(UsageError, match=r"runner: expected one of local, beam, spark, received 'flink'"):
        tb.build(path, output=tmp_path / "out", runner="flink")
    with pytest.raises(UsageError, match=r"pipeline_options: the local runner takes no engine options: give them "
                                         r"with runner='beam' or runner='spark'"):
        tb.build(path, output=tmp_path / "out", pipeline_options=["--runner=DirectRunner"])
    assert not (tmp_path / "out").exists()
