"""The Beam runner: the build's plan as an Apache Beam pipeline, with the local runner's bytes.

    stratify: Create(read tasks) -> Reshuffle -> each task's classes -> all -> strata (side input)
    Create(read tasks) -> Reshuffle -> encode each task -+- ((split, bucket), records)
                                                         +- the task's summary
    summaries -> in task order -> layout: shards per split, each bucket's first rank (side input)
    records -> GroupByKey(split, bucket) -> sorted, cut at shard bounds -> ((split, shard), piece)
            -> GroupByKey(split, shard) -> our writer, a piece at a time: temporary name, then rename; sha256

Only task descriptions go into the graph (`beam.Create` pickles what it is given), never rows.
Records cross the shuffles as a few large elements (a task's for one bucket, a bucket's for one
shard), or, on the DirectRunner, as files in the staging folder (`beam-runs/`) with only their
names as elements, so a worker holds one task's or one bucket's records at a time however large
the dataset (`_BetweenSteps`). A bucket holds the records
of one range of key hashes (shuffled builds) or of one task (in the source's order), so sorting
buckets and cutting them by rank gives every shard exactly the records, in exactly the order,
that the local runner writes. Shards are written by our writer, not `WriteToTFRecord` (whose
shards start at a random place); a retried bundle writes the same bytes again, and each finished
shard is recorded in `manifest/` so `--resume` keeps it.

The pipeline leaves its results in the staging folder (`beam-summary.pickle`: statistics,
skipped records, errors), where the process that started it reads them.
"""
from __future__ import annotations

import contextlib
import io
import logging
import math
import os
import pickle
import shutil
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

import apache_beam as beam
import numpy as np
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.runners.runner import PipelineState

from ... import fs
from ...atomic import AtomicFile
from ...builders.base import Builder
from ...builders.sources import builder_sources, add_shipped_sources, source_builders
from ...codec.bytecolumn import ByteColumn, concat
from ..encoding import BatchClasses, classify_for_build, encode_for_build
from ...errors import DataError, TFRecordBuilderError, UsageError
from ...features import notices
from ...processes import stderr_held
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
from .contract import RunJob, RunResult, check_not_empty
from ..plan import ReadTask, StatisticsTree, source_order_keys, strata_of, task_batches

SUMMARY_FILE = "beam-summary.pickle"
RUNS_FOLDER = "beam-runs"  # records between the job's steps
_NAMESPACE = "tfrecord_builder"
_POLL_SECONDS = 5.0
TASKS_PER_BUCKET = 4
MIN_BUCKETS = 16
_ANY_PAIR = beam.typehints.Tuple[beam.typehints.Any, beam.typehints.Any]


