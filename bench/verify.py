"""Verify benchmark: `verify` against the build whose dataset it checks, on a CSV table.

Run by hand (everything it writes goes under bench/out/, which git ignores):

    .venv/bin/python bench/verify.py [--rows N] [--repeats R] [--no-old]

1. Generates a deterministic synthetic CSV (seeded NumPy) of N rows x 16 columns, the mix of
   tabular.py's table with range-checked dtypes among the integers: int64 `id` and `big`,
   uint8 `age`, int32 `count` and `delta`, a class_label `category` (10 classes), 6 float32,
   3 short strings and `tokens`, a variable-length int64 list (0-8 values, whitespace-separated
   in its cell); and its spec (4 shards).
2. Times, in interleaved rounds (the best of R counts):
   - build: `tb.build(spec, output=..., overwrite=True)`, CSV reading included, with its default
     workers (the machine's cores);
   - verify: `verify(path)` with its default workers (the machine's cores), and with 1;
   - the old verify: `verify(path, workers=1, reader="records")`, every record parsed and checked
     in Python, one at a time, in one process: what verify did before it read columns
     (left out with --no-old: about 3 minutes per round at 300,000 rows).
3. Prints a Markdown table (each case's time and its ratio to the build's and to the old
   verify's), the target (`verify`'s time at most BAR, 1.5x, the build's) and the machine, and
   writes the same as JSON to bench/out/verify.json.

Before timing, every verify case must pass the freshly built dataset with N records.
No TensorFlow is imported: neither the build nor verify needs it.
"""
from __future__ import annotations

import csv
import json
import os
import sys
from typing import Any, Callable

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the repository, should the package not be installed

import tfrecord_builder as tb  # noqa: E402
from tfrecord_builder.tools.verify import verify  # noqa: E402
from harness import (  # noqa: E402
    Column, OutputPaths, Result, Target, argument_parser, best_of_rounds, machine, machine_line, results_table,
    run_info, targets_table, with_ratios,
)

NAME = "verify"
BAR = 1.5  # verify's time (default workers) over the build's, at most
SHARDS = 4
SEED = 20240601
MAX_LIST = 8

FEATURES = {  # column: its declaration in the spec
    "id": "{dtype: int64}", "age": "{dtype: uint8}", "count": "{dtype: int32}",
    "category": "{type: class_label, num_classes: 10}", "big": "{dtype: int64}", "delta": "{dtype: int32}",
    **{name: "{dtype: float32}" for name in ("price", "score", "ratio", "lat", "lon", "noise")},
    **{name: "{dtype: string}" for name in ("city", "color", "code")},
    "tokens": "{dtype: int64, shape: [null]}",
}


# ---- data and spec --------------------------------------------------------------------------------

def generate_columns(rows: int, seed: int = SEED) -> dict[str, list[str]]:
    """The CSV's cells by column, as text; deterministic for a given `rows` and `seed`."""
    rng = np.random.default_rng(seed)
    numbers = {
        "id": np.arange(rows), "age": rng.integers(0, 256, size=rows), "count": rng.poisson(3.0, size=rows),
        "category": rng.integers(0, 10, size=rows), "big": rng.integers(-(2**62), 2**62, size=rows),
        "delta": rng.integers(-1000, 1000, size=rows),
    }
    columns = {name: [str(value) for value in values.tolist()] for name, values in numbers.items()}
    floats = {"price": rng.lognormal(3.0, 1.0, size=rows), "score": rng.random(size=rows),
              "ratio": rng.normal(0.0, 1.0, size=rows), "lat": rng.uniform(-90.0, 90.0, size=rows),
              "lon": rng.uniform(-180.0, 180.0, size=rows), "noise": rng.normal(0.0, 1e-3, size=rows)}
    columns.update({name: [f"{value:.7g}" for value in values.tolist()] for name, values in floats.items()})
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    for name, size in (("city", 200), ("color", 12), ("code", 5000)):
        words = np.array(["".join(rng.choice(letters, size=int(length))) for length in rng.integers(3, 9, size=size)])
        columns[name] = words[rng.integers(0, size, size=rows)].tolist()
    lengths = rng.integers(0, MAX_LIST + 1, size=rows)
    values = rng.integers(0, 1000, size=int(lengths.sum())).astype(str).tolist()
    ends = np.cumsum(lengths).tolist()
    columns["tokens"] = [" ".join(values[end - length : end]) for end, length in zip(ends, lengths.tolist())]
    return columns


