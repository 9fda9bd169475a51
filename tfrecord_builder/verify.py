"""Re-reads a built dataset and checks every byte: files, checksums, framing, records, counts.

No TensorFlow: the framing and the records are read by our own readers, so a fault is named by
shard, record index and feature.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field

from .codec.example_reader import parse_record
from .codec.tfrecord import open_records, read_records
from .errors import DatasetError
from .write.info import DatasetInfo, read_info

MAX_FAULTS_PER_SHARD = 10


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


def verify(path: str | os.PathLike) -> Verification:
    """Checks the dataset at `path` (a folder with dataset_info.json).

    >>> result = verify("build/wine/1.0.0")
    >>> result.ok, result.num_records
    (True, 178)
    """
    info = read_info(os.fspath(path))
    result = Verification(info)
    for split in info.splits.values():
        counted = 0
        for shard in split.shards:
            counted += _check_shard(info, shard, result)
            result.num_shards += 1
        if counted != split.num_examples:
            result.faults.append(f"split {split.name}: {counted} records, dataset_info.json says {split.num_examples}")
    return result


def _check_shard(info: DatasetInfo, shard: dict, result: Verification) -> int:
    name = shard["file"]
    path = os.path.join(info.path, name)
    if not os.path.exists(path):
        result.faults.append(f"{name}: missing")
        return 0
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for chunk in iter(lambda: file.read(1 << 20), b""):
            digest.update(chunk)
    if digest.hexdigest() != shard["sha256"]:
        result.faults.append(f"{name}: sha256 {digest.hexdigest()[:12]}... differs from dataset_info.json's "
                             f"{shard['sha256'][:12]}... (the file changed after the build)")
    if os.path.getsize(path) != shard["num_bytes"]:
        result.faults.append(f"{name}: {os.path.getsize(path)} bytes, dataset_info.json says {shard['num_bytes']}")
    count = 0
    shard_faults = 0
    features = info.spec.features
    try:
        with open_records(path, info.spec.output.compression) as stream:
            for index, record in enumerate(read_records(stream, name)):
                count += 1
                problems = _check_record(record, features)
                for problem in problems:
                    if shard_faults < MAX_FAULTS_PER_SHARD:
                        result.faults.append(f"{name}: record {index}: {problem}")
                    shard_faults += 1
    except (DatasetError, OSError, EOFError) as error:
        result.faults.append(f"{error}" if name in str(error) else f"{name}: {error}")
    except Exception as error:  # zlib.error and other decompression failures
        result.faults.append(f"{name}: can't decompress ({type(error).__name__}: {error})")
    if shard_faults > MAX_FAULTS_PER_SHARD:
        result.faults.append(f"{name}: {shard_faults - MAX_FAULTS_PER_SHARD} more faulty records")
    if count != shard["num_examples"]:
        result.faults.append(f"{name}: {count} records, dataset_info.json says {shard['num_examples']}")
    result.num_records += count
    return count


def _check_record(record: bytes, features: dict) -> list[str]:
    try:
        stored, lists = parse_record(record)
    except DatasetError as error:
        return [str(error)]
    problems = []
    expected = {False: set(), True: set()}
    for name, feature in features.items():
        expected[feature.sequence].update(feature.parse_specs_source())
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


def _check_steps(feature, steps) -> str | None:
    if steps is None:
        return f"feature list {feature.record_key!r} is missing"
    for index, step in enumerate(steps):
        problem = feature.check_stored({feature.record_key: step})
        if problem:
            return f"step {index}: {problem}"
    return None
