"""Columns held as Arrow arrays, not Python objects: `TextCells` (CSV cells, as text) and
`JsonValues` (JSON values, typed by the spec).

The fast readers (csv_blocks.py, json_blocks.py) hand columns over this way. A tensor feature
converts them at once with Arrow's compute functions (`scalars`, `lists`, `strings`), and only
where Python's own parsing reads the values the same way; anything else (a missing value, a JSON
list cell, a bad value) returns None, and the feature takes the careful path over `cells()`,
which gives the same values and the same error messages as the plain readers.
"""
from __future__ import annotations

from typing import Any, Iterator, Sequence

import numpy as np

# Where Arrow's cast reads text made of these characters only, Python's int() and float() read
# it the same (tests/builders/test_fast_readers.py checks it); other spellings ("1_000", " 5",
# "nan", "0x1", "nan(1)", which Arrow reads but Python doesn't...) take the careful path. A
# character check is three times cheaper than a regular expression.
_CHARACTERS = {"int64": "-0123456789", "float": "-+.0123456789eE"}
_LIST_CHARACTERS = " -+.0123456789eE"  # space-separated numbers


# What pandas' read_csv reads as missing by default (`options: {na_values: pandas}`)
PANDAS_NA_VALUES = ("", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null")


def na_value_set(option: Any) -> frozenset[str]:
    """The texts an `na_values` option names (`pandas`: pandas' defaults)."""
    if option is None:
        return frozenset()
    if option == "pandas":
        return frozenset(PANDAS_NA_VALUES)
    return frozenset(str(value) for value in option)


def na_values_problem(option: Any) -> str | None:
    """What is wrong with an `na_values` option, or None."""
    if option == "pandas" or (isinstance(option, list) and all(
            isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)) for value in option)):
        return None
    return ("expected a list of texts read as missing values, e.g. [NA, \"-\"] (R writes NA), "
            "or pandas (pandas' read_csv defaults)")


def missing_as_none(cells: Sequence[str], na_values: frozenset[str] = frozenset()) -> Sequence[str | None]:
    """An empty CSV cell is a missing value, and so is one of the `na_values`."""
    if na_values:
        return [None if not cell or cell in na_values else cell for cell in cells]
    return [cell or None for cell in cells] if "" in cells else cells


def missing_rows(column: Sequence[Any]) -> np.ndarray:
    """Per row of a batch's column: whether its value is missing (null, None, an empty CSV cell),
    as the feature types see it before a `default:` fills it. For statistics."""
    if isinstance(column, ArrowCells):
        import pyarrow.compute as pc

        missing = pc.is_null(column.array)
        if isinstance(column, TextCells):
            missing = pc.or_(missing, pc.equal(column.array, ""))
        return pc.fill_null(missing, True).to_numpy(zero_copy_only=False).astype(bool)
    if isinstance(column, np.ndarray) and column.dtype != object:
        return np.zeros(len(column), dtype=bool)
    return np.fromiter((value is None for value in column), dtype=bool, count=len(column))


class ArrowCells:
    """A batch's column as one Arrow array; as a sequence, its values as Python objects."""

    cells_kind = ""

    def __init__(self, array: Any):
        self.array = array
        self._cells: Sequence[Any] | None = None

    def __len__(self) -> int:
        return len(self.array)

    def __getitem__(self, index: int) -> Any:
        return self.cells()[index]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.cells())

    def __getstate__(self) -> dict[str, Any]:
        return {"array": self.array}  # the Python values are rebuilt where they are needed

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.array, self._cells = state["array"], None

    def taken(self, rows: Sequence[int]) -> "ArrowCells":
        """The cells at `rows`, still one Arrow array: a part of a batch (the rows around a bad
        one) converts at once too, rather than value by value."""
        return type(self)(self.array.take(np.asarray(rows, dtype=np.int64)))

    def cells(self) -> Sequence[Any]:
        """Every value as the plain reader would give it."""
        if self._cells is None:
            self._cells = self._python_values()
        return self._cells

    def _python_values(self) -> Sequence[Any]:
        return self.array.to_pylist()


