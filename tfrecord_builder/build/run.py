"""The build: reads the sources, encodes and splits the records, writes shards, info and module.

This module orchestrates; the builders read, the feature types and codec encode, `write/`
writes. Nothing touches the output folder until every record is encoded, so bad data never
leaves a half-written dataset behind.
"""
from __future__ import annotations

import getpass
import hashlib
import os
import shutil
import tempfile
import warnings
from typing import Any

from ..builders.base import Builder
from ..builders.frames import frame_builders, staged
from ..builders.spark_table import is_spark_frame, spark_frame_builders
from ..builders.sources import check_fields, check_sources, source_builders, with_source_classes, with_source_columns
from ..codegen.render import render_module
from ..codegen.module_file import write_module
from ..errors import BuildWarning, DiskFullError, UsageError
from ..features import notices
from .metadata import write_metadata_files
from ..read.report import check_plotting
from ..progress import Progress, ProgressOption, progress_display
from .. import atomic, fs, pandas_probe
from .runners import chosen_runner, runner_names
from .runners.contract import Runner, RunJob, RunnerOptions
from .plan import read_tasks
from .runners.local import counted_words
from .vocabulary import LearnedFile, learned_features, learned_spec, write_learned
from ..spec.load import load_spec, spec_from_dict
from ..spec.model import Spec
from ..version import __version__
from ..write import checkpoint
from ..write.info import DatasetInfo, SplitInfo, read_info
from ..write.membership import KeptSplits
from ..write.manifest import MANIFEST_FILE, SHARDS_FOLDER, finished_shards, fingerprint, has_shards
from ..write.naming import INFO_FILE, MARKER_FILE, is_ours
from ..write.snapshots import SNAPSHOTS_FILE, check_unchanged, record as record_snapshots, source_snapshots
from ..write.publish import build_lock, frame_folder, publish, publish_url, staging_folder, upload, url_staging

