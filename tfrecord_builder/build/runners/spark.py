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

import math
import os
import sys
from typing import Any, Iterator

from pyspark import StorageLevel
from pyspark.sql import SparkSession

from ...builders.sources import add_shipped_sources, builder_sources, source_builders
from ...errors import DataError, UsageError
from ...spec.model import Spec
from .contract import RunJob, RunResult
from .distributed import (by_bucket, classify_task, count_keys, encode_task, joined, layout_of, run_result,
                          sort_bucket, strata_from, unique_keys, write_placed_shard)

TASKS_PER_BUCKET = 4
MIN_BUCKETS = 16
APP_NAME = "tfrecord-builder"


class SparkRunner:
    """The Runner (build/runners/contract.py) of an Apache Spark job. It keeps no checkpoint (a
    resumed build keeps the finished shards), and for an output in a bucket writes the shards
    there itself: a cluster's executors are other machines."""

    name = "spark"
    takes_options = True
    checkpoints = False
    shards_to_bucket = True

    def check(self, spec: Spec, folder: str, options: list[str], workers: int) -> None:
        """Raises UsageError for options that aren't KEY=VALUE."""
        _conf(options)

    def run(self, job: RunJob) -> RunResult:
        spec, tasks, shards = job.spec, job.tasks, job.shards
        session = _session(job.options, job.workers)
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
        encoded = indexed.mapPartitions(lambda part: _encode(spec, sources, bits, strata, keep, part))
        encoded.persist(StorageLevel.DISK_ONLY)  # two passes over it: the summaries, then the records
        sorted_parts = None
        try:
            summaries = encoded.filter(lambda item: item[0] == "summary").map(lambda item: item[1]).collect()
            layout, summary = layout_of(summaries, spec)
            if layout.failed:
                raise DataError(summary["error"])
            shared = context.broadcast(layout)
            records = encoded.filter(lambda item: item[0] == "records").map(lambda item: item[1])
            buckets_count = max(1, sum(len(found) for found in layout.buckets.values()))
            sorted_parts = (records.groupByKey(buckets_count)
                            .flatMap(lambda item: _sort(spec, item, shared.value)))
            sorted_parts.persist(StorageLevel.DISK_ONLY)
            problems = sorted_parts.filter(lambda item: item[0] == "problem").map(lambda item: item[1]).collect()
            distinct: dict[str, int] = {}
            for split, count in sorted_parts.filter(lambda item: item[0] == "distinct").map(lambda item: item[1]).collect():
                distinct[split] = distinct.get(split, 0) + count
            counted = (sorted_parts.filter(lambda item: item[0] == "keys").map(lambda item: item[1])
                       .groupByKey().map(lambda item: (item[0][0], count_keys(item[1]))).collect())
            for split, count in counted:
                distinct[split] = distinct.get(split, 0) + count
            own_keys = encoded.filter(lambda item: item[0] == "key").map(lambda item: item[1]).groupByKey()
            problems += [found for found in own_keys.map(lambda item: unique_keys(item[1])).collect() if found]
            staging, build_id, kept = shards, job.build_id, job.kept
            (sorted_parts.filter(lambda item: item[0] == "part").map(lambda item: item[1])
             .groupByKey(max(1, sum(len(starts) - 1 for starts in layout.shards.values())))
             .foreach(lambda item: _write(spec, staging, build_id, kept, item, shared.value)))
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


def _session(options: list[str], workers: int) -> SparkSession:
    """The calling program's active session, else a new one (on `local[workers]` unless the
    options name a master)."""
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    conf = _conf(options)
    # the executors' Python: this one (with the package and its dependencies) unless told otherwise
    # (PySpark reads PYSPARK_PYTHON as it makes the context; spark.pyspark.python is spark-submit's)
    python = conf.pop("spark.pyspark.python", None) or os.environ.get("PYSPARK_PYTHON") or sys.executable
    os.environ["PYSPARK_PYTHON"] = python
    conf["spark.pyspark.python"] = python
    builder = SparkSession.builder.appName(APP_NAME).master(conf.pop("spark.master", f"local[{max(1, workers)}]"))
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def _builders(spec: Spec, sources: dict[str, str]) -> dict:
    add_shipped_sources(sources)
    return dict(source_builders(spec))  # a custom builder's code runs here, on the executor


def _classify(spec: Spec, sources: dict[str, str], part: Iterator[tuple[int, Any]]) -> Iterator[Any]:
    builders = _builders(spec, sources)
    for _, task in part:
        yield classify_task(spec, builders[task.split], task)


def _encode(spec: Spec, sources: dict[str, str], bits: int, strata: Any, keep: Any,
            part: Iterator[tuple[int, Any]]) -> Iterator[tuple[str, Any]]:
    builders = _builders(spec, sources)
    for _, task in part:
        summary, held, keys = encode_task(spec, builders[task.split], task, strata, keep)
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


def _write(spec: Spec, staging: str, build_id: str, kept: dict, item: Any, layout: Any) -> None:
    (split, index), parts = item
    pieces = [records for _, records in sorted(parts, key=lambda part: part[0])]  # by bucket
    write_placed_shard(spec, staging, build_id, kept, split, index,
                       [(lambda piece=piece: piece) for piece in pieces], layout)

