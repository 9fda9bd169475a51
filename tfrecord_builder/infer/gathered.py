"""Runs of many same-typed number columns gathered into one feature: `genes: {dtype: float32,
columns: "gene_*"}` instead of 2,000 scalar features (a gene-expression table, pixels, sensors).

A run is at least `MIN_RUN` consecutive columns declared as scalar numbers of one dtype whose
names are one prefix and a number (`gene_1` ... `gene_2308`, `pixel0` ... `pixel783`). It is
written as a pattern when one matches exactly the run's columns among the file's (in the file's
order, as a build resolves it); a run no pattern singles out stays as it is.
"""
from __future__ import annotations

import fnmatch
import re
from typing import Any, Sequence

from .names import identifier
from .plan import Declaration, Plan

MIN_RUN = 16  # consecutive columns: fewer stay features of their own (x1, x2, x3 read better apart)
_NUMBERED = re.compile(r"(.*?\D)?(\d+)\Z")  # a prefix (not ending in a digit) and a number
_NUMBERS = ("float32", "int64", "float64", "int32", "float16")


def gather_runs(plan: Plan, columns: Sequence[str], other_columns: Sequence[str] = ()) -> None:
    """Replaces each run of numbered same-typed number columns in `plan.features` (declared in
    the file's order `columns`) by one `columns:` feature; `other_columns`: the file's columns
    no feature reads, which a pattern mustn't match either."""
    features: list[Declaration] = []
    run: list[Declaration] = []
    for declaration in plan.features + [None]:  # (None ends the last run)
        if declaration is not None and run and _extends(run, declaration):
            run.append(declaration)
            continue
        if run:
            features += _gathered(run, plan, columns, other_columns)
        run = [declaration] if declaration is not None and _prefix(declaration) is not None else []
        if declaration is not None and not run:
            features.append(declaration)
    plan.features = features


def _prefix(declaration: Declaration) -> str | None:
    """The name's prefix if the declaration may join a run: a scalar number read from a column
    named prefix + number."""
    fields = declaration.fields
    if "type" in fields or "shape" in fields or "format" in fields or fields.get("dtype") not in _NUMBERS:
        return None
    match = _NUMBERED.match(declaration.column)
    return match.group(1) if match and match.group(1) else None


def _extends(run: list[Declaration], declaration: Declaration) -> bool:
    first = run[0].fields
    fields = declaration.fields
    return (_prefix(declaration) == _prefix(run[0]) and fields.get("dtype") == first.get("dtype")
            and fields.get("default") == first.get("default"))


def _gathered(run: list[Declaration], plan: Plan, columns: Sequence[str],
              other_columns: Sequence[str]) -> list[Declaration]:
    """The run as one declaration, or as it was (too short, or no pattern picks exactly it)."""
    names = [declaration.column for declaration in run]
    pattern = _pattern(_prefix(run[0]) or "", names, columns, other_columns)
    if len(run) < MIN_RUN or pattern is None:
        return run
    first = run[0].fields
    fields: dict[str, Any] = {"dtype": first["dtype"], "columns": pattern}
    if "default" in first:
        fields["default"] = first["default"]
    if any(declaration.fields.get("allow_nan") for declaration in run):
        fields["allow_nan"] = True
    taken = {declaration.name for declaration in plan.features}
    name = _name(_prefix(run[0]) or "", taken)
    missing = " (a missing cell takes the default)" if "default" in first else ""
    note = (f"guessed: gathers the {len(run):,} {first['dtype']} columns {names[0]} ... {names[-1]}, in the file's "
            f"order, into one [{len(run)}] tensor{missing}: one feature, not {len(run):,}")
    return [Declaration(name, fields, [note], column=pattern)]


def _pattern(prefix: str, names: list[str], columns: Sequence[str], other_columns: Sequence[str]) -> str | None:
    """`prefix*` (or `prefix[0-9]*`) if it matches exactly these columns of the file, in order."""
    if any(character in prefix for character in "*?[]"):
        return None
    for pattern in (f"{prefix}*", f"{prefix}[0-9]*"):
        if [column for column in columns if fnmatch.fnmatchcase(column, pattern)] == names \
                and not any(fnmatch.fnmatchcase(column, pattern) for column in other_columns):
            return pattern
    return None


def _name(prefix: str, taken: set[str]) -> str:
    """`gene_` -> `genes`, `pixel` -> `pixels`: the run's values, by their columns' name."""
    base = identifier(prefix.rstrip("_-. "), fallback="values")
    base = base if base.endswith("s") else f"{base}s"
    name, count = base, 1
    while name in taken:
        count += 1
        name = f"{base}_{count}"
    return name
