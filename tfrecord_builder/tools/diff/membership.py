"""Rows that changed split between two built datasets: each split's key hashes
(write/membership.py) compared, so a record of OLD's test split now in NEW's train split shows
(a model tested on NEW's test split may have trained on it, or the reverse).

A row is followed by its key: the `source.key` column, or without one the whole row, so a row
with any value changed can't be followed (its key is new). Those are counted, not guessed at.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from ...write.info import DatasetInfo
from ...write.membership import read_membership


@dataclass(frozen=True)
class MembershipChange:
    """Where OLD's rows are in NEW. `moved` counts OLD's rows of a split found in another split of
    NEW and not in their own; `unfollowed` OLD's rows whose key NEW lacks; `added` NEW's rows whose
    key OLD lacks. `missing`: which side has no membership files (then nothing was compared)."""

    threshold: float  # the most rows that may move
    moved: dict[tuple[str, str], int] = field(default_factory=dict)  # (old split, new split) -> rows
    stayed: int = 0
    unfollowed: int = 0
    added: int = 0
    whole_row_keys: bool = False  # OLD or NEW had no source.key: a row's key is the whole row
    missing: Optional[str] = None  # "OLD", "NEW" or "OLD and NEW"

    @property
    def num_moved(self) -> int:
        return sum(self.moved.values())

    @property
    def crossed(self) -> bool:
        return self.missing is None and self.num_moved > self.threshold

    def to_dict(self) -> dict[str, Any]:
        if self.missing is not None:
            return {"compared": False, "missing": self.missing}
        return {"compared": True, "crossed": self.crossed, "threshold": self.threshold,
                "moved": [{"old": old, "new": new, "rows": rows} for (old, new), rows in self.moved.items()],
                "num_moved": self.num_moved, "stayed": self.stayed, "unfollowed": self.unfollowed,
                "added": self.added}


def membership_change(old: DatasetInfo, new: DatasetInfo, threshold: float) -> MembershipChange:
    """Compares the split membership of two datasets."""
    before, after = read_membership(old), read_membership(new)
    if before is None or after is None:
        missing = " and ".join(side for side, found in (("OLD", before), ("NEW", after)) if found is None)
        return MembershipChange(threshold, missing=missing)
    everything_new = np.concatenate(list(after.values()) or [np.empty(0, np.uint64)])
    everything_old = np.concatenate(list(before.values()) or [np.empty(0, np.uint64)])
    moved: dict[tuple[str, str], int] = {}
    stayed = 0
    for old_split, hashes in before.items():
        own = np.isin(hashes, after[old_split]) if old_split in after else np.zeros(len(hashes), bool)
        stayed += int(own.sum())
        for new_split, others in after.items():
            if new_split != old_split:
                count = int((np.isin(hashes, others) & ~own).sum())
                if count:
                    moved[(old_split, new_split)] = count
    return MembershipChange(
        threshold, moved, stayed,
        unfollowed=int((~np.isin(everything_old, everything_new)).sum()),
        added=int((~np.isin(everything_new, everything_old)).sum()),
        whole_row_keys=old.spec.source.key is None or new.spec.source.key is None)
