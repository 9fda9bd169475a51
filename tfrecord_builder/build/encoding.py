"""The build's encoding stage: source batches into per-split parts (records, key hashes,
statistics).

Runs in the build's process or in worker processes (`workers` > 1); either way the parts come
back in source order, so the output is byte-identical whatever the worker count.
"""
from __future__ import annotations

import hashlib
import itertools
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping

import numpy as np

from .. import processes
from ..builders.base import Batch, PendingBatch, RowOrigins, parsed_batch
from ..codec.bytecolumn import ByteColumn
from ..errors import DataError
from ..features import Feature
from ..features.notices import Notices, added
from ..features.values import Values
from ..spec.model import Spec
from ..write.collect import write_run
from ..write.order import key_label
from ..write.runs import RunFile, renew_run_names
from ..write.keys import assign_splits, hash_keys, hash_keys_and_members, key_bytes, member_hashes
from ..write.membership import KeptSplits
from ..write.strata import Strata
from ..write.stats import SplitStatistics
from .encode_batch import BatchRecords, encode_batch, encode_good_rows
from .packing import packed


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
    notices: dict[str, int] = field(default_factory=dict)  # features/notices.py: what its reading and encoding noted
    kept: int = 0  # records whose split an earlier version decided (--keep-splits)
    # a worker reading a whole task: the runs it wrote after this batch (records of it and of the
    # task's batches before it, whose parts then hold none), and whether it still holds some
    runs: dict[str, list[RunFile]] = field(default_factory=dict)
    held_after: bool = False


# Encoded in the build's process first, however many workers are asked for: long enough to
# measure the work's pace (the records encoded a second). No longer: meanwhile a core idles (at
# 0.1 s the 200,000-row table of bench/tabular.py had two of its 60-80 ms batches encoded here
# before the workers started, not one: its build took 2% longer)
IN_PROCESS_SECONDS = 0.05
# Workers start only for at least this much work left (estimated at that pace): a pool of 2 costs
# 50-100 ms to start, warm up and stop (a fork of the caller's memory per worker, more with
# TensorFlow loaded), and its records go through run files the shard writers merge again, so the
# 2,000 small photos of bench/images.py (0.2-0.3 s left after 0.1 s in-process) were 1.1-1.25x
# slower with 2 workers than in one process, on 2 cores shared with other work
PARALLEL_SECONDS = 0.5
# The batches read ahead to see whether that much work is left, at most: a source of many
# near-empty batches (every row unreadable) isn't held in memory whole to find out
LOOKAHEAD_BATCHES = 256


def encode_batches(spec: Spec, batches: Iterable[tuple[str | None, Batch | PendingBatch]],
                   workers: int = 1, runs: str | None = None, stage: Callable[..., Any] | None = None,
                   shared: processes.SharedPool | None = None) -> Iterator[Any]:
    """Encodes every `(split or None, batch)` in source order (a pending batch is parsed there
    too): in this process for the first IN_PROCESS_SECONDS; then, with `workers` > 1, in that
    many worker processes if the batches ahead hold PARALLEL_SECONDS of work at the pace so far
    (`working_seconds`), else here too (`_work_ahead`). Given a `runs` folder, workers write their
    records there (`collect.write_run`) and send back the run's name in their place.

    `stage(spec, split, batch)` is what is done to each batch (a module-level function, or a
    partial of one, for the workers): `encode_for_build` (the default; with its strata bound, for
    a stratified build), or a stratified build's first pass, `classify_for_build`. Given a
    `shared` pool, the workers are started there and left running for a later phase (the shards)."""
    stage = stage or encode_for_build
    batches = _failure_in_turn(batches)
    start = time.perf_counter()
    encoding, records = 0.0, 0  # seconds `stage` worked (`working_seconds`), and the records it was given
    for split, batch in batches:
        began = working_seconds()
        result = _ReadFailure.raised(batch) or stage(spec, split, batch)
        encoding += working_seconds() - began
        records += len(batch)
        yield result
        if workers > 1 and time.perf_counter() - start >= IN_PROCESS_SECONDS:
            break
    else:
        return
    # the records that make PARALLEL_SECONDS at this pace (none encoded, e.g. all unreadable: no pace to go by)
    wanted = PARALLEL_SECONDS * records / encoding if records and encoding else 0
    ahead, enough = _work_ahead(batches, wanted)
    if not enough:  # the rest is done here sooner than a pool starts and stops
        for split, batch in ahead:
            yield _ReadFailure.raised(batch) or stage(spec, split, batch)
        return
    with processes.pool_in(shared, workers, (spec, runs, stage), renew_run_names) as pool:
        pending: deque = deque()
        in_worker = processes.in_worker(encode_in_worker)
        for split, batch in itertools.chain(ahead, batches):
            pending.append(batch if isinstance(batch, _ReadFailure) else pool.submit(in_worker, split, batch))
            if len(pending) > 2 * workers:  # bounded: at most this many batches in flight
                yield _ReadFailure.raised(pending[0]) or pending.popleft().result()
        while pending:
            yield _ReadFailure.raised(pending[0]) or pending.popleft().result()


