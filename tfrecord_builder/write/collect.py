"""Gathers a split's encoded records and puts them in the order they are written
(`write/order.py`), in bounded memory.

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

The run files are write/runs.py's, their merge write/merge.py's.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from ..codec import bytecolumn
from ..codec.bytecolumn import ByteColumn, taken
from ..processes import can_fork, worker_pool
from . import runs as run_files
from .merge import combine_runs, merged_positions, positions_in_order
from .order import distinct_keys, duplicate_key, first_duplicate, key_order, write_order
from .runs import RunFile, RunWindow, RunWriter, new_run, renew_run_names

SPILL_BYTES = 16 * 1024**2
# A merge's fan-in: it opens every run it reads and holds a window of each (64 KiB of hashes, as
# much of records), so a split with more runs is first merged down to this many
MAX_RUNS = 128


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

    def in_memory(self) -> "RecordsInMemory | None":
        """Every record, if all are still in memory (none spilled), with the order they are
        written in. Keys that must be unique are checked here."""
        if self.runs:
            return None
        held = self._in_memory()
        if self._labels:  # (only a shuffled build's records carry labels)
            found = first_duplicate(held.hashes, True)
            if found is not None:
                raise duplicate_key(*(self._labels[held.order[position]] for position in found))
        return held

    def _in_memory(self) -> "RecordsInMemory":
        hashes = np.concatenate(self._hashes) if self._hashes else np.zeros((0, 2), np.uint64)
        order = write_order(hashes, self._shuffle)
        return RecordsInMemory(hashes[order], order, list(self._records))

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
        _write_in_memory(path, self._in_memory(), self._labels or None)
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
        replaced: list[str] = []
        while len(self.runs) > MAX_RUNS:
            groups = _combined_groups(len(self.runs), MAX_RUNS)
            jobs = [(self.runs[start:stop], self._spill_dir or os.path.dirname(self.runs[0]), self.name, self._shuffle)
                    for start, stop in groups]
            merged = _map(combine_runs, jobs, processes)
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
        runs = [RunWindow(path, data=False) for path in self.runs]
        try:
            if self._shuffle:
                # (every labelled record is in a run by now: its header says its keys must be unique)
                positions, edges, distinct = merged_positions(runs, starts, any(run.labelled for run in runs))
            else:
                (positions, edges), distinct = positions_in_order(runs, starts), None
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
    order = write_order(hashes, shuffle)
    path = new_run(folder, name)
    _write_in_memory(path, RecordsInMemory(hashes[order], order, [records]), labels)
    return RunFile(path, records.num_rows, int(records.offsets[-1] - records.offsets[0]))


def _write_in_memory(path: str, held: "RecordsInMemory", labels: list[str] | None) -> None:
    """Writes records in memory to a run file in their order, each straight from the batch that
    holds it: no sorted copy of them is made in memory."""
    encoded = label_bytes(labels) if labels else None
    os.makedirs(os.path.dirname(path), exist_ok=True)
    label_total = int(encoded.offsets[-1] - encoded.offsets[0]) if encoded is not None else 0
    with RunWriter(path, len(held.order), held.num_bytes, label_total) as writer:
        low = 0  # the chunk's first record, for its labels
        for hashes, chunk in held.chunks(0, len(held.order)):
            rows = held.order[low : low + len(hashes)]
            writer.write(hashes, chunk, encoded.take(rows) if encoded is not None else None)
            low += len(hashes)


def label_bytes(labels: list[str]) -> ByteColumn:
    """The labels as UTF-8 (lone surrogates kept, `surrogatepass`), a row each: encoded by Arrow
    in one call where they hold none."""
    try:
        import pyarrow as pa

        return bytecolumn.from_arrow(pa.array(labels, pa.large_string()).cast(pa.large_binary()))
    except (ImportError, UnicodeEncodeError):
        return ByteColumn.from_rows([label.encode("utf-8", "surrogatepass") for label in labels])


class RecordsInMemory:
    """A split's records held in memory, in the batches they arrived in: `order` lists them
    (numbered across the batches) in the order they are written, `hashes` holds their keys'
    hashes in that order."""

    def __init__(self, hashes: np.ndarray, order: np.ndarray, batches: list[ByteColumn]):
        self.hashes = hashes
        self.order = order
        self._batches = batches

    def distinct_keys(self) -> int:
        """How many different keys the records have (equal rows share one)."""
        return distinct_keys(self.hashes[key_order(self.hashes)])

    @property
    def num_bytes(self) -> int:
        """The records' bytes, all together."""
        return sum(int(batch.offsets[-1] - batch.offsets[0]) for batch in self._batches)

    def chunks(self, start: int, stop: int) -> Iterator[tuple[np.ndarray, ByteColumn]]:
        """The records at positions start..stop of the order, `runs.CHUNK_RECORDS` at a time,
        each chunk gathered from the batches (`bytecolumn.taken`: no sorted copy of them all is made)."""
        step = run_files.CHUNK_RECORDS
        for low in range(start, stop, step):
            high = min(stop, low + step)
            yield self.hashes[low:high], taken(self._batches, self.order[low:high])


