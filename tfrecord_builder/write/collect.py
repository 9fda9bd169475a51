"""Gathers a split's encoded records and puts them in their final order, in bounded memory.

With shuffling on, records are ordered by their keys' hashes: a seeded permutation that doesn't
depend on the order rows were read in. With shuffling off they keep the source's order.

Records are held in memory up to `SPILL_BYTES` per split; beyond that each batch of them is
sorted and written to a run file, and the final order comes from merging the runs (an external
sort), so a build's memory doesn't grow with the number of records.
"""
from __future__ import annotations

import heapq
import os
import struct
from typing import BinaryIO, Iterator

import numpy as np

from ..codec.bytecolumn import ByteColumn, concat

SPILL_BYTES = 16 * 1024**2
_RUN_HEADER = struct.Struct("<QQI")  # hash high, hash low, record length
_CHUNK_RECORDS = 4096


class SplitRecords:
    """One split's records as they arrive, batch by batch."""

    def __init__(self, spill_dir: str | None = None, shuffle: bool = True) -> None:
        self._hashes: list[np.ndarray] = []
        self._records: list[ByteColumn] = []
        self._buffered = 0
        self._spill_dir = spill_dir
        self._shuffle = shuffle
        self.runs: list[str] = []
        self.num_examples = 0
        self.num_bytes = 0

    def add(self, hashes: np.ndarray, records: ByteColumn) -> None:
        if not records.num_rows:
            return
        self._hashes.append(hashes)
        self._records.append(records)
        size = int(records.offsets[-1] - records.offsets[0])
        self.num_examples += records.num_rows
        self.num_bytes += size
        self._buffered += size
        if self._spill_dir is not None and self._buffered > SPILL_BYTES:
            self._spill()

    def ordered(self) -> Iterator[tuple[np.ndarray, ByteColumn]]:
        """Every record (with its key hash) in the order they are written, as consecutive chunks."""
        if not self.runs:
            if self._records:
                yield self._sorted()
            return
        if self._records:
            self._spill()
        streams = [_read_run(path) for path in self.runs]
        merged = heapq.merge(*streams, key=lambda item: item[:2]) if self._shuffle else (
            item for stream in streams for item in stream)
        chunk: list[tuple[int, int, bytes]] = []
        for item in merged:
            chunk.append(item)
            if len(chunk) == _CHUNK_RECORDS:
                yield _chunk(chunk)
                chunk = []
        if chunk:
            yield _chunk(chunk)
        for path in self.runs:
            os.remove(path)

    def _sorted(self) -> tuple[np.ndarray, ByteColumn]:
        """The buffered records (and their hashes) in order: by hash, or as they came."""
        records = concat(self._records)
        hashes = np.concatenate(self._hashes)
        if not self._shuffle:
            return hashes, records
        # lexsort's last key is the primary one; ties keep their arrival order
        order = np.lexsort((hashes[:, 1], hashes[:, 0]))
        return hashes[order], records.take(order)

    def _spill(self) -> None:
        hashes, records = self._sorted()
        os.makedirs(self._spill_dir, exist_ok=True)
        path = os.path.join(self._spill_dir, f"run-{id(self):x}-{len(self.runs):05d}")
        header = np.zeros(records.num_rows, dtype=[("high", "<u8"), ("low", "<u8"), ("length", "<u4")])
        header["high"], header["low"], header["length"] = hashes[:, 0], hashes[:, 1], records.lengths
        heads = header.tobytes()
        size = _RUN_HEADER.size
        # interleaved by slicing bytes: a NumPy join would index every byte with an int64 (8x the memory)
        with open(path, "wb", buffering=1 << 20) as file:
            for index, row in enumerate(records.rows()):
                file.write(heads[index * size : (index + 1) * size])
                file.write(row)
        self.runs.append(path)
        self._hashes, self._records, self._buffered = [], [], 0


def _chunk(items: list[tuple[int, int, bytes]]) -> tuple[np.ndarray, ByteColumn]:
    hashes = np.array([item[:2] for item in items], dtype=np.uint64).reshape(-1, 2)
    return hashes, ByteColumn.from_rows([item[2] for item in items])


def _read_run(path: str) -> Iterator[tuple[int, int, bytes]]:
    with open(path, "rb", buffering=1 << 20) as file:
        yield from _records(file)


def _records(file: BinaryIO) -> Iterator[tuple[int, int, bytes]]:
    size = _RUN_HEADER.size
    while header := file.read(size):
        high, low, length = _RUN_HEADER.unpack(header)
        yield high, low, file.read(length)
