"""A build's steps over the partitions of a Spark DataFrame (a Spark table, or a frame given from
Python: builders/spark_table.py), where they are: Spark's `mapInArrow` hands each executor its
partitions as Arrow record batches, and the step (encode, classify, count words) runs there on a
read task of them (`PartitionRows`), one per partition and split, numbered as the driver's plan
numbers them. What comes back is each step's outputs, pickled into one binary column (a task's
records for one bucket, a summary): never the rows. The runner (spark.py) carries those outputs
as it carries the outputs of tasks read from files."""
from __future__ import annotations

import pickle
import warnings
from typing import Any, Callable, Iterable, Iterator

import pyarrow as pa

from ...builders.base import Builder
from ...builders.spark_table import PartitionRows, SparkTableBuilder
from ..plan import ReadTask
from .contract import RunJob
from .steps import Steps

OUTPUT = "value binary"  # each output of a step, pickled
_SCHEMA = pa.schema([("value", pa.binary())])

# a step over one task: its outputs (values that pickle)
Step = Callable[[dict[str | None, Builder], ReadTask], Iterable[Any]]


def spark_source(job: RunJob) -> SparkTableBuilder | None:
    """The Spark table (or DataFrame) the job reads, or None where it reads files."""
    found = [builder for _, builder in job.builders.items() if isinstance(builder, SparkTableBuilder)]
    return found[0] if found else None


def over_partitions(source: SparkTableBuilder, job: RunJob, steps: Steps, step: Step) -> Any:
    """An RDD of `step`'s outputs over every task of the job, each run on the executor holding
    the task's partition. The frame read: its columns the spec reads, with the key column where
    there is one (without, a row's key is the whole row: every column)."""
    frame = source.frame()
    if source.key_column() is not None:
        frame = frame.select(*[f"`{name}`" for name in source.wanted(list(frame.columns))])
    splits = list(job.builders)  # in the plan's order: split s, partition p is task s * partitions + p
    partitions = len(job.tasks) // max(1, len(splits))

    def per_partition(batches: Iterator[Any]) -> Iterator[Any]:
        from pyspark import TaskContext

        context = TaskContext.get()
        assert context is not None  # (run by a Spark task)
        index = context.partitionId()
        builders = steps.builders()  # made here, from the spec: the executor's own
        rows: Iterable[Any] = batches if len(splits) == 1 else list(batches)  # every split reads the partition
        for number, split in enumerate(splits):
            task = ReadTask(number * partitions + index, split, PartitionRows(index, rows))
            for value in step(builders, task):
                yield pa.RecordBatch.from_arrays([pa.array([pickle.dumps(value, pickle.HIGHEST_PROTOCOL)],
                                                           pa.binary())], schema=_SCHEMA)

    with warnings.catch_warnings():  # PySpark 4.3 warns of pandas 3; mapInArrow uses no pandas
        warnings.simplefilter("ignore", FutureWarning)
        mapped = frame.mapInArrow(per_partition, OUTPUT)
    return mapped.rdd.map(lambda row: pickle.loads(row[0]))