class BeamRunner:
    """The Runner (build/runners/contract.py) of an Apache Beam pipeline: the DirectRunner on this
    machine by default, or the runner `--pipeline-options` names. It keeps no checkpoint (a
    resumed build keeps the finished shards), and for an output in a bucket writes the shards
    there itself: a remote runner's workers are other machines."""

    name = "beam"
    takes_options = True
    checkpoints = False
    shards_to_bucket = True

    def check(self, spec: Spec, folder: str, options: list[str], workers: int) -> None:
        """Raises UsageError, before any work, for options Beam refuses and for places a job's
        workers can't reach (Dataflow's run on other machines: what they read and write must be in a
        bucket)."""
        if _options(options, workers).view_as(StandardOptions).runner != "DataflowRunner":
            return
        if not fs.is_url(folder):
            raise UsageError("--output: a DataflowRunner job's workers can't write to this machine's disk; "
                             "give a bucket (--output gs://BUCKET/datasets)")
        paths = [spec.source.path] + [split.path for split in spec.splits.values() if not isinstance(split, float)]
        local = next((path for path in paths if path and not fs.is_url(path)), None)
        if local is not None:
            raise UsageError(f"{spec.resolve(local)}: a DataflowRunner job's workers can't read this machine's "
                             "disk; copy the source to a bucket and give its URL as the path")

    def run(self, job: RunJob) -> RunResult:
        """Runs the plan as a Beam pipeline (keeping the `job.kept` shards of an interrupted run, and
        with `job.keep` the splits of an earlier version); returns what it wrote into `job.shards`
        (a folder or a bucket's prefix). The DirectRunner's workers keep records in `job.staging`."""
        spec, tasks, shards = job.spec, job.tasks, job.shards
        options = _options(job.options, job.workers)
        local = options.view_as(StandardOptions).runner in (None, "DirectRunner", "BundleBasedDirectRunner",
                                                             "SwitchingDirectRunner", "PrismRunner")
        summary_path = fs.join(shards, SUMMARY_FILE)
        if fs.exists(summary_path):
            fs.remove(summary_path)
        carrier = _between_steps(local, os.path.join(job.staging, RUNS_FOLDER))
        # a bucket of hashes holds one task's records in a small build (each sorted by a worker of its
        # own), about TASKS_PER_BUCKET tasks' in a large one: each task sends a split's records to the
        # buckets in one element each, so the elements grow as tasks x buckets
        buckets = max(math.ceil(len(tasks) / TASKS_PER_BUCKET), min(len(tasks), MIN_BUCKETS))
        bits = max(0, math.ceil(math.log2(buckets))) if spec.output.shuffle else 0
        try:
            pipeline = beam.Pipeline(options=options)
        except ValueError as error:  # e.g. an unknown --runner
            raise UsageError(f"--pipeline-options: {error}") from None
        _plan(pipeline, spec, tasks, shards, job.build_id, job.kept, bits, carrier, job.keep)
        # the DirectRunner's workers are this machine's processes, each logging a dozen lines: held
        # back unless the job fails for a reason of Beam's; a remote runner's lines (the job's URL) stay
        held = (stderr_held(lambda error: not isinstance(error, TFRecordBuilderError)) if local
                else contextlib.nullcontext())
        with held:
            _watch(pipeline.run(), job.progress)
        result = _results(spec, shards, job.build_id)
        if carrier.folder is not None:
            shutil.rmtree(carrier.folder)
        return result


def _between_steps(local: bool, folder: str) -> "_BetweenSteps":
    """How records cross the job's steps: `TFRECORD_BUILDER_BEAM_RECORDS` (files or elements), else
    files where the workers share this machine's disk (the DirectRunner), else Beam elements."""
    chosen = os.environ.get("TFRECORD_BUILDER_BEAM_RECORDS") or ("files" if local else "elements")
    if chosen not in ("files", "elements"):
        raise UsageError(f"TFRECORD_BUILDER_BEAM_RECORDS: expected files or elements, received {chosen!r}")
    if chosen == "elements":
        return _BetweenSteps(None)
    shutil.rmtree(folder, ignore_errors=True)  # a killed job's
    os.makedirs(folder)
    return _BetweenSteps(folder)


