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
the dataset (`steps.Carrier`). A bucket holds the records
of one range of key hashes (shuffled builds) or of one task (in the source's order), so sorting
buckets and cutting them by rank gives every shard exactly the records, in exactly the order,
that the local runner writes. Shards are written by our writer, not `WriteToTFRecord` (whose
shards start at a random place); a retried bundle writes the same bytes again, and each finished
shard is recorded in `manifest/` so `--resume` keeps it. The DirectRunner retries nothing, and
waits forever for a bundle whose worker process died: that death fails the build
(beam_watchdog.py).

A source whose records are known by key before their bytes are read (an image folder, COCO, VOC,
YOLO) takes one copy instead (build/runners/keyed.py): the plan is made here from the keys, and
the job is a task per shard, each read, encoded and written whole by a worker (builders made on
the worker) and recorded in `manifest/`; the shards' results come back in the plan's order. A
record that doesn't encode sends the build down the pipeline above, which ends as it always has.

The steps are build/runners/steps.py's (Spark's runner runs the same); Beam only carries their
values: each step's outputs by their tags, the groupings as GroupByKey, the layout and the strata
as side inputs.

The pipeline leaves its results in the staging folder (`beam-summary.pickle`: statistics,
skipped records, errors), where the process that started it reads them.
"""
from __future__ import annotations

import contextlib
import io
import logging
import os
import pickle
import shutil
import time
from typing import Any, Callable, Iterable, Iterator

import apache_beam as beam
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.runners.runner import PipelineState

from ... import fs
from ...atomic import AtomicFile
from ...builders.base import Builder
from ...registry import builtin_class
from ...errors import DiskFullError, TFRecordBuilderError, UsageError
from ...processes import stderr_held
from ...spec.model import Spec
from ..plan import KeyedPlan, KeyedShard, ReadTask
from .beam_watchdog import watched_workers, worker_os_error
from .contract import RunJob, RunnerOptions, RunResult, check_not_empty
from .keyed import OneCopyRefused, discard_shards, keyed_jobs, keyed_result, plan_of, readers
from .distributed import BuildSummary, Layout, layout_of, strata_from
from ..vocabulary import WordCounts, words_from
from .steps import (DISTINCT, KEYS, OWN_KEYS, PARTS, PROBLEMS, RECORDS, SUMMARY, Carrier, Steps, counted_keys,
                    own_key_problems)

SUMMARY_FILE = "beam-summary.pickle"
RUNS_FOLDER = "beam-runs"  # records between the job's steps
_RESULT_FILES = (SUMMARY_FILE, "beam-problems.pickle", "beam-distinct.pickle")  # what the job's steps save (`_save`)
_NAMESPACE = "tfrecord_builder"
_POLL_SECONDS = 5.0
_ANY_PAIR = beam.typehints.Tuple[beam.typehints.Any, beam.typehints.Any]
_FLAG_EXAMPLE = "runner=DataflowRunner"  # a runner option, as an error shows it


class BeamRunner:
    """The Runner (build/runners/contract.py) of an Apache Beam pipeline: the DirectRunner on this
    machine by default, or the runner its options name. It keeps no checkpoint (a resumed build
    keeps the finished shards), and for an output in a bucket writes the shards there itself: a
    remote runner's workers are other machines."""

    name = "beam"
    takes_options = True
    checkpoints = False
    shards_to_bucket = True

    def check(self, spec: Spec, folder: str, options: RunnerOptions, workers: int) -> None:
        """Raises UsageError, before any work, for options Beam refuses and for places a job's
        workers can't reach (Dataflow's run on other machines: what they read and write must be in a
        bucket) and for a frame given from Python on a runner whose workers are other machines."""
        chosen = _options(options, workers).view_as(StandardOptions).runner
        if getattr(builtin_class(spec.source.builder), "FROM_PYTHON", False) and chosen not in _ON_THIS_MACHINE:
            raise UsageError(f"source=: a frame's rows are written to this machine's disk for the workers to map, and "
                             f"the {chosen}'s workers are other machines; write the frame to Parquet in a bucket "
                             "and name it in the spec (source: {builder: parquet, path: gs://...}), or run on the "
                             "DirectRunner")
        if chosen != "DataflowRunner":
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
        options = _options(job.options, job.workers)
        local = _on_this_machine(options)
        summary_path = fs.join(job.shards, SUMMARY_FILE)
        if fs.exists(summary_path):
            fs.remove(summary_path)
        plan = plan_of(job)
        if plan is not None:
            try:
                return _run_keyed(options, local, job, plan)
            except OneCopyRefused:  # (a bad record, a shard count the estimate got wrong): the usual pipeline
                discard_shards(job.shards, plan, job.kept, job.build_id)
        steps = Steps.of(job, _carrier(local, os.path.join(job.staging, RUNS_FOLDER)))
        pipeline = _pipeline(options, job)
        _plan(pipeline, steps, job.tasks)

        def failed(error: Exception) -> None:
            if steps.carrier.folder is not None:  # a failed job's records: they'd hold the space a retry needs
                shutil.rmtree(steps.carrier.folder, ignore_errors=True)
            with contextlib.suppress(OSError):  # a bucket out of reach: the job's own error says more
                for name in _RESULT_FILES:  # and what its steps saved
                    if fs.exists(fs.join(job.shards, name)):
                        fs.remove(fs.join(job.shards, name))
            full = DiskFullError.of(worker_os_error(error), job.staging)
            if full is not None:
                raise full from error  # one line, not a worker's traceback and Beam's log

        _run_watched(pipeline, local, job.progress, failed)
        result = _results(steps)
        if steps.carrier.folder is not None:
            shutil.rmtree(steps.carrier.folder)
        return result

    def count_words(self, job: RunJob) -> WordCounts:
        """The learned vocabularies' pass as a pipeline of its own (`_count_plan`), before the
        build's: its counts, summed in the pipeline, are left in `job.shards` for this process."""
        options = _options(job.options, job.workers)
        local = _on_this_machine(options)
        if not fs.is_url(job.shards):
            os.makedirs(job.shards, exist_ok=True)
        steps = Steps.of(job)
        pipeline = _pipeline(options, job)
        _count_plan(pipeline, steps, job.tasks)
        _run_watched(pipeline, local, job.progress)
        try:
            return words_from(_load(job.shards, "words"))
        finally:
            fs.remove(fs.join(job.shards, "beam-words.pickle"))


