"""`diff OLD NEW`: two specs or two built datasets compared; exit status 1 when anything is over
its threshold, so a CI job can stop before training on a rebuilt dataset that moved."""
from __future__ import annotations

import argparse
import dataclasses
import json
import math

from ..tools.diff import Comparison, Measure, MembershipChange, SplitChange, Thresholds, describe_change, diff
from .format import size, table

NAME = "diff"
HELP = ("compare two specs or built datasets: features, split counts, rows that changed split, statistics' "
        "drift; exit 1 past a threshold")

DESCRIPTION = """\
Compares OLD with NEW: two spec files, two built datasets (NAME/VERSION folders or their metadata
files), or a spec with a dataset (then only the specs). Between datasets it also compares each
split's counts, split by split each feature's statistics, and the split membership: the rows of
OLD that NEW holds in another split (found by their keys), and those it can't follow.

Exit status 0: nothing over its threshold. 1: something is: a feature removed or changed (any key
but its description), `format` or `label` changed, a split removed, rows moved to another split,
or a count or statistic moved past one of the thresholds below (added features and splits, and
class names appended after the old ones, fail only with --fail-on-added; class names inserted,
reordered or removed fail, each class whose index moved named). 2: a usage error, a path that is
neither a spec nor a dataset, or two unrelated things (different names, no feature in common). Other spec keys (source, splits, output, input) are reported, not
failed. The report lists the drift measures over their thresholds (--all: every one), each
marked `!`, and ends with `DRIFT: N over their thresholds (...)` or `ok: ...`.

Shares are fractions (0.05 = 5 percentage points), relative changes too (0.1 = 10%); `inf` switches
a measure off."""


@dataclasses.dataclass(frozen=True)
class _Option:
    field: str
    help: str


# the threshold options, in Thresholds' order; each defaults to Thresholds' value
_OPTIONS = [
    _Option("max_mean_shift", "numbers: |mean change| in units of the old std; also mean lengths and steps "
                              "where the statistics give their std"),
    _Option("max_std_ratio", "numbers: the larger of new std / old std and its inverse"),
    _Option("max_class_shift", "class labels: the largest change of one class's share of the labels; strings: "
                               "of one top value's share of the values"),
    _Option("max_classes_changed", "class labels: how many classes may appear in or vanish from a split"),
    _Option("max_count_change", "a split's examples: relative change"),
    _Option("max_size_change", "a split's bytes: relative change"),
    _Option("max_vocabulary_change", "strings: relative change of the vocabulary size"),
    _Option("max_length_change", "variable-length features and sequences: relative change of the max length, "
                                 "and of the mean length when there is no std"),
    _Option("max_image_size_change", "images: relative change of the mean height or width"),
    _Option("max_nan_change", "numbers: change of the share of values that are NaN or infinite"),
    _Option("max_missing_change", "change of the share of examples whose source had no value (filled by the default)"),
    _Option("max_moved_rows", "split membership: rows of OLD found, by their key, in another split of NEW"),
]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = DESCRIPTION
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("old", metavar="OLD", help="a spec (.yaml) or a built dataset (NAME/VERSION folder)")
    parser.add_argument("new", metavar="NEW", help="the same, to compare with OLD")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON (every measure)")
    parser.add_argument("--all", action="store_true",
                        help="list every drift measure, not only those over their thresholds")
    parser.add_argument("--fail-on-added", action="store_true",
                        help="added features and splits fail too (by default they are reported)")
    defaults = Thresholds()
    for option in _OPTIONS:
        parser.add_argument(f"--{option.field.replace('_', '-')}", dest=option.field, type=_limit, metavar="X",
                            default=getattr(defaults, option.field),
                            help=f"{option.help} (default {getattr(defaults, option.field):g})")