class TextCells(ArrowCells):
    """A column of CSV cells, as text; an empty cell is a missing value, as in the csv module's reader
    (the reader makes a cell of the `na_values` empty)."""

    cells_kind = "text"

    def _python_values(self) -> Sequence[str | None]:
        return missing_as_none(self.array.to_pylist())

    def scalars(self, kind: str) -> np.ndarray | None:
        """Every cell as an int64 ("int64") or float64 ("float") array, if all are plain numbers."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if not len(self.array):
            return None
        if not _made_of(self.array, _CHARACTERS[kind]):
            return None
        try:
            converted = pc.cast(self.array, pa.int64() if kind == "int64" else pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None  # e.g. an integer beyond int64: the careful path says which
        return converted.to_numpy(zero_copy_only=False)

    def lists(self, kind: str, depth: int, empty_is_empty: bool) -> tuple[np.ndarray, list[np.ndarray]] | None:
        """Space-separated numbers per cell: (flat values, [counts per cell]), if all are plain.

        Cells hold one level of list (`depth` 1). An empty cell is an empty list only if
        `empty_is_empty` (a variable length and no default).
        """
        import pyarrow as pa
        import pyarrow.compute as pc

        if depth != 1 or not len(self.array) or not _made_of(self.array, _LIST_CHARACTERS):
            return None
        empty = pc.equal(self.array, "")
        array = self.array
        if bool(pc.any(empty).as_py()):
            if not empty_is_empty:
                return None
            array = pc.if_else(empty, pa.scalar(None, pa.string()), array)
        split = pc.split_pattern(array, " ")  # one space apart; other spacing takes the careful path
        tokens = pc.list_flatten(split)
        counts = pc.fill_null(pc.list_value_length(split), 0).to_numpy(zero_copy_only=False).astype(np.int64)
        if len(tokens) and not _made_of(tokens, _CHARACTERS[kind]):
            return None
        try:
            flat = pc.cast(tokens, pa.int64() if kind == "int64" else pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None
        return flat.to_numpy(zero_copy_only=False), [counts]

    def strings(self) -> list[bytes] | None:
        """Every cell's UTF-8 bytes, if none is empty (an empty cell is missing)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if not len(self.array) or bool(pc.any(pc.equal(pc.utf8_length(self.array), 0)).as_py()):
            return None
        return self.array.cast(pa.binary()).to_pylist()


class JsonValues(ArrowCells):
    """A column of JSON values parsed by Arrow to the type the spec asks for (json_blocks.py);
    `cells()` gives them as json.loads would (numbers in a float column as floats)."""

    cells_kind = "json"

    def scalars(self, kind: str) -> np.ndarray | None:
        """The values as an int64 or float64 array, when none is missing and the type fits."""
        import pyarrow as pa

        array = self.array
        if array.null_count or not self._fits(array.type, kind):
            return None
        return array.cast(pa.float64() if kind == "float" else pa.int64()).to_numpy(zero_copy_only=False)

    def strings(self) -> list[bytes] | None:
        import pyarrow as pa

        if self.array.null_count or not pa.types.is_string(self.array.type):
            return None
        return self.array.cast(pa.binary()).to_pylist()

    def lists(self, kind: str, depth: int, empty_is_empty: bool = False) -> tuple[np.ndarray, list[np.ndarray]] | None:
        """(flat values, lengths at each of the `depth` list levels, outermost first), when no
        list or value is missing and the innermost type fits (a null list is missing, whatever
        `empty_is_empty` says: the careful path knows its meaning)."""
        import pyarrow as pa

        array, lengths = self.array, []
        for _ in range(depth):
            if array.null_count or not pa.types.is_list(array.type):
                return None
            lengths.append(np.diff(array.offsets.to_numpy()).astype(np.int64))
            array = array.flatten()
        if array.null_count or not self._fits(array.type, kind):
            return None
        flat = array.cast(pa.float64() if kind == "float" else pa.int64()).to_numpy(zero_copy_only=False)
        return flat, lengths


    @staticmethod
    def _fits(type_: Any, kind: str) -> bool:
        return _fits(type_, kind)


class TypedValues(JsonValues):
    """A column of a typed Arrow source (a database's result) whose `cells()` are its values as
    Python objects: whole numbers, floats, text. As JsonValues, except that a column goes at once
    only to a feature of its own kind: integers to an integer feature, floats to a float one
    (Arrow refuses to cast an integer past 2**53 to float64; the careful path converts it)."""

    cells_kind = "json"

    @staticmethod
    def _fits(type_: Any, kind: str) -> bool:
        import pyarrow as pa

        return bool(pa.types.is_int64(type_) if kind == "int64" else pa.types.is_float64(type_))


def _made_of(array: Any, characters: str) -> bool:
    """Every value of a string array holds only these (ASCII) characters: its values' bytes, less
    those characters, are none (`bytes.translate`, 4-7 times faster than Arrow's trim, length and
    compare). An array with nulls, whose slots may hold any bytes, is asked value by value."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not isinstance(array, pa.Array) or array.null_count or not (pa.types.is_string(array.type)
                                                                   or pa.types.is_large_string(array.type)):
        return not bool(pc.any(pc.not_equal(pc.utf8_length(pc.utf8_trim(array, characters)), 0)).as_py())
    _, offsets, data = array.buffers()
    if data is None or not len(array):
        return True
    width = np.dtype(np.int64 if pa.types.is_large_string(array.type) else np.int32)
    first, last = np.frombuffer(offsets, width, len(array) + 1, array.offset * width.itemsize)[[0, -1]].tolist()
    return not memoryview(data)[first:last].tobytes().translate(None, characters.encode("ascii"))


def _fits(type_: Any, kind: str) -> bool:
    import pyarrow as pa

    return pa.types.is_int64(type_) or (kind == "float" and pa.types.is_float64(type_))
