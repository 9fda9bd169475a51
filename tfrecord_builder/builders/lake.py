"""What Delta Lake and Iceberg tables share as sources: a table read at one version, a task per
data file, each file's Arrow record batches made into batches by `arrow_batch` (as a Parquet
file's are), so the same rows give the same records from a table as from a Parquet file.

A table's version is chosen once, on the machine that plans the build (`snapshot`: the spec's
`version:`/`snapshot:`, or the latest), and every task names it (`DataFile`, `WholeTable`), so
each reads that version wherever it runs, even where the builder is made anew from the spec (a
Beam or Spark worker) after the table moved on.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Iterator, Sequence

import pyarrow as pa

from ..errors import DataError
from ..spec.fields import describe
from .arrow_batch import arrow_batch, check_columns
from .base import Batch, column_list
from .tabular import TableBuilder


@dataclass(frozen=True)
class DataFile:
    """One data file of a table at one version: a read task (`file` as the table lists it)."""

    version: int
    file: str


@dataclass(frozen=True)
class WholeTable:
    """Every data file of a table at one version, read as one task (a spec grouping rows)."""

    version: int


class LakeBuilder(TableBuilder):
    """A lakehouse table; subclasses open one format (`_versions`, `_schema`, `_files`, `_file_batches`)."""

    OPTIONS: ClassVar[dict[str, str]] = {}
    DEFINES_CLASSES = False
    _pinned: int | None = None  # the version every task reads, once chosen

    @classmethod
    def check_source(cls, source: Any, at: Any) -> None:
        """A table version (`version:`, `snapshot:`) is a whole number of 0 or more."""
        for key in ("version", "snapshot"):
            value = getattr(source, key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise (at / key).error(f"expected a whole number of 0 or more, received {describe(value)}")

    def version(self) -> int:
        """The version read: the one the spec names (checked to exist), else the latest, chosen
        once and kept (the builder is sent to workers with it)."""
        if self._pinned is None:
            self._pinned = self._chosen_version()
        return self._pinned

    def header(self) -> list[str] | None:
        return list(self._schema(self.version()).names)

    def parts(self) -> list[DataFile] | None:
        version = self.version()
        return [DataFile(version, file) for file in self._files(version)] or None

    def tasks(self, split: str | None) -> list[Any] | None:
        source = self.spec.source if self.spec is not None else None
        if source is not None and source.group_by is not None:
            return [WholeTable(self.version())]  # a group's rows are gathered from the whole table
        return self.parts()

    def read_batches(self, needed: Sequence[str] | None, batch_size: int, task: Any = None) -> Iterator[Batch]:
        # the version the build planned (its tasks name it): a Beam or Spark worker makes the
        # builder anew from the spec, and the latest version there may be a later one
        version = task.version if task is not None else self.version()
        schema = self._schema(version)
        columns = list(schema.names)
        name = self.table_name()
        key_column = self.key_column()
        if key_column is not None and key_column not in columns:
            raise DataError(f"{name}: key column `{key_column}` not found; columns: {column_list(columns)}")
        wanted = [column for column in (needed if needed is not None else columns) if column in columns]
        check_columns(schema, name, wanted, key_column)
        for column in wanted:
            problem = inexact(schema.field(column).type)
            if problem:
                raise DataError(f"{name}: column `{column}` of type {schema.field(column).type}: {problem}")
        # without a key column a row's key is every column's value (as a Parquet file's row)
        read = sorted(set(wanted) | {key_column}) if key_column else columns
        files = [task] if isinstance(task, DataFile) else [DataFile(version, file) for file in self._files(version)]
        for part in files:
            where = f"{name}, {part.file}"
            start = 0
            for record_batch in self._file_batches(part, read, batch_size):
                for offset in range(0, record_batch.num_rows, batch_size):
                    piece = record_batch.slice(offset, batch_size).select(read)
                    yield arrow_batch(piece, where, wanted, key_column, start, columns)
                    start += piece.num_rows

    def arrow_rows(self, batch_size: int) -> tuple[Any, Iterator[Any]]:
        """The table's Arrow schema at the version read, and its rows as Arrow record batches, data
        file after data file (what `infer` samples)."""
        version = self.version()
        schema = self._schema(version)

        def batches() -> Iterator[Any]:
            for file in self._files(version):
                yield from self._file_batches(DataFile(version, file), list(schema.names), batch_size)
        return schema, batches()

    def table_name(self) -> str:
        """The table as messages name it (its folder, or `db.name`)."""
        raise NotImplementedError

    def _chosen_version(self) -> int:
        raise NotImplementedError

    def _schema(self, version: int) -> Any:
        """The table's Arrow schema at `version`, columns in the table's order."""
        raise NotImplementedError

    def _files(self, version: int) -> list[str]:
        """The table's data files at `version`, in the order it lists them."""
        raise NotImplementedError

    def _file_batches(self, part: DataFile, columns: list[str], batch_size: int) -> Iterator[Any]:
        """One data file's rows as Arrow record batches of `columns`, in the table's types."""
        raise NotImplementedError


def inexact(kind: Any) -> str | None:
    """Why a column of this Arrow type has no exact feature value (a decimal's), or None."""
    if pa.types.is_decimal(kind):
        return ("no exact mapping to a feature (int64, float32 and float64 would each change some values); "
                "cast it in the table to a string, an integer of the smallest unit or a float, and read that")
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return inexact(kind.value_type)
    return None
