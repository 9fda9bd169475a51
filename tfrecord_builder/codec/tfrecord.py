"""TFRecord framing: `uint64 length, masked crc32c(length), data, masked crc32c(data)`.

Written and read here without TensorFlow (google-crc32c computes the checksums in C), so the
writer needs no 3 s import and `inspect` can count records before TensorFlow loads.
"""
from __future__ import annotations

import gzip
import struct
import zlib
from typing import BinaryIO, Iterator

import google_crc32c
import numpy as np

from ..errors import DatasetError
from .bytecolumn import ByteColumn

_MASK_DELTA = 0xA282EAD8
SUFFIX = {"none": "", "gzip": ".gz", "zlib": ".zz"}
# zlib window bits: 31 writes a gzip stream (TensorFlow's "GZIP"), 15 a zlib stream ("ZLIB").
_WINDOW_BITS = {"gzip": 31, "zlib": 15}


def masked_crc(data: bytes | memoryview) -> int:
    """TFRecord's masked CRC32C."""
    crc = google_crc32c.value(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def frame(records: ByteColumn) -> bytes:
    """Every record with its TFRecord header and footer, in one buffer.

    Assembled by joining bytes slices (one memcpy each): for large records (images) a NumPy
    scatter would index every byte with an int64, eight times the records' own memory.
    """
    buffer = records.data[records.offsets[0] : records.offsets[-1]].tobytes()  # google-crc32c takes bytes
    offsets = (records.offsets - records.offsets[0]).tolist()
    headers: dict[int, bytes] = {}
    parts = []
    for start, end in zip(offsets[:-1], offsets[1:]):
        length = end - start
        header = headers.get(length)
        if header is None:
            size = struct.pack("<Q", length)
            header = headers[length] = size + struct.pack("<I", masked_crc(size))
        data = buffer[start:end]
        parts += (header, data, struct.pack("<I", masked_crc(data)))
    return b"".join(parts)


def framed(records: ByteColumn) -> ByteColumn:
    """Each record framed as its own row (16 bytes longer): framing happens in the encoding
    workers, and the shard writer only concatenates."""
    return ByteColumn.from_lengths(np.frombuffer(frame(records), dtype=np.uint8), records.lengths + 16)


class Compressor:
    """Compresses a stream the way TensorFlow's TFRecord writer does for `compression`."""

    def __init__(self, compression: str):
        self._compressor = (
            zlib.compressobj(6, zlib.DEFLATED, _WINDOW_BITS[compression]) if compression != "none" else None
        )

    def compress(self, data: bytes | memoryview) -> bytes | memoryview:
        return self._compressor.compress(data) if self._compressor else data

    def flush(self) -> bytes:
        return self._compressor.flush() if self._compressor else b""


def open_records(path: str, compression: str) -> BinaryIO:
    """Opens a shard for reading, decompressing if needed."""
    if compression == "gzip":
        return gzip.open(path, "rb")
    if compression == "zlib":
        return _ZlibReader(path)
    return open(path, "rb")


def read_records(stream: BinaryIO, name: str, check_crc: bool = True) -> Iterator[bytes]:
    """Yields each record of a TFRecord stream; a broken frame raises DatasetError naming it."""
    index = 0
    while True:
        header = stream.read(12)
        if not header:
            return
        if len(header) < 12:
            raise DatasetError(f"{name}: record {index}: truncated header ({len(header)} of 12 bytes)")
        (length,) = struct.unpack("<Q", header[:8])
        if check_crc and masked_crc(header[:8]) != struct.unpack("<I", header[8:])[0]:
            raise DatasetError(f"{name}: record {index}: length checksum mismatch (corrupt frame)")
        data = stream.read(length)
        footer = stream.read(4)
        if len(data) < length or len(footer) < 4:
            raise DatasetError(f"{name}: record {index}: truncated (expected {length} bytes of data)")
        if check_crc and masked_crc(data) != struct.unpack("<I", footer)[0]:
            raise DatasetError(f"{name}: record {index}: data checksum mismatch (corrupt record)")
        yield data
        index += 1


class _ZlibReader:
    """A minimal file-like reader of one zlib stream (Python has no `zlib.open`)."""

    def __init__(self, path: str):
        self._file = open(path, "rb")
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
