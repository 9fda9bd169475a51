"""Where a build writes, and how a finished dataset takes its place.

A build writes into a hidden staging folder beside the dataset's (`.VERSION.building-PID`) and,
once `dataset_info.json` is in it, swaps it into place in one atomic step where the kernel offers
one, so a build killed at any moment leaves the previous dataset whole.
"""
from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import shutil
import time
from typing import Iterator

from .. import fs
from ..atomic import rename
from ..errors import UsageError
from .naming import INFO_FILE, is_ours

# A build killed with SIGKILL takes its workers with it (processes.die_with_parent), but they hold
# the lock too (they share its file) until the kernel has delivered their signal: on a busy machine
# that takes some milliseconds after the build itself is gone. `--resume` right after waits for them.
LOCK_WAIT_SECONDS = 3.0


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
    return os.path.join(parent, f".{version}.building")


@contextlib.contextmanager
def build_lock(folder: str) -> Iterator[None]:
    """Holds `.VERSION.lock` beside `folder`: two builds of one dataset can't share its staging.
    A lock held for more than LOCK_WAIT_SECONDS is another build's."""
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
    and new objects mixed for a dataset; the new one's is copied last."""
    if fs.exists(fs.join(folder, INFO_FILE)):
        fs.remove(fs.join(folder, INFO_FILE))
    fs.rmtree(folder)
    names = list(fs.walk_files(staging))
    for name in [name for name in names if name != INFO_FILE] + [INFO_FILE]:
        fs.copy(fs.join(staging, name), fs.join(folder, name))
    fs.rmtree(staging)
