"""`source.connection` of `builder: sql`: which database engine reads the query, and where.

No connection: DuckDB in memory, over the files the query names (relative paths from the spec's
folder). `duckdb:///path.duckdb` or a path ending in `.duckdb`: a DuckDB database file;
`sqlite:///path.db` (or `.db`, `.sqlite`, `.sqlite3`): an SQLite file. Both are opened read-only.
A URL is never shown with its password (`masked`).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

ENGINES = ("duckdb", "sqlite")
_SQLITE_ENDINGS = (".db", ".sqlite", ".sqlite3")
_PASSWORD = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://[^:/@]*):[^@/]*@")


@dataclass(frozen=True)
class Target:
    """A database to read: the engine and its file (None: DuckDB in memory), and `folder`, where
    the relative file names of the query point from (the spec's)."""

    engine: str
    database: str | None
    folder: str


def masked(url: str) -> str:
    """The URL as it may be shown: a password replaced by ***."""
    return _PASSWORD.sub(r"\1:***@", url)


def target(connection: str | None, folder: str) -> tuple[Target | None, str | None]:
    """The database `connection` names (relative paths from `folder`), or what is wrong with it."""
    if connection is None:
        return Target("duckdb", None, folder), None
    scheme = urlsplit(connection).scheme.lower() if "://" in connection else ""
    if scheme:
        if scheme not in ENGINES:
            return None, (f"received a {scheme}: connection ({masked(connection)}); expected duckdb:///path.duckdb "
                          "or sqlite:///path.db (PostgreSQL and other servers are not read yet)")
        path = connection.split("://", 1)[1]
        path = path[1:] if path.startswith("/") else path
        # duckdb:///data.duckdb is relative, duckdb:////abs/data.duckdb absolute (SQLAlchemy's rule)
        if not path:
            return None, f"received {masked(connection)} without a file; expected {scheme}:///path"
        if scheme == "duckdb" and path == ":memory:":
            return Target("duckdb", None, folder), None
        return Target(scheme, os.path.join(folder, path), folder), None
    if connection.lower().endswith(".duckdb"):
        return Target("duckdb", os.path.join(folder, connection), folder), None
    if connection.lower().endswith(_SQLITE_ENDINGS):
        return Target("sqlite", os.path.join(folder, connection), folder), None
    return None, (f"received {masked(connection)!r}; expected duckdb:///path.duckdb, sqlite:///path.db, or a file "
                  f"path ending in .duckdb or {', '.join(_SQLITE_ENDINGS)}")
