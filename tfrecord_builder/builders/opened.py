"""Opening a source file: plain, or compressed with gzip, bzip2, xz or Zstandard.

Exports often arrive compressed (`data.csv.gz`). The compression is found from the file's first
bytes, not its name, and the file is read decompressed as it streams: the rows, their line
numbers and their keys (so their splits) are those of the plain file.
"""
from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import zlib
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np

from .. import fs
from ..errors import DataError
from .csv_quotes import quoting_alike, row_blocks, row_ends, separator, whole_rows_alike
from .lines import line_blocks, lone_carriage_return

_MAGIC = {b"\x1f\x8b": "gzip", b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz", b"\x28\xb5\x2f\xfd": "zstd"}
COMPRESSED_SUFFIXES = (".gz", ".gzip", ".bz2", ".xz", ".zst", ".zstd")


def compression(path: str) -> str | None:
    """The compression of the file at `path` (by its first bytes), or None for a plain file."""
    with fs.open_file(path) as file:
        head = file.read(6)
    return next((name for magic, name in _MAGIC.items() if head.startswith(magic)), None)


def open_source(path: str) -> io.BufferedReader:
    """The file's bytes, decompressed (buffered, so `peek` works); a damaged compressed stream
    raises DataError when read."""
    kind = compression(path)
    if kind is None:
        return fs.open_stream(path)
    source: Any = fs.path_or_file(path)
    if kind == "gzip":
        stream: BinaryIO = gzip.open(source, "rb")
    elif kind == "bzip2":
        stream = bz2.open(source, "rb")
    elif kind == "xz":
        stream = lzma.open(source, "rb")
    else:
        import pyarrow as pa  # Python has no Zstandard before 3.14; Arrow's C++ reads it

        stream = io.BufferedReader(pa.input_stream(source, compression="zstd"))
    return io.BufferedReader(_Checked(stream, fs.basename(path), kind, source if source is not path else None), 1 << 20)


def read_again(path: str) -> str | None:
    """The path by which a worker reads parts of the file itself (`lines.FileLines`): a plain local
    file's; None for a compressed file or an object in a store, whose parts are handed on as bytes."""
    if fs.is_url(path):
        return None
    try:
        return path if compression(path) is None else None
    except OSError:
        return None  # the reader says what is wrong, at the file


def plain_name(path: str) -> str:
    """The file's name without a compression suffix (`rows.jsonl.gz` -> `rows.jsonl`)."""
    lower = path.lower()
    for suffix in COMPRESSED_SUFFIXES:
        if lower.endswith(suffix):
            return path[: -len(suffix)]
    return path


class _Checked(io.RawIOBase):
    """A decompressing stream whose failures (a cut or damaged file) are one DataError naming it."""

    def __init__(self, stream: BinaryIO, name: str, kind: str, raw: BinaryIO | None = None):
        super().__init__()
        self._stream, self._name, self._kind = stream, name, kind
        self._raw = raw  # the compressed file object, when we opened it: closed with the stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        try:
            return self._stream.readinto(buffer)
        except (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError) as error:
            raise DataError(f"{self._name}: cannot be decompressed as {self._kind} ({error})") from None

    def close(self) -> None:
        self._stream.close()
        if self._raw is not None:
            self._raw.close()
        super().close()


DEFAULT_TASK_BYTES = 64 * 1024**2


def task_bytes() -> int:
    """How much of a source one read task covers: a build running in parallel (`--runner beam`)
    reads each part on a worker of its own; small enough that a worker holds a task's records,
    large enough that a task's start-up cost doesn't show. TFRECORD_BUILDER_TASK_BYTES changes it,
    read when the tasks are cut (not at import, so a test or a caller can set it)."""
    return int(os.environ.get("TFRECORD_BUILDER_TASK_BYTES", DEFAULT_TASK_BYTES))
_SCAN_BYTES = 16 * 1024**2


@dataclass(frozen=True)
class Window:
    """A part of a plain text file: the lines from byte `start` to byte `stop`, after
    `lines_before` lines of data (the header, if any, not counted)."""

    start: int
    stop: int
    lines_before: int


def text_windows(path: str, header: bool, delimiter: str | None) -> list[Window] | None:
    """The file cut at record ends into windows of about `task_bytes()` (None: read it whole).

    Only a plain (uncompressed) file larger than one task is cut, and only where its records can
    be found without parsing it: no lone carriage return and, for a CSV (`delimiter`), quoting
    that its fast reader takes (csv_quotes.py), so that a row ends at a newline with an even
    number of quotes before it. Finding that reads the file once, at disk speed.
    """
    task = task_bytes()
    byte = separator(delimiter) if delimiter is not None else None
    try:
        size = fs.size(path)
        if size <= task or compression(path) is not None or (delimiter is not None and byte is None):
            return None
        windows: list[Window] = []
        with fs.open_file(path) as file:
            first = file.readline() if header else b""
            if lone_carriage_return(first) or (byte is not None and not quoting_alike(first, byte)):
                return None
            start = len(first)
            position = window_start = start
            lines = window_lines = 0
            target = start + task
            blocks = line_blocks(file, _SCAN_BYTES)
            for block in row_blocks(blocks) if byte is not None else blocks:
                if lone_carriage_return(block):
                    return None
                ends = None
                if byte is not None and b'"' in block:
                    ends = row_ends(block)
                    if not whole_rows_alike(block, ends, byte):
                        return None  # a quote left open, or one the fast reader leaves to the csv module
                while target < position + len(block):
                    offset = max(0, target - position)
                    if ends is None:
                        cut = block.find(b"\n", offset) + 1
                    else:  # the first row end past the target
                        index = int(np.searchsorted(ends, offset, side="right"))
                        cut = int(ends[index]) if index < len(ends) else 0
                    if not cut:
                        break  # the file's last line, without a newline
                    windows.append(Window(window_start, position + cut, window_lines))
                    window_start, window_lines = position + cut, lines + block.count(b"\n", 0, cut)
                    target = window_start + task
                lines += block.count(b"\n")
                position += len(block)
        if window_start < size:
            windows.append(Window(window_start, size, window_lines))
    except OSError:
        return None  # the reader says what is wrong, at the file
    return windows if len(windows) > 1 else None


def open_window(path: str, window: Window | None, header: bool) -> io.BufferedReader:
    """The file's bytes (`window` None), or the window's lines with the file's first line in front
    of them when `header`: what a reader of the whole file would see, cut short."""
    if window is None:
        return open_source(path)
    return io.BufferedReader(_WindowStream(path, window, header), 1 << 20)


class _WindowStream(io.RawIOBase):
    def __init__(self, path: str, window: Window, header: bool):
        super().__init__()
        self._file = fs.open_file(path)
        self._prefix = self._file.readline() if header else b""
        self._file.seek(window.start)
        self._left = window.stop - window.start

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        view = memoryview(buffer).cast("B")
        if self._prefix:
            count = min(len(view), len(self._prefix))
            view[:count], self._prefix = self._prefix[:count], self._prefix[count:]
            return count
        if self._left <= 0:
            return 0
        count = self._file.readinto(view[: min(len(view), self._left)])
        self._left -= count
        return count

    def close(self) -> None:
        self._file.close()
        super().close()
