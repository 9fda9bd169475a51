"""The Beam runner: the build's plan as an Apache Beam pipeline, with the local runner's bytes.

    stratify: Create(read tasks) -> Reshuffle -> each task's classes -> all -> strata (side input)
    Create(read tasks) -> Reshuffle -> encode each task -+- ((split, bucket), records)
                                                         +- the task's summary
    summaries -> in task order -> layout: shards per split, each bucket's first rank (side input)
    records -> GroupByKey(split, bucket) -> sorted, cut at shard bounds -> ((split, shard), piece)
            -> GroupByKey(split, shard) -> our writer, a piece at a time: temporary name, then rename; sha256

Only task descriptions go into the graph (`beam.Create` pickles what it is given), never rows.
Records cross the shuffles as a few large elements (a task's for one bucket, a bucket's for one
shard), or, on the DirectRunner, as files in the staging folder (`beam-runs/`) with only their
names as elements, so a worker holds one task's or one bucket's records at a time however large
the dataset (`_BetweenSteps`). A bucket holds the records
of one range of key hashes (shuffled builds) or of one task (in the source's order), so sorting
buckets and cutting them by rank gives every shard exactly the records, in exactly the order,
that the local runner writes. Shards are written by our writer, not `WriteToTFRecord` (whose
shards start at a random place); a retried bundle writes the same bytes again, and each finished
shard is recorded in `manifest/` so `--resume` keeps it. The DirectRunner retries nothing, and
waits forever for a bundle whose worker process died: that death fails the build here
(`_watched_workers`).

The pipeline leaves its results in the staging folder (`beam-summary.pickle`: statistics,
skipped records, errors), where the process that started it reads them.
"""
from __future__ import annotations

import contextlib
import functools
import io
import logging
import math
import os
import pickle
import re
import shutil
import signal
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

import apache_beam as beam
import numpy as np
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.runners.runner import PipelineState

from ... import fs
from ...atomic import AtomicFile
from ...builders.base import Builder
from ...builders.sources import builder_sources, add_shipped_sources, source_builders
from ..encoding import BatchClasses
from ...errors import DiskFullError, TFRecordBuilderError, UsageError
from ...processes import stderr_held
from ...spec.model import Spec
from ...write.membership import KeptSplits
from ...write.strata import Strata
from .contract import RunJob, RunResult
from .distributed import (Layout, PlacedRecords, TaskSummary, by_bucket, classify_task, count_keys, encode_task,
                          joined, layout_of, run_result, sort_bucket, strata_from, unique_keys, write_placed_shard)
from ..plan import ReadTask

SUMMARY_FILE = "beam-summary.pickle"
RUNS_FOLDER = "beam-runs"  # records between the job's steps
_RESULT_FILES = (SUMMARY_FILE, "beam-problems.pickle", "beam-distinct.pickle")  # what the job's steps save (`_save`)
_NAMESPACE = "tfrecord_builder"
_POLL_SECONDS = 5.0
TASKS_PER_BUCKET = 4
MIN_BUCKETS = 16
_ANY_PAIR = beam.typehints.Tuple[beam.typehints.Any, beam.typehints.Any]


