"""Rows of a table grouped into one record: `source.group_by` on a `format: example` spec.

A feature whose shape begins with a variable dimension (`[null]`, `[null, k]`) takes a value
from each row of its record's group: the builder hands it, per record, a `GroupRows` (the
group's cells in order, with where each row is). Each row is encoded as the feature's *row
feature* would encode it (the same feature with the first dimension taken off: `[]`, `[k]`), so
a row's value is read, checked and worded as a record's is (a list cell, `columns:` of k
columns, a class name), then the rows' values are laid end to end per record. A row whose
cells for the feature are all missing adds no values (an image without boxes, in a table of one
box per row, is a row with its box columns empty).
"""
from __future__ import annotations

import dataclasses
import itertools
from typing import Any, Sequence

import numpy as np

from .gathered import GatheredColumns
from .shown import Language
from .tensor import TensorFeature
from .values import Kept, Values


class GroupRows(list):
    """One record's cells of one column: a cell per row of its group, in the group's order;
    `origins[i]` names row i (`boxes.csv, line 7`)."""

    def __init__(self, cells: Sequence[Any], origins: list[str]):
        super().__init__(cells)
        self.origins = origins


def takes_rows(feature: Any) -> bool:
    """Whether a feature of a grouped Example takes every row's value (a first dimension of
    null), rather than one value per group. So do tensors (and the types extending them, such as
    class labels), whose `shape` lists a record's values, and a type that declares
    `takes_group_rows = True`; not an image, whose `[null, null, 3]` is one image's size."""
    if not (isinstance(feature, TensorFeature) or getattr(feature, "takes_group_rows", False)):
        return False
    shape = getattr(feature, "shape", None)
    return bool(shape) and shape[0] is None


def row_feature(feature: Any) -> Any:
    """What one row of a grouped feature is: the feature without its first (variable) dimension."""
    return dataclasses.replace(feature, shape=list(feature.shape[1:]))


def is_grouped(column: Any) -> bool:
    """Whether a batch's column (or gathered columns) holds groups of rows per record."""
    first = column.columns[0] if isinstance(column, GatheredColumns) and column.columns else column
    return isinstance(first, list) and len(first) > 0 and isinstance(first[0], GroupRows)


def _grouped_part(part: Any) -> bool:
    return isinstance(part, list) and len(part) > 0 and isinstance(part[0], GroupRows)


def encode(feature: Any, column: Any, base_dir: str | None, language: Language) -> dict[str, Values]:
    """A batch of groups (`GroupRows` per record, or gathered columns of them) as the feature's
    values per record: every row encoded by the row feature, the rows' counts summed per record."""
    gathered = column if isinstance(column, GatheredColumns) else None
    columns = gathered.columns if gathered is not None else [column]
    records = len(columns[0])
    lengths = np.fromiter((len(group) for group in columns[0]), dtype=np.int64, count=records)
    own = len(feature.source_names) if gathered is not None else 1  # then its linked columns (a bbox's image)
    flats = [list(itertools.chain.from_iterable(part)) if number < own or _grouped_part(part)
             else [value for value, count in zip(part, lengths.tolist()) for _ in range(count)]  # one a group
             for number, part in enumerate(columns)]
    # a row with none of the feature's own values adds none
    empty = np.ones(len(flats[0]), dtype=bool)
    for flat in flats[:own]:
        empty &= np.fromiter((value is None for value in flat), dtype=bool, count=len(flat))
    kept = np.flatnonzero(~empty)
    every = len(kept) == len(empty)
    chosen = kept.tolist()
    cells = [flat if every else [flat[index] for index in chosen] for flat in flats]
    where = list(itertools.chain.from_iterable(group.origins for group in columns[0]))
    origins = where if every else [where[index] for index in chosen]
    owners = np.repeat(np.arange(records, dtype=np.int64), lengths)[kept]  # the record of each row kept
    rows: Any = GatheredColumns(gathered.names, cells) if gathered is not None else cells[0]
    encoded = row_feature(feature).encode(rows, origins.__getitem__, base_dir, language)
    merged = {}
    for key, values in encoded.items():
        counts = np.bincount(owners, weights=values.counts, minlength=records).astype(np.int64)
        kept = values.kept_objects
        if kept is not None:  # the objects each record's rows gave, and which stayed (features/objects.py)
            kept = Kept(np.bincount(owners, weights=kept.given, minlength=records).astype(np.int64), kept.kept)
        merged[key] = Values(values.kind, values.values, counts, kept_objects=kept)
    return merged
