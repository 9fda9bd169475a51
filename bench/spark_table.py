"""A Spark table built into TFRecords two ways in one run: ours (`builder: spark_table` on the Spark
runner) against the hand-written spark-tfrecord-style PySpark job.

    .venv/bin/python bench/spark_table.py [--rows 1000000] [--partitions 4] [--workers 2] [--rounds 2]

1. The data: a Spark table `bench.events` (saveAsTable, Parquet, in a warehouse under
   bench/out/spark_table/) of --rows rows in --partitions files, 12 columns: three ids (long),
   three counts (int), three doubles, a text of 3-6 words, a label (one of 5 names) and an array
   of 8 floats. Written once per run, before anything is timed. Spark reads the files as its own
   partitions (2 at 1,000,000 rows on 2 cores: its split planning), which the hand job's files follow.
2. The cases, in one session on local[WORKERS] (as bench/engines.py's Spark cases), interleaved
   over --rounds rounds, the best counting:
   - ours: `tb.build(spec, runner="spark")` with `source: {builder: spark_table, table:
     bench.events, key: id}`, --partitions shards;
   - hand-written: what users write without the spark-tfrecord jar (which needs Maven):
     `spark.table(...).rdd.mapPartitionsWithIndex`, a `tf.train.Example` per row built in Python
     (the label mapped to its index), a `tf.io.TFRecordWriter` per partition: a file each.
   Both give --rows records (asserted). Ours also takes the table's snapshot (a pass of Spark over
   the key column: the row count and an order-free hash), timed apart here as `snapshot pass`.
3. Prints the table (seconds, rows/s, hand / ours), what each output holds (checked on the files:
   same bytes in two rounds, records, statistics, index and checksum files, metadata) and the
   load average; writes bench/out/spark_table.json.
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import shutil
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from harness import Target, machine, machine_line, markdown_table, run_info, targets_table  # noqa: E402

TABLE = "bench.events"
LABELS = ["click", "view", "buy", "share", "skip"]
WORDS = ["red", "green", "blue", "fast", "slow", "small", "large", "river", "stone", "cloud", "light", "dark",
         "north", "south", "paper", "glass"]
LONGS, INTS, DOUBLES = ["id", "user_id", "session_id"], ["clicks", "views", "age"], ["score", "price", "ratio"]
EMBEDDING = 8
OURS, HAND = "ours: builder spark_table, Spark runner", "hand-written: mapPartitions + TFRecordWriter"


def session(workers: int, warehouse: str, memory: str) -> Any:
    """A session on local[WORKERS] (its executors in the driver's JVM, of heap `memory`), its
    warehouse `warehouse`, the executors' Python this one."""
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # the executors' TensorFlow: no start-up chatter
    os.environ["PYTHONPATH"] = os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    built = (SparkSession.builder.appName("spark-table-bench").master(f"local[{workers}]")
             .config("spark.pyspark.python", sys.executable).config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").config("spark.sql.warehouse.dir", warehouse)
             .config("spark.sql.session.timeZone", "UTC").config("spark.driver.memory", memory).getOrCreate())
    built.sparkContext.setLogLevel("ERROR")
    return built


def write_table(spark: Any, rows: int, partitions: int, warehouse: str) -> None:
    """`bench.events`: `rows` deterministic rows in `partitions` Parquet files."""
    shutil.rmtree(os.path.join(warehouse, "bench.db"), ignore_errors=True)
    spark.sql("CREATE DATABASE IF NOT EXISTS bench")
    spark.sql(f"DROP TABLE IF EXISTS {TABLE}")
    words = ", ".join(f"'{word}'" for word in WORDS)
    labels = ", ".join(f"'{label}'" for label in LABELS)
    embedding = ", ".join(f"CAST(((id * {31 + k}) % 1000) / 1000.0 AS FLOAT)" for k in range(EMBEDDING))
    spark.sql(f"""
        SELECT id, id * 7919 % 1000003 AS user_id, id DIV 17 AS session_id,
               CAST(id % 97 AS INT) AS clicks, CAST(id * 13 % 10007 AS INT) AS views, CAST(18 + id % 60 AS INT) AS age,
               (id % 1000) / 7.0D AS score, (id * 37 % 100000) / 100.0D AS price, (id % 89) / 89.0D AS ratio,
               array_join(slice(transform(sequence(0, 5),
                                          k -> element_at(array({words}), CAST((id * (k + 3) + k) % 16 + 1 AS INT))),
                                1, CAST(3 + id % 4 AS INT)), ' ') AS text,
               element_at(array({labels}), CAST(id * 31 % 5 + 1 AS INT)) AS label,
               array({embedding}) AS embedding
        FROM range({rows})""").repartition(partitions).write.format("parquet").saveAsTable(TABLE)


def spec_text(shards: int) -> str:
    features = ([f"  {name}: {{dtype: int64}}" for name in LONGS + INTS]
                + [f"  {name}: {{dtype: float64}}" for name in DOUBLES]
                + ["  text: {dtype: string}", f"  label: {{type: class_label, names: [{', '.join(LABELS)}]}}",
                   f"  embedding: {{dtype: float32, shape: [{EMBEDDING}]}}"])
    return "\n".join(["name: events", f"source: {{builder: spark_table, table: {TABLE}, key: id}}", "features:",
                      *features, f"output: {{shards: {shards}}}", ""])


def hand_partition(index: int, rows: Any, output: str) -> Any:
    """A partition's rows as `tf.train.Example`s in its own file, as a data team writes them."""
    import tensorflow as tf

    label_ids = {label: number for number, label in enumerate(LABELS)}
    count = 0
    with tf.io.TFRecordWriter(os.path.join(output, f"part-{index:05d}.tfrecord")) as writer:
        for row in rows:
            feature = {name: tf.train.Feature(int64_list=tf.train.Int64List(value=[row[name]])) for name in LONGS + INTS}
            feature.update({name: tf.train.Feature(float_list=tf.train.FloatList(value=[row[name]])) for name in DOUBLES})
            feature["text"] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[row["text"].encode()]))
            feature["label"] = tf.train.Feature(int64_list=tf.train.Int64List(value=[label_ids[row["label"]]]))
            feature["embedding"] = tf.train.Feature(float_list=tf.train.FloatList(value=row["embedding"]))
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
            count += 1
    yield count


