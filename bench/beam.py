"""Beam benchmark: our local runner, our Beam runner and a hand-written Beam pipeline, one run.

Run by hand (everything it writes goes under bench/out/beam/, which git ignores):

    .venv/bin/python bench/beam.py [--rows N] [--images M] [--workers W]

Needs the Beam environments `make bench` makes: `.venv-beam` (our package and Apache Beam, no
TensorFlow: what a build's workers need) and `.venv-beam-bench` (the same plus tensorflow-cpu, for
the hand-written pipeline, which builds `tf.train.Example`s as TFX and tfrecorder do).

1. A table of N rows x 16 columns (bench/tabular.py's, default 1,000,000) and M synthetic photos
   (bench/images.py's generator, 96x96 JPEGs in 10 class folders, default 20,000), resized to
   64x64 and re-encoded as JPEG (quality 90, bilinear: the same work both ways).
2. Each built three ways, side by side, each in its own process, wall time measured around it:
   - ours, local runner: `tfrecord-builder build --workers W`;
   - ours, Beam runner: `build --runner beam` (DirectRunner, multi-processing, W workers);
   - hand-written Beam, as TFX and tfrecorder write it: read (ReadFromText / MatchFiles +
     ReadMatches), a `Map` to a `tf.train.Example` per row (Pillow resize and encode for images),
     `WriteToTFRecord(num_shards=4)`, on the same DirectRunner settings (bench/beam_hand.py).
3. Peak memory of each Beam worker process (the largest resident set seen, sampled every 0.1 s)
   for our Beam runner at N/10 and N rows: flat means a worker's memory doesn't grow with the data.
4. Prints Markdown tables with ratios and the target (memory flat: the largest Beam worker's peak
   at N rows over that at N/10 at most MEMORY_BAR) and writes bench/out/beam.json.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

LOCAL = os.path.join(ROOT, ".venv", "bin", "python")
BEAM = os.path.join(ROOT, ".venv-beam", "bin", "python")
BEAM_TF = os.path.join(ROOT, ".venv-beam-bench", "bin", "python")
OUT = os.path.join(HERE, "out", "beam")

from harness import Target, machine, machine_line, rss_by_pid, run_info, targets_table  # noqa: E402

MEMORY_BAR = 1.25  # the larger build's peak over the smaller's, as bench/memory.py


def timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, dict[int, int]]:
    """Runs `command`; its wall time and the peak resident bytes of each process it started."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, env={**os.environ, **(env or {})},
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peaks: dict[int, int] = {}

    def sample() -> None:
        while process.poll() is None:
            for pid, rss in rss_by_pid(process.pid).items():
                peaks[pid] = max(peaks.get(pid, 0), rss)
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, stderr = process.communicate()
    elapsed = time.perf_counter() - started
    sampler.join()
    if process.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{stderr[-3000:]}")
    peaks.pop(process.pid, None)  # the driver: its workers are what a remote job would run
    return elapsed, peaks