def build(spec: Spec | str | os.PathLike, output: str | os.PathLike | None = None, *,
          module: str | os.PathLike | None = None, overwrite: bool = False, resume: bool = False,
          workers: int | None = None, progress: ProgressOption = None, runner: str = "local",
          runner_options: list[str] | dict[str, str] | RunnerOptions | None = None,
          pipeline_options: list[str] | None = None,
          keep_splits: str | os.PathLike | DatasetInfo | None = None, source: Any = None) -> DatasetInfo:
    """Builds every split of `spec` and returns the dataset's info.

    >>> info = build("specs/wine.yaml", output="build", overwrite=True)
    >>> info.splits["train"].num_examples, info.splits["test"].num_examples
    (147, 31)

    `output` replaces the spec's `output.dir`; the dataset lands in `output/NAME/VERSION`.
    An existing finished dataset there is replaced only with `overwrite=True`. Records are
    encoded, and shards written, in `workers` processes (default: the machine's cores; a source of
    one batch stays in this process); the output is byte-identical whatever the number. With
    `resume`, the shards an interrupted build of the same spec finished (still intact) are kept,
    and the rest are result.

    `progress`: tqdm bars per phase (True), none (False), bars only on a terminal or in a notebook
    (None, the default), or a callable of your own called with (phase, records done, records in all
    or None).

    `runner="beam"` runs the same plan as an Apache Beam pipeline (the `beam` extra), `runner="spark"`
    as an Apache Spark job (the `spark` extra); the dataset is the same, byte for byte, as the local
    runner's. `runner_options` are the engine's own, as `KEY=VALUE` strings or a dict: Beam's
    pipeline options without their dashes (`{"runner": "DataflowRunner", "project": "..."}`;
    none: the DirectRunner in `workers` processes), Spark's conf for a new session
    (`["spark.master=spark://host:7077"]`; none: `local[workers]`). `pipeline_options`, their
    old name, are passed to Beam as they are (`["--runner=DataflowRunner", ...]`).

    `keep_splits`: an earlier version of the dataset (its folder): every record whose key it holds
    goes to the split it had there, the others are split by hash as usual (the numbers are in
    `info.membership["kept_splits"]`).

    `source`: the rows, in memory: a pandas or polars DataFrame, a pyarrow Table, Dataset or
    RecordBatchReader, or a Hugging Face `datasets.Dataset`, read as the same rows in a Parquet file
    are (docs/sources-dataframes.md). The spec's `source:` is then left out or `{builder:
    dataframe}`; the local runner reads it, and so does Beam's DirectRunner (`runner="beam"`
    without a remote runner named), whose workers map its rows on this machine too.
    """
    pandas_probe.look_without_pandas()  # (Arrow's look for pandas, without importing it: 0.2-0.35 s)
    if not isinstance(spec, Spec):
        spec = load_spec(spec)
    else:  # perhaps changed with dataclasses.replace, which checks nothing: check it as a file would be
        spec_from_dict(spec.to_dict(), spec.file or "the spec")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise UsageError(f"workers: expected a positive integer, received {workers!r}")
    if source is not None and is_spark_frame(source) and runner != "spark":
        raise UsageError(f"source=: a Spark DataFrame is read by the Spark runner, on the executors where its "
                         f"partitions are (never collected to this process): runner=\"spark\", not {runner!r}")
    if source is not None and not is_spark_frame(source) and runner not in ("local", "beam"):
        raise UsageError(f"source=: a pandas, polars or Arrow frame is read by the local runner and by Beam's "
                         f"DirectRunner (runner=\"beam\"), whose workers map its rows on this machine; with "
                         f"runner={runner!r}, write the frame to Parquet and name the file in the spec")
    chosen = chosen_runner(runner)  # its engine imported only now, and only if installed
    options = _runner_options(runner_options, pipeline_options)
    if options is not None and not chosen.takes_options:
        cli = options.named.startswith("--")
        others = " or ".join(f"--runner {name}" if cli else f"runner={name!r}" for name in runner_names()
                             if name != chosen.name)
        raise UsageError(f"{options.named}: the {chosen.name} runner takes no engine options: give them with {others}")
    for place in (module, output):
        problem = fs.place_problem(os.fspath(place) if place is not None else None)
        if problem:
            raise UsageError(problem)
    builders: list[tuple[str | None, Builder]]
    if source is not None and is_spark_frame(source):
        spec, builders = spark_frame_builders(spec, source)
    elif source is not None:
        builders = frame_builders(spec, source)
    else:
        check_sources(spec)  # before anything is made on disk
        builders = source_builders(spec)
    for _, made in builders:  # a source only one runner reads where it is (a Spark table)
        if made.READ_BY is not None and made.READ_BY != chosen.name:
            raise UsageError(f"source: builder {spec.source.builder} on the {chosen.name} runner: its rows are read "
                             f"by the {made.READ_BY} runner, where they are: --runner {made.READ_BY} "
                             f"(runner=\"{made.READ_BY}\" in Python)")
    check_fields(spec, builders)
    keep = kept_splits(spec, keep_splits) if keep_splits is not None else None
    if spec.output.report:
        check_plotting()
    root = os.fspath(output) if output is not None else spec.resolve(spec.output.dir)
    folder = fs.absolute(fs.join(root, spec.name, spec.version))
    options = options if options is not None else RunnerOptions()
    chosen.check(spec, folder, options, workers or os.cpu_count() or 1)
    _check_target(folder, overwrite)
    work = _local_work_folder(folder)
    display = progress_display(progress)
    try:
        with build_lock(folder):  # on a disk beside the dataset; for a URL in the store, for every machine
            _check_target(folder, overwrite, probe=False)  # again: another build of it may have finished since
            with staged(builders, frame_folder(work)):  # a frame's rows, written out for the workers to map
                info = _build(spec, builders, folder, work, module, resume, workers, display, chosen, options, keep)
    finally:
        display.close()
    for message in info.warnings:
        warnings.warn(message, BuildWarning, stacklevel=2)
    return info


def _runner_options(runner_options: list[str] | dict[str, str] | RunnerOptions | None,
                    pipeline_options: list[str] | None) -> RunnerOptions | None:
    """The engine's options as given (None: none given); `pipeline_options`, their old name, are
    Beam's flags as they are."""
    if runner_options is not None and pipeline_options is not None:
        raise UsageError("runner_options and pipeline_options: the same options by two names; give runner_options")
    if pipeline_options is not None:
        return RunnerOptions.of(pipeline_options, "pipeline_options", flags=True)
    return RunnerOptions.of(runner_options, "runner_options") if runner_options is not None else None


