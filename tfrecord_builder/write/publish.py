"""Where a build writes, and how a finished dataset takes its place.

A build writes into a hidden staging folder beside the dataset's (`.VERSION.building-PID`) and,
once `dataset_info.json` is in it, swaps it into place in one atomic step where the kernel offers
one, so a build killed at any moment leaves the previous dataset whole. One build of a dataset
runs at a time: `build_lock`, a flock on a disk, a lock object in an object store.
"""
from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import shutil
import socket
import sys
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any, Iterator

from .. import fs
from ..atomic import rename
from ..errors import UsageError
from .naming import INFO_FILE, is_ours

# A build killed with SIGKILL takes its workers with it (processes.die_with_parent), but they hold
# the lock too (they share its file) until the kernel has delivered their signal: on a busy machine
# that takes some milliseconds after the build itself is gone. `--resume` right after waits for them.
LOCK_WAIT_SECONDS = 3.0
# In an object store the lock is an object, which nothing removes when its build is killed: the
# build rewrites it every LOCK_STALE_SECONDS / 5 (its heartbeat), and one left that long without a
# rewrite is a killed build's, taken over by the next build with a warning. Tests shorten it with
# the variable.
LOCK_STALE_SECONDS = 300.0
LOCK_STALE_VARIABLE = "TFRECORD_BUILDER_LOCK_STALE_SECONDS"


def staging_folder(folder: str) -> str:
    """The hidden folder beside `folder` where its build is written (and an interrupted one waits
    for `--resume`); leftovers of killed builds (replaced datasets, sorted runs) are removed."""
    parent, version = os.path.split(folder)
    os.makedirs(parent, exist_ok=True)
    for name in os.listdir(parent):
        stale = os.path.join(parent, name)
        if name.startswith(f".{version}.replaced-") and os.path.isdir(stale) and is_ours(os.listdir(stale)):
            shutil.rmtree(stale, ignore_errors=True)
        elif name.startswith(f".{version}.spill-") and name != f".{version}.spill-{os.getpid()}":
            shutil.rmtree(stale, ignore_errors=True)  # a killed build's sorted runs
        elif name.startswith(f".{version}.frame-") and name != f".{version}.frame-{os.getpid()}":
            shutil.rmtree(stale, ignore_errors=True)  # a killed build's frame rows (builders/frames.py)
    return os.path.join(parent, f".{version}.building")


def frame_folder(folder: str) -> str:
    """The hidden folder beside `folder` where this process's build writes the rows of a frame
    given from Python (removed when it ends; a killed build's, by the next `staging_folder`)."""
    parent, version = os.path.split(folder)
    return os.path.join(parent, f".{version}.frame-{os.getpid()}")


@contextlib.contextmanager
def build_lock(folder: str) -> Iterator[None]:
    """Holds `.VERSION.lock` beside `folder`: two builds of one dataset can't share its staging.
    On a disk a flock: one held for more than LOCK_WAIT_SECONDS is another build's. In an object
    store (`folder` a URL) an object created only if absent, so builds on two machines exclude
    each other too (`store_lock`)."""
    if fs.is_url(folder):
        with store_lock(folder):
            yield
        return
    parent, version = os.path.split(folder)
    os.makedirs(parent, exist_ok=True)
    with open(os.path.join(parent, f".{version}.lock"), "w") as lock:
        deadline = time.monotonic() + LOCK_WAIT_SECONDS
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise UsageError(f"{folder}: another build of this dataset is running") from None
                time.sleep(0.02)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def lock_stale_seconds() -> float:
    """LOCK_STALE_SECONDS, or the number of seconds the environment's LOCK_STALE_VARIABLE gives."""
    given = os.environ.get(LOCK_STALE_VARIABLE)
    if not given:
        return LOCK_STALE_SECONDS
    try:
        seconds = float(given)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds < float("inf"):
        raise UsageError(f"{LOCK_STALE_VARIABLE}={given!r}: expected a number of seconds above 0")
    return seconds


def lock_url(folder: str) -> str:
    """The lock object of the dataset at the URL `folder`: `.VERSION.lock` beside it."""
    return fs.join(fs.dirname(folder), f".{fs.basename(folder)}.lock")


