"""The Spark runner: the build's plan as an Apache Spark job, with the local runner's bytes.

    read tasks, a partition each -> each task encoded (`distributed.encode_task`) -+- ((split, bucket), records)
                                                                                  +- the task's summary
    the summaries, collected -> the layout (driver, broadcast)
    records -> groupByKey(split, bucket) -> sorted, cut at shard bounds -> ((split, shard), (bucket, piece))
            -> groupByKey(split, shard) -> our writer on the executor: temporary name, then rename

The steps are build/runners/distributed.py's; Spark only carries their values. The driver holds
task descriptions, summaries and the layout, never records: records cross Spark's shuffles (which
spill to the executors' disks) as a few large elements, a task's for one bucket, a bucket's for
one shard. A task Spark runs again (an executor lost, a speculative copy) gives the same values,
and a shard written twice the same bytes.

The session: the active one of the calling process (`tb.build(..., runner="spark")` inside a
PySpark program), else a new one on `local[workers]`, or on the master `--spark-conf
spark.master=...` names; `--spark-conf KEY=VALUE` options are set on a new session as they are.
"""
from __future__ import annotations

import atexit
import contextlib
import math
import os
import re
import socket
import sys
import tempfile
import threading
import time
import uuid
import warnings
from typing import Any, Iterator

with warnings.catch_warnings():  # PySpark 4.3 warns of pandas 3 on import; the build uses no pandas of Spark's
    warnings.simplefilter("ignore", FutureWarning)
    from py4j.protocol import Py4JJavaError
    from pyspark import Accumulator, StorageLevel
    from pyspark.errors import PythonException
    from pyspark.sql import SparkSession

from ... import errors
from ...builders.sources import add_shipped_sources, builder_sources, check_sources, source_builders
from ...errors import DataError, DiskFullError, SpecError, TFRecordBuilderError, UsageError
from ...features import notices
from ...processes import stderr_into
from ...progress import Progress
from ...spec.model import Spec
from ...write.naming import MARKER_FILE
from .contract import RunJob, RunResult
from .distributed import (by_bucket, classify_task, count_keys, encode_task, joined, layout_of, run_result,
                          sort_bucket, strata_from, unique_keys, write_placed_shard)

TASKS_PER_BUCKET = 4
MIN_BUCKETS = 16
APP_NAME = "tfrecord-builder"
PROGRESS_SECONDS = 0.5  # how often the progress shown is brought up to date
MASTER_TIMEOUT_SECONDS = 5.0  # a master that hasn't accepted a connection by then is refused
# how long the driver waits, at most, for the attempts of a job's tasks that lost to end (Spark
# stops one in seconds; an executor lost is noticed within spark.network.timeout, 120 s)
ATTEMPTS_SECONDS = 300.0


class SparkJobError(TFRecordBuilderError, RuntimeError):
    """The Spark job failed for a reason of Spark's (executors lost for good, memory, a master gone)."""

    exit_code = 1


