"""One copy, for any runner: a keyed plan's shards (build/plan.py `keyed_plan`), each read,
encoded and written whole by one worker, and what the build's process makes of the results.

Where a source knows its records by key before it reads their bytes (a folder of image files),
the plan has already ordered every split and cut its shards. A worker given a shard
(`write_keyed_shard`) asks the builder for that shard's records in shard order
(`Builder.keyed_batch`), encodes them as the usual path does (`encode_batch`: every check of
every feature, the JPEG end marker, EXIF, sizes) and writes the shard straight to its place
(`write/shards.py write_shard`: aside, fsynced, renamed): each record's bytes are made once and
written once, with no sorted runs and no merge. It sends back only its records' statistics
values, missing flags, notices and bytes.

The dataset is the same, byte for byte, as the usual path's:

- **Order and shards.** The plan applies write/order.py's rules to the keys' hashes, as the
  usual path applies them to its records.
- **Statistics** (`keyed_statistics`): the shards' values are put back in the source's order and
  grouped into the batches the usual path encodes (`KeyedItems.batches`), split by split, then
  merged batch by batch and task by task (`StatisticsTree`): the same float sums.
- **Shard count.** Given `output.shards`, it follows from the record count. Given a target size,
  it follows from the records' bytes, known only once they are encoded: the plan counts on an
  estimate (`estimate_bytes`: a sample of each split's records encoded, scaled by the files'
  bytes), and the result is checked against the encoded bytes (`guess_held`).
- **Anything that needs the usual path** raises `OneCopyRefused`, and the runner builds the
  usual way instead (`TFRECORD_BUILDER_ONE_COPY=0` does the same from the start): a record that
  doesn't encode (under `on_error: fail` the usual path names the first bad record in the
  source's order, with the same message as ever; under `on_error: skip` a skipped record changes
  the ranks, and so the shards), or a shard count the estimate got wrong. Shards written until
  then are removed first (`discard_shards`).
- **Resume.** A shard an interrupted build finished (write/manifest.py) is kept: its worker
  encodes its records for the statistics, but doesn't write it.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

import numpy as np

from ... import fs
from ...builders.base import Builder, parsed_batch
from ...codec.bytecolumn import ByteColumn
from ...errors import DataError
from ...features.notices import Notices, added
from ...features.values import Values, joined
from ...spec.model import Spec
from ...write.info import SplitInfo
from ...write.manifest import MANIFEST_FILE, SHARDS_FOLDER, Manifest
from ...write.naming import index_name, shard_name
from ...write.order import count_shards
from ...write.shards import ShardInfo, kept_shard, write_shard
from ..encode_batch import encode_batch
from ..encoding import part_statistics, statistics_values, working_seconds
from ..plan import KeyedPlan, KeyedShard, StatisticsTree, keyed_plan
from .contract import RunJob, RunResult

__all__ = ["OneCopyRefused", "HeldValues", "ShardResult", "readers", "write_keyed_shard", "keyed_statistics", "estimate_bytes",
           "guess_held", "discard_shards", "plan_of", "keyed_jobs", "keyed_result", "keyed_splits", "work_seconds"]

SURE_SECONDS = 0.01  # a sampled chunk this long tells the pace, whatever a call's own cost
SAMPLE_RECORDS = 16  # records encoded to estimate a split's bytes (a target shard size only), or the work's pace


class OneCopyRefused(Exception):
    """The build can't be written in one copy after all (said in `reason`): the runner builds
    the usual way."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass
class HeldValues:
    """A feature's statistics values of records, held until the build's statistics are merged:
    numbers as NumPy columns; bytes (a file's name, a class's text) as one buffer and each value's
    length, with `values.values` their positions (no Python object a value: a record's few values
    cost their bytes and 8 more, not 50 more each)."""

    values: Values
    data: bytes = b""
    lengths: np.ndarray | None = None  # bytes only: each value's length in `data`

    @staticmethod
    def of(values: Values) -> "HeldValues":
        if not isinstance(values.values, list):
            return HeldValues(Values(values.kind, values.values, values.counts, values.steps, marks=values.marks))
        lengths = np.fromiter(map(len, values.values), np.int64, len(values.values))
        return HeldValues(Values(values.kind, np.arange(len(lengths)), values.counts, values.steps,
                                 marks=values.marks), b"".join(values.values), lengths)

    @staticmethod
    def joined(parts: "list[HeldValues]") -> "HeldValues":
        """The records of `parts`, one after another."""
        together = joined([part.values for part in parts])
        if parts[0].lengths is None:
            return HeldValues(together)
        lengths = np.concatenate([part.lengths for part in parts if part.lengths is not None])
        together.values = np.arange(len(lengths))
        return HeldValues(together, b"".join(part.data for part in parts), lengths)

    def repeated(self, records: np.ndarray) -> Values:
        """The values of the records at `records` (`Values.repeated`), bytes as bytes again."""
        found = self.values.repeated(records, self._offsets)
        if self.lengths is None:
            return found
        ends = self._ends
        chosen = np.asarray(found.values)
        data = self.data
        found.values = [data[start:end] for start, end in zip((ends[chosen] - self.lengths[chosen]).tolist(),
                                                               ends[chosen].tolist())]
        return found

    @functools.cached_property
    def _offsets(self) -> tuple[np.ndarray, np.ndarray | None]:
        """`values.offsets()`, summed once, not once a batch of the statistics (a split's 20,000
        photos' values were summed again for each of its 40 batches)."""
        return self.values.offsets()

    @functools.cached_property
    def _ends(self) -> np.ndarray:
        """Where each value ends in `data`: summed once, not once a batch of the statistics (a
        split's values are taken batch by batch)."""
        assert self.lengths is not None
        return np.cumsum(self.lengths)


