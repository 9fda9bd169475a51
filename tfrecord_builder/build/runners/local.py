"""The local runner: the plan run by processes on this machine (the default).

Tasks are read in order in this process; their batches are encoded in `workers` processes and
come back in order. A source whose tasks a worker reads itself (`Builder.TASKS_READ_IN_WORKERS`:
a query's ranges) has each task read and encoded whole in one worker, the results still taken in
task order. A worker writes its batches' records into sorted runs in the staging folder
itself and sends back only what the build's process needs (statistics, counts, skips); records
encoded in this process are held in memory (spilled to runs beyond a budget). A long build is
checkpointed. Then forked processes write the shards side by side, each merging its own slices
of the runs (or gathering its records from memory).

A source whose records are known by key before their bytes are read (an image folder, COCO, VOC,
YOLO: `Builder.keyed_items`) takes one copy instead (`run_keyed`): the plan orders and cuts every
split from the keys alone (build/plan.py `keyed_plan`), and each shard is read, encoded and
written whole by one worker (build/runners/keyed.py); no records go to runs, and this process
holds only the plan and the records' statistics values.
A record that doesn't encode, or a shard count an estimate got wrong, sends the build down the
usual path, which ends as it always has.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import gc
import itertools
import os
import time
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Iterator

import numpy as np

from ...builders.base import Batch, Builder, PendingBatch, parsed_batch
from ..encoding import (PARALLEL_SECONDS, DividedBatch, SplitPart, classify_for_build, encode_batches, encode_for_build,
                        encode_in_worker, keys_digest)
from ...codec.bytecolumn import concat
from ...features import notices
from ... import processes
from ...processes import allow_open_files, can_fork
from ...progress import Progress
from ...spec.model import Spec
from ...write import checkpoint
from ...write.collect import MAX_RUNS, SPILL_BYTES, SplitRecords, write_run
from ...write.info import SplitInfo, write_file
from ...write.keys import hash_keys
from ...write.membership import KeptSplits
from ...write.manifest import Manifest
from ...write.order import SeenKeys, count_shards, key_label, shard_starts
from ...write.runs import RunFile, renew_run_names
from ...write.strata import Strata
from ...write.shards import write_split
from .contract import RunJob, RunnerOptions, RunResult, check_not_empty
from .keyed import (OneCopyRefused, ShardResult, discard_shards, keyed_jobs, keyed_result, plan_of, readers, work_seconds,
                     write_keyed_shard)
from ..plan import KeyedPlan, ReadTask, StatisticsTree, strata_of, task_batches
from ..vocabulary import WordCounts, count_for_build, summed_into


class LocalRunner:
    """The Runner (build/runners/contract.py) of this machine's processes: encoding (checkpointed), then
    the shards, written into the staging folder (uploaded with the rest for a bucket)."""

    name = "local"
    takes_options = False
    checkpoints = True
    shards_to_bucket = False

    def check(self, spec: Spec, folder: str, options: RunnerOptions, workers: int) -> None:
        """Nothing to check: this machine reaches what the build's checks found."""

    def run(self, job: RunJob) -> RunResult:
        spec, staging, workers, progress = job.spec, job.staging, job.workers, job.progress
        # a resumed build's encoding checkpoint is the usual path's to carry on
        plan = keyed_plan_of(job) if job.restored is None else None
        if plan is not None:
            try:
                return run_keyed(job, plan)
            except OneCopyRefused:  # (a bad record, a shard count the estimate got wrong): the usual path
                discard_shards(job.shards, plan, job.kept, job.build_id)
        allow_open_files(MAX_RUNS)  # (before any worker starts: the shard writers may be the encoding's)
        # the encoding's workers, if it starts any, are kept to write the shards: no second pool forked
        # from this process grown large, and the writers run without the cycle collector, as they
        # encoded (a shard's merge makes no cycles; a collection in a process forked from this one
        # scanned every object it inherited: for the sequences, 0.3 s of CPU a writer against 0.15)
        with processes.SharedPool() as pool:
            with collector_paused():
                strata = first_pass(spec, job.tasks, job.builders, workers, progress)  # a stratified build's classes
                encoded = CheckpointedEncoding(spec, staging, job.build_id, job.restored, job.keep)
                try:
                    encoded.run(job.tasks, job.builders, workers, progress, strata, pool)
                except StaleCheckpoint:  # the source changed since the checkpoint: start over
                    pool.close(cancel=True)  # its workers' batches are the old encoding's: done before it is discarded
                    encoded.discard()
                    encoded = CheckpointedEncoding(spec, staging, job.build_id, None, job.keep)
                    encoded.run(job.tasks, job.builders, workers, progress, strata, pool)
            encoded.combine_runs(workers)
            manifest = Manifest(job.shards, job.build_id)  # each shard is recorded once written: --resume keeps it
            splits, distinct = write_shards(spec, job.shards, encoded.records, job.kept, manifest, progress, workers,
                                            pool.running)
        encoded.discard()
        members = {name: encoded.split_members(name) for name in spec.splits}
        return RunResult(splits, encoded.statistics.to_dict(), encoded.skipped, distinct, encoded.state.notices,
                         members, encoded.state.kept)


    def count_words(self, job: RunJob) -> WordCounts:
        """The learned vocabularies' pass in `job.workers` processes, batch by batch, after a
        stratified build's first pass."""
        with collector_paused():
            return counted_words(job.spec, job.tasks, job.builders, job.workers, job.progress, job.keep)


