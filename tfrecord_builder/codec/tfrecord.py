"""TFRecord framing: `uint64 length, masked crc32c(length), data, masked crc32c(data)`.

Written and read here without TensorFlow (google-crc32c computes the checksums in C), so the
writer needs no 3 s import and `inspect` can count records before TensorFlow loads.

One framing loop reads them (`record_blocks`): a block of the stream (a megabyte or more) at a
time, cut into records by their length headers in one tight loop, CRCs checked for the block at
once; `read_records` is its record-at-a-time view. A broken frame raises one DatasetError naming
the shard and record, after the records before it.
"""
from __future__ import annotations

import gzip
import struct
import zlib
from dataclasses import dataclass
from typing import BinaryIO, Iterator, Protocol, Sequence

import google_crc32c
import numpy as np

from .. import fs
from ..errors import DatasetError
from .bytecolumn import ByteColumn, join, looked_up, row_lengths

_MASK_DELTA = 0xA282EAD8
# what a broken frame is called (by `record_blocks`, and by the random access of read/records.py)
LENGTH_MISMATCH = "length checksum mismatch (corrupt frame)"
DATA_MISMATCH = "data checksum mismatch (corrupt record)"
# the suffixes Beam's ReadFromTFRecord detects compression by (zlib shards of 0.2 and before
# were named .zz: datasets list their shards' names, so those still read)
SUFFIX = {"none": "", "gzip": ".gz", "zlib": ".deflate"}
# zlib window bits: 31 writes a gzip stream (TensorFlow's "GZIP"), 15 a zlib stream ("ZLIB").
WINDOW_BITS = {"gzip": 31, "zlib": 15}
BLOCK_BYTES = 8 << 20  # read (and decompressed) at a time: large enough that NumPy's cost per call vanishes


