"""The project's error classes.

Every error a user can cause is one of these: the command line prints it as one line and exits
with its `exit_code` (1 bad data or a full disk, 2 bad spec or usage). They also subclass the
matching builtin so plain `except ValueError` code keeps working.
"""
from __future__ import annotations

import errno
import os


class TFRecordBuilderError(Exception):
    """Base class of every error this package raises on purpose.

    >>> try:
    ...     tb.load_spec("bad.yaml")
    ... except tb.TFRecordBuilderError as error:
    ...     print(error)          # one line: what, where, what was expected
    bad.yaml, line 13: features.alcohol.shpe: unknown key `shpe` (did you mean `shape`?); expected one of: ...
    """

    exit_code = 1


class SpecError(TFRecordBuilderError, ValueError):
    """The spec (or a value taken from it) is invalid: exit status 2.

    >>> tb.load_spec("bad.yaml")
    Traceback (most recent call last):
    tfrecord_builder.errors.SpecError: bad.yaml, line 13: features.alcohol.shpe: unknown key `shpe` (did you mean ...
    """

    exit_code = 2


class UsageError(TFRecordBuilderError, ValueError):
    """The command line or an API call is used wrongly: exit status 2.

    >>> tb.input_fn("build/wine/1.0.0", "validation")
    Traceback (most recent call last):
    tfrecord_builder.errors.UsageError: unknown split 'validation'; expected one of: train, test
    """

    exit_code = 2


class DataError(TFRecordBuilderError, ValueError):
    """The raw data does not fit the spec: exit status 1.

    >>> tb.build("broken.yaml")
    Traceback (most recent call last):
    tfrecord_builder.errors.DataError: broken.csv, line 16: feature `alcohol`: expected a number (float32), received 'n/a'

    `problem` is what is wrong with a bad value alone, without its place (None for other faults).
    """

    exit_code = 1

    def __init__(self, message: str, problem: str | None = None):
        super().__init__(message)
        self.problem = problem

    def __reduce__(self) -> tuple:  # whole across processes: a worker's error reaches the build
        return type(self), (str(self), self.problem)


class DatasetError(TFRecordBuilderError, OSError):
    """A built dataset is missing, unfinished or corrupt: exit status 1.

    >>> tb.load("unfinished/wine/1.0.0")     # a folder without dataset_info.json
    Traceback (most recent call last):
    tfrecord_builder.errors.DatasetError: unfinished/wine/1.0.0: not a finished dataset (no dataset_info.json); ...
    """

    exit_code = 1


class DiskFullError(TFRecordBuilderError, OSError):
    """The disk, or the user's quota, ran out while a build wrote: exit status 1 (neither the data
    nor the spec is at fault; the machine is). The build leaves nothing that looks finished, only
    its hidden staging folder, and `--resume` carries on once there is room. `errno` is the
    system's (ENOSPC or EDQUOT), so `except OSError` code sees what it always saw.

        tfrecord_builder.errors.DiskFullError: /mnt/out/wine/.1.0.0.building: the disk is full (No space
        left on device) writing wine-train.tfrecord-00000-of-00002; free space and run again with --resume
    """

    exit_code = 1
    ERRNOS = (errno.ENOSPC, errno.EDQUOT)  # what a full disk and a full quota raise

    def __init__(self, message: str, code: int = errno.ENOSPC):
        super().__init__(message)
        self.errno = code

    def __reduce__(self) -> tuple:  # whole across processes, errno too
        return type(self), (str(self), self.errno)

    @classmethod
    def of(cls, error: BaseException, folder: str) -> "DiskFullError | None":
        """`error` as a full disk's one line, if it is one (None otherwise): the file it was
        writing where the error names one (AtomicFile's do), else the build's `folder`."""
        if isinstance(error, cls):
            return error
        if not isinstance(error, OSError) or error.errno not in cls.ERRNOS:
            return None
        what = "the disk is full" if error.errno == errno.ENOSPC else "the disk quota is used up"
        reason = error.strerror or os.strerror(error.errno)
        where = f"{folder}: {what} ({reason})"
        if isinstance(error.filename, str) and error.filename:
            where = f"{os.path.dirname(error.filename)}: {what} ({reason}) writing {os.path.basename(error.filename)}"
        return cls(f"{where}; free space and run again with --resume", error.errno)


class BuildWarning(UserWarning):
    """Something a finished build found worth saying: a split left empty, or splits far from the
    fractions asked. `tb.build` issues each as a Python warning (and lists them in `info.warnings`);
    the command line prints them as `warning: ...` lines.

    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", tb.BuildWarning)   # a skewed split fails a CI job
    ...     info = tb.build("specs/wine.yaml", overwrite=True)
    """