def keyed_plan_of(job: RunJob) -> KeyedPlan | None:
    """The build decided from its records' keys (keyed.py `plan_of`), or None: the usual path."""
    with collector_paused():
        return plan_of(job)


# A keyed build starts workers only for at least this much work (in one process, at the pace of a
# sample of its records): as for batches (`encoding.PARALLEL_SECONDS`), a pool costs 15-100 ms to
# start and stop, and its forks' memory more CPU time than that (2,000 small photos: 0.10 s of CPU
# with a worker, 0.06 s without, with TensorFlow loaded in the caller)
KEYED_PARALLEL_SECONDS = PARALLEL_SECONDS


def run_keyed(job: RunJob, plan: KeyedPlan) -> RunResult:
    """The plan's shards written in one copy (build/runners/keyed.py): each read, encoded and written by
    one of `job.workers` worker processes (or by this one alone, for under KEYED_PARALLEL_SECONDS
    of work), and recorded in the manifest as it is done; raises OneCopyRefused where the build
    must take the usual path."""
    spec = job.spec
    sources = readers(plan.sources)
    todo = keyed_jobs(plan, job.kept, job.shards)
    check_not_empty(spec, plan.counts, [])
    count = min(job.workers, len(todo)) if can_fork() else 1
    if count > 1 and work_seconds(spec, plan, KEYED_PARALLEL_SECONDS) < KEYED_PARALLEL_SECONDS:
        count = 1
    manifest = Manifest(job.shards, job.build_id)
    results: dict[int, ShardResult] = {}
    total = sum(plan.counts.values())

    def finished(number: int, result: ShardResult) -> None:
        shard = todo[number][0]
        if result.shard is not None:  # recorded at once: a resumed build keeps it
            manifest.add(shard.split, result.shard.to_dict(), *shard.key_range)
        results[number] = result
        if job.progress:
            job.progress("writing", sum(len(todo[done][0].items) for done in results), total)

    with collector_paused():
        if count > 1:  # every shard in the pool: this process only records them, so its memory stays
            # the plan's and the statistics' (a process encoding photos holds tens of MB more)
            with processes.worker_pool(count, (spec, sources)) as pool:
                running = {pool.submit(processes.in_worker(write_keyed_shard), shard_job): number
                           for number, shard_job in enumerate(todo)}
                for future in concurrent.futures.as_completed(running):
                    finished(running.pop(future), future.result())
        else:
            for number, shard_job in enumerate(todo):
                finished(number, write_keyed_shard((spec, sources), shard_job))
    return keyed_result(spec, plan, [results[number] for number in range(len(todo))], job.kept)


def counted_words(spec: Spec, tasks: list[ReadTask], builders: dict[str | None, Builder], workers: int,
                progress: Progress | None, keep: KeptSplits | None = None) -> WordCounts:
    """The words of the train split's texts (`vocabulary.count_for_build`, batch by batch in
    source order, in `workers` processes), summed by feature."""
    strata = first_pass(spec, tasks, builders, workers, progress)
    sizes = [builder.num_records(split) for split, builder in builders.items()]
    total = None if None in sizes else sum(size or 0 for size in sizes)
    counts: WordCounts = {}
    read = 0
    stage = functools.partial(count_for_build, strata=strata, keep=keep)
    for _, (part, records) in encoded_in_order(spec, tasks, builders, workers, None, stage):
        summed_into(counts, part)
        read += records
        if progress:
            progress("counting words", read, total)
    return counts


