"""Sequence benchmark: tfrecord_builder against the hand-written tutorial code, build and read.

Run by hand (everything it writes goes under bench/out/, which git ignores):

    .venv/bin/python bench/sequences.py [--records N] [--repeats R]

1. Generates N deterministic (seeded numpy) variable-length sequences of 5-200 steps as JSONL
   (the `sequence_jsonl` source): context `id` (int64) and `label` (int64, 0-9); per step `tokens`
   (int64) and `values` (float32, shape [2]); and a `format: sequence_example` spec for them.
2. Build, in sequences/s, side by side:
   - ours: `tfrecord_builder.build(spec, output=..., overwrite=True, workers=W)`, W = 1 and 2,
     JSONL reading included;
   - the seed tutorials' loop: `json.loads` per line -> a `tf.train.SequenceExample` filled with
     `context.feature[...]` and one `feature_lists.feature_list[...].feature.add()` per step ->
     `SerializeToString` -> `tf.io.TFRecordWriter`, 4 shards, JSONL reading included;
   - context: `json.loads` alone over the file, and the floor: the already-serialised records
     written with `tf.io.TFRecordWriter` only;
   - TensorFlow Datasets: a `tfds.core.GeneratorBasedBuilder` of the same records, `tokens` and
     `values` as `tfds.features.Sequence`s (`download_and_prepare()` into a fresh data_dir,
     4 shards; see tfds_case.py), JSONL reading included; "TFDS not installed" without the bench extra.
3. Read, in sequences/s, one full epoch of the shards `build` wrote, batches of 256, no shuffle:
   the generated module's `input_fn` (padded batches), a hand-written batched
   `parse_sequence_example` pipeline, the seed per-record `parse_single_sequence_example` +
   `padded_batch` pipeline, the generated `input_fn` of the same spec with
   `input: {bucket_boundaries: [25, 50, 100, 150]}`, the floor (raw records, no parsing) and
   TFDS's `builder.as_dataset(split="train", batch_size=256)` over the shards TFDS wrote;
   with the padding each leaves (padded step slots / all step slots of its batches).
   One warm-up epoch each, which also checks that every pipeline yields all N sequences.
4. Prints Markdown tables and the machine, and writes the same as JSON to bench/out/sequences.json.

Every timing is the best of R rounds; each round runs every case of a table once, in turn.
TensorFlow is imported before anything is timed.
Before timing the reads, the records of ours, of the seed loop and of TFDS are parsed and compared
with the generated data, value by value.
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict, dataclass
from typing import Any, Callable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

if __name__ != "__mp_main__":
    # Imported up front: its import time is never timed. But not in `tb.build`'s worker processes
    # if they are spawned: a spawned process re-imports the caller's main script (as `__mp_main__`),
    # and TensorFlow's import there would be paid by every worker of every build. Workers need only
    # the package and numpy. (Forked workers don't re-import the script.) See bench/README.md.
    import tensorflow as tf  # noqa: E402
    import tfds_case  # noqa: E402  (TensorFlow Datasets, if the bench extra is installed; imports TensorFlow)
    from tfds_case import tfds  # noqa: E402  (None without it)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the repository, should the package not be installed

import tfrecord_builder as tb  # noqa: E402
from harness import (  # noqa: E402
    Column, OutputPaths, Result, argument_parser, best_of_rounds, files_of, import_module, machine,
    machine_line, raw_records, record_writers, results_table, same_values, shard_paths, total_bytes, with_ratios,
    write_floor, write_json,
)
from harness import (  # noqa: E402  (reading, targets)
    Target, hand_pipelines, reading_targets, steady_and_cold, targets_table,
)

NAME = "sequences"
SHARDS = 4
BATCH_SIZE = 256
WORKERS = (1, 2)
SEED = 20240601
MIN_STEPS, MAX_STEPS = 5, 200  # steps per sequence, both included
VOCABULARY = 10_000  # tokens are ints in [0, VOCABULARY)
LABELS = 10
BUCKET_BOUNDARIES = [25, 50, 100, 150]


# ---- data and spec --------------------------------------------------------------------------------

@dataclass
class Sequences:
    """The generated data, column-wise: what every dataset must hold, in `id` order."""

    lengths: np.ndarray  # (N,) int64 steps per sequence
    labels: np.ndarray  # (N,) int64
    tokens: np.ndarray  # (total steps,) int64, the sequences one after another
    values: np.ndarray  # (total steps, 2) float64, rounded to 4 decimals (as written in the JSON)

    @property
    def total_steps(self) -> int:
        return int(self.lengths.sum())


def generate(records: int, seed: int = SEED) -> Sequences:
    """The sequences; deterministic for a given `records` and `seed`."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(MIN_STEPS, MAX_STEPS + 1, size=records)
    labels = rng.integers(0, LABELS, size=records)
    total = int(lengths.sum())
    tokens = rng.integers(0, VOCABULARY, size=total)
    values = np.round(rng.normal(0.0, 1.0, size=(total, 2)), 4)
    return Sequences(lengths, labels, tokens, values)