def _run_keyed(options: PipelineOptions, local: bool, job: RunJob, plan: KeyedPlan) -> RunResult:
    """One copy (build/runners/keyed.py): the plan made here, a task per shard on the workers (each
    read, encoded and written whole, and recorded in the manifest), the results carried back in the
    plan's order. Raises OneCopyRefused where a shard's worker found the build must take the usual path."""
    steps = Steps.of(job)
    todo = keyed_jobs(plan, job.kept, job.shards)
    check_not_empty(job.spec, plan.counts, [])
    sizes = [(split, size) for split, _, size in readers(plan.sources)]
    pipeline = _pipeline(options, job)
    (pipeline
     | "KeyedShards" >> beam.Create(list(enumerate(todo)))
     | "KeyedSpread" >> beam.Reshuffle()
     | "KeyedWrite" >> beam.ParDo(_KeyedShard(steps.past_encoding(), sizes))
     | "KeyedAll" >> beam.combiners.ToList()
     | "KeyedSave" >> beam.Map(_save, job.shards, "keyed"))
    _run_watched(pipeline, local, job.progress, lambda error: None)
    found = dict(_load(job.shards, "keyed"))
    fs.remove(fs.join(job.shards, "beam-keyed.pickle"))
    return keyed_result(job.spec, plan, [found[number] for number in range(len(todo))], job.kept)