@contextlib.contextmanager
def store_lock(folder: str) -> Iterator[None]:
    """Holds the lock object of the dataset at the URL `folder` while the build runs.

    It is created only if absent, a condition the store checks (`fs.create_exclusive`), and says
    who holds it (host, pid, a token for this build, since when). A heartbeat thread rewrites it
    every stale time / 5. A lock not rewritten for `lock_stale_seconds()` (by the store's clock)
    is a killed build's: it is replaced only if it is still the version judged stale
    (`fs.replace_if`), so of two builds taking it over one wins and the other is refused. A fresh
    one is another build's: UsageError naming its holder. Removed when the build ends, however."""
    lock = _StoreLock(folder, lock_stale_seconds())
    try:  # Ctrl-C may land right after the lock is made, before `take` returns: it is removed then too
        lock.take()
        _HELD[folder] = lock
        yield
    finally:
        _HELD.pop(folder, None)
        lock.release()


class _StoreLock:
    """One build's lock object in a store, and the thread that keeps it fresh."""

    def __init__(self, folder: str, stale: float) -> None:
        self.folder, self.url, self.stale = folder, lock_url(folder), stale
        self.holder = {"host": socket.gethostname(), "pid": os.getpid(), "token": uuid.uuid4().hex,
                       "since": _utc(datetime.now(timezone.utc))}
        self.tag: str | None = None  # the version of the lock this build wrote last
        self.lost = False
        self.stopping = threading.Event()
        self.heartbeat = threading.Thread(target=self._refresh, name="tfrecord-builder lock", daemon=True)

    def _body(self) -> bytes:
        refreshed = _utc(datetime.now(timezone.utc))
        return (json.dumps({**self.holder, "refreshed": refreshed}, sort_keys=True) + "\n").encode()

    def take(self) -> None:
        if not fs.creates_in_store(self.url):  # said, not left to be found out
            _warn(f"{self.url}: tfrecord-builder knows no create-if-absent in this store, so its lock is made by "
                  "looking, then writing: two builds started within that moment could both go on")
        held, other = None, {}
        for _ in range(3):  # a lock removed or taken over between two looks at it: look again
            if fs.create_exclusive(self.url, self._body()):
                found = fs.version(self.url)
                self.tag = found.tag if found is not None else None
                break
            held = fs.version(self.url)
            if held is None:
                continue
            other = self._holder()
            age = (datetime.now(timezone.utc) - held.written).total_seconds()
            if age < self.stale:
                break
            self.tag = fs.replace_if(self.url, self._body(), held.tag)
            if self.tag is not None:
                _warn(f"{self.folder}: took over the lock of a build that stopped {age:.0f} s ago ({_who(other)}), "
                      f"a killed build's: its lock {self.url} went more than {self.stale:g} s without a refresh")
                break
        if self.tag is None:
            if held is None:
                raise UsageError(f"{self.folder}: can't take the lock {self.url}: it was taken and removed three "
                                 "times while this build looked; build again")
            after = _utc(held.written + timedelta(seconds=self.stale))
            raise UsageError(f"{self.folder}: another build of this dataset is running ({_who(other)}); wait for "
                             f"it to end; if it was killed, its lock {self.url} is taken over by a build started "
                             f"after {after} ({self.stale:g} s after its last refresh), or remove the lock if you "
                             "know no build is running")
        self.heartbeat.start()

    def _holder(self) -> dict[str, Any]:
        """Who holds the lock, as its object says ({} where it is gone or unreadable)."""
        try:
            with fs.open_file(self.url) as file:
                found = json.loads(file.read())
        except (OSError, ValueError, UsageError):
            return {}
        return found if isinstance(found, dict) else {}

    def _refresh(self) -> None:
        while not self.stopping.wait(max(self.stale / 5, 0.05)):
            try:
                tag = fs.replace_if(self.url, self._body(), str(self.tag))
            except (OSError, UsageError):  # the store didn't answer this time: the next beat tries again
                continue
            if tag is None:
                self.lost = True
                _warn(f"{self.folder}: this build's lock {self.url} was taken over by another build "
                      f"({_who(self._holder())}) after going {self.stale:g} s without a refresh; the two builds "
                      "now share the staging prefix: stop one")
                return
            self.tag = tag

    def check(self) -> None:
        """UsageError if the lock is no longer this build's (taken over while the build stalled)."""
        holder = self._holder()
        for pause in CHECK_AGAIN_SECONDS:  # not read: a store busy, or answering while the heartbeat rewrites it
            if holder or self.lost:
                break
            time.sleep(pause)
            holder = self._holder()
        if self.lost or holder.get("token") != self.holder["token"]:
            self.lost = True
            raise UsageError(f"{self.folder}: this build's lock {self.url} was taken over by another build "
                             f"({_who(holder)}) after going {self.stale:g} s without a refresh; nothing was "
                             "published: build again once that build has ended")

    def release(self) -> None:
        self.stopping.set()
        if self.heartbeat.ident is not None:
            self.heartbeat.join()
        if self.lost:
            return
        try:
            if self._holder().get("token") == self.holder["token"]:  # not another build's (refused us, or took over)
                fs.remove(self.url)
        except (OSError, UsageError) as error:
            _warn(f"{self.url}: this build's lock could not be removed ({error}); the next build takes it over "
                  f"after {self.stale:g} s")


