"""Reading benchmark: `tb.read` (NumPy, no TensorFlow) against the tfrecord package's reader and `tb.input_fn`.

Run by hand (everything it writes goes under bench/out/, which git ignores):

    .venv/bin/python bench/reading.py [--rows N] [--records M] [--repeats R] [--per-record-cap K]
                                      [--lookups L] [--profile] [--only-hand]

1. Makes two datasets with `tb.build` (default workers), from the other benchmarks' data code:
   - a table of N rows (default 100,000): verify.py's synthetic CSV (tabular.py's mix with a
     class_label, uint8 and int32 columns: 6 integers, 6 float32, 3 strings and a variable-length
     int64 list), 4 shards of tf.train.Examples;
   - M sequences (default 5,000): sequences.py's JSONL (5-200 steps each; context `id`, `label`;
     per step `tokens` int64 and `values` float32 [2]), 4 shards of tf.train.SequenceExamples.
   Before timing, the first records of a shard are read by `tb.read`, `ds.record` and the
   tfrecord package and compared value by value.
2. Full read of the train split, in examples/s, side by side (ratio to `tb.read`):
   - `tb.read(path, "train")`, every record consumed;
   - the tfrecord package (PyPI `tfrecord`): `tfrecord.reader.tfrecord_loader(shard, index_path,
     description)` over every shard (for SequenceExamples `sequence_loader(shard, index_path,
     context_description, features_description)`), with the record keys and their types ("int",
     "float", "byte") taken from the dataset's reading description (`tb.load(path).reading`);
     given an index file, the package starts each shard at a random record and wraps around:
     every record is still read once;
   - `tb.input_fn(path, "train", batch_size=1024, shuffle=False)` to the end (rows counted per batch);
   - `tb.input_fn(path, "train", batch_size=1, shuffle=False)`, its first K records (default 20,000).
   Every call checks that it saw every record (K for the capped case).
3. Against hand-written `tf.data` (`--against-hand`, on by default): one epoch, steady and cold, of
   the generated module's `input_fn` and `tb.input_fn` (batches of 1024, no shuffle) over the
   fastest of the three hand-written pipelines (harness.hand_pipelines: sequential, interleaved,
   parallel reads) that parse each batch with the module's own parse specs (`FEATURES`, or
   `CONTEXT_FEATURES` and `SEQUENCE_FEATURES`) and do nothing more (no casts, no ragged values);
   harness.steady_and_cold, at least 5 rounds; the issue's targets (>= 1.0x steady, cold).
4. Random access: `ds.record("train", i)` for L random i (default 2,000), median and p99 latency in
   microseconds, after one call per shard (which loads its index file); the first call on a fresh
   `tb.load` (index file included) is reported too. The tfrecord package has no random access
   (its nearest, `tfrecord_iterator(shard=(i, n))`, reloads the whole index text per call): not measured.
5. Prints Markdown tables and the machine, and writes the same as JSON to bench/out/reading.json.
   With --profile, also a cProfile of one `tb.read` of the table (top 10 by cumulative, then by own time).

Every timing is the best of R rounds; each round runs every case of a table once, in turn; no
separate warm-up (the best of R >= 2 leaves out tf.data's first-iteration tracing).
TensorFlow is imported before anything is timed.

The tfrecord package and TensorFlow in one process: both register `tensorflow.BytesList` & co.
in protobuf's default descriptor pool (the package from its own copy of example.proto), and with
protobuf's upb backend whichever is imported second fails ("duplicate symbol"). So this script
hands the package TensorFlow's own generated classes of the same messages (`tfrecord.example_pb2`
made of `tensorflow.core.example.example_pb2` and `feature_pb2`, same fields, same upb parser)
before importing it; and it keeps the package's optional `tfrecord.torch` (not used here) from
importing torch.
"""
from __future__ import annotations

import cProfile
import importlib.metadata
import io
import json
import os
import pstats
import sys
import time
import types
from typing import Any, Callable, Iterable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402  (imported up front: its import time is never timed)
from tensorflow.core.example import example_pb2 as tf_example_pb2, feature_pb2 as tf_feature_pb2  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the repository, should the package not be installed


def _tfrecord_package() -> types.ModuleType:
    """`tfrecord.reader`, its protobuf classes TensorFlow's (see the module's docstring)."""
    shim = types.ModuleType("tfrecord.example_pb2")
    for module in (tf_feature_pb2, tf_example_pb2):
        for name in dir(module):
            if not name.startswith("_"):
                setattr(shim, name, getattr(module, name))
    sys.modules.setdefault("tfrecord.example_pb2", shim)
    sys.modules.setdefault("tfrecord.torch", None)  # `from tfrecord import torch` -> ImportError, which it allows
    import tfrecord.reader
    return tfrecord.reader


