"""Which engine reads a `builder: sql` connection: DuckDB and SQLite (sql_engines.py), or a
PostgreSQL server (sql_postgres.py). The one place that chooses, for the builder and `infer`."""
from __future__ import annotations

import os

from .sql_connection import Target
from .sql_engines import DuckEngine, Engine, Refused, SqliteEngine
from .sql_postgres import PostgresEngine


def opened(target: Target, decimals: str | None = None) -> Engine:
    """An engine reading `target`'s database (a file must exist: a DataError-worthy Refused if
    not); `decimals` is the spec's rule for a server's NUMERIC, which the server casts."""
    if target.engine == "postgresql":
        return PostgresEngine(target, decimals)
    if target.database is not None and not os.path.isfile(target.database):
        raise Refused(f"{target.database}: no such database file")
    return DuckEngine(target) if target.engine == "duckdb" else SqliteEngine(target)