class BeamRunner:
    """The Runner (build/runners/contract.py) of an Apache Beam pipeline: the DirectRunner on this
    machine by default, or the runner `--pipeline-options` names. It keeps no checkpoint (a
    resumed build keeps the finished shards), and for an output in a bucket writes the shards
    there itself: a remote runner's workers are other machines."""

    name = "beam"
    takes_options = True
    checkpoints = False
    shards_to_bucket = True

    def check(self, spec: Spec, folder: str, options: list[str], workers: int) -> None:
        """Raises UsageError, before any work, for options Beam refuses and for places a job's
        workers can't reach (Dataflow's run on other machines: what they read and write must be in a
        bucket)."""
        if _options(options, workers).view_as(StandardOptions).runner != "DataflowRunner":
            return
        if not fs.is_url(folder):
            raise UsageError("--output: a DataflowRunner job's workers can't write to this machine's disk; "
                             "give a bucket (--output gs://BUCKET/datasets)")
        paths = [spec.source.path] + [split.path for split in spec.splits.values() if not isinstance(split, float)]
        local = next((path for path in paths if path and not fs.is_url(path)), None)
        if local is not None:
            raise UsageError(f"{spec.resolve(local)}: a DataflowRunner job's workers can't read this machine's "
                             "disk; copy the source to a bucket and give its URL as the path")

    def run(self, job: RunJob) -> RunResult:
        """Runs the plan as a Beam pipeline (keeping the `job.kept` shards of an interrupted run, and
        with `job.keep` the splits of an earlier version); returns what it wrote into `job.shards`
        (a folder or a bucket's prefix). The DirectRunner's workers keep records in `job.staging`."""
        spec, tasks, shards = job.spec, job.tasks, job.shards
        options = _options(job.options, job.workers)
        local = options.view_as(StandardOptions).runner in (None, "DirectRunner", "BundleBasedDirectRunner",
                                                             "SwitchingDirectRunner", "PrismRunner")
        summary_path = fs.join(shards, SUMMARY_FILE)
        if fs.exists(summary_path):
            fs.remove(summary_path)
        carrier = _between_steps(local, os.path.join(job.staging, RUNS_FOLDER))
        # a bucket of hashes holds one task's records in a small build (each sorted by a worker of its
        # own), about TASKS_PER_BUCKET tasks' in a large one: each task sends a split's records to the
        # buckets in one element each, so the elements grow as tasks x buckets
        buckets = max(math.ceil(len(tasks) / TASKS_PER_BUCKET), min(len(tasks), MIN_BUCKETS))
        bits = max(0, math.ceil(math.log2(buckets))) if spec.output.shuffle else 0
        try:
            pipeline = beam.Pipeline(options=options)
        except ValueError as error:  # e.g. an unknown --runner
            raise UsageError(f"--pipeline-options: {error}") from None
        _plan(pipeline, spec, tasks, shards, job.build_id, job.kept, bits, carrier, job.keep)
        # the DirectRunner's workers are this machine's processes, each logging a dozen lines: held
        # back unless the job fails for a reason of Beam's; a remote runner's lines (the job's URL) stay
        held = (stderr_held(lambda error: not isinstance(error, TFRecordBuilderError)) if local
                else contextlib.nullcontext())
        with held:
            try:
                if local:
                    _watched_workers(lambda: _watch(pipeline.run(), job.progress))
                else:
                    _watch(pipeline.run(), job.progress)
            except Exception as error:
                if carrier.folder is not None:  # a failed job's records: they'd hold the space a retry needs
                    shutil.rmtree(carrier.folder, ignore_errors=True)
                with contextlib.suppress(OSError):  # a bucket out of reach: the job's own error says more
                    for name in _RESULT_FILES:  # and what its steps saved
                        if fs.exists(fs.join(shards, name)):
                            fs.remove(fs.join(shards, name))
                full = DiskFullError.of(_worker_os_error(error), job.staging)
                if full is None:
                    raise
                raise full from error  # one line, not a worker's traceback and Beam's log
        result = _results(spec, shards, job.build_id)
        if carrier.folder is not None:
            shutil.rmtree(carrier.folder)
        return result


def _worker_os_error(error: Exception) -> OSError | None:
    """The OSError a worker raised, which Beam reports as the text of its traceback (`RuntimeError:
    OSError: [Errno 28] No space left on device: '/path' [while running 'Step']`); None if none.
    The last one the text shows: the error raised, after those it was raised from."""
    found = list(_OS_ERROR.finditer(str(error)))
    if not found:
        return None
    code, reason, path = found[-1].groups()
    return OSError(int(code), reason, path) if path else OSError(int(code), reason)


_OS_ERROR = re.compile(r"OSError: \[Errno (\d+)\] ([^:'\n\[]+?)(?:: '([^'\n]+)')?(?: \[while running|\n|$)")