def _local_work_folder(folder: str) -> str:
    """Where the dataset at `folder` is put together on this machine: the folder itself, or for
    a URL a folder of the temporary directory named for it (so `--resume` finds it again), and for
    the store it is in (the endpoint an S3 or Cloud Storage client is pointed at: one bucket name on
    two servers is two datasets), one folder a user (another's can't be written)."""
    if not fs.is_url(folder):
        return folder
    store = [folder] + [os.environ.get(name, "") for name in ("AWS_ENDPOINT_URL", "STORAGE_EMULATOR_HOST")]
    digest = hashlib.sha256("\n".join(store).encode("utf-8")).hexdigest()[:16]
    return os.path.join(tempfile.gettempdir(), f"tfrecord-builder-{_user()}", digest, fs.basename(folder))


def _user() -> str:
    """This user's name for folder names (the user id where there is no name)."""
    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        name = str(os.getuid()) if hasattr(os, "getuid") else "user"
    return "".join(char if char.isalnum() or char in "-_." else "_" for char in name)


def _build(spec: Spec, builders: list[tuple[str | None, Builder]], folder: str, work: str, module: str | os.PathLike | None, resume: bool,
           workers: int | None, progress: Progress | None, runner: Runner,
           options: RunnerOptions, keep: KeptSplits | None = None) -> DatasetInfo:
    """Runs the build's plan (read tasks, encoding, shards) with the chosen runner in the staging
    folder beside `work` (the dataset's folder, or a local one for a URL), writes
    `dataset_info.json` last, then swaps the dataset into place (for a URL: uploads it to a
    staging prefix and publishes it there, `dataset_info.json` last).

    A build killed at any moment leaves the previous dataset (or nothing) at `folder`; with
    `resume`, the next one carries on from the last checkpoint and keeps the finished shards.
    """
    snapshots = source_snapshots(builders)  # the tables' versions, chosen here once: every task reads them
    spec = with_source_columns(with_source_classes(spec, builders), builders)
    tasks = read_tasks(builders)
    workers = workers or os.cpu_count() or 1
    staging = staging_folder(work)
    # a runner may write the shards straight into a bucket (its workers may be other machines);
    # the rest of the dataset is put together here and uploaded once the shards are done
    remote = url_staging(folder) if fs.is_url(folder) else None
    shards_at = remote if remote is not None and runner.shards_to_bucket else staging
    learned: list[LearnedFile] = []
    if learned_features(spec):  # a vocabulary learned from the train split first: the spec the build runs holds it
        spec, learned = _learned_vocabularies(spec, tasks, builders, staging, shards_at, workers, progress, runner,
                                              options, keep)
    # kept splits decide where records go: a resumed build keeps what a build keeping the same made
    # (a learned vocabulary's sha256 is in the spec: shards of another vocabulary aren't kept)
    # and so do the versions of the data read: shards of another version of a table aren't kept
    same_spec = {**spec.to_dict(), **({"keep_splits": keep.digest()} if keep else {})}
    build_id = fingerprint({**same_spec, **({"source_snapshots": snapshots} if snapshots else {})}, __version__)
    if resume:
        check_unchanged(staging, fingerprint(same_spec, __version__), snapshots)
    kept = finished_shards(shards_at, build_id) if resume else {}
    restored = checkpoint.load(staging, build_id) if resume and runner.checkpoints else None
    if not kept and restored is None and os.path.exists(staging):
        shutil.rmtree(staging)  # ours: an interrupted build, of this spec or an earlier one
    if remote is not None and not kept:
        fs.rmtree(remote)  # an upload cut short, or a runner's shards of another build
    os.makedirs(staging, exist_ok=True)
    atomic.remove_temporaries(staging)  # files a killed build was writing, in any of its folders
    open(os.path.join(staging, MARKER_FILE), "w").close()
    record_snapshots(staging, fingerprint(same_spec, __version__), snapshots)
    write_learned(staging, learned)  # beside the shards, before dataset_info.json (a resumed build's kept)
    try:
        job = RunJob(spec, tasks, dict(builders), staging=staging, shards=shards_at, build_id=build_id, kept=kept,
                     restored=restored, workers=workers, progress=progress, keep=keep, options=options)
        result = runner.run(job)
        atomic.remove_temporaries(staging)  # an attempt a runner's engine stopped (an executor lost) left it
        total = sum(split.num_examples for split in result.splits.values())
        kept_from = {"dataset": keep.source, "kept": result.kept, "new": total - result.kept} if keep else None
        found = split_warnings(spec, result.splits, result.distinct) + notices.said(result.notices)
        if keep is not None and not result.kept and total and len(keep.hashes):
            found.append(f"--keep-splits {keep.source}: none of the {total:,} records has a key it holds, so none "
                         "kept a split; without source.key a row's key is the whole row, and a row with any value "
                         "changed has a new one")
        info = write_metadata_files(spec, folder, staging, result.splits, result.statistics, result.skipped, found,
                                    result.members, kept_from, snapshots)
        for leftover in (checkpoint.RUNS_FOLDER, SHARDS_FOLDER):
            shutil.rmtree(os.path.join(staging, leftover), ignore_errors=True)
        for leftover in (MANIFEST_FILE, checkpoint.CHECKPOINT_FILE, SNAPSHOTS_FILE):
            if os.path.exists(os.path.join(staging, leftover)):
                os.remove(os.path.join(staging, leftover))  # the finished dataset's dataset_info.json says it all
    except BaseException as error:
        if not os.path.exists(os.path.join(staging, checkpoint.CHECKPOINT_FILE)) and not has_shards(staging):
            shutil.rmtree(staging, ignore_errors=True)  # nothing in it worth resuming
        full = DiskFullError.of(error, staging)  # a writer's, in any process: one line, not errno 28's
        if full is None:
            raise
        # runs no checkpoint lists are dropped by the resumed build anyway: their space is free now
        checkpoint.drop_unlisted_runs(staging, checkpoint.load(staging, build_id))
        raise full from error  # --debug shows where
    if remote is not None:
        fs.rmtree(fs.join(remote, SHARDS_FOLDER))  # a runner's records of its shards: the info says it all
        upload(staging, remote)  # the shards (unless the runner wrote them there), dataset_info.json last
        publish_url(remote, folder)
        shutil.rmtree(staging)
    else:
        publish(staging, folder)
    source = render_module(spec, data_dir=folder)
    for copy in [spec.output.module and spec.resolve(spec.output.module), module]:
        if copy:
            write_module(source, os.fspath(copy), spec.name)
    return info


