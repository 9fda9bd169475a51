"""Run files: a split's records sorted as they are written (`write/order.py`), on disk, and read
back a window at a time.

A run file is a header (records, data bytes, label bytes), then every record's key hash (two
uint64), length and label length as arrays, then the records' bytes, then the labels' (a
record's "origin\\0key" where keys must be unique: a run with labels says its keys must be).
"""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass

import numpy as np

from ..atomic import AtomicFile
from ..codec.bytecolumn import ByteColumn, concat
from .keys import hash_hex

_HEADER = struct.Struct("<QQQ")  # a run file's records, data bytes and label bytes
CHUNK_RECORDS = 4096  # hashes loaded into a window at a time (and records a chunk of them holds)


@dataclass(frozen=True)
class RunFile:
    """A run an encoding worker wrote: its path, records and their bytes."""

    path: str
    num_examples: int
    num_bytes: int


_PROCESS_TOKEN = os.urandom(6).hex()  # drawn again in each worker (processes.context: forked or spawned)
_RUN_NUMBERS = iter(range(1 << 62))


def new_run(folder: str, name: str) -> str:
    """A path for a new run of the split `name` that no other process of the build picks."""
    return os.path.join(folder, f"run-{name}-{_PROCESS_TOKEN}-{next(_RUN_NUMBERS):06d}")


def renew_run_names() -> None:
    """Draws this process's part of the run names anew: a forked worker must not share its parent's."""
    global _PROCESS_TOKEN, _RUN_NUMBERS
    _PROCESS_TOKEN, _RUN_NUMBERS = os.urandom(6).hex(), iter(range(1 << 62))


class RunWriter:
    """Writes a run file whose totals (records, data bytes, label bytes) are known before its
    records come: each chunk's hashes, lengths, label lengths, records and labels go straight to
    their own sections, so a run is written from a merge as it goes."""

    def __init__(self, path: str, count: int, data_bytes: int, label_bytes: int):
        # not fsynced: a killed process loses nothing written, and a checkpoint fsyncs the runs
        # it lists (write/checkpoint.py) before it names them
        self.target = AtomicFile(path, sync=False)
        self.file = self.target.file
        self.file.write(_HEADER.pack(count, data_bytes, label_bytes))
        start = _HEADER.size
        # where the next chunk of each section goes: hashes, lengths, label lengths, records, labels
        self.at = [start, start + 16 * count, start + 20 * count, start + 24 * count, start + 24 * count + data_bytes]
        self.end = self.at[4] + label_bytes

    def write(self, hashes: np.ndarray, records: ByteColumn, labels: ByteColumn | None) -> None:
        count = len(hashes)
        sections = [hashes.astype("<u8").tobytes(), records.lengths.astype("<u4").tobytes(),
                    labels.lengths.astype("<u4").tobytes() if labels is not None else bytes(4 * count),
                    memoryview(records.data[records.offsets[0] : records.offsets[-1]]),
                    memoryview(labels.data[labels.offsets[0] : labels.offsets[-1]]) if labels is not None else b""]
        for section, data in enumerate(sections):
            if len(data):
                self.file.seek(self.at[section])
                self.file.write(data)
                self.at[section] += len(data)

    def __enter__(self) -> "RunWriter":
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: object) -> None:
        if kind is None:
            assert self.at[4] == self.end, "a run's records fell short of its header"
        self.target.__exit__(kind, error, trace)  # moved into place, or dropped (a full disk's error naming it)


