"""Built-in table sources: `csv` and `jsonl`, one record per row.

Rows are handed over column-wise. A row's key is its raw content (or the `source.key` column),
so a row lands in the same split wherever it sits in the file, and duplicate rows share a split.
In a CSV an empty cell is a missing value; in JSONL a null or an absent key is.
"""
from __future__ import annotations

import codecs
import csv
import io
import json
import os
from typing import Any, Iterator, Sequence

from ..errors import DataError
from .base import Batch, Builder, RowOrigins
from . import csv_blocks, json_blocks
from .long_table import group_steps
from .text_cells import missing_as_none

_BLOCK_BYTES = 1 << 20
_LINE_SAFE_ENCODINGS = {"utf-8", "utf-8-sig", "ascii", "latin-1", "iso8859-1", "cp1252", "iso8859-15"}


class TableBuilder(Builder):
    """A file of rows; subclasses read one format in `read_batches`.

    Shared here: a `source.split_column` that assigns rows to the spec's splits, and image paths,
    which are relative to the table's own folder.
    """

    def check_file(self) -> str:
        if self.path is None:
            raise DataError(f"{type(self).__name__}: the source needs a `path`")
        if not os.path.exists(self.path):
            raise DataError(f"{self.path}: file not found")
        if os.path.isdir(self.path):
            raise DataError(f"{self.path}: is a folder; expected a file")
        return self.path

    def generate(self, split: str | None) -> Iterator[tuple[Any, dict[str, Any]]]:
        for batch in self.batches(split, None, 1024):
            for index, key in enumerate(batch.keys):
                yield key, {name: values[index] for name, values in batch.columns.items()}

    def batches(self, split: str | None, needed: Sequence[str] | None, batch_size: int) -> Iterator[Batch]:
        source = self.spec.source if self.spec is not None else None
        if source is not None and source.group_by is not None:
            yield from group_steps(self._rows(split, needed, batch_size, [source.group_by, source.order_by]),
                                   self.spec, batch_size)
            return
        yield from self._rows(split, needed, batch_size, [])

    def _rows(self, split: str | None, needed: Sequence[str] | None, batch_size: int,
              extra: list[str]) -> Iterator[Batch]:
        split_column = self.spec.source.split_column if self.spec is not None else None
        if needed is not None:
            needed = sorted(set(needed) | set(extra) | ({split_column} if split_column else set()))
        folder = os.path.dirname(os.path.abspath(self.path)) if self.path else None
        for batch in self.read_batches(needed, batch_size):
            if split_column is not None and split is not None:
                batch = self._only_split(batch, split, split_column)
            batch.base_dir = folder  # image paths are relative to the table
            if len(batch):
                yield batch

    def read_batches(self, needed: Sequence[str] | None, batch_size: int) -> Iterator[Batch]:
        """Batches of every row of the file (the columns in `needed`, or all)."""
        raise NotImplementedError

    def key_column(self) -> str | None:
        return self.spec.source.key if self.spec is not None else None

    def _only_split(self, batch: Batch, split: str, column: str) -> Batch:
        if column not in batch.columns:
            raise DataError(f"{batch.source}: no split column `{column}`"
                            + (f"; its columns: {', '.join(batch.available)}" if batch.available else ""))
        names = list(self.spec.splits)
        rows = []
        for row, value in enumerate(batch.columns[column]):
            if value not in self.spec.splits:
                raise DataError(f"{batch.origin(row)}: split column `{column}`: expected one of "
                                f"{', '.join(names)}, received {value!r}")
            if value == split:
                rows.append(row)
        return batch if len(rows) == len(batch) else batch.select(rows)


class CsvBuilder(TableBuilder):
    """`builder: csv`: a header row names the columns."""

    def read_batches(self, needed: Sequence[str] | None, batch_size: int) -> Iterator[Batch]:
        path = self.check_file()
        source = self.spec.source if self.spec is not None else None
        delimiter = source.delimiter if source else ","
        encoding = source.encoding if source else "utf-8"
        done = yield from csv_blocks.fast_batches(path, delimiter, encoding, needed, self.key_column(), batch_size)
        if done is not None:  # the csv module reads the rest, from the first row the fast way didn't
            yield from self._csv_module_batches(path, delimiter, encoding, needed, batch_size, done)

    def _csv_module_batches(self, path: str, delimiter: str, encoding: str, needed: Sequence[str] | None,
                            batch_size: int, skip: int) -> Iterator[Batch]:
        """Batches of the rows after the first `skip`, read with Python's csv module."""
        name = os.path.basename(path)
        key_column = self.key_column()
        with open(path, "rb") as file:
            lines = _decoded_lines(file, name, encoding)
            reader = csv.reader(lines, delimiter=delimiter, strict=True)
            try:
                header = next(reader, None)
                if header is None:
                    raise DataError(f"{name}: the file is empty; expected a header row and data rows")
                positions = self._positions(path, header, needed, key_column)
                key_position = header.index(key_column) if key_column else None
                width = len(header)
                rows: list[list[str]] = []
                origins = RowOrigins(name)
                line = reader.line_num + 1
                for row in reader:
                    if len(row) != width:
                        if not row or row == [""]:
                            line = reader.line_num + 1
                            continue  # a blank line
                        raise DataError(f"{name}, line {line}: expected {width} fields (as in the header), "
                                        f"received {len(row)}")
                    if skip:
                        skip -= 1
                        line = reader.line_num + 1
                        continue
                    rows.append(row)
                    origins.lines.append(line)
                    line = reader.line_num + 1
                    if len(rows) == batch_size:
                        yield self._batch(rows, positions, key_position, origins, header)
                        rows, origins = [], RowOrigins(name)
                if rows:
                    yield self._batch(rows, positions, key_position, origins, header)
            except csv.Error as error:
                raise DataError(f"{name}, line {reader.line_num}: malformed CSV: {error}") from None

    @staticmethod
    def _positions(path: str, header: list[str], needed: Sequence[str] | None, key: str | None) -> dict[str, int]:
        index = {column: position for position, column in enumerate(header)}
        if key is not None and key not in index:
            raise DataError(f"{os.path.basename(path)}, line 1: key column `{key}` not found; "
                            f"columns: {', '.join(header)}")
        wanted = header if needed is None else needed
        return {column: index[column] for column in wanted if column in index}

    @staticmethod
    def _batch(rows: list[list[str]], positions: dict[str, int], key_position: int | None,
               origins: RowOrigins, header: list[str]) -> Batch:
        transposed = list(zip(*rows))  # one C-level pass instead of a Python loop per column
        columns = {column: missing_as_none(transposed[position]) for column, position in positions.items()}
        if key_position is None:
            keys = [csv_blocks.KEY_SEPARATOR.join(row) for row in rows]
        else:
            keys = [row[key_position] for row in rows]
        return Batch(keys=keys, columns=columns, origin=origins, content_keys=key_position is None,
                     source=origins.file, available=header)


def _decoded_lines(file: Any, name: str, encoding: str) -> Iterator[str]:
    """The file's lines as text, so that a decoding error names its own line (a text-mode file
    decodes ahead of the CSV reader, which would blame the wrong line)."""
    if codecs.lookup(encoding).name not in _LINE_SAFE_ENCODINGS:
        # in multi-byte encodings such as UTF-16 a newline is not the byte 0x0a
        try:
            yield from io.TextIOWrapper(file, encoding=encoding, newline="")
        except UnicodeDecodeError as error:
            raise DataError(f"{name}: not valid {encoding} text ({error.reason})") from None
        return
    lines_before = 0
    first = True
    for data in csv_blocks.line_blocks(file, _BLOCK_BYTES):
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


class JsonlBuilder(TableBuilder):
    """`builder: jsonl`: one JSON object per line."""

    def read_batches(self, needed: Sequence[str] | None, batch_size: int) -> Iterator[Batch]:
        path = self.check_file()
        name = os.path.basename(path)
        encoding = self.spec.source.encoding if self.spec is not None else "utf-8"
        key_column = self.key_column()
        skip = yield from json_blocks.fast_batches(path, self.spec, encoding, needed, key_column, batch_size)
        if skip is None:
            return  # the fast way read it all
        records: list[dict[str, Any]] = []
        keys: list[Any] = []
        origins = RowOrigins(name)
        with open(path, "rb") as file:
            for line_number, line in enumerate(file, start=1):
                if not line.strip():
                    continue
                if skip:  # read the fast way already
                    skip -= 1
                    continue
                try:
                    record = json.loads(line.decode(encoding))
                except UnicodeDecodeError as error:
                    raise DataError(f"{name}, line {line_number}: not valid {encoding} text "
                                    f"(byte 0x{line[error.start]:02x})") from None
                except json.JSONDecodeError as error:
                    raise DataError(f"{name}, line {line_number}: invalid JSON: {error.msg} "
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
                    yield self._batch(keys, records, needed, origins, key_column is None)
                    records, keys, origins = [], [], RowOrigins(name)
        if records:
            yield self._batch(keys, records, needed, origins, key_column is None)
        elif not origins.lines and os.path.getsize(path) == 0:
            raise DataError(f"{path}: the file is empty; expected one JSON object per line")

    @staticmethod
    def _batch(keys: list[Any], records: list[dict[str, Any]], needed: Sequence[str] | None,
               origins: RowOrigins, content_keys: bool) -> Batch:
        names = needed if needed is not None else sorted({key for record in records for key in record})
        columns = {column: [record.get(column) for record in records] for column in names
                   if any(column in record for record in records)}
        return Batch(keys=keys, columns=columns, origin=origins, content_keys=content_keys, source=origins.file)


class ManifestBuilder(TableBuilder):
    """`builder: image_manifest`: a CSV or JSONL (by its extension) whose rows name image files,
    relative to the manifest, beside any other columns."""

    def read_batches(self, needed: Sequence[str] | None, batch_size: int) -> Iterator[Batch]:
        path = self.check_file()
        reader = JsonlBuilder if path.lower().endswith((".jsonl", ".json", ".ndjson")) else CsvBuilder
        yield from reader(self.spec, self.path, self.options).read_batches(needed, batch_size)
