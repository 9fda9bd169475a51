"""Columns of variable-length byte strings, assembled with NumPy instead of per-row Python.

A `ByteColumn` holds one byte string per row as a flat uint8 buffer plus row offsets. Building
records column-wise (one NumPy pass per column, not one Python object per value) is what makes
the writer fast: protobuf fields are "tag, varint length, payload", and every step of that is a
vectorised operation here.
"""
from __future__ import annotations

from dataclasses import dataclass, field as dataclass_field
from typing import Sequence

import numpy as np

_SEVEN_BIT_SHIFTS = np.arange(10, dtype=np.uint64) * np.uint64(7)
_THRESHOLDS = np.array([1 << (7 * k) for k in range(1, 10)], dtype=np.uint64)


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
        return cls(data, _offsets(lengths))

    @classmethod
    def from_lengths(cls, data: np.ndarray, lengths: np.ndarray) -> "ByteColumn":
        """`data` cut into consecutive rows of these lengths."""
        return cls(data, _offsets(lengths))

    @classmethod
    def constant(cls, value: bytes, num_rows: int) -> "ByteColumn":
        """The same bytes in every row."""
        data = np.tile(np.frombuffer(value, dtype=np.uint8), num_rows)
        return cls(data, np.arange(num_rows + 1, dtype=np.int64) * len(value), bytes(value))

    def take(self, order: np.ndarray) -> "ByteColumn":
        """The rows in `order` (a permutation or selection of row indices)."""
        # slicing bytes objects copies each row with one memcpy: faster than NumPy index arrays
        buffer = self.data.tobytes()
        base = int(self.offsets[0])
        starts = (self.offsets[:-1][order] - base).tolist()
        ends = (self.offsets[1:][order] - base).tolist()
        rows = [buffer[start:end] for start, end in zip(starts, ends)]
        lengths = self.lengths[order]
        return ByteColumn(np.frombuffer(b"".join(rows), dtype=np.uint8), _offsets(lengths))


def concat(columns: Sequence[ByteColumn]) -> ByteColumn:
    """Stacks columns vertically: the rows of the first, then of the second, ..."""
    if len(columns) == 1:
        return columns[0]
    data = np.concatenate([column.data for column in columns])
    lengths = np.concatenate([column.lengths for column in columns])
    return ByteColumn(data, _offsets(lengths))


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
        return _join_slices(columns)
    widths = [column.width for column in columns]
    if len(columns) > 2 and any(width is not None for width in widths) and not all(
            width is not None for width in widths):
        columns, widths = _merge_fixed(columns, widths)
        if len(columns) == 1:
            return columns[0]
    if all(width is not None for width in widths):
        return _join_fixed(columns, widths, num_rows)
    offsets = _offsets(row_lengths(columns))
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
    return ByteColumn(np.frombuffer(b"".join(pieces), dtype=np.uint8), _offsets(lengths))


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


def varints(values: np.ndarray) -> ByteColumn:
    """Protobuf base-128 varints of `values`, one row each (negatives as 10-byte two's complement)."""
    signed = np.asarray(values).astype(np.int64, copy=False)
    if not len(signed) or (signed.min() >= 0 and signed.max() < 0x80):
        return ByteColumn(signed.astype(np.uint8), np.arange(len(signed) + 1, dtype=np.int64))
    unsigned = signed.view(np.uint64)
    sizes = varint_sizes(unsigned)
    widest = int(sizes.max())  # only as many 7-bit groups as the longest varint has
    groups = ((unsigned[:, None] >> _SEVEN_BIT_SHIFTS[None, :widest]) & np.uint64(0x7F)).astype(np.uint8)
    steps = np.arange(widest, dtype=np.int64)[None, :]
    groups |= np.where(steps < (sizes[:, None] - 1), np.uint8(0x80), np.uint8(0))
    if widest == int(sizes.min()):
        return ByteColumn(groups.reshape(-1), np.arange(len(sizes) + 1, dtype=np.int64) * widest)
    return ByteColumn(groups[steps < sizes[:, None]], _offsets(sizes))