tfrecord_reader = _tfrecord_package()

import tfrecord_builder as tb  # noqa: E402
from harness import (  # noqa: E402
    OutputPaths, Result, Target, argument_parser, best_of_rounds, hand_pipelines, import_module, machine,
    machine_line, markdown_table, reading_targets, results_table, steady_and_cold, targets_table, with_ratios,
)
import sequences as sequence_data  # noqa: E402  (sequences.py's generator, JSONL writer and spec)
import verify as table_data  # noqa: E402  (verify.py's table: tabular.py's mix with class_label, uint8, int32)

NAME = "reading"
TABLE = "table"
SHARDS = 4
BATCH_SIZE = 1024
LOOKUP_SEED = 20240601
CHECKED = 200  # records of the first shard compared value by value before timing

# the tfrecord package's description types, by the record dtype of the reading description
PACKAGE_TYPES = {"int64": "int", "float32": "float", "string": "byte"}


# ---- data and datasets -----------------------------------------------------------------------------

class Paths(OutputPaths):
    """bench/out/reading/: the CSV, the JSONL, their specs and the datasets; bench/out/reading.json."""

    def __init__(self, out: str) -> None:
        super().__init__(out, NAME)
        self.csv = self.file(f"{TABLE}.csv")
        self.table_spec = self.file(f"{TABLE}.yaml")
        self.jsonl = self.file(f"{sequence_data.NAME}.jsonl")
        self.sequence_spec = self.file(f"{sequence_data.NAME}.yaml")


def table_spec_text(csv_name: str) -> str:
    """verify.py's features, under this benchmark's name, 4 shards."""
    return "\n".join([
        f"name: {TABLE}", "version: 1.0.0", "description: verify.py's synthetic table (bench/reading.py)",
        f"source: {{builder: csv, path: {csv_name}}}", "splits: {train: 1.0}",
        "features:", *(f"  {name}: {declaration}" for name, declaration in table_data.FEATURES.items()),
        f"output: {{shards: {SHARDS}}}", "",
    ])


def prepare(paths: Paths, rows: int, records: int) -> tuple[str, str, int]:
    """Writes both sources and specs and builds both datasets. Returns their paths and the steps."""
    os.makedirs(paths.root, exist_ok=True)
    table_data.write_csv(paths.csv, rows)
    with open(paths.table_spec, "w", encoding="utf-8") as file:
        file.write(table_spec_text(os.path.basename(paths.csv)))
    data = sequence_data.generate(records)
    sequence_data.write_jsonl(paths.jsonl, data)
    with open(paths.sequence_spec, "w", encoding="utf-8") as file:
        file.write(sequence_data.spec_text(os.path.basename(paths.jsonl), "build"))
    table = tb.build(paths.table_spec, output=paths.ours, overwrite=True)
    sequences = tb.build(paths.sequence_spec, output=paths.ours, overwrite=True)
    return table.path, sequences.path, data.total_steps


def package_descriptions(dataset: tb.Dataset) -> tuple[dict[str, str], dict[str, str] | None]:
    """The tfrecord package's descriptions of the dataset's records: record key -> "int", "float"
    or "byte"; (description, None) for Examples, (context, sequence) for SequenceExamples."""
    context: dict[str, str] = {}
    sequence: dict[str, str] = {}
    for feature in dataset.reading["features"].values():
        for key, (_, dtype, _) in feature["parse"].items():
            (sequence if feature["sequence"] else context)[key] = PACKAGE_TYPES[dtype]
    return context, (sequence if dataset.reading["format"] == "sequence_example" else None)


# ---- read cases ---------------------------------------------------------------------------------------

def read_all(path: str) -> int:
    return sum(1 for _ in tb.read(path, "train"))


def package_records(dataset: tb.Dataset, index: bool = True) -> Iterable[Any]:
    """Every record of the train split, through the tfrecord package, shard after shard."""
    context, sequence = package_descriptions(dataset)
    for shard, index_path in zip(dataset.files("train"), dataset.index_files("train")):
        index_path = index_path if index else None
        if sequence is None:
            yield from tfrecord_reader.tfrecord_loader(shard, index_path, context)
        else:
            yield from tfrecord_reader.sequence_loader(shard, index_path, context, sequence)