@dataclass
class ShardResult:
    """What a worker sends back of a shard it wrote (or, for a kept one, only encoded)."""

    split: str
    number: int
    shard: ShardInfo | None  # None: an interrupted build's shard, kept
    record_bytes: int  # its records' bytes, framed, uncompressed (what a target shard size counts)
    values: dict[str, HeldValues]  # by feature, the values its statistics count, in the shard's order
    missing: dict[str, np.ndarray]  # by feature, whether each record's source had no value
    notices: dict[str, int] = field(default_factory=dict)


def plan_of(job: RunJob) -> KeyedPlan | None:
    """The build of a runner's `job` decided from its records' keys (build/plan.py `keyed_plan`,
    estimating bytes with `estimate_bytes`), or None: the usual path (as for a record of the sample
    its bytes are estimated by that doesn't encode)."""
    spec = job.spec

    def name(split: str, number: int, count: int) -> str:
        return shard_name(spec.name, split, number, count, spec.output.compression, spec.output.naming)

    try:
        return keyed_plan(spec, job.tasks, job.builders, job.keep, name, functools.partial(estimate_bytes, spec))
    except OneCopyRefused:
        return None


Reader = tuple["str | None", Builder, int]  # a source's split, its builder, the records it reads at once


def readers(plan_sources: Sequence[tuple[str | None, Builder, Any, list[int]]]) -> list[Reader]:
    """Each of a plan's sources as a shard's worker reads it: a chunk at a time of as many records
    as its largest batch (`KeyedItems.batches`: the builder's own cut, by its files' bytes, so a
    chunk holds what the usual path's batches hold)."""
    return [(split, builder, max((stop - start for _, start, stop in items.batches), default=1))
            for split, builder, items, _ in plan_sources]


def encoded_chunks(spec: Spec, sources: Sequence[Reader], items: np.ndarray,
                   notices: Notices) -> Iterator[tuple[slice, Any]]:
    """The records at `items` ((source, position) each), in that order, encoded a chunk at a time
    (`encode_batch`, framed): each chunk's place among them and its BatchRecords. A record that
    doesn't encode raises OneCopyRefused."""
    needed = spec.source_names
    start = 0
    while start < len(items):
        source = int(items[start, 0])
        split, builder, size = sources[source]
        stop = min(len(items), start + size)
        same = np.flatnonzero(items[start:stop, 0] != source)  # a chunk reads one source
        stop = start + int(same[0]) if len(same) else stop
        try:
            batch = parsed_batch(builder.keyed_batch(split, items[start:stop, 1].tolist(), needed), notices)
            if batch.broken or len(batch) != stop - start:
                raise OneCopyRefused("a record couldn't be read")
            encoded = encode_batch(spec.features, batch, spec.sequence_lengths == "equal", framed=True)
        except DataError as error:
            raise OneCopyRefused(str(error)) from error
        yield slice(start, stop), encoded
        start = stop