class StaleCheckpoint(Exception):
    """The source's first batches no longer have the keys the checkpoint recorded."""


class CheckpointedEncoding:
    """A build's encoding phase and what it made so far: every split's records (held, or in runs
    in the staging folder), statistics and key hashes, the skips, and the checkpoints that save
    them for `--resume`."""

    def __init__(self, spec: Spec, staging: str, build_id: str, restored: checkpoint.EncodingState | None,
                 keep: KeptSplits | None = None):
        self.spec = spec
        self.keep = keep
        # each split's seedless key hashes (write/membership.py), 8 bytes a record, batch by batch
        self.members: dict[str, list[np.ndarray]] = {name: [] for name in spec.splits}
        self.staging = staging
        self.runs = runs = os.path.join(staging, checkpoint.RUNS_FOLDER)
        self.records = {name: SplitRecords(runs, spec.output.shuffle, name) for name in spec.splits}
        self.statistics = StatisticsTree(spec)
        self.state = restored or checkpoint.EncodingState(build_id)
        self.seen_keys: dict[str | None, SeenKeys] = {}  # by source split: they may reuse keys
        checkpoint.drop_unlisted_runs(staging, restored)
        if restored is not None:
            for name, saved in restored.splits.items():
                self.records[name].restore([os.path.join(runs, run) for run in saved["runs"]],
                                           saved["num_examples"], saved["num_bytes"])
            self.statistics.restore(restored.statistics)
            for name, file in restored.members.items():
                self.members[name] = [np.fromfile(os.path.join(runs, file), dtype="<u8").astype(np.uint64)]

    @property
    def skipped(self) -> list[dict[str, str]]:
        return self.state.skipped

    def run(self, tasks: list[ReadTask], builders: dict[str | None, Builder], workers: int,
            progress: Progress | None, strata: Strata | None = None, pool: processes.SharedPool | None = None) -> None:
        """Encodes every batch after the restored ones (divided by `strata` for a stratified build),
        in the workers of `pool` (started if wanted) or of a pool of its own."""
        spec, state = self.spec, self.state
        sizes = [builder.num_records(split) for split, builder in builders.items()]
        total = sum(sizes) if None not in sizes else None
        resumed = state.batches > 0
        if strata is not None:
            if resumed and state.strata != strata.state():  # records added or changed after the checkpoint's
                raise StaleCheckpoint
            state.strata = strata.state()
        stage = functools.partial(encode_for_build, strata=strata, keep=self.keep)
        last_save = time.monotonic()
        if resumed:  # the restored batches are read here again, to check their keys
            results = self._after_restored(tasks, builders, workers, stage, state.batches, state.keys_digest, pool)
        else:
            results = encoded_in_order(spec, tasks, builders, workers, self.runs, stage, None, pool)
        for task, result in results:
            state.skipped.extend(result.skipped)
            notices.added(state.notices, result.notices)
            state.kept += result.kept
            if result.batch is not None:  # keys of its own, records never sorted: checked here
                _check_unique(result.batch, result.hashes, self.seen_keys.setdefault(result.split, SeenKeys()))
            for name, part in result.parts.items():
                if part.run is not None:
                    self.records[name].add_run(part.run)
                elif part.records is not None:  # else in a run of its task's worker (`result.runs`)
                    self.records[name].add(part.hashes, part.records, part.labels)
                self.statistics.add(task, name, part.statistics)
                self.members[name].append(part.members)
            for name, written in result.runs.items():
                for run in written:
                    self.records[name].add_run(run)
            state.batches += 1
            state.records += result.count + len(result.skipped)
            state.keys_digest = checkpoint.chain(state.keys_digest, result.source_keys)
            if progress:
                progress("encoding", state.records, total)
            if time.monotonic() - last_save >= checkpoint.INTERVAL and not result.held_after:
                self.save()
                last_save = time.monotonic()
        check_not_empty(spec, {name: records.num_examples for name, records in self.records.items()}, state.skipped)
        if resumed or os.path.exists(os.path.join(self.staging, checkpoint.CHECKPOINT_FILE)):
            self.save()  # a long build: a kill while writing won't cost the encoding again

    def _after_restored(self, tasks: list[ReadTask], builders: dict[str | None, Builder], workers: int,
                        stage: Callable[..., Any], restored: int, expected: str,
                        pool: processes.SharedPool | None = None) -> Iterator[tuple[int, Any]]:
        """The staged batches after the `restored` ones the checkpoint holds: those are read here
        again (their keys must chain to the `expected` digest), not encoded. The rest of the task
        they end in is read here too; the tasks after it are read as a build that didn't stop
        reads them (in the workers, for a source whose tasks a worker reads)."""
        digest = ""
        index = 0
        for number, task in enumerate(tasks):
            if index == restored:  # the checkpoint ends with the task before
                if digest != expected:
                    raise StaleCheckpoint
                yield from encoded_in_order(self.spec, tasks[number:], builders, workers, self.runs, stage, None, pool)
                return
            batches = ((task.index, task.split, batch) for batch in task_batches(self.spec, builders[task.split], task))
            for _, split, batch in batches:
                if index == restored:  # the checkpoint ends within this task: its rest read here
                    if digest != expected:
                        raise StaleCheckpoint
                    rest = itertools.chain([(task.index, split, batch)], batches)
                    yield from encoded_in_order(self.spec, [task], builders, workers, self.runs, stage, rest, pool)
                    yield from encoded_in_order(self.spec, tasks[number + 1:], builders, workers, self.runs, stage, None, pool)
                    return
                digest = checkpoint.chain(digest, self._restored_keys(split, batch))
                index += 1
        if index < restored or digest != expected:
            raise StaleCheckpoint  # the source has fewer batches than before, or other keys

    def _restored_keys(self, split: str | None, batch: Batch | PendingBatch) -> bytes:
        """A restored batch's keys digest (`keys_digest`), its keys checked as the build checked them."""
        batch = parsed_batch(batch)
        hashes = hash_keys(batch.keys, self.spec.output.seed)
        if not batch.content_keys and not self.spec.output.shuffle:
            _check_unique(batch, hashes, self.seen_keys.setdefault(split, SeenKeys()))
        return keys_digest(hashes)

    def save(self) -> None:
        for records in self.records.values():
            records.spill()
        self.state.splits = {name: {"runs": [os.path.basename(run) for run in records.runs],
                                    "num_examples": records.num_examples, "num_bytes": records.num_bytes}
                             for name, records in self.records.items()}
        self.state.statistics = self.statistics.state()
        # a file per checkpoint: the one the last checkpoint lists stays whole until the next is saved
        before, self.state.members = self.state.members, {}
        for name in self.members:
            self.members[name] = [self.split_members(name)]
            file = f"members-{name}-{self.state.batches:09d}.u64"
            write_file(os.path.join(self.runs, file), self.members[name][0].astype("<u8").tobytes())
            self.state.members[name] = file
        checkpoint.save(self.staging, self.state)
        for file in set(before.values()) - set(self.state.members.values()):
            os.remove(os.path.join(self.runs, file))

    def split_members(self, name: str) -> np.ndarray:
        """The split's key hashes so far (unsorted)."""
        return np.concatenate(self.members[name]) if self.members[name] else np.empty(0, np.uint64)

    def combine_runs(self, processes: int) -> None:
        """Merges each split's runs down to `collect.MAX_RUNS` before shards are cut from them. A
        checkpoint then lists the merged runs, before the runs they replace are removed.

        No merge from here on (these, the hash merge, the shard writers forked later) opens more
        than MAX_RUNS runs: the open-file limit is raised for that many first."""
        allow_open_files(MAX_RUNS)
        replaced = [path for records in self.records.values() for path in records.combine(processes)]
        if replaced and os.path.exists(os.path.join(self.staging, checkpoint.CHECKPOINT_FILE)):
            self.save()
        for path in replaced:
            os.remove(path)

    def discard(self) -> None:
        for records in self.records.values():
            records.discard()
        checkpoint.discard(self.staging)


