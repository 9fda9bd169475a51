"""Writes a split's ordered records into shards: aside under a temporary name, then moved into place."""
from __future__ import annotations

import hashlib
import math
import os
from dataclasses import dataclass
from typing import Iterable, Iterator

from ..codec.bytecolumn import ByteColumn
from ..codec.tfrecord import Compressor, frame
from .naming import shard_name, temporary

_CHUNK_RECORDS = 4096  # records framed per step: bounds the extra memory of framing


@dataclass
class ShardInfo:
    """A written shard, as dataset_info.json lists it."""

    file: str
    num_examples: int
    num_bytes: int
    sha256: str

    def to_dict(self) -> dict:
        return {"file": self.file, "num_examples": self.num_examples, "num_bytes": self.num_bytes,
                "sha256": self.sha256}


def count_shards(num_examples: int, num_bytes: int, shards: int | None, target_bytes: int) -> int:
    """Shards for a split: the spec's count, or enough to keep each under the target size."""
    if shards is not None:
        return shards
    return max(1, math.ceil(num_bytes / target_bytes)) if num_examples else 1


def write_split(folder: str, name: str, split: str, records: Iterable[ByteColumn], total: int, num_shards: int,
                compression: str) -> list[ShardInfo]:
    """Writes `total` records, arriving in order as chunks, into `num_shards` shards of near-equal
    example counts."""
    stream = _Pieces(iter(records))
    shards = []
    for index in range(num_shards):
        count = (index + 1) * total // num_shards - index * total // num_shards
        file = shard_name(name, split, index, num_shards, compression)
        shards.append(_write_shard(os.path.join(folder, file), stream.take(count), count, compression))
    return shards


class _Pieces:
    """Hands out the next n records of a stream of chunks, at most _CHUNK_RECORDS at a time."""

    def __init__(self, chunks: Iterator[ByteColumn]):
        self._chunks = chunks
        self._current: ByteColumn | None = None
        self._position = 0

    def take(self, count: int) -> Iterator[ByteColumn]:
        while count > 0:
            if self._current is None or self._position == self._current.num_rows:
                self._current, self._position = next(self._chunks), 0
            stop = min(self._current.num_rows, self._position + count, self._position + _CHUNK_RECORDS)
            offsets = self._current.offsets
            low, high = offsets[self._position], offsets[stop]
            yield ByteColumn(self._current.data[low:high], offsets[self._position : stop + 1] - low)
            count -= stop - self._position
            self._position = stop


def _write_shard(path: str, pieces: Iterable[ByteColumn], count: int, compression: str) -> ShardInfo:
    digest = hashlib.sha256()
    compressor = Compressor(compression)
    size = 0
    aside = temporary(path)
    with open(aside, "wb") as file:
        for chunk in pieces:
            data = compressor.compress(memoryview(frame(chunk).data))
            digest.update(data)
            file.write(data)
            size += len(data)
        tail = compressor.flush()
        digest.update(tail)
        file.write(tail)
        size += len(tail)
        file.flush()
        os.fsync(file.fileno())
    os.replace(aside, path)
    return ShardInfo(os.path.basename(path), count, size, digest.hexdigest())