def write_csv(path: str, rows: int) -> None:
    columns = generate_columns(rows)
    with open(path, "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(list(FEATURES))
        writer.writerows(zip(*(columns[name] for name in FEATURES)))


def spec_text(csv_name: str) -> str:
    return "\n".join([
        f"name: {NAME}", "version: 1.0.0", f"source: {{builder: csv, path: {csv_name}}}", "splits: {train: 1.0}",
        "features:", *(f"  {name}: {declaration}" for name, declaration in FEATURES.items()),
        f"output: {{shards: {SHARDS}}}", "",
    ])


class Paths(OutputPaths):
    """bench/out/verify/: the CSV, the spec and the dataset; bench/out/verify.json."""

    def __init__(self, out: str) -> None:
        super().__init__(out, NAME)
        self.csv = self.file(f"{NAME}.csv")
        self.spec = self.file(f"{NAME}.yaml")


def prepare(paths: Paths, rows: int) -> None:
    os.makedirs(paths.root, exist_ok=True)
    write_csv(paths.csv, rows)
    with open(paths.spec, "w", encoding="utf-8") as file:
        file.write(spec_text(os.path.basename(paths.csv)))


# ---- cases ------------------------------------------------------------------------------------------

BUILD = "`tb.build` (default workers)"
VERIFY = "`verify` (default workers)"
VERIFY_ONE = "`verify`, 1 worker"
OLD = "old `verify`: per record, 1 process (`reader=\"records\"`)"


def cases(paths: Paths, old: bool) -> dict[str, Callable[[], Any]]:
    """The timed calls, in the order each round runs them (the build first: verify reads what it wrote)."""
    dataset = os.path.join(paths.ours, NAME, "1.0.0")
    timed = {
        BUILD: lambda: tb.build(paths.spec, output=paths.ours, overwrite=True),
        VERIFY: lambda: verify(dataset),
        VERIFY_ONE: lambda: verify(dataset, workers=1),
    }
    if old:
        timed[OLD] = lambda: verify(dataset, workers=1, reader="records")
    return timed


def check(paths: Paths, rows: int) -> None:
    """Builds the dataset; every verify case (but the slow old one) passes it, with all its records."""
    for case, run in cases(paths, old=False).items():
        result = run()
        if case != BUILD and not (result.ok and result.num_records == rows):
            raise RuntimeError(f"{case}: {result.num_records} records, faults {result.faults[:3]}")


def report(rows: int, repeats: int, results: list[Result]) -> str:
    by_case = {result.case: result for result in results}
    build, old = by_case[BUILD], by_case.get(OLD)
    extra = [Column("time / build", lambda result: f"{result.seconds / build.seconds:.2f}")]
    if old is not None:
        extra.append(Column("time / old verify", lambda result: f"{result.seconds / old.seconds:.3f}"))
    return "\n".join([
        f"## Verify benchmark: {rows:,} rows x {len(FEATURES)} columns, {SHARDS} shards, best of {repeats}",
        "",
        machine_line(machine_info()),
        "",
        results_table(results, "rows", "build", extra),
    ])


def machine_info() -> dict[str, Any]:
    return machine({"numpy": np.__version__, "tfrecord_builder": tb.__version__}, load_average=True)


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser(__doc__, "--rows", 300_000, "rows of the synthetic CSV (default 300000)")
    parser.add_argument("--no-old", action="store_true", help="leave out the old per-record verify (slow)")
    args = parser.parse_args(argv)
    paths = Paths(os.path.abspath(args.out))
    prepare(paths, args.rows)
    check(paths, args.rows)
    timed = cases(paths, not args.no_old)
    timings = best_of_rounds(args.repeats, list(timed.values()))
    results = with_ratios([Result("verify", case, timing.seconds, args.rows, timing.cpu_seconds)
                           for case, timing in zip(timed, timings)], reference=BUILD)
    print(report(args.rows, args.repeats, results))
    seconds = {result.case: result.seconds for result in results}
    targets = [Target("verify, time over the build's", seconds[VERIFY] / seconds[BUILD], BAR, at_least=False,
                      note="`verify` (default workers) time / `tb.build` (default workers) time")]
    print("\n" + targets_table(targets))
    document = {"rows": args.rows, "columns": len(FEATURES), "shards": SHARDS, "repeats": args.repeats,
                "machine": machine_info(), "results": [result.as_json() for result in results],
                "targets": [target.as_json() for target in targets], "run": run_info()}
    with open(paths.json, "w", encoding="utf-8") as file:
        json.dump(document, file, indent=2)
        file.write("\n")
    print(f"\nwritten: {paths.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
