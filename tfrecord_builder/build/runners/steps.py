"""The distributed steps (distributed.py) as an engine's workers run them: what every worker is
given (`Steps`, shipped with the job), and where each step's outputs go, by their tags. An engine
runs each step where it likes, as often as it likes (each gives the same values), and only makes
the groupings the tags name:

    Steps.classify(task) per task -> every one -> strata_from   (a stratified build's first pass)
    Steps.count_words(task) per task -> every one -> vocabulary.words_from   (a learned vocabulary's pass,
                                   before the build: its result is the spec the steps below are given)
    Steps.encode(task) per task -> RECORDS:  grouped by (split, bucket) -> Steps.sort
                                   OWN_KEYS: grouped by range of hashes -> own_key_problems -> PROBLEMS
                                   SUMMARY:  every one -> layout_of -> the layout (every sort and write gets it)
    Steps.sort(bucket)          -> PARTS:    grouped by (split, shard) -> Steps.write
                                   KEYS:     grouped by range of hashes -> counted_keys -> DISTINCT
                                   DISTINCT: summed by split
                                   PROBLEMS: every one
    layout_of's summary, PROBLEMS, DISTINCT summed -> Steps.result

One copy (keyed.py), where the plan was made from the records' keys before the job:

    Steps.write_keyed(shard) per shard of the plan -> every one, in the plan's order -> keyed.keyed_result

Beam's runner (beam.py) makes the groupings with GroupByKey and side inputs, Spark's (spark.py)
with groupByKey and the driver, tests/build/test_contract.py's with dicts in one process.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import os
import pickle
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from ...atomic import AtomicFile
from ...builders.base import Builder
from ...builders.sources import add_shipped_sources, builder_sources, source_builders
from ...spec.model import Spec
from ...write.manifest import record_shard
from ...write.membership import KeptSplits
from ...write.strata import Strata
from ..encoding import BatchClasses
from ..plan import KeyedShard, ReadTask
from ..vocabulary import TaskWords, count_task
from .contract import RunJob, RunResult
from .keyed import OneCopyRefused, ShardResult, write_keyed_shard
from .distributed import (BuildSummary, Layout, PlacedRecords, TaskSummary, by_bucket, classify_task, count_keys,
                          encode_task, joined, run_result, sort_bucket, unique_keys, write_placed_shard)

TASKS_PER_BUCKET = 4
MIN_BUCKETS = 16

# the tags of the steps' outputs (`Steps`): each names where an engine sends the output
RECORDS = "records"  # encode: ((split, bucket), records) -> grouped by (split, bucket), each group sorted
OWN_KEYS = "own_keys"  # encode: KeyEntry -> grouped by its first item, each group to own_key_problems
SUMMARY = "summary"  # encode: TaskSummary -> every one, to layout_of
PARTS = "parts"  # sort: ((split, shard), (bucket, records)) -> grouped by (split, shard), each group written
KEYS = "keys"  # sort: ((split, range of hashes), keys) -> grouped by its first item, each group to counted_keys
DISTINCT = "distinct"  # sort: (split, distinct keys) -> summed by split, with counted_keys'
PROBLEMS = "problems"  # sort: (where, the error's text) -> every one, with own_key_problems', to run_result


def bucket_bits(spec: Spec, num_tasks: int) -> int:
    """How many of a key hash's first bits name its bucket in a shuffled build (0 in the source's
    order, where a bucket is a task). A bucket holds one task's records in a small build (each
    sorted by a worker of its own), about TASKS_PER_BUCKET tasks' in a large one: each task sends
    a split's records to the buckets in one element each, so the elements grow as tasks x buckets."""
    if not spec.output.shuffle:
        return 0
    buckets = max(math.ceil(num_tasks / TASKS_PER_BUCKET), min(num_tasks, MIN_BUCKETS))
    return max(0, math.ceil(math.log2(buckets)))


def counted_keys(group: tuple[tuple[str, int], Iterable[np.ndarray]]) -> tuple[str, int]:
    """A group of KEYS outputs (one range of hashes of an unshuffled split): (split, its different
    keys there), summed by split with the DISTINCT outputs."""
    (split, _), keys = group
    return split, count_keys(keys)