def write_jsonl(path: str, data: Sequences) -> int:
    """One JSON object per line: {"id", "label", "tokens": [...], "values": [[a, b], ...]}. Returns bytes."""
    tokens, values = data.tokens.tolist(), data.values.tolist()
    start = 0
    with open(path, "w", encoding="utf-8") as file:
        for index, (length, label) in enumerate(zip(data.lengths.tolist(), data.labels.tolist())):
            record = {"id": index, "label": label, "tokens": tokens[start : start + length],
                      "values": values[start : start + length]}
            file.write(json.dumps(record, separators=(",", ":")) + "\n")
            start += length
    return os.path.getsize(path)


def spec_text(jsonl_name: str, output_dir: str, input_section: str = "") -> str:
    """The YAML spec of the sequences (paths relative to the spec's folder)."""
    return "\n".join([
        f"name: {NAME}",
        "version: 1.0.0",
        "description: synthetic sequences of the sequence benchmark (bench/sequences.py)",
        "format: sequence_example",
        f"source: {{builder: sequence_jsonl, path: {jsonl_name}}}",
        "splits: {train: 1.0}",
        "context:",
        "  id:     {dtype: int64}",
        "  label:  {dtype: int64}",
        "sequence:",
        "  tokens: {dtype: int64}",
        "  values: {dtype: float32, shape: [2]}",
        f"output: {{dir: {output_dir}, shards: {SHARDS}}}",
        *([input_section] if input_section else []),
        "",
    ])


class Paths(OutputPaths):
    """Where the benchmark writes its files: under `out`/sequences."""

    def __init__(self, out: str) -> None:
        super().__init__(out, NAME)
        self.jsonl = self.file(f"{NAME}.jsonl")
        self.spec = self.file(f"{NAME}.yaml")
        self.bucketed_spec = self.file(f"{NAME}_bucketed.yaml")
        self.seed = self.file("seed")
        self.floor = self.file("floor")
        self.modules = self.file("modules")
        self.tfds = self.file("tfds")  # a data_dir per round: tfds/round_K/bench_sequences/1.0.0/


def prepare(paths: Paths, records: int) -> tuple[Sequences, int]:
    """Writes the JSONL and the specs; creates the output folders. Returns the data and the file's bytes."""
    for folder in (paths.root, paths.seed, paths.floor, paths.modules):
        os.makedirs(folder, exist_ok=True)
    data = generate(records)
    size = write_jsonl(paths.jsonl, data)
    jsonl, output = os.path.basename(paths.jsonl), os.path.basename(paths.ours)
    with open(paths.spec, "w", encoding="utf-8") as file:
        file.write(spec_text(jsonl, output))
    with open(paths.bucketed_spec, "w", encoding="utf-8") as file:  # same name: its module reads the same dataset
        file.write(spec_text(jsonl, output, f"input: {{bucket_boundaries: {BUCKET_BOUNDARIES}}}"))
    return data, size


# ---- results ----------------------------------------------------------------------------------------

@dataclass
class SequenceResult(Result):
    """A result with, for a read case, the padding of its batches (None for a build case)."""

    padding: float | None = None  # read: padded step slots / all step slots of one epoch's batches


# ---- build cases ------------------------------------------------------------------------------------

