"""`source.connection` of `builder: sql`: which database engine reads the query, and where.

No connection: DuckDB in memory, over the files the query names (relative paths from the spec's
folder). `duckdb:///path.duckdb` or a path ending in `.duckdb`: a DuckDB database file;
`sqlite:///path.db` (or `.db`, `.sqlite`, `.sqlite3`): an SQLite file. Both are opened read-only.
`postgresql://user@host:port/db` (or `postgres://`): a PostgreSQL server, its password from the
URL, PGPASSWORD or ~/.pgpass (PGPASSFILE), as libpq finds it, within CONNECT_SECONDS unless the URL
says `connect_timeout`. A URL is never shown with its password (`masked`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from ..spec.urls import masked

__all__ = ["ENGINES", "Target", "masked", "shown", "target"]
ENGINES = ("duckdb", "sqlite", "postgresql", "postgres")
_SQLITE_ENDINGS = (".db", ".sqlite", ".sqlite3")
CONNECT_SECONDS = 10  # a server that doesn't answer (or never speaks) is said within this


@dataclass(frozen=True)
class Target:
    """A database to read: the engine and its file (None: DuckDB in memory; a server's: its URL),
    and `folder`, where the relative file names of the query point from (the spec's)."""

    engine: str
    database: str | None
    folder: str


def shown(url: str) -> str:
    """A server's URL as a message names it: user, host, port and database, no password."""
    parts = urlsplit(url)
    user = unquote(parts.username) + "@" if parts.username else ""
    host = parts.hostname or "localhost"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{user}{host}{port}{parts.path}"


def _server(connection: str) -> str:
    """A PostgreSQL URL as libpq takes it: postgresql://, a connect timeout unless it names one."""
    url = "postgresql://" + connection.split("://", 1)[1]
    if "connect_timeout=" not in url:
        url += ("&" if "?" in url else "?") + f"connect_timeout={CONNECT_SECONDS}"
    return url


def target(connection: str | None, folder: str) -> tuple[Target | None, str | None]:
    """The database `connection` names (relative paths from `folder`), or what is wrong with it."""
    if connection is None:
        return Target("duckdb", None, folder), None
    scheme = urlsplit(connection).scheme.lower() if "://" in connection else ""
    if scheme:
        if scheme not in ENGINES:
            return None, (f"received a {scheme}: connection ({masked(connection)}); expected duckdb:///path.duckdb, "
                          "sqlite:///path.db or postgresql://user@host:port/database")
        if scheme in ("postgresql", "postgres"):
            try:
                urlsplit(connection).port
            except ValueError:
                return None, f"received {masked(connection)}: its port is not a number; expected host:port"
            return Target("postgresql", _server(connection), folder), None
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
    return None, (f"received {masked(connection)!r}; expected duckdb:///path.duckdb, sqlite:///path.db, "
                  "postgresql://user@host:port/database, or a file "
                  f"path ending in .duckdb or {', '.join(_SQLITE_ENDINGS)}")
