"""A shard's bytes a block at a time, for `verify`: hashed as read, decompressed by one inflater.

Its blocks are framed into records by the one framing loop, `tfrecord.record_blocks`.
"""
from __future__ import annotations

import zlib
from typing import TYPE_CHECKING, BinaryIO

from .. import fs
from .tfrecord import BLOCK_BYTES, WINDOW_BITS, RecordBlock, record_blocks

__all__ = ["BLOCK_BYTES", "RecordBlock", "ShardStream", "Undecodable", "record_blocks"]

if TYPE_CHECKING:
    import hashlib


class Undecodable(Exception):
    """Compressed data that doesn't decompress as one clean stream (corrupt, cut short, trailing
    bytes). Where such a stream fails depends on the reader's buffering, so `verify` leaves the
    whole shard to the per-record reader, whose words and record count are the reference."""


class ShardStream:
    """A shard's TFRecord bytes (decompressed if need be), a block at a time; every byte of the
    file read also goes into `digest`, so the sha256 check needs no second pass."""

    def __init__(self, path: str, compression: str, digest: "hashlib._Hash", block_bytes: int | None = None):
        self._file: BinaryIO = fs.open_file(path)
        self._digest = digest
        self._block_bytes = block_bytes or BLOCK_BYTES
        self._inflater = zlib.decompressobj(WINDOW_BITS[compression]) if compression != "none" else None

    def read(self) -> bytes:
        """The next block of the stream; b"" at its end. Raises Undecodable."""
        while True:
            raw = self._file.read(self._block_bytes)
            self._digest.update(raw)
            if self._inflater is None:
                return raw
            try:
                out = self._inflater.decompress(raw) if raw else self._inflater.flush()
            except zlib.error:
                raise Undecodable from None
            if self._inflater.unused_data or (not raw and not self._inflater.eof):
                raise Undecodable  # bytes after the stream's end, or a stream cut short
            if out or not raw:
                return out

    def finish(self) -> None:
        """Reads the rest of the file into the digest (after a broken frame ended the reading)."""
        for raw in iter(lambda: self._file.read(1 << 20), b""):
            self._digest.update(raw)

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> "ShardStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