class SparkRunner:
    """The Runner (build/runners/contract.py) of an Apache Spark job. It keeps no checkpoint (a
    resumed build keeps the finished shards), and for an output in a bucket writes the shards
    there itself: a cluster's executors are other machines."""

    name = "spark"
    takes_options = True
    checkpoints = False
    shards_to_bucket = True

    def check(self, spec: Spec, folder: str, options: list[str], workers: int) -> None:
        """Raises UsageError for options that aren't KEY=VALUE, and for a master (`spark://`) that
        doesn't answer, which Spark itself would retry for a minute before it gives up."""
        master = _conf(options).get("spark.master", "")
        if master.startswith("spark://") and SparkSession.getActiveSession() is None:
            _check_master(master)

    def run(self, job: RunJob) -> RunResult:
        session = _session(job.options, job.workers)
        _check_visible(session.sparkContext, job.spec, job)
        try:
            return self._run(session, job)
        except PythonException as error:  # raised in a Python worker: ours (one line), or a bug's
            raise _ours(error) from None
        except Py4JJavaError as error:  # our errors came back as values: this one is Spark's
            raise SparkJobError(f"the Spark job failed: {_spark_reason(error)}{_LOG.where()}") from None

    def _run(self, session: SparkSession, job: RunJob) -> RunResult:
        spec, tasks, shards = job.spec, job.tasks, job.shards
        context = session.sparkContext
        sources = builder_sources(spec)
        keep = job.keep
        buckets = max(math.ceil(len(tasks) / TASKS_PER_BUCKET), min(len(tasks), MIN_BUCKETS))
        bits = max(0, math.ceil(math.log2(buckets))) if spec.output.shuffle else 0
        indexed = context.parallelize(list(enumerate(tasks)), max(1, len(tasks)))
        strata = None
        if spec.stratify is not None:
            classes = indexed.mapPartitions(lambda part: _classify(spec, sources, part)).collect()
            strata, error = strata_from(classes, spec)
            if error is not None:
                raise DataError(error)
        read, written = context.accumulator(0), context.accumulator(0)  # the progress shown (a retried task adds again)
        encoded = indexed.mapPartitions(lambda part: _encode(spec, sources, bits, strata, keep, read, part))
        encoded.persist(StorageLevel.MEMORY_AND_DISK)  # two passes over it: the summaries, then the records
        sorted_parts = None
        try:
            with _shown(job.progress, "encoding", read):
                summaries = encoded.filter(lambda item: item[0] == "summary").map(lambda item: item[1]).collect()
            layout, summary = layout_of(summaries, spec)
            if layout.failed:
                raise DataError(summary["error"])
            shared = context.broadcast(layout)
            records = encoded.filter(lambda item: item[0] == "records").map(lambda item: item[1])
            buckets_count = max(1, sum(len(found) for found in layout.buckets.values()))
            sorted_parts = (records.groupByKey(buckets_count)
                            .flatMap(lambda item: _sort(spec, item, shared.value)))
            sorted_parts.persist(StorageLevel.MEMORY_AND_DISK)
            problems: list[Any] = []
            distinct: dict[str, int] = {}
            for kind, value in sorted_parts.filter(lambda item: item[0] in ("problem", "distinct")).collect():
                if kind == "problem":
                    problems.append(value)
                else:
                    distinct[value[0]] = distinct.get(value[0], 0) + value[1]
            if not spec.output.shuffle:  # keys counted, and keys of their own checked, across buckets
                counted = (sorted_parts.filter(lambda item: item[0] == "keys").map(lambda item: item[1])
                           .groupByKey().map(lambda item: (item[0][0], count_keys(item[1]))).collect())
                for split, count in counted:
                    distinct[split] = distinct.get(split, 0) + count
                own_keys = encoded.filter(lambda item: item[0] == "key").map(lambda item: item[1]).groupByKey()
                problems += [found for found in own_keys.map(lambda item: unique_keys(item[1])).collect() if found]
            staging, build_id, kept = shards, job.build_id, job.kept
            group = f"{APP_NAME} {build_id[:12]} writing {uuid.uuid4().hex[:8]}"
            with _shown(job.progress, "writing", written, sum(int(starts[-1]) for starts in layout.shards.values())), \
                    _job_group(context, group, "tfrecord-builder: the shards written"):
                try:
                    (sorted_parts.filter(lambda item: item[0] == "part").map(lambda item: item[1])
                     .groupByKey(max(1, sum(len(starts) - 1 for starts in layout.shards.values())))
                     .foreach(lambda item: _write(spec, staging, build_id, kept, item, shared.value, written)))
                except Exception:  # a failed job: its other attempts are being stopped, and may write meanwhile
                    _every_attempt_ended(context, group, jobs=0)  # (if its job was started at all)
                    raise
            late = _every_attempt_ended(context, group, jobs=1)
            if late is not None:
                notices.added(summary["notices"], {late: 1})
            return run_result(spec, shards, job.build_id, summary, problems, distinct)
        finally:  # a calling program's session lives on: leave none of the build's data cached in it
            encoded.unpersist()
            if sorted_parts is not None:
                sorted_parts.unpersist()


def _conf(options: list[str]) -> dict[str, str]:
    """`--spark-conf KEY=VALUE` options as a dict; UsageError for one without `=`."""
    conf = {}
    for option in options:
        key, equals, value = option.partition("=")
        if not equals or not key.strip():
            raise UsageError(f"--spark-conf: expected KEY=VALUE (e.g. spark.master=spark://host:7077), received {option!r}")
        conf[key.strip()] = value.strip()
    return conf


def _check_master(master: str) -> None:
    """Raises UsageError unless one of the masters `spark://host:port[,host:port]` accepts a connection."""
    reasons = []
    for place in master.removeprefix("spark://").split(","):
        host, _, port = place.rpartition(":")
        try:
            socket.create_connection((host, int(port)), timeout=MASTER_TIMEOUT_SECONDS).close()
            return
        except ValueError:
            raise UsageError(f"--spark-conf spark.master={master}: expected spark://HOST:PORT") from None
        except OSError as error:
            reasons.append(f"{place}: {error.strerror or error}")
    raise UsageError(f"--spark-conf spark.master={master}: no Spark master answers ({'; '.join(reasons)}); "
                     "start it, or name the host and port it listens on (7077 unless set)")


