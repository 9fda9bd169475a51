"""The steps of a build whose tasks run on an engine's workers (Beam, Spark), apart from the engine.

    each task: encoded (`encode_task`), its records cut by bucket (`by_bucket`) -> a summary
    every summary, in task order -> the layout (`layout_of`): shards per split, each bucket's first rank
    each bucket's records: sorted, cut at shard bounds (`sort_bucket`)
    each shard's pieces: written by our writer (`write_placed_shard`)
    what the steps left -> the runner's result (`run_result`)

A bucket holds the records of one range of key hashes (shuffled builds) or of one task (in the
source's order), so sorting buckets and cutting them by rank gives every shard exactly the
records, in exactly the order, that the local runner writes, whatever the engine and however it
retries a step: each step is a pure function of its inputs, and a shard is written under a
temporary name, then renamed. An engine's runner carries these steps' values between its
workers; the steps know nothing of how.

An engine runs them through `Steps` (build/runners/steps.py), which says where each output goes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from ... import fs
from ...builders.base import Builder
from ...codec.bytecolumn import ByteColumn, concat
from ...errors import DataError
from ...features import notices
from ...spec.model import Spec
from ...write.info import SplitInfo
from ...write.manifest import record_shard, recorded_shards
from ...write.membership import KeptSplits
from ...write.naming import shard_name
from ...write.order import (count_shards, distinct_keys, duplicate_key, first_duplicate, key_label, key_order,
                            repeats, shard_of, shard_starts, write_order)
from ...write.shards import ShardInfo, kept_shard, key_range, write_shard
from ...write.stats import SplitStatistics
from ...write.strata import Strata
from ..encoding import BatchClasses, classify_for_build, encode_for_build
from ..plan import ReadTask, StatisticsTree, source_order_keys, strata_of, task_batches
from .contract import RunResult, check_not_empty


@dataclass
class PlacedRecords:
    """Records of one split on their way to a shard: their key hashes, their place in the source
    (task, record) and their framed bytes; `labels` ("origin\\0key") where keys must be unique."""

    hashes: np.ndarray
    places: np.ndarray
    records: ByteColumn
    labels: list[str] | None = None

    def take(self, rows: np.ndarray) -> "PlacedRecords":
        labels = [self.labels[row] for row in rows.tolist()] if self.labels is not None else None
        return PlacedRecords(self.hashes[rows], self.places[rows], self.records.take(rows), labels)


def joined(pieces: list[PlacedRecords]) -> PlacedRecords:
    """Pieces of records as one (in the order given)."""
    if len(pieces) == 1:
        return pieces[0]
    labels = [label for piece in pieces for label in piece.labels] if pieces[0].labels is not None else None
    return PlacedRecords(np.concatenate([piece.hashes for piece in pieces]),
                         np.concatenate([piece.places for piece in pieces]),
                         concat([piece.records for piece in pieces]), labels)


@dataclass
class TaskSummary:
    """What one task made besides its records."""

    index: int
    statistics: dict[str, SplitStatistics] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    num_bytes: dict[str, int] = field(default_factory=dict)
    buckets: dict[str, dict[int, int]] = field(default_factory=dict)  # records per bucket, by split
    skipped: list[dict[str, str]] = field(default_factory=list)
    notices: dict[str, int] = field(default_factory=dict)  # features/notices.py
    records: int = 0  # read, skipped ones included
    error: str | None = None  # the first DataError (the task stopped there)
    members: dict[str, list[np.ndarray]] = field(default_factory=dict)  # seedless key hashes, by split
    kept: int = 0  # records whose split an earlier version decided (--keep-splits)


# An unshuffled build's own key of a record, checked for uniqueness across tasks (`unique_keys`):
# ((split, range of hashes), (hash high, low, task, row, origin, label))
KeyEntry = tuple[tuple[str, int], tuple[int, int, int, int, str, str]]


def encode_task(spec: Spec, builder: Builder, task: ReadTask, strata: Strata | None = None,
                keep: KeptSplits | None = None, counted: Callable[[int, int, int], None] | None = None
                ) -> tuple[TaskSummary, dict[str, PlacedRecords], list[KeyEntry]]:
    """Reads and encodes one task: its summary, its records by split and, in an unshuffled build
    whose records have keys of their own, every key to check. A DataError stops the task and is
    kept in the summary (the build's error, if no earlier task has one). `counted(read, encoded,
    skipped)` is told each batch's figures (an engine's counters)."""
    summary = TaskSummary(task.index)
    seen = 0  # records of this task with keys of their own, for the uniqueness check
    held: dict[str, list[PlacedRecords]] = {}
    keys: list[KeyEntry] = []
    try:
        for batch in task_batches(spec, builder, task):
            result = encode_for_build(spec, task.split, batch, strata, keep)
            summary.skipped.extend(result.skipped)
            notices.added(summary.notices, result.notices)
            summary.kept += result.kept
            summary.records += result.count + len(result.skipped)
            if counted is not None:
                counted(result.count + len(result.skipped), result.count, len(result.skipped))
            if result.batch is not None:  # keys of its own in an unshuffled build: checked apart
                own = result.batch
                for row in range(len(own)):
                    digest = result.hashes[row]
                    keys.append(((task.split, int(digest[0] >> np.uint64(56))),
                                 (int(digest[0]), int(digest[1]), task.index, seen + row, own.origin(row),
                                  key_label(own.origin(row), own.keys[row]))))
                seen += len(own)
            for name, part in result.parts.items():
                count = part.records.num_rows
                first = summary.counts.get(name, 0)
                summary.counts[name] = first + count
                summary.num_bytes[name] = summary.num_bytes.get(name, 0) + int(
                    part.records.offsets[-1] - part.records.offsets[0])
                summary.statistics.setdefault(name, SplitStatistics(spec.features)).merge(part.statistics)
                summary.members.setdefault(name, []).append(part.members)
                held.setdefault(name, []).append(
                    PlacedRecords(part.hashes, source_order_keys(task.index, first, count), part.records, part.labels))
    except DataError as error:
        summary.error = str(error)
        return summary, {}, keys
    return summary, {name: joined(pieces) for name, pieces in held.items()}, keys


def by_bucket(spec: Spec, bits: int, task: int, piece: PlacedRecords, counts: dict[int, int]
              ) -> Iterator[tuple[int, PlacedRecords]]:
    """A task's records of one split by bucket (counted into `counts`): in the source's order a
    task's records are one bucket; shuffled, a bucket is the records whose hash starts with its
    `bits`."""
    if not spec.output.shuffle:
        buckets = np.full(piece.records.num_rows, task, np.int64)
    elif bits == 0:
        buckets = np.zeros(piece.records.num_rows, np.int64)
    else:
        buckets = (piece.hashes[:, 0] >> np.uint64(64 - bits)).astype(np.int64)
    for bucket in np.unique(buckets).tolist():
        rows = np.flatnonzero(buckets == bucket)
        counts[bucket] = counts.get(bucket, 0) + len(rows)
        yield bucket, piece if len(rows) == len(buckets) else piece.take(rows)


def classify_task(spec: Spec, builder: Builder, task: ReadTask) -> tuple[int, list[BatchClasses], str | None]:
    """A stratified build's first pass over one task: its records' classes and key hashes, and the
    error that stopped it (None)."""
    parts: list[BatchClasses] = []
    try:
        for batch in task_batches(spec, builder, task):
            parts.append(classify_for_build(spec, task.split, batch))
    except DataError as error:
        return task.index, parts, str(error)
    return task.index, parts, None


def strata_from(tasks: list[tuple[int, list[BatchClasses], str | None]], spec: Spec) -> tuple[Strata, str | None]:
    """The strata from every task's classes, and the first pass's first error in task order (the
    one the local runner's first pass, reading in that order, stops at)."""
    tasks = sorted(tasks, key=lambda task: task[0])
    error = next((failed for _, _, failed in tasks if failed is not None), None)
    return strata_of(spec, [part for _, parts, _ in tasks for part in parts]), error


@dataclass(frozen=True)
class Layout:
    """Where every record goes, which every sort and write step is given.

    Attributes:
        shards: each split's shard bounds (`write.order.shard_starts`): shard i holds the
            records ranked from shards[i] to shards[i + 1].
        buckets: each split's buckets, each with the rank of its first record in the split.
        failed: whether a task stopped at bad data (nothing is sorted or written then).
    """

    shards: dict[str, np.ndarray] = field(default_factory=dict)
    buckets: dict[str, dict[int, int]] = field(default_factory=dict)
    failed: bool = False


@dataclass(frozen=True)
class BuildSummary:
    """What every task's summary adds up to, in task order (`layout_of`): the part of the runner's
    result (`run_result`) that isn't in the shards.

    Attributes:
        statistics: the splits' statistics (`StatisticsTree.to_dict`).
        skipped: the skipped records (on_error: skip), in task order.
        notices: what features/notices.py counted, by text.
        counts: records by split.
        error: the first task's DataError in task order (the build's error), or None.
        num_shards: shards by split.
        records: records read, skipped ones included.
        members: each split's seedless key hashes (write/membership.py).
        kept: records whose split an earlier version decided (--keep-splits).
    """

    statistics: dict[str, Any]
    skipped: list[dict[str, str]]
    notices: dict[str, int]
    counts: dict[str, int]
    error: str | None
    num_shards: dict[str, int]
    records: int
    members: dict[str, np.ndarray]
    kept: int


def layout_of(summaries: list[TaskSummary], spec: Spec) -> tuple[Layout, BuildSummary]:
    """The layout from every task's summary, taken in task order, and the build's summary."""
    summaries = sorted(summaries, key=lambda summary: summary.index)
    tree = StatisticsTree(spec)
    skipped: list[dict[str, str]] = []
    noticed: dict[str, int] = {}
    counts = {name: 0 for name in spec.splits}
    num_bytes = {name: 0 for name in spec.splits}
    error = next((summary.error for summary in summaries if summary.error is not None), None)
    for summary in summaries:
        tree.add_task(summary.index, summary.statistics)
        skipped.extend(summary.skipped)
        notices.added(noticed, summary.notices)
        for name, count in summary.counts.items():
            counts[name] += count
            num_bytes[name] += summary.num_bytes[name]
    shards: dict[str, np.ndarray] = {}
    buckets: dict[str, dict[int, int]] = {}
    for name in spec.splits:
        num_shards = count_shards(counts[name], num_bytes[name], spec.output.shards, spec.output.target_shard_bytes)
        shards[name] = shard_starts(counts[name], num_shards)
        merged: dict[int, int] = {}
        for summary in summaries:
            for bucket, count in summary.buckets.get(name, {}).items():
                merged[bucket] = merged.get(bucket, 0) + count
        rank = 0
        for bucket in sorted(merged):
            buckets.setdefault(name, {})[bucket] = rank
            rank += merged[bucket]
    built = BuildSummary(
        statistics=tree.to_dict(), skipped=skipped, notices=noticed, counts=counts, error=error,
        num_shards={name: len(starts) - 1 for name, starts in shards.items()},
        records=sum(summary.records for summary in summaries),
        members={name: np.concatenate([hashes for summary in summaries
                                       for hashes in summary.members.get(name, [])] or [np.empty(0, np.uint64)])
                 for name in spec.splits},
        kept=sum(summary.kept for summary in summaries))
    return Layout(shards, buckets, failed=error is not None), built


@dataclass
class SortedBucket:
    """One bucket sorted into the order its records are written, cut at shard bounds; and what it
    says of its keys: a shuffled bucket its distinct keys and its first duplicate (an error), an
    unshuffled one its different keys by range of hashes (counted with every task's)."""

    parts: list[tuple[int, PlacedRecords]]  # (shard, its records from this bucket)
    key_ranges: list[tuple[int, np.ndarray]] = field(default_factory=list)  # (range of hashes, different keys)
    distinct: int | None = None
    problem: tuple[tuple, str] | None = None  # (where, in the build's order; the error's text)


def sort_bucket(spec: Spec, split: str, bucket: int, whole: PlacedRecords, layout: Layout) -> SortedBucket:
    """A bucket's records (in any order: the sort decides) sorted and cut at its split's shard bounds."""
    shuffle = spec.output.shuffle
    whole = whole.take(write_order(whole.hashes, shuffle, whole.places))
    result = SortedBucket([])
    if not shuffle:
        keys = whole.hashes[key_order(whole.hashes)]
        keys = np.delete(keys, repeats(keys), axis=0)
        ranges = (keys[:, 0] >> np.uint64(56)).astype(np.int64)
        result.key_ranges = [(key_range, keys[ranges == key_range]) for key_range in np.unique(ranges).tolist()]
    else:  # a bucket holds every record of its range of hashes
        result.distinct = distinct_keys(whole.hashes)
        found = first_duplicate(whole.hashes, True) if whole.labels is not None else None
        if found is not None:
            first, second = found
            result.problem = ((list(spec.splits).index(split), *whole.hashes[first].tolist()),
                              str(duplicate_key(whole.labels[first], whole.labels[second])))
    count = len(whole.hashes)
    shards = shard_of(layout.shards[split], layout.buckets[split][bucket] + np.arange(count))
    for shard in np.unique(shards).tolist():
        rows = np.flatnonzero(shards == shard)
        result.parts.append((shard, whole.take(rows) if len(rows) < count else whole))
    return result


def count_keys(keys: Iterable[np.ndarray]) -> int:
    """How many different keys an unshuffled split has in one range of hashes, from every task's."""
    keys = np.concatenate(list(keys))
    return distinct_keys(keys[key_order(keys)])


def unique_keys(entries: Iterable[tuple]) -> tuple[tuple, str] | None:
    """The first key given twice (in the source's order) among an unshuffled build's records with
    keys of their own, in one range of hashes: (where, the error's text), or None."""
    entries = list(entries)  # (hash high, low, task, row, origin, label)
    hashes = np.array([entry[:2] for entry in entries], np.uint64).reshape(-1, 2)
    places = np.array([entry[2:4] for entry in entries], np.uint64).reshape(-1, 2)
    found = first_duplicate(hashes, False, places)
    if found is None:
        return None
    first, second = entries[found[0]], entries[found[1]]
    return (-1, *second[2:4]), str(duplicate_key(first[4], second[5]))


def write_placed_shard(spec: Spec, staging: str, build_id: str, kept: dict[str, dict], split: str, index: int,
                       pieces: list[Callable[[], PlacedRecords]], layout: Layout) -> str | None:
    """Writes shard `index` of `split` from its pieces (each got when needed, in bucket order: a
    shard needn't fit in memory) with our writer (temporary name, then rename), and records it in
    the manifest; returns its file name, or None where a resumed build keeps it as it is."""
    starts = layout.shards[split]
    count = int(starts[index + 1] - starts[index])
    file = shard_name(spec.name, split, index, len(starts) - 1, spec.output.compression, spec.output.naming)
    entry = kept.get(file)
    if entry is not None and entry["num_examples"] == count:  # a resumed build: kept if its records are these
        ends = [pieces[0](), pieces[-1]()]
        span = key_range([(ends[0].hashes, ends[0].records), (ends[-1].hashes, ends[-1].records)])
        if kept_shard(entry, file, count, span) is not None:
            return None
    written = [0]

    def chunks() -> Iterator[tuple[np.ndarray, ByteColumn]]:
        for get in pieces:
            piece = get()
            written[0] += piece.records.num_rows
            yield piece.hashes, piece.records

    shard, first, last = write_shard(fs.join(staging, file), chunks(), count, spec.output.compression,
                                     spec.output.writes_index)
    if written[0] != count:
        raise RuntimeError(f"shard {index} of {split}: {count} records expected, {written[0]} found "
                           "(internal error: please report it)")
    record_shard(staging, build_id, split, shard.to_dict(), first, last)
    return file


def run_result(spec: Spec, staging: str, build_id: str, summary: BuildSummary, problems: list[tuple[tuple, str]],
               distinct: dict[str, int]) -> RunResult:
    """The runner's result from what the steps made: `layout_of`'s summary, the key problems found
    (the first in the build's order is the error), the distinct keys by split, and the shards
    recorded in `staging`'s manifest (a shard no record went to is written here, empty)."""
    if summary.error is not None:
        raise DataError(summary.error)
    if problems:
        raise DataError(min(problems)[1])
    check_not_empty(spec, summary.counts, summary.skipped)
    entries = recorded_shards(staging, build_id)  # each was fsynced and recorded once whole
    splits: dict[str, SplitInfo] = {}
    for name, total in summary.counts.items():
        num_shards = summary.num_shards[name]
        starts = shard_starts(total, num_shards)
        shards = []
        for index in range(num_shards):
            file = shard_name(spec.name, name, index, num_shards, spec.output.compression, spec.output.naming)
            entry = entries.get(file)
            if entry is None:
                if starts[index + 1] != starts[index]:
                    raise RuntimeError(f"{file}: not written (internal error: please report it)")
                shard, _, _ = write_shard(fs.join(staging, file), [], 0, spec.output.compression,
                                          spec.output.writes_index)
            else:
                shard = ShardInfo.from_dict(entry)
            shards.append(shard.to_dict())
        splits[name] = SplitInfo(name, total, sum(shard["num_bytes"] for shard in shards), shards)
    return RunResult(splits, summary.statistics, summary.skipped,
                     {name: distinct.get(name, 0) for name in spec.splits}, summary.notices, summary.members,
                     summary.kept)

