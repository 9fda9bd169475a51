"""Long tables and grouped rows: rows gathered into one record per `group_by` value.

A long table (`format: sequence_example`) has one row per step: each group's rows are ordered
by `order_by` (as numbers, dates or text; a position of another kind than its group's others is
an error). Text that a feature reading the `order_by` column declares a `format:` for is ordered
as the dates it reads; without one, text that is a date in another form than ISO 8601 (`Jan 1
2000`, which would sort as text, April first) is an error that says so. A context feature must
have one value per group; a sequence feature takes the column's values over the ordered steps.

Grouped rows (`format: example`, `order_by` optional) make one Example per group: a feature of
shape `[null, ...]` takes every row's value (features/grouped.py), in source order or by
`order_by`; any other feature must have one value per group, as a context feature must.

Every row is read first (the columns the spec reads, for the whole table, are held in memory,
as the reader gives them: Arrow arrays where it reads with Arrow): a group's rows may be anywhere
in the file. Groups come out sorted by their id, so which
records there are and their order don't depend on the row order.
"""
from __future__ import annotations

import datetime
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np

from ..errors import DataError
from ..features import grouped, times
from ..features.cells import ArrowCells
from ..features.dtypes import Invalid
from ..features.shown import Language, shown
from .base import Batch, KeyOrigins, check_split, column_list, no_column


def grouped_batches(batches: Iterable[Batch], spec: Any, batch_size: int, split: str | None = None
                    ) -> Iterator[Batch]:
    """Batches of whole groups from batches of rows: sequences of a `sequence_example` spec, or
    Examples of a `format: example` one (with `split`, only the groups whose rows' split column
    names it: all of a group's rows must name the same split)."""
    found = _Groups.read(batches, spec)
    group_by = spec.source.group_by
    dates = order_dates(spec)
    broken = found.broken  # rows the reader couldn't read: listed with the first batch
    # grouped rows: the columns of features taking every row's value hold a GroupRows a record
    every_row = frozenset() if spec.is_sequence else frozenset(
        column for feature in spec.features.values() if grouped.takes_rows(feature) for column in feature.source_names)
    keys: list[str] = []
    records: list[dict[str, Any]] = []
    for key, rows in found.groups(batch_size, spec, split):
        keys.append(key)
        records.append(_record(key, rows, spec, found.language, dates))
        if len(keys) == batch_size:
            yield found.batch(keys, records, group_by, broken, every_row)
            keys, records, broken = [], [], []
    if keys:
        yield found.batch(keys, records, group_by, broken, every_row)
        broken = []
    if broken:
        yield Batch(keys=[], columns={}, origin=KeyOrigins(found.source, []), source=found.source, broken=broken)


Row = tuple[Any, str, dict[str, Any]]  # (position, where, the row's values by column)