def run_hand(spark: Any, output: str) -> int:
    os.makedirs(output)
    counts = spark.table(TABLE).rdd.mapPartitionsWithIndex(lambda index, rows: hand_partition(index, rows, output))
    return sum(counts.collect())


def run_ours(spec: str, output: str, workers: int) -> int:
    import tfrecord_builder as tb

    info = tb.build(spec, output=output, overwrite=True, workers=workers, progress=False, runner="spark")
    return sum(split.num_examples for split in info.splits.values())


def snapshot_pass(spark: Any) -> float:
    """What ours reads before the job to record the table's snapshot (spark_table.py `snapshot`)."""
    from pyspark.sql import functions

    started = time.perf_counter()
    hashed = functions.xxhash64(functions.col("id"))
    spark.table(TABLE).select(functions.count(functions.lit(1)), functions.sum(hashed.cast("decimal(38,0)")),
                              functions.bit_xor(hashed)).first()
    return time.perf_counter() - started


def record_files(folder: str) -> list[str]:
    return sorted(path for path in glob.glob(os.path.join(folder, "**", "*.tfrecord*"), recursive=True)
                  if os.path.isfile(path))


def digests(folder: str) -> list[str]:
    return [hashlib.sha256(open(path, "rb").read()).hexdigest() for path in record_files(folder)]


