"""The plain JSONL reader: `json.loads` line by line, with exact line numbers in its messages.

It reads what the fast reader (json_blocks.py) doesn't: blank lines, other encodings, fields
other than tensor features', and any block Arrow refuses or can't read the same way. It reads a
whole file, or a run of lines cut from one (numbered from `first_line`).
"""
from __future__ import annotations

import json
from typing import Any, Iterable, Iterator, Sequence

from ..errors import DataError
from .base import Batch, RowOrigins


def read_batches(lines: Iterable[bytes], name: str, encoding: str, needed: Sequence[str] | None,
                 key_column: str | None, batch_size: int, skip: int = 0, first_line: int = 1) -> Iterator[Batch]:
    """Batches of the records of `lines` after the first `skip` (blank lines are no records)."""
    records: list[dict[str, Any]] = []
    keys: list[Any] = []
    origins = RowOrigins(name)
    for line_number, line in enumerate(lines, start=first_line):
        if not line.strip():
            continue
        if skip:  # read the fast way already
            skip -= 1
            continue
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
        if key_column is not None:
            if record.get(key_column) is None:
                raise DataError(f"{name}, line {line_number}: key `{key_column}` is missing")
            keys.append(str(record[key_column]))
        else:
            keys.append(line.strip())
        records.append(record)
        origins.lines.append(line_number)
        if len(records) == batch_size:
            yield _batch(keys, records, needed, origins, key_column is None)
            records, keys, origins = [], [], RowOrigins(name)
    if records:
        yield _batch(keys, records, needed, origins, key_column is None)


def _batch(keys: list[Any], records: list[dict[str, Any]], needed: Sequence[str] | None,
           origins: RowOrigins, content_keys: bool) -> Batch:
    names = needed if needed is not None else sorted({key for record in records for key in record})
    columns = {column: [record.get(column) for record in records] for column in names
               if any(column in record for record in records)}
    return Batch(keys=keys, columns=columns, origin=origins, content_keys=content_keys, source=origins.file,
                 text_cells=False)
