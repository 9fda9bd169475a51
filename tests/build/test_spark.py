"""`build --runner spark`: the same dataset as the local runner, byte for byte, as a Spark job on a
standalone cluster of separate processes (tests/support/spark_cluster.py: a master and two workers,
whose executors are JVMs of their own with their own Python workers), on the one session `spark`
every test of the run that names it shares, with speculative execution on; faults (an executor
killed, a task run twice, the driver killed) change no byte. The tests of the command line start
drivers of their own (local[N]) in subprocesses: they run beside the session's tests."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

import tfrecord_builder as tb
from tfrecord_builder.errors import DiskFullError

from conftest import write_spec
from support.cli import assert_error, run_cli
from support.engines import (SMALL_TASKS, assert_chosen_runner, big_table, parts_spec as _parts_spec, photos_spec,
                             sequence_sources, shapes_spec, table as _table, tabular as _tabular)
from support.object_store import GATE, objects, pointed_at
from support.reading import assert_same_files as _same, files_of as _files
from support.small_disk import fill
from support.spark_cluster import executors

pyspark = pytest.importorskip("pyspark")
pytestmark = [pytest.mark.spark, pytest.mark.server]


@pytest.fixture(scope="module")
def s3(spark_s3):
    """The S3 server the shared session's executors are pointed at (support/spark_cluster.py), this
    process's clients pointed there too for the module."""
    with pointed_at(spark_s3):
        yield spark_s3


def both(spec: Path, tmp_path: Path, progress: Callable | None = None) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """Every file of the local build and of the Spark build of `spec` (showing its `progress`),
    built into the same path."""
    out = tmp_path / "out"
    tb.build(spec, output=out, workers=2)
    local = _files(out)
    shutil.rmtree(out)
    tb.build(spec, output=out, runner="spark", progress=progress)
    return local, _files(out)


# the table's cases (spec keys added, output options): each built once on each runner, shared by
# the tests asserting on it (the shuffled one records its progress): a Spark job's fixed cost is
# most of its time at this size, so the options that take no path of their own share one
TABLE_CASES = {
    "shuffled": ({}, {}),
    "source-order": ({}, {"shuffle": False}),
    "stratified-gzip-shards-named-tfrecord": ({"stratify": "label"}, {"naming": "suffix", "compression": "gzip"}),
}


@pytest.fixture(scope="module")
def table_built(spark, tmp_path_factory) -> Callable[[str], tuple[dict[str, bytes], dict[str, bytes], list]]:
    """`table_built(case)`: the local and the Spark build's files of the 600-row table built as
    TABLE_CASES[case] says, and the Spark build's progress, each built once for the module."""
    folder = tmp_path_factory.mktemp("table")
    built: dict[str, tuple[dict[str, bytes], dict[str, bytes], list]] = {}

    def table(case: str) -> tuple[dict[str, bytes], dict[str, bytes], list]:
        if case not in built:
            added, output = TABLE_CASES[case]
            spec = write_spec(folder / case, {**_tabular(**output), **added}, {"rows.csv": _table(600, bad=(5, 77))})
            said: list[tuple[str, int, int | None]] = []
            built[case] = (*both(spec, folder / case, progress=lambda *shown: said.append(shown)), said)
        return built[case]
    return table


@pytest.mark.parametrize("case", list(TABLE_CASES))
def test_a_table_builds_the_same_bytes_on_spark(table_built, case):
    local, built, _ = table_built(case)
    _same(local, built)
    if TABLE_CASES[case][1].get("naming") == "suffix":
        assert "rows/1.0.0/rows-train-00002-of-00003.tfrecord.gz" in built


def test_a_spark_build_shows_its_progress_from_the_tasks_counts(table_built):
    said = table_built("shuffled")[2]  # the table's shuffled build
    phases = [phase for phase, _, _ in said]
    assert phases == sorted(phases, key=["encoding", "writing"].index)  # the phases in turn
    assert said[phases.index("writing") - 1] == ("encoding", 639, None)  # every row read, the bad ones too
    assert said[-1] == ("writing", 636, 636)  # every record written (row 5 bad twice: it is repeated)