def own_key_problems(group: tuple[Any, Iterable[tuple]]) -> list[tuple[tuple, str]]:
    """A group of OWN_KEYS outputs (one range of hashes): the first key given twice, as a
    PROBLEMS output, or none."""
    found = unique_keys(group[1])
    return [found] if found is not None else []


@dataclasses.dataclass(frozen=True)
class Carrier:
    """How records cross from one step to the next: as the engine's own elements (`folder` None),
    or as files in `folder`, a folder every worker shares, with only their paths as elements (on
    Beam's DirectRunner, which hands a worker its whole share of a step's elements at once: a
    worker's memory would grow with the dataset). A step run again writes the same file again."""

    folder: str | None = None

    def put(self, piece: PlacedRecords, name: str) -> Any:
        """What carries `piece` (named `name` among a step's outputs) to the next step."""
        if self.folder is None:
            return piece
        path = os.path.join(self.folder, f"{name}.pickle")
        with AtomicFile(path, sync=False) as file:  # not fsynced: a step run again writes it again
            pickle.dump(piece, file, protocol=pickle.HIGHEST_PROTOCOL)
        return path

    def get(self, handle: Any) -> PlacedRecords:
        """The records `put` carried."""
        if self.folder is None:
            return handle
        with open(handle, "rb") as file:
            return pickle.load(file)