def masked_crc(data: bytes | memoryview) -> int:
    """TFRecord's masked CRC32C."""
    crc = google_crc32c.value(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def masked_crcs(crcs: np.ndarray) -> np.ndarray:
    """`masked_crc` of many CRC32C values (uint64) at once."""
    return (((crcs >> np.uint64(15)) | (crcs << np.uint64(17))) + np.uint64(_MASK_DELTA)) & np.uint64(0xFFFFFFFF)


def truncated_header(name: str, index: int, size: int) -> str:
    return f"{name}: record {index}: truncated header ({size} of 12 bytes)"


def truncated_data(name: str, index: int, length: int) -> str:
    return f"{name}: record {index}: truncated (expected {length} bytes of data)"


def frame(records: ByteColumn) -> bytes:
    """Every record with its TFRecord header and footer, in one buffer."""
    framed = framed_join([records])
    return framed.data[: framed.offsets[-1]].tobytes()


def framed_join(parts: Sequence[ByteColumn]) -> ByteColumn:
    """Each row of the parts' row-wise join, framed as a TFRecord, as its own row.

    The header (the length and its CRC) and a footer to be filled are joined in with the parts,
    so the records' bytes are moved once; only the data CRCs are computed a record at a time.
    Framing happens in the encoding workers, and the shard writer only concatenates.
    """
    lengths = row_lengths(parts)
    count = len(lengths)
    footers = ByteColumn(np.zeros(4 * count, np.uint8), np.arange(count + 1, dtype=np.int64) * 4)
    joined = join([_headers(lengths), *parts, footers])
    data = joined.data if joined.data.flags.writeable else joined.data.copy()
    readable = data.view()
    readable.flags.writeable = False  # google-crc32c takes a read-only buffer: no copy of the records to bytes
    offsets = joined.offsets.tolist()
    value = google_crc32c.value
    crcs = np.fromiter((value(readable[start + 12 : end - 4]) for start, end in zip(offsets[:-1], offsets[1:])),
                       dtype=np.uint64, count=count)
    masked = masked_crcs(crcs)
    ends = joined.offsets[1:] - 4
    data[ends[:, None] + np.arange(4)] = masked.astype("<u4").view(np.uint8).reshape(-1, 4)
    return ByteColumn(data, joined.offsets)


def _headers(lengths: np.ndarray) -> ByteColumn:
    """Each record's 12-byte header: its length and the length's masked CRC (one per distinct length)."""
    distinct, which = np.unique(lengths, return_inverse=True)
    sizes = [struct.pack("<Q", length) for length in distinct.tolist()]
    return looked_up([size + struct.pack("<I", masked_crc(size)) for size in sizes], which.reshape(-1))


class Compressor:
    """Compresses a stream the way TensorFlow's TFRecord writer does for `compression`."""

    def __init__(self, compression: str):
        self._compressor = (
            zlib.compressobj(6, zlib.DEFLATED, WINDOW_BITS[compression]) if compression != "none" else None
        )

    def compress(self, data: bytes | memoryview) -> bytes | memoryview:
        return self._compressor.compress(data) if self._compressor else data

    def flush(self) -> bytes:
        return self._compressor.flush() if self._compressor else b""


def open_records(path: str, compression: str) -> BinaryIO:
    """Opens a shard for reading, decompressing if needed."""
    if compression == "gzip":
        if not fs.is_url(path):
            return gzip.open(path, "rb")
        stream = gzip.GzipFile(fileobj=fs.open_file(path), mode="rb")
        stream.myfileobj = stream.fileobj  # closed with the stream, as gzip.open's own file is
        return stream  # type: ignore[return-value]
    if compression == "zlib":
        return _ZlibReader(path)
    return fs.open_file(path)


def read_records(stream: BinaryIO, name: str, block_bytes: int = 1 << 20) -> Iterator[bytes]:
    """Yields each record of a TFRecord stream: `stream_blocks`, a record at a time."""
    for block in stream_blocks(stream, name, block_bytes):
        yield from block.records()


def stream_blocks(stream: BinaryIO, name: str, block_bytes: int = BLOCK_BYTES) -> Iterator[RecordBlock]:
    """The records of a TFRecord stream a block at a time (`record_blocks`); a broken frame, or
    compressed data that can't be decompressed, raises DatasetError naming it."""
    try:
        yield from record_blocks(_Blocks(stream, block_bytes), name)
    except (OSError, EOFError, zlib.error) as error:
        if isinstance(error, DatasetError):
            raise
        raise DatasetError(f"{name}: cannot be decompressed ({error})") from None


def frame_length(header: bytes) -> tuple[int, bool]:
    """A frame's 12-byte header: the data length it gives, and whether its CRC matches."""
    (length, crc) = _HEADER.unpack(header)
    return length, masked_crc(header[:8]) == crc


def data_intact(data: bytes, footer: bytes) -> bool:
    """Whether a frame's data matches the CRC of its 4-byte footer."""
    return masked_crc(data) == _FOOTER.unpack(footer)[0]


_HEADER, _FOOTER = struct.Struct("<QI"), struct.Struct("<I")
_LENGTH = struct.Struct("<Q")
_HEADER_BYTES, _FOOTER_BYTES = 12, 4


# ---- the framing loop: every reader of a shard's records in order goes through it -------------

class BlockSource(Protocol):
    def read(self) -> bytes:
        """The next block of the stream's bytes (any size); b"" at its end."""


@dataclass
class RecordBlock:
    """Consecutive records of a shard: record `first + i` is `data[starts[i]:ends[i]]`."""

    data: np.ndarray  # uint8, over the block's bytes (a `bytes`: `data.base`)
    starts: np.ndarray  # int64
    ends: np.ndarray  # int64
    first: int

    def __len__(self) -> int:
        return len(self.starts)

    def record(self, index: int) -> bytes:
        return self.data[self.starts[index] : self.ends[index]].tobytes()

    def records(self) -> list[bytes]:
        """Every record of the block, each its own `bytes` (sliced from the block's, one copy)."""
        return list(map(self.data.base.__getitem__, map(slice, self.starts.tolist(), self.ends.tolist())))


def record_blocks(source: BlockSource, name: str) -> Iterator[RecordBlock]:
    """The stream's records, a block at a time, each block whole records, CRCs checked. A broken
    frame raises DatasetError ("NAME: record I: what") once the records before it are yielded."""
    pending: list[bytes] = []  # the start of a record the blocks so far cut through
    needed = 0  # bytes `pending` must reach before it is worth framing again
    have = 0
    first = 0
    while True:
        chunk = source.read()
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


def _frame(data: bytes, first: int, name: str, at_end: bool) -> tuple[RecordBlock, int, int, str | None]:
    """The whole records at the start of `data` (numbered from `first`), the bytes they take,
    the bytes needed to complete the next one, and the fault that ends the stream there if any.
    The lengths are walked in one tight loop; the CRCs are checked for the block at once (a
    length's once per distinct length)."""
    size, position = len(data), 0
    starts: list[int] = []
    unpack = _LENGTH.unpack_from
    while size - position >= _HEADER_BYTES:
        (length,) = unpack(data, position)
        end = position + _HEADER_BYTES + length + _FOOTER_BYTES
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
    if left >= _HEADER_BYTES:  # a record the data cuts through: trust its length only once its CRC matches
        length, length_ok = frame_length(data[position : position + _HEADER_BYTES])
        if not length_ok:
            return block, position, 0, f"{name}: record {index}: {LENGTH_MISMATCH}"
        if at_end:
            return block, position, 0, truncated_data(name, index, length)
        return block, position, _HEADER_BYTES + length + _FOOTER_BYTES, None
    if at_end and left:
        return block, position, 0, truncated_header(name, index, left)
    return block, position, _HEADER_BYTES, None


def _block(buffer: np.ndarray, heads: np.ndarray, lengths: np.ndarray, first: int) -> RecordBlock:
    return RecordBlock(buffer, heads + _HEADER_BYTES, heads + _HEADER_BYTES + lengths, first)


def _first_bad(data: bytes, buffer: np.ndarray, heads: np.ndarray, lengths: np.ndarray) -> tuple[int, str] | None:
    """The first record whose length or data CRC doesn't match, and what (a record's length is
    checked before its data, and an earlier record before a later one)."""
    if not len(heads):
        return None
    distinct, which = np.unique(lengths, return_inverse=True)
    expected = np.array([masked_crc(_LENGTH.pack(length)) for length in distinct.tolist()], dtype=np.uint32)
    length_ok = expected[which.reshape(-1)] == _words(buffer, heads + 8, 4, np.dtype("<u4"))
    # google-crc32c takes bytes: a slice per record (one memcpy), mapped without a Python frame per record
    records = map(data.__getitem__, map(slice, (heads + _HEADER_BYTES).tolist(),
                                        (heads + _HEADER_BYTES + lengths).tolist()))
    crcs = np.fromiter(map(google_crc32c.value, records), dtype=np.uint64, count=len(heads))
    data_ok = masked_crcs(crcs) == _words(buffer, heads + _HEADER_BYTES + lengths, 4, np.dtype("<u4"))
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


class _Blocks:
    """A stream read in blocks doubling from a megabyte to `size` bytes, as `record_blocks` takes
    it: a shard's first records come without reading (and decoding) all of a large block."""

    def __init__(self, stream: BinaryIO, size: int):
        self._stream, self._size, self._next = stream, size, min(size, 1 << 20)

    def read(self) -> bytes:
        size, self._next = self._next, min(self._size, 2 * self._next)
        return self._stream.read(size)


class _ZlibReader:
    """A minimal file-like reader of one zlib stream (Python has no `zlib.open`)."""

    def __init__(self, path: str):
        self._file = fs.open_file(path)
        self._inflater = zlib.decompressobj(15)
        self._buffer = b""

    def read(self, size: int) -> bytes:
        parts, have = [self._buffer], len(self._buffer)
        while have < size:  # the pieces joined once: a block is many chunks
            chunk = self._file.read(1 << 20)
            part = self._inflater.decompress(chunk) if chunk else self._inflater.flush()
            parts.append(part)
            have += len(part)
            if not chunk:
                break
        data = b"".join(parts)
        out, self._buffer = data[:size], data[size:]
        return out

    def __enter__(self) -> "_ZlibReader":
        return self

    def __exit__(self, *exc: object) -> None:
        self._file.close()

    def close(self) -> None:
        self._file.close()
