"""Gathers a split's encoded records and puts them in their final order, in bounded memory.

With shuffling on, records are ordered by their keys' hashes: a seeded permutation that doesn't
depend on the order rows were read in. With shuffling off they keep the source's order.

Records are held in memory up to `SPILL_BYTES` per split; beyond that each batch of them is
sorted and written to a run file, and the final order comes from merging the runs (an external
sort), so a build's memory doesn't grow with the number of records.

Encoding workers write their batches' records as such runs themselves (`write_run`), so the
build's process never holds or copies them: it keeps the runs' names, and `slices` cuts every
shard's records out of them by rank, for shard writers that each merge their own. A split with
more than MAX_RUNS runs first has some merged into longer ones (`combine`), so no merge opens,
or holds a window of, more runs than that.

Keys that must be unique (a builder's own keys, not rows' content) are checked in the same pass:
sorted by hash, a duplicate sits next to its twin, so no index of every key is kept in memory.
Each such record carries a label (its origin and key) for the message.
"""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from ..atomic import AtomicFile
from ..codec.bytecolumn import ByteColumn, concat
from ..errors import DataError
from ..processes import can_fork, worker_pool

SPILL_BYTES = 16 * 1024**2
# A merge's fan-in: it opens every run it reads and holds a window of each (64 KiB of hashes, as
# much of records), so a split with more runs is first merged down to this many
MAX_RUNS = 128
_RUN_HEADER = struct.Struct("<QQQ")  # a run file's records, data bytes and label bytes
_CHUNK_RECORDS = 4096
_CHUNK_BYTES = 4 * 1024**2  # merged records handed on at a time: large records make fewer per chunk


@dataclass(frozen=True)
class RunFile:
    """A run an encoding worker wrote: its path, records and their bytes."""

    path: str
    num_examples: int
    num_bytes: int


@dataclass(frozen=True)
class ShardSlices:
    """One shard's records: how many, the slices of the runs that hold them (path, first, stop),
    and the hashes (hex) of its first and last key ("" when empty)."""

    count: int
    slices: tuple[tuple[str, int, int], ...]
    first: str
    last: str


class SplitRecords:
    """One split's records as they arrive, batch by batch, or as runs the workers wrote."""

    def __init__(self, spill_dir: str | None = None, shuffle: bool = True, name: str = "records") -> None:
        self._hashes: list[np.ndarray] = []
        self._records: list[ByteColumn] = []
        self._labels: list[str] = []  # with labels, keys must be unique (a run's header says so too)
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

    def add_run(self, run: RunFile) -> None:
        """Adds a run a worker wrote (sorted as `write_run` sorts). Records held before it are
        written to a run first: without shuffling, the runs' order is the records' order."""
        if self._records:
            self._spill()
        self.runs.append(run.path)
        self.num_examples += run.num_examples
        self.num_bytes += run.num_bytes

    def held(self) -> "HeldRecords | None":
        """Every record, if all are still in memory (none spilled), with the order they are
        written in. Keys that must be unique are checked here."""
        if self.runs:
            return None
        held = self._held()
        if self._labels:
            _check_unique(held.hashes, [self._labels[i] for i in held.order])
        return held

    def _held(self) -> "HeldRecords":
        hashes = np.concatenate(self._hashes) if self._hashes else np.zeros((0, 2), np.uint64)
        order = _write_order(hashes, self._shuffle)
        return HeldRecords(hashes[order], order, list(self._records))

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

    def _spill(self) -> None:
        """Writes the buffered records to a run file in order."""
        path = os.path.join(self._spill_dir, f"run-{self.name}-{len(self.runs):05d}")
        _write_held(path, self._held(), self._labels or None)
        self.runs.append(path)
        self._hashes, self._records, self._labels, self._buffered = [], [], [], 0

    def combine(self, processes: int = 1) -> list[str]:
        """Merges runs into longer ones until the split has at most MAX_RUNS: neither the open
        files nor the memory of the merges that follow grows with the number of runs.

        Only as many runs as that takes are merged (an extra pass over their records alone),
        runs next to each other, each group into one that takes its place, so the source's order
        stays; groups are merged side by side in up to `processes` forked processes. Returns the
        runs replaced, which the caller removes once no checkpoint lists them (runs made and
        merged again here are removed at once)."""
        if len(self.runs) < MAX_RUNS:  # records held in memory (if any) make one run more at most
            return []
        if self._records:
            self._spill()
        original = set(self.runs)
        replaced = []
        while len(self.runs) > MAX_RUNS:
            groups = _combined_groups(len(self.runs), MAX_RUNS)
            jobs = [(self.runs[start:stop], self._spill_dir or os.path.dirname(self.runs[0]), self.name, self._shuffle)
                    for start, stop in groups]
            merged = _map(_combine_runs, jobs, processes)
            runs, previous = [], 0
            for (start, stop), path in zip(groups, merged):
                runs += self.runs[previous:start] + [path]
                previous = stop
            runs += self.runs[previous:]
            for path in sorted(set(self.runs) - set(runs)):
                (replaced.append if path in original else os.remove)(path)
            self.runs = runs
        return replaced

    def slices(self, starts: np.ndarray) -> tuple[list[ShardSlices], int | None]:
        """Where each shard's records are in the runs, for shards that start at the ranks
        `starts` (and `starts[-1]`, the total, at the end); and, when shuffling, how many
        different keys the split has (None: not counted). Every record goes to the runs first.

        Shuffled, the runs' key hashes alone (not their records) are merged to find the ranks:
        that pass also finds a duplicate key. In the source's order the runs follow each other."""
        if self._records:
            self._spill()
        runs = [_Run(path, data=False) for path in self.runs]
        try:
            if self._shuffle:
                # (every labelled record is in a run by now: its header says its keys must be unique)
                positions, edges, distinct = _merged_positions(runs, starts, any(run.labelled for run in runs))
            else:
                (positions, edges), distinct = _positions_in_order(runs, starts), None
        finally:
            for run in runs:
                run.close()
        shards = []
        for number in range(len(starts) - 1):
            low, high = int(starts[number]), int(starts[number + 1])
            pieces = tuple((path, int(first), int(stop)) for path, first, stop
                           in zip(self.runs, positions[number], positions[number + 1]) if stop > first)
            shards.append(ShardSlices(high - low, pieces, edges.get(low, "") if high > low else "",
                                      edges.get(high - 1, "") if high > low else ""))
        return shards, distinct


