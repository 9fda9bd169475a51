"""What a column's values say: their dtype, the shape of list cells, missing values and the
distinct values, read the way the build will read them.

`profile` walks the values once and counts what it sees; `guess` turns the counts into a
declaration (dtype, shape, default) and the notes that explain it. Values come as a source gives
them: CSV cells as text ("text": "5", "0.5 1.5", "[1, 2]", "true", "NA"), JSON and Parquet
values as Python objects ("json"). The rules follow what the features accept (features/dtypes.py,
features/rows.py), so a declaration guessed here reads every value it was guessed from.
"""
from __future__ import annotations

import datetime
import decimal
import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ...errors import DataError
from ...features.cells import PANDAS_NA_VALUES
from ...features.shown import Language, shown

# texts that exports write for a missing value (pandas' list: R's NA and NaN are in it); one of
# them is taken for a missing value only where the column's other values are numbers or booleans
NA_TEXTS = frozenset(PANDAS_NA_VALUES) - {""}
MAX_DISTINCT = 1000  # distinct values counted per column (more: "many", never a class label)
_INT = re.compile(r"\s*[+-]?[0-9]+\s*\Z")
_FLOAT = re.compile(r"\s*[+-]?(?:[0-9]+\.?[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?"
                    r"|inf|infinity)\s*\Z", re.IGNORECASE)
_WHOLE = re.compile(r"\s*[+-]?[0-9]+\.0*\s*\Z")  # 2.0: how pandas writes an integer column with gaps
_BOOL_WORDS = {"true": True, "false": False}
_INT64 = (-(1 << 63), (1 << 63) - 1)
_NUMBERS = {"int", "float"}
_KIND_WORDS = {"bool": "a boolean", "int": "a number", "float": "a number", "bigint": "a number", "text": "text",
               "list": "a list", "object": "an object", "bytes": "bytes", "time": "a date or time"}
_DEFAULTS = {"int64": 0, "float32": 0.0, "bool": False, "string": "", "bytes": ""}

Where = Callable[[int], str]  # row index -> its place, e.g. "rows.csv, line 4"


@dataclass
class Profile:
    """Counts over a column's values. Rows are indices into the values given to `profile`."""

    rows: int = 0
    missing: int = 0  # None: an empty cell, a null, an absent key
    kinds: Counter = field(default_factory=Counter)  # "int", "float", "text", "list", ...
    first: dict[str, int] = field(default_factory=dict)  # kind -> the first row holding one
    examples: dict[str, Any] = field(default_factory=dict)  # kind -> that row's value, as given
    na_texts: Counter = field(default_factory=Counter)  # NA spellings seen, by text
    values: Counter = field(default_factory=Counter)  # scalar values (kind, value) -> count
    many: bool = False  # more than MAX_DISTINCT distinct values
    whole_floats: bool = True  # every float was written as a whole number (2.0)
    nonfinite_row: int | None = None  # the first inf, -inf or NaN among the numbers
    low: float | None = None  # the least finite number (an int64 default below it is one the data never holds)
    dims: Counter = field(default_factory=Counter)  # list cells: their nested lengths, or None if ragged
    ragged_row: int | None = None
    elements: "Profile | None" = None  # list cells: every item, profiled as one column
    json_lists: int = 0  # CSV cells written as JSON arrays
    words: bool = False  # CSV cells read as lists of words (see `profile`)


@dataclass
class Guess:
    """A column's declaration, or why it has none (`problem`), with notes for the spec's comments."""

    dtype: str | None
    shape: list[int | None] = field(default_factory=list)
    default: Any = None  # None: no default needed
    allow_nan: bool = False
    notes: list[str] = field(default_factory=list)
    problem: str | None = None  # set when the column can't be a feature (it is left out)
    missing: int = 0
    present: int = 0
    mixed: bool = False  # values of several kinds, kept as text
    times: bool = False  # dates and times (Parquet), kept as ISO 8601 text
    distinct: dict[Any, int] | None = None  # scalar values by count (None: too many, or not scalars)


