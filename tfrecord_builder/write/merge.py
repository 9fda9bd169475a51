"""The k-way merge of a split's runs (`write/runs.py`) into the order records are written
(`write/order.py`), a block at a time, in bounded memory.

Every run is in the write order, and the runs of a split follow the source's order (a run's
records arrived before the next run's): a record's place is its run's number, then its index
there. Shuffled, the merge hands on records by key hash, ties by that place, exactly as the
in-memory sort orders them; unshuffled, the runs follow each other.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from ..codec.bytecolumn import ByteColumn, concat
from .keys import hash_hex
from .order import distinct_keys, duplicate_key, edge_ranks, records_through, repeats, write_order
from .runs import RunWindow, RunWriter, new_run

CHUNK_BYTES = 4 * 1024**2  # merged records handed on at a time: large records make fewer per chunk

# a chunk of merged records: their key hashes, their bytes and their labels (None: not loaded)
_HashedChunk = tuple[np.ndarray, ByteColumn, "ByteColumn | None"]


def combine_runs(job: tuple[list[str], str, str, bool]) -> str:
    """Merges runs into one (by key hash, or one after another), labels and all; returns its path."""
    paths, folder, name, shuffle = job
    runs = [RunWindow(path, labels=True) for path in paths]
    try:
        path = new_run(folder, name)
        with RunWriter(path, sum(run.count for run in runs), sum(run.data_bytes for run in runs),
                       sum(run.label_bytes for run in runs)) as writer:
            for chunk in _merged(runs) if shuffle else _in_order(runs):
                writer.write(*chunk)
    finally:
        for run in runs:
            run.close()
    return path


def read_slices(slices: Sequence[tuple[str, int, int]], shuffle: bool) -> Iterator[tuple[np.ndarray, ByteColumn]]:
    """The records of a shard's run slices (`ShardSlices.slices`, in the runs' order) in the order
    they are written, as (key hashes, records) chunks: merged when shuffling, else one slice
    after another."""
    runs = [RunWindow(path, start, stop) for path, start, stop in slices]
    try:
        # keys were checked by `merged_positions`
        for hashes, records, _ in _merged(runs) if shuffle else _in_order(runs):
            yield hashes, records
    finally:
        for run in runs:
            run.close()


def _in_order(runs: list[RunWindow]) -> Iterator[_HashedChunk]:
    """The runs' records one run after another."""
    for run in runs:
        while not run.exhausted:
            run.load(CHUNK_BYTES)
            yield run.take(len(run.hashes))


