"""The build: reads the sources, encodes and splits the records, writes shards, info and module.

This module orchestrates; the builders read, the feature types and codec encode, `write/`
writes. Nothing touches the output folder until every record is encoded, so bad data never
leaves a half-written dataset behind.
"""
from __future__ import annotations

import contextlib
import dataclasses
import gc
import json
import os
import shutil
import time
import warnings
from typing import Callable, Iterator

import numpy as np

from .builders.base import Batch, Builder, PendingBatch, loaded, no_column
from .builders.registry import BUILTIN, builder_class
from .codegen.render import render_module, write_module
from .encoding import encode_batches, keys_digest
from .errors import BuildWarning, DataError, SpecError, TFRecordBuilderError, UsageError
from .features import ClassLabelFeature
from .fs import url_problem
from .spec.load import load_spec, spec_from_dict
from .spec.fields import unknown_key_message
from .spec.model import Spec
from .version import __version__
from .write.collect import DistinctKeys, SplitRecords, duplicate_key, key_label
from .write.info import DatasetInfo, SplitInfo
from .write.naming import INFO_FILE, MARKER_FILE, SKIPPED_FILE, dataset_dir, module_name
from .write import checkpoint
from .write.keys import hash_keys
from .write.manifest import Manifest, finished_shards, fingerprint, has_shards
from .write.publish import build_lock, publish, staging_folder
from .write.shards import count_shards, write_split
from .write.stats import SplitStatistics

Progress = Callable[[str, int, "int | None"], None]  # (phase, records so far, records in all if known)


def build(spec: Spec | str | os.PathLike, output: str | os.PathLike | None = None, *,
          module: str | os.PathLike | None = None, overwrite: bool = False, resume: bool = False,
          workers: int | None = None,
          progress: Progress | None = None) -> DatasetInfo:
    """Builds every split of `spec` and returns the dataset's info.

    >>> info = build("specs/wine.yaml", output="build", overwrite=True)
    >>> info.splits["train"].num_examples, info.splits["test"].num_examples
    (147, 31)

    `output` replaces the spec's `output.dir`; the dataset lands in `output/NAME/VERSION`.
    An existing finished dataset there is replaced only with `overwrite=True`. Records are
    encoded, and shards written, in `workers` processes (default: the machine's cores; a source of
    one batch stays in this process); the output is byte-identical whatever the number. With
    `resume`, the shards an interrupted build of the same spec finished (still intact) are kept,
    and the rest are written.
    """
    if not isinstance(spec, Spec):
        spec = load_spec(spec)
    else:  # perhaps changed with dataclasses.replace, which checks nothing: check it as a file would be
        spec_from_dict(spec.to_dict(), spec.file or "the spec")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise UsageError(f"workers: expected a positive integer, received {workers!r}")
    for given in (output, module):
        problem = url_problem(os.fspath(given) if given is not None else None)
        if problem:
            raise UsageError(problem)
    root = os.fspath(output) if output is not None else spec.resolve(spec.output.dir)
    folder = os.path.abspath(dataset_dir(root, spec.name, spec.version))
    _check_target(folder, overwrite)
    with build_lock(folder):
        info = _build(spec, folder, module, resume, workers, progress)
    for message in info.warnings:
        warnings.warn(message, BuildWarning, stacklevel=2)
    return info


