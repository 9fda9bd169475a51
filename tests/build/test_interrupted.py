"""A build killed at any moment (SIGKILL) leaves the previous dataset whole, or none at all."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import tfrecord_builder as tb
from tfrecord_builder.features import TensorFeature
from tfrecord_builder.tools.verify import verify

import pytest

from conftest import write_spec

SPEC = {"name": "big", "source": {"builder": "csv", "path": "rows.csv"}, "output": {"shards": 8},
        "features": {"id": {"dtype": "int64"}, "text": {"dtype": "string"}, "v": {"dtype": "float32", "shape": [8]}}}


def _rows(tag: str, count: int) -> str:
    return "id,text,v\n" + "".join(f"{i},{tag}-{i}-{'x' * 40},{' '.join(['1.5'] * 8)}\n" for i in range(count))


def test_killed_overwrites_leave_a_whole_dataset(tmp_path):
    spec = write_spec(tmp_path, SPEC, {"rows.csv": _rows("old", 20000)})
    old = tb.build(spec, output=tmp_path / "out", workers=1)
    old_digests = {shard["file"]: shard["sha256"] for shard in old.splits["train"].shards}
    (tmp_path / "rows.csv").write_text(_rows("new", 30000))
    command = [sys.executable, "-m", "tfrecord_builder", "build", str(spec), "--output", str(tmp_path / "out"),
               "--overwrite", "--workers", "1"]
    outcomes = set()
    for delay in (0.2, 0.6, 1.0, 1.4, 1.8, 2.4, 3.5):
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.wait()
        result = verify(old.path)  # whatever is at the dataset's path is a whole dataset
        assert result.ok, (delay, result.faults)
        digests = {shard["file"]: shard["sha256"] for shard in result.info.splits["train"].shards}
        outcomes.add("old" if digests == old_digests else "new")
        assert result.num_records in (20000, 30000)
    finished = subprocess.run(command, capture_output=True, text=True)
    assert finished.returncode == 0, finished.stderr
    assert verify(old.path).num_records == 30000
    leftovers = [name for name in os.listdir(tmp_path / "out" / "big") if name not in ("1.0.0", ".1.0.0.lock")]
    assert leftovers == []  # stale staging folders of killed builds are cleared by the next build
    assert "old" in outcomes  # at least the early kills happened before the new dataset was published


def test_overwrite_never_deletes_a_folder_it_did_not_make(tmp_path):
    spec = write_spec(tmp_path, SPEC, {"rows.csv": _rows("x", 10)})
    theirs = tmp_path / "out" / "big" / "1.0.0"
    theirs.mkdir(parents=True)
    (theirs / "thesis.tex").write_text("years of work")
    for overwrite in (False, True):
        try:
            tb.build(spec, output=tmp_path / "out", overwrite=overwrite, workers=1)
        except tb.UsageError as error:
            assert "was not made by tfrecord-builder; refusing to write into it" in str(error)
        else:
            raise AssertionError("built over a folder of the user's")
    assert (theirs / "thesis.tex").read_text() == "years of work"
    result = subprocess.run([sys.executable, "-m", "tfrecord_builder", "build", str(spec), "--output",
                             str(tmp_path / "out"), "--overwrite"], capture_output=True, text=True)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "refusing" in result.stderr
    assert (theirs / "thesis.tex").exists()


def test_building_over_a_finished_dataset_needs_overwrite(tmp_path):
    spec = write_spec(tmp_path, SPEC, {"rows.csv": _rows("x", 10)})
    tb.build(spec, output=tmp_path / "out", workers=1)
    try:
        tb.build(spec, output=tmp_path / "out", workers=1)
    except tb.UsageError as error:
        assert "a dataset is already built there; pass --overwrite to replace it" in str(error)
    else:
        raise AssertionError("rebuilt without --overwrite")


def test_resume_keeps_the_finished_shards_and_ends_byte_identical(tmp_path):
    spec = write_spec(tmp_path, {**SPEC, "output": {"shards": 12}}, {"rows.csv": _rows("r", 60000)})
    reference = tb.build(spec, output=tmp_path / "reference", workers=1)
    expected = {shard["file"]: shard["sha256"] for shard in reference.splits["train"].shards}
    staging = tmp_path / "out" / "big" / ".1.0.0.building"
    command = [sys.executable, "-m", "tfrecord_builder", "build", str(spec), "--output", str(tmp_path / "out"),
               "--workers", "1"]
    kept_any = False
    for wanted in (2, 7):
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        manifest = staging / "manifest.jsonl"
        deadline = time.monotonic() + 600  # a bound for a build that never gets there, not a measure
        while time.monotonic() < deadline and process.poll() is None:
            if manifest.exists() and len(manifest.read_text().splitlines()) > wanted:
                break
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
        process.wait()
        if process.returncode == 0:
            continue  # finished before the kill: nothing to resume this time
        finished = {line for line in manifest.read_text().splitlines()[1:]}
        times = {json.loads(line)["file"]: os.stat(staging / json.loads(line)["file"]).st_mtime_ns
                 for line in finished}
        with pytest.raises(tb.DatasetError):
            tb.load(tmp_path / "out" / "big" / "1.0.0")  # nothing finished-looking yet
        # what a kill while a shard was being written leaves (a shard moves into place when whole)
        (staging / f".big-train.tfrecord-00011-of-00012.tmp-{process.pid}").write_bytes(b"half a shard")
        resumed = tb.build(spec, output=tmp_path / "out", resume=True, workers=1)
        assert sorted(os.listdir(resumed.path)) == sorted([".made-by-tb", "big_input.py", "dataset_info.json",
                                                           "tfrecord_builder.json", "features.json", "index",
                                                           "splits", *expected]), "a stray file in the finished dataset"
        assert sorted(os.listdir(os.path.join(resumed.path, "index"))) == sorted(
            f"{name.replace('.tfrecord-', '-')}.idx" for name in expected), "a stray index file"
        assert {shard["file"]: shard["sha256"] for shard in resumed.splits["train"].shards} == expected
        assert verify(resumed.path).ok
        for file, mtime in times.items():  # the finished shards were kept, not written again
            assert os.stat(tmp_path / "out" / "big" / "1.0.0" / file).st_mtime_ns == mtime
            kept_any = True
        assert not (tmp_path / "out" / "big" / "1.0.0" / "manifest.jsonl").exists()
        tb.build(spec, output=tmp_path / "out", overwrite=True, workers=1)  # next round from a finished dataset
        shutil.rmtree(tmp_path / "out" / "big" / "1.0.0")
    assert kept_any


BATCH_ROWS = 2000  # many batches, so a kill lands between checkpoints
CHECKPOINT_EVERY_BATCH = ("import sys; from tfrecord_builder.write import checkpoint; checkpoint.INTERVAL = 0; "
                          f"from tfrecord_builder.features import TensorFeature; TensorFeature.batch_rows = {BATCH_ROWS}; "
                          "from tfrecord_builder.cli.main import main; sys.exit(main())")


def _kill_after_checkpoint(command: list[str], staging, batches: int) -> dict:
    """Runs `command` until its checkpoint holds at least `batches` batches, then SIGKILLs it."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    path = staging / "checkpoint.json"
    deadline = time.monotonic() + 600  # a bound for a build that never gets there, not a measure
    state = {}
    while time.monotonic() < deadline and process.poll() is None:
        try:
            state = json.loads(path.read_text())
        except (OSError, ValueError):
            state = {}
        if state.get("batches", 0) >= batches:
            break
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL, "the build finished before it could be killed"
    return json.loads(path.read_text())