def profile(values: Sequence[Any], language: Language, na_applies: bool = True, words: bool = False) -> Profile:
    """Counts what `values` hold. `na_applies`: whether a whole value may be an NA spelling (not
    items inside lists, which `na_values` leaves alone); `words`: CSV cells are lists, words
    apart by spaces where they aren't JSON arrays (as a list feature reads them)."""
    counts = Profile(rows=len(values), words=words)
    elements: list[Any] = []
    element_rows: list[int] = []
    memo: dict[str, tuple[str, Any]] = {}  # text cells repeat (classes, flags): each is read once
    for row, value in enumerate(values):
        if value is None:
            counts.missing += 1
            continue
        if language == "text" and isinstance(value, str):
            kind_value = memo.get(value)
            if kind_value is None:
                kind_value = _text_cell(value, words)
                if len(memo) < 100_000:
                    memo[value] = kind_value
            kind, parsed = kind_value
        else:
            kind, parsed = _json_value(value)
        counts.kinds[kind] += 1
        if kind not in counts.first:
            counts.first[kind], counts.examples[kind] = row, value
        if kind == "text" and na_applies and value in NA_TEXTS:
            counts.na_texts[value] += 1
        if kind == "list":
            if language == "text" and isinstance(value, str) and value.lstrip().startswith("["):
                counts.json_lists += 1
            dims = _dims(parsed)
            counts.dims[dims] += 1
            if dims is None:
                counts.ragged_row = row if counts.ragged_row is None else counts.ragged_row
                continue
            flat = list(_flat(parsed))
            elements.extend(flat)
            element_rows.extend([row] * len(flat))
            continue
        if kind in _NUMBERS and math.isfinite(float(parsed)):
            counts.low = parsed if counts.low is None else min(counts.low, parsed)
        if kind == "float":
            number = float(parsed)
            if not math.isfinite(number):
                counts.nonfinite_row = row if counts.nonfinite_row is None else counts.nonfinite_row
                counts.whole_floats = False
            elif abs(number) >= 2.0**53 or not (_WHOLE.match(value) if isinstance(value, str) else number.is_integer()):
                counts.whole_floats = False
        if not counts.many and kind != "object":  # (objects can't be counted: a dict isn't hashable)
            key = (kind, parsed.strip() if isinstance(parsed, str) else parsed)
            if key not in counts.values and len(counts.values) >= MAX_DISTINCT:
                counts.many = True
            else:
                counts.values[key] += 1
    if counts.kinds["list"]:
        inner = profile(elements, "json", na_applies=False)
        # an item's row is its cell's row, for messages
        inner.first = {kind: element_rows[row] for kind, row in inner.first.items()}
        counts.elements = inner
    return counts


def guess(counts: Profile, column: str, where: Where, language: Language,
          na_values: frozenset[str] = frozenset(), unit: str = "rows") -> Guess:
    """The declaration `counts` support. `na_values`: texts read as missing (the source's
    `na_values` option); `where(row)` names a row in notes and errors; `unit` what a value is
    (rows, steps, sequences).

    Raises DataError for JSON values of kinds no one dtype reads (a number among words)."""
    kinds = Counter({kind: count for kind, count in counts.kinds.items() if count})
    na_count = sum(count for text, count in counts.na_texts.items() if text in na_values)
    if na_count:
        kinds["text"] -= na_count
        kinds = +kinds
    missing = counts.missing + na_count
    present = counts.rows - missing
    distinct = None
    if not counts.many:
        distinct = {value: count for (kind, value), count in counts.values.items()
                    if not (kind == "text" and value in na_values)}
    if "object" in kinds:
        return Guess(None, problem=f"{_place(counts, 'object', where)} holds an object (a JSON object or a struct); "
                                   "no dtype reads one")
    if "list" in kinds:
        unlisted = sum(count for text, count in counts.na_texts.items() if text not in na_values)
        return _list_guess(counts, kinds, column, where, language, missing, present, unit, unlisted)
    dtype, note, mixed = _scalar_dtype(counts, kinds, column, where, language)
    found = Guess(dtype, missing=missing, present=present, mixed=mixed, distinct=distinct,
                  times=set(kinds) == {"time"})
    if note:
        found.notes.append(note)
    if dtype == "float32" and missing and kinds.keys() <= _NUMBERS and counts.whole_floats and kinds["float"]:
        # pandas writes an integer column with gaps as floats: 2.0 is the integer 2 to every source
        found.dtype = "int64"
        found.notes.append("guessed: whole numbers written as 2.0 (as pandas writes an integer column with gaps)")
    if counts.nonfinite_row is not None and found.dtype == "float32":
        found.allow_nan = True
        found.notes.append(f"{where(counts.nonfinite_row)} holds inf or NaN: kept (allow_nan)")
    if missing:
        _fill(found, counts, counts.rows, unit)
    return found