def _build(spec: Spec, folder: str, module: str | os.PathLike | None, resume: bool, workers: int | None,
           progress: Progress | None) -> DatasetInfo:
    """Encodes every record into the staging folder (sorted runs beyond the memory budget,
    checkpointed in a long build), then writes the shards and swaps the dataset into place.

    A build killed at any moment leaves the previous dataset (or nothing) at `folder`; with
    `resume`, the next one carries on from the last checkpoint and keeps the finished shards.
    """
    builders = source_builders(spec)
    spec = with_source_classes(spec, builders)
    workers = workers or os.cpu_count() or 1
    staging = staging_folder(folder)
    build_id = fingerprint(spec.to_dict(), __version__)
    kept = finished_shards(staging, build_id) if resume else {}
    restored = checkpoint.load(staging, build_id) if resume else None
    if not kept and restored is None and os.path.exists(staging):
        shutil.rmtree(staging)  # ours: an interrupted build, of this spec or an earlier one
    os.makedirs(staging, exist_ok=True)
    for name in os.listdir(staging):
        if name.startswith(".") and ".tmp-" in name:  # a file a killed build was writing
            os.remove(os.path.join(staging, name))
    open(os.path.join(staging, MARKER_FILE), "w").close()
    try:
        with _collector_paused():
            encoded = _Encoding(spec, staging, build_id, restored)
            try:
                encoded.run(builders, workers, progress)
            except _StaleCheckpoint:  # the source changed since the checkpoint: start over
                encoded.discard()
                encoded = _Encoding(spec, staging, build_id, None)
                encoded.run(builders, workers, progress)
        info = _write(spec, folder, staging, build_id, encoded, kept, module, progress, workers)
    except BaseException:
        if not os.path.exists(os.path.join(staging, checkpoint.CHECKPOINT_FILE)) and not has_shards(staging):
            shutil.rmtree(staging, ignore_errors=True)  # nothing in it worth resuming
        raise
    return info


class _StaleCheckpoint(Exception):
    """The source's first batches no longer have the keys the checkpoint recorded."""


