"""A build as a plan that any executor runs, with the same bytes as the result.

1. *Read tasks*: small descriptions of the parts of the source (a window of a large text file, a
   run of Parquet row groups, a slice of an image folder's sorted files, a custom builder's
   split or its own `tasks`), in one global order.
2. Each task's batches are encoded (`encoding.encode_for_build`) and divided among the splits by
   their keys' hashes; with `stratify:`, by class and key hash, after a first pass over every
   task has found each class's cut hashes (`encoding.classify_for_build`, `write/strata.py`).
3. A split's records are written in order of a 16-byte sort key: the key's hash when shuffling
   (equal hashes are equal rows, so their order among them never shows), else the task and the
   record's place in it, which is the source's order. Shard i holds ranks `i*n//k` to
   `(i+1)*n//k` (`write/order.py` states the order and layout both runners use).
4. Statistics are merged batch by batch within a task, then task by task in task order: float
   sums and the vocabulary cap depend on that order, and every executor keeps it.
5. `dataset_info.json` is written last (`metadata.write_metadata_files`); only then is the dataset whole.

*One copy* (`keyed_plan`): where every source knows its records' keys before it reads their bytes
(`Builder.keyed_items`: a folder of image files), steps 2 and 3 are decided from the keys alone:
the plan hashes every key, divides the records among the splits, orders each split, counts and
cuts its shards, and names each shard's records (positions in the source). A runner then hands
each shard to one worker, which reads that shard's records in shard order, encodes them and
writes the shard once (build/runners/keyed.py), with no sorted runs or merge. The plan is made only where
the records are one a key, unchanged by encoding: no `pack:`, no `stratify:`, no feature that
makes several records of a row, keys unique within each source split (else the usual path, which
says the duplicate as today); TFRECORD_BUILDER_ONE_COPY=0 turns it off (tests and benchmarks
compare both paths).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Iterator

import numpy as np

from ..builders.base import Batch, Builder, KeyedItems, PendingBatch
from ..spec.model import Spec
from ..write.keys import assign_splits, hash_hex, hash_keys_and_members
from ..write.membership import KeptSplits
from ..write.order import count_shards, key_order, repeats, shard_starts, write_order
from ..write.stats import SplitStatistics
from ..write.strata import Strata, stratified

if TYPE_CHECKING:
    from .encoding import BatchClasses


@dataclass(frozen=True)
class ReadTask:
    """One part of the source: read by one worker, encoded in its batches' order."""

    index: int  # its place in the plan's order
    split: str | None  # the source's split (None: split by fraction)
    part: Any = None  # the builder's description of the part (None: the whole split)


def read_tasks(builders: list[tuple[str | None, Builder]]) -> list[ReadTask]:
    """Every split's parts, in the order the build reads them."""
    tasks: list[ReadTask] = []
    for split, builder in builders:
        parts = builder.tasks(split)
        for part in parts if parts else [None]:
            tasks.append(ReadTask(len(tasks), split, part))
    return tasks


def task_batches(spec: Spec, builder: Builder, task: ReadTask) -> Iterator[Batch | PendingBatch]:
    """The task's batches, of the source names the spec reads."""
    return builder.encoding_batches(task.split, spec.source_names, spec.batch_rows, task.part)


class StatisticsTree:
    """Each split's statistics, merged batch by batch within a task, then task by task."""

    def __init__(self, spec: Spec):
        self.features = spec.features
        self.total = {name: SplitStatistics(spec.features) for name in spec.splits}
        self.task: int | None = None  # the task being merged
        self.current: dict[str, SplitStatistics] = {}  # its statistics so far

    def add(self, task: int, split: str, statistics: SplitStatistics) -> None:
        if task != self.task:
            self.close_task()
            self.task = task
        self.current.setdefault(split, SplitStatistics(self.features)).merge(statistics)

    def add_task(self, task: int, statistics: dict[str, SplitStatistics]) -> None:
        """A whole task's statistics, merged by another process."""
        self.close_task()
        for name, merged in statistics.items():
            self.total[name].merge(merged)
        self.task = task

    def close_task(self) -> None:
        for name, merged in self.current.items():
            self.total[name].merge(merged)
        self.current = {}

    def state(self) -> dict[str, Any]:
        return {"total": {name: stats.state() for name, stats in self.total.items()}, "task": self.task,
                "current": {name: stats.state() for name, stats in self.current.items()}}

    def restore(self, state: dict[str, Any]) -> None:
        for name, saved in state.get("total", {}).items():
            self.total[name].restore(saved)
        self.task = state.get("task")
        self.current = {}
        for name, saved in state.get("current", {}).items():
            self.current[name] = SplitStatistics(self.features)
            self.current[name].restore(saved)

    def to_dict(self) -> dict[str, Any]:
        self.close_task()
        return {name: stats.to_dict() for name, stats in self.total.items()}


def strata_of(spec: Spec, parts: Iterable["BatchClasses"]) -> Strata:
    """A stratified build's strata from its first pass: every batch's classes and key hashes (in
    any order: the strata depend on the records, not on where they were read)."""
    parts = list(parts)
    classes = np.concatenate([part.classes for part in parts]) if parts else np.zeros(0, np.int64)
    hashes = np.concatenate([part.hashes for part in parts]) if parts else np.zeros((0, 2), np.uint64)
    return stratified(classes, hashes, list(spec.splits.values()))


def source_order_keys(task: int, first: int, count: int) -> np.ndarray:
    """Sort keys that keep the source's order: (task, place in the task) as two uint64."""
    keys = np.empty((count, 2), np.uint64)
    keys[:, 0] = task
    keys[:, 1] = np.arange(first, first + count, dtype=np.uint64)
    return keys


