"""Sources in an object store: every built-in builder reads `s3://...` paths (an S3-compatible
server on 127.0.0.1, reached through the standard variables), and a build from there writes
exactly the shards a build from local copies of the same files writes."""
from __future__ import annotations

import gzip
import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from conftest import ROOT, write_spec
from support.engines import BEAM_PYTHON

pytestmark = pytest.mark.server


def _put(prefix: str, files: dict[str, bytes]) -> None:
    import boto3

    client = boto3.client("s3")
    for name, data in files.items():
        client.put_object(Bucket="data", Key=f"{prefix}/{name}", Body=data)


def _cli(*args: str, python: Path | str = sys.executable, env: dict[str, str] | None = None):
    return subprocess.run([str(python), "-m", "tfrecord_builder", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, **(env or {})}, timeout=600)


def _shards(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.rglob("*")) if ".tfrecord" in path.name
            or path.name == "skipped.jsonl"}


def _same_from_both(tmp_path: Path, spec: dict, files: dict[str, bytes], prefix: str, source: str,
                    env: dict[str, str] | None = None, python: Path | str = sys.executable,
                    runner: tuple[str, ...] = ()) -> dict[str, bytes]:
    """Builds `spec` from local files and from the same files at s3://data/PREFIX; returns the
    shards, having checked both builds wrote the same."""
    local_spec = write_spec(tmp_path / "local", spec, files)
    _put(prefix, files)
    remote = json.loads(json.dumps(spec))
    remote["source"]["path"] = remote["source"]["path"].replace(source, f"s3://data/{prefix}/{source}", 1)
    remote_spec = write_spec(tmp_path / "remote", remote)
    built = [_cli("build", str(local_spec), "--output", str(tmp_path / "out-local"), env=env),
             _cli("build", str(remote_spec), "--output", str(tmp_path / "out-remote"), *runner, env=env, python=python)]
    assert [done.returncode for done in built] == [0, 0], built[1].stderr
    local, remote_shards = _shards(tmp_path / "out-local"), _shards(tmp_path / "out-remote")
    assert local and remote_shards == local
    return local


def _rows(count: int) -> bytes:
    generator = random.Random(3)
    lines = ["id,x,label"] + [f"{row},{generator.random():.5f},{generator.choice(['cat', 'dog'])}" for row in range(count)]
    lines.append("oops,1.0,cat")  # skipped: named by the file's name and line, wherever the file is
    return ("\n".join(lines) + "\n").encode()


TABLE = {"name": "rows", "features": {"id": {"dtype": "int64"}, "x": {"dtype": "float32"},
                                      "label": {"type": "class_label", "names": ["cat", "dog"]}},
         "splits": {"train": 0.8, "test": 0.2}, "on_error": "skip", "output": {"shards": 2}}


@pytest.mark.parametrize("name, data, env", [
    ("rows.csv", _rows(300), None),
    ("rows.csv.gz", gzip.compress(_rows(300), mtime=0), None),
    ("rows.csv", _rows(3000), {"TFRECORD_BUILDER_TASK_BYTES": "8000"}),  # cut into windows, read by ranges
], ids=["csv", "gzip", "windows"])
def test_a_csv_in_a_bucket_builds_the_same_shards(s3, tmp_path, name, data, env):
    spec = {**TABLE, "source": {"builder": "csv", "path": name}}
    shards = _same_from_both(tmp_path, spec, {name: data}, f"csv-{len(data)}-{env is not None}", name, env=env)
    plain = gzip.decompress(data) if name.endswith(".gz") else data
    assert f'"record": "{name}, line {len(plain.splitlines())}"' in shards["skipped.jsonl"].decode()


def test_jsonl_and_parquet_in_a_bucket_build_the_same_shards(s3, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{"id": row, "x": row / 7, "label": ["cat", "dog"][row % 2]} for row in range(400)]
    jsonl = "".join(json.dumps(row) + "\n" for row in rows).encode()
    _same_from_both(tmp_path / "jsonl", {**TABLE, "source": {"builder": "jsonl", "path": "rows.jsonl"}},
                    {"rows.jsonl": jsonl}, "jsonl", "rows.jsonl")
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), buffer, row_group_size=50)
    _same_from_both(tmp_path / "parquet", {**TABLE, "source": {"builder": "parquet", "path": "rows.parquet"}},
                    {"rows.parquet": buffer.getvalue()}, "parquet", "rows.parquet",
                    env={"TFRECORD_BUILDER_TASK_BYTES": "2000"})  # runs of row groups, read by ranges


def _png(seed: int) -> bytes:
    pixels = np.random.default_rng(seed).integers(0, 255, (6, 5, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()


def test_an_image_folder_and_image_paths_in_a_table_in_a_bucket(s3, tmp_path):
    images = {f"{label}/{'sub/' if index % 3 == 0 else ''}{index:02d}.png": _png(index)
              for index, label in enumerate(["cat", "dog", "bird"] * 6)}
    images[".hidden/x.png"] = _png(99)
    images["cat/notes.txt"] = b"not an image"
    folder = {"name": "pics", "source": {"builder": "image_folder", "path": "pics"},
              "features": {"image": {"type": "image", "channels": 3}, "label": {"type": "class_label"},
                           "filename": {"dtype": "string"}},
              "splits": {"train": 0.5, "test": 0.5}, "output": {"shards": 1}}
    _same_from_both(tmp_path / "folder", folder, {f"pics/{name}": data for name, data in images.items()}, "folder",
                    "pics", env={"TFRECORD_BUILDER_TASK_BYTES": "300"})
    manifest = "image,label\n" + "".join(f"{name},{name.split('/')[0]}\n" for name in images if name.endswith(".png")
                                         and not name.startswith("."))
    table = {"name": "listed", "source": {"builder": "csv", "path": "list/rows.csv"},
             "features": {"image": {"type": "image", "channels": 3},
                          "label": {"type": "class_label", "names": ["bird", "cat", "dog"]}},
             "splits": {"train": 0.5, "test": 0.5}, "output": {"shards": 1}}
    _same_from_both(tmp_path / "table", table, {"list/rows.csv": manifest.encode(),
                                                **{f"list/{name}": data for name, data in images.items()}},
                    "table", "list")


def test_a_missing_source_object_is_a_spec_error_at_its_path(s3, tmp_path):
    spec = write_spec(tmp_path, {**TABLE, "source": {"builder": "csv", "path": "s3://data/nowhere/rows.csv"}})
    done = _cli("build", str(spec), "--output", str(tmp_path / "out"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "source.path: s3://data/nowhere/rows.csv not found" in done.stderr and not (tmp_path / "out").exists()


@pytest.mark.beam
def test_beam_workers_read_a_csv_from_the_bucket(s3, tmp_path):
    spec = {**TABLE, "source": {"builder": "csv", "path": "rows.csv"}}
    _same_from_both(tmp_path, spec, {"rows.csv": _rows(3000)}, "beam", "rows.csv",
                    env={"TFRECORD_BUILDER_TASK_BYTES": "8000"}, python=BEAM_PYTHON, runner=("--runner", "beam"))
