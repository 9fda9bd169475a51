"""Renders the generated input module (`NAME_input.py`) from a spec: pure, spec in, text out.

The module is the reading functions of read/tfdata.py, copied verbatim, plus data: every
value taken from the spec enters the text as a Python literal (`repr` of str, int, float, bool,
None, bytes, lists, tuples and dicts of them, checked by reading it back with
`ast.literal_eval`), never as code, so no spec can put code into the module and no Python
expression is assembled from spec strings.
"""
from __future__ import annotations

import ast
import math
import os
from typing import Any

from ..fs import absolute
from ..spec.model import Spec
from ..version import __version__
from .helpers import helper_source
from .template import EXAMPLE_SPECS, SEQUENCE_SPECS, TEMPLATE


def render_module(spec: Spec, data_dir: str) -> str:
    """The module's source text; `data_dir` is recorded as its default dataset folder."""
    class_names = {
        feature.name: tuple(feature.class_names) for feature in spec.features.values()
        if feature.class_names is not None
    }
    splits = tuple(spec.splits)
    return TEMPLATE.format(
        name=spec.name,
        version=spec.version,
        tool_version=__version__,
        other_split=next((split for split in splits if split != "train"), splits[0]),
        name_literal=literal(spec.name),
        version_literal=literal(spec.version),
        description=literal(spec.description),
        spec_file=literal(os.path.basename(spec.file)),
        data_dir=literal(absolute(data_dir)),
        splits=literal(splits),
        class_names=literal(class_names),
        reading=literal(spec.reading()),
        helpers=helper_source(),
        parse_specs=SEQUENCE_SPECS if spec.is_sequence else EXAMPLE_SPECS,
        yields=_yields(spec),
    )


def _yields(spec: Spec) -> str:
    """What input_fn's batches are, for its docstring."""
    if not spec.is_sequence and spec.input.detection is not None:
        return '`(images, {"boxes": ..., "labels": ...})` pairs (KerasHub\'s detectors)'
    return "`(features, label)` pairs" if spec.label else "feature dicts"


WIDTH = 120


def literal(value: Any) -> str:
    """`value` as Python literal text (a dict or list too long for a line is laid out one item
    per line), or AssertionError if it isn't one: the one way spec values enter the module."""
    text = _laid_out(value, 0, 10)  # after `READING = `
    assert _same(ast.literal_eval(text), value), f"not a literal: {value!r}"
    return text


def _laid_out(value: Any, indent: int, before: int = 0) -> str:
    """`value`'s text at `indent`, with `before` characters ahead of it on its first line."""
    flat = repr(value)
    if indent + before + len(flat) <= WIDTH or not isinstance(value, (dict, list, tuple)) or not value:
        return flat
    inner = " " * (indent + 4)
    if isinstance(value, dict):
        items = [f"{inner}{key!r}: {_laid_out(item, indent + 4, len(repr(key)) + 2)}" for key, item in value.items()]
    else:
        items = [f"{inner}{_laid_out(item, indent + 4)}" for item in value]
    opening, closing = {dict: ("{", "}"), list: ("[", "]"), tuple: ("(", ")")}[type(value)]
    return opening + "\n" + ",\n".join(items) + ",\n" + " " * indent + closing


def _same(read: Any, value: Any) -> bool:
    """Equal, and of the same types throughout (NaN equals NaN)."""
    if type(read) is not type(value):
        return False
    if isinstance(value, dict):
        return list(read) == list(value) and all(_same(read[key], value[key]) for key in value)
    if isinstance(value, (list, tuple)):
        return len(read) == len(value) and all(map(_same, read, value))
    if isinstance(value, float) and math.isnan(value):
        return math.isnan(read)
    return read == value