def _between_steps(local: bool, folder: str) -> "_BetweenSteps":
    """How records cross the job's steps: `TFRECORD_BUILDER_BEAM_RECORDS` (files or elements), else
    files where the workers share this machine's disk (the DirectRunner), else Beam elements."""
    chosen = os.environ.get("TFRECORD_BUILDER_BEAM_RECORDS") or ("files" if local else "elements")
    if chosen not in ("files", "elements"):
        raise UsageError(f"TFRECORD_BUILDER_BEAM_RECORDS: expected files or elements, received {chosen!r}")
    if chosen == "elements":
        return _BetweenSteps(None)
    shutil.rmtree(folder, ignore_errors=True)  # a killed job's
    os.makedirs(folder)
    return _BetweenSteps(folder)


def _plan(pipeline: beam.Pipeline, spec: Spec, tasks: list[ReadTask], staging: str, build_id: str,
          kept: dict[str, dict], bits: int, carrier: "_BetweenSteps", keep: KeptSplits | None = None) -> None:
    """The plan's steps, as the module's docstring draws them."""
    encode = _EncodeTask(spec, bits, builder_sources(spec), carrier, keep)
    strata = []  # a stratified build's first pass: every record's class, before any is divided
    if spec.stratify is not None:
        strata.append(beam.pvalue.AsSingleton(pipeline
                                              | "ClassTasks" >> beam.Create(tasks)
                                              | "ClassSpread" >> beam.Reshuffle()
                                              | "Classify" >> beam.ParDo(_ClassifyTask(spec, builder_sources(spec)))
                                              | "AllClasses" >> beam.combiners.ToList()
                                              | "Strata" >> beam.Map(strata_from, spec)))
    encoded = (pipeline
               | "Tasks" >> beam.Create(tasks)
               | "Spread" >> beam.Reshuffle()
               | "Encode" >> beam.ParDo(encode, *strata).with_output_types(_ANY_PAIR).with_outputs(
                   "summary", "keys", main="records"))
    layout = beam.pvalue.AsSingleton(encoded.summary
                                     | "Summaries" >> beam.combiners.ToList()
                                     | "Layout" >> beam.Map(_layout, spec, staging))
    parts = (encoded.records
             | "Buckets" >> beam.GroupByKey()
             | "Sort" >> beam.ParDo(_SortBucket(spec, carrier), layout).with_output_types(_ANY_PAIR).with_outputs(
                 "problems", "distinct", "keys", main="parts"))
    (parts.parts
     | "Shards" >> beam.GroupByKey()
     | "Write" >> beam.ParDo(_WriteShard(spec, staging, build_id, kept, carrier), layout))
    unique = encoded["keys"] | "Keys" >> beam.GroupByKey() | "Unique" >> beam.FlatMap(_unique_keys, spec)
    ((parts.problems, unique)
     | "Problems" >> beam.Flatten()
     | "AllProblems" >> beam.combiners.ToList()
     | "SaveProblems" >> beam.Map(_save, staging, "problems"))
    counted = parts["keys"] | "KeyRanges" >> beam.GroupByKey() | "CountKeys" >> beam.Map(_count_keys)
    ((parts.distinct, counted)
     | "Counts" >> beam.Flatten()
     | "Distinct" >> beam.CombinePerKey(sum)
     | "AllDistinct" >> beam.combiners.ToList()
     | "SaveDistinct" >> beam.Map(_save, staging, "distinct"))


def _watch(result: Any, progress: Callable | None) -> None:
    """Waits for the job, showing its counters as it goes where the runner reports them while it
    runs (the DirectRunner only returns once done)."""
    while not PipelineState.is_terminal(result.state):
        if progress:
            progress("encoding", _counter(result, "records read"), None)
        time.sleep(_POLL_SECONDS)
    result.wait_until_finish()
    if progress:
        progress("encoding", _counter(result, "records read"), None)


