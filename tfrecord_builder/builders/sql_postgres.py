"""PostgreSQL, the server `builder: sql` reads through ADBC's PostgreSQL driver (libpq and the
binary COPY protocol into Arrow: no Python object per value).

A session is read-only (`default_transaction_read_only`). A column's type is the server's own
(`POSTGRESQL:type` in the driver's schema, `_int4` -> `int4[]`). Types reach Arrow as themselves,
except these, cast by the server in the query built around the user's: uuid, json and jsonb as
their text; numeric as `source.decimals` says (float8, correctly rounded by the server, or its
text); any other type the driver has no Arrow type for (`arrow.opaque`: point, inet, xml...) is
refused where a feature reads it. The driver flattens a multi-dimensional array into one list: the
server counts each array value's dimensions alongside it, and a row with more than one is refused.
Batches are the driver's (about 16 MB of COPY data each), cut to the build's batch size.
"""
from __future__ import annotations

import hashlib
import re
from typing import Any, Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from ..optional import imported
from .sql_connection import Target, shown
from .sql_engines import ROWS, Engine, Refused, quoted, wrapped


TYPE = b"POSTGRESQL:type"
_AS_TEXT = {"uuid", "json", "jsonb"}
_NDIMS = "_tb_ndims_"  # the alias of a column's dimension counts, beside it
# ?, where it isn't inside a quoted name
_PARAMETER = re.compile(r'"(?:[^"]|"")*"|\?')


class NotExact(Refused):
    """A value the query gave that no feature holds exactly: at `row` (0-based) of the batch."""

    def __init__(self, message: str, row: int):
        super().__init__(message)
        self.row = row


def type_name(field: Any) -> str:
    """A column's type as PostgreSQL names it (`int4`, `int4[]`, `numeric`)."""
    name = (field.metadata or {}).get(TYPE, b"?").decode()
    return name[1:] + "[]" if name.startswith("_") else name