SEED_LOOP = "seed tutorial loop (json.loads + tf.train.SequenceExample, feature.add() per step)"
OURS = [f"tfrecord_builder `tb.build` (ours), {workers} worker{'s' if workers > 1 else ''}" for workers in WORKERS]
TFDS_BUILD = "TFDS `GeneratorBasedBuilder.download_and_prepare` (json.loads + FeaturesDict of Sequences)"
FLOOR = "floor: TFRecordWriter of serialised records"


def seed_sequence_example(record: dict[str, Any]) -> tf.train.SequenceExample:
    """One JSON record as a tf.train.SequenceExample, the way the seed tutorials write it."""
    example = tf.train.SequenceExample()
    example.context.feature["id"].int64_list.value.append(record["id"])
    example.context.feature["label"].int64_list.value.append(record["label"])
    tokens = example.feature_lists.feature_list["tokens"]
    values = example.feature_lists.feature_list["values"]
    for token, value in zip(record["tokens"], record["values"]):
        tokens.feature.add().int64_list.value.append(token)
        values.feature.add().float_list.value.extend(value)
    return example


def build_seed_loop(jsonl_path: str, folder: str) -> list[bytes]:
    """The tutorials' loop: parse, build, serialise and write each line (round-robin over 4 shards).

    Returns the serialised records (kept for the floor case; the list append is negligible).
    """
    records = []
    with record_writers(shard_paths(folder, NAME, SHARDS)) as writers, open(jsonl_path, encoding="utf-8") as file:
        for index, line in enumerate(file):
            record = seed_sequence_example(json.loads(line)).SerializeToString()
            writers[index % SHARDS].write(record)
            records.append(record)
    return records


def json_loads_only(jsonl_path: str) -> int:
    """Only the standard library's parse of every line: the seed loop's share spent in `json.loads`."""
    count = 0
    with open(jsonl_path, encoding="utf-8") as file:
        for line in file:
            json.loads(line)
            count += 1
    return count


def tfds_builder_class() -> type:
    """TFDS's builder of the sequences: the JSONL in the manual_dir, `json.loads` per line, the
    context as scalars, the steps as `tfds.features.Sequence`s, keyed by `id` (TFDS shuffles by
    hashed key). TFDS writes a `tf.train.Example` (not a SequenceExample): each Sequence is one
    flat list feature, `values` [steps, 2] flattened."""

    class BenchSequences(tfds.core.GeneratorBasedBuilder):
        """The sequence benchmark's sequences (bench/sequences.py)."""

        VERSION = tfds.core.Version("1.0.0")
        MANUAL_DOWNLOAD_INSTRUCTIONS = f"bench/sequences.py writes {NAME}.jsonl into the manual_dir."

        def _info(self) -> tfds.core.DatasetInfo:
            return tfds.core.DatasetInfo(builder=self, features=tfds.features.FeaturesDict({
                "id": tfds.features.Tensor(shape=(), dtype=np.int64),
                "label": tfds.features.Tensor(shape=(), dtype=np.int64),
                "tokens": tfds.features.Sequence(np.int64),
                "values": tfds.features.Sequence(tfds.features.Tensor(shape=(2,), dtype=np.float32)),
            }))

        def _split_generators(self, dl_manager: Any) -> dict[str, Any]:
            return {"train": self._generate_examples(os.fspath(dl_manager.manual_dir / f"{NAME}.jsonl"))}

        def _generate_examples(self, path: str) -> Any:
            with open(path, encoding="utf-8") as file:
                for line in file:
                    record = json.loads(line)
                    yield record["id"], {"id": record["id"], "label": record["label"],
                                         "tokens": record["tokens"], "values": record["values"]}

    return BenchSequences


