"""A DataFrame source against the same rows from Parquet: the issue asks `tb.build(spec,
source=frame)` to be at least 0.9x the speed of `builder: parquet` on the same rows.

Run by hand (everything it writes goes under bench/out/frames/, which git ignores):

    .venv/bin/python bench/frames.py [--rows 1000000] [--repeats 2] [--workers 2]

1. Makes N rows (seeded numpy) of 12 columns: 4 int64, 3 float64, 2 short texts, a bool, a
   variable-length int64 list (0-8 values) and a text label of 5 classes, and writes them once
   as an Arrow IPC file (the cases' common input) and once as a Parquet file (row groups of
   65,536 rows, Snappy, pyarrow's defaults).
2. Builds the same spec four ways, each build in a fresh process (Linux carries a process's peak
   RSS over fork and exec, so this driver stays small): from the Parquet file (`builder:
   parquet`), and from the rows as a pandas DataFrame, a pyarrow Table and a polars DataFrame
   (`tb.build(spec, source=frame)`). A case's process first makes its frame from the IPC file
   (not timed), then times `tb.build` with `workers` processes.
3. Prints each case's best time over the rounds, rows/s, its ratio to Parquet's, the peak RSS of
   the build's process (the frame's own memory included: it is the caller's) and of its largest
   worker, and checks that every case wrote the same shards, byte for byte. Writes the same as
   JSON to bench/out/frames.json, with the targets (issue 41): each DataFrame case at least
   SPEED_BAR (0.9x) Parquet's speed.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "out", "frames")
REPORT = os.path.join(HERE, "out", "frames.json")
sys.path.insert(0, HERE)

from harness import Target, machine, machine_line, run_info, targets_table  # noqa: E402  (no TensorFlow)

SPEED_BAR = 0.9  # a DataFrame source's speed over the same rows from Parquet (issue 41)

SPEC = """name: frames
source: {source}
features:
  a: {{dtype: int64}}
  b: {{dtype: int64}}
  c: {{dtype: int64}}
  d: {{dtype: int64}}
  x: {{dtype: float32}}
  y: {{dtype: float32}}
  z: {{dtype: float64}}
  name: {{dtype: string}}
  city: {{dtype: string}}
  flag: {{dtype: bool}}
  ids: {{dtype: int64, shape: [null]}}
  label: {{type: class_label, names: [ant, bee, cat, dog, eel]}}