class _KeyedShard(beam.DoFn):
    """One shard of a keyed plan read, encoded, written and recorded (`Steps.write_keyed`, with
    builders made on the worker): (its number, its ShardResult or the reason the build must take
    the usual path)."""

    def __init__(self, steps: Steps, sizes: list[tuple[str | None, int]]):
        self.steps = steps
        self.sizes = sizes

    def setup(self) -> None:
        self.builders = self.steps.builders()

    def process(self, item: tuple[int, tuple[KeyedShard, str | None]]) -> Iterator[Any]:
        number, job = item
        yield number, self.steps.write_keyed(self.builders, self.sizes, job)


def _on_this_machine(options: PipelineOptions) -> bool:
    """Whether the job's runner runs it in this machine's processes (the DirectRunner's kinds)."""
    return options.view_as(StandardOptions).runner in _ON_THIS_MACHINE


_ON_THIS_MACHINE = (None, "DirectRunner", "BundleBasedDirectRunner", "SwitchingDirectRunner", "PrismRunner")


def _pipeline(options: PipelineOptions, job: RunJob) -> beam.Pipeline:
    try:
        return beam.Pipeline(options=options)
    except ValueError as error:  # e.g. an unknown --runner
        raise UsageError(f"{job.options.named}: {error}") from None


def _run_watched(pipeline: beam.Pipeline, local: bool, progress: Callable | None,
                 failed: Callable[[Exception], None] | None = None) -> None:
    """Runs the job to its end, showing its progress; `failed` sees an error first (and may raise
    one of its own in its place). The DirectRunner's workers are this machine's processes, each
    logging a dozen lines: held back unless the job fails for a reason of Beam's; a remote
    runner's lines (the job's URL) stay."""
    held = (stderr_held(lambda error: not isinstance(error, TFRecordBuilderError)) if local
            else contextlib.nullcontext())
    with held:
        try:
            if local:
                watched_workers(lambda: _watch(pipeline.run(), progress))
            else:
                _watch(pipeline.run(), progress)
        except Exception as error:
            if failed is not None:
                failed(error)
            raise


def _strata(pipeline: beam.Pipeline, steps: Steps, tasks: list[ReadTask]) -> list[Any]:
    """A stratified build's first pass, every record's class before any is divided, as the side
    input of the passes after it (none for a build without `stratify:`)."""
    if steps.spec.stratify is None:
        return []
    return [beam.pvalue.AsSingleton(pipeline
                                    | "ClassTasks" >> beam.Create(tasks)
                                    | "ClassSpread" >> beam.Reshuffle()
                                    | "Classify" >> beam.ParDo(_ClassifyTask(steps))
                                    | "AllClasses" >> beam.combiners.ToList()
                                    | "Strata" >> beam.Map(strata_from, steps.spec))]


def _count_plan(pipeline: beam.Pipeline, steps: Steps, tasks: list[ReadTask]) -> None:
    """Create(read tasks) -> Reshuffle -> each task's words (after the strata, as `_plan`) -> all -> saved."""
    strata = _strata(pipeline, steps, tasks)
    (pipeline
     | "WordTasks" >> beam.Create(tasks)
     | "WordSpread" >> beam.Reshuffle()
     | "Count" >> beam.ParDo(_CountTask(steps), *strata)
     | "AllWords" >> beam.combiners.ToList()
     | "SaveWords" >> beam.Map(_save, steps.shards, "words"))


def _carrier(local: bool, folder: str) -> Carrier:
    """How records cross the job's steps: `TFRECORD_BUILDER_BEAM_RECORDS` (files or elements), else
    files where the workers share this machine's disk (the DirectRunner), else Beam elements (a
    remote runner's shuffle pages them to disk)."""
    chosen = os.environ.get("TFRECORD_BUILDER_BEAM_RECORDS") or ("files" if local else "elements")
    if chosen not in ("files", "elements"):
        raise UsageError(f"TFRECORD_BUILDER_BEAM_RECORDS: expected files or elements, received {chosen!r}")
    if chosen == "elements":
        return Carrier(None)
    shutil.rmtree(folder, ignore_errors=True)  # a killed job's
    os.makedirs(folder)
    return Carrier(folder)


