"""Several columns of a table gathered into one feature: `columns: [a, b, c]` or `columns: "g_*"`.

A feature that declares `columns:` reads one value from each of those columns, in the order
given (a pattern: in the source's own column order), as one fixed-shape `[n]` tensor. A list is
known when the spec is loaded; a pattern is fnmatch-style (`*`, `?`, `[abc]`, case-sensitive)
and is matched against the source's header when the source is opened (builders/sources.py:
`with_source_columns`), so loading and validating a spec reads no data. The build records the
list it resolved (the normalised spec in tfrecord_builder.json holds `columns: [...]` and
`shape: [n]`), so the reading side, `inspect`, `verify` and `diff` know `n` without the source.

The batch hands a gathered feature a `GatheredColumns`: the columns as the reader gave them
(Arrow columns stay Arrow columns), which the feature converts one column at a time.
"""
from __future__ import annotations

import dataclasses
import fnmatch
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..spec.fields import At

PATTERN_CHARACTERS = "*?["
SHOWN_COLUMNS = 8  # available columns named in the error of a pattern that matches none


@dataclass
class GatheredColumns:
    """A batch's values of a gathered feature: one column per name, each as its reader gave it."""

    names: list[str]
    columns: list[Sequence[Any]]

    def __len__(self) -> int:
        return len(self.columns[0]) if self.columns else 0

    def rows(self) -> list[list[Any]]:
        """Each row's values as a list, in column order (None where a cell is missing): the plain
        way, for a feature type that converts rows rather than columns."""
        return [list(row) for row in zip(*(list(column) for column in self.columns))]


def is_pattern(columns: Any) -> bool:
    """Whether `columns:` is a pattern (a string) still to be matched against a header."""
    return isinstance(columns, str)


def matching(pattern: str, header: Sequence[str]) -> list[str]:
    """The header's columns the pattern matches, in the header's order (case-sensitive)."""
    return [column for column in header if fnmatch.fnmatchcase(column, pattern)]


def no_match_message(pattern: str, header: Sequence[str], where: str) -> str:
    shown = ", ".join(name if name else '""' for name in header[:SHOWN_COLUMNS])
    more = f" and {len(header) - SHOWN_COLUMNS:,} more" if len(header) > SHOWN_COLUMNS else ""
    return (f"the pattern {pattern!r} matches no column of {where} (fnmatch-style, case-sensitive); "
            f"its columns: {shown}{more}")


def shape_message(shape: list[Any], count: int) -> str:
    return (f"shape {list(shape)} doesn't match the {count} column{'s' if count != 1 else ''} gathered; "
            f"omit `shape` (it becomes [{count}]) or give [{count}]")


def checked(feature: Any, at: At) -> Any:
    """A feature that declares `columns:`, checked and with its shape filled in: `[n]` for a
    list (a pattern's `n` is known once it is matched). Raises SpecError at `at`."""
    columns = feature.columns
    if not getattr(feature, "gathers_columns", False):
        raise (at / "columns").error(f"a feature of type {feature.type_name} reads one column (`source:`); "
                                     "`columns:` gathers several into a tensor feature")
    if feature.source is not None:
        raise at.error("give `columns` (several columns gathered into one feature) or `source` (one column), "
                       "not both")
    if feature.sequence:
        raise (at / "columns").error("`columns:` gathers a record's columns into one tensor; a per-step feature "
                                     "reads one column per step (declare it under `context:` or `features:`)")
    shape = list(feature.shape)
    if is_pattern(columns):
        if not columns:
            raise (at / "columns").error("expected a pattern such as \"gene_*\" or a list of column names, "
                                         "received an empty string")
        if shape and (len(shape) != 1 or shape[0] is None):
            raise (at / "shape").error(f"columns gathered into one feature make a fixed shape [n]; omit `shape`, "
                                       f"received {shape}")
        return feature
    if not columns:
        raise (at / "columns").error("expected at least one column name, e.g. [xmin, ymin, xmax, ymax]")
    seen: set[str] = set()
    for index, name in enumerate(columns):
        if name in seen:
            raise (at / "columns" / index).error(f"column `{name}` is listed twice")
        seen.add(name)
    # ([null, n]: n columns from each row of a group, when rows are grouped into one record)
    if shape and shape not in ([len(columns)], [None, len(columns)]):
        raise (at / "shape").error(shape_message(shape, len(columns)))
    return dataclasses.replace(feature, shape=[len(columns)]) if not shape else feature


def resolved(feature: Any, header: Sequence[str], where: str, at: Any) -> Any:
    """A pattern feature with its columns matched against `header` (the source's columns, in
    file order) and its shape `[n]`; `at(path, message)` makes the SpecError."""
    found = matching(feature.columns, header)
    if not found:
        raise at(("columns",), no_match_message(feature.columns, header, where))
    if feature.shape and list(feature.shape) != [len(found)]:
        raise at(("shape",), shape_message(feature.shape, len(found)) + f" (the pattern {feature.columns!r} "
                 f"matches {len(found)} columns of {where})")
    return dataclasses.replace(feature, columns=found, shape=[len(found)])


def missing_cells(gathered: GatheredColumns, missing_rows: Any) -> np.ndarray:
    """Per row and column (rows × n): whether the source had no value there."""
    if not gathered.columns:
        return np.zeros((0, 0), dtype=bool)
    return np.stack([missing_rows(column) for column in gathered.columns], axis=1)
