"""Tabular benchmark: tfrecord_builder against the hand-written tutorial code, build and read.

Run by hand (everything it writes goes under bench/out/, which git ignores):

    .venv/bin/python bench/tabular.py [--rows N] [--repeats R]

1. Generates a deterministic synthetic CSV (seeded numpy) of N rows x 16 columns: 6 int64,
   6 float32, 3 short strings and one variable-length int64 list written in its cell as
   whitespace-separated integers ("3 17 5", 0-8 values), and a YAML spec for it.
2. Build, in rows/s, side by side:
   - ours: `tfrecord_builder.build(spec, output=..., overwrite=True)`, CSV reading included, with
     its default workers (the machine's cores) and with `workers=1`;
   - the seed tutorials' loop: `csv.reader` -> `tf.train.Example` per row -> `SerializeToString`
     -> `tf.io.TFRecordWriter`, 4 shards, CSV reading included;
   - the floor: the already-serialised records written with `tf.io.TFRecordWriter` only;
   - TensorFlow Datasets: a `tfds.core.GeneratorBasedBuilder` of the same rows and features
     (`download_and_prepare()` into a fresh data_dir, 4 shards; see tfds_case.py), CSV reading
     included; "TFDS not installed" in its place without the bench extra.
3. Read, in examples/s, one full epoch of the shards `build` wrote, batches of 1024, no shuffle:
   the generated input module, `tb.input_fn`, a hand-tuned batched `parse_example` pipeline (with
   parallel reads, as the issue defines it, and without them, faster on 2 cores),
   the seed per-example `parse_single_example` pipeline, and the floor (raw records, no parsing);
   and TFDS's `builder.as_dataset(split="train", batch_size=1024)` over the shards TFDS wrote.
   One warm-up epoch each, which also checks that every pipeline yields all N examples.
4. Prints Markdown tables and the machine, and writes the same as JSON to bench/out/tabular.json.

Every timing is the best of R rounds; each round runs every case of a table once, in turn.
TensorFlow is imported before anything is timed.
Before timing, the records ours, the seed loop and TFDS wrote are parsed and compared value by value.
"""
from __future__ import annotations

import csv
import os
import sys
from typing import Any, Callable, Iterable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402  (imported up front: its import time is never timed)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the repository, should the package not be installed

import tfrecord_builder as tb  # noqa: E402
from harness import (  # noqa: E402
    OutputPaths, Result, argument_parser, best_of_rounds, files_of, import_module, machine, machine_line,
    raw_records, record_writers, results_table, same_values, shard_paths, total_bytes, with_ratios, write_floor,
    write_json,
)
from harness import (  # noqa: E402  (reading, targets)
    Target, hand_pipelines, reading_targets, steady_and_cold, targets_table,
)
import tfds_case  # noqa: E402  (TensorFlow Datasets, if the bench extra is installed)
from tfds_case import tfds  # noqa: E402  (None without it)

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


class Paths(OutputPaths):
    """Where the benchmark writes its files: directly in `out`."""

    def __init__(self, out: str) -> None:
        super().__init__(out, NAME, own_folder=False)
        self.csv = self.file(f"{NAME}.csv")
        self.spec = self.file(f"{NAME}.yaml")
        self.seed = self.file("seed")
        self.floor = self.file("floor")
        self.tfds = self.file("tfds")  # a data_dir per round: tfds/round_K/bench_tabular/1.0.0/


def prepare(paths: Paths, rows: int) -> None:
    """Writes the CSV and the spec; creates the output folders."""
    for folder in (paths.out, paths.seed, paths.floor):
        os.makedirs(folder, exist_ok=True)
    write_csv(paths.csv, rows)
    with open(paths.spec, "w", encoding="utf-8") as file:
        file.write(spec_text(os.path.basename(paths.csv), os.path.basename(paths.ours)))


# ---- build cases ------------------------------------------------------------------------------------

SEED_LOOP = "seed tutorial loop (csv + tf.train.Example per row)"
OURS = "tfrecord_builder `tb.build` (ours)"
OURS_ONE_WORKER = "tfrecord_builder `tb.build` (ours), `workers=1`"
FLOOR = "floor: TFRecordWriter of serialised records"
TFDS_BUILD = "TFDS `GeneratorBasedBuilder.download_and_prepare` (csv + FeaturesDict)"