class _Log:
    """Where the JVM of a session this process starts writes its standard error (Spark's INFO and
    WARN lines, its console progress): a file of the temporary directory, named in an error of
    Spark's and removed at exit otherwise."""

    path: str | None = None
    keep = False

    def open(self) -> Any:
        file = tempfile.NamedTemporaryFile(prefix="tfrecord-builder-spark-", suffix=".log", delete=False)
        self.path = file.name
        atexit.register(self._remove)
        return file

    def where(self) -> str:
        if self.path is None:
            return ""
        self.keep = True
        return f" (Spark's log: {self.path})"

    def _remove(self) -> None:
        if self.path is not None and not self.keep and os.path.exists(self.path):
            os.remove(self.path)


_LOG = _Log()


def _session(options: list[str], workers: int) -> SparkSession:
    """The calling program's active session, else a new one (on `local[workers]` unless the
    options name a master), whose JVM logs into `_LOG` rather than over the build's lines."""
    active = SparkSession.getActiveSession()
    if active is not None:
        if type(active).__module__.startswith("pyspark.sql.connect"):
            raise UsageError("the active Spark session is a Spark Connect one (Databricks serverless or a shared "
                             "access mode cluster, `spark.remote`), which has no RDD API; the Spark runner needs a "
                             "classic session: a dedicated (single user) cluster, or `spark-submit`")
        return active
    conf = {"spark.ui.showConsoleProgress": "false", **_conf(options)}
    # the executors' Python: this one (with the package and its dependencies) unless told otherwise
    # (PySpark reads PYSPARK_PYTHON as it makes the context; spark.pyspark.python is spark-submit's)
    python = conf.pop("spark.pyspark.python", None) or os.environ.get("PYSPARK_PYTHON") or sys.executable
    os.environ["PYSPARK_PYTHON"] = python
    conf["spark.pyspark.python"] = python
    builder = SparkSession.builder.appName(APP_NAME).master(conf.pop("spark.master", f"local[{max(1, workers)}]"))
    for key, value in conf.items():
        builder = builder.config(key, value)
    with _LOG.open() as log, stderr_into(log):  # the JVM starts now, and keeps this standard error
        return builder.getOrCreate()


def _check_visible(context: Any, spec: Spec, job: RunJob) -> None:
    """Raises UsageError where some executor doesn't see what it must: the sources (read there),
    and the staging folder where the shards go to one (not a bucket). On a cluster of other
    machines, a path of the driver's is neither. Looked for: the sources, the staging folder's marker."""
    marker = os.path.join(job.staging, MARKER_FILE) if job.shards == job.staging else None
    probes = max(2, context.defaultParallelism)
    unseen = set(context.parallelize(range(probes), probes).map(lambda _: _unseen(spec, marker))
                 .filter(lambda found: found is not None).collect())
    hosts = ", ".join(sorted({host for _, host, _ in unseen}))
    for kind, _, said in sorted(unseen):
        if kind == "source":
            raise UsageError(f"{said} on Spark's executors (on {hosts}), which read the sources themselves; give a "
                             "path every executor sees (the same on each) or an object-store URL")
        folder = os.path.dirname(job.staging)
        raise UsageError(f"{folder}: Spark's executors (on {hosts}) can't see this folder of the driver's machine; "
                         "build into a folder every executor shares (the same path on each), or into an object "
                         "store (s3://..., gs://...)")


def _unseen(spec: Spec, marker: str | None) -> tuple[str, str, str] | None:
    """On an executor: what of the build it doesn't see, (kind, host, what was said), or None."""
    host = socket.gethostname()
    try:
        check_sources(spec)
    except SpecError as error:
        return "source", host, str(error)
    if marker is not None and not os.path.exists(marker):
        return "folder", host, marker
    return None


@contextlib.contextmanager
def _job_group(context: Any, group: str, description: str) -> Iterator[None]:
    """The block's Spark jobs in the job group `group`; a calling program's own group after it."""
    saved = {name: context.getLocalProperty(name) for name in _GROUP_PROPERTIES}
    context.setJobGroup(group, description)
    try:
        yield
    finally:
        for name, value in saved.items():
            context.setLocalProperty(name, value)


_GROUP_PROPERTIES = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")


