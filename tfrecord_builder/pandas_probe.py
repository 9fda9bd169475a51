"""pyarrow's look for pandas, made without importing pandas.

pyarrow's first conversion of a value imports pandas, if it is installed, to tell pandas' objects
apart, and keeps what it found: 0.2-0.35 s and 30 MB of every command and build that has not
imported pandas itself, and so hands Arrow no pandas object. There pyarrow looks while `import
pandas` fails (in this thread), and should pandas be imported after all (by a custom builder,
PySpark, the caller), pyarrow looks again as that import ends and tells pandas' objects apart as
always.
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import threading
from typing import Any


def look_without_pandas() -> None:
    """Has pyarrow, if imported and pandas isn't, look for pandas now and find none, and look
    again once pandas is imported."""
    if "pandas" in sys.modules or "pyarrow" not in sys.modules:
        return
    import pyarrow

    if not hasattr(getattr(pyarrow, "lib", None), "_pandas_api"):  # (another pyarrow: looking again needs it)
        return
    absent = _Absent(threading.get_ident())
    sys.meta_path.insert(0, absent)
    try:
        pyarrow.scalar(0)  # (its first conversion: where it looks)
    finally:
        sys.meta_path.remove(absent)
    if _LookAgain not in sys.meta_path:
        sys.meta_path.insert(0, _LookAgain)


class _Absent:
    """An import finder under which `import pandas` fails at once in the thread `thread` (another
    thread's imports go on as usual)."""

    def __init__(self, thread: int) -> None:
        self.thread = thread

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "pandas" and threading.get_ident() == self.thread:
            raise ModuleNotFoundError("pandas is not looked for here", name=name)


class _LookAgain:
    """An import finder that finds pandas as the others do, once, and has pyarrow look again when
    it is imported."""

    @staticmethod
    def find_spec(name: str, path: Any = None, target: Any = None) -> Any:
        if name != "pandas":
            return None
        try:
            sys.meta_path.remove(_LookAgain)
        except ValueError:  # (another thread's import of pandas got here first)
            return None
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _ThenArrow(spec.loader)
        return spec


class _ThenArrow(importlib.abc.Loader):
    """pandas' own loader, then pyarrow told it is there."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def __getattr__(self, name: str) -> Any:  # (resources and the rest: the loader's own)
        return getattr(self._loader, name)

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        try:
            import pyarrow.lib

            pyarrow.lib._pandas_api.pd  # noqa: B018  (an accessor that looks for pandas again when it found none)
        except Exception:  # (never pandas' import failing for it: Arrow's own pandas calls look again too)
            pass