@pytest.mark.parametrize("workers", [1, 2])
def test_resume_encodes_only_the_batches_after_the_checkpoint(tmp_path, monkeypatch, workers):
    """Runs spilled by the build's process, or written by workers (whose runs a checkpoint lists
    as they come back, in order): the resumed build encodes only the rest, with the same bytes."""
    monkeypatch.setattr(TensorFeature, "batch_rows", BATCH_ROWS)  # batched as the killed build was
    spec = write_spec(tmp_path, {**SPEC, "splits": {"train": 0.8, "test": 0.2}, "output": {"shards": 4}},
                      {"rows.csv": _rows("c", 60000)})
    reference = tb.build(spec, output=tmp_path / "reference", workers=1)
    workers_at_once = "from tfrecord_builder.build import encoding; encoding.IN_PROCESS_SECONDS = encoding.PARALLEL_SECONDS = 0; "
    command = [sys.executable, "-c", workers_at_once + CHECKPOINT_EVERY_BATCH, "build", str(spec),
               "--output", str(tmp_path / "out"), "--workers", str(workers)]
    state = _kill_after_checkpoint(command, tmp_path / "out" / "big" / ".1.0.0.building", 5)
    assert 0 < state["records"] < 60000 and any(split["runs"] for split in state["splits"].values())
    if workers > 1:  # run-SPLIT-TOKEN-N: written by a worker
        assert any(len(run.split("-")) == 4 for split in state["splits"].values() for run in split["runs"])

    # a run written after the checkpoint (as a worker may have before the kill): gone before encoding resumes
    stray = tmp_path / "out" / "big" / ".1.0.0.building" / "runs" / "run-train-0123456789ab-000999"
    stray.write_bytes(b"\0" * 24)
    from tfrecord_builder.build import encoding
    encoded_rows, stray_seen = [], []
    original = encoding.encode_batch
    monkeypatch.setattr(encoding, "encode_batch", lambda features, batch, *args, **kwargs: (
        encoded_rows.append(len(batch)), stray_seen.append(stray.exists()), original(features, batch, *args, **kwargs))[-1])
    resumed = tb.build(spec, output=tmp_path / "out", resume=True, workers=1)
    assert stray_seen and not any(stray_seen)
    assert sum(encoded_rows) == 60000 - state["records"]  # the checkpointed rows were read, not encoded
    assert resumed.to_dict()["splits"] == reference.to_dict()["splits"]  # every shard's sha256
    assert resumed.statistics == reference.statistics  # merged in the same order: the same floats
    assert state["members"] == {split: f"members-{split}-{state['batches']:09d}.u64" for split in ("train", "test")}
    for split in ("train", "test"):  # the checkpointed batches' key hashes, restored with the rest
        name = f"splits/big-{split}.keys"
        assert (Path(resumed.path) / name).read_bytes() == (Path(reference.path) / name).read_bytes()
    assert sorted(os.listdir(tmp_path / "out" / "big")) == [".1.0.0.lock", "1.0.0"]  # runs and checkpoint gone


