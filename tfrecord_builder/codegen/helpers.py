"""Copies reading helpers from `features/reading.py` into generated modules, verbatim.

Both reading paths then run the very same function text. The source is read with `ast`, not
imported, because importing it would import TensorFlow.
"""
from __future__ import annotations

import ast
import os
from functools import lru_cache

from .. import features

_SOURCE = os.path.join(os.path.dirname(os.path.abspath(features.__file__)), "reading.py")


@lru_cache(maxsize=1)
def _functions() -> dict[str, str]:
    with open(_SOURCE, encoding="utf-8") as file:
        text = file.read()
    tree = ast.parse(text)
    return {node.name: ast.get_source_segment(text, node) for node in tree.body if isinstance(node, ast.FunctionDef)}


ALWAYS = ["read_shard", "counted_batches", "positive_batch_size", "batched_records"]  # every module reads (and checks) shards the same way


def helper_functions(names: list[str]) -> str:
    """The source of the shard readers and the named helpers (and `decode_image`, which the image
    helpers use)."""
    functions = _functions()
    needs_decoder = any(name.endswith("_images") for name in names)
    ordered = ALWAYS + (["decode_image"] if needs_decoder else []) + [
        name for name in names if name not in ALWAYS and name != "decode_image"]
    return "\n\n" + "\n\n\n".join(functions[name] for name in ordered) + "\n"