def prepare(rows: int, images: int) -> dict[str, str]:
    import tabular  # noqa: the table and spec of the tabular benchmark (imports TensorFlow)
    import images as image_bench

    os.makedirs(OUT, exist_ok=True)
    paths = {}
    for count in (rows // 10, rows):
        csv_path = os.path.join(OUT, f"table-{count}.csv")
        if not os.path.exists(csv_path):
            tabular.write_csv(csv_path, count)
        spec = os.path.join(OUT, f"table-{count}.yaml")
        with open(spec, "w", encoding="utf-8") as file:
            file.write(tabular.spec_text(os.path.basename(csv_path), "built").replace("name: tabular",
                                                                                       f"name: table{count}"))
        paths[f"table-{count}"] = spec
    folder = os.path.join(OUT, f"photos-{images}")
    if not os.path.isdir(folder):
        image_bench.write_photos(folder, images)
    spec = os.path.join(OUT, f"photos-{images}.yaml")
    with open(spec, "w", encoding="utf-8") as file:
        file.write("\n".join([
            f"name: photos{images}", "version: 1.0.0",
            f"source: {{builder: image_folder, path: {os.path.basename(folder)}}}",
            "splits: {train: 1.0}",
            "features:",
            "  image: {type: image, encoding: jpeg, quality: 90, shape: [64, 64, 3], resize: stretch}",
            "  label: {type: class_label}",
            "output: {dir: built, shards: 4}", ""]))
    paths["photos"] = spec
    paths["photo_folder"] = folder
    return paths


def build_cases(name: str, spec: str, source: str, kind: str, workers: int) -> list[tuple[str, float]]:
    output = os.path.join(OUT, "built")
    results = []
    for label, command in [
        ("ours, local runner", [LOCAL, "-m", "tfrecord_builder", "build", spec, "--overwrite", "--output", output,
                                "--workers", str(workers)]),
        ("ours, Beam runner", [BEAM, "-m", "tfrecord_builder", "build", spec, "--overwrite", "--output", output,
                               "--runner", "beam", "--workers", str(workers)]),
        ("hand-written Beam (WriteToTFRecord)", [BEAM_TF, os.path.join(HERE, "beam_hand.py"), kind, source,
                                                 os.path.join(OUT, "hand", name), str(workers)]),
    ]:
        elapsed, _ = timed(command)
        results.append((label, elapsed))
        print(f"  {name}: {label}: {elapsed:.1f} s", flush=True)
    return results


def table(title: str, unit: str, count: int, results: list[tuple[str, float]]) -> str:
    hand = results[-1][1]
    local = results[0][1]
    lines = [f"### {title}", "", f"| case | seconds | {unit}/s | vs hand-written Beam | vs our local runner |",
             "| --- | --- | --- | --- | --- |"]
    for label, elapsed in results:
        lines.append(f"| {label} | {elapsed:.1f} | {count / elapsed:,.0f} | {hand / elapsed:.2f}x | "
                     f"{local / elapsed:.2f}x |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--images", type=int, default=20_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-task-mib", type=int, default=4,
                        help="the read task size of the memory case (default 4 MiB: several tasks at N/10 rows)")
    parser.add_argument("--cases", default="table,images,memory",
                        help="which parts to run, comma-separated (default: all)")
    args = parser.parse_args(argv)
    cases = set(args.cases.split(","))
    for python in (LOCAL, BEAM, BEAM_TF):
        if not os.path.exists(python):
            raise SystemExit(f"{python}: missing; `make bench` makes the Beam environments")
    paths = prepare(args.rows, args.images)
    report = {"rows": args.rows, "images": args.images, "workers": args.workers}
    tables = []
    rows_spec = paths[f"table-{args.rows}"]
    tabular_results = image_results = None
    if "table" in cases:
        tabular_results = build_cases("table", rows_spec, rows_spec.replace(".yaml", ".csv"), "table", args.workers)
        tables.append(table(f"{args.rows:,}-row table, 16 columns, 4 shards", "rows", args.rows, tabular_results))
    if "images" in cases:
        image_results = build_cases("photos", paths["photos"], paths["photo_folder"], "images", args.workers)
        tables.append(table(f"{args.images:,} photos (96x96 JPEG) resized to 64x64 JPEG, 4 shards", "images",
                            args.images, image_results))
    memory = []
    # tasks smaller than the smaller table, so both sizes are read in whole tasks: a worker's
    # memory is bounded by a task's (and a bucket's) records, not by the dataset's
    os.environ["TFRECORD_BUILDER_TASK_BYTES"] = str(args.memory_task_mib * 2**20)
    for count in (args.rows // 10, args.rows) if "memory" in cases else ():
        spec = paths[f"table-{count}"]
        _, peaks = timed([BEAM, "-m", "tfrecord_builder", "build", spec, "--overwrite", "--output",
                          os.path.join(OUT, "built"), "--runner", "beam", "--workers", str(args.workers)])
        workers = sorted(peaks.values(), reverse=True)[: args.workers * 2]
        memory.append((count, workers))
        print(f"  memory at {count:,} rows: {[f'{peak / 2**20:.0f} MiB' for peak in workers]}", flush=True)
    lines = [f"### Peak memory of our Beam runner's worker processes ({args.memory_task_mib} MiB read tasks)", "",
             "| rows | largest worker peaks |",
             "| --- | --- |"]
    lines += [f"| {count:,} | {', '.join(f'{peak / 2**20:.0f} MiB' for peak in peaks)} |" for count, peaks in memory]
    targets = []
    if memory:
        growth = max(memory[1][1]) / max(memory[0][1])
        lines.append(f"\nThe largest worker grew {growth:.2f}x while the rows grew 10x.")
        tables.append("\n".join(lines))
        targets.append(Target(f"Beam runner, largest worker's peak memory at {args.rows:,} over {args.rows // 10:,} rows",
                              growth, MEMORY_BAR, at_least=False, note="peak resident memory of a Beam worker process"))
    info = machine({}, load_average=True)
    report.update(tabular=tabular_results, images=image_results,
                  memory={str(count): peaks for count, peaks in memory}, machine=info,
                  targets=[target.as_json() for target in targets], run=run_info())
    with open(os.path.join(HERE, "out", "beam.json"), "w", encoding="utf-8") as file:
        json.dump(report, file, indent=2)
    print("\n\n".join(tables))
    print("\n" + targets_table(targets) + "\n\n" + machine_line(info))
    shutil.rmtree(os.path.join(OUT, "hand"), ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
