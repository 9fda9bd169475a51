"""What a comparison found: spec changes, split counts, statistics' measures, and the thresholds
that decide which of them fail it."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Optional

from ...spec.model import Spec
from ...write.info import DatasetInfo

if TYPE_CHECKING:
    from .membership import MembershipChange


@dataclass(frozen=True)
class Thresholds:
    """The largest change of each measure that still passes; `math.inf` switches a measure off.

    >>> Thresholds(max_mean_shift=1.0).max_class_shift
    0.05
    """

    max_mean_shift: float = 0.5  # |new mean - old mean| / old std: numbers, and lengths with a std
    max_std_ratio: float = 1.5  # the larger of new std / old std and its inverse
    max_class_shift: float = 0.05  # largest change of one class's (or top string value's) share
    max_classes_changed: float = 0  # classes that appeared in, or vanished from, a split
    max_count_change: float = 0.1  # relative change of a split's examples
    max_size_change: float = 0.2  # relative change of a split's bytes
    max_vocabulary_change: float = 0.2  # relative change of a string feature's vocabulary size
    max_length_change: float = 0.2  # relative change of the mean length (without a std) and the max length
    max_image_size_change: float = 0.1  # relative change of the images' mean height or width
    max_nan_change: float = 0.01  # change of the share of a feature's values that are NaN or infinite
    max_missing_change: float = 0.01  # change of the share of examples missing the feature
    max_moved_rows: float = 0  # rows of OLD found by their key in another split of NEW
    fail_on_added: bool = False  # added features and splits fail too (by default they are reported)

    def __post_init__(self) -> None:
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if item.name != "fail_on_added" and not (isinstance(value, (int, float)) and value >= 0):
                raise ValueError(f"{item.name}: expected a number of 0 or more, received {value!r}")

    def to_dict(self) -> dict[str, Any]:
        return {key: _json_number(value) for key, value in dataclasses.asdict(self).items()}


@dataclass(frozen=True)
class Side:
    """One of the two things compared: a spec, or a built dataset (with its spec)."""

    path: str
    spec: Spec
    info: Optional[DatasetInfo] = None

    @property
    def kind(self) -> Literal["spec", "dataset"]:
        return "dataset" if self.info is not None else "spec"

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "name": self.spec.name, "version": self.spec.version}


@dataclass(frozen=True)
class SpecChange:
    """A feature or a spec key added, removed or changed; `changes` holds (key, old, new) of a
    changed feature."""

    subject: str  # `feature`, `split`, or a spec key path (`label`, `source.path`, `output.compression`)
    name: str  # the feature's or split's name, or the key path again
    change: Literal["added", "removed", "changed"]
    old: Any = None
    new: Any = None
    changes: list[tuple[str, Any, Any]] = field(default_factory=list)
    crossed: bool = False

    def to_dict(self) -> dict[str, Any]:
        out = {"subject": self.subject, "name": self.name, "change": self.change, "crossed": self.crossed}
        if self.changes:
            out["changes"] = [{"key": key, "old": old, "new": new,
                               **({"indices": index_changes(old, new)} if key == "names" and isinstance(old, list)
                                  and isinstance(new, list) else {})} for key, old, new in self.changes]
        else:
            out.update(old=self.old, new=self.new)
        return out


@dataclass(frozen=True)
class Measure:
    """One measure of change, crossed when `value` is over `threshold`.

    `unit` says how to read `value`: `std` (units of the old standard deviation), `ratio`,
    `share` (a change of a share: 0.05 is 5 percentage points), `relative` (0.1 is 10%) or
    `count` (a number of classes, crossed when over `threshold` 0). A measure that informs but
    decides nothing has `threshold` None.
    """

    split: str
    feature: str  # "" for a split's own counts
    measure: str
    value: float
    unit: Literal["std", "ratio", "share", "relative", "count"]
    threshold: Optional[float]
    old: Any = None
    new: Any = None
    detail: str = ""  # what changed, for people: `13.04 -> 14.5`, `barbera 25.2% -> 37.5%`

    @property
    def crossed(self) -> bool:
        return self.threshold is not None and self.value > self.threshold

    def to_dict(self) -> dict[str, Any]:
        out = {"split": self.split, "feature": self.feature, "measure": self.measure,
               "value": _json_number(self.value), "unit": self.unit, "threshold": _json_number(self.threshold),
               "crossed": self.crossed, "old": self.old, "new": self.new, "detail": self.detail}
        if not self.feature:
            del out["feature"]
        return out


@dataclass(frozen=True)
class SplitChange:
    """A split's counts side by side (None on the side that lacks the split)."""

    name: str
    old: Optional[dict[str, int]]  # num_examples, num_shards, num_bytes
    new: Optional[dict[str, int]]
    measures: list[Measure]
    crossed_presence: bool = False  # removed (or added, with fail_on_added)

    @property
    def change(self) -> Literal["added", "removed", "kept"]:
        return "added" if self.old is None else "removed" if self.new is None else "kept"

    @property
    def crossed(self) -> bool:
        return self.crossed_presence or any(measure.crossed for measure in self.measures)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"split": self.name, "change": self.change, "crossed": self.crossed,
                               "old": self.old, "new": self.new}
        for measure in self.measures:
            out[measure.measure.replace(" ", "_")] = {"value": _json_number(measure.value),
                                                      "threshold": _json_number(measure.threshold),
                                                      "crossed": measure.crossed}
        return out


