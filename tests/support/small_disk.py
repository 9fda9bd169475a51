"""A small disk to fill, for tests of what a full disk does: a tmpfs mounted for the test (root,
or CAP_SYS_ADMIN: where mounting is refused the test skips, saying so), unmounted afterwards
whatever happens, and a ballast file that leaves only so much of it free."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

DISK_BYTES = 32 * 1024**2
_MiB = 1024**2


@pytest.fixture
def small_disk(tmp_path):
    """A tmpfs of DISK_BYTES at a folder of `tmp_path`."""
    disk = tmp_path / "disk"
    disk.mkdir()
    try:
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DISK_BYTES}", "tmpfs", str(disk)],
                                 capture_output=True, text=True)
    except FileNotFoundError:
        pytest.skip("no `mount` command here to make a small disk to fill")
    if mounted.returncode != 0:
        said = (mounted.stderr.strip().splitlines() or [f"exit status {mounted.returncode}"])[0]
        pytest.skip(f"mounting a small tmpfs to fill is not permitted here (needs root): {said}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=True)


def fill(disk: Path, leave: int = 0) -> Path:
    """A ballast file that leaves `leave` bytes free on `disk`."""
    status = os.statvfs(disk)
    size = status.f_bavail * status.f_frsize - leave
    ballast = disk / "ballast"
    with open(ballast, "wb") as file:
        for _ in range(size // _MiB):
            file.write(bytes(_MiB))
        file.write(bytes(size % _MiB))
    return ballast
