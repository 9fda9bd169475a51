"""The build's encoding stage: source batches into per-split parts (records, key hashes,
statistics).

Runs in the build's process or in worker processes (`workers` > 1); either way the parts come
back in source order, so the output is byte-identical whatever the worker count.
"""
from __future__ import annotations

import hashlib
import itertools
import os
import time
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Iterable, Iterator

import numpy as np

from .. import processes
from ..builders.base import Batch, PendingBatch, loaded
from ..codec.bytecolumn import ByteColumn
from ..errors import DataError
from ..features.values import Values
from ..spec.model import Spec
from ..write.collect import RunFile, key_label, renew_run_names, write_run
from ..write.keys import assign_splits, hash_keys, member_hashes
from ..write.membership import KeptSplits
from ..write.stats import SplitStatistics
from .records import encode_batch


@dataclass
class SplitPart:
    """The records of one batch that belong to one split: in memory, or in a run a worker wrote."""

    hashes: np.ndarray | None  # (n, 2) uint64
    records: ByteColumn | None  # TFRecord-framed
    statistics: SplitStatistics
    labels: list[str] | None = None  # "origin\0key" of each record, when keys must be unique
    run: RunFile | None = None  # where a worker wrote the records, hashes and labels instead
    members: np.ndarray | None = None  # uint64 seedless key hashes (write/membership.py), kept with a run too


@dataclass
class DividedBatch:
    """A batch after encoding, divided among the splits: its parts by split, its keys (for duplicate checks) and its skips."""

    batch: Batch | None  # keys and origins, for the duplicate check of unsorted builds; else None
    split: str | None  # the split the source gave (None: divided by fraction)
    hashes: np.ndarray
    source_keys: bytes = b""  # a digest of every key the batch came with (skipped ones included)
    count: int = 0  # records encoded (the skipped ones not included)
    parts: dict[str, SplitPart] = field(default_factory=dict)
    skipped: list[dict[str, str]] = field(default_factory=list)
    kept: int = 0  # records whose split an earlier version decided (--keep-splits)


# Starting and stopping the worker pool costs 25-70 ms (a fork of the caller's memory per worker,
# more with TensorFlow loaded): work shorter than this is done in the build's process, which a
# 2,000-photo build finishes in about half the pool's cost
IN_PROCESS_SECONDS = 0.1


def encode_batches(spec: Spec, batches: Iterable[tuple[str | None, Batch | PendingBatch]],
                   workers: int = 1, runs: str | None = None, keep: KeptSplits | None = None
                   ) -> Iterator[DividedBatch]:
    """Encodes every `(split or None, batch)` in source order (a pending batch is parsed there
    too): in this process for the first IN_PROCESS_SECONDS, then, with `workers` > 1 and batches
    left, in that many worker processes. Given a `runs` folder, workers write their records there
    (`collect.write_run`) and send back the run's name in their place. `keep`: an earlier
    version's splits, which the keys it holds keep."""
    batches = _failure_in_turn(batches)
    start = time.perf_counter()
    for split, batch in batches:
        yield _ReadFailure.raised(batch) or encode_for_build(spec, split, batch, keep)
        if workers > 1 and time.perf_counter() - start >= IN_PROCESS_SECONDS:
            break
    else:
        return
    first = list(itertools.islice(batches, 2))
    if len(first) < 2:  # one batch left: not worth starting processes
        for split, batch in first:
            yield _ReadFailure.raised(batch) or encode_for_build(spec, split, batch, keep)
        return
    with ProcessPoolExecutor(workers, mp_context=processes.context(), initializer=_start_worker,
                             initargs=(spec, os.getpid(), runs, keep)) as pool:
        pending: deque = deque()
        for split, batch in itertools.chain(first, batches):
            pending.append(batch if isinstance(batch, _ReadFailure) else pool.submit(_encode_in_worker, split, batch))
            if len(pending) > 2 * workers:  # bounded: at most this many batches in flight
                yield _ReadFailure.raised(pending[0]) or pending.popleft().result()
        while pending:
            yield _ReadFailure.raised(pending[0]) or pending.popleft().result()


@dataclass
class _ReadFailure:
    """A source's error, queued behind the batches read before it."""

    error: DataError

    @staticmethod
    def raised(item: object) -> None:
        if isinstance(item, _ReadFailure):
            raise item.error


def _failure_in_turn(batches: Iterable[tuple[str | None, Batch | PendingBatch]]) -> Iterator[tuple]:
    """The batches, then the source's error as one more item: reading runs ahead of encoding, and
    a bad record in an earlier batch must be the one reported, whichever reader (or worker) found
    the later error first."""
    try:
        yield from batches
    except DataError as error:
        yield None, _ReadFailure(error)