def _plan(pipeline: beam.Pipeline, spec: Spec, tasks: list[ReadTask], staging: str, build_id: str,
          kept: dict[str, dict], bits: int, carrier: "_BetweenSteps", keep: KeptSplits | None = None) -> None:
    """The plan's steps, as the module's docstring draws them."""
    encode = _EncodeTask(spec, bits, builder_sources(spec), carrier, keep)
    strata = []  # a stratified build's first pass: every record's class, before any is divided
    if spec.stratify is not None:
        strata.append(beam.pvalue.AsSingleton(pipeline
                                              | "ClassTasks" >> beam.Create(tasks)
                                              | "ClassSpread" >> beam.Reshuffle()
                                              | "Classify" >> beam.ParDo(_ClassifyTask(spec, builder_sources(spec)))
                                              | "AllClasses" >> beam.combiners.ToList()
                                              | "Strata" >> beam.Map(_strata, spec)))
    encoded = (pipeline
               | "Tasks" >> beam.Create(tasks)
               | "Spread" >> beam.Reshuffle()
               | "Encode" >> beam.ParDo(encode, *strata).with_output_types(_ANY_PAIR).with_outputs(
                   "summary", "keys", main="records"))
    layout = beam.pvalue.AsSingleton(encoded.summary
                                     | "Summaries" >> beam.combiners.ToList()
                                     | "Layout" >> beam.Map(_layout, spec, staging))
    parts = (encoded.records
             | "Buckets" >> beam.GroupByKey()
             | "Sort" >> beam.ParDo(_SortBucket(spec, carrier), layout).with_output_types(_ANY_PAIR).with_outputs(
                 "problems", "distinct", "keys", main="parts"))
    (parts.parts
     | "Shards" >> beam.GroupByKey()
     | "Write" >> beam.ParDo(_WriteShard(spec, staging, build_id, kept, carrier), layout))
    unique = encoded["keys"] | "Keys" >> beam.GroupByKey() | "Unique" >> beam.FlatMap(_unique_keys, spec)
    ((parts.problems, unique)
     | "Problems" >> beam.Flatten()
     | "AllProblems" >> beam.combiners.ToList()
     | "SaveProblems" >> beam.Map(_save, staging, "problems"))
    counted = parts["keys"] | "KeyRanges" >> beam.GroupByKey() | "CountKeys" >> beam.Map(_count_keys)
    ((parts.distinct, counted)
     | "Counts" >> beam.Flatten()
     | "Distinct" >> beam.CombinePerKey(sum)
     | "AllDistinct" >> beam.combiners.ToList()
     | "SaveDistinct" >> beam.Map(_save, staging, "distinct"))


def _watch(result: Any, progress: Callable | None) -> None:
    """Waits for the job, showing its counters as it goes where the runner reports them while it
    runs (the DirectRunner only returns once done)."""
    while not PipelineState.is_terminal(result.state):
        if progress:
            progress("encoding", _counter(result, "records read"), None)
        time.sleep(_POLL_SECONDS)
    result.wait_until_finish()
    if progress:
        progress("encoding", _counter(result, "records read"), None)


def _counter(result: Any, name: str) -> int:
    try:
        found = result.metrics().query(MetricsFilter().with_namespace(_NAMESPACE).with_name(name))["counters"]
    except Exception:  # a runner without metrics while it runs
        return 0
    return sum(counter.committed or counter.attempted or 0 for counter in found)


def _options(given: list[str], workers: int) -> PipelineOptions:
    """Beam's options as given; none: the DirectRunner in `workers` processes."""
    flags = list(given) if given else ["--runner=DirectRunner", "--direct_running_mode=multi_processing",
                                       f"--direct_num_workers={workers}", "--default_sdk_harness_log_level=WARNING"]
    options = PipelineOptions(flags)
    refused: list[str] = []

    class _Discarded(logging.Handler):  # Beam only logs flags it can't parse, and goes on without them
        def emit(self, record: logging.LogRecord) -> None:
            if "unparseable" in record.getMessage():
                refused.append(record.getMessage())

    handler = _Discarded()
    logger = logging.getLogger("apache_beam.options.pipeline_options")
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    logger.propagate = False
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            options.get_all_options()
    except SystemExit:  # argparse: a known option with a value it refuses (it printed why)
        reason = said.getvalue().strip().splitlines()[-1].partition("error: ")[2] if said.getvalue().strip() else ""
        raise UsageError(f"--pipeline-options: Beam refuses them: {reason or ' '.join(given)}") from None
    finally:
        logger.removeHandler(handler)
    logging.getLogger("apache_beam").setLevel(logging.ERROR)  # Beam's INFO lines would drown the build's
    if refused:
        raise UsageError(f"--pipeline-options: Beam doesn't know {refused[0].partition(': ')[2]}")
    return options