@dataclass
class _Groups:
    """Every row of a table, by group: a group's rows may be anywhere in the file, so all are read
    before the first record is made. The batches' columns are kept as the reader gave them (Arrow
    arrays stay Arrow arrays, not a Python object per value) and a group holds only where its rows
    are; its values become Python values when its record is made."""

    places: dict[str, list[int]]  # group -> its rows in file order, each `part << 32 | row`
    parts: list[tuple[Mapping[str, Any], Any]] = field(default_factory=list)  # each batch's columns and origin
    order_by: str | None = None
    source: str = ""
    language: Language = "python"
    base_dir: str | None = None
    broken: list[dict[str, str]] = field(default_factory=list)

    @classmethod
    def read(cls, batches: Iterable[Batch], spec: Any) -> "_Groups":
        group_by, order_by = spec.source.group_by, spec.source.order_by
        found = cls({}, order_by=order_by)
        for batch in batches:
            found.source, found.language, found.base_dir = batch.source, batch.language, batch.base_dir
            found.broken.extend(batch.broken)
            for column in (group_by, order_by):
                if column is not None and column not in batch.columns:
                    raise DataError(f"{batch.source}: no column `{column}` "
                                    f"(source.{'group_by' if column == group_by else 'order_by'})"
                                    + (f"; its columns: {column_list(batch.available)}" if batch.available else ""))
            if len(batch) and batch.available is not None:  # a misspelt column would leave groups empty
                for feature in spec.features.values():
                    for column in feature.source_names:
                        if column not in batch.columns:
                            raise no_column(batch.source, f"feature `{feature.name}`", column, batch.available)
            ids = _python_values(batch.columns[group_by])
            orders = _python_values(batch.columns[order_by]) if order_by is not None else None
            part = len(found.parts) << 32
            for row in range(len(batch)):
                if ids[row] is None or (orders is not None and orders[row] is None):
                    missing = group_by if ids[row] is None else order_by
                    needs = ("every step needs its sequence and position" if spec.is_sequence else
                             "every row needs its group" + (" and position" if order_by is not None else ""))
                    raise DataError(f"{batch.origin(row)}: `{missing}` is empty; {needs}")
                found.places.setdefault(str(ids[row]), []).append(part | row)
            found.parts.append((batch.columns, batch.origin))  # (not its keys: a CSV row's is its line)
        return found

    def groups(self, batch_size: int, spec: Any, split: str | None) -> Iterator[tuple[str, list[Row]]]:
        """Each group's key and rows, by key (with `split`, the groups whose rows name it), made
        `batch_size` groups at a time."""
        names = sorted(self.places)
        split_column = spec.source.split_column if split is not None else None
        unit = "sequence" if spec.is_sequence else "group"
        for start in range(0, len(names), batch_size):
            keys = names[start : start + batch_size]
            rows = self.rows(keys)
            for key in keys:
                if split_column is None or _split_of(key, rows[key], split_column, spec.source.group_by, spec,
                                                     self.language, unit) == split:
                    yield key, rows[key]

    def rows(self, keys: list[str]) -> dict[str, list[Row]]:
        """The rows of the groups `keys`: (position, where, values by column)."""
        wanted: dict[int, list[int]] = {}
        for key in keys:
            for place in self.places[key]:
                wanted.setdefault(place >> 32, []).append(place & 0xFFFFFFFF)
        values: dict[int, dict[str, Any]] = {}
        for part, chosen in wanted.items():
            chosen.sort()
            columns = {name: _values_at(column, chosen) for name, column in self.parts[part][0].items()}
            for index, row in enumerate(chosen):
                values[part << 32 | row] = {name: column[index] for name, column in columns.items()}
        found: dict[str, list[Row]] = {}
        for key in keys:
            found[key] = [(values[place][self.order_by] if self.order_by is not None else None,
                           self.parts[place >> 32][1](place & 0xFFFFFFFF), values[place])
                          for place in self.places[key]]
        return found

    def batch(self, keys: list[str], records: list[dict[str, Any]], group_by: str,
              broken: list[dict[str, str]], every_row: frozenset[str]) -> Batch:
        """The batch of `records`, whose columns `every_row` hold a `GroupRows` a record."""
        columns = {name: [record[name] for record in records] for name in records[0]}
        return Batch(keys=keys, columns=columns, origin=KeyOrigins(f"{self.source}, {group_by}", keys),
                     source=self.source, language=self.language, broken=broken, base_dir=self.base_dir,
                     grouped=every_row & set(columns))


def _python_values(column: Any) -> Sequence[Any]:
    """A column's values as Python objects, without keeping them on an Arrow column (which would
    hold both)."""
    return type(column)(column.array).cells() if isinstance(column, ArrowCells) else column


def _values_at(column: Any, rows: list[int]) -> Sequence[Any]:
    """A column's values at `rows` (ascending) as Python objects, as the reader gives them."""
    if isinstance(column, ArrowCells):
        return column.taken(rows).cells()
    return [column[row] for row in rows]