splits: {{train: 0.8, test: 0.2}}
output: {{shards: 4}}
"""

MAKE = """
import sys
import numpy as np, pyarrow as pa, pyarrow.parquet as pq
rows = int(sys.argv[1])
rng = np.random.default_rng(41)
lengths = rng.integers(0, 9, rows)
offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
words = np.array(["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"])
table = pa.table({
    "a": rng.integers(-10**9, 10**9, rows), "b": rng.integers(0, 1000, rows),
    "c": rng.integers(-5, 5, rows), "d": np.arange(rows, dtype=np.int64),
    "x": rng.random(rows), "y": rng.normal(size=rows), "z": rng.random(rows) * 1e6,
    "name": pa.array(np.char.add(words[rng.integers(0, 8, rows)], rng.integers(0, 10**6, rows).astype(str))),
    "city": pa.array(words[rng.integers(0, 8, rows)]),
    "flag": rng.random(rows) < 0.5,
    "ids": pa.ListArray.from_arrays(pa.array(offsets), pa.array(rng.integers(0, 10**6, int(offsets[-1])))),
    "label": pa.array(np.array(["ant", "bee", "cat", "dog", "eel"])[rng.integers(0, 5, rows)]),
})
with pa.OSFile(sys.argv[2], "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
    writer.write_table(table)
pq.write_table(table, sys.argv[3], row_group_size=65536)
"""

# One build in a fresh process: its frame made first (not timed), then tb.build timed.
MEASURE = """
import json, resource, sys, time
import pyarrow as pa
import tfrecord_builder as tb
kind, rows_file, spec, out, workers = sys.argv[1:6]
frame = None
if kind != "parquet":
    table = pa.ipc.open_file(pa.memory_map(rows_file, "r")).read_all().combine_chunks()
    if kind == "pandas":
        frame = table.to_pandas()
    elif kind == "polars":
        import polars
        frame = polars.from_arrow(table)
    else:
        frame = table
    del table
before_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
tb.build(spec, output=out, overwrite=True, workers=int(workers), progress=False,
         **({"source": frame} if frame is not None else {}))
print(json.dumps({"seconds": time.perf_counter() - start, "before_kb": before_kb,
                  "self_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "workers_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""

CASES = ("parquet", "pandas", "pyarrow", "polars")


def shards_digest(folder: str) -> str:
    digest = hashlib.sha256()
    for root, _, names in sorted(os.walk(folder)):
        for name in sorted(names):
            if ".tfrecord-" in name:
                with open(os.path.join(root, name), "rb") as file:
                    digest.update(name.encode() + file.read())
    return digest.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    os.makedirs(OUT, exist_ok=True)
    rows_file, parquet_file = os.path.join(OUT, "rows.arrow"), os.path.join(OUT, "rows.parquet")
    subprocess.run([sys.executable, "-c", MAKE, str(args.rows), rows_file, parquet_file], check=True)
    specs = {}
    for kind in CASES:
        specs[kind] = os.path.join(OUT, f"{kind}.yaml")
        source = "{builder: parquet, path: rows.parquet}" if kind == "parquet" else "{builder: dataframe}"
        with open(specs[kind], "w", encoding="utf-8") as file:
            file.write(SPEC.format(source=source))
    best: dict[str, dict] = {}
    digests = {}
    for _ in range(args.repeats):
        for kind in CASES:  # each round runs every case once, in turn
            out = os.path.join(OUT, "build", kind)
            done = subprocess.run([sys.executable, "-c", MEASURE, kind, rows_file, specs[kind], out,
                                   str(args.workers)], check=True, capture_output=True, text=True)
            found = json.loads(done.stdout.strip().splitlines()[-1])
            if kind not in best or found["seconds"] < best[kind]["seconds"]:
                best[kind] = found
            digests[kind] = shards_digest(out)
    same = len(set(digests.values())) == 1
    reference = best["parquet"]["seconds"]
    lines = ["| source | seconds | rows/s | vs Parquet | peak RSS, build process | before the build | largest worker |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for kind in CASES:
        found = best[kind]
        lines.append(f"| {kind} | {found['seconds']:.1f} | {args.rows / found['seconds']:,.0f} | "
                     f"{reference / found['seconds']:.2f}x | {found['self_kb'] / 1024:,.0f} MiB | "
                     f"{found['before_kb'] / 1024:,.0f} MiB | {found['workers_kb'] / 1024:,.0f} MiB |")
    print("\n".join(lines))
    print(f"\n{args.rows:,} rows, {args.workers} workers, best of {args.repeats}; shards byte-identical across "
          f"cases: {same}; {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    targets = [Target(f"DataFrame source, {kind}, over Parquet", reference / best[kind]["seconds"], SPEED_BAR,
                      note=f"Parquet's time / the {kind} frame's, {args.workers} workers") for kind in CASES[1:]]
    info = machine({}, load_average=True)
    print("\n" + targets_table(targets) + "\n\n" + machine_line(info))
    with open(REPORT, "w", encoding="utf-8") as file:
        json.dump({"rows": args.rows, "workers": args.workers, "repeats": args.repeats, "same_shards": same,
                   "cases": best, "machine": info, "targets": [target.as_json() for target in targets],
                   "run": run_info()}, file, indent=2)
    if not same:
        sys.exit("the cases wrote different shards: " + json.dumps(digests))


if __name__ == "__main__":
    main()
