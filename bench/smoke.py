"""A quick regression guard for the encoder and the reader: small builds and reads, in under a minute.

Run it before and after a change to the encoder (codec/, build/runners/, builders/, features/) or the
reader (read/tfdata.py, read.py):

    .venv/bin/python bench/smoke.py            # about 40 s on 2 cores
    .venv/bin/python bench/smoke.py --save     # ... and keep this run as the baseline

Each case is a ratio taken in this one run (so it holds across machines and their load):

- **build / floor**: `tb.build` (1 worker) of 50,000 rows of the tabular table and of 5,000
  sequences, over the time TFRecordWriter takes to write the same records (the I/O floor);
- **read / best hand-written**: one steady-state epoch of the generated module's `input_fn` and of
  `tb.input_fn` over the best of the three hand-written tf.data pipelines
  (harness.hand_pipelines) on the same shards: the table, the sequences, and 500 JPEG photos.

Builds are timed best of 3 interleaved rounds, reads best of 5 (harness.steady_and_cold). The table shows each ratio beside the saved
baseline's (bench/out/smoke.json, written with --save) and the change. The figures at these
sizes are not the full benchmark's (`make bench`): fixed costs weigh more; compare a run with the
baseline, not with the targets. A ratio 10% worse than the baseline, beyond the noise of a
shared machine, is worth a profile before the change goes in.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, Callable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

if __name__ != "__mp_main__":  # not in a build's spawned workers (bench/README.md)
    import tensorflow as tf  # noqa: F401  (imported up front: its import time is never timed)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the repository, should the package not be installed

import tfrecord_builder as tb  # noqa: E402
from harness import (  # noqa: E402
    OutputPaths, best_of_rounds, files_of, hand_pipelines, import_module, machine, machine_line, markdown_table,
    steady_and_cold, write_floor,
)
import images as image_data  # noqa: E402  (images.py's photos, spec and parse)
import sequences as sequence_data  # noqa: E402  (sequences.py's sequences, spec and parse)
import tabular as table_data  # noqa: E402  (tabular.py's table, spec and parse)

NAME = "smoke"
ROWS, SEQUENCES, PHOTOS, REPEATS = 50_000, 5_000, 500, 3
JPEG = image_data.DATASETS["jpeg"][0]


class Paths(OutputPaths):
    """bench/out/smoke/: the sources, specs and datasets; bench/out/smoke.json: the baseline."""

    def __init__(self, out: str) -> None:
        super().__init__(out, NAME)
        self.csv, self.jsonl = self.file("tabular.csv"), self.file("sequences.jsonl")
        self.photos = self.file("photos")
        self.floor = self.file("floor")


def write_sources(paths: Paths) -> dict[str, str]:
    """The three sources and their specs (the full benchmarks' data at smoke sizes): name -> spec path."""
    os.makedirs(paths.floor, exist_ok=True)
    output = os.path.basename(paths.ours)
    table_data.write_csv(paths.csv, ROWS)
    sequence_data.write_jsonl(paths.jsonl, sequence_data.generate(SEQUENCES))
    image_data.write_photos(paths.photos, PHOTOS)
    texts = {
        table_data.NAME: table_data.spec_text(os.path.basename(paths.csv), output),
        sequence_data.NAME: sequence_data.spec_text(os.path.basename(paths.jsonl), output),
        JPEG: image_data.spec_text(JPEG, image_data.DATASETS["jpeg"][1], os.path.basename(paths.photos), output),
    }
    specs = {}
    for name, text in texts.items():
        specs[name] = paths.file(f"{name}.yaml")
        with open(specs[name], "w", encoding="utf-8") as file:
            file.write(text)
    return specs


def stored_records(info: tb.DatasetInfo) -> list[bytes]:
    """The serialised records of a dataset's train split, as the floor writes them."""
    return [record.numpy() for record in tf.data.TFRecordDataset(files_of(info))]


def build_ratio(name: str, spec: str, paths: Paths) -> tuple[str, float]:
    """`tb.build` (1 worker) over writing its records with TFRecordWriter, best of the rounds."""
    info = tb.build(spec, output=paths.ours, overwrite=True, workers=1, progress=False)
    records = stored_records(info)
    floor = [os.path.join(paths.floor, f"{name}-{index}.tfrecord") for index in range(len(info.splits["train"].files))]
    build, write = best_of_rounds(REPEATS, [
        lambda: tb.build(spec, output=paths.ours, overwrite=True, workers=1, progress=False),
        lambda: write_floor(records, floor),
    ])
    return f"{name} build (1 worker) / floor", build.seconds / write.seconds


def read_ratios(name: str, info: tb.DatasetInfo, batch_size: int, parse: Callable[[Any], Any],
                size_of: Callable[[Any], int]) -> list[tuple[str, float]]:
    """The module's and `tb.input_fn`'s steady throughput over the best hand-written pipeline's."""
    module = import_module(os.path.join(info.path, f"{info.name}_input.py"), f"smoke_{info.name}_input")
    cases = {
        "module": lambda: module.input_fn("train", batch_size=batch_size, shuffle=False),
        "tb.input_fn": lambda: tb.input_fn(info.path, "train", batch_size=batch_size, shuffle=False),
        **hand_pipelines(files_of(info), batch_size, parse),
    }
    results, _ = steady_and_cold(cases, ("module", "tb.input_fn"), info.splits["train"].num_examples, size_of,
                                 REPEATS, cold=False)
    return [(f"{name} read, {result.case} / best hand-written", result.ratio) for result in results[:2]]


def run(paths: Paths) -> dict[str, float]:
    """Every smoke case: name -> ratio."""
    specs = write_sources(paths)
    ratios = dict([build_ratio(table_data.NAME, specs[table_data.NAME], paths),
                   build_ratio(sequence_data.NAME, specs[sequence_data.NAME], paths)])
    infos = {name: tb.load(os.path.join(paths.ours, name, "1.0.0")).info for name in specs if name != JPEG}
    infos[JPEG] = tb.build(specs[JPEG], output=paths.ours, overwrite=True, progress=False)
    ratios.update(read_ratios(table_data.NAME, infos[table_data.NAME], table_data.BATCH_SIZE,
                              table_data.parse_by_hand, table_data.batch_size_of))
    ratios.update(read_ratios(sequence_data.NAME, infos[sequence_data.NAME], sequence_data.BATCH_SIZE,
                              sequence_data.parse_batch_by_hand, sequence_data.batch_size_of))
    ratios.update(read_ratios("images", infos[JPEG], image_data.BATCH_SIZE, image_data.parse_by_hand,
                              image_data.batch_size_of))
    return ratios


def table(ratios: dict[str, float], baseline: dict[str, float]) -> str:
    """Each case's ratio, the baseline's and the change (for build / floor lower is better)."""
    rows = []
    for case, ratio in ratios.items():
        before = baseline.get(case)
        if before is None:
            change = "-"
        else:
            better = ratio < before if "floor" in case else ratio > before
            change = f"{ratio / before - 1:+.0%} ({'better' if better else 'worse'})" if abs(ratio / before - 1) >= 0.005 else "same"
        rows.append([case, f"{ratio:.2f}x", f"{before:.2f}x" if before is not None else "-", change])
    return markdown_table(["case", "ratio", "baseline", "change"], ["---", "---:", "---:", "---"], rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--save", action="store_true", help="keep this run as the baseline (bench/out/smoke.json)")
    parser.add_argument("--out", default=os.path.join(HERE, "out"), help="output folder (default bench/out)")
    args = parser.parse_args(argv)
    paths = Paths(os.path.abspath(args.out))
    start = time.perf_counter()
    ratios = run(paths)
    baseline: dict[str, float] = {}
    if os.path.exists(paths.json):
        with open(paths.json, encoding="utf-8") as file:
            baseline = json.load(file)["ratios"]
    print(f"## Smoke: {ROWS:,} rows, {SEQUENCES:,} sequences, {PHOTOS} photos, best of {REPEATS}\n")
    print(machine_line(machine({"tensorflow": tf.__version__, "tfrecord_builder": tb.__version__})) + "\n")
    print(table(ratios, baseline))
    print(f"\n{time.perf_counter() - start:.0f} s" + ("" if baseline else "; no baseline yet: run with --save"))
    if args.save:
        with open(paths.json, "w", encoding="utf-8") as file:
            json.dump({"ratios": ratios, "machine": machine({"tensorflow": tf.__version__})}, file, indent=2)
            file.write("\n")
        print(f"baseline written: {paths.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