@dataclass
class _PlacedRecords:
    """Records of one split on their way to a shard: their key hashes, their place in the source
    (task, record) and their framed bytes; `labels` ("origin\\0key") where keys must be unique."""

    hashes: np.ndarray
    places: np.ndarray
    records: ByteColumn
    labels: list[str] | None = None

    def take(self, rows: np.ndarray) -> "_PlacedRecords":
        labels = [self.labels[row] for row in rows.tolist()] if self.labels is not None else None
        return _PlacedRecords(self.hashes[rows], self.places[rows], self.records.take(rows), labels)


def _joined(pieces: list[_PlacedRecords]) -> _PlacedRecords:
    if len(pieces) == 1:
        return pieces[0]
    labels = [label for piece in pieces for label in piece.labels] if pieces[0].labels is not None else None
    return _PlacedRecords(np.concatenate([piece.hashes for piece in pieces]), np.concatenate([piece.places for piece in pieces]),
                  concat([piece.records for piece in pieces]), labels)


@dataclass
class _TaskSummary:
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


class _EncodeTask(beam.DoFn):
    """Reads and encodes one task; its records go out by (split, bucket)."""

    def __init__(self, spec: Spec, bits: int, sources: dict[str, str], carrier: "_BetweenSteps",
                 keep: KeptSplits | None = None):
        self.spec = spec
        self.keep = keep
        self.bits = bits
        self.sources = sources  # the spec's builder file: a worker elsewhere doesn't have it
        self.carrier = carrier
        self.builders: dict[str | None, Builder] = {}

    def setup(self) -> None:
        add_shipped_sources(self.sources)
        self.builders = dict(source_builders(self.spec))  # a custom builder's code runs here, on the worker
        self.read = beam.metrics.Metrics.counter(_NAMESPACE, "records read")
        self.encoded = beam.metrics.Metrics.counter(_NAMESPACE, "records encoded")
        self.skipped = beam.metrics.Metrics.counter(_NAMESPACE, "records skipped")

    def process(self, task: ReadTask, stratified: tuple[Strata, str | None] | None = None) -> Iterator[Any]:
        spec = self.spec
        summary = _TaskSummary(task.index)
        strata, summary.error = stratified if stratified is not None else (None, None)
        if summary.error is not None:  # the first pass stopped at bad data: the build's error, as locally
            yield beam.pvalue.TaggedOutput("summary", summary)
            return
        seen = 0  # records of this task with keys of their own, for the uniqueness check
        held: dict[str, list[_PlacedRecords]] = {}  # the task's records by split
        try:
            for batch in task_batches(spec, self.builders[task.split], task):
                result = encode_for_build(spec, task.split, batch, strata, self.keep)
                summary.skipped.extend(result.skipped)
                notices.added(summary.notices, result.notices)
                summary.kept += result.kept
                summary.records += result.count + len(result.skipped)
                self.read.inc(result.count + len(result.skipped))
                self.encoded.inc(result.count)
                self.skipped.inc(len(result.skipped))
                if result.batch is not None:  # keys of its own in an unshuffled build: checked apart
                    own = result.batch
                    for row in range(len(own)):
                        digest = result.hashes[row]
                        yield beam.pvalue.TaggedOutput("keys", (
                            (task.split, int(digest[0] >> np.uint64(56))),
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
                        _PlacedRecords(part.hashes, source_order_keys(task.index, first, count), part.records, part.labels))
        except DataError as error:
            summary.error = str(error)
        else:  # the task's records of a split go out by bucket in one piece each: few, large elements
            for name, pieces in held.items():
                yield from self._by_bucket(name, task.index, _joined(pieces), summary.buckets.setdefault(name, {}))
                del pieces
        yield beam.pvalue.TaggedOutput("summary", summary)

    def _by_bucket(self, split: str, task: int, piece: _PlacedRecords, counts: dict[int, int]) -> Iterator[Any]:
        if not self.spec.output.shuffle:  # the source's order: a task's records are one bucket
            buckets = np.full(piece.records.num_rows, task, np.int64)
        elif self.bits == 0:
            buckets = np.zeros(piece.records.num_rows, np.int64)
        else:
            buckets = (piece.hashes[:, 0] >> np.uint64(64 - self.bits)).astype(np.int64)
        for bucket in np.unique(buckets).tolist():
            rows = np.flatnonzero(buckets == bucket)
            counts[bucket] = counts.get(bucket, 0) + len(rows)
            part = piece if len(rows) == len(buckets) else piece.take(rows)
            yield (split, bucket), self.carrier.put(part, f"{split}-{bucket:05d}-{task:06d}")


class _ClassifyTask(beam.DoFn):
    """A stratified build's first pass over one task: its records' classes and key hashes, or the
    error that stopped it."""

    def __init__(self, spec: Spec, sources: dict[str, str]):
        self.spec = spec
        self.sources = sources
        self.builders: dict[str | None, Builder] = {}

    def setup(self) -> None:
        add_shipped_sources(self.sources)
        self.builders = dict(source_builders(self.spec))

    def process(self, task: ReadTask) -> Iterator[tuple[int, list[BatchClasses], str | None]]:
        parts: list[BatchClasses] = []
        try:
            for batch in task_batches(self.spec, self.builders[task.split], task):
                parts.append(classify_for_build(self.spec, task.split, batch))
        except DataError as error:
            yield task.index, parts, str(error)
            return
        yield task.index, parts, None


def _strata(tasks: list[tuple[int, list[BatchClasses], str | None]], spec: Spec) -> tuple[Strata, str | None]:
    """The strata from every task's classes, and the first pass's first error in task order (the
    one the local runner's first pass, reading in that order, stops at)."""
    tasks = sorted(tasks, key=lambda task: task[0])
    error = next((failed for _, _, failed in tasks if failed is not None), None)
    return strata_of(spec, [part for _, parts, _ in tasks for part in parts]), error


@dataclass
class _Layout:
    """Where every record goes: each split's shard count and bounds, and each bucket's first rank."""

    shards: dict[str, np.ndarray] = field(default_factory=dict)  # split -> shard_starts
    buckets: dict[str, dict[int, int]] = field(default_factory=dict)  # split -> bucket -> first rank
    failed: bool = False


def _layout(summaries: list[_TaskSummary], spec: Spec, staging: str) -> _Layout:
    """The layout from every task's summary, taken in task order; the statistics, skipped records
    and the first error are saved for the process that started the pipeline."""
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
    layout = _Layout(failed=error is not None)
    for name in spec.splits:
        num_shards = count_shards(counts[name], num_bytes[name], spec.output.shards, spec.output.target_shard_bytes)
        layout.shards[name] = shard_starts(counts[name], num_shards)
        merged: dict[int, int] = {}
        for summary in summaries:
            for bucket, count in summary.buckets.get(name, {}).items():
                merged[bucket] = merged.get(bucket, 0) + count
        rank = 0
        for bucket in sorted(merged):
            layout.buckets.setdefault(name, {})[bucket] = rank
            rank += merged[bucket]
    _save({"statistics": tree.to_dict(), "skipped": skipped, "notices": noticed, "counts": counts, "error": error,
           "num_shards": {name: len(starts) - 1 for name, starts in layout.shards.items()},
           "records": sum(summary.records for summary in summaries),
           "members": {name: np.concatenate([hashes for summary in summaries
                                             for hashes in summary.members.get(name, [])] or [np.empty(0, np.uint64)])
                       for name in spec.splits},
           "kept": sum(summary.kept for summary in summaries)}, staging, "summary")
    return layout


class _SortBucket(beam.DoFn):
    """Sorts one bucket's records into the order they are written, and cuts it at shard bounds."""

    def __init__(self, spec: Spec, carrier: "_BetweenSteps"):
        self.spec = spec
        self.carrier = carrier

    def process(self, item: tuple[tuple[str, int], Iterable[Any]], layout: _Layout) -> Iterator[Any]:
        (split, bucket), runs = item
        if layout.failed:
            return
        joined = _joined([self.carrier.get(run) for run in runs])  # in any order: the sort decides
        shuffle = self.spec.output.shuffle
        whole = joined.take(write_order(joined.hashes, shuffle, joined.places))
        del joined
        if not shuffle:  # a task's different keys, by range of hashes: counted with every task's (`_count_keys`)
            keys = whole.hashes[key_order(whole.hashes)]
            keys = np.delete(keys, repeats(keys), axis=0)
            ranges = (keys[:, 0] >> np.uint64(56)).astype(np.int64)
            for key_range in np.unique(ranges).tolist():
                yield beam.pvalue.TaggedOutput("keys", ((split, key_range), keys[ranges == key_range]))
        else:  # a bucket holds every record of its range of hashes
            yield beam.pvalue.TaggedOutput("distinct", (split, distinct_keys(whole.hashes)))
            found = first_duplicate(whole.hashes, True) if whole.labels is not None else None
            if found is not None:
                first, second = found
                yield beam.pvalue.TaggedOutput("problems", (
                    (list(self.spec.splits).index(split), *whole.hashes[first].tolist()),
                    str(duplicate_key(whole.labels[first], whole.labels[second]))))
        count = len(whole.hashes)
        starts = layout.shards[split]
        shards = shard_of(starts, layout.buckets[split][bucket] + np.arange(count))
        for shard in np.unique(shards).tolist():
            rows = np.flatnonzero(shards == shard)
            part = whole.take(rows) if len(rows) < count else whole
            yield (split, shard), (bucket, self.carrier.put(part, f"{split}-shard{shard:05d}-{bucket:05d}"))


def _count_keys(item: tuple[tuple[str, int], Iterable[np.ndarray]]) -> tuple[str, int]:
    """How many different keys an unshuffled split has in one range of hashes, from every task's."""
    (split, _), keys = item
    keys = np.concatenate(list(keys))
    return split, distinct_keys(keys[key_order(keys)])


def _unique_keys(item: tuple[Any, Iterable[tuple]], spec: Spec) -> Iterator[Any]:
    """The first key yielded twice (in the source's order) among records with keys of their own,
    in an unshuffled build (a shuffled one finds them next to each other once sorted)."""
    _, entries = item
    entries = list(entries)  # (hash high, low, task, row, origin, label)
    hashes = np.array([entry[:2] for entry in entries], np.uint64).reshape(-1, 2)
    places = np.array([entry[2:4] for entry in entries], np.uint64).reshape(-1, 2)
    found = first_duplicate(hashes, False, places)
    if found is not None:
        first, second = entries[found[0]], entries[found[1]]
        yield (-1, *second[2:4]), str(duplicate_key(first[4], second[5]))


class _WriteShard(beam.DoFn):
    """Writes one shard from its parts, with our writer (temporary name, then rename)."""

    def __init__(self, spec: Spec, staging: str, build_id: str, kept: dict[str, dict], carrier: "_BetweenSteps"):
        self.spec, self.staging, self.build_id, self.kept, self.carrier = spec, staging, build_id, kept, carrier

    def setup(self) -> None:
        self.written = beam.metrics.Metrics.counter(_NAMESPACE, "shards written")

    def process(self, item: tuple[tuple[str, int], Iterable[tuple[int, str]]], layout: _Layout) -> Iterator[Any]:
        (split, index), parts = item
        starts = layout.shards[split]
        count = int(starts[index + 1] - starts[index])
        handles = [handle for _, handle in sorted(parts, key=lambda part: part[0])]  # by bucket
        spec = self.spec
        file = shard_name(spec.name, split, index, len(starts) - 1, spec.output.compression)
        entry = self.kept.get(file)
        if entry is not None and entry["num_examples"] == count:  # a resumed build: kept if its records are these
            ends = [self.carrier.get(handle) for handle in (handles[0], handles[-1])]
            span = key_range([(ends[0].hashes, ends[0].records), (ends[-1].hashes, ends[-1].records)])
            if kept_shard(entry, file, count, span) is not None:
                return
        written = [0]

        def chunks() -> Iterator[tuple[np.ndarray, ByteColumn]]:  # a piece at a time: a shard needn't fit memory
            for handle in handles:
                piece = self.carrier.get(handle)
                written[0] += piece.records.num_rows
                yield piece.hashes, piece.records

        shard, first, last = write_shard(fs.join(self.staging, file), chunks(), count, spec.output.compression,
                                         spec.output.writes_index)
        if written[0] != count:
            raise RuntimeError(f"shard {index} of {split}: {count} records expected, {written[0]} found "
                               "(internal error: please report it)")
        record_shard(self.staging, self.build_id, split, shard.to_dict(), first, last)
        self.written.inc()
        yield file


@dataclass(frozen=True)
class _BetweenSteps:
    """Carries records from one step of the job to the next: as Beam elements (`folder` None: a
    remote runner's shuffle pages them to disk), or as files in `folder`, with only their names as
    elements. The DirectRunner hands a worker its whole share of a step's elements at once, so
    records carried by Beam there made a worker's memory grow with the dataset; its workers share
    this machine's disk. A retried step writes the same file again."""

    folder: str | None

    def put(self, piece: _PlacedRecords, name: str) -> Any:
        if self.folder is None:
            return piece
        path = os.path.join(self.folder, f"{name}.pickle")
        with AtomicFile(path, sync=False) as file:  # not fsynced: a retried step writes it again
            pickle.dump(piece, file, protocol=pickle.HIGHEST_PROTOCOL)
        return path

    def get(self, handle: Any) -> _PlacedRecords:
        if self.folder is None:
            return handle
        with open(handle, "rb") as file:
            return pickle.load(file)


def _save(value: Any, staging: str, name: str) -> None:
    """Leaves a result of the pipeline in the staging folder, whole or not at all (in an object
    store, an object appears once its upload is complete)."""
    path = fs.join(staging, f"beam-{name}.pickle")
    with fs.open_file(path, "wb") if fs.is_url(path) else AtomicFile(path, sync=False) as file:
        pickle.dump(value, file)


def _load(staging: str, name: str) -> Any:
    with fs.open_file(fs.join(staging, f"beam-{name}.pickle"), "rb") as file:
        return pickle.load(file)


def _results(spec: Spec, staging: str, build_id: str) -> RunResult:
    """What the pipeline left in the staging folder, checked and put together."""
    summary = _load(staging, "summary")
    if summary["error"] is not None:
        raise DataError(summary["error"])
    problems = _load(staging, "problems")
    if problems:
        raise DataError(min(problems)[1])
    check_not_empty(spec, summary["counts"], summary["skipped"])
    distinct = dict(_load(staging, "distinct"))
    entries = recorded_shards(staging, build_id)  # each was fsynced and recorded once whole
    splits: dict[str, SplitInfo] = {}
    for name, total in summary["counts"].items():
        num_shards = summary["num_shards"][name]
        starts = shard_starts(total, num_shards)
        shards = []
        for index in range(num_shards):
            file = shard_name(spec.name, name, index, num_shards, spec.output.compression)
            entry = entries.get(file)
            if entry is None:  # no records went there: written here, empty
                if starts[index + 1] != starts[index]:
                    raise RuntimeError(f"{file}: not written (internal error: please report it)")
                shard, _, _ = write_shard(fs.join(staging, file), [], 0, spec.output.compression,
                                          spec.output.writes_index)
            else:
                shard = ShardInfo.from_dict(entry)
            shards.append(shard.to_dict())
        splits[name] = SplitInfo(name, total, sum(shard["num_bytes"] for shard in shards), shards)
    for name in (SUMMARY_FILE, "beam-problems.pickle", "beam-distinct.pickle"):
        fs.remove(fs.join(staging, name))
    return RunResult(splits, summary["statistics"], summary["skipped"],
                     {name: distinct.get(name, 0) for name in spec.splits}, summary["notices"], summary["members"],
                     summary["kept"])
