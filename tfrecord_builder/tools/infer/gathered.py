"""Runs of many same-typed number columns gathered into one feature: `genes: {dtype: float32,
columns: "gene_*"}` instead of 2,000 scalar features (a gene-expression table, pixels, sensors).

- A *numbered* run is at least `MIN_RUN` consecutive columns declared as scalar numbers of one
  dtype (and one default) whose names are one prefix and a number (`gene_1` ... `gene_2308`,
  `pixel0` ... `pixel783`). It is written as a pattern when one matches exactly the run's
  columns among the file's (in the file's order, as a build resolves it).
- Any other run of at least `MIN_LISTED_RUN` such columns (gene symbols, sensor names) is
  written as the list of its columns, `values: {dtype: float32, columns: [TP53, BRCA1, ...]}`.

Shorter runs stay features of their own, and so does the source's key column.
"""
from __future__ import annotations

import math

import fnmatch
import re
from typing import Any, Callable, Sequence

from .names import identifier
from .plan import Declaration, Plan

MIN_RUN = 16  # numbered columns in a row: fewer stay features of their own (x1, x2, x3 read better apart)
MIN_LISTED_RUN = 100  # columns in a row with no shared numbered name: a wide table, not a few measures
_NUMBERED = re.compile(r"(.*?\D)?(\d+)\Z")  # a prefix (not ending in a digit) and a number
_NUMBERS = ("float32", "int64", "float64", "int32", "float16")


def gather_runs(plan: Plan, columns: Sequence[str], other_columns: Sequence[str] = ()) -> None:
    """Replaces each run of same-typed number columns in `plan.features` (declared in the file's
    order `columns`) by one `columns:` feature; `other_columns`: the file's columns no feature
    reads, which a pattern mustn't match either."""
    key = plan.source.get("key")
    numbered = _runs(plan.features, lambda declaration: _prefix(declaration, key))
    plan.features = [item for run in numbered for item in _by_pattern(run, plan, columns, other_columns)]
    listed = _runs(plan.features, lambda declaration: "" if _number(declaration, key) else None)
    plan.features = [item for run in listed for item in _by_list(run, plan)]


def _runs(declarations: list[Declaration], group: Callable[[Declaration], str | None]) -> list[list[Declaration]]:
    """The declarations cut into runs of the same group, dtype and default (None: a run of its own)."""
    runs: list[list[Declaration]] = []
    for declaration in declarations:
        kind = group(declaration)
        last = runs[-1] if runs else None
        if kind is not None and last and group(last[0]) == kind and _same(last[0], declaration):
            last.append(declaration)
        else:
            runs.append([declaration])
    return runs


def _number(declaration: Declaration, key: str | None) -> bool:
    """A scalar number read from one column (not the key): what a run may hold."""
    fields = declaration.fields
    return (fields.get("dtype") in _NUMBERS and not {"type", "shape", "format", "columns"} & set(fields)
            and declaration.column != key)


def _prefix(declaration: Declaration, key: str | None) -> str | None:
    """The column name's prefix if it is a numbered number column."""
    match = _NUMBERED.match(declaration.column) if _number(declaration, key) else None
    return match.group(1) if match and match.group(1) else None


def _same(first: Declaration, other: Declaration) -> bool:
    return first.fields.get("dtype") == other.fields.get("dtype") and \
        _same_default(first.fields.get("default"), other.fields.get("default"))


def _same_default(first: object, other: object) -> bool:
    """Equal defaults, NaN included (infer's default for a float column with gaps)."""
    both_nan = isinstance(first, float) and isinstance(other, float) and math.isnan(first) and math.isnan(other)
    return both_nan or first == other


def _by_pattern(run: list[Declaration], plan: Plan, columns: Sequence[str],
                other_columns: Sequence[str]) -> list[Declaration]:
    """A numbered run as one declaration with a pattern, or as it was."""
    prefix = _prefix(run[0], plan.source.get("key"))
    if len(run) < MIN_RUN or prefix is None:
        return run
    names = [declaration.column for declaration in run]
    pattern = _pattern(prefix, names, columns, other_columns)
    if pattern is None:
        return run
    return [_declaration(run, plan, identifier(prefix.rstrip("_-. "), fallback="values"), pattern,
                         "in the file's order")]


def _by_list(run: list[Declaration], plan: Plan) -> list[Declaration]:
    """A long run of number columns as one declaration listing them, or as it was."""
    if len(run) < MIN_LISTED_RUN or not _number(run[0], plan.source.get("key")):
        return run
    return [_declaration(run, plan, "value", [declaration.column for declaration in run], "in this order")]


def _declaration(run: list[Declaration], plan: Plan, stem: str, columns: str | list[str], order: str) -> Declaration:
    first = run[0].fields
    fields: dict[str, Any] = {"dtype": first["dtype"], "columns": columns}
    if "default" in first:
        fields["default"] = first["default"]
    if any(declaration.fields.get("allow_nan") for declaration in run):
        fields["allow_nan"] = True
    missing = " (a missing cell takes the default)" if "default" in first else ""
    note = (f"guessed: gathers the {len(run):,} {first['dtype']} columns {run[0].column} ... {run[-1].column}, "
            f"{order}, into one [{len(run)}] tensor{missing}: one feature, not {len(run):,}")
    return Declaration(_name(stem, {declaration.name for declaration in plan.features}), fields, [note],
                       column=columns if isinstance(columns, str) else columns[0])


def _pattern(prefix: str, names: list[str], columns: Sequence[str], other_columns: Sequence[str]) -> str | None:
    """`prefix*` (or `prefix[0-9]*`) if it matches exactly these columns of the file, in order."""
    if any(character in prefix for character in "*?[]"):
        return None
    for pattern in (f"{prefix}*", f"{prefix}[0-9]*"):
        if [column for column in columns if fnmatch.fnmatchcase(column, pattern)] == names \
                and not any(fnmatch.fnmatchcase(column, pattern) for column in other_columns):
            return pattern
    return None


def _name(stem: str, taken: set[str]) -> str:
    """`gene` -> `genes`, `pixel` -> `pixels`: the run's values, by their columns' name."""
    base = stem if stem.endswith("s") else f"{stem}s"
    name, count = base, 1
    while name in taken:
        count += 1
        name = f"{base}_{count}"
    return name