def _window_bytes(runs: int) -> int:
    """Bytes of records loaded per run: the windows of all runs together stay near CHUNK_BYTES."""
    return max(64 * 1024, CHUNK_BYTES // max(1, runs))


@dataclass
class _MergedBlock:
    """Records handed on by the merge, in the write order: their hashes, their bytes (None when
    only hashes are merged), and which part (a run and the index of its first record there)
    each came from."""

    hashes: np.ndarray
    records: ByteColumn | None
    labels: ByteColumn | None  # when loaded
    order: np.ndarray  # each record's place among the parts' records, concatenated
    parts: list[tuple[RunWindow, int, np.ndarray]]  # (run, index of its first record here, its hashes)

    def _starts(self) -> np.ndarray:
        """Where each part's records begin among the parts' records, concatenated."""
        return np.cumsum([0] + [len(part[2]) for part in self.parts])

    def sources(self) -> np.ndarray:
        """Each record's part."""
        return np.searchsorted(self._starts(), self.order, side="right") - 1

    def source(self, position: int) -> tuple[RunWindow, int]:
        """The run of the record at `position` and its index there."""
        starts = self._starts()
        index = int(self.order[position])
        part = int(np.searchsorted(starts, index, side="right")) - 1
        return self.parts[part][0], self.parts[part][1] + index - int(starts[part])


def _merged(runs: list[RunWindow]) -> Iterator[_HashedChunk]:
    """The runs' records in the write order, a block at a time."""
    for block in _blocks(runs):
        yield block.hashes, block.records, block.labels


def _blocks(runs: list[RunWindow]) -> Iterator[_MergedBlock]:
    """The runs' records (or hashes) in the write order, a block at a time.

    Every window holds a run's next records. The least last record (by hash, then run) among the
    windows of runs with more on disk bounds what is safe to hand on: no record still on disk
    sorts before it. The records up to it, from every window, are sorted together (NumPy, not a
    heap per record); the parts come in the runs' order, so their position is their place.
    """
    window = _window_bytes(len(runs))
    while True:
        live = [(number, run) for number, run in enumerate(runs) if not run.exhausted]
        if not live:
            return
        for _, run in live:
            if not len(run.hashes):
                run.load(window)
        bounds = [(int(run.hashes[-1, 0]), int(run.hashes[-1, 1]), number) for number, run in live if not run.complete]
        bound = min(bounds) if bounds else None
        parts = []
        taken = []
        labels = []
        for number, run in live:
            count = len(run.hashes) if bound is None else records_through(run.hashes, bound[:2], number <= bound[2])
            if count:
                first = run.first
                hashes, records, run_labels = run.take(count)
                parts.append((run, first, hashes))
                taken.append(records)
                labels.append(run_labels)
        hashes = np.concatenate([part[2] for part in parts])
        order = write_order(hashes, True)
        yield _MergedBlock(hashes[order], _in_block_order(taken, order), _in_block_order(labels, order), order, parts)


def _in_block_order(columns: list[ByteColumn | None], order: np.ndarray) -> ByteColumn | None:
    """The parts' columns, concatenated, in the block's order (None when they weren't loaded)."""
    if columns[0] is None:
        return None
    column = concat(columns)
    return column.take(order) if len(columns) > 1 else column


def merged_positions(runs: list[RunWindow], starts: np.ndarray, unique: bool
                     ) -> tuple[np.ndarray, dict[int, str], int]:
    """For each rank in `starts`, how many records of each run come before it in the write order;
    the key hashes (hex) at the ranks `edge_ranks` names; and how many different keys there are.
    With `unique`, raises DataError at the first duplicate key. Merges the runs' hashes, not
    their records."""
    positions = np.zeros((len(starts), len(runs)), np.int64)
    wanted = sorted(edge_ranks(starts))
    edges: dict[int, str] = {}
    index = {id(run): number for number, run in enumerate(runs)}
    consumed = np.zeros(len(runs), np.int64)
    rank = boundary = distinct = 0
    last: tuple[np.ndarray, RunWindow, int] | None = None  # the last record handed on: (hash, run, index)
    for block in _blocks(runs):
        count = len(block.hashes)
        previous = last[0] if last is not None else None
        again = repeats(block.hashes, previous) if unique else ()
        if len(again):
            position = int(again[0])
            first_run, first = block.source(position - 1) if position else last[1:]
            second_run, second = block.source(position)
            raise duplicate_key(first_run.label(first), second_run.label(second))
        distinct += count if unique else distinct_keys(block.hashes, previous)  # unique: none repeats (else raised)
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
        last = (block.hashes[-1], *block.source(count - 1)) if unique else (block.hashes[-1], None, 0)
        rank += count
    positions[boundary:] = consumed
    return positions, edges, distinct


def positions_in_order(runs: list[RunWindow], starts: np.ndarray) -> tuple[np.ndarray, dict[int, str]]:
    """As `merged_positions` (without the count of keys) where the runs follow each other: for
    each rank in `starts`, how many records of each run come before it; and the key hashes (hex)
    at the ranks `edge_ranks` names, each read from its run."""
    counts = np.array([run.count for run in runs], np.int64)
    before = np.cumsum(counts) - counts
    edges = {}
    for rank in edge_ranks(starts):
        number = int(np.searchsorted(before, rank, side="right")) - 1
        edges[rank] = runs[number].hash_at(rank - int(before[number]))
    return np.clip(starts[:, None] - before[None, :], 0, counts[None, :]), edges
