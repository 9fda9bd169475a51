"""The engines people use instead, on the same data in one run: our runners against PySpark and Ray Data.

    .venv/bin/python bench/engines.py [--rows 200000] [--photos 20000] [--workers 2] [--rounds 2]

1. The data: bench/tabular.py's 16-column table (--rows rows, a CSV) and bench/images.py's
   synthetic 96x96 JPEG photos in 10 class folders (--photos), each written as 4 shards / files.
   Photos are stored as they are (our JPEG passthrough; the file's bytes elsewhere).
2. The cases, each a process of its own (bench/engines_jobs.py for the Spark and Ray ones), on
   WORKERS cores: our local runner (`tb build --workers`), our Beam runner (`.venv-beam`, the
   DirectRunner in WORKERS processes), our Spark runner (`tb.build(runner="spark")` in a session
   on local[WORKERS]), the hand-written PySpark job (`spark.read` + `mapPartitions` building
   `tf.train.Example`s, a `tf.io.TFRecordWriter` per partition) and Ray Data
   (`read_csv` / `read_binary_files` + `repartition(4)` + `write_tfrecords`, `ray.init(num_cpus=WORKERS)`).
   The Spark and Ray jobs time the engine's start-up (a session and one trivial job; `ray.init`
   and one trivial dataset) apart from the job; the total is what a user waits for.
3. Every case runs --rounds times, the cases interleaved; the best total counts. The rounds'
   outputs are compared byte for byte (determinism), their records counted and the first one
   parsed (what types the features kept), the output folder listed (splits, statistics, metadata).
4. Peak memory: every process of a case's tree (the driver, Spark's JVM and Python workers,
   Ray's GCS, raylet and workers, Beam's workers) sampled every 0.1 s: the largest sum over one
   sample (what the machine must hold at once) and the largest single process.
5. Prints Markdown tables and writes bench/out/engines.json (with the target: our Spark runner's
   job at least 1.0x the hand-written PySpark job's throughput).
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from harness import Target, machine, machine_line, markdown_table, rss_by_pid, run_info, targets_table  # noqa: E402

LOCAL = os.path.join(ROOT, ".venv", "bin", "python")
BEAM = os.path.join(ROOT, ".venv-beam", "bin", "python")
JOBS = os.path.join(HERE, "engines_jobs.py")
SHARDS = 4
LOCAL_CASE, BEAM_CASE, SPARK_CASE, HAND_CASE, RAY_CASE = (
    "ours, local runner", "ours, Beam runner", "ours, Spark runner", "hand-written PySpark", "Ray Data")


@dataclass
class Run:
    """One case's rounds: per round its total and (Spark, Ray) start-up and job seconds, its
    output folder, the peak memory of its process tree."""

    case: str
    totals: list[float] = field(default_factory=list)
    startups: list[float] = field(default_factory=list)
    jobs: list[float] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    peak_sum: int = 0  # the largest sum of the tree's resident bytes over one sample
    peak_process: int = 0  # the largest resident set of one process
    processes: int = 0  # how many processes the tree had, all told

    @property
    def best(self) -> int:
        return min(range(len(self.totals)), key=lambda index: self.totals[index])

    @property
    def total(self) -> float:
        return self.totals[self.best]

    @property
    def job(self) -> float:
        return self.jobs[self.best] if self.jobs else self.totals[self.best]

    @property
    def startup(self) -> float | None:
        return self.startups[self.best] if self.startups else None


def sampled(command: list[str], cwd: str, run: Run) -> str:
    """Runs `command`, sampling its process tree's memory into `run`; its wall time into
    run.totals; returns its stdout. Exits with its stderr if it fails."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env={**os.environ, "PYTHONPATH": ROOT},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: set[int] = set()

    def sample() -> None:
        while process.poll() is None:
            found = rss_by_pid(process.pid)
            seen.update(found)
            run.peak_sum = max(run.peak_sum, sum(found.values()))
            run.peak_process = max([run.peak_process, *found.values()])
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = process.communicate()
    run.totals.append(time.perf_counter() - started)
    sampler.join()
    run.processes = max(run.processes, len(seen))
    if process.returncode:
        raise SystemExit(f"{run.case}: {' '.join(command)} failed:\n{stderr[-3000:]}")
    return stdout


def run_case(run: Run, kind: str, spec: str, source: str, out: str, workers: int) -> None:
    """One round of one case, into a fresh folder OUT/KIND/CASE/round-K."""
    folder = os.path.join(out, kind, run.case.replace(", ", "-").replace(" ", "-"), f"round-{len(run.totals)}")
    shutil.rmtree(folder, ignore_errors=True)
    spec_dir = os.path.dirname(spec)
    cli = ["-m", "tfrecord_builder", "build", spec, "--overwrite", "--output", folder, "--workers", str(workers)]
    job = None
    if run.case == LOCAL_CASE:
        sampled([LOCAL, *cli], spec_dir, run)
    elif run.case == BEAM_CASE:
        sampled([BEAM, *cli, "--runner", "beam"], spec_dir, run)
    else:
        name = {SPARK_CASE: "spark-ours", HAND_CASE: "spark-hand", RAY_CASE: "ray"}[run.case]
        stdout = sampled([LOCAL, JOBS, name, kind, source, folder, str(SHARDS), str(workers), spec], spec_dir, run)
        job = json.loads(stdout.strip().splitlines()[-1])
        run.startups.append(job["startup"])
        run.jobs.append(job["job"])
    run.outputs.append(folder)
    print(f"  {kind}: {run.case}: {run.totals[-1]:.1f} s"
          + (f" (start-up {job['startup']:.1f} s, job {job['job']:.1f} s)" if job else ""), flush=True)


