"""The dtypes a spec may declare: how each is stored in a record and converted from raw values.

`tf.train.Example` has three list types (int64, float, bytes); the other dtypes are stored in the
nearest one and cast back on parse. float64 is stored as float32 (Example has no double list):
values are rounded to float32.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .shown import Language, shown
from .values import ListKind

TRUE_WORDS = {"true": True, "1": True, "false": False, "0": False}


_NO_VALUE = object()


class Invalid(ValueError):
    """Element `index` of a flat batch of values can't be converted: `before`, the value as its
    source writes it (when one is given), `after`. `text(language)` is the whole message."""

    def __init__(self, index: int, before: str, value: Any = _NO_VALUE, after: str = ""):
        self.index = index
        self.before, self.value, self.after = before, value, after
        super().__init__(self.message)

    def text(self, language: Language = "python") -> str:
        """The message, naming the value in the words of its source (`features/shown.py`)."""
        if self.value is _NO_VALUE:
            return self.before + self.after
        return f"{self.before}{shown(self.value, language)}{self.after}"

    @property
    def message(self) -> str:
        return self.text()

    def at(self, index: int) -> "Invalid":
        """The same fault, at another index (of a larger batch)."""
        return Invalid(index, self.before, self.value, self.after)


@dataclass(frozen=True)
class DType:
    """One declarable dtype."""

    name: str
    kind: ListKind  # the record list it is stored in
    tf: str  # the decoded tensor's tf dtype name
    low: int | float | None = None  # inclusive range of valid values (numbers)
    high: int | float | None = None

    @property
    def storage_tf(self) -> str:
        """The tf dtype the record list parses to."""
        return {"int64": "int64", "float": "float32", "bytes": "string"}[self.kind]

    @property
    def is_cast(self) -> bool:
        return self.tf != self.storage_tf

    @property
    def expected(self) -> str:
        if self.name == "bool":
            return "a boolean (true/false/1/0)"
        if self.kind == "bytes":
            return "a string" if self.name == "string" else "bytes or a string"
        if self.kind == "int64":
            return f"an integer in [{self.low}, {self.high}] ({self.name})"
        return f"a number ({self.name})"

    def convert(self, items: Sequence[Any] | np.ndarray, allow_nan: bool = False) -> np.ndarray | list[bytes]:
        """Converts a flat batch of raw values to the storage array; raises Invalid for a bad one."""
        if self.kind == "bytes":
            try:  # the common case, all text: one comprehension, no checks per item
                return [item.encode("utf-8") for item in items]
            except (AttributeError, UnicodeEncodeError):
                return [self._to_bytes(item, index) for index, item in enumerate(items)]
        array = items if isinstance(items, np.ndarray) else _asarray(items)
        if array.ndim != 1:  # a batch of one-item lists ([1], [[1]]) would pass as numbers
            index = next((index for index, item in enumerate(items) if np.ndim(item)), 0)
            raise Invalid(index, f"expected {self.expected}, received ", items[index])
        if array.dtype.kind in "iuf" and self.name != "bool" and not isinstance(items, np.ndarray):
            # NumPy turns [True, 5] into [1, 5]: a boolean is no number here
            flags = [index for index, item in enumerate(items) if type(item) is bool]
            if flags:
                raise Invalid(flags[0], f"expected {self.expected}, received ", items[flags[0]])
        if self.name == "bool":
            return self._bools(array, items)
        if self.kind == "int64":
            return self._ints(array, items)
        return self._floats(array, items, allow_nan)

    def _floats(self, array: np.ndarray, items: Sequence[Any] | np.ndarray, allow_nan: bool) -> np.ndarray:
        if array.dtype.kind in "fiu":
            values = array.astype(np.float64)
        elif array.dtype.kind in "US":
            try:
                values = array.astype(np.float64)
            except ValueError:
                raise self._first_bad(items, _parse_float) from None
        else:
            values = np.array([self._element(_parse_float, item, index) for index, item in enumerate(items)])
        if not allow_nan and len(values) and not np.isfinite(values).all():
            index = int(np.flatnonzero(~np.isfinite(values))[0])
            raise Invalid(index, "", items[index], " is not allowed (set `allow_nan: true` to keep NaN and inf)")
        with np.errstate(over="ignore"):  # rounds as the cast does: 3.4028235e38 is float32's max
            stored = values.astype(np.float16 if self.name == "float16" else np.float32)
        too_big = np.isinf(stored) & np.isfinite(values)
        if too_big.any():
            index = int(np.flatnonzero(too_big)[0])
            stored_as = " (stored as float32)" if self.name == "float64" else ""
            raise Invalid(index, "", items[index], f" is out of range for {self.name}{stored_as}")
        return stored.astype(np.float32)

    def _ints(self, array: np.ndarray, items: Sequence[Any] | np.ndarray) -> np.ndarray:
        kind = array.dtype.kind
        try:
            if kind in "iu":
                values = array
            elif kind == "f" and not isinstance(items, np.ndarray) and len(array) \
                    and not (np.abs(array) < _EXACT_FLOAT).all():
                # Python ints beside a float (JSON's 2.0): NumPy made them all floats, which round
                # integers from 2^53 on, so each is taken as it was given
                values = np.array([self._element(self._parse_int, item, index) for index, item in enumerate(items)],
                                  dtype=np.int64)
            elif kind == "f":
                if not (np.isfinite(array).all() and (array == np.round(array)).all()):
                    raise ValueError
                if len(array) and (array.max() >= 2.0**63 or array.min() < -(2.0**63)):
                    raise ValueError  # 2^63 as a float would pass the int64 bound, which rounds to it
                values = array
            elif kind in "US":
                try:
                    values = array.astype(np.int64)
                except (ValueError, OverflowError):  # e.g. "2.0", as pandas writes a column with gaps
                    values = np.array([self._element(self._parse_int, item, index) for index, item in enumerate(items)],
                                      dtype=np.int64)
            else:
                raise ValueError
            if len(values) and (values.min() < self.low or values.max() > self.high):
                raise ValueError
            return values.astype(np.int64)
        except (ValueError, OverflowError):
            raise self._first_bad(items, self._parse_int) from None

    def _bools(self, array: np.ndarray, items: Sequence[Any] | np.ndarray) -> np.ndarray:
        if array.dtype.kind == "b":
            return array.astype(np.int64)
        return np.array([self._element(_parse_bool, item, index) for index, item in enumerate(items)], np.int64)

    def _parse_int(self, item: Any) -> int:
        if isinstance(item, (bool, np.bool_)):
            raise ValueError
        if isinstance(item, (float, np.floating)):
            if not float(item).is_integer():
                raise ValueError
            item = int(item)
        if isinstance(item, (str, bytes)):
            text = item.decode("ascii", "replace") if isinstance(item, bytes) else item
            whole = _WHOLE_DECIMAL.match(text)
            value = int(whole.group(1)) if whole else int(text.strip())  # "2.0" is 2, as JSON's 2.0 is
        else:
            value = int(item)
        if not self.low <= value <= self.high:
            raise ValueError
        return value

    def _first_bad(self, items: Sequence[Any] | np.ndarray, parse: Any) -> Invalid:
        for index, item in enumerate(items):
            try:
                parse(item)
            except (ValueError, TypeError, OverflowError):
                return Invalid(index, f"expected {self.expected}, received ", item)
        return Invalid(0, f"expected {self.expected}")

    def _element(self, parse: Any, item: Any, index: int) -> Any:
        try:
            return parse(item)
        except (ValueError, TypeError, OverflowError):
            raise Invalid(index, f"expected {self.expected}, received ", item) from None

    def _to_bytes(self, item: Any, index: int) -> bytes:
        if isinstance(item, str):
            try:
                return item.encode("utf-8")
            except UnicodeEncodeError:
                raise Invalid(index, "text that is not valid UTF-8: ", item) from None
        if isinstance(item, (bytes, bytearray, memoryview, np.bytes_)):
            item = bytes(item)
            if self.name == "string":
                try:
                    item.decode("utf-8")
                except UnicodeDecodeError as error:
                    raise Invalid(index, f"bytes that are not valid UTF-8 (at byte {error.start})") from None
            return item
        if isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)):
            return str(item).encode()
        raise Invalid(index, f"expected {self.expected}, received ", item)


_EXACT_FLOAT = 2.0**53  # every integer below it is exactly a float64
_WHOLE_DECIMAL = re.compile(r"\s*([+-]?[0-9]+)\.0*\s*$")


def _asarray(items: Sequence[Any]) -> np.ndarray:
    try:
        return np.asarray(items)
    except (ValueError, OverflowError):
        return np.asarray(items, dtype=object)


def _parse_float(item: Any) -> float:
    if isinstance(item, (bool, np.bool_)) or item is None:
        raise ValueError
    return float(item)


def _parse_bool(item: Any) -> bool:
    if isinstance(item, (bool, np.bool_)):
        return bool(item)
    if isinstance(item, (int, np.integer)) and item in (0, 1):
        return bool(item)
    if isinstance(item, str) and item.strip().lower() in TRUE_WORDS:
        return TRUE_WORDS[item.strip().lower()]
    raise ValueError


_INT64 = (-(1 << 63), (1 << 63) - 1)
DTYPES: dict[str, DType] = {
    dtype.name: dtype
    for dtype in [
        DType("int64", "int64", "int64", *_INT64),
        DType("float32", "float", "float32"),
        DType("string", "bytes", "string"),
        DType("bytes", "bytes", "string"),
        DType("bool", "int64", "bool", 0, 1),
        DType("uint8", "int64", "uint8", 0, 255),
        DType("int32", "int64", "int32", -(1 << 31), (1 << 31) - 1),
        DType("float16", "float", "float16"),
        DType("float64", "float", "float64"),
    ]
}