@dataclass
class Comparison:
    """Everything `diff` found between OLD and NEW; `crossed` when anything fails a threshold.

    `splits` and `drift` are empty unless both sides are built datasets.
    """

    old: Side
    new: Side
    thresholds: Thresholds
    spec: list[SpecChange]
    splits: list[SplitChange]
    drift: list[Measure]
    membership: Optional["MembershipChange"] = None  # both sides datasets: rows that changed split

    @property
    def datasets(self) -> bool:
        """Whether both sides are built datasets (else only their specs are compared)."""
        return self.old.info is not None and self.new.info is not None

    @property
    def crossed_by_section(self) -> dict[str, int]:
        """How many changes are over their thresholds in each section (a split's each crossing counted)."""
        return {
            "spec": sum(change.crossed for change in self.spec),
            "splits": sum(split.crossed_presence + sum(m.crossed for m in split.measures) for split in self.splits),
            "drift": sum(measure.crossed for measure in self.drift),
            "membership": int(self.membership is not None and self.membership.crossed),
        }

    @property
    def num_crossed(self) -> int:
        return sum(self.crossed_by_section.values())

    @property
    def crossed(self) -> bool:
        return self.num_crossed > 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "old": self.old.to_dict(), "new": self.new.to_dict(),
            "crossed": self.crossed, "num_crossed": self.num_crossed, "crossed_by_section": self.crossed_by_section,
            "thresholds": self.thresholds.to_dict(),
            "spec": [change.to_dict() for change in self.spec],
            "splits": [split.to_dict() for split in self.splits],
            "drift": [measure.to_dict() for measure in self.drift],
            "membership": self.membership.to_dict() if self.membership is not None else None,
        }


def index_changes(old: list[Any], new: list[Any]) -> dict[str, list[tuple[Any, ...]]]:
    """What a change of class names does to the indices a model learnt: `moved` (name, old index,
    new index), `new` (name, index) and `removed` (name, old index), each in index order.

    >>> index_changes(["fog", "hail", "rain"], ["fog", "clear", "hail", "rain"])
    {'moved': [('hail', 1, 2), ('rain', 2, 3)], 'new': [('clear', 1)], 'removed': []}
    """
    before = {name: index for index, name in enumerate(old)}
    after = {name: index for index, name in enumerate(new)}
    return {"moved": [(name, before[name], index) for name, index in after.items()
                      if name in before and before[name] != index],
            "new": [(name, index) for name, index in after.items() if name not in before],
            "removed": [(name, index) for name, index in before.items() if name not in after]}


def _json_number(value: Any) -> Any:
    """JSON has no infinity: an infinite measure (a change from zero) is the string "inf"."""
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value
