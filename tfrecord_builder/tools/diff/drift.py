"""The data side of a comparison: each split's counts, and the drift of each feature's statistics
(tfrecord_builder.json's `statistics`, split by split).

Every key of the statistics is optional (datasets of older versions lack some): a measure is taken
only where both sides hold what it needs.
"""
from __future__ import annotations

import math
from typing import Any

from ...write.info import DatasetInfo, SplitInfo
from .model import Measure, SplitChange, Thresholds


def split_changes(old: DatasetInfo, new: DatasetInfo, thresholds: Thresholds) -> list[SplitChange]:
    """Examples, shards and bytes of every split of either dataset. A removed split fails; an added
    one fails with `fail_on_added`."""
    changes = []
    for name in list(old.splits) + [name for name in new.splits if name not in old.splits]:
        before, after = _counts(old.splits.get(name)), _counts(new.splits.get(name))
        if before is None or after is None:
            crossed = after is None or thresholds.fail_on_added
            changes.append(SplitChange(name, before, after, [], crossed_presence=crossed))
            continue
        measures = [
            _relative_measure(name, "", "examples", before["num_examples"], after["num_examples"],
                              thresholds.max_count_change),
            _relative_measure(name, "", "bytes", before["num_bytes"], after["num_bytes"], thresholds.max_size_change),
            _relative_measure(name, "", "shards", before["num_shards"], after["num_shards"], None),
        ]
        changes.append(SplitChange(name, before, after, measures))
    return changes


def drift(old: DatasetInfo, new: DatasetInfo, thresholds: Thresholds) -> list[Measure]:
    """The measures of every feature both datasets have, in every split both have."""
    features = [name for name in old.spec.features if name in new.spec.features]
    measures = []
    for split in old.splits:
        if split not in new.splits:
            continue
        before, after = old.statistics.get(split, {}), new.statistics.get(split, {})
        examples = (old.splits[split].num_examples, new.splits[split].num_examples)
        for name in features:
            if before.get(name) and after.get(name):
                measures += feature_drift(split, name, before[name], after[name], examples, thresholds)
    return measures


def feature_drift(split: str, feature: str, old: dict[str, Any], new: dict[str, Any],
                  examples: tuple[int, int], thresholds: Thresholds) -> list[Measure]:
    """The measures two statistics of one feature (write/stats.py's to_dict) allow."""
    measures: list[Measure] = []
    if "mean" in old and "mean" in new and "std" in old and "std" in new:
        measures += _numbers(split, feature, old, new, thresholds, _fills_counted_in(old, new))
    if "num_non_finite" in old or "num_non_finite" in new:
        measures.append(_non_finite(split, feature, old, new, thresholds))
    if ("num_missing" in old or "num_missing" in new) and all(examples):
        measures.append(_missing(split, feature, old, new, examples, thresholds))
    if "classes" in old and "classes" in new:
        measures += _classes(split, feature, old["classes"], new["classes"], thresholds)
    if "top_values" in old and "top_values" in new:
        measures += _strings(split, feature, old, new, thresholds)
    for key, noun in (("length", "length"), ("steps", "steps")):
        if isinstance(old.get(key), dict) and isinstance(new.get(key), dict):
            measures += _lengths(split, feature, noun, old[key], new[key], thresholds)
    if "height" in old and "height" in new and "width" in old and "width" in new:
        measures += _images(split, feature, old, new, thresholds)
    return measures


def _numbers(split: str, feature: str, old: dict[str, Any], new: dict[str, Any],
             thresholds: Thresholds, caveat: str = "") -> list[Measure]:
    shift = _shift(old["mean"], new["mean"], old["std"])
    ratio = _ratio(old["std"], new["std"])
    return [
        Measure(split, feature, "mean shift", shift, "std", thresholds.max_mean_shift, old["mean"], new["mean"],
                f"{_n(old['mean'])} -> {_n(new['mean'])} (old std {_n(old['std'])}){caveat}"),
        Measure(split, feature, "std ratio", ratio, "ratio", thresholds.max_std_ratio, old["std"], new["std"],
                f"{_n(old['std'])} -> {_n(new['std'])}{caveat}"),
    ]