def rows_of(batch: Any) -> int:
    """Examples in an input_fn batch: a feature dict, or a (features, label) pair."""
    features = batch[0] if isinstance(batch, tuple) else batch
    return int(next(iter(features.values())).shape[0])


def counted(case: str, run: Callable[[], int], expected: int) -> Callable[[], int]:
    """`run`, failing unless it saw `expected` examples."""
    def checked() -> int:
        seen = run()
        if seen != expected:
            raise RuntimeError(f"{case}: read {seen:,} examples, expected {expected:,}")
        return seen
    return checked


READ = '`tb.read(path, "train")` (NumPy, no TensorFlow)'
INPUT_BATCHED = f"`tb.input_fn(batch_size={BATCH_SIZE}, shuffle=False)`"


def package_case(sequence: bool) -> str:
    return ("tfrecord package: `sequence_loader(shard, index, context, sequence)` per shard" if sequence
            else "tfrecord package: `tfrecord_loader(shard, index, description)` per shard")


def bench_read(path: str, repeats: int, cap: int) -> list[Result]:
    """Times one full read of the train split by each reader; returns the results, ratios to tb.read."""
    dataset = tb.load(path)
    count = dataset.num_examples("train")
    sequence = package_descriptions(dataset)[1] is not None
    batched = tb.input_fn(path, "train", batch_size=BATCH_SIZE, shuffle=False)
    cases: dict[str, tuple[Callable[[], int], int]] = {
        READ: (lambda: read_all(path), count),
        package_case(sequence): (lambda: sum(1 for _ in package_records(dataset)), count),
        INPUT_BATCHED: (lambda: sum(rows_of(batch) for batch in batched), count),
    }
    if cap > 0:
        limit = min(cap, count)
        single = tb.input_fn(path, "train", batch_size=1, shuffle=False).take(limit)
        what = f"first {limit:,} records" if limit < count else "all records"
        cases[f"`tb.input_fn(batch_size=1, shuffle=False)`, {what}"] = (
            lambda: sum(rows_of(batch) for batch in single), limit)
    runs = [counted(case, run, expected) for case, (run, expected) in cases.items()]
    times = best_of_rounds(repeats, runs)
    results = [Result("read", case, timing.seconds, expected, timing.cpu_seconds)
               for (case, (_, expected)), timing in zip(cases.items(), times)]
    return with_ratios(results, reference=READ)


# ---- against hand-written tf.data ------------------------------------------------------------------

MODULE = "generated module `input_fn`"
LIBRARY = "`tb.input_fn`"


def rows_in(batch: Any) -> int:
    """Examples in a batch of any reader here: its first value's rows (a dense, sparse or ragged one)."""
    first = tf.nest.flatten(batch)[0]
    if isinstance(first, tf.SparseTensor):
        return int(first.dense_shape[0])
    return int(first.nrows()) if isinstance(first, tf.RaggedTensor) else int(first.shape[0])


def bench_against_hand(path: str, repeats: int) -> tuple[list[Result], list[Result]]:
    """Steady and cold epochs of ours and the hand-written pipelines (harness.steady_and_cold),
    ratios to the fastest hand-written one."""
    dataset = tb.load(path)
    name = dataset.info.name
    module = import_module(os.path.join(path, f"{name}_input.py"), f"reading_{name}_input")
    if dataset.reading["format"] == "example":
        def parse(batch: Any) -> Any:
            return tf.io.parse_example(batch, module.FEATURES)
    else:
        def parse(batch: Any) -> Any:
            return tf.io.parse_sequence_example(batch, context_features=module.CONTEXT_FEATURES or None,
                                                sequence_features=module.SEQUENCE_FEATURES)
    cases = {
        MODULE: lambda: module.input_fn("train", batch_size=BATCH_SIZE, shuffle=False),
        LIBRARY: lambda: tb.input_fn(path, "train", batch_size=BATCH_SIZE, shuffle=False),
        **hand_pipelines(dataset.files("train"), BATCH_SIZE, parse),
    }
    return steady_and_cold(cases, (MODULE, LIBRARY), dataset.num_examples("train"), rows_in, repeats)


# ---- random access ------------------------------------------------------------------------------------

