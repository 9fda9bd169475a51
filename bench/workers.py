"""Workers benchmark: a build with the default workers against the same build in one process.

Run by hand (everything it writes goes under bench/out/, which git ignores):

    .venv/bin/python bench/workers.py [--images N] [--rows N] [--sequences N] [--repeats R]

Four builds, each timed with `workers=1` (`--workers 1`) and with the default (`workers=None`:
the machine's cores), side by side: every round runs the eight in turn, and the best of R rounds
counts, with the CPU time of that call (this process and the worker processes it reaped):

- raw pixels: bench/images.py's N small photos (96x96 JPEG), `encoding: raw`;
- JPEG passthrough: the same photos, their files' bytes stored;
- table: bench/tabular.py's CSV of N rows;
- sequences: bench/sequences.py's JSONL of N sequences.

The default must never be the slow one (issue 28): the target is the default's time over the
one process's at most 1.05 (noise on a shared machine). A build starts workers only where its
work outlasts what they cost (build/encoding.py PARALLEL_SECONDS, write/shards.py POOL_BYTES),
so a small build runs in one process whatever the worker count. Prints a Markdown table and
writes the same as JSON to bench/out/workers.json.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Callable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the repository, should the package not be installed

import tfrecord_builder as tb  # noqa: E402
import images  # noqa: E402  (imports TensorFlow up front, as the other scripts: its import is never timed)
import sequences  # noqa: E402
import tabular  # noqa: E402
from harness import (  # noqa: E402
    OutputPaths, Result, Target, argument_parser, best_of_rounds, machine, machine_line, markdown_table,
    targets_table, write_json,
)

NAME = "workers"
BAR = 1.05  # the default's time over one process's, at most


def cases(out: str, count: int, rows: int, records: int) -> dict[str, tuple[str, int]]:
    """Writes each case's data and spec under `out`; returns each case's spec and record count."""
    photos = images.Paths(os.path.join(out, "photos"))
    images.prepare(photos, count, 0, 0)
    table = tabular.Paths(os.path.join(out, "table"))
    tabular.prepare(table, rows)
    lists = sequences.Paths(os.path.join(out, "sequences"))
    sequences.prepare(lists, records)
    return {
        f"raw pixels, {count:,} photos 96x96": (photos.spec(images.DATASETS["raw"][0]), count),
        f"JPEG passthrough, {count:,} photos 96x96": (photos.spec(images.DATASETS["jpeg"][0]), count),
        f"table, {rows:,} CSV rows": (table.spec, rows),
        f"sequences, {records:,} JSONL records": (lists.spec, records),
    }


def builds(specs: dict[str, tuple[str, int]], output: str) -> dict[tuple[str, int | None], Callable[[], Any]]:
    """A build of each case, with 1 worker and with the default (None)."""
    def build(spec: str, workers: int | None) -> Callable[[], Any]:
        return lambda: tb.build(spec, output=output, overwrite=True, workers=workers)
    return {(case, workers): build(spec, workers) for case, (spec, _) in specs.items() for workers in (1, None)}


def report(results: list[Result], found: list[Target], repeats: int, info: dict[str, Any]) -> str:
    by_case = {result.case: result for result in results}
    rows = []
    for target in found:
        one, default = by_case[f"{target.case}, 1 worker"], by_case[f"{target.case}, default"]
        rows.append([target.case, f"{one.seconds:.3f} s ({one.cpu_seconds:.2f} s CPU)",
                     f"{default.seconds:.3f} s ({default.cpu_seconds:.2f} s CPU)", f"{target.ratio:.2f}x"])
    return "\n".join([
        f"## Workers: the default ({os.cpu_count()} workers) against one process, best of {repeats}",
        "",
        f"{machine_line(info)}. Load average (1 min) {info['load_average'][0]:.2f} at the end.",
        "",
        markdown_table(["build", "`--workers 1`", "default", "default / 1 worker (time)"],
                       ["---", "---:", "---:", "---:"], rows),
        "",
        "### Targets",
        "",
        targets_table(found),
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser(__doc__, "--images", 2000, "small photos (default 2000)")
    parser.add_argument("--rows", type=int, default=200_000, help="CSV rows of the table build (default 200000)")
    parser.add_argument("--sequences", type=int, default=50_000, help="JSONL records of the sequence build (default 50000)")
    args = parser.parse_args(argv)
    if args.images < images.CLASSES:
        parser.error(f"--images: expected at least {images.CLASSES} (one per class)")
    paths = OutputPaths(os.path.abspath(args.out), NAME)
    specs = cases(paths.root, args.images, args.rows, args.sequences)
    runs = builds(specs, paths.ours)
    times = best_of_rounds(args.repeats, list(runs.values()))
    results = [Result("build", f"{case}, {'1 worker' if workers == 1 else 'default'}", timing.seconds,
                      specs[case][1], cpu_seconds=timing.cpu_seconds)
               for (case, workers), timing in zip(runs, times)]
    seconds = {result.case: result.seconds for result in results}
    found = [Target(case, seconds[f"{case}, default"] / seconds[f"{case}, 1 worker"], BAR, at_least=False,
                    note="build time, default workers / 1 worker") for case in specs]
    info = machine({"tfrecord_builder": tb.__version__}, load_average=True)
    print(report(results, found, args.repeats, info))
    write_json(paths.json, {"images": args.images, "rows": args.rows, "sequences": args.sequences,
                            "repeats": args.repeats, "default_workers": os.cpu_count(), "machine": info},
               results, [], targets=found)
    return 0


if __name__ == "__main__":
    sys.exit(main())
