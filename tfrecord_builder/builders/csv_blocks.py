"""The fast way through a CSV: blocks of plain lines parsed by Arrow into columns of text cells.

Python's csv module makes a list of strings per row and the encoder then converts each value
(together, about 10 µs a row of 16 columns). Arrow's parser splits a block of lines into string
columns in C++, and the tensor features convert those columns at once (features/cells.py).

It takes only what it reads exactly as the csv module would: UTF-8 blocks with no blank line, no
lone carriage return and no NUL, whose quotes (if any) only open a cell, close it or are doubled
within it (csv_quotes.py: a quoted cell may then hold a newline, and a row ends at a newline with
an even number of quotes before it). The build's process only cuts such blocks into batches of
whole rows (`CsvLines`); Arrow parses each where it is encoded, in a worker. Should Arrow refuse
one (e.g. a row with the wrong number of fields), the csv module's reader reads that batch
instead, with its exact messages and line numbers. At the first block that isn't plain, the fast
way stops and says how many rows it yielded; the csv module's reader carries on from there.
"""
from __future__ import annotations

import codecs
import csv
import io
import os
from dataclasses import dataclass
from typing import Any, Generator, Sequence

import numpy as np

from . import csv_rows
from .base import Batch, PendingBatch, RowOrigins
from .csv_rows import KEY_SEPARATOR
from .csv_quotes import lines_within, quoting_alike, row_blocks, row_ends, separator, whole_rows_alike
from .lines import BOM, FileLines, blank_lines, line_batches, line_blocks, lines_data, lone_carriage_return
from .opened import Window, open_window, read_again
from ..features.cells import TextCells
from ..features.notices import Notices

BLOCK_BYTES = 4 * 1024**2
_UTF8 = {"utf-8", "utf-8-sig"}

try:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv
except ImportError:  # optional: without it every CSV takes the csv module's reader
    pa = None


def fast_batches(path: str, delimiter: str, encoding: str, needed: Sequence[str] | None, key: str | None,
                 batch_size: int, keep_going: bool = False, na_values: frozenset[str] = frozenset(),
                 window: Window | None = None) -> Generator["CsvLines", None, int | None]:
    """Pending batches of the file's rows (or a window's) for as long as the fast way reads them
    exactly; returns None when it read them all, else the number of data rows it yielded (a
    multiple of `batch_size`)."""
    byte = separator(delimiter)
    if pa is None or codecs.lookup(encoding).name not in _UTF8 or byte is None:
        return 0
    name = os.path.basename(path)
    before = window.lines_before if window is not None else 0
    with open_window(path, window, header=True) as file:
        first = file.readline()
        header = _header(first, delimiter)
        if header is None or (key is not None and key not in header):
            return 0  # the csv module's reader says what is wrong
        wanted = [column for column in (header if needed is None else needed) if column in header]
        return (yield from line_batches(
            row_blocks(line_blocks(file, BLOCK_BYTES)), batch_size,
            lambda data, ends: _plain(data, ends, byte),
            lambda lines, count, lines_before: CsvLines(lines, count, name, before + lines_before + 2, first, header,
                                                        wanted, key, delimiter, keep_going, na_values),
            read_again(path), window.start if window is not None else len(first), row_ends))


@dataclass
class CsvLines(PendingBatch):
    """`count` plain rows of a CSV (no blank line or lone carriage return, quoted alike), from line
    `line` on: Arrow parses them where they are encoded, into columns of text cells. `lines` are
    their bytes, or their place in the file, read there."""

    lines: bytes | FileLines
    count: int
    name: str
    line: int
    header_line: bytes  # the file's first line, as it is (for the csv module's reader)
    header: list[str]
    wanted: list[str]
    key: str | None
    delimiter: str
    keep_going: bool = False  # on_error: skip: a row the csv module can't read is listed, not raised
    na_values: frozenset[str] = frozenset()  # cells read as missing, as an empty one is
    data: bytes = b""  # the lines' bytes, once `load` has them

    def load(self, notices: Notices) -> Batch:  # (reading a table notes nothing)
        self.data = lines_data(self.lines)
        quoted = b'"' in self.data
        options = (
            pacsv.ReadOptions(column_names=self.header, use_threads=False, block_size=len(self.data) + 1),
            pacsv.ParseOptions(delimiter=self.delimiter, quote_char='"' if quoted else False, double_quote=True,
                               newlines_in_values=quoted, ignore_empty_lines=False),
            pacsv.ConvertOptions(column_types={column: pa.string() for column in self.header},
                                 strings_can_be_null=False, quoted_strings_can_be_null=False),
        )
        try:
            table = pacsv.read_csv(pa.py_buffer(self.data), *options)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return self._csv_module()
        if table.num_rows != self.count:
            return self._csv_module()
        lines = self.line + (lines_within(self.data) if quoted else np.arange(self.count))
        return _batch(table, self.name, lines.tolist(), self.header, self.wanted, self.key, self.na_values)

    def _csv_module(self) -> Batch:
        """The lines read by the csv module's reader: the same rows (the lines are plain), or its
        exact error (a row with the wrong number of fields, text that isn't UTF-8)."""
        stream = io.BytesIO(self.header_line + self.data)
        return self.only_batch(csv_rows.read_batches(stream, self.name, self.delimiter, "utf-8", self.wanted,
                                                     self.key, self.count, line_offset=self.line - 2,
                                                     keep_going=self.keep_going, na_values=self.na_values))


def _header(first: bytes, delimiter: str) -> list[str] | None:
    if first.startswith(BOM):
        first = first[len(BOM):]
    if not first.endswith(b"\n") or b"\r" in first[:-2] or not quoting_alike(first, ord(delimiter)):
        return None  # (a quoted name holding a newline: its quotes are odd in number)
    try:
        text = first.decode("utf-8")
    except UnicodeDecodeError:
        return None
    header = next(csv.reader([text.rstrip("\r\n")], delimiter=delimiter), None)
    if not header or len(set(header)) != len(header):
        return None  # an empty first line, or repeated column names
    return header


def _plain(data: bytes, ends: np.ndarray, delimiter: int) -> bool:
    """A block of whole rows that Arrow reads as the csv module does."""
    if b"\x00" in data:
        return False
    if lone_carriage_return(data):
        return False  # the csv module ends a row there
    if not whole_rows_alike(data, ends, delimiter):
        return False
    return not blank_lines(data, ends, b"\r\n")  # the csv module skips a blank line


def _batch(table: Any, name: str, lines: list[int], header: list[str], wanted: list[str], key: str | None,
           na_values: frozenset[str]) -> Batch:
    columns = {column: table.column(column).combine_chunks() for column in header}
    if key is None:
        # as UTF-8 bytes (what the str keys of the csv module's reader are hashed as)
        joined = pc.binary_join_element_wise(*[columns[column] for column in header], KEY_SEPARATOR)
        keys = joined.cast(pa.binary()).to_pylist()
    else:
        keys = columns[key].to_pylist()
    origins = RowOrigins(name, lines)
    if na_values:  # (after the keys: a row's key is its line as written)
        missing = pa.array(sorted(na_values), pa.string())
        columns = {column: pc.if_else(pc.is_in(cells, value_set=missing), "", cells) for column, cells in columns.items()}
    return Batch(keys=keys, columns={column: TextCells(columns[column]) for column in wanted}, origin=origins,
                 content_keys=key is None, source=name, available=header, language="text")