def _fills_counted_in(old: dict[str, Any], new: dict[str, Any]) -> str:
    """Why two sides' figures differ in kind: statistics with `num_filled` leave the default's
    values out; an earlier build's (with `num_missing` and no `num_filled`) counted them in."""
    for side, stats, other in (("old", old, new), ("new", new, old)):
        if stats.get("num_missing") and "num_filled" not in stats and other.get("num_filled"):
            return f"; the {side} figures count its {stats['num_missing']:,} missing values filled by the default in"
    return ""


def _non_finite(split: str, feature: str, old: dict[str, Any], new: dict[str, Any], thresholds: Thresholds) -> Measure:
    """The share of the values that are NaN or infinite (`num_values` counts the finite ones)."""
    counts, shares = [], []
    for stats in (old, new):
        bad = stats.get("num_non_finite", 0)
        counts.append(bad)
        total = stats.get("num_values", 0) + bad
        shares.append(bad / total if total else 0.0)
    return Measure(split, feature, "NaN share", abs(shares[1] - shares[0]), "share", thresholds.max_nan_change,
                   counts[0], counts[1], f"{_percent(shares[0])} -> {_percent(shares[1])} ({counts[0]} -> {counts[1]})")


def _missing(split: str, feature: str, old: dict[str, Any], new: dict[str, Any], examples: tuple[int, int],
             thresholds: Thresholds) -> Measure:
    """The share of the split's examples whose source had no value (filled by the default, counted
    as `num_filled` too). A side without `num_missing` has none: the key may be written only where
    there are some."""
    counts = (old.get("num_missing", 0), new.get("num_missing", 0))
    shares = (counts[0] / examples[0], counts[1] / examples[1])
    return Measure(split, feature, "missing share", abs(shares[1] - shares[0]), "share", thresholds.max_missing_change,
                   counts[0], counts[1], f"{_percent(shares[0])} -> {_percent(shares[1])} ({counts[0]} -> {counts[1]})")


def _classes(split: str, feature: str, old: dict[str, int], new: dict[str, int],
             thresholds: Thresholds) -> list[Measure]:
    """Class balance: the largest change of one class's share (in points of share, not relative:
    a rare class going from 1% to 2% is a small shift), and the classes that appeared or vanished."""
    measures = []
    totals = sum(old.values()), sum(new.values())
    if all(totals):
        names = list(old) + [name for name in new if name not in old]
        shift, name = max(((abs(new.get(name, 0) / totals[1] - old.get(name, 0) / totals[0]), name)
                           for name in names), key=lambda item: item[0])
        before, after = old.get(name, 0) / totals[0], new.get(name, 0) / totals[1]
        measures.append(Measure(split, feature, "class shift", shift, "share", thresholds.max_class_shift,
                                {name: before}, {name: after}, f"{name}: {_percent(before)} -> {_percent(after)}"))
    appeared = {name: count for name, count in new.items() if count and not old.get(name)}
    vanished = {name: count for name, count in old.items() if count and not new.get(name)}
    if appeared:  # a class the old data never showed: whatever its share, a model never learnt it
        measures.append(Measure(split, feature, "new classes", len(appeared), "count", thresholds.max_classes_changed,
                                None, appeared,
                                ", ".join(f"{name} ({count})" for name, count in appeared.items())))
    if vanished:
        measures.append(Measure(split, feature, "vanished classes", len(vanished), "count",
                                thresholds.max_classes_changed, vanished, None,
                                ", ".join(f"{name} (was {count})" for name, count in vanished.items())))
    return measures