def first_pass(spec: Spec, tasks: list[ReadTask], builders: dict[str | None, Builder], workers: int,
               progress: Progress | None) -> Strata | None:
    """A stratified build's pass over the source before it encodes: every kept record's class
    and key hash, made into the strata that divide each class among the splits (None: the spec
    doesn't stratify)."""
    if spec.stratify is None:
        return None
    sizes = [builder.num_records(split) for split, builder in builders.items()]
    total = sum(sizes) if None not in sizes else None
    parts, read = [], 0
    for _, part in encoded_in_order(spec, tasks, builders, workers, None, classify_for_build):
        parts.append(part)
        read += part.records
        if progress:
            progress("stratifying", read, total)
    return strata_of(spec, parts)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
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


def _batches(spec: Spec, tasks: list[ReadTask], builders: dict[str | None, Builder]
             ) -> Iterator[tuple[int, str | None, Batch | PendingBatch]]:
    """Each batch with its task and the split it belongs to (None: assign by fraction); a built-in
    reader's may be pending, parsed where they are encoded."""
    for task in tasks:
        for batch in task_batches(spec, builders[task.split], task):
            yield task.index, task.split, batch


def encoded_in_order(spec: Spec, tasks: list[ReadTask], builders: dict[str | None, Builder], workers: int,
                     runs: str | None, stage: Callable[..., Any],
                     batches: Iterator[tuple[int, str | None, Batch | PendingBatch]] | None = None,
                     shared: processes.SharedPool | None = None) -> Iterator[tuple[int, Any]]:
    """`stage`'s result for each batch (`encode_batches`), with its task's index, in source order.

    With workers, tasks of more than one, and sources whose tasks a worker reads itself
    (`Builder.TASKS_READ_IN_WORKERS`), each task is read and staged whole in a worker: each range
    of a query read once, by the process that encodes it, at most `workers` + 1 tasks in flight.
    Otherwise (or given the `batches`) this process reads the tasks and hands their batches out.
    Given a `shared` pool, the workers are started there (`encode_batches`)."""
    if batches is None and workers > 1 and len(tasks) > 1 and \
            all(builders[task.split].TASKS_READ_IN_WORKERS for task in tasks):
        yield from _tasks_in_workers(spec, tasks, builders, workers, runs, stage, shared)
        return
    order: deque[int] = deque()  # the task of each batch handed to the encoder, in order
    noted = _tasks_noted(batches if batches is not None else _batches(spec, tasks, builders), order)
    for result in encode_batches(spec, noted, workers, runs, stage, shared):
        yield order.popleft(), result


