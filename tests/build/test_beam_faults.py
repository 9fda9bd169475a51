"""Faults on Beam's DirectRunner (multi-processing, 2 workers, the Beam environment of
tests/support/engines.py): a bundle that fails, a worker process killed, each step run twice. Nothing is lost,
nothing doubled: the local runner's bytes in the end, no shard file twice or half, nothing
published that looks finished in between.

What the DirectRunner does (Apache Beam 2.77, offline): `SwitchingDirectRunner` tries Prism, whose
binary it can't download, and falls back to the `FnApiRunner`. That runner retries nothing: a
bundle's error is raised as it comes back (`BundleManager._run_bundle`,
runners/portability/fn_api_runner/fn_runner.py: `if result.error: raise RuntimeError(result.error)`)
and fails the job. Dataflow retries a failed bundle (4 times in batch): the steps below are each
run twice here, as a retried bundle or two racing attempts would run them.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import ROOT, write_spec
from support.engines import BEAM_PYTHON, SMALL_TASKS, big_table, run_beam as _beam, run_in as _cli
from support.reading import assert_same_files as _same, files_of as _files

from tfrecord_builder.atomic import is_temporary
from tfrecord_builder.build.plan import read_tasks
from tfrecord_builder.build.runners.distributed import by_bucket, encode_task, joined, layout_of, sort_bucket, \
    write_placed_shard
from tfrecord_builder.builders.sources import source_builders
from tfrecord_builder.spec.load import load_spec


FAILING_BUILDER = '''
import os
import tfrecord_builder as tb


class WorkerFault(BaseException):
    """Not the data's fault (a builder's Exception is the build's DataError, caught in the task): a
    fault of the worker's, which fails the bundle, as a lost connection or a preempted machine does."""


class Failing(tb.Builder):
    """Parts of records; the part from 200 fails on its first attempt (each attempt noted)."""

    def tasks(self, split):
        return [(start, start + 50) for start in range(0, 400, 50)]

    def generate_task(self, split, task):
        folder = os.path.dirname(self.path)
        with open(os.path.join(folder, "attempts.txt"), "a") as file:
            file.write(f"{task[0]}\\n")
        if task[0] == 200 and not os.path.exists(os.path.join(folder, "failed-once")):
            open(os.path.join(folder, "failed-once"), "w").close()
            raise WorkerFault("on the first attempt")
        for number in range(*task):
            yield f"n{number}", {"x": number, "y": [number] * (number % 4)}

    def generate(self, split):
        for task in self.tasks(split):
            yield from self.generate_task(split, task)