class PostgresEngine(Engine):
    """A PostgreSQL database on a server, read through one ADBC connection."""

    name = "postgresql"

    def __init__(self, target: Target, decimals: str | None = None):
        adbc: Any = imported("adbc_driver_postgresql.dbapi")
        if adbc is None:
            raise Refused("a postgresql: connection needs adbc-driver-postgresql: pip install "
                          "adbc-driver-postgresql (or tfrecord-builder[sql])")
        assert target.database is not None
        self.Error = adbc.Error  # the driver's errors (its module is imported here, on first use)
        self.where = shown(target.database)
        self.decimals = decimals
        try:
            self.connection = adbc.connect(target.database, autocommit=True)
            with self.connection.cursor() as cursor:
                cursor.execute("SET default_transaction_read_only = on")
        except self.Error as error:
            raise Refused(f"{self.where}: {_message(error)}") from None
        self._schemas: dict[str, Any] = {}

    def _declared(self, query: str) -> Any:
        """The schema the driver gives the query's rows, with the server's type names."""
        if query not in self._schemas:
            try:
                with self.connection.cursor() as cursor:
                    self._schemas[query] = cursor.adbc_execute_schema(query)
            except self.Error as error:
                raise Refused(_message(error, query)) from None
        return self._schemas[query]

    def columns(self, query: str) -> list[tuple[str, str]]:
        return [(field.name, type_name(field)) for field in self._declared(query)]

    def schema(self, query: str) -> Any:
        """The types the rows arrive as: uuid and json as text, numeric as `decimals` says (no
        `decimals`: its own, which the builder refuses)."""
        return pa.schema([field.with_type(self._arriving(field)) for field in self._declared(query)])

    def _arriving(self, field: Any) -> Any:
        name = type_name(field)
        base, array = name.removesuffix("[]"), name.endswith("[]")
        into = None
        if base in _AS_TEXT:
            into = pa.string()
        elif base == "numeric" and self.decimals is not None:
            into = pa.float64() if self.decimals == "float" else pa.string()
        if into is None:
            return field.type
        return pa.list_(into) if array else into

    def _select(self, field: Any) -> str:
        """How the query built around the user's selects a column: cast where `_arriving` says."""
        column = f"{ROWS}.{quoted(field.name)}"
        name = type_name(field)
        base, array = name.removesuffix("[]"), "[]" if name.endswith("[]") else ""
        if base in _AS_TEXT or (base == "numeric" and self.decimals == "text"):
            return f"{column}::text{array} AS {quoted(field.name)}"
        if base == "numeric" and self.decimals == "float":
            return f"{column}::float8{array} AS {quoted(field.name)}"
        return column

    def batches(self, query: str, columns: Sequence[str] | None, where: str, params: Sequence[Any],
                batch_size: int) -> Iterator[Any]:
        declared = {field.name: field for field in self._declared(query)}
        names = list(columns) if columns is not None else [field.name for field in self._declared(query)]
        arrays = [name for name in names if type_name(declared[name]).endswith("[]")]
        select = [self._select(declared[name]) for name in names]
        select += [f"array_ndims({ROWS}.{quoted(name)}) AS {_NDIMS}{index}" for index, name in enumerate(arrays)]
        built = wrapped(query, ", ".join(select), _literal(where, params))
        cursor = self.connection.cursor()
        try:
            cursor.execute(built)
            reader = cursor.fetch_record_batch()
            for record_batch in reader:
                for index, name in enumerate(arrays):
                    counts = record_batch.column(f"{_NDIMS}{index}")
                    if counts.null_count < len(counts) and pc.max(counts).as_py() > 1:
                        row = next(row for row, count in enumerate(counts.to_pylist()) if count and count > 1)
                        raise NotExact(f"column `{name}` ({type_name(declared[name])}): a {counts[row].as_py()}-"
                                       "dimensional array, which a feature's list would flatten; expected one "
                                       "dimension (flatten it in the query, ARRAY(SELECT unnest(x)), or take "
                                       "x[i] one by one)", row)
                if arrays:
                    record_batch = record_batch.select(names)
                for offset in range(0, record_batch.num_rows, batch_size):
                    yield record_batch.slice(offset, batch_size)
        except self.Error as error:
            raise Refused(_message(error, built)) from None
        finally:
            cursor.close()

    def fingerprint(self, query: str, key: str | None) -> tuple[int, str]:
        """The count and the sum of each key's (or row's text's) md5, its first 64 bits as an integer."""
        text = f"{ROWS}.{quoted(key)}::text" if key is not None else f"{ROWS}::text"
        rows, total = self._fetch_one(wrapped(query, f"count(*), coalesce(sum(('x' || left(md5({text}), 16))"
                                                     "::bit(64)::bigint::numeric), 0)::text"))
        return int(rows), hashlib.sha256(f"postgresql:{rows}:{total}".encode()).hexdigest()

    def _fetch_one(self, query: str) -> tuple[Any, ...]:
        try:
            with self.connection.cursor() as cursor:
                cursor.execute(query)
                row = cursor.fetchone()
        except self.Error as error:
            raise Refused(_message(error, query)) from None
        assert row is not None  # an aggregate gives one row
        return tuple(row)

    def close(self) -> None:
        self.connection.close()


def _literal(where: str, params: Sequence[Any]) -> str:
    """The condition with its `?` parameters (integers: a range's bounds) written in."""
    values = iter(params)
    return _PARAMETER.sub(lambda match: str(int(next(values))) if match.group(0) == "?" else match.group(0), where)


def _message(error: Any, query: str = "") -> str:
    """The server's (or libpq's) message in one line, without the driver's prefixes, with the line
    of the user's query it points at (PostgreSQL's `LINE n:`, counted within the user's query)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    first = lines[0] if lines else "no message"
    first = re.sub(r"^[A-Z_]+: (?:\[libpq\] )?", "", first)
    first = re.sub(r"^Failed to (?:connect|execute query|prepare query|execute COPY)[^:]*: ?", "", first)
    first = re.sub(r"^(?:ERROR|FATAL):\s*", "", first)
    first = re.sub(r"\s*Query was:.*$", "", first)
    found = re.search(r"LINE ([0-9]+):", " ".join(lines[1:]))
    if found and query:
        number, last = int(found.group(1)), query.count("\n") + 1
        if query.startswith("SELECT ") and f") AS {ROWS}" in query:  # a built query: the user's is within
            number, last = number - 1, last - 2
        first += f" (query line {min(max(number, 1), last)})"
    return first
