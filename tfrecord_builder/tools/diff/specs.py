"""The spec side of a comparison: features added, removed or changed, and the spec keys that moved.

What fails (crossed): a removed feature, a changed one (any key but `description`: its dtype,
shape, type, class names, encoding, record key, source column, default, ...), a changed `format` or
`label`; with `fail_on_added`, an added feature too. The other keys (source, splits, output,
input, on_error, name, description) are reported: they change how a dataset is made or read, and
what that does to the records shows in the counts and statistics. `version` is expected to change,
and `output.dir` and `output.module` say only where files go: they are left out.
"""
from __future__ import annotations

import fnmatch
import json
from typing import Any, Literal

from ...spec.model import Spec
from ...write.info import DatasetInfo
from .model import SpecChange, index_changes

FAILING_KEYS = ("format", "label")
IGNORED_KEYS = ("version", "output.dir", "output.module")
INFORMATIVE_FEATURE_KEYS = ("description",)
UNSET = "(unset)"


def spec_changes(old: Spec, new: Spec, *, with_splits: bool, fail_on_added: bool) -> list[SpecChange]:
    """Every difference between two specs, features first.

    `with_splits`: report splits added and removed here (comparing specs); between datasets the
    split counts report them.
    """
    changes = _feature_changes(old, new, fail_on_added)
    changes += _split_changes(old, new, with_splits, fail_on_added)
    old_keys, new_keys = _settings(old), _settings(new)
    for key in _union(old_keys, new_keys):
        if key in IGNORED_KEYS or old_keys.get(key, UNSET) == new_keys.get(key, UNSET):
            continue
        change = "added" if key not in old_keys else "removed" if key not in new_keys else "changed"
        changes.append(SpecChange(key, key, change, old_keys.get(key), new_keys.get(key), crossed=key in FAILING_KEYS))
    return changes


def snapshot_changes(old: DatasetInfo, new: DatasetInfo) -> list[SpecChange]:
    """The versions of their data the two datasets' sources read (a table's version), where they
    differ: `source_snapshots: {"*": {"format": "delta", "version": 0}} -> {... 1}`. It informs and
    fails nothing: the rows' changes are what the splits and drift measure."""
    before, after = old.source_snapshots or {}, new.source_snapshots or {}
    if before == after:
        return []
    change: Literal["added", "removed", "changed"] = "added" if not before else "removed" if not after else "changed"
    return [SpecChange("source_snapshots", "source_snapshots", change, before or None, after or None)]


def declarations(spec: Spec) -> dict[str, dict[str, Any]]:
    """Each feature's normalised declaration; a sequence_example's say where they are declared
    (`section: context` or `sequence`), so a feature moving between the two is a change."""
    plain = spec.to_dict()
    if not spec.is_sequence:
        return plain["features"]
    return {**{name: {"section": "context", **item} for name, item in plain["context"].items()},
            **{name: {"section": "sequence", **item} for name, item in plain["sequence"].items()}}


def _feature_changes(old: Spec, new: Spec, fail_on_added: bool) -> list[SpecChange]:
    before, after = declarations(old), declarations(new)
    changes = []
    for name in _union(before, after):
        if name not in after:
            changes.append(SpecChange("feature", name, "removed", old=before[name], crossed=True))
        elif name not in before:
            changes.append(SpecChange("feature", name, "added", new=after[name], crossed=fail_on_added))
        elif before[name] != after[name]:
            keys = [(key, before[name].get(key, UNSET), after[name].get(key, UNSET))
                    for key in _union(before[name], after[name])
                    if before[name].get(key, UNSET) != after[name].get(key, UNSET)
                    and not (key == "names" and _classes_from_source(before[name], after[name]))
                    and not (key in ("columns", "shape") and _columns_of_pattern(before[name], after[name]))]
            if not keys:
                continue
            keys = [(key, _shown_columns(before_value), _shown_columns(after_value)) if key == "columns" else
                    (key, before_value, after_value) for key, before_value, after_value in keys]
            changes.append(SpecChange("feature", name, "changed", before[name], after[name], keys,
                                      crossed=any(_key_fails(key, old_value, new_value, fail_on_added)
                                                  for key, old_value, new_value in keys)))
    return changes


def _key_fails(key: str, old: Any, new: Any, fail_on_added: bool) -> bool:
    """Whether a changed key of a feature fails: any but its description, except class names
    only appended (every old index keeps its class: an addition, failing with `fail_on_added`)."""
    if key in INFORMATIVE_FEATURE_KEYS:
        return False
    if key == "names" and isinstance(old, list) and isinstance(new, list) and new[:len(old)] == old:
        return fail_on_added
    return True


