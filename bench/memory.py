"""Peak memory of a build at two sizes: it must not grow with the number of rows.

Builds the tabular benchmark's table (bench/tabular.py's synthetic CSV, 16 columns) at 100,000
and 1,000,000 rows, each in a fresh process, and reports each build's peak resident memory (the
build process, and its worker processes) and time. Run by hand:

    .venv/bin/python bench/memory.py [--rows 100000 1000000] [--workers 1 2] [--out bench/out/memory]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

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
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--out", default=os.path.join(HERE, "out", "memory"))
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    results = []
    for rows in args.rows:
        csv_path = os.path.join(args.out, f"table-{rows}.csv")
        spec = os.path.join(args.out, f"table-{rows}.yaml")
        if not os.path.exists(csv_path):
            subprocess.run([sys.executable, "-c", PREPARE, HERE, csv_path, str(rows), spec,
                            os.path.basename(csv_path), f"build-{rows}"], check=True, capture_output=True)
        for workers in args.workers:
            result = measure(spec, os.path.join(args.out, f"build-{rows}"), workers)
            results.append({"rows": rows, "workers": workers, **result})
            print(f"{rows:>9,} rows, {workers} worker(s): peak {result['self_kb'] / 1024:7.1f} MiB "
                  f"(largest worker {result['workers_kb'] / 1024:6.1f} MiB), {result['seconds']:6.1f} s, "
                  f"{rows / result['seconds']:,.0f} rows/s", flush=True)
    by_workers = {}
    for result in results:
        by_workers.setdefault(result["workers"], []).append(result)
    print()
    print("| workers | " + " | ".join(f"peak at {r['rows']:,} rows" for r in by_workers[args.workers[0]]) + " | ratio |")
    print("| ---: |" + " ---: |" * (len(args.rows) + 1))
    for workers, rows in by_workers.items():
        peaks = [r["self_kb"] / 1024 for r in rows]
        print(f"| {workers} | " + " | ".join(f"{peak:.0f} MiB" for peak in peaks) + f" | {peaks[-1] / peaks[0]:.2f} |")
    with open(os.path.join(args.out, "memory.json"), "w", encoding="utf-8") as file:
        json.dump({"results": results, "time": time.time()}, file, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
