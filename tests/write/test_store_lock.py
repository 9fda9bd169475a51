"""The build's lock in an object store (an S3 server on 127.0.0.1, moto): an object created only if
absent, so two builds on two machines exclude each other; rewritten while its build runs; one left
unrefreshed past the stale time (a killed build's) is taken over with a warning, by one build only."""
from __future__ import annotations

import json
import os
import re
import socket
import threading
import time
from datetime import timedelta

import pytest

from support.object_store import objects
from tfrecord_builder import fs
from tfrecord_builder.errors import UsageError
from tfrecord_builder.write import publish

pytestmark = pytest.mark.server


def _lock(prefix: str) -> dict:
    return json.loads(objects(prefix)[".1.0.0.lock"])


def test_the_store_creates_an_object_only_if_absent_and_replaces_only_the_version_seen(s3):
    url = "s3://data/lock-cas/thing"
    assert fs.creates_in_store(url) and fs.create_exclusive(url, b"first")
    assert not fs.create_exclusive(url, b"second")
    seen = fs.version(url)
    assert objects("lock-cas") == {"thing": b"first"} and fs.version("s3://data/lock-cas/nothing") is None
    tag = fs.replace_if(url, b"third", seen.tag)
    assert tag is not None and tag != seen.tag and fs.version(url).tag == tag
    assert fs.replace_if(url, b"fourth", seen.tag) is None  # changed since it was seen
    assert fs.replace_if("s3://data/lock-cas/gone", b"fifth", seen.tag) is None
    assert objects("lock-cas") == {"thing": b"third"}


def test_a_second_build_is_refused_while_the_first_holds_the_lock_and_takes_it_after(s3, monkeypatch):
    monkeypatch.delenv(publish.LOCK_STALE_VARIABLE, raising=False)
    folder = "s3://data/lock-held/rows/1.0.0"
    with publish.build_lock(folder):
        held = _lock("lock-held/rows")
        assert (held["host"], held["pid"]) == (socket.gethostname(), os.getpid())
        with pytest.raises(UsageError) as refused:
            with publish.build_lock(folder):
                pass
    assert re.fullmatch(
        r"s3://data/lock-held/rows/1\.0\.0: another build of this dataset is running \(host [^,]+, pid \d+, since "
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\); wait for it to end; if it was killed, its lock "
        r"s3://data/lock-held/rows/\.1\.0\.0\.lock is taken over by a build started after "
        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(300 s after its last refresh\), "
        r"or remove the lock if you know no build is running",
        str(refused.value)), str(refused.value)
    assert held["since"] in str(refused.value)
    assert objects("lock-held/rows") == {}  # released
    with publish.build_lock(folder):
        assert list(objects("lock-held/rows")) == [".1.0.0.lock"]


def test_the_lock_is_removed_when_the_build_fails(s3):
    with pytest.raises(RuntimeError):
        with publish.build_lock("s3://data/lock-failed/rows/1.0.0"):
            assert list(objects("lock-failed/rows")) == [".1.0.0.lock"]
            raise RuntimeError("bad data")
    assert objects("lock-failed/rows") == {}


def test_a_lock_left_unrefreshed_is_taken_over_with_a_warning(s3, monkeypatch, capsys):
    """A killed build's lock: its body says who held it; nothing refreshes it."""
    folder = "s3://data/lock-killed/rows/1.0.0"
    body = {"host": "elsewhere", "pid": 4242, "token": "x", "since": "2026-01-02 03:04:05 UTC",
            "refreshed": "2026-01-02 03:04:05 UTC"}
    assert fs.create_exclusive(publish.lock_url(folder), json.dumps(body).encode())
    monkeypatch.setenv(publish.LOCK_STALE_VARIABLE, "1")
    time.sleep(2.1)  # the store's clock counts whole seconds
    with publish.build_lock(folder):
        assert _lock("lock-killed/rows")["pid"] != 4242
    warning = capsys.readouterr().err
    assert re.fullmatch(r"warning: s3://data/lock-killed/rows/1\.0\.0: took over the lock of a build that stopped "
                        r"\d+ s ago \(host elsewhere, pid 4242, since 2026-01-02 03:04:05 UTC\), a killed build's: "
                        r"its lock s3://data/lock-killed/rows/\.1\.0\.0\.lock went more than 1 s without a refresh\n",
                        warning), warning
    assert objects("lock-killed/rows") == {}


def test_of_two_builds_taking_over_one_stale_lock_one_wins(s3, monkeypatch):
    """Both judge the same version stale; the store replaces it for the first only."""
    folder = "s3://data/lock-race/rows/1.0.0"
    url = publish.lock_url(folder)
    assert fs.create_exclusive(url, b'{"host": "elsewhere", "pid": 1, "since": "then"}')
    stale = fs.version(url)
    first, second = publish._StoreLock(folder, 1.0), publish._StoreLock(folder, 1.0)
    assert fs.replace_if(url, first._body(), stale.tag) is not None
    assert fs.replace_if(url, second._body(), stale.tag) is None  # the loser of the race...
    judged = fs.Version(stale.tag, stale.written - timedelta(seconds=10))
    monkeypatch.setattr(fs, "version", lambda _: judged)  # ...judging the old version stale again
    with pytest.raises(UsageError) as refused:
        second.take()
    assert f"another build of this dataset is running (host {socket.gethostname()}, pid " in str(refused.value)
    assert json.loads(objects("lock-race/rows")[".1.0.0.lock"])["token"] == first.holder["token"]