class _Encoding:
    """A build's encoding phase: every split's records and statistics, the skips, and checkpoints."""

    def __init__(self, spec: Spec, staging: str, build_id: str, restored: checkpoint.EncodingState | None):
        self.spec = spec
        self.staging = staging
        runs = os.path.join(staging, checkpoint.RUNS_FOLDER)
        self.records = {name: SplitRecords(runs, spec.output.shuffle, name) for name in spec.splits}
        self.statistics = {name: SplitStatistics(spec.features) for name in spec.splits}
        self.state = restored or checkpoint.EncodingState(build_id)
        self.seen_keys: dict[str | None, dict[bytes, str]] = {}  # by source split: they may reuse keys
        if restored is not None:
            for name, saved in restored.splits.items():
                self.records[name].restore([os.path.join(runs, run) for run in saved["runs"]],
                                           saved["num_examples"], saved["num_bytes"])
            for name, saved in restored.statistics.items():
                self.statistics[name].restore(saved)

    @property
    def skipped(self) -> list[dict[str, str]]:
        return self.state.skipped

    def run(self, builders: list[tuple[str | None, Builder]], workers: int, progress: Progress | None) -> None:
        """Encodes every batch after the restored ones."""
        spec, state = self.spec, self.state
        sizes = [builder.num_records(split) for split, builder in builders]
        total = sum(sizes) if None not in sizes else None
        resumed = state.batches > 0
        last_save = time.monotonic()
        batches = self._after_restored(_batches(spec, builders), state.batches, state.keys_digest)
        for result in encode_batches(spec, batches, workers):
            state.skipped.extend(result.skipped)
            if result.batch is not None:  # keys of its own, records never sorted: checked here
                _check_unique(result.batch, result.hashes, self.seen_keys.setdefault(result.split, {}))
            for name, part in result.parts.items():
                self.records[name].add(part.hashes, part.records, part.labels)
                self.statistics[name].merge(part.statistics)
            state.batches += 1
            state.records += result.count + len(result.skipped)
            state.keys_digest = checkpoint.chain(state.keys_digest, result.source_keys)
            if progress:
                progress("encoding", state.records, total)
            if time.monotonic() - last_save >= checkpoint.INTERVAL:
                self.save()
                last_save = time.monotonic()
        if not any(records.num_examples for records in self.records.values()):
            source = spec.source.path or spec.source.builder
            if state.skipped:  # under on_error: skip
                first = state.skipped[0]
                raise DataError(f"{source}: every record was skipped ({len(state.skipped)}); the first: "
                                f"{first['reason']}")
            raise DataError(f"{source}: the source has no records")
        if resumed or os.path.exists(os.path.join(self.staging, checkpoint.CHECKPOINT_FILE)):
            self.save()  # a long build: a kill while writing won't cost the encoding again

    def _after_restored(self, batches: Iterator[tuple[str | None, Batch]], restored: int,
                        expected: str) -> Iterator[tuple[str | None, Batch]]:
        """The batches after the `restored` ones the checkpoint holds: those are read again (their
        keys must chain to the `expected` digest), not encoded."""
        digest = ""
        for index, (split, batch) in enumerate(batches):
            if index >= restored:
                yield split, batch
                continue
            batch = loaded(batch)
            hashes = hash_keys(batch.keys, self.spec.output.seed)
            digest = checkpoint.chain(digest, keys_digest(hashes))
            if not batch.content_keys and not self.spec.output.shuffle:
                _check_unique(batch, hashes, self.seen_keys.setdefault(split, {}))
            if index + 1 == restored and digest != expected:
                raise _StaleCheckpoint
        if restored and digest != expected:
            raise _StaleCheckpoint  # the source has fewer batches than before

    def save(self) -> None:
        for records in self.records.values():
            records.spill()
        self.state.splits = {name: {"runs": [os.path.basename(run) for run in records.runs],
                                    "num_examples": records.num_examples, "num_bytes": records.num_bytes}
                             for name, records in self.records.items()}
        self.state.statistics = {name: stats.state() for name, stats in self.statistics.items()}
        checkpoint.save(self.staging, self.state)

    def discard(self) -> None:
        for records in self.records.values():
            records.discard()
        checkpoint.discard(self.staging)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off while batches are read and encoded.

    A batch keeps thousands of parsed rows alive; the collector would scan them over and over
    (a third of a JSONL build). The encoder makes no reference cycles, so reference counting
    frees each batch as before; the collector resumes afterwards.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _check_target(folder: str, overwrite: bool) -> None:
    if os.path.exists(os.path.join(folder, INFO_FILE)) and not overwrite:
        raise UsageError(f"{folder}: a dataset is already built there; pass --overwrite to replace it")
    if os.path.isdir(folder) and os.listdir(folder) and not os.path.exists(os.path.join(folder, MARKER_FILE)):
        raise UsageError(f"{folder}: the folder exists and was not made by tfrecord-builder; "
                         "refusing to write into it (choose another --output)")
    above = os.path.abspath(folder)
    while not os.path.exists(above) and os.path.dirname(above) != above:
        above = os.path.dirname(above)  # the nearest part of the path that exists
    if not os.path.isdir(above):
        raise UsageError(f"{above}: exists and is not a folder; the output must be a folder")


def check_sources(spec: Spec) -> None:
    """A built-in builder's source paths exist; raises SpecError at the `path` key otherwise."""
    if spec.source.builder not in BUILTIN:
        return
    places = [(("source", "path"), spec.source.path)]
    if not spec.fraction_splits:
        places = [(("splits", split, "path"), source.path) if source.path else (("source", "path"), spec.source.path)
                  for split, source in spec.splits.items()]
    for key_path, path in places:
        if path is None:
            raise spec.error(key_path[:-1], f"the {spec.source.builder} builder needs a `path`")
        resolved = spec.resolve(path)
        if not os.path.exists(resolved):
            raise spec.error(key_path, f"{resolved} not found")
        wants_folder = spec.source.builder == "image_folder"
        if os.path.isdir(resolved) != wants_folder:
            raise spec.error(key_path, f"{resolved} is a {'file' if wants_folder else 'folder'}; the "
                                       f"{spec.source.builder} builder reads a {'folder' if wants_folder else 'file'}")