def build_ours(paths: Paths, workers: int | None = None) -> tb.DatasetInfo:
    """The whole tfrecord_builder build: CSV reading, encoding, shuffling, shards, info, module
    (`workers` None: the machine's cores)."""
    return tb.build(paths.spec, output=paths.ours, overwrite=True, workers=workers)


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
    with (record_writers(shard_paths(folder, NAME, SHARDS)) as writers,
          open(csv_path, newline="", encoding="utf-8") as file):
        for index, row in enumerate(csv.DictReader(file)):
            record = seed_example(row).SerializeToString()
            writers[index % SHARDS].write(record)
            records.append(record)
    return records


def tfds_builder_class() -> type:
    """TFDS's builder of the table: the CSV in the manual_dir, read with `csv.DictReader`, its
    cells converted to the features' Python types, keyed by row (TFDS shuffles by hashed key)."""

    class BenchTabular(tfds.core.GeneratorBasedBuilder):
        """The tabular benchmark's table (bench/tabular.py)."""

        VERSION = tfds.core.Version("1.0.0")
        MANUAL_DOWNLOAD_INSTRUCTIONS = f"bench/tabular.py writes {NAME}.csv into the manual_dir."

        def _info(self) -> tfds.core.DatasetInfo:
            features: dict[str, Any] = {name: tfds.features.Tensor(shape=(), dtype=np.int64) for name in INT_COLUMNS}
            features.update({name: tfds.features.Tensor(shape=(), dtype=np.float32) for name in FLOAT_COLUMNS})
            features.update({name: tfds.features.Text() for name in STRING_COLUMNS})
            features[LIST_COLUMN] = tfds.features.Sequence(np.int64)  # 0-8 values
            return tfds.core.DatasetInfo(builder=self, features=tfds.features.FeaturesDict(features))

        def _split_generators(self, dl_manager: Any) -> dict[str, Any]:
            return {"train": self._generate_examples(dl_manager.manual_dir / f"{NAME}.csv")}

        def _generate_examples(self, path: Any) -> Any:
            with open(path, newline="", encoding="utf-8") as file:
                for index, row in enumerate(csv.DictReader(file)):
                    example: dict[str, Any] = {name: int(row[name]) for name in INT_COLUMNS}
                    example.update({name: float(row[name]) for name in FLOAT_COLUMNS})
                    example.update({name: row[name] for name in STRING_COLUMNS})
                    example[LIST_COLUMN] = [int(token) for token in row[LIST_COLUMN].split()]
                    yield index, example

    return BenchTabular


def bench_build(paths: Paths, rows: int, repeats: int) -> tuple[list[Result], tb.DatasetInfo, Any]:
    """Times the build cases; returns them, the info of the dataset `tb.build` wrote and the
    TFDS builder that built last (None without TFDS)."""
    info: tb.DatasetInfo | None = None
    records: list[bytes] = []

    def ours() -> None:
        nonlocal info
        info = build_ours(paths)

    def seed() -> None:
        nonlocal records
        records = build_seed_loop(paths.csv, paths.seed)

    cases: dict[str, Callable[[], Any]] = {
        OURS_ONE_WORKER: lambda: build_ours(paths, workers=1),
        OURS: ours,
        SEED_LOOP: seed,
        FLOOR: lambda: write_floor(records, shard_paths(paths.floor, NAME, SHARDS)),
    }  # in this order: the floor writes what the seed loop serialised, and ours (default workers) is read
    fresh = None
    if tfds is not None:
        fresh = tfds_case.FreshBuilds(tfds_builder_class(), paths.tfds, paths.out)
        cases[TFDS_BUILD] = fresh
    times = best_of_rounds(repeats, list(cases.values()))
    results = [Result("build", case, timing.seconds, rows) for case, timing in zip(cases, times)]
    assert info is not None
    if fresh is not None:
        fresh.tidy()
    return with_ratios(results, reference=SEED_LOOP), info, fresh and fresh.builder