def bench_lookups(path: str, lookups: int) -> dict[str, Any]:
    """`ds.record("train", i)` latency in microseconds: the first call of a fresh `tb.load`, then,
    after a call per shard, `lookups` random i (median, p99, mean)."""
    dataset = tb.load(path)
    count = dataset.num_examples("train")
    start = time.perf_counter_ns()
    dataset.record("train", count // 2)
    first = (time.perf_counter_ns() - start) / 1000
    shard_starts = np.cumsum([0] + [shard["num_examples"] for shard in dataset.info.splits["train"].shards])[:-1]
    for place in shard_starts.tolist():  # every shard's index loaded, every shard opened
        dataset.record("train", place)
    picks = np.random.default_rng(LOOKUP_SEED).integers(0, count, size=lookups).tolist()
    latencies = np.empty(lookups)
    for number, place in enumerate(picks):
        start = time.perf_counter_ns()
        dataset.record("train", place)
        latencies[number] = time.perf_counter_ns() - start
    latencies /= 1000
    return {"lookups": lookups, "first_us": first, "median_us": float(np.median(latencies)),
            "p99_us": float(np.percentile(latencies, 99)), "mean_us": float(latencies.mean())}


# ---- checks -------------------------------------------------------------------------------------------

def flat(value: Any) -> list[Any]:
    """A record's value as a flat list: a scalar, an array, or the tfrecord package's list of steps."""
    if isinstance(value, list):
        value = np.concatenate([np.asarray(step).ravel() for step in value]) if value else np.empty(0)
    return np.asarray(value).ravel().tolist()


def same_records(path: str) -> list[str]:
    """The record keys whose values differ, over the first records of the first shard, between
    `tb.read`, `ds.record` and the tfrecord package (read in file order: no index). Empty: none."""
    dataset = tb.load(path)
    context, sequence = package_descriptions(dataset)
    keys = {**context, **(sequence or {})}
    count = min(CHECKED, dataset.info.splits["train"].shards[0]["num_examples"])
    ours = [record for _, record in zip(range(count), tb.read(path, "train"))]
    looked_up = [dataset.record("train", number) for number in range(count)]
    theirs = []
    for _, record in zip(range(count), package_records(dataset, index=False)):
        theirs.append({**record[0], **record[1]} if sequence is not None else record)
    return [key for key in keys
            if not all(flat(a[key]) == flat(b[key]) == flat(c[key]) for a, b, c in zip(ours, looked_up, theirs))]


# ---- report -------------------------------------------------------------------------------------------

def machine_info() -> dict[str, Any]:
    return machine({"tensorflow": tf.__version__, "numpy": np.__version__, "tfrecord_builder": tb.__version__,
                    "tfrecord": importlib.metadata.version("tfrecord"),
                    "protobuf": importlib.metadata.version("protobuf")}, load_average=True)


def lookups_table(rows: list[tuple[str, dict[str, Any], Result]]) -> str:
    """(dataset, lookup latencies, its tb.read result) -> the random-access table."""
    return markdown_table(
        ["dataset", "`ds.record` median (µs)", "p99 (µs)", "mean (µs)", "first call, fresh `tb.load` (µs)",
         "`tb.read` per record, in order (µs)"],
        ["---", "---:", "---:", "---:", "---:", "---:"],
        [[name, f"{lookup['median_us']:,.1f}", f"{lookup['p99_us']:,.1f}", f"{lookup['mean_us']:,.1f}",
          f"{lookup['first_us']:,.0f}", f"{1e6 / read.per_second:,.1f}"] for name, lookup, read in rows])


def profile_read(path: str, top: int = 10) -> str:
    """cProfile of one `tb.read` of the dataset at `path`: the `top` functions by cumulative time,
    then by own time."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in tb.read(path, "train"):
        pass
    profiler.disable()
    text = io.StringIO()
    stats = pstats.Stats(profiler, stream=text).strip_dirs()
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    return text.getvalue().strip()


def hand_report(hand: dict[str, tuple[list[Result], list[Result]]], targets: list[Target]) -> str:
    """The tables of ours against the hand-written pipelines, steady and cold, and the targets."""
    lines = []
    for name, (steady, cold) in hand.items():
        lines += [f"### {name.capitalize()}: against hand-written `tf.data` (batches of {BATCH_SIZE}, no shuffle), "
                  "one steady epoch", "", results_table(steady, "examples", "the best hand-written"), "",
                  f"### {name.capitalize()}: one cold pass (a fresh dataset: tracing, graph rewrites, files opened)", "",
                  results_table(cold, "examples", "the best hand-written"), ""]
    return "\n".join([*lines, "### Targets", "", targets_table(targets)])


def report(args: Any, table: list[Result], sequences: list[Result], lookups: dict[str, dict[str, Any]],
           extra: dict[str, Any]) -> str:
    reads = {"table": table, "sequences": sequences}
    return "\n".join([
        f"## Reading benchmark: {args.rows:,} rows, {args.records:,} sequences, best of {args.repeats}",
        "",
        machine_line(machine_info()),
        "",
        f"### Table: {args.rows:,} tf.train.Examples x {len(table_data.FEATURES)} features "
        f"(6 ints incl. a class_label, 6 float32, 3 strings, an int64 list), {SHARDS} shards",
        "",
        results_table(table, "examples", "`tb.read`"),
        "",
        f"### Sequences: {args.records:,} tf.train.SequenceExamples of {sequence_data.MIN_STEPS}-"
        f"{sequence_data.MAX_STEPS} steps ({extra['steps']:,} steps; context id, label; per step tokens "
        f"int64, values float32 [2]), {SHARDS} shards",
        "",
        results_table(sequences, "examples", "`tb.read`"),
        "",
        f"### Random access: `ds.record(\"train\", i)`, {args.lookups:,} random i",
        "",
        lookups_table([(name, lookups[name], next(r for r in reads[name] if r.case == READ)) for name in reads]),
        "",
        "The tfrecord package has no random access (its nearest, `tfrecord_iterator(shard=(i, n))`, "
        "reloads the index text per call): not measured. "
        f"First {CHECKED} records of shard 0, `tb.read` vs `ds.record` vs the tfrecord package: "
        f"table {same_values(extra['differ_table'])}, sequences {same_values(extra['differ_sequences'])}. "
        f"Data made and built in {extra['prepare_seconds']:.1f} s.",
    ])


def same_values(differ: list[str]) -> str:
    return "identical values" if not differ else "DIFFER in " + ", ".join(differ)


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser(__doc__, "--rows", 100_000, "rows of the synthetic table (default 100000)")
    parser.add_argument("--records", type=int, default=5_000, help="sequences to generate (default 5000)")
    parser.add_argument("--per-record-cap", type=int, default=20_000,
                        help="records read by input_fn with batch_size=1 (default 20000; 0: leave the case out)")
    parser.add_argument("--lookups", type=int, default=2_000, help="random ds.record calls (default 2000)")
    parser.add_argument("--profile", action="store_true", help="also print a cProfile of one tb.read of the table")
    parser.add_argument("--only-hand", action="store_true",
                        help="only ours against the hand-written tf.data pipelines (and the data they need)")
    args = parser.parse_args(argv)
    if args.rows < 1 or args.records < 1 or args.repeats < 1 or args.lookups < 1:
        parser.error("--rows, --records, --repeats and --lookups: expected at least 1")
    paths = Paths(os.path.abspath(args.out))

    start = time.perf_counter()
    table_path, sequence_path, steps = prepare(paths, args.rows, args.records)
    extra: dict[str, Any] = {"steps": steps, "prepare_seconds": time.perf_counter() - start,
                             "differ_table": same_records(table_path), "differ_sequences": same_records(sequence_path)}
    hand = {"table": bench_against_hand(table_path, args.repeats),
            "sequences": bench_against_hand(sequence_path, args.repeats)}
    targets = [target for name, (steady, cold) in hand.items()
               for target in reading_targets(name, steady, cold, MODULE, LIBRARY)]
    print(f"## Reading against hand-written tf.data: {args.rows:,} rows, {args.records:,} sequences\n\n"
          f"{machine_line(machine_info())}\n")
    print(hand_report(hand, targets) + "\n")
    if args.only_hand:
        return 0
    table = bench_read(table_path, args.repeats, args.per_record_cap)
    sequences = bench_read(sequence_path, args.repeats, args.per_record_cap)
    lookups = {"table": bench_lookups(table_path, args.lookups),
               "sequences": bench_lookups(sequence_path, args.lookups)}

    print(report(args, table, sequences, lookups, extra))
    if args.profile:
        print(f"\n### cProfile of one `tb.read` of the table (top 10 by cumulative time, then by own time)\n\n```\n"
              f"{profile_read(table_path)}\n```")
    document = {
        "rows": args.rows, "records": args.records, "repeats": args.repeats, "batch_size": BATCH_SIZE,
        "per_record_cap": args.per_record_cap, "shards": SHARDS, "machine": machine_info(), **extra,
        "table": [result.as_json() for result in table], "sequences": [result.as_json() for result in sequences],
        "lookups": lookups,
        "against_hand": {name: {"steady": [result.as_json() for result in steady],
                                "cold": [result.as_json() for result in cold]} for name, (steady, cold) in hand.items()},
        "targets": [target.as_json() for target in targets],
    }
    with open(paths.json, "w", encoding="utf-8") as file:
        json.dump(document, file, indent=2)
        file.write("\n")
    print(f"\nwritten: {paths.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
