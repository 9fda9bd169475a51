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
from typing import BinaryIO

from ..errors import DataError

_MAGIC = {b"\x1f\x8b": "gzip", b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz", b"\x28\xb5\x2f\xfd": "zstd"}
COMPRESSED_SUFFIXES = (".gz", ".gzip", ".bz2", ".xz", ".zst", ".zstd")


def compression(path: str) -> str | None:
    """The compression of the file at `path` (by its first bytes), or None for a plain file."""
    with open(path, "rb") as file:
        head = file.read(6)
    return next((name for magic, name in _MAGIC.items() if head.startswith(magic)), None)


def open_source(path: str) -> io.BufferedReader:
    """The file's bytes, decompressed (buffered, so `peek` works); a damaged compressed stream
    raises DataError when read."""
    kind = compression(path)
    if kind is None:
        return open(path, "rb")
    if kind == "gzip":
        stream: BinaryIO = gzip.open(path, "rb")
    elif kind == "bzip2":
        stream = bz2.open(path, "rb")
    elif kind == "xz":
        stream = lzma.open(path, "rb")
    else:
        import pyarrow as pa  # Python has no Zstandard before 3.14; Arrow's C++ reads it

        stream = io.BufferedReader(pa.input_stream(path, compression="zstd"))
    return io.BufferedReader(_Checked(stream, os.path.basename(path), kind), 1 << 20)


def plain_name(path: str) -> str:
    """The file's name without a compression suffix (`rows.jsonl.gz` -> `rows.jsonl`)."""
    lower = path.lower()
    for suffix in COMPRESSED_SUFFIXES:
        if lower.endswith(suffix):
            return path[: -len(suffix)]
    return path


class _Checked(io.RawIOBase):
    """A decompressing stream whose failures (a cut or damaged file) are one DataError naming it."""

    def __init__(self, stream: BinaryIO, name: str, kind: str):
        super().__init__()
        self._stream, self._name, self._kind = stream, name, kind

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        try:
            return self._stream.readinto(buffer)
        except (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError) as error:
            raise DataError(f"{self._name}: cannot be decompressed as {self._kind} ({error})") from None

    def close(self) -> None:
        self._stream.close()
        super().close()