class RunWindow:
    """A run on disk, or a slice of one (records `start` to `stop`), read a window at a time:
    with `data`, the records' bytes with their key hashes, else the hashes alone; with `labels`,
    their labels too (when they have some: a merge into a longer run carries them on)."""

    def __init__(self, path: str, start: int = 0, stop: int | None = None, data: bool = True, labels: bool = False):
        self.file = open(path, "rb")
        self.count, self.data_bytes, self.label_bytes = _HEADER.unpack(self.file.read(_HEADER.size))
        self.labelled = self.label_bytes > 0  # its keys must be unique
        self.data_start = _HEADER.size + 24 * self.count
        self.label_start = self.data_start + self.data_bytes
        self.stop = self.count if stop is None else stop
        self.data = data
        self.next = start  # the first record not yet loaded
        # its bytes' (and its label's) offset in the data (and label) section
        self.data_position = int(self._lengths(0, start).sum()) if data and start else 0
        self.with_labels = labels and self.labelled
        self.label_position = int(self._label_lengths(0, start).sum()) if self.with_labels and start else 0
        self.hashes = np.zeros((0, 2), np.uint64)  # the loaded window
        self.records: ByteColumn | None = _EMPTY if data else None
        self.labels: ByteColumn | None = _EMPTY if self.with_labels else None

    @property
    def exhausted(self) -> bool:
        return self.next == self.stop and not len(self.hashes)

    @property
    def complete(self) -> bool:
        """Every record of the run (or slice) is in the window (or gone)."""
        return self.next == self.stop

    @property
    def first(self) -> int:
        """The index in the run of the window's first record."""
        return self.next - len(self.hashes)

    def _array(self, section: int, width: int, dtype: str, start: int, stop: int) -> np.ndarray:
        self.file.seek(section + width * start)
        return np.frombuffer(self.file.read(width * (stop - start)), dtype=dtype)

    def _lengths(self, start: int, stop: int) -> np.ndarray:
        return self._array(_HEADER.size + 16 * self.count, 4, "<u4", start, stop).astype(np.int64)

    def _label_lengths(self, start: int, stop: int) -> np.ndarray:
        return self._array(_HEADER.size + 20 * self.count, 4, "<u4", start, stop).astype(np.int64)

    def _column(self, section: int, position: int, lengths: np.ndarray) -> ByteColumn:
        self.file.seek(section + position)
        return ByteColumn.from_lengths(np.frombuffer(self.file.read(int(lengths.sum())), dtype=np.uint8), lengths)

    def hash_at(self, index: int) -> str:
        """Record `index`'s key hash, in hex."""
        return hash_hex(self._array(_HEADER.size, 16, "<u8", index, index + 1).reshape(1, 2), 0)

    def load(self, max_bytes: int) -> None:
        """Adds the next records to the window: about `max_bytes` of them (at least one), or,
        without `data`, the next CHUNK_RECORDS hashes."""
        if self.next == self.stop:
            return
        stop = min(self.stop, self.next + CHUNK_RECORDS)
        if self.data:
            lengths = self._lengths(self.next, stop)
            keep = max(1, int(np.searchsorted(np.cumsum(lengths), max_bytes, side="right")))
            stop = self.next + keep
            loaded = self._column(self.data_start, self.data_position, lengths[:keep])
            self.data_position += len(loaded.data)
            self.records = concat([self.records, loaded]) if self.records.num_rows else loaded
        if self.with_labels:
            labels = self._column(self.label_start, self.label_position, self._label_lengths(self.next, stop))
            self.label_position += len(labels.data)
            self.labels = concat([self.labels, labels]) if self.labels.num_rows else labels
        hashes = self._array(_HEADER.size, 16, "<u8", self.next, stop).reshape(-1, 2).astype(np.uint64)
        self.next = stop
        self.hashes = np.concatenate([self.hashes, hashes]) if len(self.hashes) else hashes

    def take(self, count: int) -> tuple[np.ndarray, ByteColumn | None, ByteColumn | None]:
        """The window's first `count` records and labels (None where not loaded), which leave it."""
        hashes = self.hashes[:count]
        self.hashes = self.hashes[count:]
        records, self.records = _cut(self.records, count)
        labels, self.labels = _cut(self.labels, count)
        return hashes, records, labels

    def label(self, index: int) -> str:
        """Record `index`'s label (read only for a message: it scans the label lengths before it)."""
        lengths = self._label_lengths(0, index + 1)
        self.file.seek(self.label_start + int(lengths[:-1].sum()))
        return self.file.read(int(lengths[-1])).decode("utf-8", "surrogatepass")

    def close(self) -> None:
        self.file.close()


_EMPTY = ByteColumn(np.zeros(0, np.uint8), np.zeros(1, np.int64))


def _cut(column: ByteColumn | None, count: int) -> tuple[ByteColumn | None, ByteColumn | None]:
    """A column's first `count` rows, and the rest."""
    if column is None:
        return None, None
    low, high = column.offsets[0], column.offsets[count]
    first = ByteColumn(column.data[low:high], column.offsets[: count + 1] - low)
    if count == column.num_rows:
        # not an empty view of the loaded bytes: it would keep them alive in an exhausted run's
        # window, and a merge of many runs would hold all their last windows
        return first, _EMPTY
    rest = column.offsets[count:]
    return first, ByteColumn(column.data[high:], rest - rest[0])
