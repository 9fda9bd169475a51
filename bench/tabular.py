"""Tabular benchmark: tfrecord_builder against the hand-written tutorial code, build and read.

Run by hand (everything it writes goes under bench/out/, which git ignores):

    .venv/bin/python bench/tabular.py [--rows N] [--repeats R]

1. Generates a deterministic synthetic CSV (seeded numpy) of N rows x 16 columns: 6 int64,
   6 float32, 3 short strings and one variable-length int64 list written in its cell as
   whitespace-separated integers ("3 17 5", 0-8 values), and a YAML spec for it.
2. Build, in rows/s, side by side:
   - ours: `tfrecord_builder.build(spec, output=..., overwrite=True)`, CSV reading included;
   - the seed tutorials' loop: `csv.reader` -> `tf.train.Example` per row -> `SerializeToString`
     -> `tf.io.TFRecordWriter`, 4 shards, CSV reading included;
   - the floor: the already-serialised records written with `tf.io.TFRecordWriter` only.
3. Read, in examples/s, one full epoch of the shards `build` wrote, batches of 1024, no shuffle:
   the generated input module, `tb.input_fn`, a hand-tuned batched `parse_example` pipeline,
   the seed per-example `parse_single_example` pipeline, and the floor (raw records, no parsing).
   One warm-up epoch each, which also checks that every pipeline yields all N examples.
4. Prints Markdown tables and the machine, and writes the same as JSON to bench/out/tabular.json.

Every timing is the best of R rounds; each round runs every case of a table once, in turn.
TensorFlow is imported before anything is timed.
Before timing, the records ours and the seed loop wrote are parsed and compared value by value.
"""
from __future__ import annotations

import argparse
import csv
import gc
import importlib.util
import json
import os
import platform
import sys
import time
from dataclasses import asdict, dataclass
from types import ModuleType
from typing import Any, Callable, Iterable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402  (imported up front: its import time is never timed)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the repository, should the package not be installed

import tfrecord_builder as tb  # noqa: E402

NAME = "tabular"
SHARDS = 4
BATCH_SIZE = 1024
SEED = 20240601
MAX_LIST = 8  # the list column holds 0..MAX_LIST values per row

INT_COLUMNS = ["id", "age", "count", "category", "big", "delta"]
FLOAT_COLUMNS = ["price", "score", "ratio", "lat", "lon", "noise"]
STRING_COLUMNS = ["city", "color", "code"]
LIST_COLUMN = "tokens"
COLUMNS = INT_COLUMNS + FLOAT_COLUMNS + STRING_COLUMNS + [LIST_COLUMN]


# ---- data and spec --------------------------------------------------------------------------------

def _words(rng: np.random.Generator, count: int) -> list[str]:
    """A vocabulary of `count` short lowercase words (3-8 letters)."""
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    return ["".join(rng.choice(letters, size=int(size))) for size in rng.integers(3, 9, size=count)]


def generate_columns(rows: int, seed: int = SEED) -> dict[str, list[str]]:
    """The CSV's cells by column, as text; deterministic for a given `rows` and `seed`."""
    rng = np.random.default_rng(seed)
    ints = {
        "id": np.arange(rows),
        "age": rng.integers(18, 90, size=rows),
        "count": rng.poisson(3.0, size=rows),
        "category": rng.integers(0, 10, size=rows),
        "big": rng.integers(-(2**62), 2**62, size=rows),
        "delta": rng.integers(-1000, 1000, size=rows),
    }
    floats = {
        "price": rng.lognormal(3.0, 1.0, size=rows),
        "score": rng.random(size=rows),
        "ratio": rng.normal(0.0, 1.0, size=rows),
        "lat": rng.uniform(-90.0, 90.0, size=rows),
        "lon": rng.uniform(-180.0, 180.0, size=rows),
        "noise": rng.normal(0.0, 1e-3, size=rows),
    }
    columns: dict[str, list[str]] = {name: [str(value) for value in values.tolist()] for name, values in ints.items()}
    columns.update({name: [f"{value:.7g}" for value in values.tolist()] for name, values in floats.items()})
    for name, vocabulary_size in zip(STRING_COLUMNS, (200, 12, 5000)):
        vocabulary = np.array(_words(rng, vocabulary_size))
        columns[name] = vocabulary[rng.integers(0, vocabulary_size, size=rows)].tolist()
    lengths = rng.integers(0, MAX_LIST + 1, size=rows)
    values = rng.integers(0, 1000, size=int(lengths.sum())).tolist()
    cells, start = [], 0
    for length in lengths.tolist():
        cells.append(" ".join(map(str, values[start : start + length])))
        start += length
    columns[LIST_COLUMN] = cells
    return columns


