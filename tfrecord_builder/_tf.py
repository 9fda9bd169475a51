"""TensorFlow, imported on first use.

Importing TensorFlow costs about 3 s; the spec, the sources and the record encoder never need it,
so `validate` and the encoding path stay fast. Only the reading side calls `tensorflow()`.
"""
from __future__ import annotations

import importlib
import os
from types import ModuleType

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # before the first import: keep TF's start-up logs quiet


def tensorflow() -> ModuleType:
    """Returns the `tensorflow` module, importing it the first time."""
    return importlib.import_module("tensorflow")