@dataclasses.dataclass(frozen=True)
class Steps:
    """The steps of one build as an engine's workers run them: what each step needs of the build,
    and nothing of the engine. An engine ships this record with its job, runs a step where it
    likes (any number of times: each gives the same values), and sends each output where its tag
    says (the module's docstring).

    Attributes:
        spec: the build's spec, its source's columns and classes filled in.
        sources: the spec's builder file by name (`builders.sources.builder_sources`): a worker
            elsewhere hasn't got it.
        bits: how many of a key hash's first bits name its bucket (`bucket_bits`).
        shards: where the shards go: the staging folder, or a bucket's prefix (`RunJob.shards`).
        build_id: the build's fingerprint, under which finished shards are recorded.
        kept: the finished shards of an interrupted build (kept where they hold the same records).
        keep: an earlier version's splits to keep (--keep-splits), or None.
        carrier: how records cross between the steps.
        given: builders made from Python objects where the build began (a frame's, whose rows are
            in a file that engine's workers on this machine map), shipped as they are: the spec
            alone can't make them.
    """

    spec: Spec
    sources: dict[str, str]
    bits: int
    shards: str
    build_id: str
    kept: dict[str, dict]
    keep: KeptSplits | None = None
    carrier: Carrier = Carrier()
    given: tuple[tuple[str | None, Builder], ...] = ()

    @classmethod
    def of(cls, job: RunJob, carrier: Carrier = Carrier()) -> Steps:
        """The steps of the runner's `job`, its records carried by `carrier`."""
        given = tuple((split, builder) for split, builder in job.builders.items() if builder.FROM_PYTHON)
        return cls(job.spec, builder_sources(job.spec), bucket_bits(job.spec, len(job.tasks)), job.shards,
                   job.build_id, job.kept, job.keep, carrier, given)

    def past_encoding(self) -> Steps:
        """These steps without what only encoding needs (an earlier version's key hashes, which may
        be large): what an engine ships with the steps after it."""
        return dataclasses.replace(self, keep=None)

    def builders(self) -> dict[str | None, Builder]:
        """The spec's builders by source split, made where this is called (a custom builder's code
        runs on the worker, from the file shipped with the job); those `given`, as they came."""
        if self.given:
            return dict(self.given)
        add_shipped_sources(self.sources)
        return dict(source_builders(self.spec))

    def classify(self, builders: dict[str | None, Builder], task: ReadTask
                 ) -> tuple[int, list[BatchClasses], str | None]:
        """A stratified build's first pass over one task (`classify_task`): every one to `strata_from`."""
        return classify_task(self.spec, builders[task.split], task)

    def count_words(self, builders: dict[str | None, Builder], task: ReadTask,
                    stratified: tuple[Strata, str | None] | None = None) -> TaskWords:
        """A learned vocabulary's pass over one task (`vocabulary.count_task`: the words of its
        train texts; `stratified` is `strata_from`'s): every one to `vocabulary.words_from`."""
        strata, error = stratified if stratified is not None else (None, None)
        if error is not None:  # the first pass stopped at bad data: the build's error
            return task.index, {}, error
        return count_task(self.spec, builders[task.split], task, strata, self.keep)

    def encode(self, builders: dict[str | None, Builder], task: ReadTask,
               stratified: tuple[Strata, str | None] | None = None,
               counted: Callable[[int, int, int], None] | None = None) -> Iterator[tuple[str, Any]]:
        """Reads and encodes one task (`encode_task`; `stratified` is `strata_from`'s, `counted` an
        engine's counters): its records by (split, bucket) (RECORDS), the keys of its own to check
        (OWN_KEYS), then its summary (SUMMARY)."""
        strata, error = stratified if stratified is not None else (None, None)
        if error is not None:  # the first pass stopped at bad data: the build's error, as locally
            yield SUMMARY, TaskSummary(task.index, error=error)
            return
        summary, held, keys = encode_task(self.spec, builders[task.split], task, strata, self.keep, counted)
        for entry in keys:
            yield OWN_KEYS, entry
        for name, piece in held.items():  # a task's records of a split go out by bucket in one piece each
            for bucket, part in by_bucket(self.spec, self.bits, task.index, piece, summary.buckets.setdefault(name, {})):
                yield RECORDS, ((name, bucket), self.carrier.put(part, f"{name}-{bucket:05d}-{task.index:06d}"))
        yield SUMMARY, summary

    def sort(self, key: tuple[str, int], carried: Iterable[Any], layout: Layout) -> Iterator[tuple[str, Any]]:
        """Sorts one bucket's records (its RECORDS outputs, in any order) and cuts them at shard
        bounds (`sort_bucket`): the pieces by shard (PARTS), what it says of its keys (KEYS,
        DISTINCT, PROBLEMS). Nothing where a task failed."""
        if layout.failed:
            return
        split, bucket = key
        result = sort_bucket(self.spec, split, bucket, joined([self.carrier.get(handle) for handle in carried]), layout)
        for key_range, keys in result.key_ranges:
            yield KEYS, ((split, key_range), keys)
        if result.distinct is not None:
            yield DISTINCT, (split, result.distinct)
        if result.problem is not None:
            yield PROBLEMS, result.problem
        for shard, part in result.parts:
            yield PARTS, ((split, shard), (bucket, self.carrier.put(part, f"{split}-shard{shard:05d}-{bucket:05d}")))

    def write(self, key: tuple[str, int], parts: Iterable[tuple[int, Any]], layout: Layout) -> str | None:
        """Writes one shard from its PARTS outputs, (bucket, piece) in any order (`write_placed_shard`):
        its file name, or None where a resumed build keeps it."""
        split, index = key
        handles = [handle for _, handle in sorted(parts, key=lambda part: part[0])]  # by bucket
        return write_placed_shard(self.spec, self.shards, self.build_id, self.kept, split, index,
                                  [functools.partial(self.carrier.get, handle) for handle in handles], layout)

    def write_keyed(self, builders: dict[str | None, Builder], sizes: list[tuple[str | None, int]],
                    job: tuple[KeyedShard, str | None]) -> ShardResult | str:
        """One copy: reads, encodes and writes one shard of a keyed plan (keyed.py
        `write_keyed_shard`; `sizes` are the plan's sources as keyed.py `readers` gives them, without
        their builders) and records it in the manifest: its ShardResult, or the reason the build must
        take the usual path (every one, in the plan's order, to `keyed_result`)."""
        shard, _ = job
        try:
            result = write_keyed_shard((self.spec, [(split, builders[split], size) for split, size in sizes]), job)
        except OneCopyRefused as refused:
            return refused.reason
        if result.shard is not None:  # recorded at once: a resumed build keeps it
            record_shard(self.shards, self.build_id, shard.split, result.shard.to_dict(), *shard.key_range)
        return result

    def result(self, summary: BuildSummary, problems: list[tuple[tuple, str]], distinct: dict[str, int]) -> RunResult:
        """The runner's result (`run_result`) from `layout_of`'s summary, every PROBLEMS output and
        the DISTINCT outputs summed by split."""
        return run_result(self.spec, self.shards, self.build_id, summary, problems, distinct)
