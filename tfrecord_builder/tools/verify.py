"""Re-reads a built dataset and checks every byte: files, checksums, framing, records, counts.

No TensorFlow: the framing and the records are read by our own readers, so a fault is named by
shard, record index and feature.

Shards are checked in parallel worker processes. Within a shard, blocks of records are framed
with NumPy (codec/frames.py) and read as columns (codec/columns.py), and each feature checks its
columns at once (`check_columns`). A record that leaves our encoder's layout, or that a column
check flags, is then read on its own and checked by `check_stored`: every fault is worded by the
per-record reader, so the columns make verify fast without changing a word of what it reports.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Any, Iterator, Literal, Mapping

import numpy as np

from .. import fs, processes
from ..codec.columns import Layout, RecordColumns, read_columns
from ..codec.example_reader import parse_record
from ..codec.frames import RecordBlock, ShardStream, Undecodable, record_blocks
from ..codec.tfrecord import open_records, read_records
from ..errors import DatasetError, UsageError
from ..progress import ProgressOption, progress_display
from ..features import Feature
from ..spec.model import Spec
from ..write.index import FRAME_BYTES, index_problem
from ..write.info import DatasetInfo, read_info
from ..write.naming import METADATA_FILE

MAX_FAULTS_PER_SHARD = 10
IN_PROCESS_BYTES = 4 << 20  # datasets smaller than this are checked without worker processes

Reader = Literal["columns", "records"]


@dataclass
class Verification:
    """What `verify` found: the records it read and every fault, one line each."""

    info: DatasetInfo
    num_records: int = 0
    num_shards: int = 0
    faults: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.faults


def verify(path: str | os.PathLike, *, workers: int | None = None, reader: Reader = "columns",
           progress: ProgressOption = None) -> Verification:
    """Checks the dataset at `path` (a folder with dataset_info.json).

    >>> result = verify("build/wine/1.0.0")
    >>> result.ok, result.num_records
    (True, 178)

    Shards are checked in `workers` processes (default: the machine's cores; a single shard, or
    a dataset of a few MiB, stays in this process). `reader="records"` reads every record on its
    own, as the column reader does only for the records it sets aside: slower, the same faults.
    `progress` as for `build`: a bar of the records checked (True), none (False), a bar where
    someone watches (None), or your own callable.
    """
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise UsageError(f"workers: expected a positive integer, received {workers!r}")
    if reader not in ("columns", "records"):
        raise UsageError(f"reader: expected 'columns' or 'records', received {reader!r}")
    info = read_info(os.fspath(path))
    result = Verification(info)
    check = _ShardCheck(info.path, info.spec, reader, info.metadata_file)
    shards = [shard for split in info.splits.values() for shard in split.shards]
    if sum(shard.get("num_bytes", 0) for shard in shards) < IN_PROCESS_BYTES:
        workers = 1  # a small dataset: starting processes would take longer than checking it
    reports = _reports(check, shards, workers or os.cpu_count() or 1)
    display = progress_display(progress)
    total = sum(split.num_examples for split in info.splits.values())
    try:
        for split in info.splits.values():
            counted = 0
            for _ in split.shards:
                report = next(reports)
                result.faults.extend(report.faults)
                result.num_records += report.count
                result.num_shards += 1
                counted += report.count
                display("verifying", result.num_records, total)
            if counted != split.num_examples:
                result.faults.append(f"split {split.name}: {counted} records, {info.metadata_file} says "
                                     f"{split.num_examples}")
    finally:
        display.close()
    return result


@dataclass
class ShardReport:
    """One shard's faults, in the order verify lists them, and the records read."""

    faults: list[str]
    count: int


def _reports(check: "_ShardCheck", shards: list[dict[str, Any]], workers: int) -> Iterator[ShardReport]:
    """Each shard's report, in order; in `workers` processes when there is more than one shard."""
    if workers <= 1 or len(shards) < 2:
        yield from map(check, shards)
        return
    with processes.worker_pool(min(workers, len(shards)), check) as pool:  # each worker gets the check once
        yield from pool.map(processes.in_worker(_ShardCheck.__call__), shards)