def working_seconds() -> float:
    """Seconds since some start, less the time this thread waited for a core (Linux: its
    schedstat): the pace of the work on a machine to itself. Wall time alone would count what
    other processes on the cores take as work left, and start workers when they help least; CPU
    time alone would count no work in waiting for a file (an object store's reads), which workers
    overlap."""
    try:
        with open("/proc/thread-self/schedstat", "rb") as stats:
            waited = int(stats.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):  # not Linux: wall time
        waited = 0.0
    return time.perf_counter() - waited


def _work_ahead(batches: Iterator[tuple], wanted: float) -> tuple[list[tuple], bool]:
    """The next batches, read until they hold more than `wanted` records (or LOOKAHEAD_BATCHES
    are read), and whether they do (False: the source ended first, or a read failed)."""
    ahead: list[tuple] = []
    held = 0
    for split, batch in batches:
        ahead.append((split, batch))
        if isinstance(batch, _ReadFailure):  # nothing follows it
            return ahead, False
        held += len(batch)
        if held > wanted or len(ahead) >= LOOKAHEAD_BATCHES:
            return ahead, True
    return ahead, False


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
                     strata: Strata | None = None, keep: KeptSplits | None = None) -> DividedBatch:
    """Parses a pending batch, encodes it, hashes its keys and divides it among the splits (by
    the key hashes alone, or with `strata` by class and key hash: `stratify:`; with `keep`, a key
    an earlier version holds goes to its split there: `--keep-splits`).

    Under `on_error: skip` bad records are dropped and listed; otherwise the first raises DataError.
    What parsing and encoding the batch noted comes back with it (`DividedBatch.notices`).
    """
    read = Notices()  # what parsing the batch notes (an annotation format's images without objects)
    batch = parsed_batch(batch, read)
    source_keys = batch.keys
    all_hashes, all_members = hash_keys_and_members(source_keys, spec.output.seed)
    if not len(batch):
        return DividedBatch(None, split, all_hashes, keys_digest(all_hashes), 0, skipped=list(batch.broken),
                            notices=read.counts)
    batch, encoded, good, skipped = _encoded(spec, spec.features, batch)
    hashes = all_hashes if good is None else all_hashes[good]
    divided_by = hashes  # the hashes that decide splits: a source row's records all go to its split
    if encoded is not None and encoded.rows is not None:  # rows fanned out: records have their own keys
        batch, divided_by = fanned_out_keys(batch, encoded.rows), hashes[encoded.rows]
        hashes = hash_keys(batch.keys, spec.output.seed)
    # the keys go back to the main process only where it checks them (unsorted builds' own keys)
    kept = batch.without_columns() if not batch.content_keys and not spec.output.shuffle else None
    result = DividedBatch(kept, split, hashes, keys_digest(all_hashes), len(batch), skipped=skipped,
                          notices=added(read.counts, encoded.notices) if encoded is not None else read.counts)
    if encoded is None:
        return result
    records = encoded.records  # framed as TFRecords (with their CRCs) here, in parallel
    members = all_members if batch.keys is source_keys else member_hashes(batch.keys)  # all kept: the same keys
    names = list(spec.splits)
    if split is None and spec.stratify is not None:
        assert strata is not None, "a stratified spec's records are divided by the strata of its first pass"
        assignment = strata.assign(record_classes(spec, encoded), hashes)
    elif split is None:
        assignment = assign_splits(divided_by, list(spec.splits.values()))
        if keep is not None:
            before = keep.splits_of(members)
            found = before >= 0
            assignment = np.where(found, before, assignment)
            result.kept = int(found.sum())
    else:
        assignment = np.full(len(batch), names.index(split))
    if spec.pack is not None:  # each split's examples packed into records of pack.length ids (build/packing.py)
        noted = Notices()
        batch, encoded, hashes, members, assignment = packed(spec.features, spec.pack.length, batch, encoded, hashes,
                                                             members, assignment, len(names), noted)
        records = encoded.records
        added(result.notices, noted.counts)
    for index, name in enumerate(names):
        rows = np.flatnonzero(assignment == index)
        if not len(rows):
            continue
        every = len(rows) == len(batch)
        statistics = part_statistics(spec, statistics_values(spec, encoded.values), encoded.missing,
                                     None if every else rows)
        labels = None
        if not batch.content_keys and spec.output.shuffle:  # checked for duplicates once sorted by hash
            labels = key_labels(batch, rows.tolist())
        result.parts[name] = SplitPart(hashes if every else hashes[rows],
                                       records if every else records.take(rows), statistics,
                                       labels, members=members if every else members[rows])
    return result