def test_a_checkpoint_of_other_data_is_dropped(tmp_path, monkeypatch):
    monkeypatch.setattr(TensorFeature, "batch_rows", BATCH_ROWS)
    spec = write_spec(tmp_path, {**SPEC, "output": {"shards": 2}}, {"rows.csv": _rows("a", 60000)})
    command = [sys.executable, "-c", CHECKPOINT_EVERY_BATCH, "build", str(spec), "--output", str(tmp_path / "out"),
               "--workers", "1"]
    _kill_after_checkpoint(command, tmp_path / "out" / "big" / ".1.0.0.building", 3)
    (tmp_path / "rows.csv").write_text(_rows("b", 50000))  # the rows the checkpoint holds are gone
    resumed = tb.build(spec, output=tmp_path / "out", resume=True, workers=1)
    fresh = tb.build(spec, output=tmp_path / "fresh", workers=1)
    assert resumed.to_dict()["splits"] == fresh.to_dict()["splits"]
    assert resumed.splits["train"].num_examples == 50000


@pytest.mark.parametrize("max_runs", [128, 4])
def test_a_build_killed_while_writing_resumes_without_encoding(tmp_path, monkeypatch, max_runs):
    """With its 30 runs, or those merged into 4 longer ones first (which the checkpoint then lists)."""
    monkeypatch.setattr(TensorFeature, "batch_rows", BATCH_ROWS)
    spec = write_spec(tmp_path, {**SPEC, "output": {"shards": 12}}, {"rows.csv": _rows("w", 60000)})
    reference = tb.build(spec, output=tmp_path / "reference", workers=1)
    fan_in = f"from tfrecord_builder.write import collect; collect.MAX_RUNS = {max_runs}; "
    command = [sys.executable, "-c", fan_in + CHECKPOINT_EVERY_BATCH, "build", str(spec),
               "--output", str(tmp_path / "out"), "--workers", "1"]
    staging = tmp_path / "out" / "big" / ".1.0.0.building"
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600  # a bound for a build that never gets there, not a measure
    while time.monotonic() < deadline and process.poll() is None:
        manifest = staging / "manifest.jsonl"
        if manifest.exists() and len(manifest.read_text().splitlines()) > 3:
            break
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    assert process.wait() == -signal.SIGKILL
    state = json.loads((staging / "checkpoint.json").read_text())
    assert state["records"] == 60000
    assert len(state["splits"]["train"]["runs"]) == min(30, max_runs)
    assert sorted(os.listdir(staging / "runs")) == sorted(  # the merged ones gone
        state["splits"]["train"]["runs"] + list(state["members"].values()))

    from tfrecord_builder.build import encoding
    encoded_rows = []
    monkeypatch.setattr(encoding, "encode_batch", lambda *args, **kwargs: encoded_rows.append(1))
    resumed = tb.build(spec, output=tmp_path / "out", resume=True, workers=1)
    assert encoded_rows == []  # every record came from the checkpoint's runs
    assert resumed.to_dict()["splits"] == reference.to_dict()["splits"]
    assert resumed.statistics == reference.statistics