ONE_COPY_VARIABLE = "TFRECORD_BUILDER_ONE_COPY"  # "0": every build takes the usual path (sorted runs, merge)


@dataclass(frozen=True)
class KeyedShard:
    """One shard of a keyed plan: what one worker reads, encodes and writes.

    Attributes:
        split: the split it belongs to.
        number: its number in the split.
        file: its file name (write/naming.py).
        items: (source, position) of each of its records, in the order they are written: the
            source's index in `KeyedPlan.sources`, the record's position in its `KeyedItems`.
        hashes: (n, 2) uint64, its records' key hashes in that order.
    """

    split: str
    number: int
    file: str
    items: np.ndarray
    hashes: np.ndarray

    @property
    def key_range(self) -> tuple[str, str]:
        """Its first and last key hashes (hex), as the manifest records them ("" when empty)."""
        return (hash_hex(self.hashes, 0), hash_hex(self.hashes, -1)) if len(self.hashes) else ("", "")


@dataclass(frozen=True)
class KeyedSplit:
    """A split of a keyed plan: its records in the source's order (as `KeyedShard.items`), each
    one's rank in the write order, its seedless key hashes (write/membership.py) and its shards.
    `guessed_shards`: the shard count came from an estimate of the records' bytes (the spec gives a
    target size), to be checked once they are encoded."""

    name: str
    items: np.ndarray
    ranks: np.ndarray
    members: np.ndarray
    shards: list[KeyedShard]
    guessed_shards: bool


@dataclass(frozen=True)
class KeyedPlan:
    """The whole build decided from the keys (`keyed_plan`): the sources, with the read task of
    each of their batches, and every split's records, order and shards."""

    sources: list[tuple[str | None, Builder, KeyedItems, list[int]]]  # (source split, builder, items, task indices)
    splits: dict[str, KeyedSplit]
    kept: int  # records whose split an earlier version decided (--keep-splits)

    @property
    def shards(self) -> list[KeyedShard]:
        return [shard for split in self.splits.values() for shard in split.shards]

    @property
    def counts(self) -> dict[str, int]:
        """Each split's number of records."""
        return {name: len(split.items) for name, split in self.splits.items()}


def keyed_plan(spec: Spec, tasks: list[ReadTask], builders: dict[str | None, Builder], keep: KeptSplits | None,
               shard_name: Any, estimate: Any = None) -> KeyedPlan | None:
    """The build decided from its records' keys, where every source gives them before their
    payloads (`Builder.keyed_items`) and encoding keeps one record a key; None otherwise (the
    usual path). `shard_name(split, number, count)` names a shard; `estimate(sources)` gives
    a function of a split's records (their positions among every source's records, one after
    another) that estimates their encoded bytes, where the spec asks for a target shard size
    rather than a count (None: the files' bytes)."""
    if os.environ.get(ONE_COPY_VARIABLE, "1") == "0" or spec.pack is not None or spec.stratify is not None:
        return None
    if any(feature.fans_out for feature in spec.features.values()):
        return None
    batch_size = spec.batch_rows
    sources = []
    for split, builder in builders.items():
        items = builder.keyed_items(split, batch_size)
        if items is None:
            return None
        sources.append((split, builder, items, [task.index for task in tasks if task.split == split]))
    hashed = [hash_keys_and_members(items.keys, spec.output.seed) for _, _, items, _ in sources]
    hashes = [found for found, _ in hashed]
    if any(len(repeats(found[key_order(found)])) for found in hashes):
        return None  # a key given twice: the usual path says which, as it always has
    names = list(spec.splits)
    every_hash = np.concatenate(hashes) if hashes else np.zeros((0, 2), np.uint64)
    items_at = np.concatenate([np.stack([np.full(len(found), number), np.arange(len(found))], axis=1)
                               for number, found in enumerate(hashes)]) if hashes else np.zeros((0, 2), np.int64)
    every_size = np.concatenate([items.sizes for _, _, items, _ in sources]) if sources else np.zeros(0, np.int64)
    members = np.concatenate([found for _, found in hashed]) if hashed else np.zeros(0, np.uint64)
    kept = 0
    assignment = np.concatenate([np.full(len(found), names.index(split) if split is not None else -1)
                                 for (split, _, _, _), found in zip(sources, hashes)]) if hashes else np.zeros(0, int)
    by_fraction = assignment < 0
    if by_fraction.any():
        assignment[by_fraction] = assign_splits(every_hash[by_fraction], list(spec.splits.values()))
        if keep is not None:
            before = keep.splits_of(members[by_fraction])
            found = before >= 0
            assignment[by_fraction] = np.where(found, before, assignment[by_fraction])
            kept = int(found.sum())
    measure = estimate(sources) if estimate is not None and spec.output.shards is None else None
    splits = {}
    for index, name in enumerate(names):
        rows = np.flatnonzero(assignment == index)  # in the source's order
        order = write_order(every_hash[rows], spec.output.shuffle)
        ranks = np.empty(len(rows), np.int64)
        ranks[order] = np.arange(len(rows))
        guessed = spec.output.shards is None
        num_bytes = 0
        if guessed and len(rows):
            num_bytes = measure(rows) if measure is not None else int(every_size[rows].sum())
        count = count_shards(len(rows), num_bytes, spec.output.shards, spec.output.target_shard_bytes)
        starts = shard_starts(len(rows), count)
        shards = []
        for number in range(count):
            chosen = rows[order[starts[number]:starts[number + 1]]]
            shards.append(KeyedShard(name, number, shard_name(name, number, count), items_at[chosen],
                                     every_hash[chosen]))
        splits[name] = KeyedSplit(name, items_at[rows], ranks, members[rows], shards, guessed)
    return KeyedPlan(sources, splits, kept)