@dataclass(frozen=True)
class OrderDates:
    """How a long table's positions written as text are read as dates: the `format:` of the
    feature that reads the `order_by` column."""

    text_format: str
    feature: str  # the feature that declares it, for messages


def order_dates(spec: Any) -> OrderDates | None:
    """The date format a feature reading the `order_by` column declares (Spec.check makes sure
    there is at most one), or None."""
    return next((OrderDates(feature.date_format, feature.name) for feature in spec.features.values()
                 if feature.source_name == spec.source.order_by and feature.date_format), None)


def _record(key: str, rows: list[Row], spec: Any, language: Language, dates: OrderDates | None) -> dict[str, Any]:
    """A group's record, by column: a sequence (context values, and per-step lists) or an Example
    (one value per group, and `GroupRows` for the features that take every row's)."""
    group_by, order_by = spec.source.group_by, spec.source.order_by
    unit = "sequence" if spec.is_sequence else "group"
    if order_by is not None:
        rows = _ordered(key, rows, group_by, order_by, language, dates, unit)
    record: dict[str, Any] = {}
    origins = [origin for _, origin, _ in rows]  # (one list, shared by the record's columns)
    for feature in spec.features.values():
        every_row = _takes_every_row(feature, spec)
        for column in feature.source_names:
            if every_row and spec.is_sequence:
                record[column] = [values.get(column) for _, _, values in rows]
            elif every_row:
                record[column] = grouped.GroupRows([values.get(column) for _, _, values in rows], origins)
            else:
                record[column] = _one_value(key, rows, feature, column, group_by, language, unit)
    return record


def _takes_every_row(feature: Any, spec: Any) -> bool:
    """Whether `feature` takes a value of each of its group's rows: a sequence feature (a step a
    row), or in grouped rows a feature that takes every row's (features/grouped.py)."""
    return feature.sequence if spec.is_sequence else grouped.takes_rows(feature)


def _one_value(key: str, rows: list[Row], feature: Any, column: str, group_by: str, language: Language,
               unit: str) -> Any:
    """The value a group's rows all have in `column` (a context feature's, an Example's scalar), or
    an error naming the row that differs and both values."""
    first = rows[0][2].get(column)
    for _, origin, values in rows[1:]:
        value = values.get(column)
        if value != first:
            what = "context feature" if unit == "sequence" else "feature"
            where = f", column `{column}`," if column != feature.source_name else ""
            raise DataError(f"{origin}: {what} `{feature.name}`{where} differs within {group_by} {key!r} "
                            f"({shown(first, language)}, then {shown(value, language)}); "
                            f"expected one value per {unit}"
                            + ("" if unit == "sequence" else " (a feature of shape [null] takes every row's)"))
    return first


def _ordered(key: str, rows: list[Row], group_by: str, order_by: str, language: Language,
             dates: OrderDates | None = None, unit: str = "sequence") -> list[Row]:
    """A sequence's rows by position: numbers as numbers, times as times, text as text (with
    `dates`, text as the dates it reads); a position of another kind than the rest of its
    sequence (an `NA` among numbers) is an error, as is one given twice, and so is text that is a
    date written otherwise than in ISO 8601 when there is no format to read it."""
    if dates is not None:
        rows = [(_date(order, origin, key, group_by, order_by, dates, language), origin, values)
                for order, origin, values in rows]
    kinds = [_kind(order) for order, _, _ in rows]
    counts = {kind: kinds.count(kind) for kind in _KINDS}
    kind = max(_KINDS, key=lambda name: (counts[name], name == "number"))  # (ties: numbers)
    odd = next((index for index, other in enumerate(kinds) if other != kind), None)
    if odd is not None:
        value, origin, _ = rows[odd]
        plural = {"number": "numbers", "time": "dates or times", "text": "text"}[kind]
        raise DataError(f"{origin}: {group_by} {key!r}: position {order_by} {shown(_written(value), language)} is "
                        f"{_KIND_WORDS[kinds[odd]]}, but the {unit}'s other positions are {plural}, so it can't "
                        f"be ordered among them; expected {_KIND_WORDS[kind]}")
    if kind == "text":
        _refuse_date_text(key, rows, group_by, order_by, language)
    position = _POSITIONS[kind]
    rows = sorted(rows, key=lambda row: position(row[0]))
    for (first, origin, _), (second, other, _) in zip(rows, rows[1:]):
        if position(first) == position(second):
            raise DataError(f"{other}: {group_by} {key!r} has step {order_by} {shown(_written(second), language)} "
                            f"twice (also at {origin})")
    return [(_written(order), origin, values) for order, origin, values in rows]