def _watched_workers(job: Callable[[], None]) -> None:
    """Runs `job` (a DirectRunner job in this process), failing it with one line when one of its
    worker processes dies (killed, out of memory). Beam 2.77's FnApiRunner reports such a death
    only as an exception in the thread that started the process (`SubprocessSdkWorker.run` in
    runners/portability/local_job_service.py) and then waits forever for the bundle that worker
    held (`BundleManager._run_bundle`, fn_api_runner/fn_runner.py): so the job runs in a thread of
    its own, and when Beam reports a death the other workers are stopped and the build fails
    (its finished shards are in the manifest, for `--resume`)."""
    done = threading.Event()
    died: list[str] = []
    failed: list[BaseException] = []
    previous = threading.excepthook

    def reported(args: Any) -> None:
        if args.thread is not None and args.thread.name == "run_worker" and isinstance(args.exc_value, RuntimeError):
            died.append(str(args.exc_value))  # "Worker subprocess exited with return code 137"
            done.set()
        else:
            previous(args)

    def run() -> None:
        try:
            job()
        except BaseException as error:
            failed.append(error)
        finally:
            done.set()

    threading.excepthook = reported
    try:
        threading.Thread(target=run, name="beam-job", daemon=True).start()
        try:
            done.wait()
        except BaseException:  # Ctrl-C: the job's thread can't be stopped, its workers can
            _stop_workers()
            raise
        if died:  # the job's thread waits on for the dead worker: stop the others, so the process can end
            _stop_workers()
    finally:
        threading.excepthook = previous
    if died:
        raise TFRecordBuilderError(f"a Beam worker process {_how_it_ended(died[0])} while the job ran; the "
                                   "DirectRunner doesn't retry: build again with --resume to keep the shards it finished")
    if failed:
        raise failed[0]


def _how_it_ended(reported: str) -> str:
    """Beam's "Worker subprocess exited with return code N" in words: a signal by its name (N is
    the shell's 128 + signal, or Python's -signal), else the exit status."""
    code = reported.rpartition(" ")[2]
    if not code.lstrip("-").isdigit():
        return f"died ({reported})"
    number = -int(code) if int(code) < 0 else int(code) - 128
    try:
        return f"was killed ({signal.Signals(number).name})"
    except ValueError:
        return f"exited with status {code}"


def _stop_workers() -> None:
    """Kills the DirectRunner's worker processes and waits (a while) for Beam's threads that watch them."""
    for pid in _worker_processes():
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    for thread in threading.enumerate():
        if thread.name == "run_worker":
            thread.join(timeout=10)