def varint_sizes(values: np.ndarray) -> np.ndarray:
    """Bytes in the varint of each value."""
    unsigned = np.asarray(values).astype(np.int64, copy=False).view(np.uint64)
    return 1 + np.searchsorted(_THRESHOLDS, unsigned, side="right").astype(np.int64)


def varint(value: int) -> bytes:
    """One varint, for constant headers."""
    value &= (1 << 64) - 1
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def nest_parts(parts: Sequence[ByteColumn], levels: Sequence[tuple[int, bytes, bool]]) -> list[ByteColumn]:
    """Wraps each row of a payload, given as parts whose row-wise join it is, in nested
    length-delimited fields, left unjoined: a record built level by level is joined once, at the
    end, so each byte is moved once.

    `levels` go from the innermost out; each is (tag, constant bytes that come before the inner
    field inside this field's content, omit the field when its content is empty)."""
    lengths = row_lengths(parts)
    stacked = _stacked_headers(lengths, levels)
    if stacked is not None:
        return [stacked, *parts]
    headers = []
    for tag, before, omit_empty in levels:
        content = lengths + len(before)
        headers.append(_header(tag, content, before, omit_empty))
        lengths = np.where(content > 0, content + 1 + varint_sizes(content), 0) if omit_empty else (
            content + 1 + varint_sizes(content))
    return headers[::-1] + list(parts)


_TABLE_LENGTHS = 1 << 16  # payloads shorter than this get their headers from a table
_TABLE_ROWS = 256  # ... if they have at most this many distinct lengths


def _stacked_headers(lengths: np.ndarray, levels: Sequence[tuple[int, bytes, bool]]) -> ByteColumn | None:
    """Every level's header of each row as one column, looked up by the row's payload length.

    A batch's payloads have few distinct lengths (a scalar's varint takes 1 to 10 bytes), so the
    headers of each are made once, in Python, and the rows take theirs with one NumPy gather.
    None where there are too many distinct or too long lengths: `nest_parts` then builds each
    level's column with NumPy.
    """
    num_rows = len(lengths)
    if not num_rows or int(lengths.max()) >= _TABLE_LENGTHS:
        return None
    distinct = np.flatnonzero(np.bincount(lengths))
    if len(distinct) > _TABLE_ROWS:
        return None
    position = np.zeros(int(distinct[-1]) + 1, dtype=np.int64)
    position[distinct] = np.arange(len(distinct))
    return looked_up([_header_stack(length, levels) for length in distinct.tolist()], position[lengths])


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
    return ByteColumn(rows[np.arange(padded.shape[1]) < row_widths[:, None]], _offsets(row_widths))


def _header_stack(length: int, levels: Sequence[tuple[int, bytes, bool]]) -> bytes:
    """The headers of every level (outermost first) around a payload of `length` bytes."""
    headers = []
    for tag, before, omit_empty in levels:
        content = length + len(before)
        if omit_empty and content == 0:
            length = 0
            continue
        size = varint(content)
        headers.append(bytes([tag]) + size + before)
        length = content + 1 + len(size)
    return b"".join(reversed(headers))


def row_lengths(parts: Sequence[ByteColumn]) -> np.ndarray:
    """Each row's length once the parts are joined."""
    lengths = parts[0].lengths
    for part in parts[1:]:
        lengths = lengths + part.lengths
    return lengths


def _header(tag: int, content: np.ndarray, before: bytes, omit_empty: bool) -> ByteColumn:
    """Per row: tag, varint(content length), the constant bytes; empty where omitted."""
    num_rows = len(content)
    if num_rows and content.min() == content.max():
        value = int(content[0])
        if omit_empty and value == 0:
            return ByteColumn(np.zeros(0, np.uint8), np.zeros(num_rows + 1, np.int64))
        return ByteColumn.constant(bytes([tag]) + varint(value) + before, num_rows)
    header = join([ByteColumn.constant(bytes([tag]), num_rows), varints(content),
                   ByteColumn.constant(before, num_rows)])
    if omit_empty and (content == 0).any():
        keep = np.repeat(content > 0, header.lengths)
        header = ByteColumn(header.data[keep], _offsets(np.where(content > 0, header.lengths, 0)))
    return header


def _offsets(lengths: np.ndarray) -> np.ndarray:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets
