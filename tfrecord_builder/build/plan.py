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
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Iterator

import numpy as np

from ..builders.base import Batch, Builder, PendingBatch
from ..spec.model import Spec
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
    needed = sorted({column for feature in spec.features.values() for column in feature.source_names})
    batch_size = min(feature.batch_rows for feature in spec.features.values())
    return builder.encoding_batches(task.split, needed, batch_size, task.part)


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