def _strings(split: str, feature: str, old: dict[str, Any], new: dict[str, Any],
             thresholds: Thresholds) -> list[Measure]:
    measures = []
    vocabulary = _vocabulary_change(old, new)
    if vocabulary is not None:
        value, detail = vocabulary
        measures.append(Measure(split, feature, "vocabulary size", value, "relative", thresholds.max_vocabulary_change,
                                _vocabulary(old)[0], _vocabulary(new)[0], detail))
    before, after = _top_shares(old), _top_shares(new)
    if before is not None and after is not None:
        shift, value, old_share, new_share = _top_shift(before, after)
        measures.append(Measure(split, feature, "top value shift", shift, "share", thresholds.max_class_shift,
                                _top_share(value, old_share, before[1]), _top_share(value, new_share, after[1]),
                                f"{value!r} {_share_text(old_share, before[1])} -> {_share_text(new_share, after[1])}"))
        entered = [value for value in after[0] if value not in before[0]]
        left = [value for value in before[0] if value not in after[0]]
        if entered or left:  # which values the top lists swapped: informative, the shift above decides
            parts = ([f"+ {', '.join(map(repr, entered))}"] if entered else []) + \
                    ([f"- {', '.join(map(repr, left))}"] if left else [])
            measures.append(Measure(split, feature, "top values", len(entered) + len(left), "count", None,
                                    left, entered, "; ".join(parts)))
    return measures


def _vocabulary(stats: dict[str, Any]) -> tuple[int | None, bool]:
    """(the vocabulary size, whether it is only a lower bound)."""
    if "vocabulary_size" in stats:
        return stats["vocabulary_size"], False
    return stats.get("vocabulary_size_at_least"), True


def _vocabulary_change(old: dict[str, Any], new: dict[str, Any]) -> tuple[float, str] | None:
    """The relative change of the vocabulary size; where a side counted only up to its cap, the
    least change its bound allows (0 when it allows none)."""
    (before, capped_before), (after, capped_after) = _vocabulary(old), _vocabulary(new)
    if before is None or after is None:
        return None
    detail = f"{'≥' if capped_before else ''}{before:,} -> {'≥' if capped_after else ''}{after:,}"
    if not capped_before and not capped_after:
        return _relative(before, after), detail + _signed_percent(before, after)
    if capped_before and not capped_after and after < before:  # old ≥ before > after
        return 1 - after / before, detail
    if capped_after and not capped_before and after > before:  # new ≥ after > before
        return _relative(before, after), detail
    return 0.0, detail


def _top_shares(stats: dict[str, Any]) -> tuple[dict[str, float], float] | None:
    """(each top value's share of the values, the most any value outside the top list can have)."""
    total = stats.get("num_values") or sum(item["count"] for item in stats["top_values"])
    if not total:
        return None
    shares = {item["value"]: item["count"] / total for item in stats["top_values"]}
    size, capped = _vocabulary(stats)
    listed_all = not capped and size is not None and size <= len(shares)
    # outside a complete list a value has no share; else at most the last listed one's
    return shares, 0.0 if listed_all or not shares else min(shares.values())


def _top_shift(before: tuple[dict[str, float], float], after: tuple[dict[str, float], float]
               ) -> tuple[float, str, float | None, float | None]:
    """The largest change of a top value's share: exact where both lists hold the value, else the
    least change the other list's bound allows. Returns (shift, value, old share, new share), a
    share None where the value is outside that list."""
    best: tuple[float, str, float | None, float | None] = (0.0, "", None, None)
    for value in list(before[0]) + [value for value in after[0] if value not in before[0]]:
        # outside a complete list (bound 0) a value's share is known: none
        old = before[0].get(value, 0.0 if not before[1] else None)
        new = after[0].get(value, 0.0 if not after[1] else None)
        if old is not None and new is not None:
            shift = abs(new - old)
        elif old is not None:
            shift = max(0.0, old - after[1])
        else:
            assert new is not None
            shift = max(0.0, new - before[1])
        if shift > best[0] or not best[1]:
            best = (shift, value, old, new)
    return best


