"""What a feature type hands to the record encoder for a batch of rows (`Values`), and what it is
handed back to check from a shard read as columns (`StoredColumn`, codec/columns.py)."""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Iterable, Literal

import numpy as np

ListKind = Literal["int64", "float", "bytes"]


@dataclass
class Values:
    """One record key's values for a batch of rows, flattened in row order.

    `kind` is the `tf.train.Feature` list it is stored in; `values` is an int64 or float32 array
    (or a list of bytes for "bytes"); row i holds `counts[i]` of them. For a sequence feature
    the rows are steps, and record r has `steps[r]` of them.
    """

    kind: ListKind
    values: np.ndarray | list[bytes]
    counts: np.ndarray  # int64, one per row (per step, for a sequence)
    steps: np.ndarray | None = None  # int64, one per record: its number of steps (sequences only)
    # which of the objects each record gave it the feature kept, where it may drop some (a bbox
    # feature's `min_size`): the per-object features drop the same ones (features/objects.py)
    kept_objects: "Kept | None" = None
    # per record, counts a feature notes for the statistics alone, by name (`Counted.marked`: a
    # text's ids cut by max_length); never stored. They follow the records they count.
    marks: "dict[str, np.ndarray] | None" = None

    @property
    def num_rows(self) -> int:
        """Records (for a sequence: steps)."""
        return len(self.counts)

    def taken(self, rows: np.ndarray | list[int]) -> "Values":
        """The values of the records at `rows` (ascending), in order (for a sequence, all steps
        of those records).

        Masks repeated over the counts pick the values in one NumPy pass, not a slice per record.
        """
        chosen = np.zeros(self.num_rows if self.steps is None else len(self.steps), dtype=bool)
        chosen[rows] = True
        step_chosen = chosen if self.steps is None else np.repeat(chosen, self.steps)
        value_chosen = np.repeat(step_chosen, self.counts)
        flat = self.values
        picked = list(itertools.compress(flat, value_chosen)) if isinstance(flat, list) else flat[value_chosen]
        steps = None if self.steps is None else self.steps[rows]
        kept = self.kept_objects
        if kept is not None:
            kept = Kept(kept.given[rows], kept.kept[np.repeat(chosen, kept.given)])
        marks = None if self.marks is None else {name: counts[rows] for name, counts in self.marks.items()}
        return Values(self.kind, picked, self.counts[step_chosen], steps, kept, marks)

    def repeated(self, records: np.ndarray, offsets: "tuple[np.ndarray, np.ndarray | None] | None" = None) -> "Values":
        """The values of the records at `records` (ascending, a record as often as it is named):
        the other features of a source row that becomes several records (`Feature.fan_out`).
        `offsets`: this Values' `offsets()`, where a caller takes many records' values from it."""
        records = np.asarray(records, dtype=np.int64)
        counts_at, steps_at = self.offsets() if offsets is None else offsets
        rows = records
        if self.steps is not None and steps_at is not None:  # a record's rows are its steps
            rows = _ranges(steps_at[:-1][records], self.steps[records])
        chosen = _ranges(counts_at[:-1][rows], self.counts[rows])
        flat = self.values
        picked = [flat[index] for index in chosen.tolist()] if isinstance(flat, list) else flat[chosen]
        marks = None if self.marks is None else {name: counts[records] for name, counts in self.marks.items()}
        return Values(self.kind, picked, self.counts[rows], None if self.steps is None else self.steps[records],
                      marks=marks)

    def offsets(self) -> tuple[np.ndarray, np.ndarray | None]:
        """Where each row's values start (`offsets_of` the counts) and, with steps, where each
        record's rows start: what `repeated` looks records up in."""
        return offsets_of(self.counts), None if self.steps is None else offsets_of(self.steps)


def joined(parts: "list[Values]") -> Values:
    """The records of `parts` (one record key's values of batches, one after another) as one
    Values, without `kept_objects` (which only encoding reads): how a shard's values are gathered
    back for statistics (build/runners/keyed.py)."""
    first = parts[0]
    flat: np.ndarray | list[bytes]
    if isinstance(first.values, list):
        flat = [value for part in parts for value in part.values]
    else:
        flat = np.concatenate([np.asarray(part.values) for part in parts])
    steps = None if first.steps is None else np.concatenate([part.steps for part in parts if part.steps is not None])
    marks = None if first.marks is None else {name: np.concatenate([(part.marks or {})[name] for part in parts])
                                              for name in first.marks}
    return Values(first.kind, flat, np.concatenate([part.counts for part in parts]), steps, marks=marks)


@dataclass
class Kept:
    """Which of the objects a batch's records gave a feature it kept.

    Attributes:
        given: int64 per record, the objects the source gave it.
        kept: bool per object given, in record order (`given[r]` of them for record r).
    """

    given: np.ndarray
    kept: np.ndarray


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indices start..start+length of each pair, concatenated (one NumPy pass)."""
    total = int(lengths.sum())
    if not total:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(lengths)
    return np.arange(total, dtype=np.int64) + np.repeat(starts - (ends - lengths), lengths)


@dataclass
class StoredColumn:
    """One record key's stored values over rows: records, or for a feature list the steps of
    every record (record r has `steps[r]` of them). Row i holds `counts[i]` values, flattened in
    row order: int64 or float32 numbers, or for a bytes list each value's length in bytes (all a
    check looks at)."""

    kind: ListKind
    counts: np.ndarray  # int64, per row
    values: np.ndarray
    steps: np.ndarray | None = None  # int64, per record (feature lists only)

    @property
    def offsets(self) -> np.ndarray:
        """Where each row's values start in `values` (and, last, where they end)."""
        return offsets_of(self.counts)

    def rows_where(self, flags: np.ndarray) -> np.ndarray:
        """Per row: whether any of its values is flagged."""
        return any_per_group(flags, self.counts)

    def records_where(self, rows: np.ndarray) -> np.ndarray:
        """Per record: whether any of its rows is flagged (for a feature list, any of its steps)."""
        return rows if self.steps is None else any_per_group(rows, self.steps)

    def select(self, rows: np.ndarray, records: np.ndarray) -> "StoredColumn":
        """The column of the rows and records kept (boolean masks)."""
        values = self.values[np.repeat(rows, self.counts)]
        return StoredColumn(self.kind, self.counts[rows], values, None if self.steps is None else self.steps[records])


def flat_int64(rows: "Iterable[Iterable[int]]", count: int) -> np.ndarray:
    """The rows' integers (a batch's token ids, one list a text) in one int64 array of `count`:
    chained in C, 1.9x a generator over the rows' items (2.8 million ids a 100,000-review build)."""
    return np.fromiter(itertools.chain.from_iterable(rows), dtype=np.int64, count=count)


def offsets_of(counts: np.ndarray) -> np.ndarray:
    """Where each of consecutive groups of `counts[i]` items starts (and, last, where they end)."""
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def any_per_group(flags: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Per group of consecutive items (`sizes[i]` items each): whether any is flagged."""
    seen = offsets_of(flags)
    offsets = offsets_of(sizes)
    return seen[offsets[1:]] > seen[offsets[:-1]]
