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


def shortest_floats(value: Any) -> Any:
    """Floats (a NumPy scalar or array; nested lists for an array) as the shortest Python floats
    that read back as the same value of their own dtype: a float32 0.1 is `0.1`, not its float64
    expansion 0.10000000149011612, in an array as in a scalar (float64 values are as they are)."""
    array = np.asarray(value)
    if array.dtype == np.float64:
        return array.tolist()
    if array.ndim == 0:
        return float(np.format_float_positional(array[()], unique=True, trim="."))  # (NaN and ±inf too)
    return [shortest_floats(item) for item in array]