def run(args: argparse.Namespace) -> int:
    thresholds = Thresholds(**{option.field: getattr(args, option.field) for option in _OPTIONS},
                            fail_on_added=args.fail_on_added)
    comparison = diff(args.old, args.new, thresholds)
    if args.json:
        print(json.dumps(comparison.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(report(comparison, every_measure=args.all))
    return 1 if comparison.crossed else 0


def _limit(text: str) -> float:
    """An argparse type: a threshold, a number of 0 or more (`inf` for none)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value >= 0:  # NaN too
        raise argparse.ArgumentTypeError(f"expected a number of 0 or more (or inf), received {text!r}")
    return value


def report(comparison: Comparison, every_measure: bool = False) -> str:
    """The comparison as text: a heading, then the sections spec, splits and drift; `!` marks each
    change over its threshold."""
    old, new = comparison.old, comparison.new
    lines = [f"{old.spec.name} {old.spec.version} ({old.path}) -> {new.spec.name} {new.spec.version} ({new.path})",
             "", "spec"]
    lines += [f"{_mark(change.crossed)}{describe_change(change)}" for change in comparison.spec] or ["  (no changes)"]
    if not comparison.datasets:
        spec_side = "OLD" if old.info is None else "NEW"
        lines += ["", f"splits and drift: compared between two built datasets only ({spec_side} is a spec)"]
    else:
        lines += ["", "splits", _splits(comparison.splits), ""]
        lines += _membership(comparison.membership) + [""]
        lines += _drift(comparison, every_measure)
    lines += ["", _verdict(comparison)]
    return "\n".join(lines)


def _verdict(comparison: Comparison) -> str:
    """`DRIFT: 18 over their thresholds (splits 4, drift 14)`, or `ok: ...`."""
    crossed = comparison.num_crossed
    if not crossed:
        return "ok: nothing over its threshold"
    parts = ", ".join(f"{name} {count}" for name, count in comparison.crossed_by_section.items() if count)
    return f"DRIFT: {crossed} over {'their thresholds' if crossed > 1 else 'its threshold'} ({parts})"


def _mark(crossed: bool) -> str:
    return "! " if crossed else "  "


def _splits(splits: list[SplitChange]) -> str:
    rows = []
    for split in splits:
        if split.old is None or split.new is None:
            rows.append((_mark(split.crossed).strip(), split.name, f"({split.change})", "", ""))
            continue
        measures = {measure.measure: measure for measure in split.measures}
        rows.append((_mark(split.crossed).strip(), split.name,
                     _count_cell(measures["examples"], f"{split.old['num_examples']:,}",
                                 f"{split.new['num_examples']:,}"),
                     f"{split.old['num_shards']} -> {split.new['num_shards']}",
                     _count_cell(measures["bytes"], size(split.old["num_bytes"]), size(split.new["num_bytes"]))))
    return table(["", "split", "examples", "shards", "size"], rows)


def _membership(change: MembershipChange | None) -> list[str]:
    """`membership`: the rows of OLD in another split of NEW (`!` past the threshold), the rows
    that kept theirs, and those that can't be followed or are new."""
    if change is None:
        return []
    if change.missing is not None:
        one = change.missing != "OLD and NEW"
        return ["membership", f"  can't be compared: {change.missing} {'was' if one else 'were'} built without "
                "the split membership files (splits/, which earlier versions of tfrecord-builder don't write); "
                "rebuild it to compare"]
    lines = ["membership"]
    mark = _mark(change.crossed)
    for (old, new), rows in change.moved.items():
        lines.append(f"{mark}{_rows(rows)} of old {old} {'is' if rows == 1 else 'are'} in new {new}")
    lines.append(f"  {_rows(change.stayed)} kept {'its' if change.stayed == 1 else 'their'} split")
    if change.unfollowed:
        hint = (": without source.key a row's key is the whole row, so a row with any value changed can't be "
                "followed" if change.whole_row_keys else "")
        keys = "its key is" if change.unfollowed == 1 else "their keys are"
        lines.append(f"  {_rows(change.unfollowed)} of old can't be followed: {keys} not in new (removed, or the "
                     f"key changed{hint})")
    if change.added:
        lines.append(f"  {_rows(change.added)} of new {'is' if change.added == 1 else 'are'} not in old")
    return lines


def _rows(count: int) -> str:
    return f"{count:,} row{'' if count == 1 else 's'}"


def _count_cell(measure: Measure, old: str, new: str) -> str:
    if measure.old == measure.new:
        return f"{old} -> {new}"
    change = f"{(measure.new - measure.old) / measure.old:+.1%}" if measure.old else "from 0"
    over = f", over {_value(measure.threshold, measure.unit)}" if measure.crossed else ""
    return f"{old} -> {new} ({change}{over})"


def _drift(comparison: Comparison, every_measure: bool) -> list[str]:
    measures = comparison.drift
    crossed = [measure for measure in measures if measure.crossed]
    shown = measures if every_measure else crossed
    splits = sorted({measure.split for measure in measures}, key=[split.name for split in comparison.splits].index)
    heading = (f"drift ({', '.join(splits) or 'no split in common'}: {len(measures)} measures, "
               f"{len(crossed)} over {'its threshold' if len(crossed) == 1 else 'their thresholds'}")
    heading += ")" if every_measure or len(shown) == len(measures) else "; --all lists every one)"
    if not shown:
        return [heading]
    rows = [(_mark(measure.crossed).strip(), measure.split, measure.feature, measure.measure,
             _value(measure.value, measure.unit), _value(measure.threshold, measure.unit), measure.detail)
            for measure in shown]
    return [heading, table(["", "split", "feature", "measure", "value", "limit", "old -> new"], rows)]


def _value(value: float | None, unit: str) -> str:
    """A measure's value (or limit) in its unit: `1.81 std`, `1.6x`, `12.3 pts`, `15.6%`, `2`."""
    if value is None:
        return "-"
    if math.isinf(value):
        return "inf"
    if unit == "std":
        return f"{value:.2f} std"
    if unit == "ratio":
        return f"{value:.2f}x"
    if unit == "share":
        return f"{value * 100:.1f} pts"
    if unit == "relative":
        return f"{value:.1%}"
    return f"{value:g}"
