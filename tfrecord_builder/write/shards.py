"""Writes a split's ordered records into shards: aside under a temporary name, then moved into place."""
from __future__ import annotations

import concurrent.futures
import contextlib
import hashlib
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from .. import fs
from ..codec.bytecolumn import ByteColumn
from ..codec.tfrecord import Compressor
from ..processes import can_fork, in_worker, worker_pool
from .collect import RecordsInMemory, ShardSlices
from .keys import hash_hex
from .manifest import Manifest
from .merge import read_slices
from .index import index_lines
from .naming import index_name, shard_name
from .order import shard_starts



@dataclass
class ShardInfo:
    """A written shard, as the dataset's metadata lists it: with its index file (`{"file",
    "num_bytes", "sha256"}`, the file relative to the dataset folder), where it has one."""

    file: str
    num_examples: int
    num_bytes: int
    sha256: str
    index: dict | None = None

    def to_dict(self) -> dict:
        entry = {"file": self.file, "num_examples": self.num_examples, "num_bytes": self.num_bytes,
                 "sha256": self.sha256}
        return {**entry, "index": self.index} if self.index is not None else entry

    @classmethod
    def from_dict(cls, entry: dict) -> "ShardInfo":
        return cls(entry["file"], entry["num_examples"], entry["num_bytes"], entry["sha256"], entry.get("index"))


def write_split(folder: str, name: str, split: str, records: RecordsInMemory | Sequence[ShardSlices], num_shards: int,
                compression: str, kept: dict[str, dict] | None = None, manifest: Manifest | None = None,
                processes: int = 1, index: bool = False, shuffle: bool = True, naming: str = "tfds",
                pool: ProcessPoolExecutor | None = None) -> list[ShardInfo]:
    """Writes a split's records into `num_shards` shards of near-equal example counts, up to
    `processes` at a time in forked processes, once the records (held, or their runs) reach POOL_BYTES.

    The records are held in memory (`RecordsInMemory`, cut into shards by rank: each writer gathers
    its own from the parent's memory), or lie in run files, each shard's in the slices its
    `ShardSlices` lists (each writer merges its own, by key hash when `shuffle`), named as `naming`
    says (write/naming.py shard_name). A shard in
    `kept` (from an interrupted run) whose records would be the same, by count and key range, is
    kept as it is; every shard written is added to `manifest` as soon as it is done. Records in
    runs are merged in the workers of a running `pool` (the encoding's: `processes.SharedPool`)
    rather than in processes started for it.
    """
    kept = kept or {}
    shards: list[ShardInfo | None] = [None] * num_shards
    jobs = []
    if isinstance(records, RecordsInMemory):
        starts = shard_starts(len(records.order), num_shards)
        for number, (start, stop) in enumerate(zip(starts[:-1].tolist(), starts[1:].tolist())):
            span = (hash_hex(records.hashes, start), hash_hex(records.hashes, stop - 1)) if stop > start else ("", "")
            jobs.append((number, span, stop - start, (start, stop)))
        write, size = _write_held_shard, records.num_bytes
    else:
        jobs = [(number, (shard.first, shard.last), shard.count, (shard.slices, shuffle))
                for number, shard in enumerate(records)]
        runs = {path for shard in records for path, _, _ in shard.slices}
        write, size = _write_sliced_shard, sum(os.path.getsize(path) for path in runs)
    todo = []
    for number, span, count, what in jobs:
        file = shard_name(name, split, number, num_shards, compression, naming)
        shards[number] = kept_shard(kept.get(file), file, count, span)
        if shards[number] is None:
            todo.append((number, os.path.join(folder, file), count, what, compression, index))
    # starting processes costs 25-100 ms: worth it only where the writing (gathering or merging, hashing) takes longer
    processes = min(processes, len(todo)) if can_fork() and size >= POOL_BYTES else 1
    held = records if isinstance(records, RecordsInMemory) else None  # forked writers read it from the parent's memory
    with contextlib.ExitStack() as stack:
        if processes > 1:
            if held is not None or pool is None:  # (held records: only forked now do the writers see them)
                pool = stack.enter_context(worker_pool(processes, held))
            # each taken as soon as it is done, in whatever order: a shard finished is recorded even
            # while one before it is still being written (and then fails: the disk full)
            futures = {pool.submit(in_worker(write), item): item[0] for item in todo}
            written: Iterator[tuple[int, Any]] = ((futures[done], done.result())
                                                  for done in concurrent.futures.as_completed(futures))
        else:
            written = ((item[0], write(held, item)) for item in todo)  # type: ignore[arg-type]
        for number, (shard, first, last) in written:
            if manifest is not None:  # recorded at once: a resumed build keeps it
                manifest.add(split, shard.to_dict(), first, last)
            shards[number] = shard
    return [shard for shard in shards if shard is not None]


