"""The plans of sequence sources: JSONL records with lists of steps (`sequence_jsonl`), and long
tables, one row per step (`group_by` / `order_by`).

A JSONL file is taken for sequences when two or more of its list fields have the same length in
every record and that length varies between records: they are steps of one clock. One list field
alone is taken for steps when it is the record's only list, holds numbers (a series: a Keras RNN
reads it padded and masked, where a ragged list would fail) and sits beside per-record fields
such as a label; a list of words stays a list (tags). `--sequence`/`--no-sequence` decide
instead. The other fields are context. In a long table a column is context when it holds one value in every
sequence (and some sequence has more than one step); the rest are per step.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

from ...builders.long_table import OrderDates, _ordered
from ...errors import DataError, UsageError
from ...features import times
from .columns import profile
from .declare import Column, declare, na_spellings
from .names import dataset_name, feature_names
from .plan import Declaration, Plan, guess_label
from .sources import Table
from .tables import add_key, add_source_options, declared, header_lines

LENGTH_FEATURE = "sequence_length"  # what input_fn adds to a SequenceExample's features


def step_columns(table: Table, forced: bool | None) -> tuple[list[str], str] | None:
    """The fields that hold each record's steps, and why; None when the records aren't sequences
    (`forced`: True takes every list field of varying length, False none)."""
    if forced is False or table.kind != "jsonl":
        return None
    lengths: dict[str, tuple[int | None, ...]] = {}
    for column in table.columns:
        values = table.values[column]
        if any(isinstance(value, list) for value in values) and all(value is None or isinstance(value, list)
                                                                    for value in values):
            lengths[column] = tuple(len(value) if value is not None else None for value in values)
    varying = [column for column in lengths if len(set(lengths[column])) > 1]
    if forced:
        chosen = varying or list(lengths)
        if not chosen:
            raise UsageError(f"{table.name}: --sequence: no field holds lists (a record's steps); "
                             "expected fields such as \"tokens\": [3, 1, 4]")
        return chosen, f"--sequence: {_fields(chosen)} {'hold' if len(chosen) > 1 else 'holds'} a record's steps"
    aligned: dict[tuple[int | None, ...], list[str]] = defaultdict(list)
    for column in varying:
        aligned[lengths[column]].append(column)
    best = max(aligned.values(), key=len, default=[])
    if len(best) == 1 and len(lengths) == 1 and _series(table, best[0]):
        scalars = [column for column in table.columns if column not in lengths]
        return best, (f"guessed: `{best[0]}`, the only list field, holds numbers of varying length beside "
                      f"per-record {_fields(scalars[:3])}: a series, read as steps (padded and masked for an "
                      "RNN; --no-sequence reads it as one variable-length list)")
    if len(best) < 2:
        return None
    return best, (f"guessed: {_fields(best)} hold lists of one length in each record, varying between "
                  "records: the steps of a sequence (--no-sequence reads them as list features)")


def _series(table: Table, column: str) -> bool:
    """Whether a list field is a series beside per-record fields: its items are numbers (or
    vectors of numbers), and some other field holds one value in every record (a label, an id).
    Lists of words stay lists (tags are a bag, not steps)."""
    def number(item: Any) -> bool:
        return isinstance(item, (int, float)) and not isinstance(item, bool)

    items = [item for value in table.values[column] if value for item in value]
    if not items or not all(number(item) or (isinstance(item, list) and item and all(map(number, item)))
                            for item in items):
        return False
    return any(all(value is not None and not isinstance(value, (list, dict)) for value in table.values[other])
               for other in table.columns if other != column)


def jsonl_plan(table: Table, steps: list[str], why: str) -> Plan:
    """`sequence_jsonl`: the step fields per step, the others per record."""
    names = feature_names(table.columns, taken={LENGTH_FEATURE})
    context = [column for column in table.columns if column not in steps]
    counts = {column: profile(table.values[column], "json") for column in context}
    na_values = frozenset(na_spellings(list(counts.values())))
    plan = Plan(name=dataset_name(table.path), source={"builder": "sequence_jsonl"}, is_sequence=True)
    plan.sequence_note = why
    for column in context:
        found = declare(Column(column, names[column], table.values[column], table.where, "json",
                               complete=table.complete, file=table.name), counts[column], na_values)
        declared(plan, found, plan.context)
    for column in steps:  # `na_values` leaves items inside lists alone
        values, where = _steps(table, column)
        found = declare(Column(column, names[column], values, where, "json", na_applies=False,
                               complete=table.complete, unit="steps", file=table.name),
                        profile(values, "json", na_applies=False), na_values)
        declared(plan, _per_step(found), plan.sequence)
    if not plan.sequence:
        raise DataError(f"{table.name}: no list field can be a sequence feature ({'; '.join(plan.left_out)})")
    uneven = _uneven(table, steps)
    if uneven is not None:
        plan.sequence_lengths = "free"
        plan.sequence_note += f"; {uneven}: sequence_lengths free"
    add_source_options(plan, table, counts, na_values)
    add_key(plan, table, context)
    guess_label(plan, table.columns)
    plan.header = header_lines(table)
    return plan


def long_table_plan(table: Table, group_by: str, order_by: str) -> Plan:
    """A long table: the rows of each `group_by` value, ordered by `order_by`, are one sequence."""
    for option, column in (("--group-by", group_by), ("--order-by", order_by)):
        if column not in table.values:
            columns = ", ".join(name if name else '""' for name in table.columns)
            raise UsageError(f"{table.name}: no column `{column}` ({option}); its columns: {columns}")
    if group_by == order_by:
        raise UsageError(f"--group-by and --order-by name the same column `{group_by}`; expected the column of "
                         "the sequence and the column of the step's position")
    names = feature_names(table.columns, taken={LENGTH_FEATURE})
    counts = {column: profile(table.values[column], table.language) for column in table.columns}
    na_values = frozenset(na_spellings(list(counts.values())))
    formats = _date_formats(table.values[order_by], na_values)
    dates = OrderDates(formats[0], names[order_by]) if formats else None
    groups = _groups(table, group_by, order_by, na_values, dates)
    firsts = [rows[0] for rows in groups.values()]
    longest = max(len(rows) for rows in groups.values())
    context = [group_by] + [column for column in table.columns if column not in (group_by, order_by)
                            and longest > 1 and _constant(table.values[column], groups)]
    plan = Plan(name=dataset_name(table.path), is_sequence=True,
                source={"builder": table.kind, "group_by": group_by, "order_by": order_by})
    shortest = min(len(rows) for rows in groups.values())
    plan.source_notes["group_by"] = (f"{len(groups)} sequences of {shortest}" +
                                     (f" to {longest}" if longest != shortest else "") + " steps")
    for column in context:
        values = [table.values[column][row] for row in firsts]
        found = declare(Column(column, names[column], values, lambda index: table.where(firsts[index]),
                               table.language, complete=table.complete, unit="sequences", file=table.name),
                        profile(values, table.language), na_values)
        if not isinstance(found, str) and column != group_by:
            found.notes.insert(0, "the same throughout each sequence, so per sequence")
        declared(plan, found, plan.context)
    for column in table.columns:
        if column in context:
            continue
        found = declare(Column(column, names[column], table.values[column], table.where, table.language,
                               complete=table.complete, unit="steps", file=table.name), counts[column], na_values)
        if column == order_by and formats and not isinstance(found, str):
            _read_as_dates(found, formats)
        declared(plan, _per_step(found), plan.sequence)
    if not plan.sequence:
        raise DataError(f"{table.name}: no column can be per step (each is the same throughout its sequence, "
                        f"or left out: {'; '.join(plan.left_out) or 'none'}); expected a column that changes "
                        "from step to step")
    add_source_options(plan, table, counts, na_values)
    guess_label(plan, table.columns)
    plan.header = header_lines(table)
    return plan


def _date_formats(values: list[Any], na_values: frozenset[str]) -> list[str]:
    """The formats that read the positions as dates, when they are dates written as text other
    than ISO 8601 (which sorts as text in date order): the first is the one to declare."""
    texts = [value for value in values if value is not None and value not in na_values]
    if not texts or not all(isinstance(text, str) for text in texts) or not times.is_date_text(texts[0]):
        return []
    return times.text_formats(texts)


def _read_as_dates(found: Declaration, formats: list[str]) -> None:
    """The order column's declaration: its dates as days (or seconds) since 1970, read by the
    format, so the build orders each sequence by date, not as text."""
    unit = "s" if times.has_time_of_day(formats[0]) else "days"
    source = {"source": found.fields["source"]} if "source" in found.fields else {}
    found.fields = {"dtype": "int64", "format": formats[0], "time_unit": unit, **source}
    note = f"guessed: dates written as text, read by format {formats[0]!r}: the steps are ordered by date"
    if len(formats) > 1:
        note += f" (they read as {formats[1]!r} too: check which)"
    found.notes = [note]


def _groups(table: Table, group_by: str, order_by: str, na_values: frozenset[str],
            dates: OrderDates | None = None) -> dict[str, list[int]]:
    """The rows of each sequence; DataError for a step without its sequence or position, a
    position given twice or one that can't be ordered among its sequence's (the build's words)."""
    groups: dict[str, list[int]] = defaultdict(list)
    ids, orders = table.values[group_by], table.values[order_by]
    for row in range(table.rows):
        for column, value in ((group_by, ids[row]), (order_by, orders[row])):
            if value is None or (isinstance(value, str) and value in na_values):
                raise DataError(f"{table.where(row)}: `{column}` is empty; every step needs its sequence "
                                "and position")
        groups[str(ids[row])].append(row)
    for key, rows in groups.items():
        _ordered(key, [(orders[row], table.where(row), {}) for row in rows], group_by, order_by, table.language,
                 dates)
    return dict(groups)


def _constant(values: list[Any], groups: dict[str, list[int]]) -> bool:
    return all(all(values[row] == values[rows[0]] for row in rows[1:]) for rows in groups.values())


def _steps(table: Table, column: str) -> tuple[list[Any], Any]:
    """Every step of a field, record after record, and how to name step i (`line 3, step 7`)."""
    values: list[Any] = []
    places: list[tuple[int, int]] = []
    for row, steps in enumerate(table.values[column]):
        for position, step in enumerate(steps or []):
            values.append(step)
            places.append((row, position))
    return values, lambda index: f"{table.where(places[index][0])}, step {places[index][1]}"


def _per_step(found: Declaration | str) -> Declaration | str:
    """A per-step shape may be [], [k, ...] or [null]: a variable number of rows per step isn't."""
    if isinstance(found, str):
        return found
    shape = found.fields.get("shape") or []
    if len(shape) > 1 and shape[0] is None:
        return f"column `{found.column}`: left out: per step it holds lists of lists of varying length"
    return found


def _uneven(table: Table, steps: list[str]) -> str | None:
    """Where a record's step fields differ in length (the build would refuse it as equal)."""
    for row in range(table.rows):
        lengths = {len(table.values[column][row] or []) for column in steps}
        if len(lengths) > 1:
            return f"their lengths differ within a record ({table.where(row)})"
    return None


def _fields(columns: list[str]) -> str:
    return ", ".join(f"`{column}`" for column in columns)
