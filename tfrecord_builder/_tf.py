"""TensorFlow, imported on first use.

Importing TensorFlow costs about 3 s; the spec, the sources and the record encoder never need it,
so `validate` and the encoding path stay fast. Only the reading side calls `tensorflow()`.
"""
from __future__ import annotations

import contextlib
import importlib
import os
import sys
import tempfile
from types import ModuleType
from typing import Iterator

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # before the first import: fewer start-up logs


def tensorflow() -> ModuleType:
    """Returns the `tensorflow` module, importing it the first time."""
    module = sys.modules.get("tensorflow")
    if module is None:
        with _quiet_native_stderr():
            module = importlib.import_module("tensorflow")
    return module


@contextlib.contextmanager
def _quiet_native_stderr() -> Iterator[None]:
    """Holds back what native code writes to stderr (absl's start-up notes); replays it on failure."""
    try:
        saved = os.dup(2)
    except OSError:  # no file descriptor 2 (embedded interpreters): nothing to quiet
        yield
        return
    with tempfile.TemporaryFile() as capture:
        sys.stderr.flush()
        os.dup2(capture.fileno(), 2)
        try:
            yield
        except BaseException:
            os.dup2(saved, 2)
            capture.seek(0)
            sys.stderr.write(capture.read().decode("utf-8", "replace"))
            raise
        finally:
            os.dup2(saved, 2)
            os.close(saved)