def encode_for_build(spec: Spec, split: str | None, batch: Batch | PendingBatch,
                     keep: KeptSplits | None = None) -> DividedBatch:
    """Parses a pending batch, encodes it, hashes its keys and divides it among the splits (by
    hash; with `keep`, a key an earlier version holds goes to its split there).

    Under `on_error: skip` bad records are dropped and listed; otherwise the first raises DataError.
    """
    batch = loaded(batch)
    skipped: list[dict[str, str]] = list(batch.broken)  # rows the reader couldn't read (on_error: skip)
    all_hashes = hash_keys(batch.keys, spec.output.seed)
    if not len(batch):
        return DividedBatch(None, split, all_hashes, keys_digest(all_hashes), 0, skipped=skipped)
    good = None
    try:
        encoded = encode_batch(spec.features, batch, spec.sequence_lengths == "equal", framed=True)
    except DataError:
        if spec.on_error == "fail":
            raise
        good = []
        for row in range(len(batch)):
            try:
                encode_batch(spec.features, batch.select([row]), spec.sequence_lengths == "equal")
                good.append(row)
            except DataError as error:
                skipped.append({"record": batch.origin(row), "reason": str(error)})
        batch = batch.select(good)
        encoded = encode_batch(spec.features, batch, spec.sequence_lengths == "equal", framed=True) if good else None
    hashes = all_hashes if good is None else all_hashes[good]
    # the keys go back to the main process only where it checks them (unsorted builds' own keys)
    kept = batch.without_columns() if not batch.content_keys and not spec.output.shuffle else None
    result = DividedBatch(kept, split, hashes, keys_digest(all_hashes), len(batch), skipped=skipped)
    if encoded is None:
        return result
    records = encoded.records  # framed as TFRecords (with their CRCs) here, in parallel
    members = member_hashes(batch.keys)
    names = list(spec.splits)
    if split is None:
        assignment = assign_splits(hashes, list(spec.splits.values()))
        if keep is not None:
            before = keep.splits_of(members)
            found = before >= 0
            assignment = np.where(found, before, assignment)
            result.kept = int(found.sum())
    else:
        assignment = np.full(len(batch), names.index(split))
    for index, name in enumerate(names):
        rows = np.flatnonzero(assignment == index)
        if not len(rows):
            continue
        every = len(rows) == len(batch)
        statistics = SplitStatistics(spec.features)
        for feature_name, by_key in encoded.values.items():
            main = spec.features[feature_name].statistics_values(by_key)
            statistics.add(feature_name, main if every else _select(main, rows))
            missing = encoded.missing[feature_name]
            statistics.features[feature_name].missing += int(missing.sum() if every else missing[rows].sum())
        labels = None
        if not batch.content_keys and spec.output.shuffle:  # checked for duplicates once sorted by hash
            labels = [key_label(batch.origin(row), batch.keys[row]) for row in rows.tolist()]
        result.parts[name] = SplitPart(hashes if every else hashes[rows],
                                       records if every else records.take(rows), statistics,
                                       labels, members=members if every else members[rows])
    return result


def keys_digest(hashes: np.ndarray) -> bytes:
    """A short digest of a batch's key hashes: a resumed build checks it has the same keys."""
    return hashlib.blake2b(hashes.tobytes(), digest_size=16).digest()


_WORKER_SPEC: Spec | None = None
_WORKER_RUNS: str | None = None
_WORKER_KEEP: KeptSplits | None = None


def _start_worker(spec: Spec, parent: int, runs: str | None, keep: KeptSplits | None) -> None:
    global _WORKER_SPEC, _WORKER_RUNS, _WORKER_KEEP
    processes.die_with_parent(parent)
    renew_run_names()
    _WORKER_SPEC, _WORKER_RUNS, _WORKER_KEEP = spec, runs, keep


def _encode_in_worker(split: str | None, batch: Batch | PendingBatch) -> DividedBatch:
    assert _WORKER_SPEC is not None
    result = encode_for_build(_WORKER_SPEC, split, batch, _WORKER_KEEP)
    if _WORKER_RUNS is not None:  # the records stay here: written to runs, never sent back
        for name, part in result.parts.items():
            part.run = write_run(_WORKER_RUNS, name, part.hashes, part.records, part.labels,
                                 _WORKER_SPEC.output.shuffle)
            part.hashes = part.records = part.labels = None
    return result


def _select(values: Values, rows: np.ndarray) -> Values:
    """The values of the records at `rows`, in order (for a sequence, all steps of those records).

    Masks repeated over the counts pick the values in one NumPy pass, not a slice per record.
    """
    chosen = np.zeros(values.num_rows if values.steps is None else len(values.steps), dtype=bool)
    chosen[rows] = True
    step_chosen = chosen if values.steps is None else np.repeat(chosen, values.steps)
    value_chosen = np.repeat(step_chosen, values.counts)
    flat = values.values
    picked = list(itertools.compress(flat, value_chosen)) if isinstance(flat, list) else flat[value_chosen]
    steps = None if values.steps is None else values.steps[rows]
    return Values(values.kind, picked, values.counts[step_chosen], steps)
