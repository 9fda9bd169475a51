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

_THRESHOLDS = np.array([1 << (7 * k) for k in range(1, 10)], dtype=np.uint64)


def varints(values: np.ndarray) -> ByteColumn:
    """Protobuf base-128 varints of `values`, one row each (negatives as 10-byte two's complement).

    A column of 7-bit groups per byte of the longest varint, each computed in the narrowest
    integer type that holds the values, then the rows cut to their sizes: 1.7-1.9x the speed of
    one 2-D array of 64-bit shifts; values under 2^14 (token ids of a small vocabulary, counts),
    at most two bytes each, 8x."""
    signed = np.asarray(values).astype(np.int64, copy=False)
    if not len(signed):
        return ByteColumn(np.zeros(0, np.uint8), np.zeros(1, np.int64))
    low, high = int(signed.min()), int(signed.max())
    if low >= 0 and high < 0x80:
        return ByteColumn(signed.astype(np.uint8), np.arange(len(signed) + 1, dtype=np.int64))
    if low >= 0 and high < 1 << 14:
        return _two_byte_varints(signed.astype(np.uint16))
    unsigned = signed.view(np.uint64)
    sizes = varint_sizes(unsigned)
    widest = int(sizes.max())
    narrow = unsigned.astype(np.uint32) if widest <= 4 else unsigned
    groups = np.empty((len(narrow), widest), np.uint8)
    for step in range(widest):
        group = groups[:, step]
        np.bitwise_and(narrow >> (7 * step) if step else narrow, 0x7F, out=group, casting="unsafe")
        if step < widest - 1:
            group |= (sizes > step + 1).view(np.uint8) << 7  # more groups follow
    if widest == int(sizes.min()):
        return ByteColumn(groups.reshape(-1), np.arange(len(sizes) + 1, dtype=np.int64) * widest)
    return ByteColumn(groups[np.arange(widest)[None, :] < sizes[:, None]], offsets_of(sizes))


def _two_byte_varints(small: np.ndarray) -> ByteColumn:
    """`varints` of uint16 values under 2^14, some of them 0x80 or more (two bytes)."""
    two = small >= 0x80
    groups = np.empty((len(small), 2), np.uint8)
    np.bitwise_or(small & 0x7F, two.view(np.uint8) << 7, out=groups[:, 0], casting="unsafe")
    np.right_shift(small, 7, out=groups[:, 1], casting="unsafe")
    if two.all():
        return ByteColumn(groups.reshape(-1), np.arange(len(small) + 1, dtype=np.int64) * 2)
    keep = np.ones((len(small), 2), bool)
    keep[:, 1] = two
    return ByteColumn(groups[keep], offsets_of(1 + two.view(np.uint8).astype(np.int64)))


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
