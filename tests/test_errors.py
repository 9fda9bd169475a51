"""A full disk or quota as the build's one line (DiskFullError.of); tests/build/test_disk_full.py
fills a real disk."""
from __future__ import annotations

import errno
import os
import pickle

from tfrecord_builder.errors import DiskFullError, TFRecordBuilderError

STAGING = "/mnt/out/rows/.1.0.0.building"


def test_a_full_quota_names_the_file_as_a_full_disk_does():
    quota = OSError(errno.EDQUOT, os.strerror(errno.EDQUOT), f"{STAGING}/rows-train.tfrecord-00002-of-00004")
    full = DiskFullError.of(quota, STAGING)
    assert str(full) == (f"{STAGING}: the disk quota is used up ({os.strerror(errno.EDQUOT)}) writing "
                         "rows-train.tfrecord-00002-of-00004; free space and run again with --resume")
    assert full.errno == errno.EDQUOT and isinstance(full, OSError) and full.exit_code == 1


def test_without_a_file_the_build_folder_is_named():
    full = DiskFullError.of(OSError(errno.ENOSPC, "No space left on device"), STAGING)
    assert str(full) == f"{STAGING}: the disk is full (No space left on device); free space and run again with --resume"


def test_other_errors_are_not_a_full_disk():
    assert DiskFullError.of(OSError(errno.EIO, "Input/output error", "/x"), STAGING) is None
    assert DiskFullError.of(ValueError("no"), STAGING) is None
    full = DiskFullError("said before", errno.EDQUOT)
    assert DiskFullError.of(full, STAGING) is full


def test_it_crosses_processes_whole():
    """A worker's error is pickled on its way to the build's process."""
    full = pickle.loads(pickle.dumps(DiskFullError("x: the disk quota is used up", errno.EDQUOT)))
    assert (type(full), str(full), full.errno) == (DiskFullError, "x: the disk quota is used up", errno.EDQUOT)
    assert isinstance(full, TFRecordBuilderError)
