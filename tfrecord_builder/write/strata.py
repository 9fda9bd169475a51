"""Stratified split assignment (`stratify:`): every class divided among the splits by its own
records' key hashes, so each split's share of a class is within one record of its fraction.

Within a class, records are ranked by key hash; split s takes the ranks from round(c[s-1] * n)
to round(c[s] * n), with c the splits' cumulative fractions and n the class's records. That
needs every record's class and hash first (a pass over the source before encoding); the ranks
are then kept as each class's *cut hashes* (the hash at each split's first rank), so assigning
a record is again a pure function of its class and hash, batch by batch, in any process, in any
order. Records with equal hashes (equal rows, when the row is the key) fall on the same side of
a cut: identical rows share a split, as they do unstratified.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

_LOW = (1 << 64) - 1


@dataclass(frozen=True)
class Strata:
    """Each class's cut hashes: a record of class c with key hash h goes to the split of index
    `number of cuts[c] <= h` (a cut None lies past the class's last record)."""

    cuts: dict[int, tuple[int | None, ...]]  # class index -> one 128-bit hash per split but the first

    def assign(self, classes: np.ndarray, hashes: np.ndarray) -> np.ndarray:
        """The split index of each record, from its class and its (n, 2) uint64 key hash.

        A class without cuts (only after a first pass that stopped at an error the build then
        raises) goes to the first split."""
        splits = np.zeros(len(classes), np.int64)
        for label in np.unique(classes).tolist():
            rows = np.flatnonzero(classes == label)
            high, low = hashes[rows, 0], hashes[rows, 1]
            for cut in self.cuts.get(label, ()):
                if cut is not None:
                    top, bottom = np.uint64(cut >> 64), np.uint64(cut & _LOW)
                    splits[rows] += (high > top) | ((high == top) & (low >= bottom))
        return splits

    def state(self) -> dict[str, list[str | None]]:
        """As JSON (a checkpoint keeps it: a resumed build must divide the classes the same way)."""
        return {str(label): [None if cut is None else f"{cut:032x}" for cut in cuts]
                for label, cuts in sorted(self.cuts.items())}


def stratified(classes: np.ndarray, hashes: np.ndarray, fractions: Sequence[float]) -> Strata:
    """The strata of records with these classes and (n, 2) uint64 key hashes, for splits of
    these fractions (in the spec's order)."""
    bounds = np.cumsum(fractions)[:-1].tolist()
    order = np.lexsort((hashes[:, 1], hashes[:, 0], classes))
    classes, hashes = classes[order], hashes[order]
    starts = np.flatnonzero(np.r_[True, classes[1:] != classes[:-1]]) if len(classes) else np.zeros(0, np.int64)
    stops = np.r_[starts[1:], len(classes)].astype(np.int64)
    cuts: dict[int, tuple[int | None, ...]] = {}
    for start, stop in zip(starts.tolist(), stops.tolist()):
        count = stop - start
        ranks = [cut_rank(bound, count) for bound in bounds]
        cuts[int(classes[start])] = tuple(None if rank >= count else _as_int(hashes[start + rank]) for rank in ranks)
    return Strata(cuts)


def cut_rank(cumulative: float, count: int) -> int:
    """The first rank of the split that starts at `cumulative` (a fraction) of a class of `count`
    records: the nearest whole number, halves rounded up."""
    return min(count, math.floor(cumulative * count + 0.5))


def _as_int(hash_pair: Any) -> int:
    return (int(hash_pair[0]) << 64) | int(hash_pair[1])
