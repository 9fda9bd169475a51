"""Protobuf's wire format, as columns: varints and length-delimited fields, for a batch of rows
at once (what `example.py` and `sequence_example.py` build records from).

A length-delimited field is a tag byte, the varint of the content's length, the content.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..features.values import offsets_of
from .bytecolumn import ByteColumn, join, looked_up, row_lengths

# tf.train.Feature's lists: bytes_list = 1, float_list = 2, int64_list = 3, each length-delimited
LIST_TAG = {"bytes": 0x0A, "float": 0x12, "int64": 0x1A}

_SEVEN_BIT_SHIFTS = np.arange(10, dtype=np.uint64) * np.uint64(7)
_THRESHOLDS = np.array([1 << (7 * k) for k in range(1, 10)], dtype=np.uint64)


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
    return ByteColumn(groups[steps < sizes[:, None]], offsets_of(sizes))


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
# ... if they have at most this many distinct lengths: a length's headers cost ~2 us in Python,
# NumPy's columns ~200 us a batch whatever its size (photos, each its own length: 256 rows 0.56 us
# a row that way, 2.0 us from a table)
_TABLE_ROWS = 64


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
        header = ByteColumn(header.data[keep], offsets_of(np.where(content > 0, header.lengths, 0)))
    return header
