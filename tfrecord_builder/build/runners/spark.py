"""The Spark runner: the build's plan as an Apache Spark job, with the local runner's bytes.

    read tasks, a partition each -> each task encoded (`Steps.encode`) -+- RECORDS ((split, bucket), records)
                                                                       +- SUMMARY: the task's summary
    the summaries, collected -> the layout (driver, broadcast)
    records -> groupByKey(split, bucket) -> sorted, cut at shard bounds -> PARTS ((split, shard), (bucket, piece))
            -> groupByKey(split, shard) -> our writer on the executor: temporary name, then rename

A source that knows its records' keys before their bytes (an image folder, COCO, VOC, YOLO) is
built in one copy (keyed.py): the plan is made on the driver from the keys, and each shard is a
Spark task that reads, encodes and writes it whole (`Steps.write_keyed`); no records cross a
shuffle. Where that can't be (a bad record, a shard count the estimate got wrong) the shards it
wrote are removed and the job above runs.

The steps are build/runners/steps.py's (Beam's runner runs the same); Spark only carries their
values: each step's outputs as (tag, value) elements, filtered by tag. The driver holds task
descriptions, summaries and the layout, never records: records cross Spark's shuffles (which
spill to the executors' disks) as a few large elements, a task's for one bucket, a bucket's for
one shard. A task Spark runs again (an executor lost, a speculative copy) gives the same values,
and a shard written twice the same bytes.

The session (spark_session.py): the active one of the calling process (`tb.build(...,
runner="spark")` inside a PySpark program), else a new one on `local[workers]`, or on the master
the runner's options name (`--runner-option spark.master=...`); the options (`KEY=VALUE`) are
set on a new session as they are.
"""
from __future__ import annotations

import contextlib
import dataclasses
import threading
import uuid
import warnings
from typing import Any, Iterable, Iterator

with warnings.catch_warnings():  # PySpark 4.3 warns of pandas 3 on import; the build uses no pandas of Spark's
    warnings.simplefilter("ignore", FutureWarning)
    from py4j.protocol import Py4JJavaError
    from pyspark import Accumulator, StorageLevel
    from pyspark.errors import PythonException
    from pyspark.sql import SparkSession

from ...errors import DataError, DiskFullError
from ...features import notices
from ...progress import Progress
from ...registry import builtin_class
from ...spec.model import Spec
from ..plan import KeyedPlan
from .contract import RunJob, RunnerOptions, RunResult, check_not_empty
from .distributed import layout_of, strata_from
from .keyed import OneCopyRefused, discard_shards, keyed_jobs, keyed_result, plan_of, readers
from .spark_attempts import every_attempt_ended, job_group
from .spark_frames import Step, over_partitions, spark_source
from .spark_session import (APP_NAME, LOG, SparkJobError, check_master, check_visible, conf, ours, session,
                            spark_reason)
from ..vocabulary import WordCounts, words_from
from .steps import DISTINCT, KEYS, OWN_KEYS, PARTS, PROBLEMS, RECORDS, SUMMARY, Steps, counted_keys, own_key_problems

PROGRESS_SECONDS = 0.5  # how often the progress shown is brought up to date


