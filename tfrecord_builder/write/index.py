"""Index files: where each record of an uncompressed shard is, for readers that reach record i
without reading the ones before it (NVIDIA DALI, the `tfrecord` package, `Dataset.record`).

One line per record, `offset length` in decimal: the byte offset of the record's 8-byte length
header, and the length of the whole framed record (8 + 4 + data + 4).
"""
from __future__ import annotations

import numpy as np

from ..codec.bytecolumn import ByteColumn, join
from ..features.values import offsets_of

FRAME_BYTES = 16  # a record's framing: its length (8), the length's CRC (4) and the data's CRC (4)


def index_lines(offsets: np.ndarray, start: int) -> bytes:
    """The index lines of framed records that begin at `offsets` (the last entry: where the last
    one ends), the first at byte `start` of the shard."""
    positions = offsets[:-1] - offsets[0] + start
    count = len(positions)
    if not count:
        return b""
    lines = join([decimals(positions), ByteColumn.constant(b" ", count), decimals(np.diff(offsets)),
                  ByteColumn.constant(b"\n", count)])
    return lines.data[lines.offsets[0] : lines.offsets[-1]].tobytes()


_POWERS = 10 ** np.arange(19, dtype=np.int64)


def decimals(values: np.ndarray) -> ByteColumn:
    """Each non-negative integer's decimal text, as `str` writes it: a row of digits per place,
    each the remainder of a division by 10 (by a constant: NumPy's fast division, 2.7x dividing
    by a power of 10 per digit), the leading zeros masked out (not an f-string per value)."""
    values = np.asarray(values, dtype=np.int64)
    sizes = 1 + np.searchsorted(_POWERS[1:], values, side="right")
    width = int(sizes.max()) if len(values) else 1
    digits = np.empty((width, len(values)), np.uint8)
    rest = values.copy()
    for place in range(width - 1, -1, -1):
        np.remainder(rest, 10, out=digits[place], casting="unsafe")
        rest //= 10
    digits += ord("0")
    return ByteColumn(digits.T[np.arange(width)[None, :] >= (width - sizes)[:, None]], offsets_of(sizes))


def parse_index(text: bytes) -> np.ndarray:
    """An index file's lines as an int64 array of (offset, length) rows; ValueError names the first
    line that isn't two whole numbers."""
    lines = text.decode("ascii", "replace").splitlines()
    rows = np.zeros((len(lines), 2), dtype=np.int64)
    for number, line in enumerate(lines):
        parts = line.split()
        if len(parts) != 2 or not all(part.isdigit() for part in parts):
            raise ValueError(f"line {number + 1}: {line[:40]!r} is not `offset length`")
        rows[number] = int(parts[0]), int(parts[1])
    return rows


def expected_index(framed: np.ndarray) -> np.ndarray:
    """The (offset, length) rows of records with these framed lengths, from the shard's start."""
    offsets = np.concatenate([[0], np.cumsum(framed)[:-1]]) if len(framed) else np.zeros(0, np.int64)
    return np.stack([offsets, framed], axis=1).astype(np.int64) if len(framed) else np.zeros((0, 2), np.int64)


def index_problem(text: bytes, framed: np.ndarray, whole: bool) -> str | None:
    """What is wrong with an index file (None: nothing), given the framed lengths of the shard's
    records as read (`whole`: all of them; else the records before a fault)."""
    try:
        rows = parse_index(text)
    except ValueError as error:
        return str(error)
    expected = expected_index(framed)
    common = min(len(rows), len(expected))
    wrong = np.flatnonzero((rows[:common] != expected[:common]).any(axis=1))
    if len(wrong):
        line = int(wrong[0])
        return (f"line {line + 1}: `{rows[line][0]} {rows[line][1]}`, but record {line} is at offset "
                f"{expected[line][0]}, {expected[line][1]} bytes framed")
    if whole and len(rows) != len(expected):
        return f"{len(rows)} lines, the shard has {len(expected)} records"
    return None