def _combined_groups(count: int, fan_in: int) -> list[tuple[int, int]]:
    """The runs (start, stop) to merge, each group into one, to bring `count` runs nearer to
    `fan_in`: the fewest groups that reach it (merging k runs saves k - 1), near-equal and from the
    first run on; or, when even `fan_in` full groups wouldn't reach it, a whole round of them."""
    if count <= fan_in:
        return []
    groups = -(-(count - fan_in) // (fan_in - 1))
    if groups > fan_in:
        return [(start, min(count, start + fan_in)) for start in range(0, count, fan_in) if count - start > 1]
    merged = count - fan_in + groups  # runs that go into the groups
    bounds = [number * merged // groups for number in range(groups + 1)]
    return list(zip(bounds[:-1], bounds[1:]))


def _combine_runs(job: tuple[list[str], str, str, bool]) -> str:
    """Merges runs into one (by key hash, or one after another), labels and all; returns its path."""
    paths, folder, name, shuffle = job
    runs = [_Run(path, labels=True) for path in paths]
    try:
        path = _new_run(folder, name)
        with _RunWriter(path, sum(run.count for run in runs), sum(run.data_bytes for run in runs),
                        sum(run.label_bytes for run in runs)) as writer:
            for piece in _merged(runs) if shuffle else _in_order(runs):
                writer.write(*piece)
    finally:
        for run in runs:
            run.close()
    return path


def _map(function, jobs: list, processes: int) -> list:
    """`function` over `jobs` in order, in up to `processes` forked processes when there is more than one job."""
    processes = min(processes, len(jobs)) if can_fork() else 1
    if processes <= 1:
        return list(map(function, jobs))
    with worker_pool(processes, setup=renew_run_names) as pool:  # each worker names its runs apart
        return list(pool.map(function, jobs))


def write_run(folder: str, name: str, hashes: np.ndarray, records: ByteColumn, labels: list[str] | None,
              shuffle: bool) -> RunFile:
    """Writes a batch's records of one split as a run (sorted by key hash when shuffling) under a
    name no other process picks: what an encoding worker does instead of sending them back."""
    order = _write_order(hashes, shuffle)
    held = HeldRecords(hashes[order], order, [records])
    path = _new_run(folder, name)
    _write_held(path, held, labels)
    return RunFile(path, records.num_rows, int(records.offsets[-1] - records.offsets[0]))


_PROCESS_TOKEN = os.urandom(6).hex()  # drawn again in each worker (processes.context: forked or spawned)
_RUN_NUMBERS = iter(range(1 << 62))


def _new_run(folder: str, name: str) -> str:
    """A path for a new run of the split `name` that no other process of the build picks."""
    return os.path.join(folder, f"run-{name}-{_PROCESS_TOKEN}-{next(_RUN_NUMBERS):06d}")


def renew_run_names() -> None:
    """Draws this process's part of the run names anew: a forked worker must not share its parent's."""
    global _PROCESS_TOKEN, _RUN_NUMBERS
    _PROCESS_TOKEN, _RUN_NUMBERS = os.urandom(6).hex(), iter(range(1 << 62))


def _write_held(path: str, held: "HeldRecords", labels: list[str] | None) -> None:
    """Writes held records to a run file in their order, each straight from the batch that holds
    it: no sorted copy of them is made in memory."""
    encoded = [labels[i].encode("utf-8", "surrogatepass") for i in held.order.tolist()] if labels else []
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with _RunWriter(path, len(held.order), held.num_bytes, sum(map(len, encoded))) as writer:
        low = 0  # the chunk's first record, for its labels
        for hashes, chunk in held.chunks(0, len(held.order)):
            writer.write(hashes, chunk, ByteColumn.from_rows(encoded[low : low + len(hashes)]) if encoded else None)
            low += len(hashes)


class _RunWriter:
    """Writes a run file whose totals (records, data bytes, label bytes) are known before its
    records come: each piece's hashes, lengths, label lengths, records and labels go straight to
    their own sections, so a run is written from a merge as it goes."""

    def __init__(self, path: str, count: int, data_bytes: int, label_bytes: int):
        # not fsynced: a killed process loses nothing written, and a checkpoint fsyncs the runs
        # it lists (write/checkpoint.py) before it names them
        self.target = AtomicFile(path, sync=False)
        self.file = self.target.file
        self.file.write(_RUN_HEADER.pack(count, data_bytes, label_bytes))
        start = _RUN_HEADER.size
        # where the next piece of each section goes: hashes, lengths, label lengths, records, labels
        self.at = [start, start + 16 * count, start + 20 * count, start + 24 * count, start + 24 * count + data_bytes]
        self.end = self.at[4] + label_bytes

    def write(self, hashes: np.ndarray, records: ByteColumn, labels: ByteColumn | None) -> None:
        count = len(hashes)
        pieces = [hashes.astype("<u8").tobytes(), records.lengths.astype("<u4").tobytes(),
                  labels.lengths.astype("<u4").tobytes() if labels is not None else bytes(4 * count),
                  memoryview(records.data[records.offsets[0] : records.offsets[-1]]),
                  memoryview(labels.data[labels.offsets[0] : labels.offsets[-1]]) if labels is not None else b""]
        for section, piece in enumerate(pieces):
            if len(piece):
                self.file.seek(self.at[section])
                self.file.write(piece)
                self.at[section] += len(piece)

    def __enter__(self) -> "_RunWriter":
        return self

    def __exit__(self, kind: object, *_: object) -> None:
        if kind is not None:
            self.target.discard()
            return
        assert self.at[4] == self.end, "a run's records fell short of its header"
        self.target.commit()


def _write_order(hashes: np.ndarray, shuffle: bool) -> np.ndarray:
    """Records in order of their keys' hashes (ties keep their arrival order), or as they came."""
    # lexsort's last key is the primary one
    return np.lexsort((hashes[:, 1], hashes[:, 0])) if shuffle else np.arange(len(hashes))


class HeldRecords:
    """A split's records in memory, in the batches they arrived in: `order` lists them (numbered
    across the batches) in the order they are written, `hashes` holds their keys' hashes in that
    order."""

    def __init__(self, hashes: np.ndarray, order: np.ndarray, batches: list[ByteColumn]):
        self.hashes = hashes
        self.order = order
        self._views = [memoryview(batch.data) for batch in batches]
        counts = [batch.num_rows for batch in batches]
        # where each record lies: its batch, and its bytes there
        self._batch = np.repeat(np.arange(len(batches)), counts) if batches else np.zeros(0, np.int64)
        self._starts = np.concatenate([batch.offsets[:-1] for batch in batches]) if batches else np.zeros(0, np.int64)
        self._ends = np.concatenate([batch.offsets[1:] for batch in batches]) if batches else np.zeros(0, np.int64)

    def distinct_keys(self) -> int:
        """How many different keys the records have (equal rows share one)."""
        return len(np.unique(self.hashes, axis=0)) if len(self.hashes) else 0

    @property
    def num_bytes(self) -> int:
        """The records' bytes, all together."""
        return int((self._ends - self._starts).sum())

    def chunks(self, start: int, stop: int) -> Iterator[tuple[np.ndarray, ByteColumn]]:
        """The records at positions start..stop of the order, `_CHUNK_RECORDS` at a time, each
        chunk gathered from the batches (no sorted copy of them all is made)."""
        views = self._views
        for low in range(start, stop, _CHUNK_RECORDS):
            high = min(stop, low + _CHUNK_RECORDS)
            rows = self.order[low:high]
            starts, ends = self._starts[rows], self._ends[rows]
            data = b"".join([views[batch][begin:end] for batch, begin, end
                             in zip(self._batch[rows].tolist(), starts.tolist(), ends.tolist())])
            yield self.hashes[low:high], ByteColumn.from_lengths(np.frombuffer(data, np.uint8), ends - starts)


class _Run:
    """A sorted run on disk, or a slice of one (records `start` to `stop`), read a window at a
    time: with `data`, the records' bytes with their key hashes, else the hashes alone; with
    `labels`, their labels too (when they have some: a merge into a longer run carries them on).

    A run file is a header (records, data bytes, label bytes), then every record's hash (two
    uint64), length and label length as arrays, then the records' bytes, then the labels'.
    """

    def __init__(self, path: str, start: int = 0, stop: int | None = None, data: bool = True, labels: bool = False):
        self.file = open(path, "rb")
        self.count, self.data_bytes, self.label_bytes = _RUN_HEADER.unpack(self.file.read(_RUN_HEADER.size))
        self.labelled = self.label_bytes > 0  # its keys must be unique
        self.data_start = _RUN_HEADER.size + 24 * self.count
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
        return self._array(_RUN_HEADER.size + 16 * self.count, 4, "<u4", start, stop).astype(np.int64)

    def _label_lengths(self, start: int, stop: int) -> np.ndarray:
        return self._array(_RUN_HEADER.size + 20 * self.count, 4, "<u4", start, stop).astype(np.int64)

    def _column(self, section: int, position: int, lengths: np.ndarray) -> ByteColumn:
        self.file.seek(section + position)
        return ByteColumn.from_lengths(np.frombuffer(self.file.read(int(lengths.sum())), dtype=np.uint8), lengths)

    def hash_at(self, index: int) -> str:
        """Record `index`'s key hash, in hex."""
        return hash_hex(self._array(_RUN_HEADER.size, 16, "<u8", index, index + 1).reshape(1, 2), 0)

    def load(self, max_bytes: int) -> None:
        """Adds the next records to the window: about `max_bytes` of them (at least one), or,
        without `data`, the next _CHUNK_RECORDS hashes."""
        if self.next == self.stop:
            return
        stop = min(self.stop, self.next + _CHUNK_RECORDS)
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
        hashes = self._array(_RUN_HEADER.size, 16, "<u8", self.next, stop).reshape(-1, 2).astype(np.uint64)
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
        return _text(self.file.read(int(lengths[-1])))

    def close(self) -> None:
        self.file.close()


_EMPTY = ByteColumn(np.zeros(0, np.uint8), np.zeros(1, np.int64))


def _cut(column: ByteColumn | None, count: int) -> tuple[ByteColumn | None, ByteColumn | None]:
    """A column's first `count` rows, and the rest."""
    if column is None:
        return None, None
    low, high = column.offsets[0], column.offsets[count]
    rest = column.offsets[count:]
    return ByteColumn(column.data[low:high], column.offsets[: count + 1] - low), ByteColumn(column.data[high:], rest - rest[0])


def read_slices(slices: Sequence[tuple[str, int, int]], shuffle: bool) -> Iterator[tuple[np.ndarray, ByteColumn]]:
    """The records of a shard's run slices (`ShardSlices.slices`) in the order they are written,
    as (key hashes, records) chunks: merged by hash when shuffling, else one slice after another."""
    runs = [_Run(path, start, stop) for path, start, stop in slices]
    try:
        # keys were checked by `slices`
        for hashes, records, _ in _merged(runs) if shuffle else _in_order(runs):
            yield hashes, records
    finally:
        for run in runs:
            run.close()


_Piece = tuple[np.ndarray, ByteColumn, "ByteColumn | None"]  # key hashes, records, labels (None: not loaded)


def _in_order(runs: list[_Run]) -> Iterator[_Piece]:
    """The runs' records one run after another."""
    for run in runs:
        while not run.exhausted:
            run.load(_CHUNK_BYTES)
            yield run.take(len(run.hashes))


def _window_bytes(runs: int) -> int:
    """Bytes of records loaded per run: the windows of all runs together stay near _CHUNK_BYTES."""
    return max(64 * 1024, _CHUNK_BYTES // max(1, runs))


@dataclass
class _Block:
    """Records handed on by the merge, in hash order: their hashes, their bytes (None when only
    hashes are merged), and which part (a run and the index of its first record there) each came
    from."""

    hashes: np.ndarray
    records: ByteColumn | None
    labels: ByteColumn | None  # when loaded
    order: np.ndarray  # each record's place among the parts' records, concatenated
    parts: list[tuple[_Run, int, np.ndarray]]  # (run, index of its first record here, its hashes)

    def _starts(self) -> np.ndarray:
        """Where each part's records begin among the parts' records, concatenated."""
        return np.cumsum([0] + [len(part[2]) for part in self.parts])

    def sources(self) -> np.ndarray:
        """Each record's part."""
        return np.searchsorted(self._starts(), self.order, side="right") - 1

    def source(self, position: int) -> tuple[_Run, int]:
        """The run of the record at `position` and its index there."""
        starts = self._starts()
        index = int(self.order[position])
        part = int(np.searchsorted(starts, index, side="right")) - 1
        return self.parts[part][0], self.parts[part][1] + index - int(starts[part])


def _merged(runs: list[_Run]) -> Iterator[_Piece]:
    """The runs' records in hash order, a block at a time."""
    for block in _blocks(runs, False):
        yield block.hashes, block.records, block.labels


def _blocks(runs: list[_Run], unique: bool) -> Iterator[_Block]:
    """The runs' records (or hashes) in hash order, a block at a time.

    Every window holds a run's next records. The smallest last hash among the windows of runs
    with more on disk bounds what is safe to hand on: no record still on disk sorts before it.
    The records up to it, from every window, are sorted together (NumPy, not a heap per record).
    Equal hashes are equal rows (content keys) or a duplicate key (an error when `unique`), so
    the order among them never changes the bytes.
    """
    window = _window_bytes(len(runs))
    last: tuple[np.ndarray, _Run, int] | None = None  # the last record handed on: (hash, run, index)
    while True:
        live = [run for run in runs if not run.exhausted]
        if not live:
            return
        for run in live:
            if not len(run.hashes):
                run.load(window)
        bounds = [run.hashes[-1] for run in live if not run.complete]
        bound = min((int(high), int(low)) for high, low in bounds) if bounds else None
        parts = []
        taken = []
        labels = []
        for run in live:
            count = len(run.hashes)
            if bound is not None:
                high, low = run.hashes[:, 0], run.hashes[:, 1]
                after = (high > bound[0]) | ((high == bound[0]) & (low > bound[1]))
                count = int(np.argmax(after)) if after.any() else count  # the window is sorted
            if count:
                first = run.first
                hashes, records, run_labels = run.take(count)
                parts.append((run, first, hashes))
                taken.append(records)
                labels.append(run_labels)
        hashes = np.concatenate([part[2] for part in parts])
        order = np.lexsort((hashes[:, 1], hashes[:, 0]))
        block = _Block(hashes[order], _in_block_order(taken, order), _in_block_order(labels, order), order, parts)
        if unique:
            last = _check_block(block, last)
        yield block


def _in_block_order(columns: list[ByteColumn | None], order: np.ndarray) -> ByteColumn | None:
    """The parts' columns, concatenated, in the block's order (None when they weren't loaded)."""
    if columns[0] is None:
        return None
    column = concat(columns)
    return column.take(order) if len(columns) > 1 else column


def _merged_positions(runs: list[_Run], starts: np.ndarray, unique: bool
                      ) -> tuple[np.ndarray, dict[int, str], int]:
    """For each rank in `starts`, how many records of each run come before it in hash order;
    the key hashes (hex) at the ranks `_edge_ranks` names; and how many different keys there are.
    Merges the runs' hashes, not their records."""
    positions = np.zeros((len(starts), len(runs)), np.int64)
    wanted = sorted(_edge_ranks(starts))
    edges: dict[int, str] = {}
    index = {id(run): number for number, run in enumerate(runs)}
    consumed = np.zeros(len(runs), np.int64)
    rank = boundary = distinct = 0
    previous: np.ndarray | None = None
    for block in _blocks(runs, unique):
        count = len(block.hashes)
        part_runs = np.array([index[id(part[0])] for part in block.parts])
        sources = part_runs[block.sources()]
        while boundary < len(starts) and starts[boundary] <= rank + count:
            taken = int(starts[boundary]) - rank
            positions[boundary] = consumed + np.bincount(sources[:taken], minlength=len(runs))
            boundary += 1
        consumed += np.bincount(sources, minlength=len(runs))
        while wanted and wanted[0] < rank + count:
            edge = wanted.pop(0)
            edges[edge] = hash_hex(block.hashes, edge - rank)
        steps = (block.hashes[1:] != block.hashes[:-1]).any(axis=1)
        distinct += int(steps.sum()) + (previous is None or bool((block.hashes[0] != previous).any()))
        previous = block.hashes[-1]
        rank += count
    positions[boundary:] = consumed
    return positions, edges, distinct


def _positions_in_order(runs: list[_Run], starts: np.ndarray) -> tuple[np.ndarray, dict[int, str]]:
    """As `_merged_positions` (without the count of keys) where the runs follow each other: for
    each rank in `starts`, how many records of each run come before it; and the key hashes (hex)
    at the ranks `_edge_ranks` names, each read from its run."""
    counts = np.array([run.count for run in runs], np.int64)
    before = np.cumsum(counts) - counts
    edges = {}
    for rank in _edge_ranks(starts):
        number = int(np.searchsorted(before, rank, side="right")) - 1
        edges[rank] = runs[number].hash_at(rank - int(before[number]))
    return np.clip(starts[:, None] - before[None, :], 0, counts[None, :]), edges


def hash_hex(hashes: np.ndarray, row: int) -> str:
    """The key hash at `row` of an (n, 2) array, in hex: how a shard's first and last keys are
    recorded (and compared when a resumed build keeps a shard)."""
    return hashes[row].astype(">u8").tobytes().hex()


def _edge_ranks(starts: np.ndarray) -> set[int]:
    """The ranks of every non-empty shard's first and last record."""
    return {rank for low, high in zip(starts[:-1].tolist(), starts[1:].tolist()) if high > low
            for rank in (low, high - 1)}


def _check_block(block: _Block, last: tuple | None) -> tuple:
    """Raises DataError at the first key equal to the one before it; returns the block's last record."""
    hashes = block.hashes
    if last is not None and (hashes[0] == last[0]).all():
        run, index = block.source(0)
        raise duplicate_key(last[1].label(last[2]), run.label(index))
    same = np.flatnonzero((hashes[1:] == hashes[:-1]).all(axis=1))
    if len(same):
        (first_run, first), (second_run, second) = block.source(int(same[0])), block.source(int(same[0]) + 1)
        raise duplicate_key(first_run.label(first), second_run.label(second))
    return (hashes[-1], *block.source(len(hashes) - 1))


def _check_unique(hashes: np.ndarray, labels: list[str]) -> None:
    same = np.flatnonzero((hashes[1:] == hashes[:-1]).all(axis=1))
    if len(same):
        raise duplicate_key(labels[same[0]], labels[same[0] + 1])


def key_label(origin: str, key: object) -> str:
    """What a record with a key that must be unique carries, for `duplicate_key`'s message."""
    return f"{origin}\0{key!r}"


def duplicate_key(first: str, second: str) -> DataError:
    """The error for a key yielded twice: the labels of both records (or the first one's origin)."""
    origin, _, key = second.partition("\0")
    return DataError(f"{origin}: duplicate key {key} (also yielded at {first.partition(chr(0))[0]}); "
                     "expected unique keys")


def _text(label: bytes) -> str:
    return label.decode("utf-8", "surrogatepass")


