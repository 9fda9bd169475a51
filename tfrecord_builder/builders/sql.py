"""`builder: sql`: one record per row of a query's result (DuckDB embedded, an SQLite file, or a
PostgreSQL server: sql_postgres.py).

`source.query` (or `source.table`, all of a table's rows) is read through `source.connection`
(sql_connection.py; none: DuckDB in memory, over files named relative to the spec's folder). Rows
arrive as Arrow record batches and become batches exactly as a Parquet file's do (arrow_rows.py),
so the same rows give the same shards. A column type without an exact mapping is refused, naming
the column and its type as the database names it; DECIMAL/NUMERIC only with `source.decimals`.
`source.partition_by` (an integer column) cuts the query into `source.partitions` ranges of it,
read as separate tasks, plus one for its NULLs. `snapshot()` is the result's fingerprint.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import DataError
from .arrow_batch import arrow_batch, check_columns
from .arrow_rows import unreadable
from .base import Batch, PendingBatch, column_list
from .decimals import PROBLEM as DECIMAL_PROBLEM, as_ruled, holds, is_decimal
from .sql_connection import Target, target
from .sql_engines import Engine, Refused, quoted
from .sql_open import opened
from .sql_postgres import NotExact
from .tabular import TableBuilder

DEFAULT_PARTITIONS = 8
_INT64_MAX = 2**63 - 1
# the database types that reach Arrow as another type's bytes or numbers: no exact mapping
_REFUSED_TYPES = {"HUGEINT": "cast it to BIGINT in the query (or to DOUBLE, rounding)",
                  "UHUGEINT": "cast it to BIGINT in the query (or to DOUBLE, rounding)",
                  "BIT": "cast it to VARCHAR in the query", "VARINT": "cast it to BIGINT or VARCHAR in the query",
                  "BIGNUM": "cast it to BIGINT or VARCHAR in the query",
                  # PostgreSQL's (the driver gives money as its cents, times of day as microseconds)
                  "MONEY": "cast it in the query (x::numeric, with `decimals:`)",
                  "TIME": "cast it in the query (to text, or to seconds: extract(epoch FROM x))",
                  "TIMETZ": "cast it in the query (to text)",
                  "INTERVAL": "cast it in the query (to text, or to seconds: extract(epoch FROM x))"}


@dataclass(frozen=True)
class Range:
    """One read task of a partitioned query: the rows whose `column` is at least `low` (None: no
    lower bound) and below `high` (None: no upper bound), or (`nulls`) those where it is NULL."""

    column: str
    low: int | None
    high: int | None
    nulls: bool = False

    def where(self) -> tuple[str, list[int]]:
        """The condition of its rows, with its parameters."""
        column = quoted(self.column)
        if self.nulls:
            return f"{column} IS NULL", []
        parts, params = [f"{column} IS NOT NULL"], []
        if self.low is not None:
            parts.append(f"{column} >= ?")
            params.append(self.low)
        if self.high is not None:
            parts.append(f"{column} < ?")
            params.append(self.high)
        return " AND ".join(parts), params

    def __str__(self) -> str:
        if self.nulls:
            return f"{self.column} IS NULL"
        low = f"{self.low} <= " if self.low is not None else ""
        high = f" < {self.high}" if self.high is not None else ""
        return f"{low}{self.column}{high}" if low or high else f"{self.column} not NULL"


class SqlBuilder(TableBuilder):
    """Rows of a query (or a table) of a DuckDB or SQLite database, or of files DuckDB reads."""

    SOURCE_KEYS = frozenset({"query", "table", "connection", "partition_by", "partitions", "decimals"})

    @classmethod
    def check_source(cls, source: Any, at: Any) -> None:
        if source.partitions is not None and (isinstance(source.partitions, bool) or source.partitions < 1):
            raise (at / "partitions").error(f"expected a whole number of ranges, 1 or more, received "
                                            f"{source.partitions}")
    READS_PATH = False
    DEFINES_CLASSES = False
    TASKS_READ_IN_WORKERS = True  # each process opens the database itself (`__getstate__`)

    def __init__(self, spec: Any, path: str | None = None, options: dict[str, Any] | None = None):
        super().__init__(spec, path, options)
        source = spec.source
        if (source.query is None) == (source.table is None):
            raise spec.error(("source",), "the sql builder reads a `query` or a `table`: give one of them"
                             + (", not both" if source.query is not None else ""))
        self.query_key = "query" if source.query is not None else "table"
        if source.query is not None:
            self.query = source.query.strip().rstrip(";").rstrip()
            self.label = "query"
        else:
            self.query = "SELECT * FROM " + ".".join(quoted(part) for part in source.table.split("."))
            self.label = f"table {source.table}"
        found, problem = target(source.connection, spec.base_dir)
        if problem or found is None:
            raise spec.error(("source", "connection"), problem or "no database")
        self.target: Target = found
        self.partition_by: str | None = source.partition_by
        self.partitions: int = source.partitions or DEFAULT_PARTITIONS
        self.decimals: str | None = source.decimals
        self._engine: Engine | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_engine": None}  # each process opens the database itself

    def place(self) -> str:
        return self.label

    def rows_folder(self) -> str | None:
        """File paths in the rows (an image column) point from the spec's folder."""
        return str(self.spec.base_dir)

    def engine(self) -> Engine:
        if self._engine is None:
            try:
                self._engine = opened(self.target, self.decimals)
            except Refused as error:
                raise DataError(f"{self.label}: {error}") from None
        return self._engine

    def refused(self, error: Refused) -> Exception:
        """A query the database refused, said at the spec's `query` (or `table`) line."""
        return self.spec.error(("source", self.query_key), f"the database refused the {self.label}: {error}")

    def header(self) -> list[str] | None:
        try:
            return [name for name, _ in self.engine().columns(self.query)]
        except Refused as error:
            raise self.refused(error) from None

    def snapshot(self) -> dict[str, Any] | None:
        engine = self.engine()
        try:
            rows, keys = engine.fingerprint(self.query, self.key_column())
        except Refused as error:
            raise self.refused(error) from None
        return {"engine": engine.name, "rows": rows, "keys_sha256": keys}

    def tasks(self, split: str | None) -> list[Any] | None:
        """With `partition_by`: `partitions` ranges of equal width between the column's least and
        greatest value (the first and last open-ended), and its NULLs: each row in exactly one."""
        column = self.partition_by
        if column is None:
            return None
        schema = self._schema()
        if column not in schema.names:
            raise self.spec.error(("source", "partition_by"), f"no column `{column}` in the {self.label}'s result; "
                                                              f"its columns: {column_list(schema.names)}")
        kind = schema.field(column).type
        if not pa.types.is_integer(kind):
            raise self.spec.error(("source", "partition_by"), f"column `{column}` is {self._type_name(column)}; "
                                                              "expected a column of integers")
        try:
            low, high = self.engine().bounds(self.query, column)
        except Refused as error:
            raise self.refused(error) from None
        ranges = [Range(column, None, None)]
        if low is not None and high > low:
            width = math.ceil((high - low + 1) / self.partitions)
            cuts = list(range(low + width, high + 1, width))[: self.partitions - 1]
            edges = [None, *cuts, None]
            ranges = [Range(column, start, stop) for start, stop in zip(edges[:-1], edges[1:])]
        return [*ranges, Range(column, None, None, nulls=True)]

    def read_batches(self, needed: Sequence[str] | None, batch_size: int, task: Any = None) -> Iterator[Any]:
        schema = self._schema()
        columns = list(schema.names)
        key_column = self.key_column()
        wanted = [column for column in (needed if needed is not None else columns) if column in columns]
        check_columns(schema, self.label, wanted, key_column, problem=self._problem,
                      described=lambda column: f"column `{column}` ({self._type_name(column)})",
                      unique_hint=" (name them with AS)")
        # without a key column a row's key is the whole row, as a Parquet file's is
        read = sorted(set(wanted) | {key_column}) if key_column else None
        where, params = task.where() if task is not None else ("", [])
        place = f"{self.label} ({task})" if task is not None else self.label
        start = 0
        batches = self.engine().batches(self.query, read, where, params, batch_size)
        while True:
            try:
                record_batch = next(batches)
            except StopIteration:
                return
            except NotExact as error:
                raise DataError(f"{place}, row {start + error.row + 1}: {error}") from None
            except Refused as error:
                raise DataError(f"{place}: the database refused it after row {start}: {error}") from None
            for column in wanted:
                record_batch = self._exact_column(record_batch, column, place, start)
            yield SqlBatch(record_batch, place, self.label, wanted, key_column, start, columns)
            start += record_batch.num_rows

    def _schema(self) -> Any:
        try:
            return self.engine().schema(self.query)
        except Refused as error:
            raise self.refused(error) from None

    def _type_name(self, column: str) -> str:
        """The column's type as the database names it."""
        return dict(self.engine().columns(self.query)).get(column, "?")

    def _problem(self, column: str, kind: Any) -> str | None:
        """Why a column of this type can't be read exactly (None: it can)."""
        name = self._type_name(column).upper()
        base = name.split("(")[0].split("[")[0].strip()
        if base in _REFUSED_TYPES:
            return f"no exact mapping; {_REFUSED_TYPES[base]}"
        if holds(kind, is_decimal) and self.decimals is None:
            return f"{DECIMAL_PROBLEM}, or cast it in the query"
        if holds(kind, lambda leaf: pa.types.is_interval(leaf) or pa.types.is_duration(leaf)):
            return "an interval has no exact mapping; cast it in the query (e.g. epoch(x) or to VARCHAR)"
        if holds(kind, lambda leaf: isinstance(leaf, pa.OpaqueType)):
            return "no exact mapping to a feature's values; cast it in the query (e.g. to text: x::text)"
        return unreadable(kind)

    def _exact_column(self, record_batch: Any, column: str, place: str, start: int) -> Any:
        """The batch with the column's values made exact (`_exact`)."""
        array = record_batch.column(column)
        exact = self._exact(array, column, place, start)
        if exact is array:
            return record_batch
        return record_batch.set_column(record_batch.schema.get_field_index(column), column, exact)

    def _exact(self, array: Any, column: str, place: str, start: int) -> Any:
        """The column's values, decimals turned as `source.decimals` says; an unsigned 64-bit value
        past int64 refused, naming its row."""
        if pa.types.is_uint64(array.type) and len(array) and array.null_count < len(array):
            if pc.max(array).as_py() > _INT64_MAX:
                row = next(index for index, value in enumerate(array.to_pylist())
                           if value is not None and value > _INT64_MAX)
                raise DataError(f"{place}, row {start + row + 1}: column `{column}` ({self._type_name(column)}): "
                                f"{array[row].as_py()} is past the largest int64 (a feature's integers); expected "
                                "at most 9223372036854775807")
        return as_ruled(array, self.decimals)


class SqlBatch(PendingBatch):
    """Rows of a query's result as the driver gave them (an Arrow record batch), made Python
    values where they are encoded: the process that reads the database only reads, and a worker
    is sent the batch's Arrow buffers (compact, no object per value), not lists of values."""

    def __init__(self, record_batch: Any, place: str, label: str, wanted: list[str], key_column: str | None,
                 start: int, available: list[str]):
        self.record_batch, self.name, self.label = record_batch, place, label
        self.wanted, self.key_column, self.start, self.available = wanted, key_column, start, available
        self.count, self.line = record_batch.num_rows, start + 1

    def load(self, notices: Any) -> Batch:
        return arrow_batch(self.record_batch, self.name, self.wanted, self.key_column, self.start, self.available,
                           source=self.label, at_once=True)

    def __getstate__(self) -> dict[str, Any]:
        # a slice pickles with its parent's whole buffers: the IPC stream of its own rows only
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, self.record_batch.schema) as writer:
            writer.write_batch(self.record_batch)
        return {**self.__dict__, "record_batch": sink.getvalue()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        state["record_batch"] = pa.ipc.open_stream(state["record_batch"]).read_next_batch()
        self.__dict__.update(state)