def write_csv(path: str, rows: int) -> None:
    """Writes the synthetic table with a header row."""
    columns = generate_columns(rows)
    with open(path, "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(COLUMNS)
        writer.writerows(zip(*(columns[name] for name in COLUMNS)))


def spec_text(csv_name: str, output_dir: str) -> str:
    """The YAML spec of the synthetic table (paths relative to the spec's folder)."""
    features = [f"  {name}: {{dtype: int64}}" for name in INT_COLUMNS]
    features += [f"  {name}: {{dtype: float32}}" for name in FLOAT_COLUMNS]
    features += [f"  {name}: {{dtype: string}}" for name in STRING_COLUMNS]
    features += [f"  {LIST_COLUMN}: {{dtype: int64, shape: [null]}}"]
    return "\n".join([
        f"name: {NAME}",
        "version: 1.0.0",
        "description: synthetic table of the tabular benchmark (bench/tabular.py)",
        f"source: {{builder: csv, path: {csv_name}}}",
        "splits: {train: 1.0}",
        "features:",
        *features,
        f"output: {{dir: {output_dir}, shards: {SHARDS}}}",
        "",
    ])


@dataclass
class Paths:
    """Where the benchmark writes its files."""

    out: str

    @property
    def csv(self) -> str:
        return os.path.join(self.out, f"{NAME}.csv")

    @property
    def spec(self) -> str:
        return os.path.join(self.out, f"{NAME}.yaml")

    @property
    def ours(self) -> str:
        return os.path.join(self.out, "build")

    @property
    def seed(self) -> str:
        return os.path.join(self.out, "seed")

    @property
    def floor(self) -> str:
        return os.path.join(self.out, "floor")

    @property
    def json(self) -> str:
        return os.path.join(self.out, f"{NAME}.json")


def prepare(paths: Paths, rows: int) -> None:
    """Writes the CSV and the spec; creates the output folders."""
    for folder in (paths.out, paths.seed, paths.floor):
        os.makedirs(folder, exist_ok=True)
    write_csv(paths.csv, rows)
    with open(paths.spec, "w", encoding="utf-8") as file:
        file.write(spec_text(os.path.basename(paths.csv), os.path.basename(paths.ours)))


# ---- timing -----------------------------------------------------------------------------------------

@dataclass
class Result:
    """One benchmark case: its best time over the rounds, and its throughput."""

    group: str  # "build" or "read"
    case: str
    seconds: float
    items: int
    ratio: float = 0.0  # throughput relative to the group's reference case

    @property
    def per_second(self) -> float:
        return self.items / self.seconds


def timed(run: Callable[[], Any]) -> float:
    """The wall time of one call of `run`, in seconds, after a garbage collection."""
    gc.collect()
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def best_of_rounds(repeats: int, runs: list[Callable[[], Any]]) -> list[float]:
    """The best time of each of `runs` over `repeats` rounds; every round runs each once, in order.

    Interleaving the cases (rather than repeating one, then the next) spreads slow drift of the
    machine (other load, frequency, caches) over all of them, so the comparison stays fair.
    """
    best = [float("inf")] * len(runs)
    for _ in range(repeats):
        for index, run in enumerate(runs):
            best[index] = min(best[index], timed(run))
    return best


# ---- build cases ------------------------------------------------------------------------------------

def build_ours(paths: Paths) -> tb.DatasetInfo:
    """The whole tfrecord_builder build: CSV reading, encoding, shuffling, shards, info, module."""
    return tb.build(paths.spec, output=paths.ours, overwrite=True)


def shard_paths(folder: str, shards: int = SHARDS) -> list[str]:
    return [os.path.join(folder, f"{NAME}-train.tfrecord-{index:05d}-of-{shards:05d}") for index in range(shards)]


def _int64(values: Iterable[int]) -> tf.train.Feature:
    return tf.train.Feature(int64_list=tf.train.Int64List(value=values))


def _float(values: Iterable[float]) -> tf.train.Feature:
    return tf.train.Feature(float_list=tf.train.FloatList(value=values))


def _bytes(values: Iterable[bytes]) -> tf.train.Feature:
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))