class _ShardCheck:
    """Checks one shard of the dataset in `folder` (a callable, so a worker process gets it once)."""

    def __init__(self, folder: str, spec: Spec, reader: Reader = "columns", listed_in: str = METADATA_FILE):
        self.folder = folder
        self.spec = spec
        self.listed_in = listed_in  # the metadata file that lists the shards
        self.features = spec.features
        self.layout = _layout_of(spec.features) if reader == "columns" else None

    def __call__(self, shard: dict[str, Any]) -> ShardReport:
        name = shard["file"]
        path = fs.join(self.folder, name)
        if not fs.exists(path):
            return ShardReport([f"{name}: missing"], 0)
        if self.layout is not None:
            try:
                return self._by_columns(shard, path)
            except (Undecodable, OSError):
                pass  # where a broken stream fails, and how, is the per-record reader's to say
        return self._by_records(shard, path)

    def _by_columns(self, shard: dict[str, Any], path: str) -> ShardReport:
        """The shard read a block of records at a time, as columns, and hashed in the same pass."""
        faults = _ShardFaults(shard["file"], self.listed_in)
        compression = self.spec.output.compression
        digest = hashlib.sha256()
        count = 0
        framed: list[np.ndarray] = []  # each record's framed length, for the index
        with ShardStream(path, compression, digest) as stream:
            try:
                for block in record_blocks(stream, faults.name):
                    count += len(block)
                    framed.append(block.ends - block.starts + FRAME_BYTES)
                    for index, problems in _block_problems(block, self.features, self.layout):
                        faults.add(index, problems)
            except DatasetError as error:  # a broken frame, worded as read_records words it
                if compression != "none":  # which comes first, this or a decompression error, depends on
                    raise Undecodable from None  # the per-record reader's buffering: it is left to say
                faults.stream = _stream_fault(faults.name, error)
                stream.finish()
        faults.check_file(shard, path, digest.hexdigest())
        faults.check_index(shard, self.folder, np.concatenate(framed) if framed else np.zeros(0, np.int64),
                           faults.stream is None)
        return faults.report(count, shard["num_examples"])

    def _by_records(self, shard: dict[str, Any], path: str) -> ShardReport:
        """The shard read a record at a time: what the columns fall back to."""
        faults = _ShardFaults(shard["file"], self.listed_in)
        digest = hashlib.sha256()
        with fs.open_file(path) as file:
            for chunk in iter(lambda: file.read(1 << 20), b""):
                digest.update(chunk)
        faults.check_file(shard, path, digest.hexdigest())
        count = 0
        framed: list[int] = []
        try:
            with open_records(path, self.spec.output.compression) as stream:
                for index, record in enumerate(read_records(stream, faults.name)):
                    count += 1
                    framed.append(len(record) + FRAME_BYTES)
                    faults.add(index, _check_record(record, self.features))
        except (DatasetError, OSError, EOFError) as error:
            faults.stream = _stream_fault(faults.name, error)
        except Exception as error:  # zlib.error and other decompression failures
            faults.stream = f"{faults.name}: can't decompress ({type(error).__name__}: {error})"
        faults.check_index(shard, self.folder, np.array(framed, dtype=np.int64), faults.stream is None)
        return faults.report(count, shard["num_examples"])


