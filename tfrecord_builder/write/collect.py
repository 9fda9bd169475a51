"""Gathers a split's encoded records and puts them in their final order, in bounded memory.

With shuffling on, records are ordered by their keys' hashes: a seeded permutation that doesn't
depend on the order rows were read in. With shuffling off they keep the source's order.

Records are held in memory up to `SPILL_BYTES` per split; beyond that each batch of them is
sorted and written to a run file, and the final order comes from merging the runs (an external
sort), so a build's memory doesn't grow with the number of records.

Keys that must be unique (a builder's own keys, not rows' content) are checked in the same pass:
sorted by hash, a duplicate sits next to its twin, so no index of every key is kept in memory.
Each such record carries a label (its origin and key) for the message.
"""
from __future__ import annotations

import heapq
import os
import struct
from typing import BinaryIO, Iterator

import numpy as np

from ..codec.bytecolumn import ByteColumn, concat
from ..errors import DataError

SPILL_BYTES = 16 * 1024**2
_RUN_HEADER = struct.Struct("<QQII")  # hash high, hash low, record length, label length
_CHUNK_RECORDS = 4096
_CHUNK_BYTES = 4 * 1024**2  # merged records handed on at a time: large records make fewer per chunk


class SplitRecords:
    """One split's records as they arrive, batch by batch."""

    def __init__(self, spill_dir: str | None = None, shuffle: bool = True, name: str = "records") -> None:
        self._hashes: list[np.ndarray] = []
        self._records: list[ByteColumn] = []
        self._labels: list[str] = []
        self._buffered = 0
        self._spill_dir = spill_dir
        self._shuffle = shuffle
        self.name = name
        self.runs: list[str] = []
        self.num_examples = 0
        self.num_bytes = 0

    def add(self, hashes: np.ndarray, records: ByteColumn, labels: list[str] | None = None) -> None:
        """Adds records with their key hashes; with `labels` ("origin\0key"), their keys must be unique."""
        if not records.num_rows:
            return
        self._hashes.append(hashes)
        self._records.append(records)
        if labels is not None:
            self._labels.extend(labels)
            self._buffered += sum(map(len, labels))
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
                hashes, records, labels = self._sorted()
                if labels:
                    _check_unique(hashes, labels)
                yield hashes, records
            return
        if self._records:
            self._spill()
        streams = [_read_run(path) for path in self.runs]
        merged = heapq.merge(*streams, key=lambda item: item[:2]) if self._shuffle else (
            item for stream in streams for item in stream)
        chunk: list[tuple[int, int, bytes, bytes]] = []
        previous = None
        size = 0
        for item in merged:
            if item[3]:  # labelled: the key must differ from the one before
                if previous is not None and item[:2] == previous[:2]:
                    raise _duplicate(_text(previous[3]), _text(item[3]))
                previous = item
            chunk.append(item)
            size += len(item[2])
            if len(chunk) == _CHUNK_RECORDS or size >= _CHUNK_BYTES:
                yield _chunk(chunk)
                chunk, size = [], 0
        if chunk:
            yield _chunk(chunk)

    def discard(self) -> None:
        """Removes the runs (kept until the build ends: a resumed build may merge them again)."""
        for path in self.runs:
            if os.path.exists(path):
                os.remove(path)
        self.runs = []

    def restore(self, runs: list[str], num_examples: int, num_bytes: int) -> None:
        """Takes up the runs a checkpoint of an interrupted build lists."""
        self.runs, self.num_examples, self.num_bytes = list(runs), num_examples, num_bytes

    def spill(self) -> None:
        """Writes the buffered records to a run now (before a checkpoint)."""
        if self._records:
            self._spill()

    def _sorted(self) -> tuple[np.ndarray, ByteColumn, list[str]]:
        """The buffered records (their hashes, and labels if any) in order: by hash, or as they came."""
        records = concat(self._records)
        hashes = np.concatenate(self._hashes)
        labels = self._labels
        if not self._shuffle:
            return hashes, records, labels
        # lexsort's last key is the primary one; ties keep their arrival order
        order = np.lexsort((hashes[:, 1], hashes[:, 0]))
        return hashes[order], records.take(order), [labels[i] for i in order] if labels else labels

    def _spill(self) -> None:
        hashes, records, labels = self._sorted()
        os.makedirs(self._spill_dir, exist_ok=True)
        path = os.path.join(self._spill_dir, f"run-{self.name}-{len(self.runs):05d}")
        encoded = [label.encode("utf-8", "surrogatepass") for label in labels] or [b""] * records.num_rows
        header = np.zeros(records.num_rows, dtype=[("high", "<u8"), ("low", "<u8"), ("length", "<u4"),
                                                   ("label", "<u4")])
        header["high"], header["low"], header["length"] = hashes[:, 0], hashes[:, 1], records.lengths
        header["label"] = [len(label) for label in encoded]
        heads = header.tobytes()
        size = _RUN_HEADER.size
        # interleaved by slicing bytes: a NumPy join would index every byte with an int64 (8x the memory)
        with open(path + ".tmp", "wb", buffering=1 << 20) as file:
            for index, (row, label) in enumerate(zip(records.rows(), encoded)):
                file.write(heads[index * size : (index + 1) * size])
                file.write(row)
                file.write(label)
            file.flush()
            os.fsync(file.fileno())
        os.replace(path + ".tmp", path)  # a run is whole or absent, for a checkpoint that lists it
        self.runs.append(path)
        self._hashes, self._records, self._labels, self._buffered = [], [], [], 0


def _check_unique(hashes: np.ndarray, labels: list[str]) -> None:
    same = np.flatnonzero((hashes[1:] == hashes[:-1]).all(axis=1))
    if len(same):
        raise _duplicate(labels[same[0]], labels[same[0] + 1])


def _duplicate(first: str, second: str) -> DataError:
    origin, _, key = second.partition("\0")
    return DataError(f"{origin}: duplicate key {key} (also yielded at {first.partition(chr(0))[0]}); "
                     "expected unique keys")


def _text(label: bytes) -> str:
    return label.decode("utf-8", "surrogatepass")


def _chunk(items: list[tuple[int, int, bytes, bytes]]) -> tuple[np.ndarray, ByteColumn]:
    hashes = np.array([item[:2] for item in items], dtype=np.uint64).reshape(-1, 2)
    return hashes, ByteColumn.from_rows([item[2] for item in items])


def _read_run(path: str) -> Iterator[tuple[int, int, bytes]]:
    with open(path, "rb", buffering=1 << 20) as file:
        yield from _records(file)


def _records(file: BinaryIO) -> Iterator[tuple[int, int, bytes, bytes]]:
    size = _RUN_HEADER.size
    while header := file.read(size):
        high, low, length, label = _RUN_HEADER.unpack(header)
        yield high, low, file.read(length), file.read(label)
