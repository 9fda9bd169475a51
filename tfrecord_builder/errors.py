"""The project's error classes.

Every error a user can cause is one of these: the command line prints it as one line and exits
with its `exit_code` (1 bad data, 2 bad spec or usage). They also subclass the matching builtin
so plain `except ValueError` code keeps working.
"""
from __future__ import annotations


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


class BuildWarning(UserWarning):
    """Something a finished build found worth saying: a split left empty, or splits far from the
    fractions asked. `tb.build` issues each as a Python warning (and lists them in `info.warnings`);
    the command line prints them as `warning: ...` lines.

    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", tb.BuildWarning)   # a skewed split fails a CI job
    ...     info = tb.build("specs/wine.yaml", overwrite=True)
    """
