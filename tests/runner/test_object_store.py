"""Building into an object store: an S3-compatible server on 127.0.0.1 (moto in server mode),
reached through the standard `AWS_ENDPOINT_URL` and credential variables, as a user's bucket is.

A build into `s3://bucket/...`, with either runner, holds exactly the bytes of a local-disk build;
`dataset_info.json` is written last (the commit); a missing bucket or an endpoint that doesn't
answer is one line, exit 2, before any work; a scheme without a filesystem names its package.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ROOT, write_spec
from object_store import objects as _objects, s3  # noqa: F401 (a fixture)
from test_beam import BEAM_PYTHON, SMALL_TASKS, _files, _tabular, _table

pytestmark = pytest.mark.xdist_group("beam")


def _cli(python, *args, env=None):
    return subprocess.run([str(python), "-m", "tfrecord_builder", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, **(env or {})}, timeout=600)


def test_both_runners_write_the_local_bytes_into_a_bucket(s3, tmp_path):
    spec = write_spec(tmp_path, _tabular(), {"rows.csv": _table(2000, bad=(9,))})
    disk = _cli(sys.executable, "build", str(spec), "--output", str(tmp_path / "disk"), env=SMALL_TASKS)
    assert disk.returncode == 0, disk.stderr
    local = _cli(sys.executable, "build", str(spec), "--output", "s3://data/local", env=SMALL_TASKS)
    assert local.returncode == 0, local.stderr
    assert "rows 1.0.0 -> s3://data/local/rows/1.0.0" in local.stdout
    beam = _cli(BEAM_PYTHON, "build", str(spec), "--output", "s3://data/beam", "--runner", "beam", env=SMALL_TASKS)
    assert beam.returncode == 0, beam.stderr
    on_disk = _files(tmp_path / "disk" / "rows" / "1.0.0")
    from_local, from_beam = _objects("local/rows/1.0.0"), _objects("beam/rows/1.0.0")
    assert sorted(from_local) == sorted(from_beam) == sorted(on_disk)
    for name, content in on_disk.items():
        if name == "rows_input.py":  # its DATA_DIR names where it was built
            assert from_local[name] == content.replace(str(tmp_path / "disk").encode(), b"s3://data/local")
            assert from_beam[name] == content.replace(str(tmp_path / "disk").encode(), b"s3://data/beam")
        else:
            assert from_local[name] == from_beam[name] == content, name
    assert not _objects("local/rows/.1.0.0.building") and not _objects("beam/rows/.1.0.0.building")
    summary = _cli(sys.executable, "inspect", "s3://data/beam/rows/1.0.0")
    assert summary.returncode == 0, summary.stderr
    assert "folder: s3://data/beam/rows/1.0.0" in summary.stdout and "label: classes cat" in summary.stdout
    unfinished = _cli(sys.executable, "inspect", "s3://data/beam/rows")
    assert (unfinished.returncode, unfinished.stderr) == (1, "error: s3://data/beam/rows: not a finished dataset (no "
                                                             "dataset_info.json); build it, or finish it with --resume\n")


def test_a_dataset_in_a_bucket_is_replaced_only_with_overwrite(s3, tmp_path):
    spec = write_spec(tmp_path, _tabular(), {"rows.csv": _table(300)})
    assert _cli(sys.executable, "build", str(spec), "--output", "s3://data/again").returncode == 0
    again = _cli(sys.executable, "build", str(spec), "--output", "s3://data/again")
    assert (again.returncode, again.stderr) == (2, "error: s3://data/again/rows/1.0.0: a dataset is already built "
                                                   "there; pass --overwrite to replace it\n")
    write_spec(tmp_path, _tabular(), {"rows.csv": _table(200)})
    replaced = _cli(sys.executable, "build", str(spec), "--output", "s3://data/again", "--overwrite")
    assert replaced.returncode == 0, replaced.stderr
    import json

    info = json.loads(_objects("again/rows/1.0.0")["dataset_info.json"])
    assert sum(split["num_examples"] for split in info["splits"].values()) == 200 + 39


@pytest.mark.parametrize("output, env, message", [
    ("s3://no-such-bucket/x", {}, "error: s3://no-such-bucket: no such bucket (or no right to see it)\n"),
    ("s3://data/x", {"AWS_ENDPOINT_URL": "http://127.0.0.1:9"},
     "error: s3://data/x/rows: can't write to the object store: EndpointConnectionError: Could not connect to the "
     "endpoint URL: \"http://127.0.0.1:9/data\"\n"),
    ("gs://data/x", {}, "error: gs://data/x: reading and writing gs:// needs gcsfs: pip install gcsfs\n"),
    ("nosuchscheme://data/x", {}, "error: nosuchscheme://data/x: no filesystem for nosuchscheme:// is installed "
                                  "(fsspec knows none by that name)\n"),
], ids=["no-bucket", "no-endpoint", "no-gcsfs", "unknown-scheme"])
def test_a_store_we_cannot_write_is_one_line_before_any_work(s3, tmp_path, output, env, message):
    spec = write_spec(tmp_path, _tabular(), {"rows.csv": _table(50)})
    done = _cli(sys.executable, "build", str(spec), "--output", output, env=env)
    assert (done.returncode, done.stderr) == (2, message)