def _tasks_in_workers(spec: Spec, tasks: list[ReadTask], builders: dict[str | None, Builder], workers: int,
                      runs: str | None, stage: Callable[..., Any], shared: processes.SharedPool | None = None
                      ) -> Iterator[tuple[int, Any]]:
    """Each task read and staged in a worker (its builder pickled without what it opened); the
    results taken task by task in order (a task's error is raised in its turn, after the earlier
    tasks' results). In the `shared` pool's workers, if given."""
    with processes.pool_in(shared, workers, (spec, runs, stage), renew_run_names) as pool:
        in_worker = processes.in_worker(_task_in_worker)
        pending: deque = deque()
        for task in tasks:
            pending.append((task.index, pool.submit(in_worker, task, builders[task.split])))
            if len(pending) > workers:  # bounded: at most this many tasks' results held
                index, future = pending.popleft()
                yield from ((index, result) for result in future.result())
        while pending:
            index, future = pending.popleft()
            yield from ((index, result) for result in future.result())


def _task_in_worker(state: tuple[Spec, str | None, Callable[..., Any]], task: ReadTask, builder: Builder
                    ) -> list[Any]:
    """A task's batches, read here and staged one by one: their results, in order. A build's
    records (given a runs folder) are held across the task's batches and written as one run a
    split (another each SPILL_BYTES): a run a batch made the shard writers merge hundreds."""
    spec, runs, stage = state
    builder = _worker_builder(task.split, builder)
    if runs is None:
        return [encode_in_worker(state, task.split, batch) for batch in task_batches(spec, builder, task)]
    held = _HeldRuns(runs, spec.output.shuffle)
    results = []
    for batch in task_batches(spec, builder, task):
        result = stage(spec, task.split, batch)
        if isinstance(result, DividedBatch):
            for name, part in result.parts.items():
                held.add(name, part)
            result.runs = held.written(SPILL_BYTES)
            result.held_after = held.bytes > 0
        results.append(result)
    last = next((result for result in reversed(results) if isinstance(result, DividedBatch)), None)
    if last is not None:
        for name, written in held.written(0).items():
            last.runs.setdefault(name, []).extend(written)
        last.held_after = False
    return results