def statistics_values(spec: Spec, values: dict[str, dict[str, Values]]) -> dict[str, Values]:
    """Each feature's values its statistics count (`Feature.statistics_values`), of a batch's records."""
    return {name: spec.features[name].statistics_values(by_key) for name, by_key in values.items()}


def part_statistics(spec: Spec, values: dict[str, Values], missing: dict[str, np.ndarray],
                    rows: np.ndarray | None) -> SplitStatistics:
    """The statistics of a batch's records at `rows` (None: every one) that go to one split, from
    each feature's `statistics_values` and missing flags of the batch's records."""
    statistics = SplitStatistics(spec.features)
    for feature_name, main in values.items():
        feature = spec.features[feature_name]
        missing_here = missing[feature_name] if rows is None else missing[feature_name][rows]
        statistics.features[feature_name].add_missing(missing_here)  # rows, or rows x columns (`columns:`)
        # the default's values aren't the source's: counted apart, left out of min, mean, classes...
        # (per record: a gathered feature's cells filled among given ones stay in its figures)
        filled = (missing_here if feature.fills_missing and missing_here.ndim == 1
                  else np.zeros(len(missing_here), dtype=bool))
        if filled.any():
            statistics.add(feature_name, main.taken(np.flatnonzero(~filled) if rows is None else rows[~filled]))
        else:
            statistics.add(feature_name, main if rows is None else main.taken(rows))
        statistics.features[feature_name].filled += int(filled.sum())
    return statistics


def key_labels(batch: Batch, rows: list[int]) -> list[str]:
    """`key_label` of each of the rows: a file's rows (`RowOrigins`) named in one pass, without two
    calls a row."""
    keys, origin = batch.keys, batch.origin
    if type(origin) is RowOrigins:
        start, lines = f"{origin.file}, {origin.unit} ", origin.lines
        return [f"{start}{lines[row]}\0{keys[row]!r}" for row in rows]
    return [key_label(origin(row), keys[row]) for row in rows]


def fanned_out_keys(batch: Batch, rows: np.ndarray) -> Batch:
    """The batch's keys and origins by record where rows were fanned out (`Feature.fan_out`):
    a row's n-th record is keyed by the row's key and n, so each record has its own place in its
    shard (and its own membership), while its split follows the row's key."""
    rows = np.asarray(rows)
    selected = batch.without_columns().select(rows.tolist())
    firsts = np.searchsorted(rows, rows)  # the first record of each record's row
    selected.keys = [key_bytes(key) + b"\0" + str(index).encode() for key, index in
                     zip(selected.keys, (np.arange(len(rows)) - firsts).tolist())]
    return selected