def build_targets(build: list[Result]) -> list[Target]:
    """The build's targets (bench/README.md; issue 42's bars): its time over the floor's (at most
    3x), its speed over the seed loop's (at least 10x), and its default workers over one (at least
    1.6x)."""
    seconds = {result.case: result.seconds for result in build}
    workers = os.cpu_count() or 1
    return [
        Target("tabular build, time over the TFRecordWriter floor", seconds[OURS] / seconds[FLOOR], 3.0,
               at_least=False, note=f"`tb.build` ({workers} workers) time / floor time"),
        Target("tabular build, over the seed loop", seconds[SEED_LOOP] / seconds[OURS], 10.0,
               note=f"seed loop time / `tb.build` ({workers} workers) time"),
        Target(f"tabular build, {workers} workers over 1", seconds[OURS_ONE_WORKER] / seconds[OURS], 1.6,
               note=f"`workers=1` time / {workers} workers' time"),
    ]


# ---- read cases ---------------------------------------------------------------------------------------

def hand_spec() -> dict[str, Any]:
    """The hand-written parse spec of the table."""
    spec: dict[str, Any] = {name: tf.io.FixedLenFeature([], tf.int64) for name in INT_COLUMNS}
    spec.update({name: tf.io.FixedLenFeature([], tf.float32) for name in FLOAT_COLUMNS})
    spec.update({name: tf.io.FixedLenFeature([], tf.string) for name in STRING_COLUMNS})
    spec[LIST_COLUMN] = tf.io.VarLenFeature(tf.int64)
    return spec


def parse_by_hand(batch: tf.Tensor) -> dict[str, tf.Tensor]:
    """A batch of records parsed with the hand-written spec (`tokens` left a SparseTensor)."""
    return tf.io.parse_example(batch, hand_spec())


def seed_per_example(files: list[str]) -> tf.data.Dataset:
    spec = hand_spec()
    return tf.data.TFRecordDataset(files).map(lambda record: tf.io.parse_single_example(record, spec)).batch(BATCH_SIZE)


MODULE = "generated module `input_fn`"
LIBRARY = "`tb.input_fn`"
TFDS_READ = "TFDS `builder.as_dataset(batch_size=1024)` (its own shards)"


def read_cases(info: tb.DatasetInfo, builder: Any) -> dict[str, Callable[[], tf.data.Dataset]]:
    """Case -> dataset factory for every read pipeline, all over the shards `tb.build` wrote but
    TFDS's, which reads the shards TFDS wrote (`builder`, left out where it is None)."""
    module = import_module(os.path.join(info.path, f"{NAME}_input.py"))
    files = files_of(info)
    return {
        MODULE: lambda: module.input_fn("train", batch_size=BATCH_SIZE, shuffle=False),
        LIBRARY: lambda: tb.input_fn(info.path, "train", batch_size=BATCH_SIZE, shuffle=False),
        **hand_pipelines(files, BATCH_SIZE, parse_by_hand),
        "seed: parse_single_example -> batch": lambda: seed_per_example(files),
        "floor: raw records, batched, no parsing": lambda: raw_records(files, BATCH_SIZE),
        **({TFDS_READ: lambda: tfds_case.as_dataset(builder, BATCH_SIZE)} if builder is not None else {}),
    }


def batch_size_of(batch: Any) -> int:
    """Examples in a batch: raw records, a feature dict, or a (features, label) pair."""
    if isinstance(batch, tuple):
        batch = batch[0]
    if isinstance(batch, dict):
        batch = batch["id"]
    return int(batch.shape[0])


def bench_read(info: tb.DatasetInfo, builder: Any, rows: int, repeats: int) -> tuple[list[Result], list[Result]]:
    """Times each read pipeline in steady state, and ours and the hand-written ones for one cold
    pass (harness.steady_and_cold); ratios to the best hand-written pipeline of each table."""
    return steady_and_cold(read_cases(info, builder), (MODULE, LIBRARY), rows, batch_size_of, repeats)


# ---- checks -------------------------------------------------------------------------------------------

def parsed_table(files: list[str]) -> dict[str, np.ndarray | list[list[int]]]:
    """Every record of `files` parsed with the hand spec, as columns ordered by `id`."""
    batches = [tf.io.parse_example(batch, hand_spec()) for batch in raw_records(files, BATCH_SIZE)]
    columns: dict[str, Any] = {}
    for name in INT_COLUMNS + FLOAT_COLUMNS + STRING_COLUMNS:
        columns[name] = np.concatenate([batch[name].numpy() for batch in batches])
    columns[LIST_COLUMN] = [row for batch in batches
                            for row in tf.RaggedTensor.from_sparse(batch[LIST_COLUMN]).to_list()]
    order = np.argsort(columns["id"], kind="stable")
    return {name: (values[order] if isinstance(values, np.ndarray) else [values[i] for i in order])
            for name, values in columns.items()}


