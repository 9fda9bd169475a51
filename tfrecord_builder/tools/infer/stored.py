"""Tables that live in a database or a lakehouse: the source a spec reads them by, and their rows
as Arrow, which infer samples as it samples a Parquet file's (sources.read_rows), so the same rows
give the same guesses.

    DATA                                  the spec's source
    a Delta table's folder (_delta_log/)  {builder: delta, path}: its latest version, named in a comment
    a DuckDB or SQLite file, or a URL     {builder: sql, connection, table} (the one table; several:
      (duckdb:///, sqlite:///, ...)         --table picks one) or {builder: sql, connection, query}
    none, with --query                    {builder: sql, query}: DuckDB over the files the query names
    none, with --catalog and --table      {builder: iceberg, table, catalog}: its current snapshot

The database is opened through builders/sql_engines.py, whichever engine the connection names,
and file names (a database file, a catalog's, the files a query reads) are resolved from the
spec's folder, as the build resolves them.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator
from urllib.parse import urlsplit

from ...builders import iceberg
from ...builders.delta import DeltaBuilder
from ...builders.frame_kinds import FrameRows
from ...builders.lake import inexact
from ...builders.sql_connection import masked, target
from ...builders.sql_engines import Engine, Refused, quoted
from ...builders.sql_open import opened
from ...errors import DataError, UsageError
from .names import identifier
from .places import path_from

DATABASE_ENDINGS = (".duckdb", ".db", ".sqlite", ".sqlite3")
_FILE_SCHEMES = ("duckdb", "sqlite")
_SERVER_SCHEMES = ("postgresql", "postgres")
_PASSWORD = re.compile(r"^[a-z][a-z0-9+.-]*://[^/@]*:[^/@]*@", re.IGNORECASE)
_BATCH = 4096


@dataclass
class Stored:
    """A table's rows and how the spec names them.

    Attributes:
        rows: its Arrow schema and record batches, `rows.label` naming it in messages.
        source: the spec's `source:` keys (`builder` first).
        notes: a comment for some of those keys.
        name: the dataset's name.
        problem: why a column of an Arrow type can't be read as it is (None: it can).
    """

    rows: FrameRows
    source: dict[str, Any]
    notes: dict[str, str]
    name: str
    problem: Callable[[Any], str | None]


def is_stored(data: str | None, table: str | None, query: str | None, catalog: str | None) -> bool:
    """Whether infer reads `data` (with the options) as a database's or a lakehouse's table."""
    if data is None or table is not None or query is not None or catalog is not None:
        return True
    if "://" in data:
        return urlsplit(data).scheme.lower() in _FILE_SCHEMES + _SERVER_SCHEMES
    return os.path.isdir(os.path.join(data, "_delta_log")) or \
        (data.lower().endswith(DATABASE_ENDINGS) and os.path.isfile(data))


def stored(data: str | None, folder: str, table: str | None = None, query: str | None = None,
           catalog: str | None = None) -> Stored:
    """The table `data` and the options name; `folder`: the spec's, where its paths point from."""
    if catalog is not None:
        if data is not None:
            raise UsageError(f"{data}: --catalog reads an Iceberg table from its catalog; leave DATA out and "
                             "name the table: --table NAMESPACE.NAME")
        if table is None or query is not None:
            raise UsageError("--catalog reads an Iceberg table: name it with --table NAMESPACE.NAME "
                             "(an Iceberg table takes no --query)")
        return _iceberg(catalog, table, folder)
    if data is not None and "://" not in data and os.path.isdir(data):
        if table is not None or query is not None:
            raise UsageError(f"{data}: a Delta table's folder holds one table; --table and --query read a database "
                             "(a DuckDB or SQLite file, or a connection URL)")
        return _delta(data, folder)
    return _sql(data, folder, table, query)


def _delta(data: str, folder: str) -> Stored:
    path = os.path.abspath(data)
    builder = DeltaBuilder(None, path, {})
    version = builder.version()
    schema, batches = builder.arrow_rows(_BATCH)
    name = builder.table_name()
    note = (f"a Delta table; without `version:` the build reads its latest, {version} when this was written "
            f"(`version: {version}` keeps reading that one)")
    return Stored(FrameRows(f"Delta table {name} (version {version})", schema, lambda: batches, None),
                  {"builder": "delta", "path": path_from(path, folder)}, {"path": note}, identifier(name, fallback="table"), inexact)


