"""Columns of variable-length byte strings, assembled with NumPy instead of per-row Python.

A `ByteColumn` holds one byte string per row as a flat uint8 buffer plus row offsets. Building
records column-wise (one NumPy pass per column, not one Python object per value) is what makes
the writer fast: protobuf fields are "tag, varint length, payload", and every step of that is a
vectorised operation here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

_SEVEN_BIT_SHIFTS = np.arange(10, dtype=np.uint64) * np.uint64(7)
_THRESHOLDS = np.array([1 << (7 * k) for k in range(1, 10)], dtype=np.uint64)


@dataclass
class ByteColumn:
    """`num_rows` byte strings: row i is `data[offsets[i]:offsets[i + 1]]`."""

    data: np.ndarray  # uint8
    offsets: np.ndarray  # int64, num_rows + 1

    @property
    def num_rows(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def row(self, index: int) -> bytes:
        return self.data[self.offsets[index] : self.offsets[index + 1]].tobytes()

    def rows(self) -> list[bytes]:
        """Every row as a bytes object (one Python object per row: use only at the edges)."""
        buffer = self.data.tobytes()
        offsets = self.offsets.tolist()
        return [buffer[start:end] for start, end in zip(offsets[:-1], offsets[1:])]

    @classmethod
    def from_rows(cls, rows: Sequence[bytes]) -> "ByteColumn":
        lengths = np.fromiter((len(row) for row in rows), dtype=np.int64, count=len(rows))
        data = np.frombuffer(b"".join(rows), dtype=np.uint8)
        return cls(data, _offsets(lengths))

    @classmethod
    def constant(cls, value: bytes, num_rows: int) -> "ByteColumn":
        """The same bytes in every row."""
        data = np.tile(np.frombuffer(value, dtype=np.uint8), num_rows)
        return cls(data, np.arange(num_rows + 1, dtype=np.int64) * len(value))

    @classmethod
    def fixed(cls, data: np.ndarray, num_rows: int) -> "ByteColumn":
        """Rows of equal length taken from a contiguous buffer (e.g. `array.view(np.uint8)`)."""
        data = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        width = len(data) // num_rows if num_rows else 0
        return cls(data, np.arange(num_rows + 1, dtype=np.int64) * width)

    def take(self, order: np.ndarray) -> "ByteColumn":
        """The rows in `order` (a permutation or selection of row indices)."""
        starts = self.offsets[:-1][order]
        lengths = self.lengths[order]
        offsets = _offsets(lengths)
        index = np.arange(offsets[-1], dtype=np.int64) + np.repeat(starts - offsets[:-1], lengths)
        return ByteColumn(self.data[index], offsets)


def concat(columns: Sequence[ByteColumn]) -> ByteColumn:
    """Stacks columns vertically: the rows of the first, then of the second, ..."""
    if len(columns) == 1:
        return columns[0]
    data = np.concatenate([column.data for column in columns])
    lengths = np.concatenate([column.lengths for column in columns])
    return ByteColumn(data, _offsets(lengths))


def join(columns: Sequence[ByteColumn]) -> ByteColumn:
    """Row-wise concatenation: row i is `columns[0].row(i) + columns[1].row(i) + ...`."""
    if len(columns) == 1:
        return columns[0]
    lengths = [column.lengths for column in columns]
    total = np.sum(lengths, axis=0) if lengths else np.zeros(0, np.int64)
    offsets = _offsets(total)
    out = np.empty(int(offsets[-1]), dtype=np.uint8)
    position = offsets[:-1].copy()
    for column, length in zip(columns, lengths):
        if len(column.data):
            shift = np.repeat(position - column.offsets[:-1], length)
            shift += np.arange(len(column.data), dtype=np.int64)
            out[shift] = column.data
        position += length
    return ByteColumn(out, offsets)


def varints(values: np.ndarray) -> ByteColumn:
    """Protobuf base-128 varints of `values`, one row each (negatives as 10-byte two's complement)."""
    unsigned = np.asarray(values).astype(np.int64, copy=False).view(np.uint64)
    sizes = 1 + np.searchsorted(_THRESHOLDS, unsigned, side="right").astype(np.int64)
    groups = (unsigned[:, None] >> _SEVEN_BIT_SHIFTS[None, :]) & np.uint64(0x7F)
    steps = np.arange(10, dtype=np.int64)[None, :]
    groups |= np.where(steps < (sizes[:, None] - 1), np.uint64(0x80), np.uint64(0))
    data = groups[steps < sizes[:, None]].astype(np.uint8)
    return ByteColumn(data, _offsets(sizes))


def varint(value: int) -> bytes:
    """One varint, for constant headers."""
    value &= (1 << 64) - 1
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def field(tag: int, payload: ByteColumn, *, omit_empty: bool = False) -> ByteColumn:
    """A length-delimited protobuf field per row: tag byte, varint length, payload.

    With `omit_empty`, rows whose payload is empty become empty (as protobuf writes an empty
    packed list: not at all).
    """
    lengths = payload.lengths
    if len(lengths) and lengths.min() == lengths.max():
        header = ByteColumn.constant(bytes([tag]) + varint(int(lengths[0])), payload.num_rows)
        if omit_empty and lengths[0] == 0:
            return payload
        return join([header, payload])
    tags = ByteColumn.constant(bytes([tag]), payload.num_rows)
    column = join([tags, varints(lengths), payload])
    if omit_empty and (lengths == 0).any():
        keep = np.repeat(lengths > 0, column.lengths)
        column = ByteColumn(column.data[keep], _offsets(np.where(lengths > 0, column.lengths, 0)))
    return column


def _offsets(lengths: np.ndarray) -> np.ndarray:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets
