"""`builder: parquet`: one record per row of a Parquet file (needs pyarrow)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from .. import fs
from ..errors import DataError
from .arrow_batch import arrow_batch, check_columns
from .arrow_rows import categories
from .base import Batch
from .opened import task_bytes
from .tabular import TableBuilder

try:
    import pyarrow.parquet as parquet
except ImportError:  # an optional dependency: only Parquet sources need it
    parquet = None


class ParquetBuilder(TableBuilder):
    """Reads row groups in batches; list columns give list values, nulls missing values."""

    OPTIONS: dict[str, str] = {}
    DEFINES_CLASSES = True  # a categorical column's categories

    def header(self) -> list[str] | None:
        if parquet is None:
            return None
        return list(_opened(self.check_file()).schema_arrow.names)

    def class_names(self, field: str) -> list[str] | None:
        """A dictionary-encoded (categorical) column's categories, in the file's order: the first
        row group's dictionary, which pyarrow writes whole, unused categories included."""
        if parquet is None:
            return None
        opened = _opened(self.check_file())
        if field not in opened.schema_arrow.names or opened.metadata.num_row_groups == 0:
            return None
        first = next(_batches(opened, os.path.basename(self.check_file()), 1, [field], range(1), 0), None)
        return None if first is None else categories(first.column(field))

    def parts(self) -> list[RowGroups] | None:
        """Runs of row groups of about `task_bytes()` (uncompressed) each."""
        if parquet is None:
            return None
        metadata = _opened(self.check_file()).metadata
        parts: list[RowGroups] = []
        first = rows_before = size = rows = 0
        task = task_bytes()
        for index in range(metadata.num_row_groups):
            group = metadata.row_group(index)
            size += group.total_byte_size
            rows += group.num_rows
            if size >= task or index == metadata.num_row_groups - 1:
                parts.append(RowGroups(first, index + 1, rows_before))
                first, rows_before, size, rows = index + 1, rows_before + rows, 0, 0
        return parts if len(parts) > 1 else None

    def read_batches(self, needed: Sequence[str] | None, batch_size: int, task: Any = None) -> Iterator[Batch]:
        if parquet is None:
            raise DataError("parquet sources need pyarrow: pip install pyarrow")
        path = self.check_file()
        name = os.path.basename(path)
        table = _opened(path)
        columns = table.schema_arrow.names
        key_column = self.key_column()
        wanted = [column for column in (needed if needed is not None else columns) if column in columns]
        check_columns(table.schema_arrow, name, wanted, key_column)
        # without a key column a row's key is the whole row (its values' bytes), as a CSV's is its
        # whole line: which features the spec reads must not move rows between splits
        read = sorted(set(wanted) | {key_column}) if key_column else None  # None: every column
        start = task.rows_before if task is not None else 0
        groups = range(task.first, task.stop) if task is not None else None
        for record_batch in _batches(table, name, batch_size, read, groups, start):
            yield arrow_batch(record_batch, name, wanted, key_column, start, columns)
            start += record_batch.num_rows


def _opened(path: str) -> Any:
    """The Parquet file at `path` (its footer read), or a DataError naming it."""
    try:
        return parquet.ParquetFile(fs.path_or_file(path))
    except Exception as error:  # pyarrow raises its own ArrowInvalid and OSError kinds
        raise DataError(f"{os.path.basename(path)}: not a readable Parquet file: {error}") from None


@dataclass(frozen=True)
class RowGroups:
    """Row groups `first` to `stop` (not included) of a Parquet file, after `rows_before` rows."""

    first: int
    stop: int
    rows_before: int


def _batches(table: Any, name: str, batch_size: int, columns: list[str] | None, groups: range | None,
             start: int) -> Iterator[Any]:
    """The file's record batches (of `groups`, or all); a part that can't be read (a damaged page)
    names the file. `start`: the rows before them, for the message."""
    batches = table.iter_batches(batch_size=batch_size, columns=columns,
                                 row_groups=list(groups) if groups is not None else None)
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except Exception as error:  # pyarrow's ArrowInvalid, OSError...: its own kinds
            raise DataError(f"{name}: a damaged part of the Parquet file, after row {start}: "
                            f"{str(error).splitlines()[0]}") from None
        start += batch.num_rows
        yield batch