class _ShardFaults:
    """A shard's faults, gathered as found, listed in verify's order: the file's, its records'
    (at most MAX_FAULTS_PER_SHARD), the fault that ended the reading, how many more records were
    faulty, the record count."""

    def __init__(self, name: str, listed_in: str):
        self.name = name
        self.listed_in = listed_in
        self.file: list[str] = []
        self.records: list[str] = []
        self.problems = 0
        self.stream: str | None = None

    def check_file(self, shard: dict[str, Any], path: str, sha256: str) -> None:
        if sha256 != shard["sha256"]:
            self.file.append(f"{self.name}: sha256 {sha256[:12]}... differs from {self.listed_in}'s "
                             f"{shard['sha256'][:12]}... (the file changed after the build)")
        size = fs.size(path)
        if size != shard["num_bytes"]:
            self.file.append(f"{self.name}: {size} bytes, {self.listed_in} says {shard['num_bytes']}")

    def check_index(self, shard: dict[str, Any], folder: str, framed: np.ndarray, whole: bool) -> None:
        """Checks the shard's index file, if it has one, against the framed lengths of the records
        read (`whole`: every record of the shard was read)."""
        entry = shard.get("index")
        if entry is None:
            return
        path = fs.join(folder, entry["file"])
        if not fs.exists(path):
            self.file.append(f"{entry['file']}: missing (the index of {self.name})")
            return
        with fs.open_file(path) as file:
            text = file.read()
        sha256 = hashlib.sha256(text).hexdigest()
        if sha256 != entry["sha256"]:
            self.file.append(f"{entry['file']}: sha256 {sha256[:12]}... differs from {self.listed_in}'s "
                             f"{entry['sha256'][:12]}... (the file changed after the build)")
        problem = index_problem(text, framed, whole)
        if problem:
            self.file.append(f"{entry['file']}: {problem} (the index of {self.name})")

    def add(self, index: int, problems: list[str]) -> None:
        for problem in problems:
            if self.problems < MAX_FAULTS_PER_SHARD:
                self.records.append(f"{self.name}: record {index}: {problem}")
            self.problems += 1

    def report(self, count: int, expected: int) -> ShardReport:
        faults = self.file + self.records + ([self.stream] if self.stream else [])
        if self.problems > MAX_FAULTS_PER_SHARD:
            faults.append(f"{self.name}: {self.problems - MAX_FAULTS_PER_SHARD} more faulty records")
        if count != expected:
            faults.append(f"{self.name}: {count} records, {self.listed_in} says {expected}")
        return ShardReport(faults, count)


def _stream_fault(name: str, error: Exception) -> str:
    return f"{error}" if name in str(error) else f"{name}: {error}"


# ---- records --------------------------------------------------------------------------------------

def _layout_of(features: Mapping[str, Feature]) -> Layout | None:
    """The layout our encoder writes records of these features in; None if some feature can't
    check its values as columns (then every record is read on its own)."""
    kinds: dict[bool, dict[str, Any]] = {False: {}, True: {}}
    for feature in features.values():
        stored = feature.stored_kinds()
        if stored is None or set(stored) != set(feature.parsing()):  # the keys check_record expects
            return None
        kinds[feature.sequence].update(stored)
    sequence = any(feature.sequence for feature in features.values())
    return Layout.of(kinds[False], kinds[True] if sequence else None)


def _block_problems(block: RecordBlock, features: Mapping[str, Feature],
                    layout: Layout) -> Iterator[tuple[int, list[str]]]:
    """(record index, its problems) of each faulty record of the block, in record order."""
    columns = read_columns(block.data, block.starts, block.ends, layout)
    suspects = np.zeros(len(block), dtype=bool)
    suspects[columns.irregular] = True
    for feature in features.values():
        suspects[columns.regular[_flagged(feature, columns)]] = True
    for index in np.flatnonzero(suspects).tolist():
        problems = _check_record(block.record(index), features)
        if problems:
            yield block.first + index, problems


def _flagged(feature: Any, columns: RecordColumns) -> np.ndarray:
    """Per regular record: whether the feature's column check flags it (any step, if per step)."""
    stored = columns.lists if feature.sequence else columns.context
    rows = feature.check_columns(stored)
    return stored[next(iter(feature.stored_kinds()))].records_where(rows)


def _check_record(record: bytes, features: Mapping[str, Feature]) -> list[str]:
    """What is wrong with one serialised record (nothing: an empty list), feature by feature."""
    try:
        stored, lists = parse_record(record)
    except DatasetError as error:
        return [str(error)]
    problems = []
    expected: dict[bool, set[str]] = {False: set(), True: set()}
    for name, feature in features.items():
        for key, (kind, _, _) in feature.parsing().items():  # a per-step feature's `fixed` keys: context
            expected[feature.sequence and kind != "fixed"].add(key)
        if feature.sequence:
            problem = _check_steps(feature, (lists or {}).get(feature.record_key))
        else:
            problem = feature.check_stored(stored)
        if problem:
            problems.append(f"feature `{name}`: {problem}")
    for keys, found in ((expected[False], stored), (expected[True], lists or {})):
        extra = sorted(set(found) - keys)
        if extra:
            problems.append(f"unexpected key {extra[0]!r} (not in the spec)")
    return problems


def _check_steps(feature: Feature, steps: list | None) -> str | None:
    if steps is None:
        return f"feature list {feature.record_key!r} is missing"
    for index, step in enumerate(steps):
        problem = feature.check_stored({feature.record_key: step})
        if problem:
            return f"step {index}: {problem}"
    return None