def _fill(found: Guess, counts: Profile, rows: int, unit: str, fills: bool = False) -> None:
    """The default for missing values. Numbers get one no value of the data is, so a gap stays
    visible to a model and statistics count it apart (a 0 would pass for a value and move the
    mean): floats NaN (`allow_nan`), as pandas reads a gap; whole numbers stay int64 (an
    IntegerLookup, an Embedding or a count wants whole numbers, which NaN would make float) with
    -1, or one less than the least value when that is negative. Others: false, the empty text."""
    missing, present = found.missing, found.present
    shape = " (fills the shape)" if fills else ""
    if found.dtype == "float32" and present:
        found.default, found.allow_nan = math.nan, True
        found.notes.append(f"guessed: {missing:,} of {rows:,} {unit} missing -> default NaN{shape}, not 0, "
                           "which would pass for a value; statistics count them apart (impute in the model)")
        return
    if found.dtype == "int64" and present and counts.low is not None:
        low = int(counts.low)
        found.default = -1 if low >= 0 else low - 1
        if found.default >= _INT64[0]:
            least = f"its least value is {low}"
            found.notes.append(f"guessed: {missing:,} of {rows:,} {unit} missing -> default {found.default}{shape}, "
                               f"a value the data never holds ({least}), so a gap stays recognisable as int64 "
                               "(for NaN instead: dtype float32, default .nan, allow_nan true)")
            return
    found.default = _DEFAULTS[found.dtype]
    found.notes.append(_missing_note(missing, rows, found.default, present, unit, fills))


def _scalar_dtype(counts: Profile, kinds: Counter, column: str, where: Where,
                  language: Language) -> tuple[str, str | None, bool]:
    """(dtype, a note, whether the values were of mixed kinds and kept as text)."""
    present = set(kinds)
    if not present:
        return "string", None, False
    if present == {"bool"}:
        return "bool", None, False
    if present == {"int"}:
        return "int64", None, False
    if present <= _NUMBERS:
        return "float32", None, False
    if present == {"text"}:
        return "string", None, False
    if present == {"bytes"}:
        return "bytes", None, False
    if present == {"time"}:
        return "string", "dates and times stored as ISO 8601 text (or int64 with time_unit; see docs/dates-and-times.md)", False
    if present <= {"int", "bigint"}:
        return "string", f"{_place(counts, 'bigint', where)}: a number beyond int64, so kept as text", False
    if present <= {"int", "bigint", "float"}:  # beside fractions, a huge whole number is one more float
        return "float32", None, False
    # several kinds: a CSV cell is text whatever it says; JSON strings take whole numbers as text
    if language == "text" or present <= {"int", "bigint", "text"}:
        return "string", f"mixed: {_mixture(counts, kinds, where, language)}; kept as text", True
    raise _mixed_error(counts, kinds, column, where)