def bench_build(paths: Paths, count: int, repeats: int) -> tuple[list[SequenceResult], tb.DatasetInfo, Any]:
    """Times the build cases; returns them, the info of the dataset `tb.build` wrote and the
    TFDS builder that built last (None without TFDS)."""
    infos: dict[int, tb.DatasetInfo] = {}
    records: list[bytes] = []

    def ours(workers: int) -> Callable[[], None]:
        def run() -> None:
            infos[workers] = tb.build(paths.spec, output=paths.ours, overwrite=True, workers=workers)
        return run

    def seed() -> None:
        nonlocal records
        records = build_seed_loop(paths.jsonl, paths.seed)

    cases: dict[str, Callable[[], Any]] = {case: ours(workers) for case, workers in zip(OURS, WORKERS)}
    cases[SEED_LOOP] = seed
    cases["context: `json.loads` alone over the file"] = lambda: json_loads_only(paths.jsonl)
    cases[FLOOR] = lambda: write_floor(records, shard_paths(paths.floor, NAME, SHARDS))
    # in this order: the floor writes what the seed loop serialised
    fresh = None
    if tfds is not None:
        fresh = tfds_case.FreshBuilds(tfds_builder_class(), paths.tfds, paths.root)
        cases[TFDS_BUILD] = fresh
    times = best_of_rounds(repeats, list(cases.values()))
    results = [SequenceResult("build", case, timing.seconds, count) for case, timing in zip(cases, times)]
    if fresh is not None:
        fresh.tidy()
    return with_ratios(results, reference=SEED_LOOP), infos[WORKERS[-1]], fresh and fresh.builder


def build_targets(build: list[SequenceResult]) -> list[Target]:
    """The build's targets (bench/README.md; issue 42's bars): 2 workers' time over the floor's (at
    most 5x), and 2 workers over 1 (at least 1.6x)."""
    seconds = {result.case: result.seconds for result in build}
    one, two = (seconds[case] for case in OURS)
    return [
        Target("sequence build, time over the TFRecordWriter floor", two / seconds[FLOOR], 5.0, at_least=False,
               note="`tb.build` (2 workers) time / floor time"),
        Target("sequence build, 2 workers over 1", one / two, 1.6, note="1 worker's time / 2 workers' time"),
    ]


# ---- read cases ---------------------------------------------------------------------------------------

def hand_specs() -> tuple[dict[str, Any], dict[str, Any]]:
    """The hand-written parse specs: context features, sequence (per-step) features."""
    context = {"id": tf.io.FixedLenFeature([], tf.int64), "label": tf.io.FixedLenFeature([], tf.int64)}
    sequence = {"tokens": tf.io.FixedLenSequenceFeature([], tf.int64),
                "values": tf.io.FixedLenSequenceFeature([2], tf.float32)}
    return context, sequence


def parse_batch_by_hand(batch: tf.Tensor) -> dict[str, tf.Tensor]:
    """A batch of records -> context and padded sequence features, and each record's length."""
    context_spec, sequence_spec = hand_specs()
    context, sequence, lengths = tf.io.parse_sequence_example(
        batch, context_features=context_spec, sequence_features=sequence_spec)
    return {**context, **sequence, "sequence_length": lengths["tokens"]}


def seed_per_record(files: list[str]) -> tf.data.Dataset:
    """TFRecordDataset -> map(parse_single_sequence_example) -> padded_batch."""
    context_spec, sequence_spec = hand_specs()
    dataset = tf.data.TFRecordDataset(files).map(
        lambda record: tf.io.parse_single_sequence_example(record, context_spec, sequence_spec))
    return dataset.padded_batch(BATCH_SIZE)


MODULE = "generated module `input_fn` (padded batches)"
LIBRARY = "`tb.input_fn` (padded batches)"
BUCKETED = f"generated module `input_fn`, `bucket_boundaries: {BUCKET_BOUNDARIES}`"
TFDS_READ = f"TFDS `builder.as_dataset(batch_size={BATCH_SIZE})` (its own shards, padded batches)"


