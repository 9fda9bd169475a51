"""A built dataset's records as dicts of NumPy values, without TensorFlow: `tb.read` (a split in
order) and `Dataset.record` (record i, through the shards' index files).

Records are decoded by the dataset's reading description (`Spec.reading()`), the one `input_fn`
follows (read/numpy_decoding.py): in order a block of records at a time, read as columns
(`BlockDecoder`, over verify's column reader, codec/columns.py) where they are in our encoder's
layout, else one at a time through our own wire decoder (codec/arrays.py), to the same values.
Files are read through fsspec, so a dataset in an object store reads as one on disk.
"""
from __future__ import annotations

import os
from bisect import bisect_right
from itertools import accumulate
from typing import Any, BinaryIO, Iterator

import numpy as np

from .. import fs
from ..codec.arrays import parse_arrays, refused
from ..codec.columns import Layout, read_columns
from ..codec.tfrecord import (DATA_MISMATCH, RecordBlock, data_intact, frame_length, open_records, read_records,
                              stream_blocks)
from ..errors import DatasetError, UsageError
from .numpy_decoding import RecordError, decode_record
from ..features.values import StoredColumn
from ..write.index import FRAME_BYTES, parse_index
from ..write.info import DatasetInfo


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
        """Every record of one shard (an entry of a split's `shards`), in order, decoded a block
        of records at a time where the records are as our encoder writes them (`BlockDecoder`),
        else one at a time."""
        path = self.checked_path(shard)
        blocks = BlockDecoder.of(self.reading) if self.keys is None else None
        with open_records(path, self.compression) as stream:
            framed = stream_blocks(stream, path)
            while True:
                try:
                    block = next(framed)
                except StopIteration:
                    return
                except DatasetError as error:  # a broken frame, or compressed data that isn't whole
                    raise DatasetError(f"{error}; `tfrecord-builder verify` lists every fault") from None
                records = blocks.block_records(block) if blocks is not None else None
                if records is not None:
                    yield from records
                else:
                    for number, data in enumerate(block.records(), block.first):
                        yield self.record_values(data, path, number)

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
                        return self.record_values(data, path, within)
            raise DatasetError(f"{path}: holds fewer than {within + 1} records (run `tfrecord-builder verify`)")
        offset, length = self._located(shard, within)
        return self.record_values(self._framed(shard, path, within, offset, length), path, within)

    def record_values(self, data: bytes, path: str, number: int) -> dict[str, Any]:
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


# ---- a block of records at once ---------------------------------------------------------------------

_LIST_KINDS = {"int64": "int64", "float32": "float", "string": "bytes"}  # stored dtype -> its list
# decode steps that act on each value alone, so on a column as on a record's values: the step's
# function over a column of numbers (of strings only `to_ragged`, which does nothing)
_ELEMENTWISE: dict[str, Any] = {
    "cast": lambda values, dtype: values.astype(np.dtype(dtype)),
    "exact_float64": lambda values: np.asarray(values, dtype=np.float64),
    "to_ragged": lambda values: values,
    "pad_steps": lambda values, **_: values,  # a record's own steps need no pad
}


