"""TFRecord framing: `uint64 length, masked crc32c(length), data, masked crc32c(data)`.

Written and read here without TensorFlow (google-crc32c computes the checksums in C), so the
writer needs no 3 s import and `inspect` can count records before TensorFlow loads.
"""
from __future__ import annotations

import gzip
import struct
import zlib
from typing import BinaryIO, Iterator, Sequence

import google_crc32c
import numpy as np

from .. import fs
from ..errors import DatasetError
from .bytecolumn import ByteColumn, join, looked_up, row_lengths

_MASK_DELTA = 0xA282EAD8
# what a broken frame is called, by `read_records` and by verify's block reader (frames.py) alike
LENGTH_MISMATCH = "length checksum mismatch (corrupt frame)"
DATA_MISMATCH = "data checksum mismatch (corrupt record)"
# the suffixes Beam's ReadFromTFRecord detects compression by (zlib shards of 0.2 and before
# were named .zz: datasets list their shards' names, so those still read)
SUFFIX = {"none": "", "gzip": ".gz", "zlib": ".deflate"}
# zlib window bits: 31 writes a gzip stream (TensorFlow's "GZIP"), 15 a zlib stream ("ZLIB").
WINDOW_BITS = {"gzip": 31, "zlib": 15}


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
    base = int(joined.offsets[0])
    buffer = data[base : joined.offsets[-1]].tobytes()  # google-crc32c takes bytes
    offsets = (joined.offsets - base).tolist()
    value = google_crc32c.value
    crcs = np.fromiter((value(buffer[start + 12 : end - 4]) for start, end in zip(offsets[:-1], offsets[1:])),
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


def read_records(stream: BinaryIO, name: str, check_crc: bool = True) -> Iterator[bytes]:
    """Yields each record of a TFRecord stream; a broken frame, or compressed data that can't be
    decompressed, raises DatasetError naming it."""
    try:
        yield from _records(stream, name, check_crc)
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


def _records(stream: BinaryIO, name: str, check_crc: bool) -> Iterator[bytes]:
    index = 0
    while True:
        header = stream.read(12)
        if not header:
            return
        if len(header) < 12:
            raise DatasetError(truncated_header(name, index, len(header)))
        length, length_ok = frame_length(header)
        if check_crc and not length_ok:
            raise DatasetError(f"{name}: record {index}: {LENGTH_MISMATCH}")
        data = stream.read(length)
        footer = stream.read(4)
        if len(data) < length or len(footer) < 4:
            raise DatasetError(truncated_data(name, index, length))
        if check_crc and not data_intact(data, footer):
            raise DatasetError(f"{name}: record {index}: {DATA_MISMATCH}")
        yield data
        index += 1


class _ZlibReader:
    """A minimal file-like reader of one zlib stream (Python has no `zlib.open`)."""

    def __init__(self, path: str):
        self._file = fs.open_file(path)
        self._inflater = zlib.decompressobj(15)
        self._buffer = b""

    def read(self, size: int) -> bytes:
        while len(self._buffer) < size:
            chunk = self._file.read(1 << 20)
            if not chunk:
                self._buffer += self._inflater.flush()
                break
            self._buffer += self._inflater.decompress(chunk)
        out, self._buffer = self._buffer[:size], self._buffer[size:]
        return out

    def __enter__(self) -> "_ZlibReader":
        return self

    def __exit__(self, *exc: object) -> None:
        self._file.close()

    def close(self) -> None:
        self._file.close()
