"""Cutting a file into whole lines: blocks read from disk, and runs of records for batches.

The fast readers (csv_blocks.py, json_blocks.py) cut files this way in the build's process and
leave the parsing to the workers; the plain CSV reader (csv_rows.py) reads its blocks the same way.
A batch of a plain local file is handed on as the place of its lines in the file (`FileLines`),
which the worker that parses them reads itself: the build's process only finds the line ends, and
never copies the lines or sends them through a pipe. A compressed file or an object in a store,
which can't be read again at a place cheaply, hands on the lines' bytes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Generator, Iterator

import numpy as np

from .base import PendingBatch
from ..errors import DataError

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


@dataclass(frozen=True)
class FileLines:
    """Whole lines of a plain local file, from byte `start` to byte `stop`: what a pending batch
    reads where it is parsed."""

    path: str
    start: int
    stop: int

    def read(self) -> bytes:
        """The lines' bytes; a file cut shorter since its lines were found is a DataError."""
        with open(self.path, "rb") as file:
            file.seek(self.start)
            data = file.read(self.stop - self.start)
        if len(data) != self.stop - self.start:
            raise DataError(f"{self.path}: the file changed while it was read (bytes {self.start}-{self.stop} "
                            "are no longer there)")
        return data


def lines_data(lines: bytes | FileLines) -> bytes:
    """The bytes of a pending batch's lines, read from the file if they are its place in it."""
    return lines.read() if isinstance(lines, FileLines) else lines


def line_ends(data: bytes) -> np.ndarray:
    """Where each line of a block ends: just after its newline (the last may end without one)."""
    ends = np.flatnonzero(np.frombuffer(data, np.uint8) == 10) + 1
    return ends if data.endswith(b"\n") else np.append(ends, len(data))


def line_batches(blocks: Iterator[bytes], batch_size: int, plain: Callable[[bytes, np.ndarray], bool],
                 pending: Callable[[bytes | FileLines, int, int], PendingBatch],
                 path: str | None = None, at: int = 0,
                 record_ends: Callable[[bytes], np.ndarray] = line_ends) -> Generator[Any, None, int | None]:
    """The blocks' records `batch_size` at a time (the last batch may hold fewer), each as
    `pending(lines, number of records, number of lines before them)`: the lines' bytes, or, given
    the `path` of the plain local file whose bytes from `at` on the blocks are, their place in it
    (`FileLines`). A record is a line unless `record_ends` says otherwise (a CSV's quoted cell may
    hold a newline); each block ends where a record does.

    Stops at the first block `plain(block, its record ends)` refuses and returns how many records
    it handed on (the records before that block that don't fill a batch are left out); returns None
    when it read them all.
    """
    held: list[bytes] = []  # records read, not yet a whole batch (their bytes, without a path)
    held_records = held_lines = done = lines_done = 0
    first = position = at  # (with a path) where the held records start, and where the block does
    for data in blocks:
        ends = record_ends(data)
        if not plain(data, ends):
            return done
        start = 0
        for cut in ends[batch_size - held_records - 1 :: batch_size].tolist():
            if path is None:
                yield pending(b"".join(held + [data[start:cut]]), batch_size, lines_done)
            else:
                yield pending(FileLines(path, first, position + cut), batch_size, lines_done)
                first = position + cut
            lines_done += held_lines + data.count(b"\n", start, cut)
            held, held_records, held_lines, start = [], 0, 0, cut
            done += batch_size
        if start < len(data):
            if path is None:
                held.append(data[start:])
            held_records += len(ends) - int(np.searchsorted(ends, start, side="right"))
            held_lines += data.count(b"\n", start)
        position += len(data)
    if held_records:
        yield pending(b"".join(held) if path is None else FileLines(path, first, position), held_records, lines_done)
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