def _learned_vocabularies(spec: Spec, tasks: list, builders: list[tuple[str | None, Builder]], staging: str,
                          shards_at: str, workers: int, progress: Progress | None, runner: Runner,
                          options: RunnerOptions, keep: KeptSplits | None) -> tuple[Spec, list[LearnedFile]]:
    """The spec with its vocabularies learned from the train split (build/vocabulary.py), by the
    runner's engine where it runs the pass (`count_words`), else by this machine's processes."""
    job = RunJob(spec, tasks, dict(builders), staging=staging, shards=shards_at, build_id="vocabulary", kept={},
                 restored=None, workers=workers, progress=progress, keep=keep, options=options)
    engine = getattr(runner, "count_words", None)
    counts = engine(job) if engine is not None else counted_words(spec, tasks, dict(builders), workers, progress,
                                                                  keep)
    return learned_spec(spec, counts)


def kept_splits(spec: Spec, old: str | os.PathLike | DatasetInfo) -> KeptSplits:
    """The splits of the earlier version `old` for the build of `spec` to keep. Raises UsageError
    where there is nothing to keep: splits the spec's sources give, or a dataset without membership."""
    if not spec.fraction_splits:
        raise UsageError("--keep-splits: the spec's splits come from its sources (a path or a column per split), "
                         "not from hashes of the keys: there is nothing to keep")
    if spec.stratify is not None:  # a class's shares follow from this version's records of it
        raise UsageError(f"--keep-splits: the spec's splits are stratified by `{spec.stratify}`, which divides "
                         "each class by this version's records; expected one of the two, not both")
    info = old if isinstance(old, DatasetInfo) else read_info(os.fspath(old))
    return KeptSplits.of(info, list(spec.splits))