def _iceberg(catalog: str, table: str, folder: str) -> Stored:
    if _PASSWORD.match(catalog):
        raise UsageError(f"--catalog {masked(catalog)}: the URI holds a password, which the spec (and the dataset's "
                         "metadata) would keep; define the catalog in ~/.pyiceberg.yaml or "
                         "PYICEBERG_CATALOG__<NAME>__URI and give its name: --catalog NAME")
    given = {"uri": _catalog_uri(catalog, folder)} if "://" in catalog else {"name": catalog}
    opened_table = iceberg.load_table(iceberg.open_catalog(given, folder), table)
    current = opened_table.current_snapshot()
    if current is None:
        raise DataError(f"{table}: the table has no snapshot yet (nothing was written to it)")
    schema, batches = iceberg.table_batches(opened_table, current.snapshot_id)
    note = (f"without `snapshot:` the build reads its current snapshot, {current.snapshot_id} when this was "
            f"written (`snapshot: {current.snapshot_id}` keeps reading that one)")
    return Stored(FrameRows(f"Iceberg table {table} (snapshot {current.snapshot_id})", schema, lambda: batches, None),
                  {"builder": "iceberg", "table": table, "catalog": given}, {"table": note},
                  identifier(table.rpartition(".")[2], fallback="table"), inexact)


def _catalog_uri(uri: str, folder: str) -> str:
    """A SQLite catalog's file (relative to here) as the spec names it (relative to its folder)."""
    prefix = "sqlite:///"
    if uri.startswith(prefix) and uri != prefix + ":memory:":
        return prefix + path_from(os.path.abspath(uri[len(prefix):]), folder)
    return uri


def _sql(data: str | None, folder: str, table: str | None, query: str | None) -> Stored:
    if table is not None and query is not None:
        raise UsageError("--table and --query: give one of them (a table's rows, or a query's)")
    if data is None and query is None:
        raise UsageError("no DATA: give a file or folder to read, --query \"SELECT ... FROM 'rows.parquet'\" "
                         "(DuckDB over files), or --catalog and --table for an Iceberg table")
    connection = _connection(data, folder) if data is not None else None
    found, problem = target(connection, folder)
    if problem or found is None:
        raise UsageError(f"{masked(data or '')}: {problem}")
    where = masked(data) if data is not None else "DuckDB"
    try:
        engine = opened(found)
        if query is None:
            tables = engine.tables()
            table = table if table is not None else _only_table(where, tables)
            if table not in tables:
                raise DataError(f"{where}: no table `{table}`; its tables: {', '.join(tables) or 'none'}")
        read = query.strip().rstrip(";").rstrip() if query is not None else \
            "SELECT * FROM " + ".".join(quoted(part) for part in (table or "").split("."))
        schema = engine.schema(read)
    except Refused as error:
        raise DataError(f"{where}: the database refused the {'query' if query else f'table {table}'}: {error}") \
            from None
    source: dict[str, Any] = {"builder": "sql"}
    if connection is not None:
        source["connection"] = connection
    source.update({"query": read} if query is not None else {"table": table})
    label = "the query" if query is not None else f"table {table}"
    if data is not None:
        label += f" of {os.path.basename(data) if '://' not in data else masked(data)}"
    name = (table or "").rpartition(".")[2] if query is None else \
        (os.path.splitext(os.path.basename(data))[0] if data is not None and "://" not in data else "query")
    return Stored(FrameRows(label, schema, lambda: _batches(engine, read, where), None), source, {},
                  identifier(name, fallback="query"), _decimal)


def _only_table(where: str, tables: list[str]) -> str:
    if len(tables) == 1:
        return tables[0]
    if not tables:
        raise DataError(f"{where}: the database has no table; expected one to infer the features from "
                        "(or --query \"SELECT ...\")")
    raise UsageError(f"{where}: the database has {len(tables)} tables ({', '.join(tables)}); pick one with "
                     "--table NAME, or read a query with --query \"SELECT ...\"")


def _batches(engine: Engine, query: str, where: str) -> Iterator[Any]:
    try:
        yield from engine.batches(query, None, "", [], _BATCH)
    except Refused as error:
        raise DataError(f"{where}: the database refused the query: {error}") from None


def _connection(data: str, folder: str) -> str:
    """The `connection:` the spec names `data` by: a database file (or a file URL: duckdb:///x,
    sqlite:///x, relative to here) from the spec's folder; a server's URL as it is, but without a
    password, which the spec and the dataset's metadata would keep."""
    if "://" not in data:
        return path_from(os.path.abspath(data), folder)
    scheme, rest = data.split("://", 1)
    if scheme.lower() in _FILE_SCHEMES:
        path = rest[1:] if rest.startswith("/") else rest
        if not path or path == ":memory:":
            return data
        return f"{scheme.lower()}:///{path_from(os.path.abspath(path), folder)}"
    if _PASSWORD.match(data):
        raise UsageError(f"{masked(data)}: the URL holds a password, which the spec (and the dataset's metadata) "
                         "would keep; leave it out: the driver reads it from the environment or its own files "
                         "(PGPASSWORD, ~/.pgpass)")
    return data


def _decimal(kind: Any) -> str | None:
    if inexact(kind) is not None:
        return "a decimal has no exact mapping to a feature's numbers; give `source.decimals: float` or `text`"
    return None