# Before a build's lock is judged gone at publishing, an object that couldn't be read (a busy store
# may fail a request, or answer while the heartbeat replaces it) is asked for again after these pauses
CHECK_AGAIN_SECONDS = (0.2, 0.5, 1.0)

# The store locks this process holds, by dataset: publishing checks that its lock is still its own.
_HELD: dict[str, _StoreLock] = {}


def _who(holder: dict[str, Any]) -> str:
    return (f"host {holder.get('host', '?')}, pid {holder.get('pid', '?')}, since {holder.get('since', '?')}"
            if holder else "its holder unreadable")


def _utc(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _warn(message: str) -> None:
    """One `warning:` line on stderr now: the lock is taken before the build, whose warnings come at its end."""
    print(f"warning: {message}", file=sys.stderr, flush=True)


def publish(staging: str, folder: str) -> None:
    """Moves a finished staging folder to `folder`, replacing what is there (ours, checked before)."""
    if not os.path.exists(folder):
        rename(staging, folder)
        return
    if _exchange(staging, folder):  # one atomic step where the kernel offers it
        shutil.rmtree(staging)
        return
    parent, version = os.path.split(folder)
    replaced = os.path.join(parent, f".{version}.replaced-{os.getpid()}")
    rename(folder, replaced)
    rename(staging, folder)
    shutil.rmtree(replaced)


def _exchange(first: str, second: str) -> bool:
    """Swaps two paths atomically with Linux's renameat2(RENAME_EXCHANGE); False where unavailable."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    result = renameat2(at_fdcwd, os.fsencode(first), at_fdcwd, os.fsencode(second), rename_exchange)
    return result == 0


def url_staging(folder: str) -> str:
    """Where a dataset bound for a URL is put together before it is published (`.VERSION.building`)."""
    return fs.join(fs.dirname(folder), f".{fs.basename(folder)}.building")


def upload(local: str, staging: str) -> None:
    """Copies a finished local staging folder to a URL's staging prefix, `dataset_info.json` last."""
    names = sorted(name for name in fs.walk_files(local))
    for name in [name for name in names if name != INFO_FILE] + [INFO_FILE]:
        fs.upload(os.path.join(local, name), fs.join(staging, name))


def publish_url(staging: str, folder: str) -> None:
    """Moves a finished dataset from its staging prefix to `folder` in an object store.

    There is no rename: each object is copied. `dataset_info.json` is the commit. What `folder`
    held (ours, checked before) loses its `dataset_info.json` first, so no reader takes the old
    and new objects mixed for a dataset; the new one's is copied last. Refused (UsageError) if
    the build's lock was taken over meanwhile (`store_lock`): the staging is no longer its own."""
    held = _HELD.get(folder)
    if held is not None:
        held.check()
    if fs.exists(fs.join(folder, INFO_FILE)):
        fs.remove(fs.join(folder, INFO_FILE))
    fs.rmtree(folder)
    names = list(fs.walk_files(staging))
    for name in [name for name in names if name != INFO_FILE] + [INFO_FILE]:
        fs.copy(fs.join(staging, name), fs.join(folder, name))
    fs.rmtree(staging)
