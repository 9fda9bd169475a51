"""The plain CSV reader: Python's csv module, row by row, with exact line numbers in its messages.

It reads what the fast reader (csv_blocks.py) doesn't: quoted cells, blank lines, other encodings,
and any block Arrow refuses. It reads a whole file, or (`line_offset`) a run of lines cut from
one, numbering them as in the file.
"""
from __future__ import annotations

import codecs
import csv
import io
from typing import Any, BinaryIO, Iterator, Sequence

from ..errors import DataError
from .base import Batch, RowOrigins, column_list
from .lines import line_blocks
from ..features.cells import missing_as_none

KEY_SEPARATOR = "\x1f"  # joins a row's cells into its content key (both CSV readers)
LINE_SAFE_ENCODINGS = {"utf-8", "utf-8-sig", "ascii", "latin-1", "iso8859-1", "cp1252", "iso8859-15"}


def read_batches(file: BinaryIO, name: str, delimiter: str, encoding: str, needed: Sequence[str] | None,
                 key_column: str | None, batch_size: int, skip: int = 0, line_offset: int = 0,
                 keep_going: bool = False, na_values: frozenset[str] = frozenset()) -> Iterator[Batch]:
    """Batches of the rows after the first `skip` of a binary stream that starts with the header;
    its line k is line `k + line_offset` of the file `name`. With `keep_going` (`on_error: skip`)
    a row with the wrong number of fields is listed in its batch's `broken`, not raised; a cell
    that is empty or one of the `na_values` is missing."""
    lines = _decoded_lines(file, name, encoding, line_offset)
    reader = csv.reader(lines, delimiter=delimiter, strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise DataError(f"{name}: the file is empty; expected a header row and data rows")
        positions = _positions(name, header, needed, key_column)
        key_position = header.index(key_column) if key_column else None
        width = len(header)
        rows: list[list[str]] = []
        origins = RowOrigins(name)
        broken: list[dict[str, str]] = []
        line = reader.line_num + 1
        for row in reader:
            if len(row) != width and (not row or row == [""]):
                line = reader.line_num + 1
                continue  # a blank line
            if skip:  # read already (the fast way)
                skip -= 1
                line = reader.line_num + 1
                continue
            if len(row) != width:
                where = f"{name}, line {line + line_offset}"
                reason = f"{where}: expected {width} fields (as in the header), received {len(row)}"
                if not keep_going:
                    raise DataError(reason)
                broken.append({"record": where, "reason": reason})
            else:
                rows.append(row)
                origins.lines.append(line + line_offset)
            line = reader.line_num + 1
            if len(rows) + len(broken) == batch_size:
                yield _batch(rows, positions, key_position, origins, header, broken, na_values)
                rows, origins, broken = [], RowOrigins(name), []
        if rows or broken:
            yield _batch(rows, positions, key_position, origins, header, broken, na_values)
    except csv.Error as error:
        raise DataError(f"{name}, line {reader.line_num + line_offset}: malformed CSV: {error}") from None


def _positions(name: str, header: list[str], needed: Sequence[str] | None, key: str | None) -> dict[str, int]:
    index = {column: position for position, column in enumerate(header)}
    for column in ([] if needed is None else list(needed)) + ([key] if key else []):
        if header.count(column) > 1:  # which of them a feature reads would be a guess
            raise DataError(f"{name}, line 1: column `{column}` appears {header.count(column)} times in the header; "
                            "expected unique column names")
    if key is not None and key not in index:
        raise DataError(f"{name}, line 1: key column `{key}` not found; columns: {column_list(header)}")
    wanted = header if needed is None else needed
    return {column: index[column] for column in wanted if column in index}


def _batch(rows: list[list[str]], positions: dict[str, int], key_position: int | None,
           origins: RowOrigins, header: list[str], broken: list[dict[str, str]],
           na_values: frozenset[str]) -> Batch:
    transposed = list(zip(*rows)) or [()] * len(header)  # one C-level pass, not a Python loop per column
    columns = {column: missing_as_none(transposed[position], na_values) for column, position in positions.items()}
    if key_position is None:
        keys = [KEY_SEPARATOR.join(row) for row in rows]
    else:
        keys = [row[key_position] for row in rows]
    return Batch(keys=keys, columns=columns, origin=origins, content_keys=key_position is None,
                 source=origins.file, available=header, broken=broken, language="text")


def _decoded_lines(file: Any, name: str, encoding: str, line_offset: int) -> Iterator[str]:
    """The file's lines as text, so that a decoding error names its own line (a text-mode file
    decodes ahead of the CSV reader, which would blame the wrong line)."""
    if codecs.lookup(encoding).name not in LINE_SAFE_ENCODINGS:
        # in multi-byte encodings such as UTF-16 a newline is not the byte 0x0a
        try:
            yield from io.TextIOWrapper(file, encoding=encoding, newline="")
        except UnicodeDecodeError as error:
            raise DataError(f"{name}: not valid {encoding} text ({error.reason})") from None
        return
    lines_before = line_offset
    first = True
    for data in line_blocks(file):
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError as error:
            line_start = data.rfind(b"\n", 0, error.start) + 1
            number = lines_before + data.count(b"\n", 0, error.start) + 1
            raise DataError(f"{name}, line {number}: not valid {encoding} text "
                            f"(byte 0x{data[error.start]:02x} at column {error.start - line_start + 1})") from None
        if first and text.startswith("\ufeff"):
            text = text[1:]  # a byte-order mark
        first = False
        lines_before += data.count(b"\n")
        # StringIO with newline="" splits lines as open(newline="") does, as the csv module expects
        yield from io.StringIO(text, newline="")