'''


def _failing_spec(tmp_path: Path) -> Path:
    return write_spec(tmp_path, {"name": "parts", "source": {"builder": "failing.py:Failing", "path": "anchor"},
                                 "features": {"x": {"dtype": "int64"}, "y": {"dtype": "int64", "shape": [None]}},
                                 "splits": {"train": 0.5, "test": 0.5}, "output": {"shards": 2}},
                      {"failing.py": FAILING_BUILDER, "anchor": ""})


def _unfinished(out: Path, name: str) -> None:
    """Nothing that looks finished: no version folder, no dataset_info.json anywhere."""
    assert not (out / name / "1.0.0").exists()
    assert not list(out.rglob("dataset_info.json"))


@pytest.mark.beam
def test_a_bundle_failing_on_its_first_attempt_fails_the_job_and_resume_gives_the_local_bytes(tmp_path):
    """The DirectRunner doesn't retry the bundle (the module's docstring): the job fails with Beam's
    error (its workers' log replayed, as for any failure of Beam's), publishes nothing, and
    `--resume` reads the failed part again (its second attempt succeeds) and writes the local
    runner's bytes, every part read once more, none twice."""
    spec = _failing_spec(tmp_path)
    out = tmp_path / "out"
    (tmp_path / "failed-once").write_text("")  # the local build: no fault
    local = _cli(sys.executable, "build", str(spec), "--output", str(out))
    assert local.returncode == 0, local.stderr
    expected = _files(out)
    shutil.rmtree(out)
    (tmp_path / "failed-once").unlink()
    (tmp_path / "attempts.txt").unlink()
    failed = _beam("build", str(spec), "--output", str(out), "--workers", "2")
    assert failed.returncode == 1
    assert "WorkerFault: on the first attempt [while running 'Encode/ParDo(_EncodeTask)']" in failed.stderr
    assert (tmp_path / "attempts.txt").read_text().split().count("200") == 1  # not retried
    _unfinished(out, "parts")
    (tmp_path / "attempts.txt").unlink()
    resumed = _beam("build", str(spec), "--output", str(out), "--workers", "2", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    _same(expected, _files(out))
    assert sorted(map(int, (tmp_path / "attempts.txt").read_text().split())) == list(range(0, 400, 50))


def _worker_processes(job: int) -> list[int]:
    """The Beam worker processes (`sdk_worker_main`, not the shell that starts each) of job `job`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
            group = os.getpgid(int(entry.name))
        except OSError:
            continue
        if group == job and b"sdk_worker_main" in b" ".join(command) and not command[0].endswith(b"sh"):
            found.append(int(entry.name))
    return found


@pytest.mark.beam
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the workers in /proc")
def test_a_killed_worker_process_fails_the_job_in_one_line_and_resume_gives_the_local_bytes(tmp_path):
    """SIGKILL to one of the DirectRunner's two worker processes while shards are written. Beam
    2.77 itself waits forever for the bundle that worker held; the runner fails the build at once,
    in one line, with the finished shards in the manifest; `--resume` keeps them and writes the rest."""
    path = big_table(tmp_path)
    out = tmp_path / "out"
    local = _cli(sys.executable, "build", str(path), "--output", str(out), env=SMALL_TASKS)
    assert local.returncode == 0, local.stderr
    expected = _files(out)
    shutil.rmtree(out)
    command = [str(BEAM_PYTHON), "-m", "tfrecord_builder", "build", str(path), "--output", str(out), "--runner", "beam",
               "--workers", "2"]
    job = subprocess.Popen(command, cwd=ROOT, env={**os.environ, **SMALL_TASKS}, start_new_session=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        entries = out / "rows" / ".1.0.0.building" / "manifest"
        deadline = time.monotonic() + 600  # a bound for a job that never gets there, not a measure
        while job.poll() is None and time.monotonic() < deadline and not list(entries.glob("*.json")):
            time.sleep(0.005)
        workers = _worker_processes(job.pid)
        assert len(workers) == 2
        os.kill(workers[0], signal.SIGKILL)
        _, stderr = job.communicate(timeout=300)  # Beam alone: no end (a bound, generous for a busy machine)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
    assert job.returncode == 1
    assert stderr == ("error: a Beam worker process was killed (SIGKILL) while the job ran; the DirectRunner doesn't "
                      "retry: build again with --resume to keep the shards it finished\n")
    assert not _worker_processes(job.pid)  # the other worker stopped too
    _unfinished(out, "rows")
    finished = {entry.name.removesuffix(".json"): (entries.parent / entry.name.removesuffix(".json")).stat().st_mtime_ns
                for entry in entries.glob("*.json")}
    assert 0 < len(finished) < 48
    resumed = _beam("build", str(path), "--output", str(out), "--resume", env=SMALL_TASKS)
    assert resumed.returncode == 0, resumed.stderr
    _same(expected, _files(out))  # no partial shard, no temporary left
    for name, written in finished.items():  # kept as they were, not written again
        assert (out / "rows" / "1.0.0" / name).stat().st_mtime_ns == written


def test_each_beam_step_run_twice_or_racing_writes_the_same_bytes_once(tmp_path):
    """What a runner that retries bundles (Dataflow) does: the steps of a job run again, or two
    attempts at once. Encoding, bucketing and sorting are pure; a shard written twice, one after
    the other or by two attempts racing, is the same bytes under its one name and one manifest
    entry, each attempt writing under a temporary name of its own."""
    rows = "id,x\n" + "".join(f"{row},{row / 3:.4f}\n" for row in range(3000))
    spec = load_spec(write_spec(tmp_path, {"name": "rows", "source": {"builder": "csv", "path": "rows.csv"},
                                           "features": {"x": {"dtype": "float32"}}, "output": {"shards": 3}},
                                {"rows.csv": rows}))
    builders = dict(source_builders(spec))
    tasks = read_tasks(list(builders.items()))

    def steps() -> tuple[dict, dict]:
        summaries, buckets = [], {}
        for task in tasks:
            summary, held, _ = encode_task(spec, builders[task.split], task)
            for bucket, part in by_bucket(spec, 1, task.index, held["train"], summary.buckets.setdefault("train", {})):
                buckets.setdefault(bucket, []).append(part)
            summaries.append(summary)
        layout, _ = layout_of(summaries, spec)
        parts: dict = {}
        for bucket in sorted(buckets):
            for shard, part in sort_bucket(spec, "train", bucket, joined(buckets[bucket]), layout).parts:
                parts.setdefault(shard, []).append(part)
        return layout, parts

    (layout, parts), (_, twice) = steps(), steps()
    assert sorted(parts) == sorted(twice) == [0, 1, 2]
    for shard in parts:
        assert [part.records.data.tobytes() for part in parts[shard]] == [part.records.data.tobytes()
                                                                          for part in twice[shard]]

    def write(folder: Path, shard: int, pieces: list) -> str:
        return write_placed_shard(spec, str(folder), "build", {}, "train", shard,
                                  [lambda piece=piece: piece for piece in pieces], layout)

    once, retried, racing = tmp_path / "once", tmp_path / "retried", tmp_path / "racing"
    for folder in (once, retried, racing):
        folder.mkdir()
    for shard in parts:
        write(once, shard, parts[shard])
        write(retried, shard, parts[shard])
        write(retried, shard, twice[shard])  # the retried bundle
        attempts = [threading.Thread(target=write, args=(racing, shard, pieces)) for pieces in (parts[shard],
                                                                                                twice[shard])]
        for attempt in attempts:
            attempt.start()
        for attempt in attempts:
            attempt.join()
    written = _files(once)
    assert sorted(written) == sorted([f"rows-train.tfrecord-0000{shard}-of-00003" for shard in range(3)]
                                     + [f"manifest/rows-train.tfrecord-0000{shard}-of-00003.json" for shard in range(3)]
                                     + [f"index/rows-train-0000{shard}-of-00003.idx" for shard in range(3)])
    assert sum(part.records.num_rows for shard in parts for part in parts[shard]) == 3000
    assert _files(retried) == _files(racing) == written  # the same names, bytes and entries: no temporaries
    assert not any(is_temporary(Path(name).name) for name in _files(racing))
