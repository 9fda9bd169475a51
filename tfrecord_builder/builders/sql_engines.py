"""The database engines `builder: sql` reads through: DuckDB (embedded) and SQLite files.

Each gives a query's columns (with the database's own type names) without running it, its rows
as Arrow record batches of a bounded size, the fingerprint of its result (row count and an
order-free hash of the keys, computed in the database) and the bounds of an integer column.
A query the database refuses raises `Refused` with the database's message in one line.

DuckDB gives Arrow itself. SQLite's values have no column types (a column may hold numbers and
text), so a column's type is the one storage class its values have, found by the database in one
pass over the query before the rows are read: integer -> int64, real -> float64, text -> string,
blob -> binary, only NULLs -> null; a column that mixes classes is refused, naming them.
"""
from __future__ import annotations

import hashlib
import re
import sqlite3
from typing import Any, Iterator, Sequence

import pyarrow as pa

from ..optional import imported
from .sql_connection import Target


ROWS = "_tb_rows"  # the alias of the user's query inside the queries built around it


class Refused(Exception):
    """The database refused a query (its message, in one line)."""


def quoted(name: str) -> str:
    """A column name as an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def wrapped(query: str, select: str = "*", where: str = "") -> str:
    """A query over the rows of `query` (on lines of its own, so that a trailing comment ends there)."""
    return f"SELECT {select} FROM (\n{query}\n) AS {ROWS}" + (f" WHERE {where}" if where else "")


def one_line(message: str, query: str = "") -> str:
    """A database's message in one line: its first line, and the line of the user's query it
    points at (DuckDB's `LINE n:`; counted within the query, which a built query wraps)."""
    lines = [line.rstrip() for line in str(message).splitlines() if line.strip()]
    if not lines:
        return "no message"
    where = next((line.strip() for line in lines[1:] if re.match(r"\s*LINE [0-9]+:", line)), None)
    if where is None:
        return lines[0]
    number = int(where[5:].split(":")[0]) - (1 if query.startswith("SELECT ") and f") AS {ROWS}" in query else 0)
    return lines[0] + f" (query line {max(number, 1)}:{where.split(':', 1)[1]})"


class Engine:
    """A connection to one database, opened read-only."""

    name = ""

    def columns(self, query: str) -> list[tuple[str, str]]:
        """The query's columns and their types as the database names them (the query isn't run)."""
        raise NotImplementedError

    def schema(self, query: str) -> Any:
        """The Arrow schema of the query's rows."""
        raise NotImplementedError

    def batches(self, query: str, columns: Sequence[str] | None, where: str, params: Sequence[Any],
                batch_size: int) -> Iterator[Any]:
        """The rows of `query` (its `columns`, None: all; those meeting `where`, with `?`
        parameters) as Arrow record batches of `batch_size` rows at most."""
        raise NotImplementedError

    def fingerprint(self, query: str, key: str | None) -> tuple[int, str]:
        """The result's row count and a hash of its keys (the `key` column's, or whole rows') that
        no order of the rows changes."""
        raise NotImplementedError

    def bounds(self, query: str, column: str) -> tuple[Any, Any]:
        """The least and greatest value of an integer column (None, None: no value)."""
        low, high = self._fetch_one(wrapped(query, f"min({quoted(column)}), max({quoted(column)})"))
        return low, high

    def tables(self) -> list[str]:
        """The database's tables and views, sorted: `schema.name`, or `name` in the schema a query
        reads by default (DuckDB's `main`, PostgreSQL's `public`). This one asks the SQL standard's
        information_schema (an engine without one says it otherwise)."""
        found: list[tuple[str, str]] = []
        for batch in self.batches(_LISTED_TABLES, None, "", [], 4096):
            found += zip(batch.column(0).to_pylist(), batch.column(1).to_pylist())
        return sorted(name if schema in _DEFAULT_SCHEMAS else f"{schema}.{name}" for schema, name in found)

    def _fetch_one(self, query: str) -> tuple[Any, ...]:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


_DEFAULT_SCHEMAS = ("main", "public")
_LISTED_TABLES = ("SELECT table_schema, table_name FROM information_schema.tables "
                  "WHERE table_schema NOT IN ('information_schema', 'pg_catalog')")


class DuckEngine(Engine):
    """DuckDB, in memory (SQL over files, relative to the spec's folder) or a database file."""

    name = "duckdb"

    def __init__(self, target: Target):
        duckdb: Any = imported("duckdb")
        if duckdb is None:
            raise Refused("builder sql needs duckdb: pip install duckdb (or tfrecord-builder[sql])")
        self.Error = duckdb.Error  # the library's errors (its module is imported here, on first use)
        try:
            self.connection = duckdb.connect(target.database or ":memory:", read_only=target.database is not None)
            # relative file names in the query (read_parquet('wine.parquet'), FROM 'x.csv') are the spec's
            self.connection.execute("SET file_search_path = ?", [target.folder])
        except self.Error as error:
            raise Refused(one_line(str(error))) from None

    def columns(self, query: str) -> list[tuple[str, str]]:
        try:
            relation = self.connection.sql(query)
        except self.Error as error:
            raise Refused(one_line(str(error))) from None
        if relation is None:
            raise Refused("the statement gives no rows; expected a query (SELECT ...)")
        return [(name, str(kind)) for name, kind in zip(relation.columns, relation.types)]

    def schema(self, query: str) -> Any:
        try:
            return self.connection.sql(query).limit(0).to_arrow_table().schema
        except self.Error as error:
            raise Refused(one_line(str(error))) from None

    def batches(self, query: str, columns: Sequence[str] | None, where: str, params: Sequence[Any],
                batch_size: int) -> Iterator[Any]:
        if columns is not None or where:
            query = wrapped(query, _selected(columns), where)
        try:
            reader = self.connection.sql(query, params=list(params) or None).to_arrow_reader(batch_size)
            while True:
                try:
                    yield reader.read_next_batch()
                except StopIteration:
                    return
        except (self.Error, pa.ArrowException) as error:
            raise Refused(one_line(str(error), query)) from None

    def fingerprint(self, query: str, key: str | None) -> tuple[int, str]:
        hashed = f"hash({ROWS}.{quoted(key)})" if key is not None else f"hash({ROWS})"  # {ROWS}: the whole row
        rows, total = self._fetch_one(wrapped(query, f"count(*), coalesce(sum({hashed}::HUGEINT), 0)"))
        return int(rows), hashlib.sha256(f"duckdb:{rows}:{total}".encode()).hexdigest()

    def _fetch_one(self, query: str) -> tuple[Any, ...]:
        try:
            found = self.connection.sql(query).fetchall()
        except self.Error as error:
            raise Refused(one_line(str(error), query)) from None
        return tuple(found[0])  # an aggregate gives one row

    def close(self) -> None:
        self.connection.close()


_SQLITE_TYPES = {"integer": pa.int64(), "real": pa.float64(), "text": pa.string(), "blob": pa.binary()}


class _KeysDigest:
    """An SQLite aggregate: the sum of the sha256 of each row's values (so no order changes it)."""

    def __init__(self) -> None:
        self.total = 0

    def step(self, *values: Any) -> None:
        self.total += int.from_bytes(hashlib.sha256(repr(values).encode("utf-8")).digest(), "big")

    def finalize(self) -> str:
        return format(self.total % (1 << 256), "064x")


class SqliteEngine(Engine):
    """An SQLite database file, read-only, through Python's sqlite3."""

    name = "sqlite"

    def __init__(self, target: Target):
        assert target.database is not None
        uri = "file:" + target.database.replace("?", "%3f").replace("#", "%23") + "?mode=ro"
        try:
            self.connection = sqlite3.connect(uri, uri=True)
        except sqlite3.Error as error:
            raise Refused(one_line(str(error))) from None
        self.connection.create_aggregate("tb_keys_digest", -1, _KeysDigest)  # type: ignore[arg-type]
        self._types: dict[str, dict[str, Any]] = {}

    def columns(self, query: str) -> list[tuple[str, str]]:
        names = self._names(query)
        classes = self._classes(query, names)
        return [(name, "|".join(sorted(found)) or "null") for name, found in zip(names, classes)]

    def schema(self, query: str) -> Any:
        return pa.schema(list(self.arrow_types(query).items()))

    def arrow_types(self, query: str) -> dict[str, Any]:
        """Each column's Arrow type (after `columns` refused none), from its values' storage class."""
        if query not in self._types:
            names = self._names(query)
            types = {}
            for name, found in zip(names, self._classes(query, names)):
                if len(found) > 1:
                    raise Refused(f"column `{name}` holds {' and '.join(sorted(found))} values (SQLite's storage "
                                  f"classes), which no one type holds exactly; cast it in the query, e.g. "
                                  f"CAST({quoted(name)} AS {'REAL' if found == {'integer', 'real'} else 'TEXT'})")
                types[name] = _SQLITE_TYPES[next(iter(found))] if found else pa.null()
            self._types[query] = types
        return self._types[query]

    def batches(self, query: str, columns: Sequence[str] | None, where: str, params: Sequence[Any],
                batch_size: int) -> Iterator[Any]:
        types = self.arrow_types(query)
        schema = pa.schema([(name, types[name]) for name in (columns if columns is not None else types)])
        cursor = self._run(wrapped(query, _selected(columns), where), params)
        while True:
            try:
                rows = cursor.fetchmany(batch_size)
            except sqlite3.Error as error:
                raise Refused(one_line(str(error))) from None
            if not rows:
                return
            values_by_column: list[tuple[Any, ...]] = list(zip(*rows))
            yield pa.record_batch([pa.array(list(values), type=kind)
                                   for values, kind in zip(values_by_column, schema.types)],
                                  schema=schema)

    def fingerprint(self, query: str, key: str | None) -> tuple[int, str]:
        values = f"{ROWS}.{quoted(key)}" if key is not None else \
            ", ".join(f"{ROWS}.{quoted(name)}" for name in self._names(query))
        rows, digest = self._fetch_one(wrapped(query, f"count(*), tb_keys_digest({values})"))
        return int(rows), hashlib.sha256(f"sqlite:{rows}:{digest}".encode()).hexdigest()

    def tables(self) -> list[str]:
        rows = self._run("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
                         "AND name NOT LIKE 'sqlite_%'", ()).fetchall()
        return sorted(row[0] for row in rows)

    def _names(self, query: str) -> list[str]:
        cursor = self._run(wrapped(query, where="0"), ())
        return [column[0] for column in cursor.description or ()]

    def _classes(self, query: str, names: list[str]) -> list[set[str]]:
        """The storage classes of each column's values (NULL left out), found in one pass."""
        if not names:
            return []
        parts = ", ".join(f"group_concat(DISTINCT typeof({ROWS}.{quoted(name)}))" for name in names)
        found = self._fetch_one(wrapped(query, parts))
        return [set((text or "").split(",")) - {"null", ""} for text in found]

    def _fetch_one(self, query: str) -> tuple[Any, ...]:
        row = self._run(query, ()).fetchone()
        assert row is not None
        return tuple(row)

    def _run(self, query: str, params: Sequence[Any]) -> Any:
        try:
            return self.connection.execute(query, tuple(params))
        except (sqlite3.Error, sqlite3.Warning) as error:
            raise Refused(one_line(str(error))) from None

    def close(self) -> None:
        self.connection.close()


def _selected(columns: Sequence[str] | None) -> str:
    return "*" if columns is None else ", ".join(f"{ROWS}.{quoted(name)}" for name in columns)