# ---- what each output has ----------------------------------------------------------------------------

def record_files(folder: str) -> list[str]:
    """The record files under `folder`, by name: our shards, the part files, Ray's blocks."""
    found = [path for path in glob.glob(os.path.join(folder, "**", "*"), recursive=True)
             if os.path.isfile(path) and (".tfrecord" in os.path.basename(path) or path.endswith(".tar"))]
    return sorted(found)


def digests(folder: str) -> list[str]:
    """The sha256 of each record file, in name order (names themselves aside: Ray's carry a random id)."""
    return [hashlib.sha256(open(path, "rb").read()).hexdigest() for path in record_files(folder)]


def first_record(files: list[str]) -> tuple[int, dict[str, str]]:
    """How many records `files` hold, and the first one's features: name -> kind (int64_list, ...)."""
    import tensorflow as tf

    count, kinds = 0, {}
    for record in tf.data.TFRecordDataset(files):
        if not count:
            example = tf.train.Example.FromString(record.numpy())
            kinds = {name: feature.WhichOneof("kind").replace("_list", "")
                     for name, feature in sorted(example.features.feature.items())}
        count += 1
    return count, kinds


SEQUENCE_EXAMPLE = {  # from each engine's API, not measured
    LOCAL_CASE: "yes (sequence features in the spec)",
    BEAM_CASE: "yes (the same spec)",
    SPARK_CASE: "yes (the same spec)",
    HAND_CASE: "if written by hand (`tf.train.SequenceExample` in the job)",
    RAY_CASE: "no (`write_tfrecords` makes a `tf.train.Example` per row)",
}


def checks(run: Run, expected: int) -> dict[str, Any]:
    """What the case's output has, checked on its files: determinism over the rounds, the record
    count, the features' kinds, splits, statistics, metadata and a reader module."""
    last = run.outputs[run.best]
    files = record_files(last)
    count, kinds = first_record(files)
    names = [os.path.relpath(path, last) for path in glob.glob(os.path.join(last, "**", "*"), recursive=True)
             if os.path.isfile(path) and path not in files]
    info_path = next((path for path in glob.glob(os.path.join(last, "**", "tfrecord_builder.json"), recursive=True)), None)
    splits, statistics = [], False
    if info_path:
        with open(info_path, encoding="utf-8") as file:
            ours = json.load(file)
        splits = sorted(ours.get("splits", {}))
        statistics = any("statistics" in split for split in ours.get("splits", {}).values()) or "statistics" in ours
    return {
        "deterministic": len({tuple(digests(folder)) for folder in run.outputs}) == 1 if len(run.outputs) > 1 else None,
        "files": len(files),
        "records": count,
        "records_ok": count == expected,
        "features": kinds,
        "splits": splits,
        "statistics": statistics,
        "metadata": sorted(name for name in names if name.endswith((".json", ".txt"))),
        "reader_module": sorted(name for name in names if name.endswith("_input.py")),
    }


# ---- the report ---------------------------------------------------------------------------------------

def mib(value: int) -> str:
    return f"{value / 2**20:,.0f}"


def speed_table(runs: list[Run], count: int, unit: str) -> str:
    local, hand = runs[0], next(run for run in runs if run.case == HAND_CASE)
    rows = []
    for run in runs:
        rows.append([run.case, f"{run.total:.1f}", "-" if run.startup is None else f"{run.startup:.1f}",
                     f"{run.job:.1f}", f"{count / run.total:,.0f}", f"{local.total / run.total:.2f}x",
                     f"{local.job / run.job:.2f}x", f"{hand.job / run.job:.2f}x",
                     mib(run.peak_sum), mib(run.peak_process), str(run.processes)])
    return markdown_table(
        ["case", "total (s)", "start-up (s)", "job (s)", f"{unit}/s (total)", "vs local (total)", "vs local (job)",
         "vs hand PySpark (job)", "peak MiB, all processes at once", "peak MiB, largest process", "processes"],
        ["---", *["---:"] * 10], rows)


def yes(value: Any) -> str:
    return "yes" if value else "**no**"