def _children(pid: int) -> set[int]:
    children: set[int] = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return children  # the build has ended
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as file:
                children.update(int(child) for child in file.read().split())
        except (FileNotFoundError, ProcessLookupError):
            continue  # a thread that ended between the listing and the read
    return children


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers die with the build on Linux")
def test_a_killed_build_takes_its_workers_with_it(tmp_path):
    """SIGKILL of a build with workers: they die too, so they neither hold the dataset's lock nor
    write into the staging folder, and `--resume` can start at once."""
    spec = write_spec(tmp_path, SPEC, {"rows.csv": _rows("w", 200000)})
    # workers from the first batch on: at the build's own pace a fast machine encodes the rows in
    # its process before the pool would pay (encode_batches), and no worker would be seen
    command = [sys.executable, "-c", "from tfrecord_builder.build import encoding; "
               "encoding.IN_PROCESS_SECONDS = encoding.PARALLEL_SECONDS = 0; "
               "from tfrecord_builder.cli.main import main; import sys; sys.exit(main())",
               "build", str(spec), "--output", str(tmp_path / "out"), "--workers", "2"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600  # a bound for a build that never gets there, not a measure
    workers: set[int] = set()
    while time.monotonic() < deadline and process.poll() is None and len(workers) < 2:
        workers = _children(process.pid)
        time.sleep(0.005)
    assert len(workers) >= 2, "the build ended before its workers could be seen"
    process.send_signal(signal.SIGKILL)
    process.wait()
    deadline = time.monotonic() + 60  # the kernel's SIGKILL, and a busy machine's teardown of each
    while time.monotonic() < deadline and any(os.path.exists(f"/proc/{pid}") for pid in workers):
        time.sleep(0.01)
    alive = [pid for pid in workers if os.path.exists(f"/proc/{pid}")
             and open(f"/proc/{pid}/stat").read().split()[2] != "Z"]
    assert not alive
    resumed = tb.build(spec, output=tmp_path / "out", resume=True, workers=2)  # no "another build is running"
    assert sum(split.num_examples for split in resumed.splits.values()) == 200000