def test_a_stratified_table_builds_the_same_bytes_on_spark(table_built):
    local, built, _ = table_built("stratified-gzip-shards-named-tfrecord")
    assert json.loads(built["rows/1.0.0/tfrecord_builder.json"])["spec"]["stratify"] == "label"
    _same(local, built)


def test_many_read_tasks_with_index_files_build_the_same_bytes_on_spark(spark, tmp_path, monkeypatch):
    """A few hundred read tasks (each a partition, cut where rows end: some quoted cells hold a
    newline), shards with their index files."""
    monkeypatch.setenv(*next(iter(SMALL_TASKS.items())))
    spec = write_spec(tmp_path, _tabular(shards=4, index=True), {"rows.csv": _table(4000, bad=(9, 3999), quoted=True)})
    local, built = both(spec, tmp_path)
    _same(local, built)
    assert [name for name in built if name.startswith("rows/1.0.0/index/")] == [
        f"rows/1.0.0/index/rows-{split}-{shard:05d}-of-00004.idx" for split in ("test", "train", "validation")
        for shard in range(4)]


def test_sequences_from_jsonl_and_from_a_long_table_build_the_same_bytes_on_spark(spark, tmp_path, monkeypatch):
    monkeypatch.setenv(*next(iter(SMALL_TASKS.items())))
    specs, files = sequence_sources()
    for name, spec in specs.items():
        path = write_spec(tmp_path / name, spec, files)
        _same(*both(path, tmp_path / name))


def test_an_image_folder_builds_the_same_bytes_on_spark(spark, tmp_path, monkeypatch):
    monkeypatch.setenv("TFRECORD_BUILDER_TASK_BYTES", "4000")
    _same(*both(shapes_spec(tmp_path), tmp_path))


@pytest.mark.parametrize("output, manifest", [({"shards": 3}, False), ({"shuffle": False, "shards": 2}, False),
                                              ({"shards": 3}, True)], ids=["shuffled", "source-order", "manifest"])
def test_photos_in_one_copy_on_spark_are_the_usual_local_build_byte_for_byte(spark, tmp_path, monkeypatch, output,
                                                                              manifest):
    """A Spark task per shard of the keyed plan, each read, encoded and written whole by an
    executor's Python worker (no records through a shuffle: no encoding phase shown): the same
    files as the local runner's two-copy build (TFRECORD_BUILDER_ONE_COPY=0), from a folder of
    photos or a manifest naming them."""
    spec = photos_spec(tmp_path, output, manifest=manifest)
    out = tmp_path / "out"
    with monkeypatch.context() as usual:
        usual.setenv("TFRECORD_BUILDER_ONE_COPY", "0")
        tb.build(spec, output=out, workers=2)
    expected = _files(out)
    shutil.rmtree(out)
    said: list[tuple[str, int, int | None]] = []
    tb.build(spec, output=out, runner="spark", progress=lambda *shown: said.append(shown))
    _same(expected, _files(out))
    assert "encoding" not in [phase for phase, _, _ in said]
    assert said[-1] == ("writing", 40, 40)


def test_a_bad_photo_in_one_copy_on_spark_fails_as_the_usual_build_does(spark, tmp_path):
    """An executor that can't encode a shard's file sends the build down the usual job, which
    names the photo as the local runner does; the shards one copy wrote are gone."""
    spec = photos_spec(tmp_path, {"shards": 2}, count=12, bad=5)
    with pytest.raises(tb.DataError) as local:
        tb.build(spec, output=tmp_path / "local")
    with pytest.raises(tb.DataError) as built:
        tb.build(spec, output=tmp_path / "spark", runner="spark")
    assert str(built.value) == str(local.value)
    assert "photo_005.jpg" in str(built.value)
    left = [sorted(str(path.relative_to(tmp_path / way)) for path in (tmp_path / way).rglob("*")) for way in ("local", "spark")]
    assert left[0] == left[1]  # nothing that looks like a dataset either way (a lock file)


