"""A batch of raw values flattened for a tensor feature: every row checked against the declared
shape and laid end to end, with each row's count (`Rows`). The feature then converts the flat
values to its dtype (features/dtypes.py) and words any fault with the row's place.

Lists come as lists (JSON, Parquet, builders) or as text in a cell: a JSON array
(`[0.5, 1, 2.5]`, `[[1, 2], [3, 4]]`) or whitespace-separated values (`0.5 1 2.5`).
"""
from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .shown import Language, shown


class BadRow(ValueError):
    """A row's value has the wrong structure (shape or list syntax); the message says how."""


@dataclass(frozen=True)
class Rows:
    """How the rows of a feature of `shape` (a first dimension of None: variable) and `dtype`
    (of storage kind `kind`) are flattened; `default` fills a missing row."""

    shape: list[int | None]
    dtype: str
    kind: str  # int64, float or bytes
    default: Any = None

    @property
    def is_variable(self) -> bool:
        return bool(self.shape) and self.shape[0] is None

    @property
    def inner_size(self) -> int:
        """Values per row (variable shapes: per entry of the first dimension)."""
        return math.prod(self.shape[1:] if self.is_variable else self.shape)

    def at_once(self, values: Sequence[Any]) -> tuple[Any, np.ndarray] | None:
        """A batch of lists (as JSON and builders give them) flattened in one NumPy call instead
        of one per row; None when anything needs the careful row-by-row path (`items`: text
        cells, missing values, a wrong shape), which then also explains what is wrong."""
        if not values or not all(type(value) in (list, tuple) for value in values):
            return None
        if self.shape == [None]:
            if any(type(item) in (list, tuple, dict) for value in values for item in value[:1]):
                return None  # nested lists: let the row path say which row is ragged
            counts = np.fromiter((len(value) for value in values), dtype=np.int64, count=len(values))
            return list(itertools.chain.from_iterable(values)), counts
        if self.is_variable:
            return None
        try:
            array = np.asarray(values)
        except (ValueError, TypeError):
            return None
        # numbers only: NumPy's fixed-width strings would drop trailing NUL characters
        if array.shape != (len(values), *self.shape) or array.dtype.kind not in "iufb":
            return None
        if array.dtype.kind == "f" and self.kind == "int64":
            return None  # ints beside a float (2.0) became floats, which round from 2^53 on
        return array.reshape(-1), np.full(len(values), self.inner_size, dtype=np.int64)

    def items(self, value: Any, language: Language) -> list[Any]:
        """One row's values, flattened after checking them against the shape; BadRow if they
        don't fit (or are missing with no default)."""
        if isinstance(value, str) and language == "json":  # JSON and Parquet give lists as lists
            raise BadRow(f"expected a list of shape {format_shape(self.shape)}, received the string {value!r:.40}")
        if value is None:
            if self.default is None:
                if self.is_variable:
                    return []
                raise BadRow("missing value (the spec gives no `default`)")
            if not self.is_variable and np.ndim(self.default) == 0:
                return [self.default] * self.inner_size  # a scalar default fills a fixed shape
            value = self.default
        if isinstance(value, str) and self.shape == [None] and not value.lstrip().startswith("["):
            return value.split()  # the common case of a list cell, without NumPy per row
        return self._structure(value, language)

    def _structure(self, value: Any, language: Language) -> list[Any]:
        if isinstance(value, str):
            value = parse_list_text(value)
        elif isinstance(value, (bytes, bytearray)) and self.kind != "bytes":
            raise BadRow(f"expected a list of {self.dtype}, received bytes")
        if isinstance(value, np.ndarray):
            array = value
        elif isinstance(value, (list, tuple)):
            try:
                array = np.asarray(value, dtype=object)
            except ValueError:
                raise BadRow(f"expected a list of shape {format_shape(self.shape)}, received a ragged list") from None
        elif self.shape == [None] and self.kind == "bytes" and isinstance(value, bytes):
            array = np.asarray([value], dtype=object)
        else:
            raise BadRow(f"expected a list of shape {format_shape(self.shape)}, received {shown(value, language)}")
        if array.dtype == object and array.size and any(isinstance(item, (list, tuple)) for item in array.flat):
            raise BadRow(f"expected a list of shape {format_shape(self.shape)}, received a ragged list")
        return self._fitted(array)

    def _fitted(self, array: np.ndarray) -> list[Any]:
        shape = list(array.shape)
        inner = self.inner_size
        if self.is_variable:
            fits = shape[1:] == self.shape[1:] or (array.ndim == 1 and array.size % inner == 0)
            if array.ndim == 0:
                fits = False
        else:
            fits = shape == self.shape or (array.ndim == 1 and array.size == inner)
        if not fits:
            raise BadRow(f"expected shape {format_shape(self.shape)}, received shape {format_shape(shape)}"
                         f" ({array.size} values)")
        return array.reshape(-1).tolist() if array.dtype == object else list(array.reshape(-1))


def steps(value: Any, language: Language) -> list[Any]:
    """One record's steps of a sequence feature (None: none); BadRow if it isn't a list."""
    if value is None:
        return []
    if isinstance(value, str) and language != "json":
        value = parse_list_text(value)
    if isinstance(value, np.ndarray):
        return list(value) if value.ndim else [value.item()]
    if not isinstance(value, (list, tuple)):
        raise BadRow(f"expected a list of steps, received {shown(value, language)}")
    return list(value)


def format_shape(shape: Sequence[int | None]) -> str:
    return "[" + ", ".join("null" if dim is None else str(dim) for dim in shape) + "]"


def parse_list_text(text: str) -> list[Any]:
    """A list written in a text cell: a JSON array, or whitespace-separated values."""
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            return json.loads(stripped)
        except json.JSONDecodeError as error:
            raise BadRow(f"a list cell starting with `[` must be a JSON array: {error.msg} at column {error.pos + 1}") from None
    return stripped.split()
