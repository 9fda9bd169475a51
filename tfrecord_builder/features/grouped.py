"""Rows of a table grouped into one record: `source.group_by` on a `format: example` spec.

A feature whose shape begins with a variable dimension (`[null]`, `[null, k]`), of a type that
declares `Feature.takes_group_rows`, takes a value from each row of its record's group: the
builder hands it, per record, a `GroupRows` (the group's cells in order, with where each row
is), and its batch names those columns (`Batch.grouped`). Each row is encoded as the feature's *row
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

from .base import Feature
from .context import EncodeContext
from .gathered import GatheredColumns
from .values import Kept, Values


class GroupRows(list):
    """One record's cells of one column: a cell per row of its group, in the group's order;
    `origins[i]` names row i (`boxes.csv, line 7`)."""

    def __init__(self, cells: Sequence[Any], origins: list[str]):
        super().__init__(cells)
        self.origins = origins


def takes_rows(feature: Feature) -> bool:
    """Whether a feature of a grouped Example takes every row's value (a first dimension of
    null), rather than one value per group: a type that declares `takes_group_rows` (tensors and
    the types extending them, such as class labels, whose `shape` lists a record's values; boxes);
    not an image, whose `[null, null, 3]` is one image's size."""
    if not feature.takes_group_rows:
        return False
    shape = getattr(feature, "shape", None)  # (a type taking group rows has one: Feature.takes_group_rows)
    return bool(shape) and shape[0] is None


def row_feature(feature: Any) -> Any:
    """What one row of a grouped feature is: the feature without its first (variable) dimension."""
    return dataclasses.replace(feature, shape=list(feature.shape[1:]))


def encode(feature: Any, column: Any, context: EncodeContext, grouped: Sequence[bool]) -> dict[str, Values]:
    """A batch of groups (`GroupRows` per record, or gathered columns of them) as the feature's
    values per record: every row encoded by the row feature, the rows' counts summed per record.
    `grouped` says which of the columns hold groups (the feature's own do; a linked column, such
    as a bbox's image, may hold one value a group)."""
    gathered = column if isinstance(column, GatheredColumns) else None
    columns = gathered.columns if gathered is not None else [column]
    records = len(columns[0])
    lengths = np.fromiter((len(group) for group in columns[0]), dtype=np.int64, count=records)
    flats = [list(itertools.chain.from_iterable(part)) if grouped[number]
             else [value for value, count in zip(part, lengths.tolist()) for _ in range(count)]  # one a group
             for number, part in enumerate(columns)]
    own = len(feature.source_names) if gathered is not None else 1  # then its linked columns (a bbox's image)
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
    encoded = row_feature(feature).encode(rows, context.named(origins.__getitem__))
    merged = {}
    for key, values in encoded.items():
        counts = np.bincount(owners, weights=values.counts, minlength=records).astype(np.int64)
        kept = values.kept_objects
        if kept is not None:  # the objects each record's rows gave, and which stayed (features/objects.py)
            kept = Kept(np.bincount(owners, weights=kept.given, minlength=records).astype(np.int64), kept.kept)
        merged[key] = Values(values.kind, values.values, counts, kept_objects=kept)
    return merged
