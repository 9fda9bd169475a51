"""A record's objects: the boxes of a bbox feature and the values every other per-object feature
holds for them (labels, flags, areas, masks, keypoints), kept together.

A bbox feature that may drop an object (`min_size`, `clip: true`, an image's `resize: crop`)
tells which of the objects it was given it kept (`Kept`, on its `Values`); every feature named in
its `per_object:` then keeps the values of the same objects (`dropped_whole`). So an object goes
whole: a dropped box never leaves its label to shift onto the next box. Such a feature must hold
one value (or one row of values) per object given, or none in a record: anything else is an error
naming the record and both counts, since which of its values went with the dropped box can't be
told.
"""
from __future__ import annotations

import itertools
from typing import Any, Callable, Mapping

import numpy as np

from ..errors import DataError
from .values import Kept, Values


def dropped_whole(features: Mapping[str, Any], values: dict[str, dict[str, Values]],
                  origin: Callable[[int], str]) -> dict[str, dict[str, Values]]:
    """`values` with every per-object feature's values of the objects a bbox feature dropped
    taken out (the bbox feature's own values hold only the kept ones already)."""
    for name, feature in features.items():
        kept = next((item.kept_objects for item in values[name].values() if item.kept_objects is not None), None)
        if kept is None:
            continue
        for other in feature.objects_with:
            values[other] = {key: _kept_values(item, kept, origin, other, name)
                             for key, item in values[other].items()}
    return values


def _kept_values(item: Values, kept: Kept, origin: Callable[[int], str], name: str, boxes: str) -> Values:
    """One record key's values of a per-object feature, but for those of dropped objects."""
    counts, given = item.counts, kept.given
    if item.steps is not None or len(counts) != len(given):
        return item  # (not per record: the spec keeps sequence features out of `per_object`)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_object = np.where(given > 0, counts // np.maximum(given, 1), 0)
    wrong = (counts > 0) & ((given == 0) | (per_object * given != counts))
    if wrong.any():
        row = int(np.flatnonzero(wrong)[0])
        count, objects = int(counts[row]), int(given[row])
        raise DataError(f"{origin(row)}: feature `{name}` holds {count} value{'s' * (count != 1)} for "
                        f"the {objects} object{'s' * (objects != 1)} of `{boxes}`; a dropped object is dropped "
                        f"whole, so each feature in `{boxes}`'s `per_object:` must hold one value (or row) per box, "
                        "or none; name only the features that do in `per_object:`")
    if kept.kept.all():
        return item
    units = np.repeat(per_object, given)  # values per object given
    chosen = np.repeat(kept.kept, units)
    flat = item.values
    picked = list(itertools.compress(flat, chosen)) if isinstance(flat, list) else flat[chosen]
    owners = np.repeat(np.arange(len(given)), given)
    kept_per_record = np.bincount(owners[kept.kept], minlength=len(given)).astype(np.int64)
    return Values(item.kind, picked, per_object * kept_per_record)
