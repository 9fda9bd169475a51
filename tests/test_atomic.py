"""The one way a local file is written whole or not at all (tfrecord_builder/atomic.py), and that
every file a build writes goes through it under a name the clean-up after a killed build knows."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrecord_builder as tb
from tfrecord_builder import atomic
from tfrecord_builder.features import TensorFeature
from tfrecord_builder.build import encoding
from tfrecord_builder.write import checkpoint, collect

from conftest import ROOT, write_spec

ROWS = "id,w,v\n" + "".join(f"{i},w{i % 7},{i * 0.5}\n" for i in range(600))
SPEC = {"name": "d", "version": "1.0.0", "source": {"builder": "csv", "path": "d.csv", "key": "id"},
        "splits": {"train": 0.7, "test": 0.3}, "output": {"shards": 3, "index": True},
        "features": {"id": {"dtype": "int64"}, "w": {"dtype": "string"}, "v": {"dtype": "float32"}}}


def test_a_killed_write_leaves_the_old_file_and_a_temporary_name_the_clean_up_finds(tmp_path):
    target = tmp_path / "data.bin"
    target.write_bytes(b"old")
    script = ("import os, signal, sys; from tfrecord_builder.atomic import AtomicFile\n"
              "with AtomicFile(sys.argv[1]) as file:\n"
              "    file.write(b'new, half of it'); file.flush(); os.kill(os.getpid(), signal.SIGKILL)\n")
    killed = subprocess.run([sys.executable, "-c", script, str(target)], env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert killed.returncode == -signal.SIGKILL
    assert target.read_bytes() == b"old"
    left = sorted(name for name in os.listdir(tmp_path) if name != "data.bin")
    assert len(left) == 1 and atomic.is_temporary(left[0]) and left[0].startswith(".data.bin.tmp-")
    assert (tmp_path / left[0]).read_bytes() == b"new, half of it"
    assert atomic.remove_temporaries(str(tmp_path)) == [str(tmp_path / left[0])]
    assert os.listdir(tmp_path) == ["data.bin"]


@settings(max_examples=30, deadline=None)
@given(old=st.binary(max_size=64), new=st.binary(max_size=64), fail_after=st.integers(0, 64) | st.none())
def test_the_target_is_the_old_file_or_the_new_one_never_part_of_one(tmp_path_factory, old, new, fail_after):
    folder = tmp_path_factory.mktemp("atomic")
    target = folder / "f"
    target.write_bytes(old)
    try:
        with atomic.AtomicFile(str(target)) as file:
            for at, byte in enumerate(new):
                if at == fail_after:
                    raise RuntimeError("the writer failed")
                file.write(bytes([byte]))
    except RuntimeError:
        assert target.read_bytes() == old
    else:
        assert target.read_bytes() == new
    assert os.listdir(folder) == ["f"]  # an error removes what was written aside


@pytest.mark.parametrize("name, temporary", [
    (".d-train.tfrecord-00000-of-00003.tmp-123-0a1b2c3d", True),
    (".checkpoint.json.tmp-9-ffffffff", True),
    (".d-train.tfrecord-00000-of-00003.tmp-123", True),  # a killed earlier 0.3 build's
    ("d-train.tfrecord-00000-of-00003", False),
    (".made-by-tb", False),
    ("run-train-0a1b2c3d4e5f-000001", False),
    (".d-train.tfrecord-00000-of-00003.tmp-123-0a1b2c3d.json", False),
])
def test_is_temporary(name, temporary):
    assert atomic.is_temporary(name) is temporary
    assert atomic.is_temporary(os.path.basename(atomic.temporary(os.path.join("x", name))))  # any file's


def _build_setup(tmp_path, monkeypatch):
    """A build that writes every kind of file: shards, index files, runs (spilled by workers),
    checkpoints, split membership, the module and metadata."""
    monkeypatch.setattr(collect, "SPILL_BYTES", 2000)  # a run every batch
    monkeypatch.setattr(TensorFeature, "batch_rows", 97)
    monkeypatch.setattr(encoding, "IN_PROCESS_SECONDS", 0)  # the workers write runs
    monkeypatch.setattr(checkpoint, "INTERVAL", 0)  # a checkpoint every batch
    return write_spec(tmp_path, SPEC, {"d.csv": ROWS})


def test_every_file_a_build_writes_goes_through_a_name_the_clean_up_recognises(tmp_path, monkeypatch):
    spec = _build_setup(tmp_path, monkeypatch)
    log = tmp_path / "replaced.log"
    real = os.replace

    def replace(source, target):  # forked workers inherit it: a log file, not a list
        with open(log, "a") as file:
            file.write(f"{source}\t{target}\n")
        real(source, target)

    monkeypatch.setattr(os, "replace", replace)
    info = tb.build(spec, output=tmp_path / "out", workers=2)
    moves = [line.split("\t") for line in log.read_text().splitlines()]
    assert all(os.path.dirname(source) == os.path.dirname(target) for source, target in moves)
    assert [source for source, _ in moves if not atomic.is_temporary(os.path.basename(source))] == []
    staging = str(tmp_path / "out" / "d" / ".1.0.0.building")
    written = {os.path.relpath(os.path.dirname(target), staging) for _, target in moves}
    assert {".", "index", "splits", "runs"} <= written, written
    assert len(info.splits["train"].shards) == 3


@pytest.mark.parametrize("failing", [1, 5, 12, 30])
def test_a_build_stopped_at_any_move_leaves_only_names_the_clean_up_finds(tmp_path, monkeypatch, failing):
    spec = _build_setup(tmp_path, monkeypatch)
    real, calls = os.replace, []

    def replace(source, target):  # what a kill between writing a file and moving it leaves
        calls.append(source)
        if len(calls) == failing:
            raise OSError(f"stopped before moving {source}")
        real(source, target)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="stopped before moving"):
        tb.build(spec, output=tmp_path / "out", workers=1)
    staging = tmp_path / "out" / "d" / ".1.0.0.building"
    left = [os.path.join(root, name) for root, _, names in os.walk(staging) for name in names if ".tmp" in name]
    assert calls[failing - 1].startswith(str(staging))
    # the file not moved is left (unless its folder went with the build's error: spilled runs)
    assert left in ([], [calls[failing - 1]])
    assert atomic.remove_temporaries(str(staging)) == left
    monkeypatch.setattr(os, "replace", real)
    resumed = tb.build(spec, output=tmp_path / "out", workers=1, resume=True)
    assert [name for _, _, names in os.walk(resumed.path) for name in names if ".tmp" in name] == []
