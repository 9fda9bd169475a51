"""The build's lock: one build of a dataset at a time, and a resume right after a kill."""
import fcntl
import subprocess
import sys
import time

import pytest

from tfrecord_builder.errors import UsageError
from tfrecord_builder.write import publish


def test_a_second_build_of_one_dataset_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(publish, "LOCK_WAIT_SECONDS", 0.2)
    folder = str(tmp_path / "big" / "1.0.0")
    with publish.build_lock(folder):
        started = time.monotonic()
        with pytest.raises(UsageError) as error:
            with publish.build_lock(folder):
                pass
        assert time.monotonic() - started >= 0.2
    assert str(error.value) == f"{folder}: another build of this dataset is running"
    with publish.build_lock(folder):  # released by the first
        pass


def test_a_lock_held_by_a_dying_process_is_waited_for(tmp_path, monkeypatch):
    """A killed build's workers hold its lock until their own SIGKILL lands: a resume waits for them."""
    # the wait raised from LOCK_WAIT_SECONDS: the holder's 0.5 s and its exit may take seconds on
    # a busy machine; that it waits at all is what is tested here
    monkeypatch.setattr(publish, "LOCK_WAIT_SECONDS", 120.0)
    folder = tmp_path / "big" / "1.0.0"
    folder.parent.mkdir(parents=True)
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, sys, time\n"
        f"lock = open({str(folder.parent / '.1.0.0.lock')!r}, 'w')\n"
        "fcntl.flock(lock, fcntl.LOCK_EX)\n"
        "print('held', flush=True)\n"
        "time.sleep(0.5)\n"
        "print('letting go', flush=True)\n")], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "held\n"
    with open(folder.parent / ".1.0.0.lock", "w") as probe:  # held now by the other process
        with pytest.raises(BlockingIOError):
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
    with publish.build_lock(str(folder)):  # without the wait, refused as the probe was
        assert holder.stdout.readline() == "letting go\n"  # written before the holder let go
    assert holder.wait(timeout=120) == 0