def _encoded(spec: Spec, features: Mapping[str, Feature], batch: Batch, framed: bool = True
             ) -> tuple[Batch, BatchRecords | None, list[int] | None, list[dict[str, str]]]:
    """`features` of a (non-empty) batch encoded: the batch of the records kept, their encoding
    (None: none kept), the rows kept (None: all) and the skipped ones (`on_error: skip`: a bad
    record is dropped and listed; otherwise the first raises DataError)."""
    skipped: list[dict[str, str]] = list(batch.broken)  # rows the reader couldn't read (on_error: skip)
    if spec.on_error != "skip":
        return batch, encode_batch(features, batch, spec.sequence_lengths == "equal", framed=framed), None, skipped
    # each bad row with the error it gives encoded alone (what a row-by-row pass lists), in row order
    good, encoded, reasons = encode_good_rows(features, batch, spec.sequence_lengths == "equal", framed=framed)
    skipped.extend({"record": batch.origin(row), "reason": reasons[row]} for row in sorted(reasons))
    if len(good) == len(batch):
        return batch, encoded, None, skipped
    return batch.without_columns().select(good), encoded, good, skipped  # only keys and origins needed on


@dataclass
class BatchClasses:
    """The first pass of a stratified build over a batch: the class and key hash of each record
    the build keeps, or the error that stops the build."""

    classes: np.ndarray  # int64
    hashes: np.ndarray  # (n, 2) uint64
    records: int = 0  # read, skipped ones included


def classify_for_build(spec: Spec, split: str | None, batch: Batch | PendingBatch,
                       every_feature: bool = True) -> BatchClasses:
    """The `stratify:` label's class and the key hash of each record of the batch that the build
    keeps. Under `on_error: skip` with `every_feature`, the records are encoded whole to know which
    ones are skipped (a bad value anywhere drops a record); else only the label is (a bad value
    elsewhere fails the build anyway; a dry run only estimates skips)."""
    batch = parsed_batch(batch)
    assert spec.stratify is not None
    hashes = hash_keys(batch.keys, spec.output.seed)
    read = len(batch) + len(batch.broken)
    if not len(batch):
        return BatchClasses(np.zeros(0, np.int64), hashes, read)
    whole = every_feature and spec.on_error == "skip"
    # a learned vocabulary's text left out: the vocabulary pass needs the strata before it is learned,
    # and both passes divide the classes alike (a record skipped for that text alone still counts)
    features = ({name: feature for name, feature in spec.features.items() if not feature.learns_from_data}
                if whole else {spec.stratify: spec.features[spec.stratify]})
    batch, encoded, good, _ = _encoded(spec, features, batch, framed=False)
    if encoded is None:
        return BatchClasses(np.zeros(0, np.int64), hashes[:0], read)
    return BatchClasses(record_classes(spec, encoded), hashes if good is None else hashes[good], read)


def record_classes(spec: Spec, encoded: BatchRecords) -> np.ndarray:
    """Each record's class index of the `stratify:` label (a scalar class_label: one per record)."""
    assert spec.stratify is not None
    feature = spec.features[spec.stratify]
    return np.asarray(encoded.values[spec.stratify][feature.record_key].values, dtype=np.int64)


def keys_digest(hashes: np.ndarray) -> bytes:
    """A short digest of a batch's key hashes: a resumed build checks it has the same keys."""
    return hashlib.blake2b(hashes.tobytes(), digest_size=16).digest()


def encode_in_worker(state: tuple[Spec, str | None, Callable[..., Any]], split: str | None,
                     batch: Batch | PendingBatch) -> Any:
    """A batch's `stage` in a worker of `encode_batches` (or of a runner that hands workers whole
    tasks): with a runs folder, a build's records are written there and only the run's name goes back."""
    spec, runs, stage = state  # what the worker was started with
    result = stage(spec, split, batch)
    if runs is not None and isinstance(result, DividedBatch):  # the records stay here: written to runs, never sent back
        for name, part in result.parts.items():
            part.run = write_run(runs, name, part.hashes, part.records, part.labels, spec.output.shuffle)
            part.hashes = part.records = part.labels = None
    return result