def read_cases(paths: Paths, info: tb.DatasetInfo, builder: Any) -> dict[str, Callable[[], tf.data.Dataset]]:
    """Case -> dataset factory for every read pipeline, all over the shards `tb.build` wrote but
    TFDS's, which reads the shards TFDS wrote (`builder`, left out where it is None)."""
    module = import_module(os.path.join(info.path, f"{NAME}_input.py"))
    # the bucketing module: rendered from the spec with `input: {bucket_boundaries: ...}`, reading the same dataset
    bucketed_path = os.path.join(paths.modules, f"{NAME}_input.py")
    tb.generate_module(paths.bucketed_spec, bucketed_path, data_dir=info.path)
    bucketed = import_module(bucketed_path, f"{NAME}_bucketed_input")
    files = files_of(info)
    return {
        MODULE: lambda: module.input_fn("train", batch_size=BATCH_SIZE, shuffle=False),
        LIBRARY: lambda: tb.input_fn(info.path, "train", batch_size=BATCH_SIZE, shuffle=False),
        **hand_pipelines(files, BATCH_SIZE, parse_batch_by_hand),
        "seed: parse_single_sequence_example -> padded_batch": lambda: seed_per_record(files),
        BUCKETED: lambda: bucketed.input_fn("train", batch_size=BATCH_SIZE, shuffle=False),
        "floor: raw records, batched, no parsing": lambda: raw_records(files, BATCH_SIZE),
        **({TFDS_READ: lambda: tfds_case.as_dataset(builder, BATCH_SIZE)} if builder is not None else {}),
    }


def features_of(batch: Any) -> Any:
    """The features of a batch: raw records, a feature dict, or the seed's (context, sequence) pair."""
    if isinstance(batch, tuple):
        context, sequence = batch
        return {**context, **sequence}
    return batch


def batch_size_of(batch: Any) -> int:
    """Sequences in a batch."""
    batch = features_of(batch)
    return int((batch["id"] if isinstance(batch, dict) else batch).shape[0])


def check_epoch(case: str, dataset: tf.data.Dataset, data: Sequences) -> float | None:
    """One epoch (the warm-up): every sequence once, every step once (where lengths are given).

    Returns the padding: padded step slots / all step slots (batch x longest of the batch), or
    None for raw records."""
    seen = slots = steps = 0
    has_lengths = True
    for batch in dataset:
        batch = features_of(batch)
        if not isinstance(batch, dict):
            seen += int(batch.shape[0])
            continue
        size, width = batch["tokens"].shape
        if tuple(batch["values"].shape) != (size, width, 2):
            raise RuntimeError(f"{case}: values {batch['values'].shape}, expected [{size}, {width}, 2]")
        seen += size
        slots += size * width
        if "sequence_length" in batch:
            steps += int(tf.reduce_sum(batch["sequence_length"]))
        else:
            has_lengths = False
    if seen != len(data.lengths):
        raise RuntimeError(f"{case}: one epoch yielded {seen} sequences, expected {len(data.lengths)}")
    if not slots:
        return None
    if has_lengths and steps != data.total_steps:
        raise RuntimeError(f"{case}: one epoch yielded {steps} steps, expected {data.total_steps}")
    return 1.0 - data.total_steps / slots


def bench_read(paths: Paths, info: tb.DatasetInfo, builder: Any, data: Sequences,
               repeats: int) -> tuple[list[SequenceResult], list[Result]]:
    """Checks one epoch of each read pipeline (`check_epoch`, which also measures its padding),
    then times each in steady state, and ours and the hand-written ones for one cold pass
    (harness.steady_and_cold); ratios to the best hand-written pipeline of each table."""
    cases = read_cases(paths, info, builder)
    padding = {case: check_epoch(case, make(), data) for case, make in cases.items()}
    steady, cold = steady_and_cold(cases, (MODULE, LIBRARY), len(data.lengths), batch_size_of, repeats)
    return [SequenceResult(**asdict(result), padding=padding[result.case]) for result in steady], cold


# ---- checks -------------------------------------------------------------------------------------------

def parsed_sequences(files: list[str]) -> Sequences:
    """Every record of `files` parsed with the hand specs, ordered by `id` (ids checked to be 0..N-1)."""
    ids, labels, lengths, tokens, values = [], [], [], [], []
    for batch in raw_records(files, BATCH_SIZE):
        parsed = parse_batch_by_hand(batch)
        length = parsed["sequence_length"].numpy()
        mask = np.arange(parsed["tokens"].shape[1])[None, :] < length[:, None]
        ids.append(parsed["id"].numpy())
        labels.append(parsed["label"].numpy())
        lengths.append(length)
        tokens.append(parsed["tokens"].numpy()[mask])  # the real steps, record after record
        values.append(parsed["values"].numpy()[mask])
    return in_id_order(files, ids, labels, lengths, tokens, values)


