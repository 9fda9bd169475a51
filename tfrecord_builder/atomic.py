"""Writing a local file whole or not at all: the one mechanism every writer of the package uses.

A file is written under a temporary name beside its target (`.NAME.tmp-PID-RANDOM`: hidden, so no
`*.tfrecord*` glob takes it for a shard, and the process id and random part keep two writers of
the same target apart), flushed and fsynced, then moved over the target with os.replace: a reader,
and a build killed at any moment, sees the old file or the new one, never part of one. What a
killed writer leaves is a temporary name, which `is_temporary` recognises for the clean-up.

Object-store (URL) writes don't come here: an object appears whole once its upload completes
(fs.open_file).
"""
from __future__ import annotations

import os
import re
from typing import IO, Any

from .errors import DiskFullError

# the random part optional: what a killed build of an earlier 0.3 development version left (`.NAME.tmp-PID`)
# in a staging folder `--resume` picks up
_TEMPORARY = re.compile(r"\..+\.tmp-\d+(-[0-9a-f]{8})?")


def temporary(path: str) -> str:
    """The temporary name beside `path` a file is written under before it is moved into place."""
    folder, base = os.path.split(path)
    return os.path.join(folder, f".{base}.tmp-{os.getpid()}-{os.urandom(4).hex()}")


def is_temporary(name: str) -> bool:
    """Whether the file name `name` (no folder) is one `temporary` makes: a file a killed writer left."""
    return _TEMPORARY.fullmatch(name) is not None


def temporaries(folder: str) -> list[str]:
    """The temporary files below `folder`: files being written, or a killed writer's."""
    return [os.path.join(root, name) for root, _, names in os.walk(folder) for name in names if is_temporary(name)]


def remove_temporaries(folder: str) -> list[str]:
    """Removes every temporary file below `folder` (a killed build's), and returns their paths."""
    removed = temporaries(folder)
    for path in removed:
        os.remove(path)
    return removed


class AtomicFile:
    """A file written at `path` whole or not at all: as a context manager, the open file aside;
    on leaving it without an error the file is moved into place (fsynced first when `sync`), on
    an error the temporary file is removed.

    `sync=False` where a killed process loses nothing a later step relies on (a run file, which a
    checkpoint fsyncs before it names it; a Beam step's output, which a retried step writes again)."""

    def __init__(self, path: str, mode: str = "wb", *, sync: bool = True, encoding: str | None = None):
        self.path = path
        self.sync = sync
        self.aside = temporary(path)
        self.file: IO[Any] = open(self.aside, mode, encoding=encoding)

    def __enter__(self) -> IO[Any]:
        return self.file

    def __exit__(self, kind: object, error: BaseException | None, _: object) -> None:
        if kind is None:
            self.commit()
            return
        self.discard()
        named = naming(error, self.path)
        if named is not None:
            raise named from error

    def commit(self) -> None:
        """Moves the written file into place."""
        try:
            if self.sync:
                self.file.flush()
                os.fsync(self.file.fileno())
            self.file.close()
        except OSError as error:
            self.discard()
            named = naming(error, self.path)
            if named is None:
                raise
            raise named from error
        os.replace(self.aside, self.path)

    def discard(self) -> None:
        """Drops the file written so far; the target is left as it was."""
        try:
            self.file.close()  # flushes what is buffered: on a full disk that fails too, and the file goes all the same
        except OSError:
            pass
        try:
            os.remove(self.aside)
        except FileNotFoundError:
            pass


def naming(error: BaseException | None, path: str) -> OSError | None:
    """A full disk's error (which names no file: a write's doesn't) naming the file `path` it was
    writing, so the build's one line says which (errors.DiskFullError.of); None for other errors."""
    if isinstance(error, OSError) and error.errno in DiskFullError.ERRNOS and error.filename is None:
        return OSError(error.errno, error.strerror, path)
    return None


def write_bytes(path: str, data: bytes, *, sync: bool = True) -> str:
    """Writes `data` at `path` (its folder made if needed), whole or not at all."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with AtomicFile(path, sync=sync) as file:
        file.write(data)
    return path


def rename(source: str, target: str) -> None:
    """Moves the file or folder `source` to `target` in one step (a finished staging folder into
    place): the one rename outside AtomicFile, kept here so every move of the package is in one place."""
    os.rename(source, target)