def write_keyed_shard(state: tuple[Spec, Sequence[Reader]], job: tuple[KeyedShard, str | None]) -> ShardResult:
    """Reads, encodes and writes one shard at `path` (None: kept, only encoded for its statistics).
    `state`: the spec and the plan's sources (`readers`; a worker's, given once)."""
    spec, sources = state
    shard, path = job
    notices = Notices()
    values: list[dict[str, Values]] = []
    missing: list[dict[str, np.ndarray]] = []
    counted = Notices()
    record_bytes = 0

    def pieces() -> Iterator[tuple[np.ndarray, ByteColumn]]:
        nonlocal record_bytes
        for place, encoded in encoded_chunks(spec, sources, shard.items, notices):
            values.append(statistics_values(spec, encoded.values))
            missing.append(encoded.missing)
            added(counted.counts, encoded.notices)
            records = encoded.records
            record_bytes += int(records.offsets[-1] - records.offsets[0])
            yield shard.hashes[place], records

    written = None
    if path is None:
        for _ in pieces():
            pass
    else:
        written, _, _ = write_shard(path, pieces(), len(shard.items), spec.output.compression,
                                    spec.output.writes_index)
    added(counted.counts, notices.counts)
    names = list(spec.features)
    return ShardResult(shard.split, shard.number, written, record_bytes,
                       {name: HeldValues.of(joined([part[name] for part in values])) for name in names} if values else {},
                       {name: np.concatenate([part[name] for part in missing]) for name in names} if missing else {},
                       counted.counts)


def _spread(rows: np.ndarray) -> np.ndarray:
    """Up to SAMPLE_RECORDS of `rows`, evenly spread over them, the first and the last included:
    the records a sample encodes."""
    return rows[np.unique(np.linspace(0, len(rows) - 1, min(len(rows), SAMPLE_RECORDS)).astype(np.int64))]


def estimate_bytes(spec: Spec, plan_sources: Sequence[tuple[str | None, Builder, Any, list[int]]]) -> Any:
    """`keyed_plan`'s estimate of a split's encoded bytes: SAMPLE_RECORDS of its records (spread
    over it) encoded here, their bytes scaled by the files' bytes of all of them (by the record
    count where the files' sizes are unknown)."""
    sources = readers(plan_sources)
    items_at = np.concatenate([np.stack([np.full(len(items.keys), number), np.arange(len(items.keys))], axis=1)
                               for number, (_, _, items, _) in enumerate(plan_sources)])
    sizes = np.concatenate([items.sizes for _, _, items, _ in plan_sources])

    def estimate(rows: np.ndarray) -> int:
        sample = _spread(rows)
        encoded = sum(int(chunk.records.offsets[-1] - chunk.records.offsets[0])
                      for _, chunk in encoded_chunks(spec, sources, items_at[sample], Notices()))
        files, sampled_files = int(sizes[rows].sum()), int(sizes[sample].sum())
        if files and sampled_files:
            return int(encoded * files / sampled_files)
        return int(encoded * len(rows) / len(sample))

    return estimate


def work_seconds(spec: Spec, plan: KeyedPlan, enough: float) -> float:
    """The seconds the plan's encoding would take one process, at the pace of up to
    SAMPLE_RECORDS of its records (spread over it) encoded here in growing chunks (1, 2, 4, ...:
    a call's own cost, 0.1 ms, would count as much as a small photo's 20 µs in a chunk of one):
    whether workers are worth starting. The fastest chunk's pace counts; sampling stops early once
    a chunk that took SURE_SECONDS says `enough` (large photos resized: a record or two, not 16)."""
    sources = readers(plan.sources)
    every = np.concatenate([split.items for split in plan.splits.values()])
    if not len(every):
        return 0.0
    sample = _spread(every)
    start, size, estimate = 0, 1, float("inf")
    while start < len(sample):
        chunk = sample[start:start + size]
        began = working_seconds()
        for _ in encoded_chunks(spec, sources, chunk, Notices()):
            pass
        seconds = working_seconds() - began
        if seconds * len(every) / len(chunk) >= enough and seconds >= SURE_SECONDS:
            return seconds * len(every) / len(chunk)
        estimate = min(estimate, seconds * len(every) / len(chunk))
        start, size = start + len(chunk), size * 2
    return estimate


def guess_held(spec: Spec, plan: KeyedPlan, results: Sequence[ShardResult]) -> None:
    """Raises OneCopyRefused where a split's shard count, guessed from an estimate of its bytes,
    isn't the one its encoded bytes give (the usual path's count)."""
    for name, split in plan.splits.items():
        if not split.guessed_shards:
            continue
        num_bytes = sum(result.record_bytes for result in results if result.split == name)
        if count_shards(len(split.items), num_bytes, None, spec.output.target_shard_bytes) != len(split.shards):
            raise OneCopyRefused(f"split {name}: the estimate of its bytes gave another shard count")