def test_a_custom_builder_runs_its_parts_on_the_executors(spark, tmp_path):
    """Each part of a custom builder's source is a partition: read once, by an executor's Python
    worker (another process than the driver), with the local runner's bytes."""
    spec = _parts_spec(tmp_path, 10_000, shuffle=False)
    out = tmp_path / "out"
    tb.build(spec, output=out)
    local = _files(out)
    shutil.rmtree(out)
    (tmp_path / "readers.txt").unlink()
    tb.build(spec, output=out, runner="spark")
    _same(local, _files(out))
    readers = (tmp_path / "readers.txt").read_text().split()
    assert len(readers) == 8 and str(os.getpid()) not in readers


@pytest.mark.parametrize("shuffle", [True, False], ids=["shuffled", "source-order"])
def test_a_duplicate_key_is_the_local_error_on_spark(spark, tmp_path, shuffle):
    spec = _parts_spec(tmp_path, 377, shuffle=shuffle)
    with pytest.raises(tb.DataError) as local:
        tb.build(spec, output=tmp_path / "a")
    with pytest.raises(tb.DataError) as built:
        tb.build(spec, output=tmp_path / "b", runner="spark")
    assert str(built.value) == str(local.value)
    assert not (tmp_path / "b" / "parts" / "1.0.0").exists()


@pytest.fixture(scope="module")
def on_disk(tmp_path_factory) -> tuple[Path, Path, dict[str, bytes]]:
    """A table's spec (with index files, from many read tasks), the folder the local runner built
    it into and the dataset's files there: what the builds into a bucket are compared with."""
    folder = tmp_path_factory.mktemp("bucket")
    spec = write_spec(folder, _tabular(index=True), {"rows.csv": _table(2000, bad=(9,))})
    with pytest.MonkeyPatch.context() as patched:
        patched.setenv(*next(iter(SMALL_TASKS.items())))
        tb.build(spec, output=folder / "disk")
    return spec, folder / "disk", _files(folder / "disk" / "rows" / "1.0.0")


def test_the_executors_write_the_shards_into_a_bucket_with_the_local_bytes(spark, s3, on_disk, monkeypatch):
    """Output in an S3 bucket (moto on 127.0.0.1): the executors write the shards there themselves,
    the driver the rest; every object is the local disk build's file (the module names its place)."""
    monkeypatch.setenv(*next(iter(SMALL_TASKS.items())))
    spec, disk, on_disk = on_disk
    tb.build(spec, output="s3://data/spark", runner="spark")
    stored = objects("spark/rows/1.0.0")
    assert sorted(stored) == sorted(on_disk)
    for name, content in on_disk.items():
        expected = content.replace(str(disk).encode(), b"s3://data/spark") if name.endswith(".py") else content
        assert stored[name] == expected, name
    assert not objects("spark/rows/.1.0.0.building")


def test_a_copy_that_lost_writes_nothing_into_the_bucket_after_the_build(spark, s3, on_disk, monkeypatch):
    """A shard's record in the manifest (the last object an attempt writes) held at the bucket's
    door: speculation runs a copy of its task on the other worker, which wins. The driver waits
    until Spark has stopped the attempt that lost before it publishes the dataset and clears the
    staging prefix, so the held write never lands: the bucket holds the dataset, nothing else.
    (Released once the driver clears the records, it would land after them: issue 38's objects
    left in `manifest/` by a busy machine's slow attempts.)"""
    monkeypatch.setenv(*next(iter(SMALL_TASKS.items())))
    spec, disk, on_disk = on_disk
    GATE.hold("PUT", r"^/data/late/rows/\.1\.0\.0\.building/manifest/[^/]+\.json$",
              until=lambda method, path, body: method == "POST" and "?delete" in path
              and b"/.1.0.0.building/manifest/" in body)
    try:
        tb.build(spec, output="s3://data/late", runner="spark")
    finally:
        GATE.clear()
    assert sorted(objects("late")) == sorted(f"rows/1.0.0/{name}" for name in on_disk)
    stored = objects("late/rows/1.0.0")
    for name, content in on_disk.items():
        expected = content.replace(str(disk).encode(), b"s3://data/late") if name.endswith(".py") else content
        assert stored[name] == expected, name
    assert (GATE.again, GATE.outcome) == (1, "dropped")  # a copy wrote the record; the attempt held was stopped