def test_a_long_build_refreshes_its_lock_so_it_is_not_taken_over(s3, monkeypatch):
    # refreshed every 1 s (a fifth of the stale time), so the lock the second build looks at is at
    # most 1 s old, 2 s by the store's clock of whole seconds: 3 s to spare for a busy machine's
    # late heartbeat; the build holds it for longer than the stale time
    monkeypatch.setenv(publish.LOCK_STALE_VARIABLE, "5")
    folder = "s3://data/lock-long/rows/1.0.0"
    refused = []
    with publish.build_lock(folder):
        first = _lock("lock-long/rows")
        time.sleep(5.5)
        assert _lock("lock-long/rows")["refreshed"] != first["refreshed"]
        try:
            with publish.build_lock(folder):
                pass
        except UsageError as error:
            refused.append(str(error))
        assert _lock("lock-long/rows")["token"] == first["token"]
    assert len(refused) == 1 and "another build of this dataset is running" in refused[0]


@pytest.mark.parametrize("given", ["0", "soon", "-5", "inf"])
def test_a_stale_time_that_is_no_number_of_seconds_is_refused(monkeypatch, given):
    monkeypatch.setenv(publish.LOCK_STALE_VARIABLE, given)
    with pytest.raises(UsageError) as refused:
        publish.lock_stale_seconds()
    assert str(refused.value) == f"TFRECORD_BUILDER_LOCK_STALE_SECONDS={given!r}: expected a number of seconds above 0"


def test_two_locks_taken_at_once_one_is_refused(s3):
    """Threads of one process stand in for two machines: the store decides, not this process."""
    folder = "s3://data/lock-once/rows/1.0.0"
    barrier, outcomes, inside = threading.Barrier(2), [], threading.Event()

    def build():
        barrier.wait()
        try:
            with publish.build_lock(folder):
                outcomes.append("held")
                inside.wait(120)  # until the other is refused: seconds, on a busy machine
        except UsageError:
            outcomes.append("refused")
            inside.set()

    threads = [threading.Thread(target=build) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["held", "refused"] and objects("lock-once/rows") == {}


def test_a_build_whose_lock_was_taken_over_publishes_nothing(s3, tmp_path):
    """A build stalled past the stale time (a laptop asleep) finds at its end that another took its
    lock over: its staging prefix is no longer its own, and the dataset is left to the other."""
    folder, staging = "s3://data/lock-stalled/rows/1.0.0", "s3://data/lock-stalled/rows/.1.0.0.building"
    fs.write_whole(fs.join(staging, "dataset_info.json"), b"{}")
    other = publish._StoreLock(folder, 300.0)
    with pytest.raises(UsageError) as refused:
        with publish.build_lock(folder):
            assert fs.replace_if(publish.lock_url(folder), other._body(), fs.version(publish.lock_url(folder)).tag)
            publish.publish_url(staging, folder)
    assert re.fullmatch(r"s3://data/lock-stalled/rows/1\.0\.0: this build's lock "
                        r"s3://data/lock-stalled/rows/\.1\.0\.0\.lock was taken over by another build "
                        rf"\(host [^,]+, pid {os.getpid()}, since [^)]+\) after going 300 s without a refresh; "
                        r"nothing was published: build again once that build has ended",
                        str(refused.value)), str(refused.value)
    assert sorted(objects("lock-stalled/rows")) == [".1.0.0.building/dataset_info.json", ".1.0.0.lock"]  # the other's
    assert json.loads(objects("lock-stalled/rows")[".1.0.0.lock"])["token"] == other.holder["token"]


def test_a_lock_that_cant_be_read_once_is_read_again_before_the_build_is_judged_taken_over(s3, monkeypatch):
    """A busy store fails the build's look at its lock before publishing (or answers while the
    heartbeat replaces it): asked again, it is still this build's, and the build goes on. A lock
    that is gone for good is still a lock lost."""
    folder = "s3://data/lock-busy/rows/1.0.0"
    lock = publish._StoreLock(folder, 300.0)
    lock.take()
    read = publish._StoreLock._holder
    looks: list[dict] = []

    def failing_once(self: publish._StoreLock) -> dict:
        looks.append(read(self) if looks else {})
        return looks[-1]

    monkeypatch.setattr(publish._StoreLock, "_holder", failing_once)
    lock.check()
    assert [found.get("token") for found in looks] == [None, lock.holder["token"]]
    fs.remove(publish.lock_url(folder))  # gone for good
    with pytest.raises(UsageError, match=r"was taken over by another build \(its holder unreadable\)"):
        lock.check()
    assert len(looks) == 2 + 1 + len(publish.CHECK_AGAIN_SECONDS)
    lock.release()
    assert objects("lock-busy") == {}


def test_a_store_without_a_conditional_create_is_said_to_lack_it(capsys):
    """fsspec's memory filesystem creates `mode="create"` by looking, then writing."""
    folder = "memory://lockless/rows/1.0.0"
    with publish.build_lock(folder):
        assert fs.exists("memory://lockless/rows/.1.0.0.lock")
    assert capsys.readouterr().err == (
        "warning: memory://lockless/rows/.1.0.0.lock: tfrecord-builder knows no create-if-absent in this store, so "
        "its lock is made by looking, then writing: two builds started within that moment could both go on\n")
    assert not fs.exists("memory://lockless/rows/.1.0.0.lock")
