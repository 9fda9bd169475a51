"""`diff`: two specs, or two built datasets (e.g. two versions), compared.

Specs: features added, removed or changed, and the spec keys that moved (tools/diff/specs.py). Datasets
also: each split's examples, shards and bytes, the drift of each feature's statistics, split by
split (tools/diff/drift.py), and the rows that changed split (tools/diff/membership.py). Each measure has a
threshold (`Thresholds`); `Comparison.crossed` says whether anything is over one, which the
command line turns into exit status 1.

>>> comparison = diff("build/wine/1.0.0", "build/wine/1.0.0")
>>> comparison.crossed, [measure.value for measure in comparison.drift][:2]
(False, [0.0, 1.0])
>>> diff("specs/wine.yaml", "build/wine/1.0.0").spec   # a spec against a dataset: their specs
[]
"""
from __future__ import annotations

import os

from ...errors import UsageError
from ...spec.model import Spec
from ...write.info import DatasetInfo
from .drift import drift, split_changes
from .membership import MembershipChange, membership_change
from .model import Comparison, Measure, Side, SpecChange, SplitChange, Thresholds
from .sides import open_side
from .specs import declarations, describe_change, snapshot_changes, spec_changes

__all__ = ["Comparison", "Measure", "MembershipChange", "Side", "SpecChange", "SplitChange", "Thresholds",
           "describe_change", "diff", "open_side"]

Comparable = str | os.PathLike | Spec | DatasetInfo


def diff(old: Comparable, new: Comparable, thresholds: Thresholds | None = None) -> Comparison:
    """Compares OLD with NEW: two specs (files or Spec), two built datasets (folders, metadata files
    or DatasetInfo), or a spec with a dataset (then the dataset's spec is compared, and nothing else).

    Raises UsageError for a path that is neither a spec nor a dataset, and for two unrelated
    things (different names and no feature in common): a comparison of those says nothing.

    >>> tb.diff("build/wine/1.0.0", "build/wine/1.0.0").crossed
    False
    """
    thresholds = thresholds or Thresholds()
    before, after = open_side(old), open_side(new)
    _check_related(before, after)
    datasets = before.info is not None and after.info is not None
    changes = spec_changes(before.spec, after.spec, with_splits=not datasets, fail_on_added=thresholds.fail_on_added)
    if before.info is None or after.info is None:
        return Comparison(before, after, thresholds, changes, [], [])
    changes += snapshot_changes(before.info, after.info)  # the versions of the tables read, where they moved
    return Comparison(before, after, thresholds, changes, split_changes(before.info, after.info, thresholds),
                      drift(before.info, after.info, thresholds),
                      membership_change(before.info, after.info, thresholds.max_moved_rows))


def _check_related(old: Side, new: Side) -> None:
    if old.spec.name != new.spec.name and not set(declarations(old.spec)) & set(declarations(new.spec)):
        raise UsageError(f"{old.path} ({old.spec.name}) and {new.path} ({new.spec.name}) are unrelated: "
                         "different names and no feature in common")