def _worker_processes() -> list[int]:
    """The DirectRunner's worker processes (`sdk_worker_main`) this process started (Linux's /proc)."""
    parents: dict[int, int] = {}
    workers = []
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else []:
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as file:
                parents[int(entry.name)] = int(file.read().rpartition(")")[2].split()[1])
            with open(f"/proc/{entry.name}/cmdline", "rb") as file:
                if b"sdk_worker_main" in file.read():
                    workers.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    me = os.getpid()

    def ours(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == me:
                return True
        return False

    return [pid for pid in workers if ours(pid)]


def _counter(result: Any, name: str) -> int:
    try:
        found = result.metrics().query(MetricsFilter().with_namespace(_NAMESPACE).with_name(name))["counters"]
    except Exception:  # a runner without metrics while it runs
        return 0
    return sum(counter.committed or counter.attempted or 0 for counter in found)


def _options(given: list[str], workers: int) -> PipelineOptions:
    """Beam's options as given; none: the DirectRunner in `workers` processes."""
    flags = list(given) if given else ["--runner=DirectRunner", "--direct_running_mode=multi_processing",
                                       f"--direct_num_workers={workers}", "--default_sdk_harness_log_level=WARNING"]
    options = PipelineOptions(flags)
    refused: list[str] = []

    class _Discarded(logging.Handler):  # Beam only logs flags it can't parse, and goes on without them
        def emit(self, record: logging.LogRecord) -> None:
            if "unparseable" in record.getMessage():
                refused.append(record.getMessage())

    handler = _Discarded()
    logger = logging.getLogger("apache_beam.options.pipeline_options")
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    logger.propagate = False
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            options.get_all_options()
    except SystemExit:  # argparse: a known option with a value it refuses (it printed why)
        reason = said.getvalue().strip().splitlines()[-1].partition("error: ")[2] if said.getvalue().strip() else ""
        raise UsageError(f"--pipeline-options: Beam refuses them: {reason or ' '.join(given)}") from None
    finally:
        logger.removeHandler(handler)
    logging.getLogger("apache_beam").setLevel(logging.ERROR)  # Beam's INFO lines would drown the build's
    if refused:
        raise UsageError(f"--pipeline-options: Beam doesn't know {refused[0].partition(': ')[2]}")
    return options


class _EncodeTask(beam.DoFn):
    """Reads and encodes one task (`distributed.encode_task`); its records go out by (split, bucket)."""

    def __init__(self, spec: Spec, bits: int, sources: dict[str, str], carrier: "_BetweenSteps",
                 keep: KeptSplits | None = None):
        self.spec = spec
        self.keep = keep
        self.bits = bits
        self.sources = sources  # the spec's builder file: a worker elsewhere doesn't have it
        self.carrier = carrier
        self.builders: dict[str | None, Builder] = {}

    def setup(self) -> None:
        add_shipped_sources(self.sources)
        self.builders = dict(source_builders(self.spec))  # a custom builder's code runs here, on the worker
        self.read = beam.metrics.Metrics.counter(_NAMESPACE, "records read")
        self.encoded = beam.metrics.Metrics.counter(_NAMESPACE, "records encoded")
        self.skipped = beam.metrics.Metrics.counter(_NAMESPACE, "records skipped")

    def _counted(self, read: int, encoded: int, skipped: int) -> None:
        self.read.inc(read)
        self.encoded.inc(encoded)
        self.skipped.inc(skipped)

    def process(self, task: ReadTask, stratified: tuple[Strata, str | None] | None = None) -> Iterator[Any]:
        strata, error = stratified if stratified is not None else (None, None)
        if error is not None:  # the first pass stopped at bad data: the build's error, as locally
            yield beam.pvalue.TaggedOutput("summary", TaskSummary(task.index, error=error))
            return
        summary, held, keys = encode_task(self.spec, self.builders[task.split], task, strata, self.keep,
                                          self._counted)
        for entry in keys:
            yield beam.pvalue.TaggedOutput("keys", entry)
        # the task's records of a split go out by bucket in one piece each: few, large elements
        for name, piece in held.items():
            for bucket, part in by_bucket(self.spec, self.bits, task.index, piece, summary.buckets.setdefault(name, {})):
                yield (name, bucket), self.carrier.put(part, f"{name}-{bucket:05d}-{task.index:06d}")
        yield beam.pvalue.TaggedOutput("summary", summary)


class _ClassifyTask(beam.DoFn):
    """A stratified build's first pass over one task (`distributed.classify_task`)."""

    def __init__(self, spec: Spec, sources: dict[str, str]):
        self.spec = spec
        self.sources = sources
        self.builders: dict[str | None, Builder] = {}

    def setup(self) -> None:
        add_shipped_sources(self.sources)
        self.builders = dict(source_builders(self.spec))

    def process(self, task: ReadTask) -> Iterator[tuple[int, list[BatchClasses], str | None]]:
        yield classify_task(self.spec, self.builders[task.split], task)


def _layout(summaries: list[TaskSummary], spec: Spec, staging: str) -> Layout:
    """The layout from every task's summary; the build's summary is saved for the process that
    started the pipeline."""
    layout, built = layout_of(summaries, spec)
    _save(built, staging, "summary")
    return layout


class _SortBucket(beam.DoFn):
    """Sorts one bucket's records into the order they are written, and cuts it at shard bounds
    (`distributed.sort_bucket`)."""

    def __init__(self, spec: Spec, carrier: "_BetweenSteps"):
        self.spec = spec
        self.carrier = carrier

    def process(self, item: tuple[tuple[str, int], Iterable[Any]], layout: Layout) -> Iterator[Any]:
        (split, bucket), runs = item
        if layout.failed:
            return
        result = sort_bucket(self.spec, split, bucket, joined([self.carrier.get(run) for run in runs]), layout)
        for key_range, keys in result.key_ranges:
            yield beam.pvalue.TaggedOutput("keys", ((split, key_range), keys))
        if result.distinct is not None:
            yield beam.pvalue.TaggedOutput("distinct", (split, result.distinct))
        if result.problem is not None:
            yield beam.pvalue.TaggedOutput("problems", result.problem)
        for shard, part in result.parts:
            yield (split, shard), (bucket, self.carrier.put(part, f"{split}-shard{shard:05d}-{bucket:05d}"))


def _count_keys(item: tuple[tuple[str, int], Iterable[np.ndarray]]) -> tuple[str, int]:
    (split, _), keys = item
    return split, count_keys(keys)


def _unique_keys(item: tuple[Any, Iterable[tuple]], spec: Spec) -> Iterator[Any]:
    _, entries = item
    found = unique_keys(entries)
    if found is not None:
        yield found


class _WriteShard(beam.DoFn):
    """Writes one shard from its parts (`distributed.write_placed_shard`)."""

    def __init__(self, spec: Spec, staging: str, build_id: str, kept: dict[str, dict], carrier: "_BetweenSteps"):
        self.spec, self.staging, self.build_id, self.kept, self.carrier = spec, staging, build_id, kept, carrier

    def setup(self) -> None:
        self.written = beam.metrics.Metrics.counter(_NAMESPACE, "shards written")

    def process(self, item: tuple[tuple[str, int], Iterable[tuple[int, str]]], layout: Layout) -> Iterator[Any]:
        (split, index), parts = item
        handles = [handle for _, handle in sorted(parts, key=lambda part: part[0])]  # by bucket
        file = write_placed_shard(self.spec, self.staging, self.build_id, self.kept, split, index,
                                  [functools.partial(self.carrier.get, handle) for handle in handles], layout)
        if file is not None:
            self.written.inc()
            yield file


@dataclass(frozen=True)
class _BetweenSteps:
    """Carries records from one step of the job to the next: as Beam elements (`folder` None: a
    remote runner's shuffle pages them to disk), or as files in `folder`, with only their names as
    elements. The DirectRunner hands a worker its whole share of a step's elements at once, so
    records carried by Beam there made a worker's memory grow with the dataset; its workers share
    this machine's disk. A retried step writes the same file again."""

    folder: str | None

    def put(self, piece: PlacedRecords, name: str) -> Any:
        if self.folder is None:
            return piece
        path = os.path.join(self.folder, f"{name}.pickle")
        with AtomicFile(path, sync=False) as file:  # not fsynced: a retried step writes it again
            pickle.dump(piece, file, protocol=pickle.HIGHEST_PROTOCOL)
        return path

    def get(self, handle: Any) -> PlacedRecords:
        if self.folder is None:
            return handle
        with open(handle, "rb") as file:
            return pickle.load(file)


def _save(value: Any, staging: str, name: str) -> None:
    """Leaves a result of the pipeline in the staging folder, whole or not at all (in an object
    store, an object appears once its upload is complete)."""
    path = fs.join(staging, f"beam-{name}.pickle")
    with fs.open_file(path, "wb") if fs.is_url(path) else AtomicFile(path, sync=False) as file:
        pickle.dump(value, file)


def _load(staging: str, name: str) -> Any:
    with fs.open_file(fs.join(staging, f"beam-{name}.pickle"), "rb") as file:
        return pickle.load(file)


def _results(spec: Spec, staging: str, build_id: str) -> RunResult:
    """What the pipeline left in the staging folder, checked and put together."""
    result = run_result(spec, staging, build_id, _load(staging, "summary"), _load(staging, "problems"),
                        dict(_load(staging, "distinct")))
    for name in _RESULT_FILES:
        fs.remove(fs.join(staging, name))
    return result
