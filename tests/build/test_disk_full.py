"""A build whose disk fills up: one line on stderr and exit status 1, nothing that looks finished,
and `--resume` completes it, byte for byte, once there is room.

The output is a small tmpfs mounted for the test (tests/support/small_disk.py: skipped where mounting is
refused), filled with a ballast file to leave only so much space; the build fails; the ballast
goes; the build resumes.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tfrecord_builder.atomic import is_temporary

from conftest import ROOT, write_spec
from support.engines import BEAM_PYTHON
from support.reading import files_of as _files
from support.small_disk import fill  # and the fixture small_disk: 32 MiB, room for the whole build

pytestmark = pytest.mark.slow  # builds run twice, on a disk filled up in between
# the workers write the runs and the shards, as in a large build (else the build's process does
# it all for this small source)
WORKERS_AT_ONCE = ("import sys; from tfrecord_builder.build import encoding; "
                   "from tfrecord_builder.write import shards; "
                   "encoding.IN_PROCESS_SECONDS = encoding.PARALLEL_SECONDS = shards.POOL_BYTES = 0; ")
CLI = "from tfrecord_builder.cli.main import main; sys.exit(main())"
# the disk filled when the shards' writing begins, leaving FILL_LEAVE bytes: what is free then
# doesn't depend on how many sorted runs the workers wrote and the build's process held, which
# the machine's load decides
FILL_AT_SHARDS = ("import os; from tfrecord_builder.build.runners import local; write = local.write_shards\n"
                  "def filled(*args, **kwargs):\n"
                  "    disk, leave = os.environ['FILL_DISK'], int(os.environ['FILL_LEAVE'])\n"
                  "    status = os.statvfs(disk)\n"
                  "    with open(os.path.join(disk, 'ballast'), 'wb') as file:\n"
                  "        file.write(bytes(status.f_bavail * status.f_frsize - leave))\n"
                  "    return write(*args, **kwargs)\n"
                  "local.write_shards = filled\n")
# a checkpoint after every batch of 2,000 rows, as a long build's once a minute
CHECKPOINTED = ("from tfrecord_builder.write import checkpoint; checkpoint.INTERVAL = 0; "
                "from tfrecord_builder.features import TensorFeature; TensorFeature.batch_rows = 2000; ")
SPEC = {"name": "rows", "source": {"builder": "csv", "path": "rows.csv"},
        "features": {"x": {"dtype": "float32"}, "y": {"dtype": "int64"}, "text": {"dtype": "string"}},
        "splits": {"train": 0.8, "test": 0.2}, "output": {"shards": 8}}
MiB = 1024**2


def _rows(count: int) -> str:
    return "x,y,text\n" + "".join(f"{row * 0.37:.6f},{row % 11 - 5},{row:06d}{'z' * 200}\n" for row in range(count))


def _build(runner: str, spec: Path, out: Path, *extra: str, setup: str = "",
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    if runner == "beam":
        if not BEAM_PYTHON.exists():
            pytest.fail(f"{BEAM_PYTHON}: no Beam environment; `make test` makes it "
                        "(or set TFRECORD_BUILDER_BEAM_PYTHON)")
        command = [str(BEAM_PYTHON), "-m", "tfrecord_builder", "build", "--runner", "beam"]
    else:
        command = [sys.executable, "-c", WORKERS_AT_ONCE + setup + CLI, "build"]
    env = {**os.environ, "TFRECORD_BUILDER_TASK_BYTES": "500000", **(env or {})}  # Beam: a dozen read tasks
    return subprocess.run([*command, str(spec), "--output", str(out), "--workers", "2", *extra],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[Path, Path, dict[str, bytes]]:
    """SPEC of 20,000 rows, the folder it was built into and the local runner's files there, built
    once for the module: every build here, on either runner, ends with these bytes."""
    folder = tmp_path_factory.mktemp("reference")
    spec = write_spec(folder, SPEC, {"rows.csv": _rows(20000)})
    built = _build("local", spec, folder / "out")
    assert built.returncode == 0, built.stderr
    return spec, folder / "out", _files(folder / "out")


def _expected(reference: tuple[Path, Path, dict[str, bytes]], out: Path) -> dict[str, bytes]:
    """The reference's files as a build into `out` writes them: its generated module's DATA_DIR
    names `out` (no other file names where it was built)."""
    _, built_into, files = reference
    return {name: content.replace(str(built_into).encode(), str(out).encode()) if name.endswith(".py") else content
            for name, content in files.items()}


def _recorded(staging: Path) -> list[str]:
    """The shards the staging folder's manifest lists as finished (`write/manifest.py`): the local
    runner's lines, a Beam job's files."""
    lines = (staging / "manifest.jsonl").read_text().splitlines()[1:] if (staging / "manifest.jsonl").exists() else []
    return [json.loads(line)["file"] for line in lines] + [
        json.loads(path.read_text())["file"] for path in sorted(staging.glob("manifest/*.json"))]


SHARD = r"rows-(train|test)\.tfrecord-0000\d-of-00008"
FULL = r": the disk is full \(No space left on device\) writing "
WRITING = {"runs": rf"/runs{FULL}run-(train|test)-[0-9a-f-]+",  # a worker's sorted run
           "beam-runs": rf"/beam-runs{FULL}(train|test)-[0-9a-z-]+\.pickle",  # records between the job's steps
           # a shard, its index file, or the record of a finished one (the local runner's line, a Beam job's file)
           "shards": rf"({FULL}{SHARD}|/index{FULL}rows-(train|test)-0000\d-of-00008\.idx|/manifest{FULL}{SHARD}\.json"
                     rf"|{FULL}manifest\.jsonl)"}


# local-shards: the disk filled as the shards' writing begins (FILL_AT_SHARDS), with room for three
# train shards (each 0.55 MB) and their index files, of 5.5 MB: when the first shard written is
# recorded, the other writer has written at most one shard of its own, so the record always has room
# (with room for two, under load the other writer's second shard could fill the disk first)
@pytest.mark.parametrize("runner, leave, phase", [("local", 3 * MiB, "runs"), ("local", 2 * MiB, "shards"),
                                                  pytest.param("beam", 3 * MiB, "beam-runs", marks=pytest.mark.beam),
                                                  pytest.param("beam", 16 * MiB, "shards", marks=pytest.mark.beam)],
                         ids=["local-runs", "local-shards", "beam-runs", "beam-shards"])
def test_a_full_disk_is_one_line_leaves_nothing_finished_and_resumes(reference, small_disk, runner, leave, phase):
    """Full while the records are encoded (into sorted runs, or Beam's files between steps), or
    after some shards are finished (which the resumed build keeps, untouched): the local runner's
    bytes in the end, on either runner."""
    spec = reference[0]
    out = small_disk / "out"
    expected = _expected(reference, out)
    if (runner, phase) == ("local", "shards"):
        ballast = small_disk / "ballast"
        failed = _build(runner, spec, out, setup=FILL_AT_SHARDS, env={"FILL_DISK": str(small_disk),
                                                                     "FILL_LEAVE": str(leave)})
    else:
        ballast = fill(small_disk, leave)
        failed = _build(runner, spec, out)
    staging = out / "rows" / ".1.0.0.building"
    assert failed.returncode == 1, failed.stderr
    assert re.fullmatch(f"error: {re.escape(str(staging))}{WRITING[phase]}; free space and run again with --resume\n",
                        failed.stderr), failed.stderr
    assert not (out / "rows" / "1.0.0").exists()
    left = [path.relative_to(out) for path in out.rglob("*") if path.is_file()]
    assert [path for path in left if path.name == "dataset_info.json" or is_temporary(path.name)] == []
    assert {path.parts[1] for path in left} <= {".1.0.0.building", ".1.0.0.lock"}  # shards only in the staging folder
    # only what the resumed build uses: the finished shards, their index files and records of them
    written = {path.name for path in staging.glob("rows-*.tfrecord-*")}  # some perhaps not recorded yet
    assert {path.parts[2] for path in left if path.parts[1] == ".1.0.0.building"} <= {
        *written, "index", "manifest", "manifest.jsonl", ".made-by-tb"}
    finished = {name: (staging / name).stat().st_mtime_ns for name in _recorded(staging)}
    assert bool(finished) == (phase == "shards"), failed.stderr

    ballast.unlink()
    resumed = _build(runner, spec, out, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stderr == ""
    built = _files(out)
    assert sorted(built) == sorted(expected)
    for name in expected:
        assert built[name] == expected[name], f"{name} differs"
    dataset = out / "rows" / "1.0.0"
    assert {name: (dataset / name).stat().st_mtime_ns for name in finished} == finished  # kept, not written again


def test_a_checkpointed_build_keeps_its_checkpoint_and_drops_the_runs_it_does_not_list(tmp_path, small_disk):
    """Full mid-encoding after some checkpoints: the runs the last one lists stay for `--resume`
    (which carries on from it), the runs written since are removed at once."""
    spec = write_spec(tmp_path, SPEC, {"rows.csv": _rows(20000)})
    out = small_disk / "out"
    # its own reference: statistics merged from batches of 2,000 rows may differ from the shared
    # reference's in their last bits (a std's 16th digit)
    reference = _build("local", spec, out, setup=CHECKPOINTED)
    assert reference.returncode == 0, reference.stderr
    expected = _files(out)
    shutil.rmtree(out)
    ballast = fill(small_disk, 3 * MiB)

    failed = _build("local", spec, out, setup=CHECKPOINTED)
    staging = out / "rows" / ".1.0.0.building"
    assert failed.returncode == 1
    assert re.fullmatch(f"error: {re.escape(str(staging))}(/runs)?{FULL}[^;/]+; free space and run again with --resume\n",
                        failed.stderr), failed.stderr
    saved = json.loads((staging / "checkpoint.json").read_text())
    assert 0 < saved["records"] < 20000
    listed = {run for split in saved["splits"].values() for run in split["runs"]} | set(saved["members"].values())
    assert sorted(path.name for path in (staging / "runs").iterdir()) == sorted(listed)
    assert not (out / "rows" / "1.0.0").exists() and not list(out.rglob("dataset_info.json"))

    ballast.unlink()
    resumed = _build("local", spec, out, "--resume", setup=CHECKPOINTED)
    assert resumed.returncode == 0, resumed.stderr
    built = _files(out)
    assert sorted(built) == sorted(expected)
    for name in expected:
        assert built[name] == expected[name], f"{name} differs"
