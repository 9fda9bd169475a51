"""`builder: spark_table`: the rows of a table of the Spark session's catalog (`source: {builder:
spark_table, table: db.events}`), or of a Spark DataFrame given from Python (`tb.build(spec,
source=frame, runner="spark")`), read by the Spark runner where the partitions are.

On the driver the builder holds the DataFrame: its columns, the types it maps (checked before
the job, `check_types`), one read task per partition (and split), and its snapshot, computed by
Spark (`snapshot`). On an executor the builder is made from the spec alone, never touching
Spark: the runner hands it a partition's Arrow record batches (`PartitionRows`, from Spark's
`mapInArrow`), which become batches exactly as a Parquet file's (arrow_batch.py), so the same
rows give the same shards, byte for byte, however Spark partitions them.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Sequence

from ..errors import DataError, UsageError
from .arrow_batch import arrow_batch, check_columns
from .arrow_rows import unreadable
from ..spec.model import Spec
from .base import Batch, Builder, column_list
from .decimals import PROBLEM as DECIMAL_PROBLEM, as_ruled, holds, is_decimal
from .tabular import TableBuilder

NEEDS_RUNNER = ("a Spark table is read by the Spark runner, where its partitions are: --runner spark "
                "(runner=\"spark\" in Python)")


@dataclass(frozen=True)
class SparkPartition:
    """Partition `index` of the DataFrame's `count`: a read task, as the driver lists it."""

    index: int
    count: int


@dataclass
class PartitionRows:
    """A partition's Arrow record batches, on the executor reading it: the task the runner gives
    the builder there in place of a `SparkPartition`."""

    index: int
    batches: Iterable[Any]


