"""What the benchmarks in bench/ share: timing, results and ratios, files, the machine, the report.

The scripts import it as `from harness import ...` (run as `python bench/X.py`, a script has
bench/ on sys.path). It never imports TensorFlow at its top: each script imports TensorFlow
itself, up front so that its import is never timed, but not in `tb.build`'s spawned worker
processes (see bench/README.md), which import this module too. The few helpers here that use
TensorFlow import it when called: once per call, never per record.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.util
import json
import os
import platform
import resource
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from types import ModuleType
from typing import Any, Callable, Iterable, Iterator, Mapping, NamedTuple, Sequence, TypeVar

HERE = os.path.dirname(os.path.abspath(__file__))  # bench/


# ---- results -----------------------------------------------------------------------------------------

@dataclass
class Result:
    """One benchmark case: its best time over the rounds, and its throughput.

    `cpu_seconds` and `reference` are optional: a benchmark that reports no CPU time, or that
    takes every ratio to one case of the table, leaves them None, and they stay out of its JSON.
    """

    group: str  # "build" or "read"
    case: str
    seconds: float
    items: int
    cpu_seconds: float | None = None  # CPU time (user + system) of the fastest call: see `cpu_time`
    reference: str | None = None  # the case its ratio is taken to, where that is not the same for all
    ratio: float = 0.0  # throughput relative to the reference case

    @property
    def per_second(self) -> float:
        return self.items / self.seconds

    def as_json(self) -> dict[str, Any]:
        """The fields (less the optional ones left None) and the throughput, for the JSON report."""
        document = asdict(self)
        for name in ("cpu_seconds", "reference"):
            if document[name] is None:
                del document[name]
        return {**document, "per_second": self.per_second}


ResultT = TypeVar("ResultT", bound=Result)


def with_ratios(results: list[ResultT], reference: str | None = None) -> list[ResultT]:
    """Sets each result's ratio: its throughput over that of the case named `reference`, or,
    where `reference` is None, over that of the case its own `reference` names."""
    by_case = {result.case: result for result in results}
    for result in results:
        result.ratio = result.per_second / by_case[reference or result.reference].per_second
    return results


# ---- targets -----------------------------------------------------------------------------------------

@dataclass
class Target:
    """One of the targets a benchmark checks (bench/README.md): a measured ratio against its bar.

    `at_least` True: the ratio must be >= `bar` (a speed-up); False: <= `bar` (a slow-down, such as
    a build's time over the I/O floor's). `make bench` gathers every script's targets, from their
    JSON reports, into one table (bench/summary.py).
    """

    case: str  # what is measured, as the summary table names it
    ratio: float
    bar: float
    at_least: bool = True
    note: str = ""  # how the ratio is taken: "ours / best hand-written", "build time / floor time", ...

    @property
    def met(self) -> bool:
        return self.ratio >= self.bar if self.at_least else self.ratio <= self.bar

    @property
    def wanted(self) -> str:
        return f"{'>=' if self.at_least else '<='} {self.bar:.2f}x"

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "wanted": self.wanted, "met": self.met}


def targets_table(targets: Sequence[Target]) -> str:
    """The targets as a Markdown table: case, ratio, wanted, met, how the ratio is taken."""
    return markdown_table(["target", "ratio", "wanted", "met", "ratio of"], ["---", "---:", "---:", "---", "---"],
                          [[t.case, f"{t.ratio:.2f}x", t.wanted, "yes" if t.met else "**no**", t.note] for t in targets])


# ---- timing ------------------------------------------------------------------------------------------

class Timing(NamedTuple):
    """The wall and CPU time of one call, in seconds (ordered by wall time first)."""

    seconds: float
    cpu_seconds: float


def cpu_time() -> float:
    """CPU seconds used so far by this process (all its threads) and its finished child processes.

    `tb.build`'s worker processes count once the build has shut its pool down (they are reaped).
    """
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(run: Callable[[], Any]) -> Timing:
    """The wall and CPU time of one call of `run`, after a garbage collection."""
    gc.collect()
    cpu, start = cpu_time(), time.perf_counter()
    run()
    return Timing(time.perf_counter() - start, cpu_time() - cpu)


def our_build(spec: str, out: str, workers: int, built: dict[int, Any]) -> Callable[[], None]:
    """A case that builds `spec` with `workers` into `out/ours-WORKERS` (overwritten each round),
    keeping the last DatasetInfo in `built[workers]`."""
    import tfrecord_builder as tb

    def run() -> None:
        built[workers] = tb.build(spec, output=os.path.join(out, f"ours-{workers}"), overwrite=True,
                                  workers=workers, progress=False)
    return run


def best_of_rounds(repeats: int, runs: Sequence[Callable[[], Any]]) -> list[Timing]:
    """The timing of the fastest call of each of `runs` over `repeats` rounds; every round runs each once, in order.

    Interleaving the cases (rather than repeating one, then the next) spreads slow drift of the
    machine (other load, frequency, caches) over all of them, so the comparison stays fair.
    """
    best = [Timing(float("inf"), 0.0)] * len(runs)
    for _ in range(repeats):
        for index, run in enumerate(runs):
            best[index] = min(best[index], timed(run))
    return best


# ---- memory -------------------------------------------------------------------------------------------

def rss_by_pid(root: int) -> dict[int, int]:
    """Resident bytes of `root` and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as file:
                parent = int(file.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, queue = {}, [root]
    while queue:
        pid = queue.pop()
        try:
            with open(f"/proc/{pid}/statm") as file:
                found[pid] = int(file.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            pass
        queue += children.get(pid, [])
    return found


# ---- files and datasets ------------------------------------------------------------------------------

class OutputPaths:
    """Where a benchmark writes: its files under `root`, its JSON report `NAME.json` in `out`.

    `root` is a folder named after the benchmark under `out`, or with `own_folder=False` `out`
    itself. A script's subclass names its own files and folders with `file`.
    """

    def __init__(self, out: str, name: str, own_folder: bool = True) -> None:
        self.out = out
        self.root = os.path.join(out, name) if own_folder else out
        self.json = os.path.join(out, f"{name}.json")
        self.ours = self.file("build")  # the datasets `tb.build` writes

    def file(self, *parts: str) -> str:
        """A path under `root`."""
        return os.path.join(self.root, *parts)


def shard_paths(folder: str, name: str, shards: int, split: str = "train") -> list[str]:
    """The paths of a split's shards, named as `tb.build` names them."""
    return [os.path.join(folder, f"{name}-{split}.tfrecord-{index:05d}-of-{shards:05d}") for index in range(shards)]


def files_of(info: Any, split: str = "train") -> list[str]:
    """The shard paths of a split of a dataset `tb.build` wrote (its `DatasetInfo`)."""
    return [os.path.join(info.path, file) for file in info.splits[split].files]


def total_bytes(files: Iterable[str]) -> int:
    """The size of `files` together, in bytes."""
    return sum(os.path.getsize(file) for file in files)


@contextlib.contextmanager
def record_writers(paths: Sequence[str]) -> Iterator[list[Any]]:
    """A `tf.io.TFRecordWriter` per path (a seed loop's shards), all closed on leaving, also on an error."""
    import tensorflow as tf

    writers = [tf.io.TFRecordWriter(path) for path in paths]
    try:
        yield writers
    finally:
        for writer in writers:
            writer.close()


def write_floor(records: list[bytes], paths: Sequence[str]) -> None:
    """Only the TFRecordWriter: already-serialised records, in contiguous shards, one per path."""
    import tensorflow as tf

    total, shards = len(records), len(paths)
    for index, path in enumerate(paths):
        with tf.io.TFRecordWriter(path) as writer:
            for record in records[index * total // shards : (index + 1) * total // shards]:
                writer.write(record)


def raw_records(files: list[str], batch_size: int) -> Any:
    """The records of `files`, batched, not parsed (a `tf.data.Dataset` of string tensors)."""
    import tensorflow as tf

    return tf.data.TFRecordDataset(files).batch(batch_size)


def epoch(dataset: Iterable[Any], size_of: Callable[[Any], int]) -> int:
    """Iterates one full epoch; returns the number of examples seen, `size_of(batch)` per batch."""
    return sum(size_of(batch) for batch in dataset)


def import_module(path: str, name: str | None = None) -> ModuleType:
    """Imports a generated input module from its file, as `import NAME_input` would.

    `name` defaults to the file's name without `.py`. The module is registered in sys.modules
    (the importlib recipe): AutoGraph looks functions' modules up there, and warns that it cannot
    convert the module's lambdas if it is missing.
    """
    name = name or os.path.splitext(os.path.basename(path))[0]
    module_spec = importlib.util.spec_from_file_location(name, path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    module_spec.loader.exec_module(module)
    return module


# ---- reading: the hand-written pipelines, steady and cold ------------------------------------------

HAND = "hand-written"  # how hand_pipelines names its cases: "hand-written, FORM"


def hand_pipelines(files: list[str], batch_size: int, parse: Callable[[Any], Any]) -> dict[str, Callable[[], Any]]:
    """The three hand-written forms of a batched `tf.data` pipeline over `files` (sequential,
    interleaved per-file batches, parallel reads; bench/README.md): "hand-written, FORM" -> a
    factory of the dataset. `parse` maps a batch of serialised records
    to what the pipeline yields. The best of the three is the bar the input functions are held to."""
    import tensorflow as tf

    def finished(dataset: Any) -> Any:
        return dataset.map(parse, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)

    def interleaved() -> Any:
        per_file = tf.data.Dataset.from_tensor_slices(files).interleave(
            lambda file: tf.data.TFRecordDataset(file).batch(batch_size), cycle_length=min(2, len(files)),
            num_parallel_calls=tf.data.AUTOTUNE)
        return finished(per_file)

    return {
        f"{HAND}, sequential": lambda: finished(tf.data.TFRecordDataset(files).batch(batch_size)),
        f"{HAND}, interleaved": interleaved,
        f"{HAND}, parallel reads": lambda: finished(
            tf.data.TFRecordDataset(files, num_parallel_reads=tf.data.AUTOTUNE).batch(batch_size)),
    }


READ_ROUNDS = 5


def steady_and_cold(cases: Mapping[str, Callable[[], Any]], ours: Sequence[str], count: int,
                    size_of: Callable[[Any], int], repeats: int, cold: bool = True) -> tuple[list[Result], list[Result]]:
    """Times each pipeline's epoch in steady state and, with `cold`, the cases named in `ours`
    and the hand-written ones for one cold pass; every ratio to the best hand-written pipeline
    of its table.

    Steady: each dataset is made once and iterated once (the warm-up, which must yield `count`
    examples); then, in each of `repeats` interleaved rounds, one epoch of it. Cold: in the same
    rounds, a fresh dataset from the factory (tracing, graph rewrites, opening the files:
    what a first epoch pays) and one epoch of it. The best of the rounds counts for both.
    Returns (steady results, cold results), in `cases`' order. At least READ_ROUNDS rounds: an
    epoch takes a fraction of a second, and the best of more of them steadies ratios that a
    handful of percent decide."""
    repeats = max(repeats, READ_ROUNDS)
    cold_cases = [case for case in cases if case in ours or case.startswith(HAND)] if cold else []
    datasets = {case: make() for case, make in cases.items()}
    for case, dataset in datasets.items():
        seen = epoch(dataset, size_of)
        if seen != count:
            raise RuntimeError(f"{case}: one epoch yielded {seen} examples, expected {count}")
    runs: list[Callable[[], Any]] = [lambda dataset=dataset: epoch(dataset, size_of) for dataset in datasets.values()]
    runs += [lambda make=cases[case]: epoch(make(), size_of) for case in cold_cases]
    times = best_of_rounds(repeats, runs)
    steady = [Result("read", case, timing.seconds, count, timing.cpu_seconds) for case, timing in zip(cases, times)]
    cold_results = [Result("read, cold", case, timing.seconds, count, timing.cpu_seconds)
                    for case, timing in zip(cold_cases, times[len(cases):])]
    return with_best_hand_ratios(steady), with_best_hand_ratios(cold_results) if cold_results else []


def best_hand_written(results: list[Result]) -> Result:
    """The fastest of the hand-written pipelines among `results` (the bar)."""
    return max((result for result in results if result.case.startswith(HAND)), key=lambda r: r.per_second)


def with_best_hand_ratios(results: list[Result]) -> list[Result]:
    """Every result's ratio to the fastest hand-written pipeline among them, named as its reference."""
    best = best_hand_written(results)
    for result in results:
        result.reference = best.case
    return with_ratios(results)


# the reading bars (issue 42): steady epochs at least as fast as the best hand-written pipeline, one
# cold pass (tracing, graph rewrites, opening the shards: what a first epoch pays) at least 0.95x it
READ_STEADY_BAR, READ_COLD_BAR = 1.0, 0.95


def reading_targets(kind: str, steady: list[Result], cold: list[Result], module: str, library: str) -> list[Target]:
    """The reading targets of a dataset `kind`: the generated module's and `tb.input_fn`'s
    throughput over the best hand-written pipeline's, steady (>= READ_STEADY_BAR) and cold
    (>= READ_COLD_BAR), and the two within 3% of each other in steady state (the slower over
    the faster >= 0.97)."""
    by_case = {result.case: result for result in steady}
    by_cold = {result.case: result for result in cold}
    targets = []
    for case, short in ((module, "generated module"), (library, "`tb.input_fn`")):
        targets.append(Target(f"{kind} read, {short}, steady", by_case[case].ratio, READ_STEADY_BAR,
                              note=f"over the best hand-written ({best_hand_written(steady).case.split(', ')[-1]})"))
        targets.append(Target(f"{kind} read, {short}, one cold pass", by_cold[case].ratio, READ_COLD_BAR,
                              note=f"over the best hand-written ({best_hand_written(cold).case.split(', ')[-1]})"))
    rates = sorted([by_case[module].per_second, by_case[library].per_second])
    targets.append(Target(f"{kind} read, module and `tb.input_fn` alike", rates[0] / rates[1], 0.97,
                          note="the slower's throughput over the faster's, steady"))
    return targets


# ---- the machine -------------------------------------------------------------------------------------

_MACHINE_KEYS = ("cpu_count", "load_average", "processor", "platform", "python")
_PACKAGE_LABELS = {"tensorflow": "TensorFlow", "pillow": "Pillow", "tfds": "TFDS"}  # as the report names them


def machine(packages: Mapping[str, str], load_average: bool = False) -> dict[str, Any]:
    """CPUs, processor, platform and Python, then `packages` (name: version) in their order.

    With `load_average`, also the load average (1, 5 and 15 minutes) at the call.
    """
    info: dict[str, Any] = {"cpu_count": os.cpu_count()}
    if load_average:
        info["load_average"] = [round(load, 2) for load in os.getloadavg()]
    info.update({
        "processor": platform.processor() or platform.machine(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    })
    return {**info, **packages}


def machine_line(info: Mapping[str, Any]) -> str:
    """`machine()`'s dict as the report's sentence: "Machine: 2 CPUs (x86_64), ..., Python 3.11.7, numpy 2.0"."""
    packages = "".join(f", {_PACKAGE_LABELS.get(name, name)} {version}"
                       for name, version in info.items() if name not in _MACHINE_KEYS)
    return (f"Machine: {info['cpu_count']} CPUs ({info['processor']}), {info['platform']}, "
            f"Python {info['python']}{packages}")


# ---- the run: the machine's load at the script's start and end -------------------------------------

def load_now() -> list[float]:
    """The machine's load average now: 1, 5 and 15 minutes, rounded to 0.01."""
    return [round(load, 2) for load in os.getloadavg()]


# the load when the script started: it imports this module first, before its data, TensorFlow and its cases
LOAD_AT_START = load_now()


def run_info() -> dict[str, Any]:
    """What every report says of its run (its "run" entry, which bench/summary.py prints): the load
    average at the script's start (when it imported this module) and at the call (the report's
    writing), and the commit it ran at ("+" if the work tree had changes), None outside a git work tree."""
    try:
        done = subprocess.run(["git", "describe", "--always", "--dirty=+", "--abbrev=10"], cwd=HERE,
                              capture_output=True, text=True, timeout=10)
        commit = done.stdout.strip() if done.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        commit = None
    return {"load_average": {"start": LOAD_AT_START, "end": load_now()}, "commit": commit}


# ---- the report --------------------------------------------------------------------------------------

class Column(NamedTuple):
    """An extra column of a results table: its header, its cell for a result, its alignment."""

    header: str
    cell: Callable[[Any], str]
    align: str = "---:"  # "---" left, "---:" right


def same_values(differ: list[str]) -> str:
    """A report's verdict on a value-by-value comparison: the fields that differ, if any."""
    return "identical values" if not differ else "DIFFER in " + ", ".join(differ)


def markdown_table(header: Sequence[str], align: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A Markdown table: the header row, the alignment row, a row per entry of `rows`."""
    return "\n".join(f"| {' | '.join(cells)} |" for cells in [header, align, *rows])


def results_table(results: list[Result], unit: str, reference: str, extra: Sequence[Column] = (),
                  absent: Sequence[tuple[str, str]] = ()) -> str:
    """The table of a group of results: case, throughput, ratio, the `extra` columns, best time,
    and the CPU time where the results carry it.

    `absent` adds a row per case that could not run, (case, why) at the end: the reason in the
    throughput column, "-" in the others (the TFDS rows without TFDS installed)."""
    columns = [
        Column("case", lambda result: result.case, "---"),
        Column(f"{unit}/s", lambda result: f"{result.per_second:,.0f}"),
        Column(f"ratio to {reference}", lambda result: f"{result.ratio:.2f}x"),
        *extra,
        Column("best time (s)", lambda result: f"{result.seconds:.3f}"),
    ]
    if any(result.cpu_seconds is not None for result in results):
        columns.append(Column("CPU (s)", lambda result: f"{result.cpu_seconds:.2f}"))
    rows = [[column.cell(result) for column in columns] for result in results]
    rows += [[case, why, *["-"] * (len(columns) - 2)] for case, why in absent]
    return markdown_table([column.header for column in columns], [column.align for column in columns], rows)


# ---- the command line and the JSON -------------------------------------------------------------------

def argument_parser(doc: str, option: str, default: int, help: str) -> argparse.ArgumentParser:
    """A benchmark's command line: its size `option` (an int), `--repeats R` (default 3) and
    `--out DIR` (default bench/out); described by the first paragraph of the script's `doc`."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument(option, type=int, default=default, help=help)
    parser.add_argument("--repeats", type=int, default=3, help="timed repeats per case; the best counts (default 3)")
    parser.add_argument("--out", default=os.path.join(HERE, "out"), help="output folder (default bench/out)")
    return parser


def write_json(path: str, document: Mapping[str, Any], build: list[Result], read: list[Result],
               targets: Sequence[Target] = ()) -> None:
    """Writes the report's JSON, indented, and says where: `document` (the settings, the machine,
    the checks), then the build and the read results (`Result.as_json`), the targets and the run
    (`run_info`: the load at the start and now)."""
    document = {**document, "build": [result.as_json() for result in build],
                "read": [result.as_json() for result in read], "targets": [target.as_json() for target in targets],
                "run": run_info()}
    with open(path, "w", encoding="utf-8") as file:
        json.dump(document, file, indent=2)
        file.write("\n")
    print(f"\nwritten: {path}")
