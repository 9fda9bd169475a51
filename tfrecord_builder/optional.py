"""The optional libraries of the extras (duckdb, ADBC's PostgreSQL driver, deltalake, pyiceberg),
imported on first use.

Imported at start-up they would cost about half a second (pyiceberg brings pydantic, ADBC brings
polars) in every command and in every worker process of every build, whatever its source; the
source that needs one imports it when it first reads. Each caller says in its own words which
extra to install when the library is missing (None here).
"""
from __future__ import annotations

import functools
import importlib
from types import ModuleType


@functools.cache
def imported(name: str) -> ModuleType | None:
    """The module `name`, imported the first time it is asked for; None if it isn't installed."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None