def keyed_statistics(spec: Spec, plan: KeyedPlan, results: Sequence[ShardResult]) -> StatisticsTree:
    """Every split's statistics from its shards' values, merged as the usual path merges them:
    the records of each of its batches (`KeyedItems.batches`) that go to a split, in the source's
    order, then batch by batch within a task and task by task."""
    tree = StatisticsTree(spec)
    offsets = np.cumsum([0] + [len(items.keys) for _, _, items, _ in plan.sources])
    by_split: dict[str, tuple[np.ndarray, dict[str, HeldValues], dict[str, np.ndarray]]] = {}
    for name, split in plan.splits.items():
        shards = sorted((result for result in results if result.split == name and result.values),
                        key=lambda result: result.number)
        if not shards:
            continue
        values = {feature: HeldValues.joined([result.values[feature] for result in shards])
                  for feature in spec.features}
        missing = {feature: np.concatenate([result.missing[feature] for result in shards]) for feature in spec.features}
        rows = offsets[split.items[:, 0]] + split.items[:, 1]  # ascending: the source's order
        by_split[name] = (rows, values, missing)
    for source, (_, _, items, task_indices) in enumerate(plan.sources):
        for task, start, stop in items.batches:
            first, last = offsets[source] + start, offsets[source] + stop
            for name, (rows, values, missing) in by_split.items():
                low, high = np.searchsorted(rows, [first, last])
                if high == low:
                    continue
                ranks = plan.splits[name].ranks[low:high]
                part = part_statistics(spec, {feature: found.repeated(ranks) for feature, found in values.items()},
                                       {feature: flags[ranks] for feature, flags in missing.items()}, None)
                tree.add(task_indices[task] if task_indices else 0, name, part)
    return tree


def keyed_jobs(plan: KeyedPlan, kept: dict[str, dict], folder: str) -> list[tuple[KeyedShard, str | None]]:
    """Each shard of the plan with where it is written (`folder`, a local folder or a URL), or
    None where an interrupted build finished it (`kept`, write/manifest.py): a job of
    `write_keyed_shard`, for any runner."""
    return [(shard, None if kept_shard(kept.get(shard.file), shard.file, len(shard.items), shard.key_range) is not None
             else fs.join(folder, shard.file)) for shard in plan.shards]


def keyed_result(spec: Spec, plan: KeyedPlan, outcomes: Sequence[ShardResult | str], kept: dict[str, dict]) -> RunResult:
    """What running the plan made, from every shard's outcome in the plan's order (any runner's:
    its ShardResult, or the reason its worker found the build must take the usual path): the
    splits, the statistics (`keyed_statistics`), the notices, the members. Raises OneCopyRefused
    with the first shard's reason, or where a guessed shard count doesn't hold (`guess_held`)."""
    refused = [outcome for outcome in outcomes if isinstance(outcome, str)]
    if refused:
        raise OneCopyRefused(refused[0])
    results = [outcome for outcome in outcomes if isinstance(outcome, ShardResult)]
    guess_held(spec, plan, results)
    statistics = keyed_statistics(spec, plan, results)
    found: dict[str, int] = {}
    for result in results:
        added(found, result.notices)
    distinct: dict[str, int | None] = {**plan.counts}  # one record a key: each split's count
    return RunResult(keyed_splits(plan, results, kept), statistics.to_dict(), [], distinct, found,
                     {name: split.members for name, split in plan.splits.items()}, plan.kept)


def keyed_splits(plan: KeyedPlan, results: Sequence[ShardResult], kept: dict[str, dict]) -> dict[str, SplitInfo]:
    """Every split's info: its shards, written or kept."""
    written = {(result.split, result.number): result.shard for result in results}
    splits = {}
    for name, split in plan.splits.items():
        shards = []
        for shard in split.shards:
            info = written.get((name, shard.number))
            if info is None:
                info = kept_shard(kept.get(shard.file), shard.file, len(shard.items), shard.key_range)
            assert info is not None, f"shard {shard.file} neither written nor kept"
            shards.append(info)
        splits[name] = SplitInfo(name, len(split.items), sum(shard.num_bytes for shard in shards),
                                 [shard.to_dict() for shard in shards])
    return splits


def discard_shards(folder: str, plan: KeyedPlan, kept: dict[str, dict], build_id: str) -> None:
    """Removes the shards (and index files) an attempt wrote at `folder`, all but the `kept`
    ones an interrupted build finished, and leaves the manifest listing only those."""
    for shard in plan.shards:
        if shard.file in kept:
            continue
        for name in (shard.file, index_name(shard.file), fs.join(SHARDS_FOLDER, shard.file + ".json")):
            path = fs.join(folder, name)
            if fs.exists(path):
                fs.remove(path)
    manifest = fs.join(folder, MANIFEST_FILE)
    if fs.exists(manifest):
        fs.remove(manifest)
    again = Manifest(folder, build_id)
    for entry in kept.values():
        recorded = {key: value for key, value in entry.items()
                    if key not in ("build", "split", "first_key_hash", "last_key_hash")}
        again.add(entry["split"], recorded, entry["first_key_hash"], entry["last_key_hash"])