def parsed_tfds_examples(files: list[str]) -> Sequences:
    """Every record TFDS wrote (a tf.train.Example: `id`, `label`, and `tokens` and `values` as
    flat lists), parsed by hand, ordered by `id` (ids checked to be 0..N-1)."""
    spec = {"id": tf.io.FixedLenFeature([], tf.int64), "label": tf.io.FixedLenFeature([], tf.int64),
            "tokens": tf.io.VarLenFeature(tf.int64), "values": tf.io.VarLenFeature(tf.float32)}
    ids, labels, lengths, tokens, values = [], [], [], [], []
    for batch in raw_records(files, BATCH_SIZE):
        parsed = tf.io.parse_example(batch, spec)
        token_lists = tf.RaggedTensor.from_sparse(parsed["tokens"])
        value_lists = tf.RaggedTensor.from_sparse(parsed["values"])
        length = token_lists.row_lengths().numpy()
        if not np.array_equal(value_lists.row_lengths().numpy(), 2 * length):
            raise RuntimeError(f"{os.path.dirname(files[0])}: a record's values are not 2 per token")
        ids.append(parsed["id"].numpy())
        labels.append(parsed["label"].numpy())
        lengths.append(length)
        tokens.append(token_lists.values.numpy())
        values.append(value_lists.values.numpy().reshape(-1, 2))
    return in_id_order(files, ids, labels, lengths, tokens, values)


def in_id_order(files: list[str], ids: list[np.ndarray], labels: list[np.ndarray], lengths: list[np.ndarray],
                tokens: list[np.ndarray], values: list[np.ndarray]) -> Sequences:
    """Parsed batches (each its records' ids, labels and lengths, and their steps one record
    after another) as Sequences in `id` order; the ids must be 0..N-1."""
    id_column, length_column = np.concatenate(ids), np.concatenate(lengths)
    order = np.argsort(id_column, kind="stable")
    if not np.array_equal(id_column[order], np.arange(len(id_column))):
        raise RuntimeError(f"{os.path.dirname(files[0])}: the ids are not 0..{len(id_column) - 1}, each once")
    starts = np.concatenate([[0], np.cumsum(length_column)[:-1]])
    ordered_lengths = length_column[order]
    # every step's position in the file order, taken sequence by sequence in id order
    steps = (np.repeat(starts[order] - np.concatenate([[0], np.cumsum(ordered_lengths)[:-1]]), ordered_lengths)
             + np.arange(int(ordered_lengths.sum())))
    return Sequences(ordered_lengths, np.concatenate(labels)[order],
                     np.concatenate(tokens)[steps], np.concatenate(values)[steps])


def differences(parsed: Sequences, data: Sequences) -> list[str]:
    """The columns whose values differ from the generated data (empty: none)."""
    expected = {"lengths": data.lengths, "label": data.labels, "tokens": data.tokens,
                "values": data.values.astype(np.float32)}
    received = {"lengths": parsed.lengths, "label": parsed.labels, "tokens": parsed.tokens, "values": parsed.values}
    return [name for name in expected
            if received[name].shape != expected[name].shape or not np.array_equal(received[name], expected[name])]


def checks(paths: Paths, info: tb.DatasetInfo, builder: Any, data: Sequences) -> dict[str, Any]:
    """Our records, the seed loop's and TFDS's against the generated data; the shards' bytes."""
    return {
        "differ_ours": differences(parsed_sequences(files_of(info)), data),
        "differ_seed": differences(parsed_sequences(shard_paths(paths.seed, NAME, SHARDS)), data),
        "differ_tfds": (differences(parsed_tfds_examples(tfds_case.files(builder)), data)
                        if builder is not None else None),
        "bytes_ours": info.splits["train"].num_bytes,
        "bytes_seed": total_bytes(shard_paths(paths.seed, NAME, SHARDS)),
        "bytes_tfds": tfds_case.num_bytes(builder) if builder is not None else None,
    }