def test_bad_data_stops_a_spark_build_with_the_local_error(spark, tmp_path):
    spec = write_spec(tmp_path, {**_tabular(), "on_error": "fail"}, {"rows.csv": _table(300, bad=(40,))})
    with pytest.raises(tb.DataError) as local:
        tb.build(spec, output=tmp_path / "local")
    with pytest.raises(tb.DataError) as built:
        tb.build(spec, output=tmp_path / "spark", runner="spark")
    assert str(built.value) == str(local.value)


def test_the_spark_runner_is_a_runner_and_the_table_chooses_it():
    from tfrecord_builder.build.runners.spark import SparkRunner

    assert_chosen_runner("spark", SparkRunner, (True, False, True))


def test_spark_options_that_arent_key_value_are_one_line_and_exit_2(tmp_path):
    write_spec(tmp_path, _tabular(), {"rows.csv": _table(20)})
    result = run_cli("build", "spec.yaml", "--output", "out", "--runner", "spark", "--spark-conf", "spark.master",
                     cwd=tmp_path)
    assert_error(result, 2, ["error: --spark-conf: expected KEY=VALUE (e.g. spark.master=spark://host:7077), "
                             "received 'spark.master'"])
    result = run_cli("build", "spec.yaml", "--output", "out", "--spark-conf", "a=b", cwd=tmp_path)
    assert_error(result, 2, ["error: --spark-conf options are Spark's: give them with --runner spark"])
    assert not (tmp_path / "out").exists()


# a driver the command line starts (a session on local[N] of its own) without Spark's web UI: two
# test runs at once on one machine would otherwise share port 4040 and the ports after it
NO_UI = {"PYSPARK_SUBMIT_ARGS": "--conf spark.ui.enabled=false pyspark-shell"}


