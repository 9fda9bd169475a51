"""A shard's records a block at a time, framed with NumPy: what `verify` reads column-wise.

The per-record reader (`tfrecord.read_records`) makes three reads and two CRC calls per record;
here a block of the stream (megabytes) is read at once, cut into records by their length headers
in one tight loop, and the length CRCs are checked once per distinct length. A broken frame
raises the DatasetError `read_records` raises, worded the same, after the records before it.
"""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO, Iterator

import google_crc32c
import numpy as np

from .. import fs
from ..errors import DatasetError
from .tfrecord import (DATA_MISMATCH, LENGTH_MISMATCH, WINDOW_BITS, frame_length, masked_crc, masked_crcs,
                       truncated_data, truncated_header)

if TYPE_CHECKING:
    import hashlib

BLOCK_BYTES = 8 << 20  # read (and decompressed) at a time: large enough that NumPy's cost per call vanishes
_HEADER, _FOOTER = 12, 4


class Undecodable(Exception):
    """Compressed data that doesn't decompress as one clean stream (corrupt, cut short, trailing
    bytes). Where such a stream fails depends on the reader's buffering, so `verify` leaves the
    whole shard to the per-record reader, whose words and record count are the reference."""


@dataclass
class RecordBlock:
    """Consecutive records of a shard: record `first + i` is `data[starts[i]:ends[i]]`."""

    data: np.ndarray  # uint8, over the block's bytes
    starts: np.ndarray  # int64
    ends: np.ndarray  # int64
    first: int

    def __len__(self) -> int:
        return len(self.starts)

    def record(self, index: int) -> bytes:
        return self.data[self.starts[index] : self.ends[index]].tobytes()


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


def record_blocks(stream: ShardStream, name: str) -> Iterator[RecordBlock]:
    """The stream's records, a block at a time, each block whole records, CRCs checked. A broken
    frame raises DatasetError (as `read_records` words it) once the records before it are yielded."""
    pending: list[bytes] = []  # the start of a record the blocks so far cut through
    needed = 0  # bytes `pending` must reach before it is worth framing again
    have = 0
    first = 0
    while True:
        chunk = stream.read()
        if chunk:
            pending.append(chunk)
            have += len(chunk)
            if have < needed:
                continue  # a long record: gather its pieces, join them once
        data = b"".join(pending) if len(pending) > 1 else (pending[0] if pending else b"")
        block, used, needed, fault = _frame(data, first, name, at_end=not chunk)
        if len(block):
            yield block
        if fault is not None:
            raise DatasetError(fault)
        first += len(block)
        rest = data[used:]
        pending, have = ([rest], len(rest)) if rest else ([], 0)
        if not chunk:
            return


_LENGTH = struct.Struct("<Q")


def _frame(data: bytes, first: int, name: str, at_end: bool) -> tuple[RecordBlock, int, int, str | None]:
    """The whole records at the start of `data` (numbered from `first`), the bytes they take,
    the bytes needed to complete the next one, and the fault that ends the stream there if any."""
    size, position = len(data), 0
    starts: list[int] = []
    unpack = _LENGTH.unpack_from
    while size - position >= _HEADER:
        (length,) = unpack(data, position)
        end = position + _HEADER + length + _FOOTER
        if end > size:
            break
        starts.append(position)
        position = end
    heads = np.array(starts, dtype=np.int64)
    buffer = np.frombuffer(data, dtype=np.uint8)
    lengths = _words(buffer, heads, 8, np.dtype("<u8")).astype(np.int64)
    bad = _first_bad(data, buffer, heads, lengths)
    if bad is not None:
        index, problem = bad
        return _block(buffer, heads[:index], lengths[:index], first), 0, 0, f"{name}: record {first + index}: {problem}"
    block = _block(buffer, heads, lengths, first)
    index = first + len(heads)
    left = size - position
    if left >= _HEADER:  # a record the data cuts through: trust its length only once its CRC matches
        length, length_ok = frame_length(data[position : position + _HEADER])
        if not length_ok:
            return block, position, 0, f"{name}: record {index}: {LENGTH_MISMATCH}"
        if at_end:
            return block, position, 0, truncated_data(name, index, length)
        return block, position, _HEADER + length + _FOOTER, None
    if at_end and left:
        return block, position, 0, truncated_header(name, index, left)
    return block, position, _HEADER, None


def _block(buffer: np.ndarray, heads: np.ndarray, lengths: np.ndarray, first: int) -> RecordBlock:
    return RecordBlock(buffer, heads + _HEADER, heads + _HEADER + lengths, first)


def _first_bad(data: bytes, buffer: np.ndarray, heads: np.ndarray, lengths: np.ndarray) -> tuple[int, str] | None:
    """The first record whose length or data CRC doesn't match, with `read_records`' words for it
    (a record's length is checked before its data, and an earlier record before a later one)."""
    if not len(heads):
        return None
    distinct, which = np.unique(lengths, return_inverse=True)
    expected = np.array([masked_crc(_LENGTH.pack(length)) for length in distinct.tolist()], dtype=np.uint32)
    length_ok = expected[which.reshape(-1)] == _words(buffer, heads + 8, 4, np.dtype("<u4"))
    # google-crc32c takes bytes: a slice per record (one memcpy), mapped without a Python frame per record
    records = map(data.__getitem__, map(slice, (heads + _HEADER).tolist(), (heads + _HEADER + lengths).tolist()))
    crcs = np.fromiter(map(google_crc32c.value, records), dtype=np.uint64, count=len(heads))
    data_ok = masked_crcs(crcs) == _words(buffer, heads + _HEADER + lengths, 4, np.dtype("<u4"))
    wrong = np.flatnonzero(~(length_ok & data_ok))
    if not len(wrong):
        return None
    index = int(wrong[0])
    if not length_ok[index]:
        return index, LENGTH_MISMATCH
    return index, DATA_MISMATCH


def _words(buffer: np.ndarray, positions: np.ndarray, width: int, dtype: np.dtype) -> np.ndarray:
    """The little-endian word of `width` bytes at each position."""
    return buffer[positions[:, None] + np.arange(width)].copy().view(dtype).reshape(-1)