# ---- report -------------------------------------------------------------------------------------------

def machine_info() -> dict[str, Any]:
    """The machine and the versions of the packages that matter here."""
    return machine({"tensorflow": tf.__version__, "numpy": np.__version__, "tfrecord_builder": tb.__version__,
                    "tfds": tfds_case.version()})


def padding_cell(result: SequenceResult) -> str:
    return "-" if result.padding is None else f"{100 * result.padding:.1f}%"


def report(count: int, repeats: int, build: list[SequenceResult], read: list[SequenceResult], cold: list[Result],
           extra: dict[str, Any], found: list[Target]) -> str:
    """The Markdown report: machine, build table, read tables (steady, cold), notes, targets."""
    bucketed = next(result for result in read if result.case == BUCKETED)

    if extra["differ_tfds"] is None:
        tfds_note = f" {tfds_case.missing_note()}"
    else:
        tfds_note = (f" TFDS: shard bytes {extra['bytes_tfds']:,} (tf.train.Examples of flat lists), records "
                     f"{same_values(extra['differ_tfds'])}.")

    return "\n".join([
        f"## Sequence benchmark: {count:,} sequences of {MIN_STEPS}-{MAX_STEPS} steps "
        f"({extra['steps']:,} steps; context id, label; per step tokens int64, values float32 [2]), "
        f"best of {repeats}",
        "",
        machine_line(machine_info()),
        "",
        f"### Build (JSONL, {extra['jsonl_bytes'] / 1024**2:,.1f} MiB -> {SHARDS} TFRecord shards of SequenceExamples)",
        "",
        results_table(build, "sequences", "seed loop", tfds_case.vs_tfds(build, TFDS_BUILD, OURS),
                      absent=tfds_case.absent(TFDS_BUILD)),
        "",
        f"### Read (one epoch, batch {BATCH_SIZE}, no shuffle)",
        "",
        results_table(read, "sequences", "the best hand-written", [Column("padding", padding_cell)],
                      absent=tfds_case.absent(TFDS_READ)),
        "",
        "One cold pass (a fresh pipeline: tracing, graph rewrites, opening the shards, one epoch):",
        "",
        results_table(cold, "sequences", "the best hand-written"),
        "",
        f"Padding (padded step slots / all step slots of one epoch): "
        f"{100 * read[0].padding:.1f}% without bucketing, "
        f"{100 * bucketed.padding:.1f}% with `bucket_boundaries: {BUCKET_BOUNDARIES}`. "
        f"Shard bytes: ours {extra['bytes_ours']:,}, seed loop {extra['bytes_seed']:,}. "
        f"Records against the generated data: ours {same_values(extra['differ_ours'])}, "
        f"seed loop {same_values(extra['differ_seed'])}.{tfds_note}",
        "",
        "### Targets",
        "",
        targets_table(found),
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser(__doc__, "--records", 50_000, "sequences to generate (default 50000)")
    args = parser.parse_args(argv)
    if args.records < 1:
        parser.error("--records: expected at least 1")
    paths = Paths(os.path.abspath(args.out))

    data, jsonl_bytes = prepare(paths, args.records)
    build, info, builder = bench_build(paths, args.records, args.repeats)
    extra = {"steps": data.total_steps, "jsonl_bytes": jsonl_bytes, **checks(paths, info, builder, data)}
    read, cold = bench_read(paths, info, builder, data, args.repeats)
    found = build_targets(build) + reading_targets("sequence", read, cold, MODULE, LIBRARY)

    print(report(args.records, args.repeats, build, read, cold, extra, found))
    document = {
        "records": args.records, "steps_per_record": [MIN_STEPS, MAX_STEPS], "repeats": args.repeats,
        "batch_size": BATCH_SIZE, "shards": SHARDS, "workers": list(WORKERS),
        "bucket_boundaries": BUCKET_BOUNDARIES, "machine": machine_info(), **extra,
        "tfds": tfds_case.settings(paths.root, BATCH_SIZE) if tfds is not None else tfds_case.MISSING,
    }
    write_json(paths.json, document, build, read + cold, targets=found)
    return 0


if __name__ == "__main__":
    sys.exit(main())
