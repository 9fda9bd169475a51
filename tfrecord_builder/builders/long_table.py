"""Long tables: one row per step, grouped into one sequence per `group_by` value.

Time series and event logs usually arrive this way, often unsorted. Every row is read first
(the whole table is held in memory), then each group's rows are ordered by `order_by` (as
numbers when every value is one, else as text). A context feature must have one value per group;
a sequence feature takes the column's values over the ordered steps. Groups come out sorted by
their id, so the result doesn't depend on the row order.
"""
from __future__ import annotations

from typing import Any, Iterable, Iterator

from ..errors import DataError
from .base import Batch, KeyOrigins, check_split


def group_steps(batches: Iterable[Batch], spec: Any, batch_size: int, split: str | None = None) -> Iterator[Batch]:
    """Batches of whole sequences from batches of step rows (with `split`, only the sequences
    whose rows' split column names it: all of a sequence's rows must name the same split)."""
    group_by, order_by = spec.source.group_by, spec.source.order_by
    split_column = spec.source.split_column if split is not None else None
    groups: dict[str, list[tuple[Any, str, dict[str, Any]]]] = {}
    source = ""
    text_cells = True
    broken: list[dict[str, str]] = []  # rows the reader couldn't read: listed with the first batch
    for batch in batches:
        source, text_cells = batch.source, batch.text_cells
        broken.extend(batch.broken)
        for column in (group_by, order_by):
            if column not in batch.columns:
                raise DataError(f"{batch.source}: no column `{column}` (source.{'group_by' if column == group_by else 'order_by'})"
                                + (f"; its columns: {', '.join(batch.available)}" if batch.available else ""))
        ids, orders = batch.columns[group_by], batch.columns[order_by]
        for row in range(len(batch)):
            if ids[row] is None or orders[row] is None:
                missing = group_by if ids[row] is None else order_by
                raise DataError(f"{batch.origin(row)}: `{missing}` is empty; every step needs its sequence and position")
            values = {name: column[row] for name, column in batch.columns.items()}
            groups.setdefault(str(ids[row]), []).append((orders[row], batch.origin(row), values))
    names = sorted(groups)
    if split_column is not None:
        names = [key for key in names if _split_of(key, groups[key], split_column, group_by, spec) == split]
    context = [feature for feature in spec.features.values() if not feature.sequence]
    sequence = [feature for feature in spec.features.values() if feature.sequence]
    for start in range(0, len(names), batch_size):
        keys = names[start : start + batch_size]
        records = [_record(key, groups[key], context, sequence, group_by, order_by) for key in keys]
        columns = {feature.source_name: [record[feature.source_name] for record in records]
                   for feature in context + sequence}
        yield Batch(keys=keys, columns=columns, origin=KeyOrigins(f"{source}, {group_by}", keys), source=source,
                    text_cells=text_cells, broken=broken)
        broken = []
    if broken:
        yield Batch(keys=[], columns={}, origin=KeyOrigins(source, []), source=source, broken=broken)


def _record(key: str, rows: list[tuple[Any, str, dict[str, Any]]], context: list, sequence: list,
            group_by: str, order_by: str) -> dict[str, Any]:
    numeric = _all_numbers([order for order, _, _ in rows])
    rows = sorted(rows, key=lambda row: float(row[0]) if numeric else str(row[0]))
    for (first, origin, _), (second, other, _) in zip(rows, rows[1:]):
        if (float(first) == float(second)) if numeric else (str(first) == str(second)):
            raise DataError(f"{other}: {group_by} {key!r} has step {order_by} {second!r} twice (also at {origin})")
    record: dict[str, Any] = {}
    for feature in context:
        values = [values.get(feature.source_name) for _, _, values in rows]
        for (_, origin, _), value in zip(rows[1:], values[1:]):
            if value != values[0]:
                raise DataError(f"{origin}: context feature `{feature.name}` differs within {group_by} {key!r} "
                                f"({values[0]!r}, then {value!r}); expected one value per sequence")
        record[feature.source_name] = values[0]
    for feature in sequence:
        record[feature.source_name] = [values.get(feature.source_name) for _, _, values in rows]
    return record


def _all_numbers(values: list[Any]) -> bool:
    try:
        for value in values:
            float(value)
    except (TypeError, ValueError):
        return False
    return True


def _split_of(key: str, rows: list[tuple[Any, str, dict[str, Any]]], column: str, group_by: str, spec: Any) -> str:
    """The split a sequence's rows name: one, or an error (a sequence cut across splits would
    leak steps from one split into another)."""
    (_, first_origin, first), *rest = rows
    value = first.get(column)
    for _, origin, values in rest:
        if values.get(column) != value:
            raise DataError(f"{origin}: split column `{column}` differs within {group_by} {key!r} "
                            f"({value!r} at {first_origin}, then {values.get(column)!r}); expected one split "
                            "per sequence")
    check_split(first_origin, column, value, list(spec.splits))
    return value
