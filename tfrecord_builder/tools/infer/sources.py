"""Reading a sample of each kind of source: a table's rows as columns, a folder's images.

Tables are read with the builders' own readers where they fit (the CSV reader, the opened and
decompressed file), so a file infer reads is read the way the build will read it, with the same
messages for broken lines. A file is read whole up to `ROW_LIMIT` rows or about `BYTE_LIMIT`
bytes of text; past that, what was read is a sample, and the spec says so.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from ...builders import csv_rows, json_rows
from ...builders.arrow_rows import categories, python_values, unreadable
from ...builders.base import RowOrigins
from ...builders.frame_kinds import FrameRows, frame_rows
from ...builders.image_folder import EXTENSIONS, ImageFolderBuilder
from ...builders.opened import open_source, plain_name
from ...errors import DataError, UsageError
from ...features.shown import Language

ROW_LIMIT = 100_000
BYTE_LIMIT = 32 * 1024**2
_BATCH = 4096
TABLE_KINDS = {".csv": "csv", ".tsv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl",
               ".parquet": "parquet", ".pq": "parquet"}
_DELIMITERS = (",", "\t", ";", "|")


@dataclass
class Table:
    """The rows read of a table file, column by column (None where a value is missing)."""

    path: str
    kind: str  # csv, jsonl, parquet, dataframe (a frame given from Python), or sql, delta, iceberg (stored.py)
    columns: list[str]
    values: dict[str, list[Any]]
    lines: list[int]  # each row's line (CSV, JSONL) or row number (Parquet)
    language: Language  # "text" (CSV cells) or "json"
    complete: bool  # every row of the file was read
    delimiter: str = ","
    types: dict[str, Any] = field(default_factory=dict)  # Parquet: each column's Arrow type
    unreadable: dict[str, str] = field(default_factory=dict)  # Parquet columns no feature reads, and why
    categories: dict[str, list[str]] = field(default_factory=dict)  # Parquet: categorical columns' categories, in order
    class_names: dict[str, list[str]] = field(default_factory=dict)  # the classes a column's indices name (ClassLabel)
    label: str | None = None  # a frame's name in messages (`the pandas DataFrame`), which has no path

    @property
    def name(self) -> str:
        return self.label or os.path.basename(self.path)

    @property
    def rows(self) -> int:
        return len(self.lines)

    def where(self, row: int) -> str:
        """Row `row` in messages: `rows.csv, line 4` (`rows.parquet, row 3`)."""
        return RowOrigins(self.name, self.lines, "line" if self.kind in ("csv", "jsonl") else "row")(row)


@dataclass
class Folder:
    """The images below a folder: their paths (relative, `/`), each one's class sub-folder."""

    path: str
    files: list[str]
    labels: list[str | None]
    classes: list[str]


def table_kind(path: str) -> str:
    """csv, jsonl or parquet, by the file's name (a compression suffix aside)."""
    extension = os.path.splitext(plain_name(path))[1].lower()
    if extension not in TABLE_KINDS:
        raise UsageError(f"{path}: can't tell the kind of file from its name; expected .csv, .tsv, .jsonl, "
                         ".ndjson, .json or .parquet (maybe compressed: .gz, .bz2, .xz, .zst), or a folder of images")
    return TABLE_KINDS[extension]


def read_table(path: str) -> Table:
    """The first rows of a CSV, JSONL or Parquet file (all of them, when the file is small)."""
    kind = table_kind(path)
    table = {"csv": _csv, "jsonl": _jsonl, "parquet": _parquet}[kind](path)
    if not table.rows:
        raise DataError(f"{table.name}: no rows{' after the header' if kind == 'csv' else ''}; "
                        "expected at least one row to infer the features from")
    return table


def read_folder(path: str) -> Folder:
    """Every image below the folder (the build's own listing), with its class sub-folder."""
    builder = ImageFolderBuilder(None, path, {})
    files: list[str] = []
    labels: list[str | None] = []
    for relative, record in builder.generate(None):
        files.append(relative)
        labels.append(record["label"])
    return Folder(path, files, labels, builder.class_names("label") or [])


