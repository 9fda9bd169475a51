"""Cutting a file into whole lines: blocks read from disk, and runs of lines for batches.

The fast readers (csv_blocks.py, json_blocks.py) cut files this way in the build's process and
leave the parsing to the workers; the plain CSV reader (csv_rows.py) reads its blocks the same way.
"""
from __future__ import annotations

from typing import Any, Callable, Generator, Iterator

import numpy as np

from .base import PendingBatch

BLOCK_BYTES = 1 << 20
BOM = b"\xef\xbb\xbf"  # UTF-8's byte-order mark, which a file may start with


def line_blocks(file: Any, size: int = BLOCK_BYTES) -> Iterator[bytes]:
    """The rest of a binary file in blocks of about `size` bytes, each cut after a newline (the
    last may end without one)."""
    rest = b""
    while True:
        block = file.read(size)
        data = rest + block
        cut = data.rfind(b"\n") + 1 if block else len(data)
        data, rest = data[:cut], data[cut:]
        if data:
            yield data
        elif not block:
            return  # (a block without a newline is part of a long line: read on)


def line_batches(blocks: Iterator[bytes], batch_size: int, plain: Callable[[bytes, np.ndarray], bool],
                 pending: Callable[[bytes, int, int], PendingBatch]) -> Generator[Any, None, int | None]:
    """The blocks' lines `batch_size` at a time (the last batch may hold fewer), each as
    `pending(lines' bytes, number of lines, lines before them)`.

    Stops at the first block `plain(block, its line ends)` refuses and returns how many lines it
    handed on (the lines before that block that don't fill a batch are left out); returns None
    when it read them all.
    """
    held: list[bytes] = []  # lines read, not yet a whole batch
    held_lines = done = 0
    for data in blocks:
        ends = np.flatnonzero(np.frombuffer(data, np.uint8) == 10) + 1
        if not data.endswith(b"\n"):
            ends = np.append(ends, len(data))  # the file's last line, without a newline
        if not plain(data, ends):
            return done
        start = 0
        for cut in ends[batch_size - held_lines - 1 :: batch_size].tolist():
            yield pending(b"".join(held + [data[start:cut]]), batch_size, done)
            held, held_lines, start = [], 0, cut
            done += batch_size
        if start < len(data):
            held.append(data[start:])
            held_lines += len(ends) - int(np.searchsorted(ends, start, side="right"))
    if held_lines:
        yield pending(b"".join(held), held_lines, done)
    return None


def lone_carriage_return(data: bytes) -> bool:
    """Whether a carriage return in `data` isn't followed by a newline (the csv module ends a
    row there, and a line-by-line count of records would be off): at NumPy speed, with a fast scan
    for the many files that have none (two `bytes.count`s took 10x as long on CRLF lines)."""
    if b"\r" not in data:
        return False
    codes = np.frombuffer(data, np.uint8)
    returns = np.flatnonzero(codes == 13)
    return bool(returns[-1] == len(codes) - 1 or (codes[returns + 1] != 10).any())


def blank_lines(data: bytes, ends: np.ndarray, blank: bytes) -> bool:
    """Whether any line (ending at `ends`) holds only the bytes in `blank`: at NumPy speed, a
    line at a time only for the few that start with one."""
    starts = np.concatenate(([0], ends[:-1]))
    first = np.frombuffer(data, np.uint8)[starts[starts < len(data)]]
    suspects = np.flatnonzero(np.isin(first, np.frombuffer(blank, np.uint8)))
    return any(not data[starts[line] : ends[line]].strip(blank) for line in suspects.tolist())
