"""The plain JSONL reader: `json.loads` line by line, with exact line numbers in its messages.

It reads what the fast reader (json_blocks.py) doesn't: blank lines, other encodings, fields
other than tensor features', and any block Arrow refuses or can't read the same way. It reads a
whole file, or a run of lines cut from one (numbered from `first_line`).
"""
from __future__ import annotations

import codecs
import io
import json
from typing import Any, BinaryIO, Iterable, Iterator, Sequence

from ..errors import DataError
from .base import Batch, RowOrigins
from .csv_rows import LINE_SAFE_ENCODINGS
from .lines import BOM


def read_batches(lines: Iterable[bytes], name: str, encoding: str, needed: Sequence[str] | None,
                 key_column: str | None, batch_size: int, skip: int = 0, first_line: int = 1,
                 keep_going: bool = False, na_values: frozenset[str] = frozenset()) -> Iterator[Batch]:
    """Batches of the records of `lines` after the first `skip` (blank lines are no records).
    With `keep_going` (`on_error: skip`) a line that isn't a JSON object is listed in its batch's
    `broken`, not raised; a string value that is one of the `na_values` is missing."""
    records: list[dict[str, Any]] = []
    keys: list[Any] = []
    origins = RowOrigins(name)
    broken: list[dict[str, str]] = []
    for line_number, line in enumerate(lines, start=first_line):
        if not line.strip():
            continue
        if skip:  # read the fast way already
            skip -= 1
            continue
        try:
            record, key = _record(line, line_number, name, encoding, key_column)
        except DataError as error:
            if not keep_going:
                raise
            broken.append({"record": f"{name}, line {line_number}", "reason": str(error)})
        else:
            keys.append(key)
            records.append(record)
            origins.lines.append(line_number)
        if len(records) + len(broken) == batch_size:
            yield _batch(keys, records, needed, origins, key_column is None, broken, na_values)
            records, keys, origins, broken = [], [], RowOrigins(name), []
    if records or broken:
        yield _batch(keys, records, needed, origins, key_column is None, broken, na_values)


def lines_of(file: io.BufferedReader, name: str, encoding: str) -> tuple[Iterable[bytes], str]:
    """The file's lines as bytes, and the encoding they are in: UTF-16 and UTF-32 text is
    re-encoded as UTF-8 first (its newline is not the byte 0x0a); a UTF-8 byte-order mark is
    dropped, as the CSV reader drops it."""
    if codecs.lookup(encoding).name not in LINE_SAFE_ENCODINGS:
        return _recoded(file, name, encoding), "utf-8"
    if codecs.lookup(encoding).name in ("utf-8", "utf-8-sig") and file.peek(len(BOM))[: len(BOM)] == BOM:
        file.read(len(BOM))
    return file, encoding


def _recoded(file: BinaryIO, name: str, encoding: str) -> Iterator[bytes]:
    try:
        for text in io.TextIOWrapper(file, encoding=encoding, newline=""):
            yield text.encode("utf-8")
    except UnicodeError as error:
        raise DataError(f"{name}: not valid {encoding} text ({error})") from None


def _record(line: bytes, line_number: int, name: str, encoding: str, key_column: str | None) -> tuple[dict, Any]:
    """A line's record and its key; raises DataError naming the line."""
    try:
        record = json.loads(line.decode(encoding).rstrip("\r\n"))  # columns count within the line
    except UnicodeDecodeError as error:
        raise DataError(f"{name}, line {line_number}: not valid {encoding} text "
                        f"(byte 0x{line[error.start]:02x})") from None
    except json.JSONDecodeError as error:
        raise DataError(f"{name}, line {line_number}: invalid JSON: {error.msg.removesuffix(' at')} "
                        f"at column {error.colno}") from None
    if not isinstance(record, dict):
        raise DataError(f"{name}, line {line_number}: expected a JSON object, "
                        f"received {type(record).__name__}")
    if key_column is None:
        return record, line.strip()
    if record.get(key_column) is None:
        raise DataError(f"{name}, line {line_number}: key `{key_column}` is missing")
    return record, str(record[key_column])


def _batch(keys: list[Any], records: list[dict[str, Any]], needed: Sequence[str] | None,
           origins: RowOrigins, content_keys: bool, broken: list[dict[str, str]],
           na_values: frozenset[str]) -> Batch:
    names = needed if needed is not None else sorted({key for record in records for key in record})
    columns = {column: [record.get(column) for record in records] for column in names
               if any(column in record for record in records)}
    if na_values:
        columns = {column: [None if type(value) is str and value in na_values else value for value in values]
                   for column, values in columns.items()}
    return Batch(keys=keys, columns=columns, origin=origins, content_keys=content_keys, source=origins.file,
                 language="json", broken=broken)