def _check_target(folder: str, overwrite: bool, probe: bool = True) -> None:
    """Raises UsageError where `folder` is no place for the dataset; `probe`: for a URL, first
    writes and removes an object to find a store that refuses us."""
    if fs.is_url(folder):
        _check_url_target(folder, overwrite, probe)
        return
    if os.path.exists(os.path.join(folder, INFO_FILE)) and not overwrite:
        raise UsageError(f"{folder}: a dataset is already built there; pass --overwrite to replace it")
    if os.path.isdir(folder) and os.listdir(folder) and not is_ours(os.listdir(folder)):
        raise UsageError(f"{folder}: the folder exists and was not made by tfrecord-builder; "
                         "refusing to write into it (choose another --output)")
    above = os.path.abspath(folder)
    while not os.path.exists(above) and os.path.dirname(above) != above:
        above = os.path.dirname(above)  # the nearest part of the path that exists
    if not os.path.isdir(above):
        raise UsageError(f"{above}: exists and is not a folder; the output must be a folder")


def _check_url_target(folder: str, overwrite: bool, probe: bool = True) -> None:
    """The same checks in an object store, where a bucket may be missing or refuse us."""
    problem = fs.store_problem(fs.dirname(folder)) if probe else None
    if problem:
        raise UsageError(problem)
    try:
        built = fs.exists(fs.join(folder, INFO_FILE))
        names = fs.listdir(folder) if not built and fs.isdir(folder) else []
    except FileNotFoundError as error:  # s3fs: no such bucket
        raise UsageError(f"{folder}: {error.strerror or error}") from None
    except PermissionError as error:
        raise UsageError(f"{folder}: access refused ({error})") from None
    except OSError as error:  # an endpoint that doesn't answer, refused credentials
        raise UsageError(f"{folder}: can't reach the object store: {str(error).splitlines()[0]}") from None
    if built and not overwrite:
        raise UsageError(f"{folder}: a dataset is already built there; pass --overwrite to replace it")
    if names and not is_ours(names):
        raise UsageError(f"{folder}: the folder exists and was not made by tfrecord-builder; "
                         "refusing to write into it (choose another --output)")


def shard_warnings(spec: Spec, splits: dict[str, SplitInfo]) -> list[str]:
    """A split given fewer shards than `output.shards` asks, so that none holds a single record
    (write/shards.py count_shards): the count written, and why."""
    found = []
    for name, split in splits.items():
        asked, made = spec.output.shards, len(split.shards)
        if asked is None or not split.num_examples or made >= asked:
            continue
        if split.num_examples == 1:
            found.append(f"split {name} has 1 record: 1 shard, not the {asked} asked (the tfrecord package's reader "
                         "can't read a shard of one record through its index file)")
        else:
            found.append(f"split {name}: {made} shard{'s' if made > 1 else ''}, not the {asked} asked, so that no "
                         f"shard holds just one of its {split.num_examples:,} records (the tfrecord package's reader "
                         "can't read a shard of one record through its index file)")
    return found


SPLIT_TOLERANCE = 0.05  # how far a split made may be from the fraction asked before the build says so


def split_warnings(spec: Spec, splits: dict[str, SplitInfo], distinct: dict[str, int | None]) -> list[str]:
    """What a user should know about the splits made: one left empty, or fractions far from the
    ones asked because rows repeat (rows with the same key share a split, so a table of few
    different rows can't be divided finely). Unique keys off by chance, as hashing a few hundred
    records is, are not worth a word."""
    found = [f"split {name} has no examples" for name, split in splits.items() if not split.num_examples]
    found += shard_warnings(spec, splits)
    total = sum(split.num_examples for split in splits.values())
    keys = sum(distinct.values()) if distinct and None not in distinct.values() else None
    if not spec.fraction_splits or not total or keys is None or keys == total:
        return found
    made = {name: split.num_examples / total for name, split in splits.items()}
    if all(abs(made[name] - asked) <= SPLIT_TOLERANCE for name, asked in spec.splits.items()):
        return found
    fractions = ", ".join(f"{name} {made[name]:.2f}" for name in splits)
    asked = ", ".join(f"{fraction:g}" for fraction in spec.splits.values())
    return found + [f"the splits came out {fractions}, far from the {asked} asked: rows with the same key go to the "
                    f"same split, and the {total:,} records have only {keys:,} different keys (a row's key is the whole "
                    "row); give `source.key`, a column that identifies each record, if equal rows are different records"]
