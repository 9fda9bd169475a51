"""The fast way through a CSV: blocks of plain lines parsed by Arrow into columns of text cells.

Python's csv module makes a list of strings per row and the encoder then converts each value
(together, about 10 µs a row of 16 columns). Arrow's parser splits a block of lines into string
columns in C++, and the tensor features convert those columns at once (text_cells.py).

It takes only what it reads exactly as the csv module would: UTF-8 blocks with no quote
character, no blank line, no lone carriage return and no NUL, where row k of a block is line k.
At the first block that isn't (or that Arrow refuses, e.g. a row with the wrong number of
fields), it stops and says how many rows it yielded; the csv module's reader carries on from
there, with its exact messages and line numbers.
"""
from __future__ import annotations

import codecs
import csv
import os
from typing import Any, Generator, Iterator, Sequence

from .base import Batch, RowOrigins
from .text_cells import TextCells

BLOCK_BYTES = 4 * 1024**2
KEY_SEPARATOR = "\x1f"  # joins a row's cells into its content key (both CSV readers)
_UTF8 = {"utf-8", "utf-8-sig"}
_BOM = b"\xef\xbb\xbf"

try:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv
except ImportError:  # optional: without it every CSV takes the csv module's reader
    pa = None


def fast_batches(path: str, delimiter: str, encoding: str, needed: Sequence[str] | None, key: str | None,
                 batch_size: int) -> Generator[Batch, None, int | None]:
    """Batches of the file's rows for as long as the fast way reads it exactly; returns None when
    it read the whole file, else the number of data rows it yielded (a multiple of `batch_size`)."""
    if pa is None or codecs.lookup(encoding).name not in _UTF8 or len(delimiter) != 1 or delimiter in '"\r\n':
        return 0
    name = os.path.basename(path)
    with open(path, "rb") as file:
        first = file.readline()
        header = _header(first, delimiter)
        if header is None or (key is not None and key not in header):
            return 0  # the csv module's reader says what is wrong
        wanted = [column for column in (header if needed is None else needed) if column in header]
        options = (
            pacsv.ReadOptions(column_names=header, use_threads=True, block_size=BLOCK_BYTES + 1024),
            pacsv.ParseOptions(delimiter=delimiter, quote_char=False, newlines_in_values=False,
                               ignore_empty_lines=False),
            pacsv.ConvertOptions(column_types={column: pa.string() for column in header},
                                 strings_can_be_null=False, quoted_strings_can_be_null=False),
        )
        done = 0  # data rows yielded
        line = 2  # the line of the first row not yet yielded
        pending: Any = None  # rows read but not yet yielded (less than a batch)
        for data in line_blocks(file):
            if not _plain(data):
                return done
            try:
                table = pacsv.read_csv(pa.py_buffer(data), *options)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                return done
            pending = table if pending is None else pa.concat_tables([pending, table])
            while pending.num_rows >= batch_size:
                yield _batch(pending.slice(0, batch_size), name, line, header, wanted, key)
                pending = pending.slice(batch_size)
                done += batch_size
                line += batch_size
        if pending is not None and pending.num_rows:
            yield _batch(pending, name, line, header, wanted, key)
    return None


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


def _header(first: bytes, delimiter: str) -> list[str] | None:
    if first.startswith(_BOM):
        first = first[len(_BOM):]
    if not first.endswith(b"\n") or b'"' in first or b"\r" in first[:-2]:
        return None
    try:
        text = first.decode("utf-8")
    except UnicodeDecodeError:
        return None
    header = next(csv.reader([text.rstrip("\r\n")], delimiter=delimiter), None)
    if not header or len(set(header)) != len(header):
        return None  # an empty first line, or repeated column names
    return header


def _plain(data: bytes) -> bool:
    """A block where each line is one row, as the csv module reads it."""
    if b'"' in data or b"\x00" in data or data.startswith((b"\n", b"\r\n")):
        return False
    if b"\n\n" in data or b"\n\r\n" in data:
        return False  # a blank line: the csv module skips it, so rows and lines part ways
    return b"\r" not in data or data.count(b"\r") == data.count(b"\r\n")


def _batch(table: Any, name: str, line: int, header: list[str], wanted: list[str], key: str | None) -> Batch:
    columns = {column: table.column(column).combine_chunks() for column in header}
    if key is None:
        keys = pc.binary_join_element_wise(*[columns[column] for column in header], KEY_SEPARATOR).to_pylist()
    else:
        keys = columns[key].to_pylist()
    origins = RowOrigins(name, list(range(line, line + table.num_rows)))
    return Batch(keys=keys, columns={column: TextCells(columns[column]) for column in wanted}, origin=origins,
                 content_keys=key is None, source=name, available=header)
