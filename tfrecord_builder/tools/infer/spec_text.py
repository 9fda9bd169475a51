"""The plan written as a spec: YAML text by hand, so each comment sits beside the line it explains.

Features are flow mappings, one per line and aligned, as the specs in specs/ are written. Every
scalar is written plain where YAML reads it back as the same string, quoted otherwise (`"no"`,
`"1"`, `"petal length (cm)"`), so the text loads to exactly the plan.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any

import yaml

from .plan import Declaration, Plan

_PLAIN = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_./ -]*\Z")
_COMMENT_COLUMN = 56  # comments line up here (or two spaces after a longer line)
_SOURCE_ORDER = ("builder", "path", "connection", "table", "query", "catalog", "format", "columns", "images", "names_file", "delimiter", "key", "split_column", "group_by", "order_by", "options")


def spec_text(plan: Plan) -> str:
    """The spec's YAML text, commented."""
    lines: list[tuple[str, str]] = [("", f"# {line}") for line in plan.header]
    lines.append(("", "# Lines marked `guessed` are choices the data didn't force: check them, then"))
    lines.append(("", "# `tfrecord-builder validate` and `build` this file."))
    lines.append((f"name: {scalar(plan.name)}", ""))
    lines.append(("version: 1.0.0", ""))
    if plan.is_sequence:
        lines.append(("format: sequence_example", plan.sequence_note))
        if plan.sequence_lengths:
            lines.append((f"sequence_lengths: {plan.sequence_lengths}", ""))
    lines.append(("source:", ""))
    for key in _SOURCE_ORDER:
        if key in plan.source:
            lines.append((f"  {key}: {flow(plan.source[key])}", plan.source_notes.get(key, "")))
    if plan.splits is None:
        lines.append(("splits: {train: 0.8, test: 0.2}", "change as you need: fractions that sum to 1"))
    elif any(plan.splits.values()):  # a source each: a line each
        lines.append(("splits:", plan.splits_note))
        lines += [(f"  {scalar(split)}: {flow(source)}", "") for split, source in plan.splits.items()]
    else:
        lines.append((f"splits: {flow(plan.splits)}", plan.splits_note))
    if plan.is_sequence:
        lines += _block("context", plan.context, [])
        lines += _block("sequence", plan.sequence, plan.left_out)  # (columns left out of either)
    else:
        lines += _block("features", plan.features, plan.left_out)
    if plan.label is not None:
        lines.append((f"label: {scalar(plan.label)}", plan.label_note))
    lines.append(("output:", ""))
    lines.append(("  dir: build", "relative to this file"))
    return "".join(_line(text, note) for text, note in _aligned(lines))


def _block(key: str, declarations: list[Declaration], left_out: list[str]) -> list[tuple[str, str]]:
    if not declarations:
        return [(f"{key}: {{}}", "")] + [("", f"  # {line}") for line in left_out]
    width = max(len(scalar(declaration.name)) for declaration in declarations) + 1
    lines = [(f"{key}:", "")]
    for declaration in declarations:
        name = f"{scalar(declaration.name)}:".ljust(width)
        lines.append((f"  {name} {flow(declaration.fields)}", "; ".join(declaration.notes)))
    lines += [("", f"  # {line}") for line in left_out]
    return lines


def _aligned(lines: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Pads lines with a note so their comments start in one column."""
    widths = [len(text) for text, note in lines if text and note and len(text) < _COMMENT_COLUMN]
    column = max(widths, default=0) + 2
    return [(text.ljust(column) if text and note and len(text) < column else text, note) for text, note in lines]


def _line(text: str, note: str) -> str:
    if not text:
        return f"{note}\n"
    if not note:
        return f"{text}\n"
    return f"{text}{'' if text.endswith(' ') else '  '}# {note}\n"


def flow(value: Any) -> str:
    """A value in YAML's flow style: `{dtype: float32, shape: [3]}`, `[a, b]`, a scalar."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{scalar(key)}: {flow(item)}" for key, item in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(flow(item) for item in value) + "]"
    return scalar(value)


def scalar(value: Any) -> str:
    """One scalar as YAML: plain when it reads back as itself, else double-quoted (on one line)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):  # YAML's spellings: JSON's NaN is text to YAML
        return ".nan" if math.isnan(value) else (".inf" if value > 0 else "-.inf")
    if isinstance(value, (int, float)):
        return json.dumps(value)
    text = str(value)
    if _PLAIN.match(text) and not text.endswith(" ") and _reads_back(text):
        return text
    quoted = yaml.safe_dump(text, default_style='"', allow_unicode=True, width=float("inf"))
    return quoted.removesuffix("\n").removesuffix("\n...")


def _reads_back(text: str) -> bool:
    """Whether `text`, plain, loads as the same string both as a value and inside a flow list."""
    try:
        return yaml.safe_load(f"k: {text}") == {"k": text} and yaml.safe_load(f"[{text}]") == [text]
    except yaml.YAMLError:
        return False
