"""Copies the reading functions of `read/tfdata.py` into generated modules, verbatim.

Both reading paths then run the very same text. The source is read with `ast`, not imported,
because importing it would import TensorFlow.
"""
from __future__ import annotations

import ast
import os
from functools import lru_cache


# read as a file, not imported: the reading side sits above this one (tests/test_layers.py)
_SOURCE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "read", "tfdata.py")


@lru_cache(maxsize=1)
def helper_source() -> str:
    """reading.py after its docstring and imports: its constants and functions, as written."""
    with open(_SOURCE, encoding="utf-8") as file:
        text = file.read()
    tree = ast.parse(text)
    body = [node for node in tree.body if not isinstance(node, (ast.Import, ast.ImportFrom))
            and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))]
    lines = text.splitlines(keepends=True)
    return "".join(lines[body[0].lineno - 1:]).rstrip("\n") + "\n"
