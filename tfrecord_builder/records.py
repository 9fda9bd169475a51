"""A built dataset's records as dicts of NumPy values, without TensorFlow: `tb.read` (a split in
order) and `Dataset.record` (record i, through the shards' index files).

Records are parsed by our own wire decoder (codec/arrays.py) and decoded by the dataset's reading
description (`Spec.reading()`), the one `input_fn` follows (features/numpy_reading.py). Files are
read through fsspec, so a dataset in an object store reads as one on disk.
"""
from __future__ import annotations

import os
from bisect import bisect_right
from itertools import accumulate
from typing import Any, BinaryIO, Iterator

import numpy as np

from . import fs
from .codec.arrays import parse_arrays, refused
from .codec.tfrecord import DATA_MISMATCH, data_intact, frame_length, open_records, read_records
from .errors import DatasetError, UsageError
from .features.numpy_reading import RecordError, decode_record
from .write.index import FRAME_BYTES, parse_index
from .write.info import DatasetInfo


class RecordReader:
    """Reads a dataset's records as NumPy: in order, or one at a time by number."""

    def __init__(self, info: DatasetInfo):
        self.info = info
        self.reading = info.spec.reading()
        self.compression = info.spec.output.compression
        self.keys: frozenset[str] | None = None  # the record keys parsed (None: all)
        self._indexes: dict[str, np.ndarray] = {}
        self._files: dict[str, tuple[int, BinaryIO]] = {}  # by shard: opened by which process, the file

    def split(self, split: str) -> Any:
        if split not in self.info.splits:
            raise UsageError(f"unknown split {split!r}; expected one of: {', '.join(self.info.splits)}")
        return self.info.splits[split]

    def records(self, split: str) -> Iterator[dict[str, Any]]:
        """Every record of the split, in the order written."""
        for shard in self.split(split).shards:
            yield from self.shard_records(shard)

    def shard_records(self, shard: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """Every record of one shard (an entry of a split's `shards`), in order."""
        path = self.checked_path(shard)
        with open_records(path, self.compression) as stream:
            records = read_records(stream, path)
            number = 0
            while True:
                try:
                    data = next(records)
                except StopIteration:
                    return
                except DatasetError as error:  # a broken frame, or compressed data that isn't whole
                    raise DatasetError(f"{error}; `tfrecord-builder verify` lists every fault") from None
                yield self.decoded(data, path, number)
                number += 1

    def record(self, split: str, number: int) -> dict[str, Any]:
        """Record `number` of the split (0-based, negative from the end), read through its shard's
        index file (a shard without one, compressed, is read from its start)."""
        info = self.split(split)
        count = info.num_examples
        if isinstance(number, bool) or not hasattr(number, "__index__"):
            raise TypeError(f"record numbers are integers, received {number!r}")
        place = number.__index__() + (count if number < 0 else 0)
        if not 0 <= place < count:
            raise IndexError(f"record {number} of split {split!r}: the split has {count:,} records")
        ends = list(accumulate(shard["num_examples"] for shard in info.shards))
        which = bisect_right(ends, place)
        shard = info.shards[which]
        within = place - (ends[which - 1] if which else 0)
        path = fs.join(self.info.path, shard["file"])
        if shard.get("index") is None:
            with open_records(self.checked_path(shard), self.compression) as stream:
                for seen, data in enumerate(read_records(stream, path)):
                    if seen == within:
                        return self.decoded(data, path, within)
            raise DatasetError(f"{path}: holds fewer than {within + 1} records (run `tfrecord-builder verify`)")
        offset, length = self._located(shard, within)
        return self.decoded(self._framed(shard, path, within, offset, length), path, within)

    def decoded(self, data: bytes, path: str, number: int) -> dict[str, Any]:
        try:
            lists, steps = parse_arrays(data, self.keys)
            return decode_record(lists, steps, self.reading)
        except RecordError as error:
            raise DatasetError(f"{path}: record {number}: {error} (run `tfrecord-builder verify`)") from None
        except ValueError as error:
            raise refused(f"{path}: record {number}", error) from None

    def checked_path(self, shard: dict[str, Any]) -> str:
        """The shard's path, after checking it has the size the metadata lists."""
        path = fs.join(self.info.path, shard["file"])
        found = fs.size(path) if fs.exists(path) else None
        if found != shard["num_bytes"]:
            described = "missing" if found is None else f"{found} bytes"
            raise DatasetError(f"{path}: shard is {described}, expected {shard['num_bytes']} bytes "
                               "(run `tfrecord-builder verify`)")
        return path

    def _located(self, shard: dict[str, Any], within: int) -> tuple[int, int]:
        """Where record `within` of the shard is, by its index file."""
        entry = shard["index"]
        rows = self._indexes.get(shard["file"])
        index_path = fs.join(self.info.path, entry["file"])
        if rows is None:
            if not fs.exists(index_path):
                raise DatasetError(f"{index_path}: missing (the index of {shard['file']}; run `tfrecord-builder verify`)")
            with fs.open_file(index_path) as file:
                try:
                    rows = parse_index(file.read())
                except ValueError as error:
                    raise DatasetError(f"{index_path}: {error} (the index of {shard['file']})") from None
            self._indexes[shard["file"]] = rows
        if within >= len(rows):
            raise DatasetError(f"{index_path}: {len(rows)} lines, but {shard['file']} holds {shard['num_examples']} "
                               "records (a damaged index: run `tfrecord-builder verify`)")
        offset, length = (int(value) for value in rows[within])
        return offset, length

    def _framed(self, shard: dict[str, Any], path: str, within: int, offset: int, length: int) -> bytes:
        """The data of the framed record at `offset`, `length` bytes long, its checksums checked."""
        frame = self._read(shard, path, offset, length)
        where = f"{path}: record {within}"
        if len(frame) != length or length < FRAME_BYTES or frame_length(frame[:12]) != (length - FRAME_BYTES, True):
            raise DatasetError(f"{where}: the index ({shard['index']['file']}) points at byte {offset}, {length} bytes, "
                               "where no such record is (a damaged index or shard: run `tfrecord-builder verify`)")
        data = frame[12:-4]
        if not data_intact(data, frame[-4:]):
            raise DatasetError(f"{where}: {DATA_MISMATCH}")
        return data

    def _read(self, shard: dict[str, Any], path: str, offset: int, length: int) -> bytes:
        """`length` bytes at `offset` of the shard, from a file kept open for this process (a
        worker process forked with the reader opens its own)."""
        opened = self._files.get(shard["file"])
        if opened is None or opened[0] != os.getpid():
            opened = (os.getpid(), fs.open_file(self.checked_path(shard)))
            self._files[shard["file"]] = opened
        file = opened[1]
        file.seek(offset)
        return file.read(length)

    def close(self) -> None:
        for pid, file in self._files.values():
            if pid == os.getpid():
                file.close()
        self._files.clear()

    def __getstate__(self) -> dict[str, Any]:  # pickled into worker processes: without open files
        return {**self.__dict__, "_files": {}}