def _lengths(split: str, feature: str, noun: str, old: dict[str, Any], new: dict[str, Any],
             thresholds: Thresholds) -> list[Measure]:
    """Mean length: shifted in units of the old lengths' std where the statistics give one (and it
    isn't 0), else relatively; max length: relatively (it sets the padding of a batch)."""
    measures = []
    if old.get("mean") is not None and new.get("mean") is not None:
        std = old.get("std")
        if std:
            measures.append(Measure(split, feature, f"mean {noun}", _shift(old["mean"], new["mean"], std), "std",
                                    thresholds.max_mean_shift, old["mean"], new["mean"],
                                    f"{_n(old['mean'])} -> {_n(new['mean'])} (old std {_n(std)})"))
        else:
            measures.append(Measure(split, feature, f"mean {noun}", _relative(old["mean"], new["mean"]), "relative",
                                    thresholds.max_length_change, old["mean"], new["mean"],
                                    f"{_n(old['mean'])} -> {_n(new['mean'])}"
                                    f"{_signed_percent(old['mean'], new['mean'])}"))
    if old.get("max") is not None and new.get("max") is not None:
        measures.append(Measure(split, feature, f"max {noun}", _relative(old["max"], new["max"]), "relative",
                                thresholds.max_length_change, [old.get("min"), old["max"]],
                                [new.get("min"), new["max"]],
                                f"{old.get('min')}-{old['max']} -> {new.get('min')}-{new['max']}"))
    return measures


def _images(split: str, feature: str, old: dict[str, Any], new: dict[str, Any],
            thresholds: Thresholds) -> list[Measure]:
    """The images' mean height and width (the larger relative change), and their channels."""
    change = max(_relative(old["height"]["mean"], new["height"]["mean"]),
                 _relative(old["width"]["mean"], new["width"]["mean"]))
    detail = (f"mean {_n(old['height']['mean'])}x{_n(old['width']['mean'])} -> "
              f"{_n(new['height']['mean'])}x{_n(new['width']['mean'])}, "
              f"range {_size_range(old)} -> {_size_range(new)}")
    measures = [Measure(split, feature, "image size", change, "relative", thresholds.max_image_size_change,
                        {"height": old["height"], "width": old["width"]},
                        {"height": new["height"], "width": new["width"]}, detail)]
    if old.get("channels") is not None and new.get("channels") is not None and old["channels"] != new["channels"]:
        measures.append(Measure(split, feature, "channels", 1, "count", 0, old["channels"], new["channels"],
                                f"{old['channels']} -> {new['channels']}"))
    return measures


def _size_range(stats: dict[str, Any]) -> str:
    height, width = stats["height"], stats["width"]
    return f"{height['min']}-{height['max']} x {width['min']}-{width['max']}"


def _counts(split: SplitInfo | None) -> dict[str, int] | None:
    if split is None:
        return None
    return {"num_examples": split.num_examples, "num_shards": len(split.shards), "num_bytes": split.num_bytes}


def _relative_measure(split: str, feature: str, name: str, old: float, new: float,
                      threshold: float | None) -> Measure:
    return Measure(split, feature, name, _relative(old, new), "relative", threshold, old, new,
                   f"{old:,} -> {new:,}{_signed_percent(old, new)}")


def _shift(old_mean: float, new_mean: float, old_std: float) -> float:
    """|new mean - old mean| in units of the old std (a change from a constant is infinite)."""
    delta = abs(new_mean - old_mean)
    if not delta:
        return 0.0
    return delta / old_std if old_std else math.inf


def _ratio(old: float, new: float) -> float:
    """The larger of new/old and old/new: 1 unchanged, 2 halved or doubled."""
    if old == new:
        return 1.0
    if not old or not new:
        return math.inf
    return max(new / old, old / new)


def _relative(old: float, new: float) -> float:
    if old == new:
        return 0.0
    return abs(new - old) / abs(old) if old else math.inf


def _signed_percent(old: float, new: float) -> str:
    """` (+15.6%)`; nothing when unchanged or from zero."""
    if old == new or not old:
        return ""
    return f" ({(new - old) / abs(old):+.1%})"


def _percent(share: float) -> str:
    return f"{share:.1%}"


def _top_share(value: str, share: float | None, bound: float) -> dict[str, Any]:
    """A top value's share for --json; outside its top list, the most it can be."""
    return {"value": value, "share": share} if share is not None else {"value": value, "share_at_most": bound}


def _share_text(share: float | None, bound: float) -> str:
    return _percent(share) if share is not None else f"≤{_percent(bound)}"


def _n(value: float) -> str:
    return f"{value:.4g}"