def holds(folders: list[str]) -> dict[str, Any]:
    """What an output holds, checked on its files: same bytes in every round, the record files,
    the other files (metadata, statistics, index and checksum files, the reader module)."""
    last = folders[-1]
    files = record_files(last)
    others = sorted(os.path.relpath(path, last) for path in glob.glob(os.path.join(last, "**", "*"), recursive=True)
                    if os.path.isfile(path) and path not in files)
    statistics = False
    for path in glob.glob(os.path.join(last, "**", "tfrecord_builder.json"), recursive=True):
        with open(path, encoding="utf-8") as file:
            ours = json.load(file)
        statistics = any("statistics" in split for split in ours.get("splits", {}).values()) or "statistics" in ours
    return {"deterministic": len({tuple(digests(folder)) for folder in folders}) == 1 if len(folders) > 1 else None,
            "record_files": len(files), "record_bytes": sum(os.path.getsize(path) for path in files),
            "statistics": statistics, "other_files": [os.path.basename(name) for name in others]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=4, help="the table's files, ours' shards (default 4)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2, help="runs per case, interleaved; the best counts (default 2)")
    parser.add_argument("--driver-memory", default="4g",
                        help="the JVM's heap (local mode: the executors' too; default 4g: 2g ran out in ours' "
                             "shuffle at 1,000,000 rows, see bench/README.md)")
    parser.add_argument("--out", default=os.path.join(HERE, "out"))
    args = parser.parse_args(argv)
    root = os.path.join(args.out, "spark_table")
    warehouse = os.path.join(root, "warehouse")
    os.makedirs(root, exist_ok=True)
    load_before = [round(load, 2) for load in os.getloadavg()]
    import tensorflow  # noqa: F401  (imported before anything is timed, as the other benchmarks do)

    spark = session(args.workers, warehouse, args.driver_memory)
    started = time.perf_counter()
    write_table(spark, args.rows, args.partitions, warehouse)
    print(f"table {TABLE}: {args.rows:,} rows in {args.partitions} Parquet files, written in "
          f"{time.perf_counter() - started:.1f} s", flush=True)
    partitions = spark.table(TABLE).rdd.getNumPartitions()  # Spark's split of the files: the hand job's files
    spec = os.path.join(root, "events.yaml")
    with open(spec, "w", encoding="utf-8") as file:
        file.write(spec_text(args.partitions))
    times: dict[str, list[float]] = {OURS: [], HAND: []}
    outputs: dict[str, list[str]] = {OURS: [], HAND: []}
    snapshots: list[float] = []
    for round_number in range(args.rounds):
        for case in (OURS, HAND):
            folder = os.path.join(root, "ours" if case == OURS else "hand", f"round-{round_number}")
            shutil.rmtree(folder, ignore_errors=True)
            started = time.perf_counter()
            records = run_ours(spec, folder, args.workers) if case == OURS else run_hand(spark, folder)
            times[case].append(time.perf_counter() - started)
            outputs[case].append(folder)
            if records != args.rows:
                raise SystemExit(f"{case}: {records:,} records, not {args.rows:,}")
            print(f"  round {round_number}: {case}: {times[case][-1]:.1f} s, {records:,} records", flush=True)
        snapshots.append(snapshot_pass(spark))
    found = {case: holds(folders) for case, folders in outputs.items()}
    spark.stop()
    best = {case: min(values) for case, values in times.items()}
    ratio = best[HAND] / best[OURS]
    rows = [[case, f"{best[case]:.1f}", ", ".join(f"{value:.1f}" for value in times[case]),
             f"{args.rows / best[case]:,.0f}", f"{best[HAND] / best[case]:.2f}x"] for case in (OURS, HAND)]
    print(f"\n### {args.rows:,}-row Spark table, 12 columns, {args.partitions} files read as {partitions} partitions, "
          f"local[{args.workers}], {args.driver_memory} of heap\n")
    print(markdown_table(["case", "best (s)", "rounds (s)", "rows/s", "hand / this (time)"],
                         ["---", "---:", "---:", "---:", "---:"], rows))
    print(f"\nOurs' snapshot pass alone (count and hash of the key column): {min(snapshots):.1f} s\n")
    print(markdown_table(["case", "same bytes twice", "record files", "record MiB", "statistics", "other files"],
                         ["---", "---", "---:", "---:", "---", "---"],
                         [[case, {True: "yes", False: "**no**", None: "-"}[check["deterministic"]],
                           str(check["record_files"]), f"{check['record_bytes'] / 2**20:,.1f}",
                           "yes" if check["statistics"] else "**none**", ", ".join(check["other_files"]) or "**none**"]
                          for case, check in found.items()]))
    target = Target("Spark table: ours vs the hand-written PySpark job", ratio, 1.0,
                    note="hand-written job's time / ours, both in the same session")
    print("\n" + targets_table([target]))
    info = machine(_versions(), load_average=True)
    info["load_average_before"] = load_before
    print("\n" + machine_line(info))
    report = {"rows": args.rows, "partitions": args.partitions, "read_partitions": partitions,
              "workers": args.workers, "rounds": args.rounds, "driver_memory": args.driver_memory, "times": times,
              "snapshot_pass": snapshots, "holds": found, "targets": [target.as_json()], "run": run_info(),
              "machine": info}
    with open(os.path.join(args.out, "spark_table.json"), "w", encoding="utf-8") as file:
        json.dump(report, file, indent=2)
        file.write("\n")
    for folders in outputs.values():
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    return {name: version(name) for name in ("tensorflow-cpu", "pyspark")}


if __name__ == "__main__":
    sys.exit(main())
