"""Writes a split's ordered records into shards: aside under a temporary name, then moved into place."""
from __future__ import annotations

import hashlib
import math
import os
from dataclasses import dataclass

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


def write_split(folder: str, name: str, split: str, records: ByteColumn, num_shards: int,
                compression: str) -> list[ShardInfo]:
    """Writes `records` in order into `num_shards` shards of near-equal example counts."""
    total = records.num_rows
    shards = []
    for index in range(num_shards):
        start, stop = index * total // num_shards, (index + 1) * total // num_shards
        file = shard_name(name, split, index, num_shards, compression)
        shards.append(_write_shard(os.path.join(folder, file), records, start, stop, compression))
    return shards


def _write_shard(path: str, records: ByteColumn, start: int, stop: int, compression: str) -> ShardInfo:
    digest = hashlib.sha256()
    compressor = Compressor(compression)
    size = 0
    aside = temporary(path)
    with open(aside, "wb") as file:
        for chunk_start in range(start, stop, _CHUNK_RECORDS):
            chunk_stop = min(stop, chunk_start + _CHUNK_RECORDS)
            lo, hi = records.offsets[chunk_start], records.offsets[chunk_stop]
            chunk = ByteColumn(records.data[lo:hi], records.offsets[chunk_start : chunk_stop + 1] - lo)
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
    return ShardInfo(os.path.basename(path), stop - start, size, digest.hexdigest())