def kept_shard(entry: dict | None, file: str, count: int, key_range: tuple[str, str]) -> ShardInfo | None:
    """The shard an interrupted build finished, if it holds these records: as many, same key range."""
    if entry is None or entry["num_examples"] != count:
        return None
    if key_range != (entry["first_key_hash"], entry["last_key_hash"]):
        return None
    return ShardInfo.from_dict(entry)


# Records (held, or in runs) below this are written by the calling process. Between two measured
# sizes: the 53 MiB of bench/images.py's 2,000 raw photos (4 runs) took 1.25-1.6x as long in 2
# processes as in one; a shard of the 64 MiB of bench/tabular.py's table (13 runs a shard, a
# costlier merge) takes 0.11 s to write, and 2 processes write its 4 in about half the time
POOL_BYTES = 60 * 1024**2

_Job = tuple[int, str, int, tuple, str, bool]  # shard number, path, records, where they are, compression, index


def _write_held_shard(held: RecordsInMemory, job: _Job) -> tuple[ShardInfo, str, str]:
    _, path, count, (start, stop), compression, index = job
    return write_shard(path, held.chunks(start, stop), count, compression, index)


def _write_sliced_shard(_: object, job: _Job) -> tuple[ShardInfo, str, str]:
    _, path, count, (slices, shuffle), compression, index = job
    return write_shard(path, read_slices(slices, shuffle), count, compression, index)


def key_range(pieces: list[tuple[np.ndarray, ByteColumn]]) -> tuple[str, str]:
    if not pieces:
        return "", ""
    return hash_hex(pieces[0][0], 0), hash_hex(pieces[-1][0], -1)


def write_shard(path: str, pieces: Iterable[tuple[np.ndarray, ByteColumn]], count: int, compression: str,
                index: bool = False) -> tuple[ShardInfo, str, str]:
    """Writes one shard at `path`, whole or not at all: on disk aside, fsynced, then renamed; in an
    object store straight to its name (an object appears only once its upload is complete).

    With `index` (uncompressed shards only), its index file too, written first: a line per record,
    `offset length`, the offset of the record's 8-byte length header and the length of the whole
    framed record (8 + 4 + data + 4), the format NVIDIA DALI and the `tfrecord` package read."""
    digest = hashlib.sha256()
    compressor = Compressor(compression)
    lines: list[bytes] = []
    size = 0
    first = last = ""
    with fs.open_whole(path) as file:
        for hashes, chunk in pieces:
            first = first or hash_hex(hashes, 0)
            last = hash_hex(hashes, -1)
            if index:
                lines.append(index_lines(chunk.offsets, size))
            data = compressor.compress(memoryview(chunk.data[chunk.offsets[0] : chunk.offsets[-1]]))
            digest.update(data)
            file.write(data)
            size += len(data)
        tail = compressor.flush()
        digest.update(tail)
        file.write(tail)
        size += len(tail)
        # before the shard is moved into place: a shard found whole has its index
        entry = _write_index(path, b"".join(lines)) if index else None
    return ShardInfo(fs.basename(path), count, size, digest.hexdigest(), entry), first, last


def _write_index(path: str, text: bytes) -> dict:
    """Writes the index file of the shard at `path` (whole or not at all) and returns its entry."""
    relative = index_name(fs.basename(path))
    target = fs.join(fs.dirname(path), relative)
    fs.write_whole(target, text)
    return {"file": relative, "num_bytes": len(text), "sha256": hashlib.sha256(text).hexdigest()}