class BlockDecoder:
    """Decodes a block of records at once, from their columns (codec/columns.py, verify's reader),
    to the values `decode_record` gives record by record: equal, of the same types. It covers
    descriptions whose every feature has one record key, read as a fixed shape, a variable
    length, or a fixed shape per step, with decode steps that act on each value alone (`cast`
    and the like); a block holding a record off the layout, or one `decode_record` would refuse,
    is left to the per-record reader (which then says what is wrong with it)."""

    def __init__(self, reading: dict[str, Any], layout: Layout):
        self.reading = reading
        self.layout = layout

    @classmethod
    def of(cls, reading: dict[str, Any]) -> "BlockDecoder | None":
        """The decoder for the description, or None if some feature is beyond it."""
        kinds: dict[bool, dict[str, str]] = {False: {}, True: {}}
        for feature in reading["features"].values():
            if len(feature["parse"]) != 1:
                return None
            (key, (kind, dtype, _)), = feature["parse"].items()
            if kind not in (("fixed_steps",) if feature["sequence"] else ("fixed", "var")):
                return None
            for step, arguments in feature["decode"]:
                if step not in _ELEMENTWISE or (dtype == "string" and step != "to_ragged"):
                    return None
                if step != "pad_steps" and any(isinstance(value, dict) for value in arguments.values()):
                    return None
            if kinds[feature["sequence"]].setdefault(key, _LIST_KINDS[dtype]) != _LIST_KINDS[dtype]:
                return None
        sequence = reading["format"] == "sequence_example"
        if kinds[True] and not sequence:
            return None
        return cls(reading, Layout.of(kinds[False], kinds[True] if sequence else None))

    def block_records(self, block: RecordBlock) -> list[dict[str, Any]] | None:
        """The block's records, or None if one is left to the per-record reader."""
        columns = read_columns(block.data, block.starts, block.ends, self.layout)
        if len(columns.irregular):
            return None
        count = len(block)
        names, values = [], []
        steps: dict[str, np.ndarray] = {}
        for name, feature in self.reading["features"].items():
            (key, (kind, dtype, shape)), = feature["parse"].items()
            group, items = (columns.lists, columns.list_items) if feature["sequence"] else \
                (columns.context, columns.context_items)
            column = group[key]
            flat = self._values(block, column, items.get(key))
            for step, arguments in feature["decode"]:
                flat = _ELEMENTWISE[step](flat, **arguments)
            if kind == "var":
                per_record = _split(flat, column.counts)
            else:
                inner = [int(dim) for dim in shape]
                if len(column.counts) and (column.counts != np.prod(inner, dtype=np.int64)).any():
                    return None  # a value of another shape: the per-record reader says which
                shaped = flat.reshape([len(column.counts), *inner])
                if kind == "fixed":
                    per_record = list(shaped)
                else:
                    steps[key] = column.steps
                    per_record = _split(shaped, column.steps)
            names.append(name)
            values.append(per_record)
        if self.reading["format"] == "sequence_example":
            self._sequence(names, values, steps[self.reading["length_key"]], count)
        return [dict(zip(names, record)) for record in zip(*values)] if values else [{} for _ in range(count)]

    @staticmethod
    def _values(block: RecordBlock, column: StoredColumn, starts: np.ndarray | None) -> np.ndarray:
        """A column's values: numbers as they are, a bytes list's as an array of `bytes`."""
        if starts is None:
            return column.values
        raw = block.data.base
        items = np.empty(len(starts), dtype=object)
        items[:] = list(map(raw.__getitem__, map(slice, starts.tolist(), (starts + column.values).tolist())))
        return items

    def _sequence(self, names: list[str], values: list[list[Any]], steps: np.ndarray, count: int) -> None:
        """`decode_record`'s last part, for every record: the cut to `max_length`, the length and
        the mask features."""
        reading = self.reading
        lengths = steps
        if reading["max_length"] is not None:
            limit = reading["max_length"]
            for place, name in enumerate(names):
                if reading["features"][name]["sequence"]:
                    values[place] = [value[:limit] for value in values[place]]
            lengths = np.minimum(lengths, limit)
        if reading["length_feature"] is not None:
            names.append(reading["length_feature"])
            values.append(list(lengths.astype(np.int64)))
        if reading["mask_feature"] is not None:
            names.append(reading["mask_feature"])
            values.append([np.ones(length, dtype=bool) for length in lengths.tolist()])


def _split(values: np.ndarray, counts: np.ndarray) -> list[np.ndarray]:
    """`values` cut into consecutive pieces of `counts[i]` (rows along the first axis)."""
    ends = np.cumsum(counts).tolist()
    return [values[start:end] for start, end in zip([0, *ends[:-1]], ends)]
