"""`source.key`: the column a row's split follows, guessed from the data.

Without a key a row's key is the whole row, so converting one column (temperatures in °F) moves
most rows to another split: a model tested on the new test split has trained on part of it. A
column unique in every row read keeps each row in its split whatever else changes. Preferred: a
column named like an id (id, key, uuid, guid, or ending in _id...), whole numbers or text; else
the first column of text (not numbers, not booleans: a measurement may be unique by chance, and is
what a re-export converts) unique in every row, such as `station_date`.
"""
from __future__ import annotations

import re
from typing import Any, Sequence

from .names import snake_case
from .plan import Plan
from .sources import Table

KEY_NAMES = ("id", "key", "uuid", "guid")
MAX_KEY_LENGTH = 200  # longer text is a free-text field (edited, not an identity), however unique
_NUMBER = re.compile(r"\s*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\s*\Z")
_WORDS = frozenset(("true", "false", "nan", "inf", "-inf", "+inf", "infinity", "-infinity"))


def add_key(plan: Plan, table: Table, candidates: Sequence[str]) -> None:
    """Sets `source.key` (with a comment saying why) to the first candidate named like an id whose
    values are unique, else to the first column of text unique in every row; none when no column is."""
    found = guess_key(table, candidates)
    if found is None:
        return
    column, named = found
    plan.source["key"] = column
    count = len(table.values[column])
    rows = f"all {count:,} rows" if table.complete else f"the first {count:,} rows read"
    if named:
        plan.source_notes["key"] = (f"guessed: unique in {rows}; it decides each row's split, so a row keeps "
                                    "its split when other columns change")
    else:
        plan.source_notes["key"] = (f"guessed: `{column}` is unique in {rows}; a key keeps each row in its split "
                                    "when other columns change (without one, the key is the whole row)")


def guess_key(table: Table, candidates: Sequence[str]) -> tuple[str, bool] | None:
    """(the key column, whether it is named like an id), or None."""
    for column in candidates:
        if _named_like_id(column) and _unique(table.values[column], numbers=True):
            return column, True
    for column in candidates:
        if _unique(table.values[column], numbers=False):
            return column, False
    return None


def _named_like_id(column: str) -> bool:
    plain = snake_case(column)
    return plain in KEY_NAMES or plain.endswith(tuple(f"_{name}" for name in KEY_NAMES))


def _unique(values: Sequence[Any], numbers: bool) -> bool:
    """Whether every value is present, unique and fit for a key: whole numbers or text with
    `numbers`, else text that isn't a number, a boolean or long free text."""
    if not values or any(value is None or isinstance(value, (bool, float, list, dict)) for value in values):
        return False
    if not numbers and any(not isinstance(value, str) or not value.strip() or len(value) > MAX_KEY_LENGTH
                           or _NUMBER.match(value) or value.strip().lower() in _WORDS for value in values):
        return False
    texts = [str(value) for value in values]
    return len(set(texts)) == len(texts)