class SparkRunner:
    """The Runner (build/runners/contract.py) of an Apache Spark job. It keeps no checkpoint (a
    resumed build keeps the finished shards), and for an output in a bucket writes the shards
    there itself: a cluster's executors are other machines."""

    name = "spark"
    takes_options = True
    checkpoints = False
    shards_to_bucket = True

    def check(self, spec: Spec, folder: str, options: RunnerOptions, workers: int) -> None:
        """Raises UsageError for options that aren't KEY=VALUE, and for a master (`spark://`) that
        doesn't answer, which Spark itself would retry for a minute before it gives up."""
        master = conf(options).get("spark.master", "")
        if master.startswith("spark://") and SparkSession.getActiveSession() is None:
            check_master(master, options)
        if getattr(builtin_class(spec.source.builder), "READ_BY", None) == self.name:
            session(options, workers)  # a Spark table's catalog, asked on the driver before the job

    def run(self, job: RunJob) -> RunResult:
        built_on = session(job.options, job.workers)
        check_visible(built_on.sparkContext, job.spec, job)
        with _job_errors():
            return self._run(built_on, job)

    def count_words(self, job: RunJob) -> WordCounts:
        """The learned vocabularies' pass as a Spark job: each task's counts (`Steps.count_words`),
        after a stratified build's first pass, summed on the driver."""
        built_on = session(job.options, job.workers)
        check_visible(built_on.sparkContext, job.spec, job, sources_only=True)  # the pass writes nothing
        steps = Steps.of(job)
        with _job_errors():
            stratified = None
            if steps.spec.stratify is not None:
                stratified = strata_from(_over_tasks(built_on, job, steps, _classify(steps)).collect(), steps.spec)
            return words_from(_over_tasks(built_on, job, steps, _count(steps, stratified)).collect())

    def _run(self, built_on: SparkSession, job: RunJob) -> RunResult:
        plan = plan_of(job) if spark_source(job) is None else None
        if plan is not None:
            try:
                return _run_keyed(built_on, job, plan)
            except OneCopyRefused:  # (a bad record, a shard count the estimate got wrong): the usual job
                discard_shards(job.shards, plan, job.kept, job.build_id)
        context = built_on.sparkContext
        steps = Steps.of(job)
        later = steps.past_encoding()  # what the steps after encoding ship
        stratified = None
        if steps.spec.stratify is not None:
            stratified = strata_from(_over_tasks(built_on, job, steps, _classify(steps)).collect(), steps.spec)
        read, written = context.accumulator(0), context.accumulator(0)  # the progress shown (a retried task adds again)
        encoded = _over_tasks(built_on, job, steps, _encode(steps, stratified, read))
        encoded.persist(StorageLevel.MEMORY_AND_DISK)  # two passes over it: the summaries, then the records
        sorted_parts = None
        try:
            with _shown(job.progress, "encoding", read):
                summaries = _tagged(encoded, SUMMARY).collect()
            layout, summary = layout_of(summaries, steps.spec)
            if summary.error is not None:  # a task stopped at bad data: nothing to sort
                raise DataError(summary.error)
            shared = context.broadcast(layout)
            buckets_count = max(1, sum(len(found) for found in layout.buckets.values()))
            sorted_parts = (_tagged(encoded, RECORDS).groupByKey(buckets_count)
                            .flatMap(lambda item: later.sort(item[0], item[1], shared.value)))
            sorted_parts.persist(StorageLevel.MEMORY_AND_DISK)
            problems: list[Any] = []
            distinct: dict[str, int] = {}
            for tag, value in sorted_parts.filter(lambda item: item[0] in (PROBLEMS, DISTINCT)).collect():
                if tag == PROBLEMS:
                    problems.append(value)
                else:
                    distinct[value[0]] = distinct.get(value[0], 0) + value[1]
            if not steps.spec.output.shuffle:  # keys counted, and keys of their own checked, across buckets
                for split, count in _tagged(sorted_parts, KEYS).groupByKey().map(counted_keys).collect():
                    distinct[split] = distinct.get(split, 0) + count
                problems += _tagged(encoded, OWN_KEYS).groupByKey().flatMap(own_key_problems).collect()
            group = f"{APP_NAME} {job.build_id[:12]} writing {uuid.uuid4().hex[:8]}"
            with _shown(job.progress, "writing", written, sum(int(starts[-1]) for starts in layout.shards.values())), \
                    job_group(context, group, "tfrecord-builder: the shards written"):
                try:
                    (_tagged(sorted_parts, PARTS)
                     .groupByKey(max(1, sum(len(starts) - 1 for starts in layout.shards.values())))
                     .foreach(lambda item: _write(later, item, shared.value, written)))
                except Exception:  # a failed job: its other attempts are being stopped, and may write meanwhile
                    every_attempt_ended(context, group, jobs=0)  # (if its job was started at all)
                    raise
            late = every_attempt_ended(context, group, jobs=1)
            if late is not None:
                noticed = dict(summary.notices)
                notices.added(noticed, {late: 1})
                summary = dataclasses.replace(summary, notices=noticed)
            return steps.result(summary, problems, distinct)
        finally:  # a calling program's session lives on: leave none of the build's data cached in it
            encoded.unpersist()
            if sorted_parts is not None:
                sorted_parts.unpersist()


_made: dict[str, dict] = {}  # an executor's Python worker's builders for the one-copy job `run` it runs


def _builders_once(run: str, steps: Steps) -> dict:
    """The builders of `steps` for the one-copy job `run`, made by the first of its tasks an
    executor's Python worker runs (a custom builder's code runs here, on the executor): Spark gives
    a worker task after task, and a source's builder lists its folder, or parses its annotations,
    once it is made (20,000 photos: 80 ms), not once a shard. A module's function, which Spark's
    pickling sends by name: a closure's globals would come as copies, a new cache each task."""
    builders = _made.get(run)
    if builders is None:
        _made.clear()
        builders = _made[run] = steps.builders()
    return builders