def same_content(files: list[str], seed_folder: str) -> list[str]:
    """The columns whose values differ between the records of `files` and the seed loop's (empty: none).

    TFDS writes the same features the same way (scalars, a bytes_list per Text, an int64_list
    for the Sequence), so the hand spec parses its records too."""
    ours = parsed_table(files)
    seed = parsed_table(shard_paths(seed_folder, NAME, SHARDS))
    differ = []
    for name in COLUMNS:
        a, b = ours[name], seed[name]
        equal = a == b if isinstance(a, list) else (a.shape == b.shape and bool(np.array_equal(a, b)))
        if not equal:
            differ.append(name)
    return differ


# ---- report -------------------------------------------------------------------------------------------

def machine_info() -> dict[str, Any]:
    """The machine and the versions of the packages that matter here."""
    return machine({"tensorflow": tf.__version__, "numpy": np.__version__, "tfrecord_builder": tb.__version__,
                    "tfds": tfds_case.version()})


def report(rows: int, repeats: int, build: list[Result], read: list[Result], cold: list[Result],
           extra: dict[str, Any], found: list[Target]) -> str:
    """The Markdown report: machine, build table, read tables (steady, cold), notes, targets."""
    if extra["differ_tfds"] is None:
        tfds_records = f" {tfds_case.missing_note()}"
    else:
        tfds_records = (f" Records TFDS vs seed loop: {same_values(extra['differ_tfds'])} "
                        f"(TFDS shard bytes {extra['bytes_tfds']:,}).")
    return "\n".join([
        f"## Tabular benchmark: {rows:,} rows x {len(COLUMNS)} columns, best of {repeats}",
        "",
        machine_line(machine_info()),
        "",
        "### Build (CSV -> 4 TFRecord shards)",
        "",
        results_table(build, "rows", "seed loop", tfds_case.vs_tfds(build, TFDS_BUILD, [OURS]),
                      absent=tfds_case.absent(TFDS_BUILD)),
        "",
        f"### Read (one epoch, batch {BATCH_SIZE}, no shuffle)",
        "",
        results_table(read, "examples", "the best hand-written", absent=tfds_case.absent(TFDS_READ)),
        "",
        "One cold pass (a fresh pipeline: tracing, graph rewrites, opening the shards, one epoch):",
        "",
        results_table(cold, "examples", "the best hand-written"),
        "",
        f"Shard bytes: ours {extra['bytes_ours']:,}, seed loop {extra['bytes_seed']:,}. "
        f"Records ours vs seed loop: {same_values(extra['differ'])}.{tfds_records}",
        "",
        "### Targets",
        "",
        targets_table(found),
    ])


def main(argv: list[str] | None = None) -> int:
    args = argument_parser(__doc__, "--rows", 200_000, "rows of the synthetic CSV (default 200000)").parse_args(argv)
    paths = Paths(os.path.abspath(args.out))

    prepare(paths, args.rows)
    build, info, builder = bench_build(paths, args.rows, args.repeats)
    extra = {
        "differ": same_content(files_of(info), paths.seed),
        "bytes_ours": info.splits["train"].num_bytes,
        "bytes_seed": total_bytes(shard_paths(paths.seed, NAME, SHARDS)),
        "differ_tfds": same_content(tfds_case.files(builder), paths.seed) if builder is not None else None,
        "bytes_tfds": tfds_case.num_bytes(builder) if builder is not None else None,
    }
    read, cold = bench_read(info, builder, args.rows, args.repeats)
    found = build_targets(build) + reading_targets("tabular", read, cold, MODULE, LIBRARY)

    print(report(args.rows, args.repeats, build, read, cold, extra, found))
    document = {
        "rows": args.rows, "columns": len(COLUMNS), "repeats": args.repeats, "batch_size": BATCH_SIZE,
        "shards": SHARDS, "machine": machine_info(), **extra,
        "tfds": tfds_case.settings(paths.out, BATCH_SIZE) if tfds is not None else tfds_case.MISSING,
    }
    write_json(paths.json, document, build, read + cold, targets=found)
    return 0


if __name__ == "__main__":
    sys.exit(main())