def _plan(pipeline: beam.Pipeline, steps: Steps, tasks: list[ReadTask]) -> None:
    """The plan's steps, as the module's docstring draws them."""
    later = steps.past_encoding()  # what the steps after encoding ship
    strata = _strata(pipeline, steps, tasks)
    encoded = (pipeline
               | "Tasks" >> beam.Create(tasks)
               | "Spread" >> beam.Reshuffle()
               | "Encode" >> beam.ParDo(_EncodeTask(steps), *strata).with_output_types(_ANY_PAIR).with_outputs(
                   SUMMARY, OWN_KEYS, main=RECORDS))
    layout = beam.pvalue.AsSingleton(encoded[SUMMARY]
                                     | "Summaries" >> beam.combiners.ToList()
                                     | "Layout" >> beam.Map(_layout, later))
    parts = (encoded[RECORDS]
             | "Buckets" >> beam.GroupByKey()
             | "Sort" >> beam.ParDo(_SortBucket(later), layout).with_output_types(_ANY_PAIR).with_outputs(
                 PROBLEMS, DISTINCT, KEYS, main=PARTS))
    (parts[PARTS]
     | "Shards" >> beam.GroupByKey()
     | "Write" >> beam.ParDo(_WriteShard(later), layout))
    unique = encoded[OWN_KEYS] | "Keys" >> beam.GroupByKey() | "Unique" >> beam.FlatMap(own_key_problems)
    ((parts[PROBLEMS], unique)
     | "Problems" >> beam.Flatten()
     | "AllProblems" >> beam.combiners.ToList()
     | "SaveProblems" >> beam.Map(_save, steps.shards, "problems"))
    counted = parts[KEYS] | "KeyRanges" >> beam.GroupByKey() | "CountKeys" >> beam.Map(counted_keys)
    ((parts[DISTINCT], counted)
     | "Counts" >> beam.Flatten()
     | "Distinct" >> beam.CombinePerKey(sum)
     | "AllDistinct" >> beam.combiners.ToList()
     | "SaveDistinct" >> beam.Map(_save, steps.shards, "distinct"))


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


def _counter(result: Any, name: str) -> int:
    try:
        found = result.metrics().query(MetricsFilter().with_namespace(_NAMESPACE).with_name(name))["counters"]
    except Exception:  # a runner without metrics while it runs
        return 0
    return sum(counter.committed or counter.attempted or 0 for counter in found)


def _options(given: RunnerOptions, workers: int) -> PipelineOptions:
    """Beam's options as given (`KEY=VALUE` as `--KEY=VALUE`, `KEY` alone as the flag `--KEY`);
    none: the DirectRunner in `workers` processes."""
    flags = list(given.given) if given.flags else [
        (key if key.startswith("-") else f"--{key}") + ("" if value is None else f"={value}")
        for key, value in given.pairs(_FLAG_EXAMPLE, bare=True)]
    if not flags:
        flags = ["--runner=DirectRunner", "--direct_running_mode=multi_processing", f"--direct_num_workers={workers}",
                 "--default_sdk_harness_log_level=WARNING"]
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
        raise UsageError(f"{given.named}: Beam refuses them: {reason or ' '.join(flags)}") from None
    finally:
        logger.removeHandler(handler)
    logging.getLogger("apache_beam").setLevel(logging.ERROR)  # Beam's INFO lines would drown the build's
    if refused:
        raise UsageError(f"{given.named}: Beam doesn't know {refused[0].partition(': ')[2]}")
    return options


def _tagged(outputs: Iterator[tuple[str, Any]], main: str) -> Iterator[Any]:
    """A step's outputs as Beam's: the `main` tag's as the main output, the others tagged."""
    for tag, value in outputs:
        yield value if tag == main else beam.pvalue.TaggedOutput(tag, value)