@dataclass(frozen=True)
class _Date:
    """A position written as text, with the date it reads (what the sequence is ordered by)."""

    text: str
    time: np.datetime64


def _written(position: Any) -> Any:
    """A position as the source wrote it."""
    return position.text if isinstance(position, _Date) else position


def _date(order: Any, origin: str, key: str, group_by: str, order_by: str, dates: OrderDates,
          language: Language) -> Any:
    """A position written as text, read by the order column's format (other values as they are)."""
    if not isinstance(order, str):
        return order
    try:
        return _Date(order, times.parsed_time(order, dates.text_format))
    except Invalid as invalid:
        raise DataError(f"{origin}: {group_by} {key!r}: position {order_by} {shown(order, language)} can't be "
                        f"ordered as a date: {invalid.text(language)} (the `format:` of feature "
                        f"`{dates.feature}`, which reads column `{order_by}`)") from None


def _refuse_date_text(key: str, rows: list[Row], group_by: str, order_by: str,
                      language: Language) -> None:
    """Text positions are ordered as text, which puts ISO 8601 dates (2024-03-01) in date order but
    no other way of writing them (`Jan 1 2000` sorts April first): such dates are an error naming
    the format that reads them, never ordered alphabetically in silence."""
    found = next(((order, origin) for order, origin, _ in rows if isinstance(order, str) and times.is_date_text(order)),
                 None)
    if found is None:
        return
    order, origin = found
    formats = times.text_formats([str(order) for order, _, _ in rows]) or times.text_formats([order])
    unit = "s" if times.has_time_of_day(formats[0]) else "days"
    raise DataError(f"{origin}: {group_by} {key!r}: position {order_by} {shown(order, language)} looks like a date "
                    f"written as text, which would be ordered as text, not by date; declare a feature that reads "
                    f"column `{order_by}` with its `format:` to order by it, e.g. "
                    f"`{order_by}: {{dtype: int64, format: \"{formats[0]}\", time_unit: {unit}}}`")


_KINDS = ("number", "time", "text")
_KIND_WORDS = {"number": "a number", "time": "a date or time", "text": "text", "unordered": "NaN, which has no order"}
_POSITIONS = {"number": float, "time": lambda value: value.time if isinstance(value, _Date) else np.datetime64(value),
              "text": str}


def _kind(value: Any) -> str:
    """What a position is: a number (also as text), a date or time, other text; NaN is unordered."""
    if isinstance(value, (np.datetime64, datetime.date, _Date)):
        return "time"
    if isinstance(value, (bool, np.bool_)):
        return "text"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "text"
    return "number" if not math.isnan(number) else "unordered"


def _split_of(key: str, rows: list[Row], column: str, group_by: str, spec: Any, language: Language,
              unit: str = "sequence") -> str:
    """The split a sequence's rows name: one, or an error (a sequence cut across splits would
    leak steps from one split into another)."""
    (_, first_origin, first), *rest = rows
    value = first.get(column)
    for _, origin, values in rest:
        if values.get(column) != value:
            raise DataError(f"{origin}: split column `{column}` differs within {group_by} {key!r} "
                            f"({shown(value, language)} at {first_origin}, then {shown(values.get(column), language)}); "
                            f"expected one split per {unit}")
    check_split(first_origin, column, value, list(spec.splits), language)
    return value
