"""Bad rows under `on_error: skip`: a bad row must cost about its own row, not the build.

Run by hand (everything it writes goes under bench/out/, which git ignores):

    .venv/bin/python bench/bad_rows.py [--rows N] [--repeats R] [--bad 0 10 1000] [--workers W]

1. Writes the tabular benchmark's synthetic CSV (bench/tabular.py: N rows x 16 columns, default
   1,000,000) once per case, with `not-a-number` in the float column `price` of 0, 10 and 1,000
   rows spread evenly over the table (so that as many batches as possible hold one), and its spec
   with `on_error: skip`.
2. Times `tb.build` of each (CSV reading included, W workers, default the machine's cores), best
   of R interleaved rounds, in rows/s, with each case's time over the clean table's.
3. Checks every build: the bad rows and only they are in `skipped.jsonl`, in order, each with
   its own line and reason, and the dataset holds the other N - bad rows.
4. Prints a Markdown table, the targets and the machine, and writes them as JSON to
   bench/out/bad_rows.json.

Before issue 27 a batch with a bad row was encoded again row by row: 7 bad cells in 50,000 rows
built in 83 s against 0.6 s. Now the bad rows are found feature by feature (a failing column is
searched from the row its error names) and the rest of the batch encoded once
(build/encode_batch.py, `encode_good_rows`), so a bad row costs about an encoding of its column from
that row on, and the batch's other features are encoded once.
"""
from __future__ import annotations

import csv
import json
import os
import sys
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the repository, should the package not be installed

import tfrecord_builder as tb  # noqa: E402
from harness import (  # noqa: E402
    OutputPaths, Result, Target, argument_parser, best_of_rounds, machine, machine_line, results_table,
    targets_table, with_ratios, write_json,
)
from tabular import COLUMNS, generate_columns, spec_text  # noqa: E402  (the same table)

NAME = "bad_rows"
BAD_COLUMN = "price"  # a float32 feature
BAD_CELL = "not-a-number"
# a bad row may cost a few rows' encodings, never a batch's: a build with bad rows (1,000 in
# 1,000,000 put one in every batch) takes at most this much longer than the clean one (row by row,
# 7 in 50,000 took 140 times as long)
BAR = 1.5


class Paths(OutputPaths):
    """Where the benchmark writes: bench/out/bad_rows/, a CSV, a spec and a build per case."""

    def case(self, bad: int) -> tuple[str, str]:
        """The spec and the build folder of the table with `bad` bad rows."""
        return self.file(f"bad{bad}.yaml"), self.file("build", f"bad{bad}")


def bad_rows(rows: int, count: int) -> list[int]:
    """`count` rows spread evenly over `rows`, the first not at row 0."""
    return [(index * rows) // count + rows // (2 * count) for index in range(count)] if count else []


def prepare(paths: Paths, rows: int, counts: list[int]) -> None:
    """Writes each case's CSV (the tabular table with BAD_CELL at its bad rows) and spec."""
    os.makedirs(paths.file("build"), exist_ok=True)
    columns = generate_columns(rows)
    clean = columns[BAD_COLUMN]
    for count in counts:
        cells = list(clean)
        for row in bad_rows(rows, count):
            cells[row] = BAD_CELL
        columns[BAD_COLUMN] = cells
        spec, build = paths.case(count)
        csv_name = f"bad{count}.csv"
        with open(paths.file(csv_name), "w", newline="", encoding="utf-8") as file:
            writer = csv.writer(file)
            writer.writerow(COLUMNS)
            writer.writerows(zip(*(columns[name] for name in COLUMNS)))
        text = spec_text(csv_name, os.path.relpath(build, paths.root)).replace("name: tabular\n", f"name: {NAME}\n")
        with open(spec, "w", encoding="utf-8") as file:
            file.write(text + "on_error: skip\n")


def check(info: tb.DatasetInfo, rows: int, count: int) -> list[str]:
    """What is wrong with a case's build: its skipped list, its record count (empty: nothing)."""
    csv_name = f"bad{count}.csv"
    expected = [{"record": f"{csv_name}, line {row + 2}",
                 "reason": f"{csv_name}, line {row + 2}: feature `{BAD_COLUMN}`: expected a number (float32), "
                           f"received {BAD_CELL!r}"} for row in bad_rows(rows, count)]
    path = os.path.join(info.path, "skipped.jsonl")
    skipped = []
    if os.path.exists(path):
        with open(path, encoding="utf-8") as file:
            skipped = [json.loads(line) for line in file]
    faults = []
    if skipped != expected:
        faults.append(f"{count} bad rows: skipped.jsonl lists {len(skipped)} rows, not the {count} expected")
    if info.splits["train"].num_examples != rows - count:
        faults.append(f"{count} bad rows: {info.splits['train'].num_examples} records, not {rows - count}")
    return faults


def case_name(count: int) -> str:
    return f"{count:,} bad rows" if count else "no bad rows"


def bench(paths: Paths, rows: int, counts: list[int], repeats: int, workers: int | None) -> tuple[list[Result], list[str]]:
    """Times the builds, checks them; returns the results (ratios to the clean table's) and the faults."""
    infos: dict[int, tb.DatasetInfo] = {}

    def build(count: int) -> None:
        spec, output = paths.case(count)
        infos[count] = tb.build(spec, output=output, overwrite=True, workers=workers)

    timings = best_of_rounds(repeats, [lambda count=count: build(count) for count in counts])
    results = [Result("build", case_name(count), timing.seconds, rows, timing.cpu_seconds)
               for count, timing in zip(counts, timings)]
    faults = [fault for count in counts for fault in check(infos[count], rows, count)]
    return with_ratios(results, case_name(counts[0])), faults


def targets(results: list[Result], counts: list[int]) -> list[Target]:
    """Each table with bad rows: its build time over the clean table's, at most BAR."""
    clean = results[0]
    return [Target(f"build with {case_name(count)} in {clean.items:,}", result.seconds / clean.seconds, BAR,
                   at_least=False, note="build time / clean table's build time")
            for count, result in zip(counts[1:], results[1:])]


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser(__doc__, "--rows", 1_000_000, "rows of the synthetic CSV (default 1000000)")
    parser.add_argument("--bad", type=int, nargs="+", default=[0, 10, 1000],
                        help="bad rows per case, the first the reference (default 0 10 1000)")
    parser.add_argument("--workers", type=int, default=None, help="build workers (default the machine's cores)")
    args = parser.parse_args(argv)
    paths = Paths(os.path.abspath(args.out), NAME)
    prepare(paths, args.rows, args.bad)
    results, faults = bench(paths, args.rows, args.bad, args.repeats, args.workers)
    found = targets(results, args.bad)
    info = machine({"tfrecord_builder": tb.__version__})
    print(f"## Bad rows under on_error: skip ({args.rows:,} rows, best of {args.repeats})\n")
    print(results_table(results, "rows", case_name(args.bad[0])))
    print("\nChecks: " + ("; ".join(faults) if faults else "every build skipped exactly its bad rows, "
                                                               "in order, with their reasons"))
    print("\n" + targets_table(found) + "\n\n" + machine_line(info))
    document = {"rows": args.rows, "bad": args.bad, "repeats": args.repeats, "workers": args.workers,
                "bad_column": BAD_COLUMN, "machine": info, "faults": faults}
    write_json(paths.json, document, results, [], targets=found)
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
