"""How an error message names a value: in the words of the data it came from.

A CSV has empty cells, not None; JSON has `true` and `null`, not True and None. A batch says
which language its values were written in (`Batch.language`), and messages show them that way.
"""
from __future__ import annotations

import json
from typing import Any, Literal

import numpy as np

# "text": CSV cells; "json": JSON values and Arrow's (Parquet: null, true); "python": a custom
# builder's Python objects
Language = Literal["text", "json", "python"]
_LIMIT = 40


def shown(value: Any, language: Language = "python") -> str:
    """`value` as its source would write it, cut to about 40 characters."""
    if isinstance(value, np.generic):
        value = value.item()
    if language == "text" and value is None:
        return "an empty cell"
    if language == "json":
        text = _json(value)
    else:
        text = repr(value)
    return text if len(text) <= _LIMIT else text[: _LIMIT - 3] + "..."


def _json(value: Any) -> str:
    try:  # (NaN and Infinity as Python's json module reads and writes them)
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)