def is_image_name(value: str) -> bool:
    """Whether a text ends like an image file's name (the extensions image folders read)."""
    return os.path.splitext(value.strip())[1].lower() in EXTENSIONS


def _csv(path: str) -> Table:
    name = os.path.basename(path)
    delimiter = _delimiter(path)
    columns: list[str] | None = None
    values: dict[str, list[Any]] = {}
    lines: list[int] = []
    size = 0
    complete = True
    with open_source(path) as file:
        batches = csv_rows.read_batches(file, name, delimiter, "utf-8", None, None, _BATCH)
        for batch in batches:
            if columns is None:
                columns = _unique(name, list(batch.available or []), ", line 1")
                values = {column: [] for column in columns}
            for column in columns:
                values[column].extend(batch.columns[column])
            lines.extend(batch.origin.lines)
            size += sum(map(len, batch.keys))
            if len(lines) >= ROW_LIMIT or size >= BYTE_LIMIT:
                complete = next(batches, None) is None
                break
    if len(lines) > ROW_LIMIT:  # (read in whole batches)
        values = {column: cells[:ROW_LIMIT] for column, cells in values.items()}
        lines, complete = lines[:ROW_LIMIT], False
    return Table(path, "csv", columns or [], values, lines, "text", complete, delimiter)


def _delimiter(path: str) -> str:
    """`\\t` for a .tsv, else whichever of , tab ; | the header line holds most of (ties: a comma)."""
    if os.path.splitext(plain_name(path))[1].lower() == ".tsv":
        return "\t"
    try:
        with open_source(path) as file:
            first = file.readline(1 << 20).decode("utf-8", "replace")
    except OSError:
        return ","
    return max(_DELIMITERS, key=lambda character: (first.count(character), character == ","))


def _jsonl(path: str) -> Table:
    name = os.path.basename(path)
    records: list[dict[str, Any]] = []
    lines: list[int] = []
    seen: dict[str, None] = {}  # columns in the order they first appear
    size = 0
    complete = True
    with open_source(path) as file:
        if not file.peek(1):
            raise DataError(f"{name}: the file is empty; expected one JSON object per line")
        numbered, encoding = json_rows.lines_of(file, name, "utf-8")
        for number, line in enumerate(numbered, start=1):
            if not line.strip():
                continue
            if len(records) >= ROW_LIMIT or size >= BYTE_LIMIT:
                complete = False
                break
            record = _record(line, number, name, encoding)
            records.append(record)
            lines.append(number)
            size += len(line)
            seen.update(dict.fromkeys(record))
    columns = list(seen)
    values = {column: [record.get(column) for record in records] for column in columns}
    return Table(path, "jsonl", columns, values, lines, "json", complete)


def _record(line: bytes, number: int, name: str, encoding: str) -> dict[str, Any]:
    """A line's JSON object, or a DataError naming the line (the words of the JSONL reader)."""
    try:
        record = json.loads(line.decode(encoding).rstrip("\r\n"))
    except UnicodeDecodeError as error:
        raise DataError(f"{name}, line {number}: not valid {encoding} text (byte 0x{line[error.start]:02x})") from None
    except json.JSONDecodeError as error:
        raise DataError(f"{name}, line {number}: invalid JSON: {error.msg} at column {error.colno}") from None
    if not isinstance(record, dict):
        raise DataError(f"{name}, line {number}: expected a JSON object, received {type(record).__name__}")
    return record


def _parquet(path: str) -> Table:
    name = os.path.basename(path)
    try:
        import pyarrow.parquet as parquet
    except ImportError:
        raise UsageError("reading Parquet files needs pyarrow: pip install pyarrow") from None
    try:
        opened = parquet.ParquetFile(path)
    except Exception as error:  # pyarrow raises its own ArrowInvalid and OSError kinds
        raise DataError(f"{name}: not a readable Parquet file: {str(error).splitlines()[0]}") from None
    columns = _unique(name, list(opened.schema_arrow.names))
    try:
        return _arrow_table(path, "parquet", opened.schema_arrow, columns,
                            lambda wanted: opened.iter_batches(batch_size=_BATCH, columns=wanted),
                            opened.metadata.num_rows)
    except _Damaged as damaged:  # a damaged page
        raise DataError(f"{name}: a damaged part of the Parquet file, after row {damaged.count}: "
                        f"{damaged.message}") from None


