"""Long tables: one row per step, grouped into one sequence per `group_by` value.

Time series and event logs usually arrive this way, often unsorted. Every row is read first
(the whole table is held in memory), then each group's rows are ordered by `order_by` (as
numbers, dates or text; a position of another kind than its group's others is an error). A context feature must have one value per group;
a sequence feature takes the column's values over the ordered steps. Groups come out sorted by
their id, so the result doesn't depend on the row order.
"""
from __future__ import annotations

import datetime
import math
from typing import Any, Iterable, Iterator

import numpy as np

from ..errors import DataError
from ..features.shown import Language, shown
from .base import Batch, KeyOrigins, check_split, column_list


def group_steps(batches: Iterable[Batch], spec: Any, batch_size: int, split: str | None = None) -> Iterator[Batch]:
    """Batches of whole sequences from batches of step rows (with `split`, only the sequences
    whose rows' split column names it: all of a sequence's rows must name the same split)."""
    group_by, order_by = spec.source.group_by, spec.source.order_by
    split_column = spec.source.split_column if split is not None else None
    groups: dict[str, list[tuple[Any, str, dict[str, Any]]]] = {}
    source = ""
    language: Language = "python"
    broken: list[dict[str, str]] = []  # rows the reader couldn't read: listed with the first batch
    for batch in batches:
        source, language = batch.source, batch.language
        broken.extend(batch.broken)
        for column in (group_by, order_by):
            if column not in batch.columns:
                raise DataError(f"{batch.source}: no column `{column}` (source.{'group_by' if column == group_by else 'order_by'})"
                                + (f"; its columns: {column_list(batch.available)}" if batch.available else ""))
        ids, orders = batch.columns[group_by], batch.columns[order_by]
        for row in range(len(batch)):
            if ids[row] is None or orders[row] is None:
                missing = group_by if ids[row] is None else order_by
                raise DataError(f"{batch.origin(row)}: `{missing}` is empty; every step needs its sequence and position")
            values = {name: column[row] for name, column in batch.columns.items()}
            groups.setdefault(str(ids[row]), []).append((orders[row], batch.origin(row), values))
    names = sorted(groups)
    if split_column is not None:
        names = [key for key in names if _split_of(key, groups[key], split_column, group_by, spec, language) == split]
    context = [feature for feature in spec.features.values() if not feature.sequence]
    sequence = [feature for feature in spec.features.values() if feature.sequence]
    for start in range(0, len(names), batch_size):
        keys = names[start : start + batch_size]
        records = [_record(key, groups[key], context, sequence, group_by, order_by, language) for key in keys]
        columns = {feature.source_name: [record[feature.source_name] for record in records]
                   for feature in context + sequence}
        yield Batch(keys=keys, columns=columns, origin=KeyOrigins(f"{source}, {group_by}", keys), source=source,
                    language=language, broken=broken)
        broken = []
    if broken:
        yield Batch(keys=[], columns={}, origin=KeyOrigins(source, []), source=source, broken=broken)


def _record(key: str, rows: list[tuple[Any, str, dict[str, Any]]], context: list, sequence: list,
            group_by: str, order_by: str, language: Language) -> dict[str, Any]:
    rows = _ordered(key, rows, group_by, order_by, language)
    record: dict[str, Any] = {}
    for feature in context:
        values = [values.get(feature.source_name) for _, _, values in rows]
        for (_, origin, _), value in zip(rows[1:], values[1:]):
            if value != values[0]:
                raise DataError(f"{origin}: context feature `{feature.name}` differs within {group_by} {key!r} "
                                f"({shown(values[0], language)}, then {shown(value, language)}); "
                                "expected one value per sequence")
        record[feature.source_name] = values[0]
    for feature in sequence:
        record[feature.source_name] = [values.get(feature.source_name) for _, _, values in rows]
    return record


def _ordered(key: str, rows: list[tuple[Any, str, dict[str, Any]]], group_by: str, order_by: str,
             language: Language) -> list[tuple[Any, str, dict[str, Any]]]:
    """A sequence's rows by position: numbers as numbers, times as times, text as text; a
    position of another kind than the rest of its sequence (an `NA` among numbers) is an error,
    as is one given twice."""
    kinds = [_kind(order) for order, _, _ in rows]
    counts = {kind: kinds.count(kind) for kind in _KINDS}
    kind = max(_KINDS, key=lambda name: (counts[name], name == "number"))  # (ties: numbers)
    odd = next((index for index, other in enumerate(kinds) if other != kind), None)
    if odd is not None:
        value, origin, _ = rows[odd]
        plural = {"number": "numbers", "time": "dates or times", "text": "text"}[kind]
        raise DataError(f"{origin}: {group_by} {key!r}: position {order_by} {shown(value, language)} is "
                        f"{_KIND_WORDS[kinds[odd]]}, but the sequence's other positions are {plural}, so it can't "
                        f"be ordered among them; expected {_KIND_WORDS[kind]}")
    position = _POSITIONS[kind]
    rows = sorted(rows, key=lambda row: position(row[0]))
    for (first, origin, _), (second, other, _) in zip(rows, rows[1:]):
        if position(first) == position(second):
            raise DataError(f"{other}: {group_by} {key!r} has step {order_by} {shown(second, language)} twice "
                            f"(also at {origin})")
    return rows


_KINDS = ("number", "time", "text")
_KIND_WORDS = {"number": "a number", "time": "a date or time", "text": "text", "unordered": "NaN, which has no order"}
_POSITIONS = {"number": float, "time": np.datetime64, "text": str}


def _kind(value: Any) -> str:
    """What a position is: a number (also as text), a date or time, other text; NaN is unordered."""
    if isinstance(value, (np.datetime64, datetime.date)):
        return "time"
    if isinstance(value, (bool, np.bool_)):
        return "text"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "text"
    return "number" if not math.isnan(number) else "unordered"


def _split_of(key: str, rows: list[tuple[Any, str, dict[str, Any]]], column: str, group_by: str, spec: Any,
              language: Language) -> str:
    """The split a sequence's rows name: one, or an error (a sequence cut across splits would
    leak steps from one split into another)."""
    (_, first_origin, first), *rest = rows
    value = first.get(column)
    for _, origin, values in rest:
        if values.get(column) != value:
            raise DataError(f"{origin}: split column `{column}` differs within {group_by} {key!r} "
                            f"({shown(value, language)} at {first_origin}, then {shown(values.get(column), language)}); "
                            "expected one split per sequence")
    check_split(first_origin, column, value, list(spec.splits), language)
    return value