def source_builders(spec: Spec) -> list[tuple[str | None, Builder]]:
    """The source's builder for each split (one, for None, when the spec splits by fraction)."""
    check_sources(spec)
    try:
        cls = builder_class(spec.source.builder, [spec.base_dir, os.getcwd()])
    except SpecError as error:  # said at the spec's line
        raise spec.error(("source", "builder"), str(error).removeprefix("source.builder: ")) from None
    if not (isinstance(cls, type) and issubclass(cls, Builder)):
        raise spec.error(("source", "builder"), f"{spec.source.builder} is not a tfrecord_builder.Builder subclass")
    _check_options(spec, cls)
    if spec.fraction_splits:
        path = spec.resolve(spec.source.path) if spec.source.path else None
        return [(None, _created(spec, cls, path, spec.source.options))]
    builders = []
    for split, source in spec.splits.items():
        path = source.path or spec.source.path
        builder = _created(spec, cls, spec.resolve(path) if path else None, {**spec.source.options, **source.options})
        provided = builder.splits()
        if provided is not None and split not in provided:
            raise spec.error(("splits", split), f"the source provides no split {split!r}; it has: {', '.join(provided)}")
        builders.append((split, builder))
    return builders


def _check_options(spec: Spec, cls: type[Builder]) -> None:
    """The source's `options:` (and each split's) are keys the builder reads, with valid values."""
    if cls.OPTIONS is None:
        return
    places = [(("source", "options"), spec.source.options)]
    if not spec.fraction_splits:
        places += [(("splits", name, "options"), source.options) for name, source in spec.splits.items()]
    for place, options in places:
        for key, value in options.items():
            if key not in cls.OPTIONS:
                problem = (unknown_key_message(key, cls.OPTIONS) if cls.OPTIONS
                           else f"unknown key `{key}`: the {spec.source.builder} builder takes no options")
            else:
                problem = cls.option_problem(key, value)
            if problem:
                raise spec.error(place + (key,), problem)


def _created(spec: Spec, cls: type, path: str | None, options: dict) -> Builder:
    try:
        return cls(spec, path, options)
    except TFRecordBuilderError:
        raise
    except Exception as error:  # the builder's own code (e.g. its options): keep the cause for --debug
        raise spec.error(("source", "builder"), f"creating {cls.__name__} failed: "
                                                f"{type(error).__name__}: {error}") from error


def check_columns(spec: Spec, builders: list[tuple[str | None, Builder]]) -> None:
    """Every column the spec reads is in the header of each file that has one (CSV, Parquet):
    what a build would find at its first batch, found without reading the rows."""
    wanted = {feature.source_name: f"feature `{name}`" for name, feature in spec.features.items()}
    for key in ("key", "split_column", "group_by", "order_by"):
        if getattr(spec.source, key) is not None:
            wanted.setdefault(getattr(spec.source, key), f"source.{key}")
    for _, builder in builders:
        header = builder.header()
        if header is None:
            continue
        for column, user in wanted.items():
            if column not in header:
                raise no_column(os.path.basename(builder.path), user, column, header)


def with_source_classes(spec: Spec, builders: list[tuple[str | None, Builder]]) -> Spec:
    """The spec with the class names of class labels that leave them to the source (e.g. folders)."""
    features = dict(spec.features)
    for name, feature in spec.features.items():
        if not isinstance(feature, ClassLabelFeature) or feature.has_classes:
            continue
        found: set[str] = set()
        for _, builder in builders:
            found.update(builder.class_names(feature.source_name) or [])
        if not found:
            raise spec.error(("features", name), "the class_label needs `names`, `names_file` or `num_classes` "
                                                 "(this source doesn't define classes)")
        features[name] = dataclasses.replace(feature, names=sorted(found))
    return dataclasses.replace(spec, features=features)


def _batches(spec: Spec, builders: list[tuple[str | None, Builder]]) -> Iterator[tuple[str | None, Batch | PendingBatch]]:
    """Each batch with the split it belongs to (None: assign by fraction); a built-in reader's may
    be pending, parsed where they are encoded."""
    needed = sorted({feature.source_name for feature in spec.features.values()})
    batch_size = min(feature.batch_rows for feature in spec.features.values())
    for split, builder in builders:
        for batch in builder.encoding_batches(split, needed, batch_size):
            yield split, batch


