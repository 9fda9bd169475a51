"""The jobs bench/engines.py times in a process of their own: our Spark runner, the hand-written
PySpark job and Ray Data, each after its engine has started, so start-up and job are timed apart.

    python bench/engines_jobs.py JOB KIND SOURCE OUTPUT SHARDS WORKERS [SPEC]

JOB: spark-ours (`tb.build(SPEC, runner="spark")` in the session started here), spark-hand
(`spark.read` + `mapPartitions` building `tf.train.Example`s, a `tf.io.TFRecordWriter` per
partition) or ray (`ray.data.read_csv` / `read_binary_files` + `write_tfrecords`). KIND: table
(bench/tabular.py's CSV) or photos (bench/images.py's class folders). Prints one JSON line:
{"startup": seconds, "job": seconds}.
"""
from __future__ import annotations

import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

INT_COLUMNS = ["id", "age", "count", "category", "big", "delta"]  # bench/tabular.py's columns
FLOAT_COLUMNS = ["price", "score", "ratio", "lat", "lon", "noise"]
STRING_COLUMNS = ["city", "color", "code"]
LIST_COLUMN = "tokens"


def spark_session(workers: int, extra: dict[str, str] | None = None):
    """A session on local[WORKERS], the executors' Python this one (as our runner sets it)."""
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    builder = (SparkSession.builder.appName("engines-bench").master(f"local[{workers}]")
               .config("spark.pyspark.python", sys.executable).config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false"))
    for key, value in (extra or {}).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def row_examples(partition_index: int, rows, output: str, shards: int):
    """A partition's rows as `tf.train.Example`s, written to the partition's own file: what a
    data team writes (TensorFlow in the executor, one TFRecordWriter per partition)."""
    import tensorflow as tf

    path = os.path.join(output, f"part-{partition_index:05d}-of-{shards:05d}.tfrecord")
    count = 0
    with tf.io.TFRecordWriter(path) as writer:
        for row in rows:
            feature = {name: tf.train.Feature(int64_list=tf.train.Int64List(value=[row[name]])) for name in INT_COLUMNS}
            feature.update({name: tf.train.Feature(float_list=tf.train.FloatList(value=[row[name]]))
                            for name in FLOAT_COLUMNS})
            feature.update({name: tf.train.Feature(bytes_list=tf.train.BytesList(value=[(row[name] or "").encode()]))
                            for name in STRING_COLUMNS})
            feature[LIST_COLUMN] = tf.train.Feature(int64_list=tf.train.Int64List(
                value=[int(token) for token in (row[LIST_COLUMN] or "").split()]))
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
            count += 1
    yield count


def photo_examples(partition_index: int, rows, output: str, shards: int):
    """A partition's photos as `tf.train.Example`s: the file's bytes and the class folder's name."""
    import tensorflow as tf

    path = os.path.join(output, f"part-{partition_index:05d}-of-{shards:05d}.tfrecord")
    count = 0
    with tf.io.TFRecordWriter(path) as writer:
        for row in rows:
            label = os.path.basename(os.path.dirname(row["path"]))
            feature = {"image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[bytes(row["content"])])),
                       "label": tf.train.Feature(bytes_list=tf.train.BytesList(value=[label.encode()]))}
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
            count += 1
    yield count


def spark_hand(kind: str, source: str, output: str, shards: int, workers: int) -> dict[str, float]:
    """The hand-written PySpark job. The source is read in SHARDS partitions without a shuffle
    (spark.sql.files.maxPartitionBytes a SHARDS-th of its size, then coalesce): one file per
    partition, as many as our build's shards."""
    started = time.perf_counter()
    size = os.path.getsize(source) if kind == "table" else sum(
        entry.stat().st_size for folder in os.scandir(source) for entry in os.scandir(folder.path))
    session = spark_session(workers, {"spark.sql.files.maxPartitionBytes": str(math.ceil(size / shards) + 1),
                                      "spark.sql.files.openCostInBytes": "0"})
    session.range(1).count()  # the JVM and the first job's machinery up
    startup = time.perf_counter() - started
    started = time.perf_counter()
    os.makedirs(output, exist_ok=True)
    if kind == "table":
        schema = ", ".join([f"{name} LONG" for name in INT_COLUMNS] + [f"{name} DOUBLE" for name in FLOAT_COLUMNS]
                           + [f"{name} STRING" for name in STRING_COLUMNS + [LIST_COLUMN]])
        frame = session.read.csv(source, header=True, schema=schema)
        build = row_examples
    else:
        frame = (session.read.format("binaryFile").option("pathGlobFilter", "*.jpg")
                 .option("recursiveFileLookup", "true").load(source).select("path", "content"))
        build = photo_examples
    counts = (frame.coalesce(shards).rdd
              .mapPartitionsWithIndex(lambda index, rows: build(index, rows, output, shards)).collect())
    job = time.perf_counter() - started
    session.stop()
    return {"startup": startup, "job": job, "files": len(counts), "records": sum(counts)}


def spark_ours(spec: str, output: str, workers: int) -> dict[str, float]:
    """Our Spark runner, `tb.build(..., runner="spark")`, in a session started here (as a PySpark
    program that calls it would)."""
    started = time.perf_counter()
    session = spark_session(workers)
    session.range(1).count()
    startup = time.perf_counter() - started
    import tfrecord_builder as tb

    started = time.perf_counter()
    info = tb.build(spec, output=output, overwrite=True, workers=workers, progress=False, runner="spark")
    job = time.perf_counter() - started
    session.stop()
    return {"startup": startup, "job": job, "records": sum(split.num_examples for split in info.splits.values())}


def ray_job(kind: str, source: str, output: str, shards: int, workers: int) -> dict[str, float]:
    """Ray Data: read, (for photos: the label from the folder), repartition to SHARDS blocks,
    write_tfrecords (a file per block)."""
    import ray

    started = time.perf_counter()
    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    ray.data.DataContext.get_current().enable_progress_bars = False
    ray.data.range(1).materialize()
    startup = time.perf_counter() - started
    started = time.perf_counter()
    if kind == "table":
        data = ray.data.read_csv(source)
    else:
        def labelled(batch):
            batch["label"] = [os.path.basename(os.path.dirname(path)).encode() for path in batch.pop("path")]
            return batch

        data = (ray.data.read_binary_files(source, include_paths=True, file_extensions=["jpg"])
                .map_batches(labelled, batch_format="numpy"))
    data.repartition(shards).write_tfrecords(output)
    job = time.perf_counter() - started
    ray.shutdown()
    return {"startup": startup, "job": job}


def main(argv: list[str]) -> None:
    job, kind, source, output, shards, workers = argv[:6]
    if job == "spark-hand":
        result = spark_hand(kind, source, output, int(shards), int(workers))
    elif job == "spark-ours":
        result = spark_ours(argv[6], output, int(workers))
    elif job == "ray":
        result = ray_job(kind, source, output, int(shards), int(workers))
    else:
        raise SystemExit(f"unknown job {job!r}: spark-hand, spark-ours or ray")
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