def _list_guess(counts: Profile, kinds: Counter, column: str, where: Where, language: Language,
                missing: int, present: int, unit: str, unlisted_na: int) -> Guess:
    """Lists: their shape from their nested lengths, their dtype from their items.
    `unlisted_na`: NA spellings not read as missing (cells that are words, read as words)."""
    scalars = set(kinds) - {"list"}
    # a lone value in a cell is a list of one: a number, or (read as words) an NA spelling that
    # isn't missing; text that starts with `[` and isn't a JSON array is no list at all
    words = counts.words and kinds["text"] == unlisted_na
    lone = _NUMBERS | ({"text"} if words else set())
    if scalars and (language != "text" or not scalars <= lone):
        if language == "text":  # "1 2" beside words: free text that happens to hold numbers
            return Guess("string", missing=missing, present=present, mixed=True, default="" if missing else None,
                         notes=[f"mixed: {_mixture(counts, kinds, where, language)}; kept as text"]
                         + ([_missing_note(missing, counts.rows, "", present, unit)] if missing else []))
        raise _mixed_error(counts, kinds, column, where)
    if counts.ragged_row is not None:
        return Guess(None, problem=f"{where(counts.ragged_row)} holds nested lists of different lengths; "
                                   "no shape reads them")
    lengths = {dims: count for dims, count in counts.dims.items() if dims is not None}
    if scalars:  # a lone number in a cell is a list of one ("5" beside "1 2")
        lengths[(1,)] = lengths.get((1,), 0) + sum(kinds[kind] for kind in scalars)
    nonempty = [dims for dims in lengths if dims != (0,)]
    if len({len(dims) for dims in nonempty}) > 1:
        return Guess(None, problem=f"its lists nest to different depths ({where(counts.first['list'])} and others); "
                                   "no shape reads them")
    rank = len(nonempty[0]) if nonempty else 1
    shape: list[int | None] = []
    for axis in range(rank):
        sizes = {dims[axis] for dims in nonempty}
        shape.append(sizes.pop() if len(sizes) == 1 else None)
    if (0,) in lengths:  # an empty list beside longer ones: the first dimension varies
        shape[0] = None
    if any(size is None for size in shape[1:]):
        return Guess(None, problem="its nested lists vary in length below the first level; only the first "
                                   "dimension may vary")
    elements = counts.elements or Profile()
    if scalars:  # the lone numbers are items too
        for kind in scalars:
            elements.kinds[kind] += kinds[kind]
            elements.first.setdefault(kind, counts.first[kind])
            elements.examples.setdefault(kind, counts.examples[kind])
        if counts.nonfinite_row is not None:
            elements.nonfinite_row = counts.nonfinite_row
        if counts.low is not None:
            elements.low = counts.low if elements.low is None else min(elements.low, counts.low)
    element_kinds = Counter({kind: count for kind, count in elements.kinds.items() if count})
    if "object" in element_kinds or "list" in element_kinds:
        return Guess(None, problem="its lists hold objects or ragged lists; no dtype reads them")
    dtype, note, mixed = _scalar_dtype(elements, element_kinds, column, where, "json")
    found = Guess(dtype, shape=shape, missing=missing, present=present, mixed=mixed)
    if note:
        found.notes.append(f"items {note}")
    if elements.nonfinite_row is not None and dtype == "float32":
        found.allow_nan = True
        found.notes.append("inf or NaN among the items kept (allow_nan)")
    if not element_kinds:
        found.notes.append("every list is empty")
    if shape[0] is None:
        seen = sorted({dims[0] for dims in lengths})
        items = "items" if len(shape) == 1 else f"rows of {shape[1:]}"
        found.notes.append(f"{seen[0]} to {seen[-1]} {items} per {unit.rstrip('s')}" if len(seen) > 1
                           else "variable length")
        if missing:
            found.notes.append(f"{missing} of {counts.rows} {unit} missing -> an empty list")
    elif missing:
        _fill(found, elements, counts.rows, unit, fills=True)
    return found


def list_cells(counts: Profile, language: Language) -> bool:
    """Whether a CSV column mixes JSON arrays with text: then every cell is a list (`words`)."""
    return language == "text" and bool(counts.json_lists) and bool(counts.kinds["text"] - sum(counts.na_texts.values()))


def _text_cell(cell: str, words: bool = False) -> tuple[str, Any]:
    """What a CSV cell says: (kind, value). Lists are JSON arrays, or numbers apart by spaces
    (with `words`, anything apart by spaces)."""
    stripped = cell.strip()
    if stripped.startswith("["):
        try:
            parsed = json.loads(stripped)
        except ValueError:
            return "text", cell
        return ("list", parsed) if isinstance(parsed, list) else ("text", cell)
    if words and cell not in NA_TEXTS:
        return "list", [_token(token) for token in stripped.split()]
    if _INT.match(cell):
        number = int(cell)
        return ("int", number) if _INT64[0] <= number <= _INT64[1] else ("bigint", cell)
    if _FLOAT.match(cell):
        return "float", float(cell)
    if stripped.lower() in _BOOL_WORDS:
        return "bool", _BOOL_WORDS[stripped.lower()]
    tokens = stripped.split()
    if len(tokens) > 1 and all(_FLOAT.match(token) for token in tokens):
        return "list", [_token(token) for token in tokens]
    return "text", cell