def read_frame(frame: Any) -> Table:
    """The first rows of a DataFrame given from Python (builders/frame_kinds.py), read as a Parquet
    file's with the same rows would be."""
    return read_rows(frame_rows(frame), "dataframe", "frame")


def read_rows(rows: FrameRows, kind: str, path: str, problem: Callable[[Any], str | None] | None = None) -> Table:
    """The first rows of Arrow record batches (a frame's, a database's or a lakehouse table's),
    read as a Parquet file's with the same rows would be; `problem`: why a column of an Arrow type
    the source can't give as it is is left out (a decimal's), None when it can."""
    columns = _unique(rows.label, list(rows.schema.names))

    def batches(wanted: list[str]) -> Iterator[Any]:
        for batch in rows.batches():
            yield batch.select(wanted)
    try:
        table = _arrow_table(path, kind, rows.schema, columns, batches, rows.num_rows, rows.label, problem)
    except _Damaged as damaged:
        raise DataError(f"{rows.label}: can't be read after row {damaged.count}: {damaged.message}") from None
    if not table.rows:
        raise DataError(f"{rows.label}: no rows; expected at least one row to infer the features from")
    table.class_names = {column: names for column, names in rows.class_names.items() if column in table.columns}
    return table


class _Damaged(Exception):
    """Arrow failed to give the rows after the `count`-th."""

    def __init__(self, count: int, message: str):
        super().__init__(message)
        self.count, self.message = count, message


def _arrow_table(path: str, kind: str, schema: Any, columns: list[str], batches: Callable[[list[str]], Any],
                 num_rows: int | None, label: str | None = None,
                 problem: Callable[[Any], str | None] | None = None) -> Table:
    """Up to ROW_LIMIT rows of Arrow record batches (`batches(columns)`) as a Table of the
    columns a feature can read (the others listed with why not)."""
    types = {column: schema.field(column).type for column in columns}
    problems = {column: why for column in columns
                if (why := unreadable(types[column]) or _nested(types[column])
                    or (problem(types[column]) if problem is not None else None))}
    wanted = [column for column in columns if column not in problems]
    values: dict[str, list[Any]] = {column: [] for column in wanted}
    found: dict[str, list[str]] = {}
    count = 0
    read = batches(wanted)
    while count < ROW_LIMIT:
        try:
            batch = next(read, None)
        except Exception as error:  # pyarrow's own kinds
            raise _Damaged(count, str(error).splitlines()[0] if str(error) else type(error).__name__) from None
        if batch is None:
            break
        for column in wanted:
            if not count and (names := categories(batch.column(column))) is not None:
                found[column] = names
            values[column].extend(python_values(batch.column(column)))
        count += batch.num_rows
    if count > ROW_LIMIT:  # (read in whole batches)
        values = {column: cells[:ROW_LIMIT] for column, cells in values.items()}
        count = ROW_LIMIT
    complete = num_rows is not None and count >= num_rows or num_rows is None and next(read, None) is None
    return Table(path, kind, wanted, values, list(range(1, count + 1)), "json", complete,
                 types=types, unreadable=problems, categories=found, label=label)


def _nested(kind: Any) -> str | None:
    """Why a Parquet column of structs or maps (also in lists) reaches no feature, or None."""
    import pyarrow as pa

    while pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        kind = kind.value_type
    if pa.types.is_struct(kind) or pa.types.is_map(kind):
        return f"a {kind} column: no dtype reads one; write its fields as columns of their own"
    return None


def _unique(name: str, columns: list[str], at: str = "") -> list[str]:
    """The columns, or a DataError for one named twice (which a feature would read is a guess)."""
    for column in columns:
        if columns.count(column) > 1:
            shown = column if column else '""'
            raise DataError(f"{name}{at}: column `{shown}` appears {columns.count(column)} times; "
                            "expected unique column names")
    return columns