def _every_attempt_ended(context: Any, group: str, jobs: int) -> str | None:
    """Waits until every attempt of the tasks of `group`'s jobs (`jobs` of them, at least, were
    run) has ended, not only the attempt that won each task; what to say where one still runs
    after ATTEMPTS_SECONDS, else None.

    A job ends at the first attempt of each task to succeed, while the copies that lost
    (speculation's, or a task run again after its executor was lost) run on until Spark stops
    them (a Python worker only after its task poller's 2 s and spark.python.task.killTimeout):
    one may be writing its shard and its record in the manifest. Written after the driver has
    published the dataset and cleared the staging, that would be an object left in the user's
    bucket, or a file moved into the finished dataset. Spark ends an attempt of a Python task
    only once its Python worker has answered or gone (its reader waits for one or the other),
    so its writes are over then. The status store learns of jobs and attempts from Spark's
    listener bus, later than the job returns (later still on a busy machine), but in order: once
    it has the jobs' ends it has every attempt's start. A job or stage gone from it (there are too
    many to keep) ended long ago."""
    tracker = context.statusTracker()
    deadline = time.monotonic() + ATTEMPTS_SECONDS
    while time.monotonic() < deadline:
        found = [tracker.getJobInfo(job) for job in tracker.getJobIdsForGroup(group)]
        if len(found) >= jobs and all(job is None or job.status in ("SUCCEEDED", "FAILED") for job in found):
            stages = [tracker.getStageInfo(stage) for job in found if job is not None for stage in job.stageIds]
            if all(stage is None or stage.numActiveTasks == 0 for stage in stages):
                return None
        time.sleep(0.05)
    return (f"the Spark runner: an attempt of a task that lost to another still ran {ATTEMPTS_SECONDS:g} s after its "
            "job ended, and may write into the build's staging folder after the build")


def _ours(error: Exception) -> Exception:
    """The error a Python worker raised, as its own class where it is one of ours (SpecError,
    DataError, ...), else as SparkJobError; either way one line."""
    reason = _spark_reason(error)
    name, _, message = reason.partition(": ")
    found = getattr(errors, name.rpartition(".")[2], None) if name.startswith("tfrecord_builder.errors.") else None
    if isinstance(found, type) and issubclass(found, TFRecordBuilderError):
        return found(message)
    return SparkJobError(f"the Spark job failed: {reason}{_LOG.where()}")


def _spark_reason(error: Exception) -> str:
    """The first line of what failed a Spark job: a Python worker's exception where there is one."""
    java = getattr(error, "java_exception", None)
    text = str(java.toString()) if java is not None and hasattr(java, "toString") else str(error)
    if "Traceback (most recent call last)" in text:
        trace = text[text.index("Traceback (most recent call last)"):].split("\n\tat ")[0]
        lines = [line for line in trace.splitlines() if line.strip() and not line.startswith((" ", "\t"))]
        if len(lines) > 1:
            return lines[-1]
    first = text.strip().splitlines()[0] if text.strip() else type(error).__name__
    return re.sub(r"^org\.apache\.spark\.SparkException: ", "", first)


def _builders(spec: Spec, sources: dict[str, str]) -> dict:
    add_shipped_sources(sources)
    return dict(source_builders(spec))  # a custom builder's code runs here, on the executor


def _classify(spec: Spec, sources: dict[str, str], part: Iterator[tuple[int, Any]]) -> Iterator[Any]:
    builders = _builders(spec, sources)
    for _, task in part:
        yield classify_task(spec, builders[task.split], task)


def _encode(spec: Spec, sources: dict[str, str], bits: int, strata: Any, keep: Any, read: Accumulator,
            part: Iterator[tuple[int, Any]]) -> Iterator[tuple[str, Any]]:
    builders = _builders(spec, sources)
    for _, task in part:
        summary, held, keys = encode_task(spec, builders[task.split], task, strata, keep)
        read.add(summary.records)
        for entry in keys:
            yield "key", entry
        for name, piece in held.items():
            for bucket, records in by_bucket(spec, bits, task.index, piece, summary.buckets.setdefault(name, {})):
                yield "records", ((name, bucket), records)
        yield "summary", summary


def _sort(spec: Spec, item: tuple[tuple[str, int], Any], layout: Any) -> Iterator[tuple[str, Any]]:
    (split, bucket), pieces = item
    result = sort_bucket(spec, split, bucket, joined(list(pieces)), layout)
    for key_range, keys in result.key_ranges:
        yield "keys", ((split, key_range), keys)
    if result.distinct is not None:
        yield "distinct", (split, result.distinct)
    if result.problem is not None:
        yield "problem", result.problem
    for shard, records in result.parts:
        yield "part", ((split, shard), (bucket, records))


def _write(spec: Spec, staging: str, build_id: str, kept: dict, item: Any, layout: Any, written: Accumulator) -> None:
    (split, index), parts = item
    pieces = [records for _, records in sorted(parts, key=lambda part: part[0])]  # by bucket
    try:
        write_placed_shard(spec, staging, build_id, kept, split, index,
                           [(lambda piece=piece: piece) for piece in pieces], layout)
    except OSError as error:  # a full disk: the one line of the local runner's, from the executor
        raise DiskFullError.of(error, staging) or error from error
    written.add(sum(piece.records.num_rows for piece in pieces))


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