def _classes_from_source(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether one side is a class_label whose classes its source supplies (an image_folder's
    subfolders): a spec declares none and its dataset lists them, which is no change."""
    return any(item.get("type") == "class_label" and "names" not in item and "num_classes" not in item
               for item in (old, new))


def _shown_columns(columns: Any, shown: int = 6) -> Any:
    """A long list of gathered columns as its count and ends (a wide table gathers thousands)."""
    if not isinstance(columns, list) or len(columns) <= shown:
        return columns
    return f"{len(columns):,} columns: {', '.join(columns[:shown - 1])}, ..., {columns[-1]}"


def _columns_of_pattern(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether one side gathers `columns:` by a pattern not yet matched (its source unread) and
    the other lists columns the pattern matches, in the shape of that list: no change."""
    for pattern, listed in ((old, new), (new, old)):
        columns = listed.get("columns")
        if isinstance(pattern.get("columns"), str) and isinstance(columns, list) and columns \
                and pattern.get("shape") in ([], [len(columns)]) and listed.get("shape") == [len(columns)] \
                and all(fnmatch.fnmatchcase(column, pattern["columns"]) for column in columns):
            return True
    return False


def _split_changes(old: Spec, new: Spec, with_presence: bool, fail_on_added: bool) -> list[SpecChange]:
    """Fractions or sources of the splits both have (reported), and with `with_presence` the splits
    one of them lacks (removed fails; added fails with `fail_on_added`)."""
    before, after = _plain_splits(old), _plain_splits(new)
    changes = []
    for name in _union(before, after):
        if name in before and name in after:
            if before[name] != after[name]:
                changes.append(SpecChange("split", name, "changed", before[name], after[name]))
        elif with_presence and name in before:
            changes.append(SpecChange("split", name, "removed", old=before[name], crossed=True))
        elif with_presence:
            changes.append(SpecChange("split", name, "added", new=after[name], crossed=fail_on_added))
    return changes


def _plain_splits(spec: Spec) -> dict[str, Any]:
    return spec.to_dict()["splits"]


def _settings(spec: Spec) -> dict[str, Any]:
    """The spec's keys other than features and splits, by key path: `label`, `source.path`, ..."""
    plain = spec.to_dict()
    for key in ("features", "context", "sequence", "splits"):
        plain.pop(key, None)
    flat: dict[str, Any] = {}
    for key, value in plain.items():
        if isinstance(value, dict) and key in ("source", "output", "input"):
            flat.update({f"{key}.{inner}": item for inner, item in value.items()})
        else:
            flat[key] = value
    return flat


def _union(first: dict[str, Any], second: dict[str, Any]) -> list[str]:
    """The keys of both, in the first's order, then the second's new ones."""
    return list(first) + [key for key in second if key not in first]


def describe_change(change: SpecChange) -> str:
    """One line for people: `feature \\`proline\\` changed: dtype float32 -> int64`."""
    if change.subject == "feature":
        what = f"feature `{change.name}`"
        if change.change == "added":
            return f"{what} added: {summary(change.new)}"
        if change.change == "removed":
            return f"{what} removed (was {summary(change.old)})"
        return f"{what} changed: " + "; ".join(_key_change(key, old, new) for key, old, new in change.changes)
    if change.subject == "split":
        what = f"split `{change.name}`"
        if change.change == "changed":
            return f"{what}: {show(change.old)} -> {show(change.new)}"
        return f"{what} {change.change}" + (f" ({show(change.new)})" if change.change == "added" else "")
    return _key_change(change.name, change.old if change.change != "added" else UNSET,
                       change.new if change.change != "removed" else UNSET)


def summary(declaration: dict[str, Any]) -> str:
    """A feature declaration in a few words: `float32 []`, `class_label [] (3 classes)`, `image png [8, 8, 1]`."""
    kind = declaration.get("type", "tensor")
    shape = show(declaration.get("shape")) if "shape" in declaration else ""
    if kind == "tensor":
        text = f"{declaration.get('dtype')} {shape}"
    elif kind == "class_label":
        names = declaration.get("names")
        count = len(names) if names is not None else declaration.get("num_classes")
        text = f"class_label {shape}" + (f" ({count} classes)" if count is not None else "")
    elif kind == "image":
        text = f"image {declaration.get('encoding')} {shape}"
    else:
        text = " ".join(part for part in (kind, declaration.get("dtype"), shape) if part)
    section = declaration.get("section")
    return f"{text.strip()}{f', {section}' if section else ''}"


def _key_change(key: str, old: Any, new: Any) -> str:
    if key == "names" and isinstance(old, list) and isinstance(new, list):
        # by index: a model trained on OLD reads index i as old[i], so a class that moved is wrong
        changed = index_changes(old, new)
        parts = []
        if changed["moved"]:
            parts.append("indices moved: " + ", ".join(f"{name} {before} -> {after}"
                                                       for name, before, after in changed["moved"]))
        if changed["new"]:
            parts.append("new: " + ", ".join(f"{name} at {index}" for name, index in changed["new"]))
        if changed["removed"]:
            parts.append("removed: " + ", ".join(f"{name} (was {index})" for name, index in changed["removed"]))
        return f"names: {'; '.join(parts)} ({len(old)} -> {len(new)} classes)"
    return f"{key}: {show(old)} -> {show(new)}"


def show(value: Any) -> str:
    """A spec value as the spec would write it: `float32`, `[null, 4]`, `null`."""
    if value == UNSET or isinstance(value, str):
        return str(value) if value != "" else '""'
    return json.dumps(value, ensure_ascii=False)