class SparkTableBuilder(TableBuilder):
    """A Spark table's (or DataFrame's) rows, one record per row, read as a Parquet file's are."""

    SOURCE_KEYS = frozenset({"table", "decimals"})
    READS_PATH = False
    DEFINES_CLASSES = False
    OPTIONS = {}
    READ_BY = "spark"

    def __init__(self, spec: Any, path: str | None = None, options: dict[str, Any] | None = None,
                 frame: Any = None):
        super().__init__(spec, path, options)
        source = spec.source
        if source.group_by is not None:
            raise spec.error(("source", "group_by"), "a Spark table's rows are read where its partitions are, "
                                                     "so they aren't grouped into Examples; group them in Spark "
                                                     "(collect_list) into one row each")
        self.table_name: str | None = source.table
        self.decimals: str | None = source.decimals
        self._frame = frame
        self.label = f"table {source.table}" if source.table else "the Spark DataFrame"

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_frame": None}  # the DataFrame lives on the driver

    def place(self) -> str:
        return self.label

    def rows_folder(self) -> str | None:
        """File paths in the rows (an image column) point from the spec's folder."""
        return str(self.spec.base_dir)

    def frame(self) -> Any:
        """The DataFrame read (on the driver): the one given, or the table in the active session's
        catalog, at the version its snapshot names where it has one."""
        if self._frame is None:
            if self.table_name is None:
                raise self.spec.error(("source",), "the spark_table builder reads `table:` (a table of the Spark "
                                                   "session's catalog), or a Spark DataFrame given from Python: "
                                                   "tb.build(spec, source=frame, runner=\"spark\")")
            self._frame = _table(self.table_name, self.spec)
        return self._frame

    def header(self) -> list[str] | None:
        return list(self.frame().columns)

    def num_records(self, split: str | None) -> int | None:
        return None  # a count is a pass over the table: the progress shows records, not a share

    def snapshot(self) -> dict[str, Any] | None:
        """The table's Delta or Iceberg version where it has one, else its row count and an
        order-free hash of its keys (the key column's, or each whole row's), both computed by
        Spark on the executors."""
        frame = self.frame()
        found: dict[str, Any] = {"table": self.table_name} if self.table_name else {"dataframe": "given from Python"}
        if self.table_name is not None:
            version = _table_version(frame.sparkSession, self.table_name)
            if version is not None:
                return {**found, **version}
        from pyspark.sql import functions

        key = self.key_column()
        columns = [key] if key is not None else list(frame.columns)
        hashed = functions.xxhash64(*[functions.col(f"`{name}`") for name in columns])
        row = frame.select(functions.count(functions.lit(1)).alias("rows"),
                           functions.sum(hashed.cast("decimal(38,0)")).alias("sum"),
                           functions.bit_xor(hashed).alias("xor")).first()
        total = int(row["sum"]) if row["sum"] is not None else 0
        return {**found, "rows": int(row["rows"]),
                "keys_xxhash64": f"{total & (2 ** 128 - 1):032x}-{int(row['xor'] or 0) & (2 ** 64 - 1):016x}"}

    def tasks(self, split: str | None) -> list[Any] | None:
        """One task per partition of the DataFrame (the types it maps checked first)."""
        from .base import no_column
        from .sources import wanted_columns

        frame = self.frame()
        header = list(frame.columns)
        for column, user in wanted_columns(self.spec).items():  # before the job, as a file's header is
            if column not in header:
                raise no_column(self.label, user, column, header)
        check_types(frame, self.label, self.wanted(header), self.decimals)
        count = max(1, frame.rdd.getNumPartitions())
        return [SparkPartition(index, count) for index in range(count)]

    def wanted(self, columns: Sequence[str], needed: Sequence[str] | None = None) -> list[str]:
        """The columns read: those the spec reads (or `needed`), with the key and split columns."""
        from .sources import wanted_columns

        names = set(needed) if needed is not None else set(wanted_columns(self.spec))
        return [column for column in columns if column in names]

    def read_batches(self, needed: Sequence[str] | None, batch_size: int, task: Any = None) -> Iterator[Batch]:
        if not isinstance(task, PartitionRows):
            raise DataError(f"{self.label}: {NEEDS_RUNNER}")
        place = f"{self.label}, partition {task.index}"
        key_column = self.key_column()
        start = 0
        for record_batch in task.batches:
            columns = list(record_batch.schema.names)
            wanted = [column for column in (needed if needed is not None else columns) if column in columns]
            if start == 0:
                check_columns(record_batch.schema, self.label, wanted, key_column)
            for first in range(0, record_batch.num_rows, batch_size):
                part = record_batch.slice(first, batch_size)
                if self.decimals is not None:
                    part = _ruled(part, self.decimals)
                yield arrow_batch(part, place, wanted, key_column, start, columns)
                start += part.num_rows


def _ruled(record_batch: Any, rule: str) -> Any:
    import pyarrow as pa

    arrays = [as_ruled(column, rule) for column in record_batch.columns]
    return pa.RecordBatch.from_arrays(arrays, names=record_batch.schema.names)


def check_types(frame: Any, label: str, columns: Sequence[str], decimals: str | None) -> None:
    """Every column read has a Spark type whose values map exactly to a feature's, or a DataError
    names the column and its Spark type (on the driver, before the job)."""
    from pyspark.sql.pandas.types import to_arrow_type

    for column in columns:
        kind = frame.schema[column].dataType
        named = kind.simpleString()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                arrow = to_arrow_type(kind, timezone="UTC")  # the zone: only whether the check passes
        except Exception:  # a type Spark can't give as Arrow (a variant, a calendar interval, a map of maps)
            raise DataError(f"{label}: column `{column}` ({named}): no exact mapping to a feature's values; "
                            "cast it in Spark first (e.g. to string)") from None
        if holds(arrow, is_decimal) and decimals is None:
            raise DataError(f"{label}: column `{column}` ({named}): {DECIMAL_PROBLEM}, or cast it in Spark")
        problem = "a map has no exact mapping; turn it into columns or a list in Spark" if _is_map(arrow) \
            else unreadable(arrow)
        if problem:
            raise DataError(f"{label}: column `{column}` ({named}): {problem}")