class _TaskStep(beam.DoFn):
    """A step over one read task at a time, with the spec's builders made on its worker."""

    def __init__(self, steps: Steps):
        self.steps = steps
        self.builders: dict[str | None, Builder] = {}

    def setup(self) -> None:
        self.builders = self.steps.builders()  # a custom builder's code runs here, on the worker


class _EncodeTask(_TaskStep):
    """Reads and encodes one task (`Steps.encode`), counting as it goes."""

    def setup(self) -> None:
        super().setup()
        self.read = beam.metrics.Metrics.counter(_NAMESPACE, "records read")
        self.encoded = beam.metrics.Metrics.counter(_NAMESPACE, "records encoded")
        self.skipped = beam.metrics.Metrics.counter(_NAMESPACE, "records skipped")

    def _counted(self, read: int, encoded: int, skipped: int) -> None:
        self.read.inc(read)
        self.encoded.inc(encoded)
        self.skipped.inc(skipped)

    def process(self, task: ReadTask, stratified: tuple | None = None) -> Iterator[Any]:
        yield from _tagged(self.steps.encode(self.builders, task, stratified, self._counted), RECORDS)


class _ClassifyTask(_TaskStep):
    """A stratified build's first pass over one task (`Steps.classify`)."""

    def process(self, task: ReadTask) -> Iterator[Any]:
        yield self.steps.classify(self.builders, task)


class _CountTask(_TaskStep):
    """A learned vocabulary's pass over one task (`Steps.count_words`)."""

    def process(self, task: ReadTask, stratified: tuple | None = None) -> Iterator[Any]:
        yield self.steps.count_words(self.builders, task, stratified)


def _layout(summaries: list, steps: Steps) -> Layout:
    """The layout from every task's summary; the build's summary is saved for the process that
    started the pipeline."""
    layout, built = layout_of(summaries, steps.spec)
    _save(built, steps.shards, "summary")
    return layout


class _SortBucket(beam.DoFn):
    """Sorts one bucket's records and cuts them at shard bounds (`Steps.sort`)."""

    def __init__(self, steps: Steps):
        self.steps = steps

    def process(self, item: tuple[tuple[str, int], Iterable[Any]], layout: Layout) -> Iterator[Any]:
        yield from _tagged(self.steps.sort(item[0], item[1], layout), PARTS)


class _WriteShard(beam.DoFn):
    """Writes one shard from its parts (`Steps.write`)."""

    def __init__(self, steps: Steps):
        self.steps = steps

    def setup(self) -> None:
        self.written = beam.metrics.Metrics.counter(_NAMESPACE, "shards written")

    def process(self, item: tuple[tuple[str, int], Iterable[tuple[int, Any]]], layout: Layout) -> Iterator[Any]:
        file = self.steps.write(item[0], item[1], layout)
        if file is not None:
            self.written.inc()
            yield file


def _save(value: Any, staging: str, name: str) -> None:
    """Leaves a result of the pipeline in the staging folder, whole or not at all (in an object
    store, an object appears once its upload is complete)."""
    path = fs.join(staging, f"beam-{name}.pickle")
    with fs.open_file(path, "wb") if fs.is_url(path) else AtomicFile(path, sync=False) as file:
        pickle.dump(value, file)


def _load(staging: str, name: str) -> Any:
    with fs.open_file(fs.join(staging, f"beam-{name}.pickle"), "rb") as file:
        return pickle.load(file)


def _results(steps: Steps) -> RunResult:
    """What the pipeline left in the staging folder, checked and put together."""
    summary: BuildSummary = _load(steps.shards, "summary")
    result = steps.result(summary, _load(steps.shards, "problems"), dict(_load(steps.shards, "distinct")))
    for name in _RESULT_FILES:
        fs.remove(fs.join(steps.shards, name))
    return result
