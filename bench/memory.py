"""Peak memory of a build at two sizes: it must not grow with the number of records.

Builds the tabular benchmark's table (bench/tabular.py's synthetic CSV, 16 columns) at 100,000
and 1,000,000 rows, and the image benchmark's JPEG photos (bench/images.py, 96x96, passthrough)
at 2,000 and 20,000 images, each build in a fresh process, and reports each build's peak resident
memory (the build process, and its largest worker) and time. Run by hand, or by `make bench`:

    .venv/bin/python bench/memory.py [--rows 100000 1000000] [--images 2000 20000] [--workers 1 2] [--out DIR]

The targets: for each kind and number of workers, the build process's peak at the larger size
over the smaller at most MEMORY_BAR (flat: nothing that grows with the records). The data and the
datasets go under DIR/memory/, the report to DIR/memory.json (DIR: bench/out).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from harness import Target, machine, machine_line, run_info, targets_table  # noqa: E402  (no TensorFlow)

MEMORY_BAR = 1.25  # the larger build's peak over the smaller's, as bench/coco.py and sql_postgres.py

# This driver stays small on purpose: Linux carries a process's peak RSS over fork and exec, so a
# build started from a large process would report the parent's peak. Generating the table (in
# memory) and importing TensorFlow (which bench/tabular.py does) happen in their own processes.
PREPARE = """
import sys
sys.path.insert(0, sys.argv[1])
from tabular import spec_text, write_csv
write_csv(sys.argv[2], int(sys.argv[3]))
with open(sys.argv[4], "w", encoding="utf-8") as file:
    file.write(spec_text(sys.argv[5], sys.argv[6]))
"""
PREPARE_IMAGES = """
import sys
sys.path.insert(0, sys.argv[1])
from images import spec_text, write_photos
write_photos(sys.argv[2], int(sys.argv[3]))
with open(sys.argv[4], "w", encoding="utf-8") as file:
    file.write(spec_text("photos", "{type: image, encoding: jpeg, shape: [96, 96, 3]}", sys.argv[5], sys.argv[6]))
"""

# Runs one build and prints its peak RSS (kB): the process itself, and its largest worker.
MEASURE = """
import json, resource, sys, time
import tfrecord_builder as tb
start = time.perf_counter()
tb.build(sys.argv[1], output=sys.argv[2], overwrite=True, workers=int(sys.argv[3]))
print(json.dumps({"seconds": time.perf_counter() - start,
                  "self_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "workers_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def measure(spec: str, output: str, workers: int) -> dict:
    result = subprocess.run([sys.executable, "-c", MEASURE, spec, output, str(workers)],
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--images", type=int, nargs="+", default=[2_000, 20_000])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--out", default=os.path.join(HERE, "out"), help="output folder (default bench/out)")
    args = parser.parse_args(argv)
    folder = os.path.join(args.out, "memory")
    os.makedirs(folder, exist_ok=True)
    results = []
    for kind, sizes, prepare in (("rows", args.rows, PREPARE), ("images", args.images, PREPARE_IMAGES)):
        for size in sizes:
            data = os.path.join(folder, f"{kind}-{size}" + (".csv" if kind == "rows" else ""))
            spec = os.path.join(folder, f"{kind}-{size}.yaml")
            if not os.path.exists(spec):
                subprocess.run([sys.executable, "-c", prepare, HERE, data, str(size), spec,
                                os.path.basename(data), f"build-{kind}-{size}"], check=True, capture_output=True)
            for workers in args.workers:
                result = measure(spec, os.path.join(folder, f"build-{kind}-{size}"), workers)
                results.append({"kind": kind, "size": size, "workers": workers, **result})
                print(f"{size:>9,} {kind}, {workers} worker(s): peak {result['self_kb'] / 1024:7.1f} MiB "
                      f"(largest worker {result['workers_kb'] / 1024:6.1f} MiB), {result['seconds']:6.1f} s, "
                      f"{size / result['seconds']:,.0f} {kind}/s", flush=True)
    print()
    print("| build | workers | peak, smaller | peak, 10x larger | ratio |")
    print("| --- | ---: | ---: | ---: | ---: |")
    targets = []
    for kind, sizes in (("rows", args.rows), ("images", args.images)):
        for workers in args.workers:
            peaks = [r["self_kb"] / 1024 for r in results if r["kind"] == kind and r["workers"] == workers]
            print(f"| {sizes[0]:,} / {sizes[-1]:,} {kind} | {workers} | {peaks[0]:.0f} MiB | {peaks[-1]:.0f} MiB "
                  f"| {peaks[-1] / peaks[0]:.2f} |")
            if len(sizes) > 1:
                targets.append(Target(f"build memory, {sizes[-1]:,} over {sizes[0]:,} {kind}, {workers} worker(s)",
                                      peaks[-1] / peaks[0], MEMORY_BAR, at_least=False,
                                      note="peak resident memory of the build process"))
    info = machine({}, load_average=True)
    print("\n" + targets_table(targets) + "\n\n" + machine_line(info))
    with open(os.path.join(args.out, "memory.json"), "w", encoding="utf-8") as file:
        json.dump({"rows": args.rows, "images": args.images, "results": results, "time": time.time(), "machine": info,
                   "targets": [target.as_json() for target in targets], "run": run_info()}, file, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