def _token(token: str) -> Any:
    """An item of a list written apart by spaces: a number if it is one, else its text."""
    if _INT.match(token) and _INT64[0] <= int(token) <= _INT64[1]:
        return int(token)
    return float(token) if _FLOAT.match(token) else token


def _json_value(value: Any) -> tuple[str, Any]:
    """What a JSON or Parquet value is: (kind, value)."""
    if isinstance(value, (bool, np.bool_)):
        return "bool", bool(value)
    if isinstance(value, (int, np.integer)):
        number = int(value)
        return ("int", number) if _INT64[0] <= number <= _INT64[1] else ("bigint", number)
    if isinstance(value, (float, np.floating, decimal.Decimal)):
        return "float", float(value)
    if isinstance(value, str):
        return "text", value
    if isinstance(value, (list, tuple, np.ndarray)):
        return "list", list(value)
    if isinstance(value, (bytes, bytearray)):
        return "bytes", bytes(value)
    if isinstance(value, (np.datetime64, datetime.date)):
        return "time", str(value)
    return "object", value


def _dims(value: Any) -> tuple[int, ...] | None:
    """The nested lengths of a list ([[1, 2], [3, 4]] -> (2, 2)); None when ragged."""
    if not isinstance(value, (list, tuple)):
        return ()
    if not value:
        return (0,)
    inner = {_dims(item) for item in value}
    if len(inner) != 1 or None in inner:
        return None
    return (len(value), *inner.pop())


def _flat(value: Any):
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from _flat(item)
    else:
        yield value


def _place(counts: Profile, kind: str, where: Where) -> str:
    return where(counts.first[kind]) if kind in counts.first else "a row"


def _mixture(counts: Profile, kinds: Counter, where: Where, language: Language) -> str:
    """`numbers (line 2: 5) and text (line 4: abc)`: each kind with its first place."""
    words = {"int": "numbers", "float": "numbers", "bigint": "numbers", "bool": "booleans", "text": "text",
             "list": "lists", "bytes": "bytes", "time": "dates"}
    parts: dict[str, str] = {}
    for kind in sorted(kinds, key=lambda name: counts.first.get(name, 0)):
        word = words.get(kind, kind)
        if word not in parts and kind in counts.first:
            parts[word] = f"{word} ({where(counts.first[kind])}: {shown(counts.examples[kind], language)})"
    return " and ".join(parts.values())


def _mixed_error(counts: Profile, kinds: Counter, column: str, where: Where) -> DataError:
    """The error for JSON values of kinds no one dtype reads: the first value unlike those before it."""
    ordered = sorted((kind for kind in kinds if kind in counts.first), key=lambda name: counts.first[name])
    first = ordered[0]
    other = next((kind for kind in ordered if _KIND_WORDS[kind] != _KIND_WORDS[first]), None)
    if other is None:  # (every kind reads the same in words: name them all)
        return DataError(f"column `{column}`: values of kinds no one dtype reads ({', '.join(ordered)}); "
                         "make the column one type")
    return DataError(f"{where(counts.first[other])}: column `{column}`: expected {_KIND_WORDS[first]} like "
                     f"the values before it ({where(counts.first[first]).rsplit(', ', 1)[-1]}: "
                     f"{shown(counts.examples[first], 'json')}), received {shown(counts.examples[other], 'json')}; "
                     "no dtype reads both: make the column one type")


def _missing_note(missing: int, rows: int, default: Any, present: int, unit: str, fills: bool = False) -> str:
    value = json.dumps(default) if isinstance(default, str) else str(default).lower()
    if not present:
        return f"guessed: every value is missing (all {rows:,} {unit}) -> {value}"
    fill = " (fills the shape)" if fills else ""
    return f"guessed: {missing:,} of {rows:,} {unit} missing -> default {value}{fill}"