def _is_map(kind: Any) -> bool:
    import pyarrow as pa

    return holds(kind, lambda leaf: pa.types.is_map(leaf) or pa.types.is_interval(leaf))


def _table(name: str, spec: Any) -> Any:
    """The table `name` of the active session's catalog; SpecError at `source.table` for one that
    doesn't exist, naming the tables of its database (or the databases)."""
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    if session is None:
        raise UsageError(f"source.table: {NEEDS_RUNNER}")
    catalog = session.catalog
    if not catalog.tableExists(name):
        database, _, _ = name.rpartition(".")
        if database and not catalog.databaseExists(database):
            found = sorted(entry.name for entry in catalog.listDatabases())
            raise spec.error(("source", "table"), f"no database `{database}` in the Spark session's catalog; "
                                                  f"its databases: {column_list(found) or 'none'}")
        tables = sorted(entry.name for entry in catalog.listTables(database or None) if not entry.isTemporary) \
            if database else sorted(entry.name for entry in catalog.listTables())
        where = f"database `{database}`" if database else "the current database"
        raise spec.error(("source", "table"), f"no table `{name}` in the Spark session's catalog; the tables of "
                                              f"{where}: {column_list(tables) or 'none'}")
    version = _table_version(session, name)
    if version is not None:  # read the version the snapshot names, whatever is committed meanwhile
        return session.sql(f"SELECT * FROM {name} VERSION AS OF {next(iter(version.values()))}")
    return session.table(name)


def _table_version(session: Any, name: str) -> dict[str, Any] | None:
    """A Delta table's latest version, an Iceberg table's current snapshot id; None for others."""
    provider = ""
    try:
        for row in session.sql(f"DESCRIBE TABLE EXTENDED {name}").collect():
            if row["col_name"] == "Provider":
                provider = str(row["data_type"]).lower()
    except Exception:  # a view, or a catalog without the detail: no version
        return None
    if provider == "delta":
        return {"delta_version": int(session.sql(f"DESCRIBE HISTORY {name} LIMIT 1").first()["version"])}
    if provider == "iceberg":
        row = session.sql(f"SELECT snapshot_id FROM {name}.snapshots ORDER BY committed_at DESC LIMIT 1").first()
        return {"iceberg_snapshot": int(row["snapshot_id"])} if row is not None else None
    return None



def is_spark_frame(value: Any) -> bool:
    """Whether `value` is a Spark DataFrame (classic or Spark Connect), known without importing Spark."""
    return type(value).__module__.startswith("pyspark.") and type(value).__name__ == "DataFrame"


def spark_frame_builders(spec: Spec, frame: Any) -> tuple[Spec, list[tuple[str | None, Builder]]]:
    """The spec (its source `builder: spark_table`, the rows given from Python) and its builders of
    the Spark DataFrame `frame`, for `source:` left out, `{builder: dataframe}` or `{builder:
    spark_table}` without a table; split by fraction or by a split column. SpecError otherwise,
    DataError for a column the spec reads that the frame lacks."""
    import dataclasses

    from .frames import check_given_splits, given_builders

    if spec.source.builder not in ("dataframe", "spark_table") or spec.source.path or spec.source.table:
        named = f"builder: {spec.source.builder}" + "".join(
            f", {key}: {getattr(spec.source, key)}" for key in ("path", "table") if getattr(spec.source, key))
        raise spec.error(("source",), f"source= gives the rows, and the spec's source names others ({named}); "
                                      "leave `source:` out or write `source: {builder: spark_table}`, or build "
                                      "without source=")
    check_given_splits(spec)
    spec = dataclasses.replace(spec, source=dataclasses.replace(spec.source, builder="spark_table"))
    builder = SparkTableBuilder(spec, None, spec.source.options, frame)
    return spec, given_builders(spec, builder, builder.label, list(frame.columns))