def seed_example(row: dict[str, str]) -> tf.train.Example:
    """One CSV row as a tf.train.Example, the way the seed tutorials write it."""
    feature = {name: _int64([int(row[name])]) for name in INT_COLUMNS}
    feature.update({name: _float([float(row[name])]) for name in FLOAT_COLUMNS})
    feature.update({name: _bytes([row[name].encode("utf-8")]) for name in STRING_COLUMNS})
    feature[LIST_COLUMN] = _int64([int(token) for token in row[LIST_COLUMN].split()])
    return tf.train.Example(features=tf.train.Features(feature=feature))


def build_seed_loop(csv_path: str, folder: str) -> list[bytes]:
    """The tutorials' loop: read, build, serialise and write each row (round-robin over 4 shards).

    Returns the serialised records (kept for the floor case; the list append is negligible).
    """
    records = []
    writers = [tf.io.TFRecordWriter(path) for path in shard_paths(folder)]
    try:
        with open(csv_path, newline="", encoding="utf-8") as file:
            for index, row in enumerate(csv.DictReader(file)):
                record = seed_example(row).SerializeToString()
                writers[index % SHARDS].write(record)
                records.append(record)
    finally:
        for writer in writers:
            writer.close()
    return records


def write_floor(records: list[bytes], folder: str) -> None:
    """Only the TFRecordWriter: already-serialised records, 4 contiguous shards."""
    total = len(records)
    for index, path in enumerate(shard_paths(folder)):
        with tf.io.TFRecordWriter(path) as writer:
            for record in records[index * total // SHARDS : (index + 1) * total // SHARDS]:
                writer.write(record)


def bench_build(paths: Paths, rows: int, repeats: int) -> tuple[list[Result], tb.DatasetInfo]:
    """Times the three build cases; returns them and the info of the dataset `tb.build` wrote."""
    info: tb.DatasetInfo | None = None
    records: list[bytes] = []

    def ours() -> None:
        nonlocal info
        info = build_ours(paths)

    def seed() -> None:
        nonlocal records
        records = build_seed_loop(paths.csv, paths.seed)

    cases = {
        "tfrecord_builder `tb.build` (ours)": ours,
        "seed tutorial loop (csv + tf.train.Example per row)": seed,
        "floor: TFRecordWriter of serialised records": lambda: write_floor(records, paths.floor),
    }  # in this order: the floor writes what the seed loop serialised
    times = best_of_rounds(repeats, list(cases.values()))
    results = [Result("build", case, seconds, rows) for case, seconds in zip(cases, times)]
    assert info is not None
    return with_ratios(results, reference=1), info


# ---- read cases ---------------------------------------------------------------------------------------

def hand_spec() -> dict[str, Any]:
    """The hand-written parse spec of the table."""
    spec: dict[str, Any] = {name: tf.io.FixedLenFeature([], tf.int64) for name in INT_COLUMNS}
    spec.update({name: tf.io.FixedLenFeature([], tf.float32) for name in FLOAT_COLUMNS})
    spec.update({name: tf.io.FixedLenFeature([], tf.string) for name in STRING_COLUMNS})
    spec[LIST_COLUMN] = tf.io.VarLenFeature(tf.int64)
    return spec


def import_module(path: str) -> ModuleType:
    """Imports a generated input module from its file, as `import NAME_input` would.

    It is registered in sys.modules (the importlib recipe): AutoGraph looks functions' modules
    up there, and warns that it cannot convert the module's lambdas if it is missing.
    """
    name = f"{NAME}_input"
    module_spec = importlib.util.spec_from_file_location(name, path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    module_spec.loader.exec_module(module)
    return module


def hand_tuned(files: list[str]) -> tf.data.Dataset:
    spec = hand_spec()
    dataset = tf.data.TFRecordDataset(files, num_parallel_reads=tf.data.AUTOTUNE).batch(BATCH_SIZE)
    dataset = dataset.map(lambda batch: tf.io.parse_example(batch, spec), num_parallel_calls=tf.data.AUTOTUNE)
    return dataset.prefetch(tf.data.AUTOTUNE)


def seed_per_example(files: list[str]) -> tf.data.Dataset:
    spec = hand_spec()
    return tf.data.TFRecordDataset(files).map(lambda record: tf.io.parse_single_example(record, spec)).batch(BATCH_SIZE)


def raw_records(files: list[str]) -> tf.data.Dataset:
    return tf.data.TFRecordDataset(files).batch(BATCH_SIZE)


def read_cases(info: tb.DatasetInfo) -> list[tuple[str, Callable[[], tf.data.Dataset]]]:
    """(case, dataset factory) for every read pipeline, all over the shards `tb.build` wrote."""
    module = import_module(os.path.join(info.path, f"{NAME}_input.py"))
    files = [os.path.join(info.path, file) for file in info.splits["train"].files]
    return [
        ("generated module `input_fn`", lambda: module.input_fn("train", batch_size=BATCH_SIZE, shuffle=False)),
        ("`tb.input_fn`", lambda: tb.input_fn(info.path, "train", batch_size=BATCH_SIZE, shuffle=False)),
        ("hand-tuned: batch -> parse_example", lambda: hand_tuned(files)),
        ("seed: parse_single_example -> batch", lambda: seed_per_example(files)),
        ("floor: raw records, batched, no parsing", lambda: raw_records(files)),
    ]


def batch_size_of(batch: Any) -> int:
    """Examples in a batch: raw records, a feature dict, or a (features, label) pair."""
    if isinstance(batch, tuple):
        batch = batch[0]
    if isinstance(batch, dict):
        batch = batch["id"]
    return int(batch.shape[0])


def epoch(dataset: tf.data.Dataset) -> int:
    """Iterates one full epoch; returns the number of examples seen."""
    return sum(batch_size_of(batch) for batch in dataset)


def bench_read(info: tb.DatasetInfo, rows: int, repeats: int) -> list[Result]:
    """Times one epoch of each read pipeline, after a warm-up epoch of each that checks the count."""
    cases = read_cases(info)
    datasets = [make() for _, make in cases]
    for (case, _), dataset in zip(cases, datasets):
        seen = epoch(dataset)  # the warm-up
        if seen != rows:
            raise RuntimeError(f"{case}: one epoch yielded {seen} examples, expected {rows}")
    times = best_of_rounds(repeats, [lambda dataset=dataset: epoch(dataset) for dataset in datasets])
    results = [Result("read", case, seconds, rows) for (case, _), seconds in zip(cases, times)]
    return with_ratios(results, reference=2)


def with_ratios(results: list[Result], reference: int) -> list[Result]:
    """Sets each result's throughput ratio to that of results[reference]."""
    for result in results:
        result.ratio = result.per_second / results[reference].per_second
    return results


# ---- checks -------------------------------------------------------------------------------------------

def parsed_table(files: list[str]) -> dict[str, np.ndarray | list[list[int]]]:
    """Every record of `files` parsed with the hand spec, as columns ordered by `id`."""
    batches = [tf.io.parse_example(batch, hand_spec()) for batch in raw_records(files)]
    columns: dict[str, Any] = {}
    for name in INT_COLUMNS + FLOAT_COLUMNS + STRING_COLUMNS:
        columns[name] = np.concatenate([batch[name].numpy() for batch in batches])
    columns[LIST_COLUMN] = [row for batch in batches
                            for row in tf.RaggedTensor.from_sparse(batch[LIST_COLUMN]).to_list()]
    order = np.argsort(columns["id"], kind="stable")
    return {name: (values[order] if isinstance(values, np.ndarray) else [values[i] for i in order])
            for name, values in columns.items()}


def same_content(info: tb.DatasetInfo, seed_folder: str) -> list[str]:
    """The columns whose values differ between our records and the seed loop's (empty: none)."""
    ours = parsed_table([os.path.join(info.path, file) for file in info.splits["train"].files])
    seed = parsed_table(shard_paths(seed_folder))
    differ = []
    for name in COLUMNS:
        a, b = ours[name], seed[name]
        equal = a == b if isinstance(a, list) else (a.shape == b.shape and bool(np.array_equal(a, b)))
        if not equal:
            differ.append(name)
    return differ


def total_bytes(files: Iterable[str]) -> int:
    return sum(os.path.getsize(file) for file in files)


# ---- report -------------------------------------------------------------------------------------------

def machine() -> dict[str, Any]:
    return {
        "cpu_count": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "tensorflow": tf.__version__,
        "numpy": np.__version__,
        "tfrecord_builder": tb.__version__,
    }


def table(results: list[Result], unit: str, reference: str) -> str:
    lines = [f"| case | {unit}/s | ratio to {reference} | best time (s) |", "| --- | ---: | ---: | ---: |"]
    for result in results:
        lines.append(f"| {result.case} | {result.per_second:,.0f} | {result.ratio:.2f}x | {result.seconds:.3f} |")
    return "\n".join(lines)


def report(rows: int, repeats: int, build: list[Result], read: list[Result], extra: dict[str, Any]) -> str:
    """The Markdown report: machine, build table, read table, notes."""
    info = machine()
    return "\n".join([
        f"## Tabular benchmark: {rows:,} rows x {len(COLUMNS)} columns, best of {repeats}",
        "",
        f"Machine: {info['cpu_count']} CPUs ({info['processor']}), {info['platform']}, Python {info['python']}, "
        f"TensorFlow {info['tensorflow']}, numpy {info['numpy']}, tfrecord_builder {info['tfrecord_builder']}",
        "",
        "### Build (CSV -> 4 TFRecord shards)",
        "",
        table(build, "rows", "seed loop"),
        "",
        f"### Read (one epoch, batch {BATCH_SIZE}, no shuffle)",
        "",
        table(read, "examples", "hand-tuned"),
        "",
        f"Shard bytes: ours {extra['bytes_ours']:,}, seed loop {extra['bytes_seed']:,}. "
        f"Records ours vs seed loop: {'identical values' if not extra['differ'] else 'DIFFER in ' + ', '.join(extra['differ'])}.",
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000, help="rows of the synthetic CSV (default 100000)")
    parser.add_argument("--repeats", type=int, default=3, help="timed repeats per case; the best counts (default 3)")
    parser.add_argument("--out", default=os.path.join(HERE, "out"), help="output folder (default bench/out)")
    args = parser.parse_args(argv)
    paths = Paths(os.path.abspath(args.out))

    prepare(paths, args.rows)
    build, info = bench_build(paths, args.rows, args.repeats)
    extra = {
        "differ": same_content(info, paths.seed),
        "bytes_ours": info.splits["train"].num_bytes,
        "bytes_seed": total_bytes(shard_paths(paths.seed)),
    }
    read = bench_read(info, args.rows, args.repeats)

    print(report(args.rows, args.repeats, build, read, extra))
    document = {
        "rows": args.rows, "columns": len(COLUMNS), "repeats": args.repeats, "batch_size": BATCH_SIZE,
        "shards": SHARDS, "machine": machine(), **extra,
        "build": [{**asdict(result), "per_second": result.per_second} for result in build],
        "read": [{**asdict(result), "per_second": result.per_second} for result in read],
    }
    with open(paths.json, "w", encoding="utf-8") as file:
        json.dump(document, file, indent=2)
        file.write("\n")
    print(f"\nwritten: {paths.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