def _check_unique(batch: Batch, hashes: np.ndarray, seen: dict[bytes, str]) -> None:
    for row, digest in enumerate(hashes.tobytes()[i : i + 16] for i in range(0, 16 * len(batch), 16)):
        if digest in seen:
            raise duplicate_key(seen[digest], key_label(batch.origin(row), batch.keys[row]))
        seen[digest] = batch.origin(row)


def _write(spec: Spec, folder: str, staging: str, build_id: str, encoded: _Encoding, kept: dict[str, dict],
           module: str | os.PathLike | None, progress: Progress | None, processes: int) -> DatasetInfo:
    """Writes the shards into the staging folder (recording each in its manifest, so `--resume`
    can keep it), then swaps the finished dataset into place."""
    manifest = Manifest(staging, build_id)
    info = _write_files(spec, folder, staging, encoded.records, encoded.statistics, encoded.skipped, kept,
                        manifest, progress, processes)
    encoded.discard()
    shutil.rmtree(os.path.join(staging, checkpoint.RUNS_FOLDER), ignore_errors=True)
    os.remove(manifest.path)  # the finished dataset's dataset_info.json says it all
    publish(staging, folder)
    source = render_module(spec, data_dir=folder)
    for copy in [spec.output.module and spec.resolve(spec.output.module), module]:
        if copy:
            write_module(source, os.fspath(copy), spec.name)
    return info


def _write_files(spec: Spec, folder: str, staging: str, records: dict[str, SplitRecords],
                 statistics: dict[str, SplitStatistics], skipped: list[dict[str, str]], kept: dict[str, dict],
                 manifest: Manifest, progress: Progress | None, processes: int) -> DatasetInfo:
    splits = {}
    written = 0
    distinct: dict[str, int | None] = {}  # each split's different keys (None: not counted)
    for name, split_records in records.items():
        num_shards = count_shards(split_records.num_examples, split_records.num_bytes, spec.output.shards,
                                  spec.output.target_shard_bytes)
        held = split_records.held()
        counted = DistinctKeys(split_records.ordered()) if held is None and spec.output.shuffle else None
        source = held if held is not None else counted if counted is not None else split_records.ordered()
        shards = write_split(staging, spec.name, name, source, split_records.num_examples, num_shards,
                             spec.output.compression, kept, manifest, processes)
        distinct[name] = held.distinct_keys() if held is not None else counted.count if counted else None
        splits[name] = SplitInfo(name, split_records.num_examples, sum(s.num_bytes for s in shards),
                                 [shard.to_dict() for shard in shards])
        written += split_records.num_examples
        if progress:
            progress("writing", written, sum(split.num_examples for split in records.values()))
    if skipped:
        with open(os.path.join(staging, SKIPPED_FILE), "w", encoding="utf-8") as file:
            for entry in skipped:
                file.write(json.dumps(entry, ensure_ascii=False) + "\n")
    info = DatasetInfo(folder, spec, splits, {name: stats.to_dict() for name, stats in statistics.items()},
                       __version__, len(skipped), split_warnings(spec, splits, distinct))
    write_module(render_module(spec, data_dir=folder), os.path.join(staging, module_name(spec.name)), spec.name)
    info.write(staging)  # last: only now is the staging folder a whole dataset
    return info


SPLIT_TOLERANCE = 0.05  # how far a split made may be from the fraction asked before the build says so


def split_warnings(spec: Spec, splits: dict[str, SplitInfo], distinct: dict[str, int | None]) -> list[str]:
    """What a user should know about the splits made: one left empty, or fractions far from the
    ones asked because rows repeat (rows with the same key share a split, so a table of few
    different rows can't be divided finely). Unique keys off by chance, as hashing a few hundred
    records is, are not worth a word."""
    found = [f"split {name} has no examples" for name, split in splits.items() if not split.num_examples]
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