def _cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m tfrecord_builder ARGS` in a process of its own (a driver with its own session)."""
    return subprocess.run([sys.executable, "-m", "tfrecord_builder", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **NO_UI, **(env or {})}, timeout=600, stdin=subprocess.DEVNULL)


def test_a_spark_build_from_the_command_line_says_only_what_the_local_one_says(tmp_path):
    """Spark's JVM logs a dozen lines and draws progress bars on standard error: they go to a log
    file of its own, so the build's output is the local runner's, and nothing is left of the log."""
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java 17 or later (on PATH)")
    write_spec(tmp_path, _tabular(), {"rows.csv": _table(2000, bad=(3,))})
    local = _cli("build", "spec.yaml", "--output", "local", cwd=tmp_path)
    temporary = tmp_path / "tmp"  # the build's own temporary directory: other builds may run meanwhile
    temporary.mkdir()
    built = _cli("build", "spec.yaml", "--output", "spark", "--runner", "spark", "--workers", "2", cwd=tmp_path,
                 env={"TMPDIR": str(temporary)})
    assert (built.returncode, built.stderr) == (0, local.stderr)
    assert built.stdout.replace(str(tmp_path / "spark"), str(tmp_path / "local")).split("done in")[0] == \
        local.stdout.split("done in")[0]
    assert not list(temporary.glob("tfrecord-builder-spark-*.log"))
    _same(_files(tmp_path / "local" / "rows" / "1.0.0"), {
        name: content.replace(str(tmp_path / "spark").encode(), str(tmp_path / "local").encode())
        for name, content in _files(tmp_path / "spark" / "rows" / "1.0.0").items()})


def test_a_spark_master_that_doesnt_answer_is_one_line_before_anything_is_made(tmp_path):
    write_spec(tmp_path, _tabular(), {"rows.csv": _table(20)})
    said = _cli("build", "spec.yaml", "--output", "out", "--runner", "spark", "--spark-conf",
                "spark.master=spark://127.0.0.1:9", cwd=tmp_path)
    assert (said.returncode, said.stderr) == (2, "error: --spark-conf spark.master=spark://127.0.0.1:9: no Spark master "
                                                 "answers (127.0.0.1:9: Connection refused); start it, or name the "
                                                 "host and port it listens on (7077 unless set)\n")
    assert not (tmp_path / "out").exists()


CRASHING_BUILDER = '''
import json
import os
import tfrecord_builder as tb


class Crash(tb.Builder):
    def tasks(self, split):
        return [0, 1]

    def generate_task(self, split, task):
        yield f"k{task}", {"x": task}
        os._exit(3)  # the Python worker dies: Spark's reason to fail the job, not an exception of ours

    def generate(self, split):
        for task in self.tasks(split):
            yield from self.generate_task(split, task)
'''


def test_a_job_spark_fails_is_one_line_naming_spark_s_log(tmp_path):
    if shutil.which("java") is None:
        pytest.skip("Spark needs Java 17 or later (on PATH)")
    write_spec(tmp_path, {"name": "crash", "source": {"builder": "crash.py:Crash", "path": "crash.py"},
                          "features": {"x": {"dtype": "int64"}}}, {"crash.py": CRASHING_BUILDER})
    said = _cli("build", "spec.yaml", "--output", "out", "--runner", "spark", "--workers", "2", cwd=tmp_path)
    assert said.returncode == 1 and len(said.stderr.splitlines()) == 1, said.stderr
    assert said.stderr.startswith("error: the Spark job failed: Job aborted due to stage failure: ")
    assert "Python worker exited unexpectedly (crashed)" in said.stderr
    log = Path(said.stderr.split("(Spark's log: ")[1].rstrip(")\n"))
    assert "Python worker exited unexpectedly" in log.read_text()
    log.unlink()
    assert not (tmp_path / "out" / "crash" / "1.0.0").exists()


@pytest.mark.parametrize("hidden", ["out", "data"])
def test_a_folder_the_executors_dont_see_is_refused_before_a_shard_is_written(tmp_path, hidden):
    """The executors' Python workers run in a mount namespace of their own, with an empty file
    system over the output folder or over the source's: as on a cluster of other machines."""
    if shutil.which("java") is None or shutil.which("unshare") is None:
        pytest.skip("needs Java and unshare")
    import subprocess

    probe = subprocess.run(["unshare", "-m", "sh", "-c", f"mount -t tmpfs none {tmp_path}"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"can't make a mount namespace here: {probe.stderr.decode().strip()}")
    hide = tmp_path / "hide.sh"
    hide.write_text("#!/bin/sh\nexec unshare -m sh -c 'mount -t tmpfs none \"$HIDE\" && exec \"$REAL_PY\" \"$@\"' "
                    "sh \"$@\"\n")
    hide.chmod(0o755)
    spec = _tabular()
    spec["source"]["path"] = "data/rows.csv"
    write_spec(tmp_path, spec, {"data/rows.csv": _table(200)})
    (tmp_path / "out").mkdir()
    said = _cli("build", "spec.yaml", "--output", "out", "--runner", "spark", "--workers", "2", cwd=tmp_path,
                env={"PYSPARK_PYTHON": str(hide), "REAL_PY": sys.executable, "HIDE": str(tmp_path / hidden)})
    host = os.uname().nodename
    assert (said.returncode, said.stderr) == (2, {
        "out": f"error: {tmp_path / 'out' / 'rows'}: Spark's executors (on {host}) can't see this folder of the "
               "driver's machine; build into a folder every executor shares (the same path on each), or into an "
               "object store (s3://..., gs://...)\n",
        "data": f"error: spec.yaml, line 4: source.path: {tmp_path / 'data' / 'rows.csv'} not found on Spark's "
                f"executors (on {host}), which read the sources themselves; give a path every executor sees (the "
                "same on each) or an object-store URL\n"}[hidden])
    assert sorted(path.name for path in (tmp_path / "out" / "rows").iterdir()) == [".1.0.0.lock"]


def _local_bytes(spec: Path, out: Path) -> dict[str, bytes]:
    """Every file the local runner builds of `spec` into `out` (removed again)."""
    tb.build(spec, output=out)
    built = _files(out)
    shutil.rmtree(out)
    return built


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> tuple[Path, Path, dict[str, bytes]]:
    """big_table's 30,000 rows in 48 shards, from many read tasks: its spec, the folder every build
    of it goes into (one at a time: each test empties it first) and the local runner's files there."""
    folder = tmp_path_factory.mktemp("big")
    spec = big_table(folder, 30000)
    with pytest.MonkeyPatch.context() as patched:
        patched.setenv(*next(iter(SMALL_TASKS.items())))
        return spec, folder / "out", _local_bytes(spec, folder / "out")


def test_an_executor_killed_while_it_writes_shards_changes_no_byte(spark, big, monkeypatch):
    """SIGKILL to an executor JVM (and so its Python workers) once the first shard is in place:
    Spark starts another executor and runs the lost tasks again (and the steps whose outputs it
    held); the dataset is the local runner's, without a partial or doubled shard."""
    import signal
    import threading

    monkeypatch.setenv(*next(iter(SMALL_TASKS.items())))
    spec, out, expected = big
    shutil.rmtree(out, ignore_errors=True)
    before = executors(spark)
    assert len(before) == 2
    entries = out / "rows" / ".1.0.0.building" / "manifest"
    killed = []

    def kill() -> None:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not list(entries.glob("*.json")):
            time.sleep(0.005)
        victim = min(before)
        os.kill(victim, signal.SIGKILL)
        killed.append((victim, len(list(entries.glob("*.json")))))

    killer = threading.Thread(target=kill)
    killer.start()
    tb.build(spec, output=out, runner="spark")
    killer.join()
    assert killed and 0 < killed[0][1] < 48, killed  # mid-write: some shards done, not all
    _same(expected, _files(out))
    after = executors(spark)
    assert killed[0][0] not in after and len(after) == 2  # a new executor took the lost one's place
    assert set(after.values()) - set(before.values())


SLOW_FIRST_ATTEMPT = '''
import json
import os
import pathlib
import time
import tfrecord_builder as tb


class Slow(tb.Builder):
    """Part 0's first attempt is slow (on Spark): it waits until Spark has started a second one
    beside it (whenever a busy machine lets it), and then some."""

    def tasks(self, split):
        return list(range(8))

    def generate_task(self, split, task):
        from pyspark import TaskContext

        context = TaskContext.get()
        if context is not None:
            attempts = os.path.join(os.path.dirname(self.path), "attempts.txt")
            with open(attempts, "a") as file:
                file.write(f"{task} {context.attemptNumber()}\\n")
            if task == 0 and context.attemptNumber() == 0:
                deadline = time.monotonic() + 600  # a bound for a run where none comes: it fails, not hangs
                while "0 1" not in pathlib.Path(attempts).read_text().split("\\n") and time.monotonic() < deadline:
                    time.sleep(0.05)
                time.sleep(1)  # both attempts at once
        for number in range(task * 100, task * 100 + 100):
            yield f"n{number}", {"x": number}

    def generate(self, split):
        for task in self.tasks(split):
            yield from self.generate_task(split, task)
'''


def test_a_task_run_twice_at_once_by_speculation_changes_no_byte(spark, tmp_path):
    spec = write_spec(tmp_path, {"name": "slow", "source": {"builder": "slow.py:Slow", "path": "slow.py"},
                                 "features": {"x": {"dtype": "int64"}}, "splits": {"train": 0.5, "test": 0.5},
                                 "output": {"shards": 2}}, {"slow.py": SLOW_FIRST_ATTEMPT})
    out = tmp_path / "out"
    tb.build(spec, output=out)
    expected = _files(out)
    shutil.rmtree(out)
    tb.build(spec, output=out, runner="spark")
    attempts = (tmp_path / "attempts.txt").read_text().split("\n")
    assert "0 0" in attempts and "0 1" in attempts  # part 0: two attempts, the second a speculative copy
    _same(expected, _files(out))


def test_a_killed_spark_driver_resumes_keeping_its_finished_shards(big, tmp_path, monkeypatch):
    """The driver (the CLI, its JVM and its local executors) killed with SIGKILL once some shards
    are in place: `--resume` on Spark keeps them as they are and writes the rest, the local bytes."""
    import signal
    import subprocess

    if shutil.which("java") is None:
        pytest.skip("Spark needs Java 17 or later (on PATH)")
    monkeypatch.setenv(*next(iter(SMALL_TASKS.items())))
    spec, out, expected = big
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "tfrecord_builder", "build", str(spec), "--output", str(out), "--runner", "spark",
               "--workers", "2"]
    job = subprocess.Popen(command, env={**os.environ, **NO_UI, **SMALL_TASKS}, start_new_session=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    entries = out / "rows" / ".1.0.0.building" / "manifest"
    deadline = time.monotonic() + 300
    while job.poll() is None and time.monotonic() < deadline and not list(entries.glob("*.json")):
        time.sleep(0.005)
    os.killpg(job.pid, signal.SIGKILL)  # the driver, its JVM and every Python worker, mid-write
    job.wait()
    finished = {entry.name.removesuffix(".json"): (entries.parent / entry.name.removesuffix(".json")).stat().st_mtime_ns
                for entry in entries.glob("*.json")}
    assert 0 < len(finished) < 48 and not (out / "rows" / "1.0.0").exists()
    resumed = _cli("build", str(spec), "--output", str(out), "--runner", "spark", "--workers", "2", "--resume",
                   cwd=tmp_path, env=SMALL_TASKS)
    assert (resumed.returncode, resumed.stderr) == (0, "")
    _same(expected, _files(out))
    for name, written in finished.items():  # kept as they were, not written again
        assert (out / "rows" / "1.0.0" / name).stat().st_mtime_ns == written


def test_a_disk_the_executors_fill_is_one_line_and_the_build_resumes_when_there_is_room(spark, small_disk, tmp_path,
                                                                                       monkeypatch):
    """The output on a small tmpfs left with room for part of the shards: the executor's full
    disk is the local runner's one line, nothing looks finished, and `resume` completes it."""
    import re

    monkeypatch.setenv("TFRECORD_BUILDER_TASK_BYTES", "500000")  # about ten read tasks
    rows = "id,x,text\n" + "".join(f"{row},{row * 0.37:.6f},{row:06d}{'z' * 200}\n" for row in range(8000))
    spec = write_spec(tmp_path, {"name": "rows", "source": {"builder": "csv", "path": "rows.csv"},
                                 "features": {"x": {"dtype": "float32"}, "text": {"dtype": "string"}},
                                 "splits": {"train": 0.8, "test": 0.2}, "output": {"shards": 8}}, {"rows.csv": rows})
    out = small_disk / "out"
    expected = _local_bytes(spec, out)
    ballast = fill(small_disk, leave=800 * 1024)  # room for about half the shards
    with pytest.raises(DiskFullError) as failed:
        tb.build(spec, output=out, runner="spark")
    assert re.fullmatch(rf"{re.escape(str(out))}/rows/\.1\.0\.0\.building: the disk is full \(No space left on device\) "
                        r"writing \.?rows-(train|test)\.tfrecord-\d{5}-of-00008\S*; free space and run again with "
                        r"--resume", str(failed.value)), str(failed.value)
    assert not (out / "rows" / "1.0.0").exists()
    ballast.unlink()
    tb.build(spec, output=out, runner="spark", resume=True)
    _same(expected, _files(out))