# The builder of each split a worker process has read a task of, by the process's id and the split:
# the copy its first task brought (pickled without what the build's process opened), kept for its
# later tasks, so that what it opens (a database connection: about 25 ms of CPU here and a server
# process there) is opened once a worker, not once a task. (A pool's workers are forked from a
# process that never reads a task itself: each starts with none.)
_WORKER_BUILDERS: dict[tuple[int, str | None], Builder] = {}


def _worker_builder(split: str | None, builder: Builder) -> Builder:
    return _WORKER_BUILDERS.setdefault((os.getpid(), split), builder)


class _HeldRuns:
    """A worker's records of a task by split, until written as a run (`collect.write_run`); `bytes`
    counts their bytes and their labels'."""

    def __init__(self, folder: str, shuffle: bool):
        self.folder, self.shuffle = folder, shuffle
        self.parts: dict[str, list[SplitPart]] = {}
        self.bytes = 0

    def add(self, name: str, part: SplitPart) -> None:
        """Takes the part's records (it keeps its statistics and members)."""
        assert part.hashes is not None and part.records is not None
        self.parts.setdefault(name, []).append(SplitPart(part.hashes, part.records, part.statistics, part.labels))
        self.bytes += int(part.records.offsets[-1] - part.records.offsets[0]) + sum(map(len, part.labels or []))
        part.hashes = part.records = part.labels = None

    def written(self, beyond: int) -> dict[str, list[RunFile]]:
        """Each split's held records as a run, if they are more than `beyond` bytes (0: any)."""
        if not self.bytes or (beyond and self.bytes <= beyond):
            return {}
        written = {}
        for name, parts in self.parts.items():
            labels = [label for part in parts for label in part.labels or []] if parts[0].labels is not None else None
            hashes = np.concatenate([part.hashes for part in parts if part.hashes is not None])
            records = concat([part.records for part in parts if part.records is not None])
            written[name] = [write_run(self.folder, name, hashes, records, labels, self.shuffle)]
        self.parts, self.bytes = {}, 0
        return written


def _tasks_noted(batches: Iterator[tuple[int, str | None, Batch | PendingBatch]],
                 order: deque[int]) -> Iterator[tuple[str | None, Batch | PendingBatch]]:
    for task, split, batch in batches:
        order.append(task)
        yield split, batch


def _check_unique(batch: Batch, hashes: np.ndarray, seen: SeenKeys) -> None:
    """Raises DataError at the batch's first key met before (write/order.py's rule, in the source's order)."""
    seen.add(hashes, batch.origin, lambda row: key_label(batch.origin(row), batch.keys[row]))


def write_shards(spec: Spec, staging: str, records: dict[str, SplitRecords], kept: dict[str, dict],
                 manifest: Manifest, progress: Progress | None, processes: int,
                 pool: ProcessPoolExecutor | None = None) -> tuple[dict[str, SplitInfo], dict[str, int | None]]:
    """Writes every split's shards into the staging folder (runs merged in the running `pool`'s
    workers, if given); returns the splits and how many different keys each has (None: not counted)."""
    splits = {}
    written = 0
    distinct: dict[str, int | None] = {}
    for name, split_records in records.items():
        num_shards = count_shards(split_records.num_examples, split_records.num_bytes, spec.output.shards,
                                  spec.output.target_shard_bytes)
        held = split_records.in_memory()
        if held is not None:
            source, distinct[name] = held, held.distinct_keys()
        else:
            source, distinct[name] = split_records.slices(shard_starts(split_records.num_examples, num_shards))
        shards = write_split(staging, spec.name, name, source, num_shards, spec.output.compression, kept, manifest,
                             processes, spec.output.writes_index, spec.output.shuffle, spec.output.naming, pool=pool)
        splits[name] = SplitInfo(name, split_records.num_examples, sum(s.num_bytes for s in shards),
                                 [shard.to_dict() for shard in shards])
        written += split_records.num_examples
        if progress:
            progress("writing", written, sum(split.num_examples for split in records.values()))
    return splits, distinct
