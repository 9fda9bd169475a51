"""Columns of variable-length byte strings, assembled with NumPy instead of per-row Python.

A `ByteColumn` holds one byte string per row as a flat uint8 buffer plus row offsets. Building
records column-wise (one NumPy pass per column, not one Python object per value) is what makes
the writer fast: protobuf fields are "tag, varint length, payload", and every step of that is a
vectorised operation here.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field as dataclass_field
from typing import Any, Sequence

import numpy as np

from ..features.values import offsets_of

@dataclass
class ByteColumn:
    """`num_rows` byte strings: row i is `data[offsets[i]:offsets[i + 1]]`."""

    data: np.ndarray  # uint8
    offsets: np.ndarray  # int64, num_rows + 1
    repeated: bytes | None = dataclass_field(default=None, compare=False, repr=False)  # every row, when all are the same

    @property
    def num_rows(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def width(self) -> int | None:
        """The length every row has, or None if rows differ."""
        if self.num_rows == 0:
            return 0
        if self.repeated is not None:
            return len(self.repeated)
        width = int(self.offsets[1] - self.offsets[0])
        total = int(self.offsets[-1] - self.offsets[0])
        if total != width * self.num_rows:
            return None
        lengths = self.lengths
        return width if (lengths == width).all() else None

    def row(self, index: int) -> bytes:
        return self.data[self.offsets[index] : self.offsets[index + 1]].tobytes()

    def rows(self) -> list[bytes]:
        """Every row as a bytes object (one Python object per row: use only at the edges)."""
        buffer = self.data.tobytes()
        offsets = self.offsets.tolist()
        return [buffer[start:end] for start, end in zip(offsets[:-1], offsets[1:])]

    @classmethod
    def from_rows(cls, rows: Sequence[bytes]) -> "ByteColumn":
        lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
        data = np.frombuffer(b"".join(rows), dtype=np.uint8)
        return cls(data, offsets_of(lengths))

    @classmethod
    def from_lengths(cls, data: np.ndarray, lengths: np.ndarray) -> "ByteColumn":
        """`data` cut into consecutive rows of these lengths."""
        return cls(data, offsets_of(lengths))

    @classmethod
    def constant(cls, value: bytes, num_rows: int) -> "ByteColumn":
        """The same bytes in every row."""
        data = np.tile(np.frombuffer(value, dtype=np.uint8), num_rows)
        return cls(data, np.arange(num_rows + 1, dtype=np.int64) * len(value), bytes(value))

    def take(self, order: np.ndarray) -> "ByteColumn":
        """The rows in `order` (a permutation or selection of row indices)."""
        return taken([self], order)


def concat(columns: Sequence[ByteColumn]) -> ByteColumn:
    """Stacks columns vertically: the rows of the first, then of the second, ..."""
    if len(columns) == 1:
        return columns[0]
    data = np.concatenate([column.data for column in columns])
    lengths = np.concatenate([column.lengths for column in columns])
    return ByteColumn(data, offsets_of(lengths))


def join(columns: Sequence[ByteColumn]) -> ByteColumn:
    """Row-wise concatenation: row i is `columns[0].row(i) + columns[1].row(i) + ...`."""
    num_rows = columns[0].num_rows
    columns = [column for column in columns if column.offsets[-1] > column.offsets[0]]
    if len(columns) == 1:
        return columns[0]
    if not columns:
        return ByteColumn(np.zeros(0, np.uint8), np.zeros(num_rows + 1, np.int64))
    total = sum(int(column.offsets[-1] - column.offsets[0]) for column in columns)
    if total > _SLICE_JOIN_BYTES * num_rows:
        return _join_arrow(columns) if _arrow_compute() else _join_slices(columns)
    widths = [column.width for column in columns]
    if len(columns) > 2 and any(width is not None for width in widths) and not all(
            width is not None for width in widths):
        columns, widths = _merge_fixed(columns, widths)
        if len(columns) == 1:
            return columns[0]
    if all(width is not None for width in widths):
        return _join_fixed(columns, widths, num_rows)
    if _arrow_compute():
        return _join_arrow(columns)
    offsets = offsets_of(row_lengths(columns))
    out = np.empty(int(offsets[-1]), dtype=np.uint8)
    # rows a slice at a time: the scatter's int64 index per byte stays a few MiB
    step = max(1, _SCATTER_BYTES * num_rows // max(1, int(offsets[-1])))
    for start in range(0, num_rows, step):
        stop = min(num_rows, start + step)
        position = offsets[start:stop].copy()
        for column in columns:
            bounds = column.offsets[start : stop + 1]
            length = np.diff(bounds)
            shift = np.repeat(position - bounds[:-1], length)
            shift += np.arange(bounds[0], bounds[-1], dtype=np.int64)
            out[shift] = column.data[bounds[0] : bounds[-1]]
            position += length
    return ByteColumn(out, offsets)


ARROW_JOIN = True  # tests set it False to check that the NumPy joins make the same bytes


def _arrow_compute() -> Any:
    """pyarrow.compute, if joins may use it (imported on the first join that would)."""
    return _pyarrow_compute() if ARROW_JOIN else None


@functools.cache
def _pyarrow_compute() -> Any:
    try:
        import pyarrow.compute as pc
    except ImportError:  # (a dependency of the package: only a broken install lacks it)
        return None
    return pc


def _join_arrow(columns: Sequence[ByteColumn]) -> ByteColumn:
    """`join` by Arrow's `binary_join_element_wise` (C++, a memcpy per cell): for rows of
    different lengths it is 2-8 times faster than NumPy's scatter or a bytes slice per cell.
    The columns go in without a copy, as large_binary arrays over their buffers."""
    import pyarrow as pa

    joined = _arrow_compute().binary_join_element_wise(*map(_as_arrow, columns), pa.scalar(b"", pa.large_binary()))
    return from_arrow(joined)


def taken(columns: Sequence[ByteColumn], rows: np.ndarray) -> ByteColumn:
    """The `rows` (numbered across the columns, one after another) of the columns, in that order,
    as one column: Arrow's `take` (a memcpy per row, in C++) gathers them, ten times faster than
    a bytes slice per row, which is what is left without Arrow."""
    if _arrow_compute() is not None:
        import pyarrow as pa

        indices = pa.array(np.asarray(rows, dtype=np.int64))
        if len(columns) == 1:
            return from_arrow(_as_arrow(columns[0]).take(indices))
        chunked = pa.chunked_array([_as_arrow(column) for column in columns], pa.large_binary())
        return from_arrow(chunked.take(indices).combine_chunks())
    views = [column.data.data for column in columns]  # memoryviews
    which = np.repeat(np.arange(len(columns)), [column.num_rows for column in columns])[rows]
    starts = np.concatenate([column.offsets[:-1] for column in columns])[rows]
    ends = np.concatenate([column.offsets[1:] for column in columns])[rows]
    data = b"".join([views[column][start:end] for column, start, end in
                     zip(which.tolist(), starts.tolist(), ends.tolist())])
    return ByteColumn(np.frombuffer(data, dtype=np.uint8), offsets_of(np.asarray(ends - starts)))


def _as_arrow(column: ByteColumn) -> Any:
    """The column as a large_binary Arrow array over its buffers (no copy)."""
    import pyarrow as pa

    base = int(column.offsets[0])
    offsets = column.offsets - base if base else column.offsets
    return pa.Array.from_buffers(pa.large_binary(), column.num_rows, [
        None, pa.py_buffer(np.ascontiguousarray(offsets, dtype=np.int64)),
        pa.py_buffer(np.ascontiguousarray(column.data[base : column.offsets[-1]]))])


def from_arrow(array: Any) -> ByteColumn:
    """A large_binary (or large_string) Arrow array without nulls as a column over its buffers (no copy)."""
    if not len(array):
        return ByteColumn(np.zeros(0, np.uint8), np.zeros(1, np.int64))
    _, offsets, data = array.buffers()
    offsets = np.frombuffer(offsets, dtype=np.int64)[array.offset : array.offset + len(array) + 1]
    if data is None:  # every row empty
        return ByteColumn(np.zeros(0, np.uint8), offsets)
    return ByteColumn(np.frombuffer(data, dtype=np.uint8)[: offsets[-1]], offsets)


_SCATTER_BYTES = 512 * 1024
_WORDS = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _join_fixed(columns: list[ByteColumn], widths: list[int], num_rows: int) -> ByteColumn:
    """`join` of columns whose rows all have one length each: a 2-D array, no index arrays.

    The constant columns (most of a record's field headers) go in with one broadcast of a template
    row; each other column is copied in as a strided slice, a word at a time where it can be.
    """
    template = b"".join(bytes(width) if column.repeated is None else column.repeated
                        for column, width in zip(columns, widths))
    out = np.empty((num_rows, len(template)), dtype=np.uint8)
    out[:] = np.frombuffer(template, dtype=np.uint8)
    position = 0
    for column, width in zip(columns, widths):
        if column.repeated is None and width:
            start = column.offsets[0]
            source = column.data[start : start + num_rows * width].reshape(num_rows, width)
            target = out[:, position : position + width]
            word = _WORDS.get(width)
            if word is not None:  # a column of 2, 4 or 8 bytes moves as one word per row
                target.view(word)[:, 0] = source.view(word)[:, 0]
            else:
                target[:] = source
        position += width
    repeated = template if all(column.repeated is not None for column in columns) else None
    return ByteColumn(out.reshape(-1), np.arange(num_rows + 1, dtype=np.int64) * len(template), repeated)


_SLICE_JOIN_BYTES = 512  # rows longer than this on average are joined by slicing bytes


def _join_slices(columns: list[ByteColumn]) -> ByteColumn:
    """`join` for long rows (images): a bytes slice per cell, one memcpy each, instead of an int64
    index per byte."""
    buffers = [column.data[column.offsets[0] : column.offsets[-1]].tobytes() for column in columns]
    bounds = [(column.offsets - column.offsets[0]).tolist() for column in columns]
    pieces = [buffer[offsets[row] : offsets[row + 1]]
              for row in range(columns[0].num_rows) for buffer, offsets in zip(buffers, bounds)]
    lengths = sum(column.lengths for column in columns)
    return ByteColumn(np.frombuffer(b"".join(pieces), dtype=np.uint8), offsets_of(lengths))


def _merge_fixed(columns: list[ByteColumn], widths: list[int | None]) -> tuple[list[ByteColumn], list[int | None]]:
    """Joins each run of adjacent fixed-width columns into one (cheaply, as a 2-D array) so the
    byte-by-byte scatter of the variable-width join has fewer columns to place."""
    merged: list[ByteColumn] = []
    merged_widths: list[int | None] = []
    run: list[ByteColumn] = []
    for column, width in zip(columns + [None], widths + [None]):  # a sentinel ends the last run
        if width is not None and column is not None:
            run.append(column)
            continue
        if run:
            merged.append(join(run) if len(run) > 1 else run[0])
            merged_widths.append(merged[-1].width)
            run = []
        if column is not None:
            merged.append(column)
            merged_widths.append(None)
    return merged, merged_widths


def looked_up(table: Sequence[bytes], which: np.ndarray) -> ByteColumn:
    """Row i is `table[which[i]]`: bytes made once per distinct value (in Python), gathered for
    every row with one NumPy index."""
    num_rows = len(which)
    if not num_rows:
        return ByteColumn(np.zeros(0, np.uint8), np.zeros(1, np.int64))
    if len(table) == 1:
        return ByteColumn.constant(table[0], num_rows)
    widths = np.array([len(entry) for entry in table], dtype=np.int64)
    padded = np.zeros((len(table), int(widths.max())), dtype=np.uint8)
    for index, entry in enumerate(table):
        padded[index, : len(entry)] = np.frombuffer(entry, dtype=np.uint8)
    rows = padded[which]
    if (widths == widths[0]).all():
        return ByteColumn(rows.reshape(-1), np.arange(num_rows + 1, dtype=np.int64) * int(widths[0]))
    row_widths = widths[which]
    return ByteColumn(rows[np.arange(padded.shape[1]) < row_widths[:, None]], offsets_of(row_widths))


def row_lengths(parts: Sequence[ByteColumn]) -> np.ndarray:
    """Each row's length once the parts are joined."""
    lengths = parts[0].lengths
    for part in parts[1:]:
        lengths = lengths + part.lengths
    return lengths