def lacks_table(found: dict[str, dict[str, Any]]) -> str:
    rows = []
    for case, check in found.items():
        rows.append([case, {True: "yes", False: "**no**", None: "-"}[check["deterministic"]],
                     f"{check['records']:,} in {check['files']} files" + ("" if check["records_ok"] else " (**wrong**)"),
                     ", ".join(f"{name}: {kind}" for name, kind in check["features"].items()),
                     ", ".join(check["splits"]) or "**none**", yes(check["statistics"]),
                     SEQUENCE_EXAMPLE[case], ", ".join(check["metadata"] + check["reader_module"]) or "**none**"])
    return markdown_table(["case", "same bytes twice", "records", "features of the first record", "splits",
                           "statistics", "SequenceExample", "metadata a reader can open"],
                          ["---"] * 8, rows)


# ---- the data -----------------------------------------------------------------------------------------

def prepare(out: str, rows: int, photos: int) -> dict[str, tuple[str, str]]:
    """kind -> (spec, source): the table's CSV and the photo folder, made once per size."""
    import images
    import tabular

    os.makedirs(out, exist_ok=True)
    csv_path = os.path.join(out, f"table-{rows}.csv")
    if not os.path.exists(csv_path):
        tabular.write_csv(csv_path, rows)
    table_spec = os.path.join(out, f"table-{rows}.yaml")
    with open(table_spec, "w", encoding="utf-8") as file:
        file.write(tabular.spec_text(os.path.basename(csv_path), "built"))
    folder = os.path.join(out, f"photos-{photos}")
    if not os.path.isdir(folder) or sum(len(files) for _, _, files in os.walk(folder)) != photos:
        images.write_photos(folder, photos)
    photo_spec = os.path.join(out, f"photos-{photos}.yaml")
    with open(photo_spec, "w", encoding="utf-8") as file:
        file.write(images.spec_text("photos", "{type: image, encoding: jpeg, shape: [96, 96, 3]}",
                                    os.path.basename(folder), "built"))
    return {"table": (table_spec, csv_path), "photos": (photo_spec, folder)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--photos", type=int, default=20_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2, help="runs per case, interleaved; the best counts (default 2)")
    parser.add_argument("--kinds", default="table,photos")
    parser.add_argument("--out", default=os.path.join(HERE, "out"))
    args = parser.parse_args(argv)
    for python in (LOCAL, BEAM):
        if not os.path.exists(python):
            raise SystemExit(f"{python}: missing; `make bench` makes it")
    root = os.path.join(args.out, "engines")
    data = prepare(root, args.rows, args.photos)
    report: dict[str, Any] = {"rows": args.rows, "photos": args.photos, "workers": args.workers,
                              "rounds": args.rounds, "machine": machine(_versions(), load_average=True)}
    tables, targets = [], []
    for kind in args.kinds.split(","):
        spec, source = data[kind]
        count, unit = (args.rows, "rows") if kind == "table" else (args.photos, "photos")
        runs = [Run(case) for case in (LOCAL_CASE, BEAM_CASE, SPARK_CASE, HAND_CASE, RAY_CASE)]
        for _ in range(args.rounds):
            for run in runs:
                run_case(run, kind, spec, source, root, args.workers)
        found = {run.case: checks(run, count) for run in runs}
        # our three runners promise the same dataset, byte for byte: the shards and their metadata
        ours = {run.case: digests(run.outputs[run.best]) for run in runs[:3]}
        same_as_local = {case: found_digests == ours[LOCAL_CASE] for case, found_digests in ours.items()}
        spark, hand = runs[2], runs[3]
        targets.append(Target(f"{kind}: our Spark runner vs the hand-written PySpark job", hand.job / spark.job, 1.0,
                              note="throughput of the jobs, each after its session started"))
        title = (f"{args.rows:,}-row table, 16 columns" if kind == "table"
                 else f"{args.photos:,} photos (96x96 JPEG, stored as they are)")
        tables += [f"### {title}, {SHARDS} files, {args.workers} cores", "", speed_table(runs, count, unit), "",
                   "What each output has", "", lacks_table(found), "",
                   "Our Beam and Spark runners' shards the local runner's, byte for byte: "
                   + ", ".join(f"{case}: {yes(same)}" for case, same in same_as_local.items() if case != LOCAL_CASE), ""]
        report[kind] = {"runs": [{"case": run.case, "totals": run.totals, "startups": run.startups, "jobs": run.jobs,
                                  "peak_sum_bytes": run.peak_sum, "peak_process_bytes": run.peak_process,
                                  "processes": run.processes} for run in runs],
                        "checks": found, "same_as_local": same_as_local}
        for run in runs:
            for folder in run.outputs:
                shutil.rmtree(folder, ignore_errors=True)
    report["targets"] = [target.as_json() for target in targets]
    report["run"] = run_info()
    print("\n".join(tables))
    print(targets_table(targets))
    print("\n" + machine_line(report["machine"]))
    with open(os.path.join(args.out, "engines.json"), "w", encoding="utf-8") as file:
        json.dump(report, file, indent=2)
        file.write("\n")
    return 0


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    return {name: version(name) for name in ("tensorflow-cpu", "pyspark", "ray")}


if __name__ == "__main__":
    sys.exit(main())