def _run_keyed(built_on: SparkSession, job: RunJob, plan: KeyedPlan) -> RunResult:
    """One copy (keyed.py): a Spark task per shard of the plan (`Steps.write_keyed`: read, encoded,
    written whole and recorded in the manifest), the outcomes collected in the plan's order. Raises
    OneCopyRefused where a shard's task found the build must take the usual path; returns once every
    attempt of the job's tasks has ended, so none writes after the shards are discarded or published."""
    context = built_on.sparkContext
    steps = Steps.of(job).past_encoding()
    todo = keyed_jobs(plan, job.kept, job.shards)
    check_not_empty(job.spec, plan.counts, [])
    sizes = [(split, size) for split, _, size in readers(plan.sources)]
    written = context.accumulator(0)  # the progress shown (a retried task adds again)
    run = uuid.uuid4().hex

    def per_part(part: Iterable[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
        builders = _builders_once(run, steps)
        for number, shard_job in part:
            try:
                outcome = steps.write_keyed(builders, sizes, shard_job)
            except OSError as error:  # a full disk: the one line of the local runner's, from the executor
                raise DiskFullError.of(error, steps.shards) or error from error
            written.add(len(shard_job[0].items))
            yield number, outcome

    group = f"{APP_NAME} {job.build_id[:12]} one copy {uuid.uuid4().hex[:8]}"
    total = sum(plan.counts.values())
    with _shown(job.progress, "writing", written, total), \
            job_group(context, group, "tfrecord-builder: the shards read, encoded and written"):
        try:
            found = dict(context.parallelize(list(enumerate(todo)), max(1, len(todo))).mapPartitions(per_part).collect())
        except Exception:  # a failed job: its other attempts are being stopped, and may write meanwhile
            every_attempt_ended(context, group, jobs=0)
            raise
    late = every_attempt_ended(context, group, jobs=1)
    result = keyed_result(job.spec, plan, [found[number] for number in range(len(todo))], job.kept)
    if late is not None:
        notices.added(result.notices, {late: 1})
    return result


@contextlib.contextmanager
def _job_errors() -> Iterator[None]:
    """A Spark job's failure as one line: ours, raised in a Python worker (or a bug's), or
    Spark's own (our errors come back as values)."""
    try:
        yield
    except PythonException as error:
        raise ours(error) from None
    except Py4JJavaError as error:
        raise SparkJobError(f"the Spark job failed: {spark_reason(error)}{LOG.where()}") from None


def _tagged(outputs: Any, tag: str) -> Any:
    """The values of a step's outputs (an RDD of (tag, value)) tagged `tag`."""
    return outputs.filter(lambda item: item[0] == tag).map(lambda item: item[1])


def _over_tasks(built_on: SparkSession, job: RunJob, steps: Steps, step: Step) -> Any:
    """An RDD of `step`'s outputs over every read task: a task of files read by an executor (a
    Spark task per read task), or a partition of the Spark table the job reads, where it is
    (spark_frames.py)."""
    source = spark_source(job)
    if source is not None:
        return over_partitions(source, job, steps, step)

    def per_part(part: Iterable[tuple[int, Any]]) -> Iterator[Any]:
        builders = steps.builders()  # a custom builder's code runs here, on the executor
        for _, task in part:
            yield from step(builders, task)
    indexed = built_on.sparkContext.parallelize(list(enumerate(job.tasks)), max(1, len(job.tasks)))
    return indexed.mapPartitions(per_part)


def _classify(steps: Steps) -> Step:
    return lambda builders, task: [steps.classify(builders, task)]


def _count(steps: Steps, stratified: Any) -> Step:
    return lambda builders, task: [steps.count_words(builders, task, stratified)]


def _encode(steps: Steps, stratified: Any, read: Accumulator) -> Step:
    return lambda builders, task: steps.encode(builders, task, stratified,
                                               lambda records, encoded, skipped: read.add(records))


def _write(steps: Steps, item: Any, layout: Any, written: Accumulator) -> None:
    key, parts = item
    try:
        steps.write(key, parts, layout)
    except OSError as error:  # a full disk: the one line of the local runner's, from the executor
        raise DiskFullError.of(error, steps.shards) or error from error
    written.add(sum(piece.records.num_rows for _, piece in parts))


@contextlib.contextmanager
def _shown(progress: Progress | None, phase: str, counter: Accumulator, total: int | None = None) -> Iterator[None]:
    """Shows `counter` (what the tasks have added to it so far) as `phase` of the build's progress
    while the block runs a Spark job: Spark's own progress bars are in its log."""
    if progress is None:
        yield
        return
    stop = threading.Event()

    def show() -> None:
        while not stop.wait(PROGRESS_SECONDS):
            progress(phase, counter.value, total)

    watcher = threading.Thread(target=show, daemon=True)
    watcher.start()
    try:
        yield
    finally:
        stop.set()
        watcher.join()
    progress(phase, counter.value, total)
