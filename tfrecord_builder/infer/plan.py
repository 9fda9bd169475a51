"""What the written spec will say, before it is text: a `Plan` of declarations with their notes.

The kinds of source fill a Plan (tables.py, sequences.py, folders.py); spec_text.py writes it.
A note is a comment beside its line; "guessed" marks every choice the data didn't force.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

LABEL_NAMES = ("label", "labels", "class", "target", "y")


@dataclass
class Declaration:
    """One feature: its name, its keys in the order written, and the notes beside it."""

    name: str
    fields: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    column: str = ""  # the column (or record field) it reads

    @property
    def is_class_label(self) -> bool:
        return self.fields.get("type") == "class_label"


@dataclass
class Plan:
    """A whole spec: its source, features (or context and sequence), label and the notes."""

    name: str
    source: dict[str, Any]  # builder, path, then any of key, group_by, order_by, delimiter, options
    features: list[Declaration] = field(default_factory=list)
    context: list[Declaration] = field(default_factory=list)
    sequence: list[Declaration] = field(default_factory=list)
    is_sequence: bool = False
    source_notes: dict[str, str] = field(default_factory=dict)  # a source key -> its comment
    left_out: list[str] = field(default_factory=list)  # columns no feature reads, each with why
    label: str | None = None
    label_note: str = ""
    sequence_lengths: str | None = None  # "free" when a record's sequences differ in length
    sequence_note: str = ""
    header: list[str] = field(default_factory=list)  # the comment lines above the spec

    @property
    def declarations(self) -> list[Declaration]:
        return self.features + self.context + self.sequence


def guess_label(plan: Plan) -> None:
    """The label: a class label named like one (label, class, target, y), else the last class
    label; none without class labels. Always a guess, and said to be."""
    labels = [declaration for declaration in plan.declarations if declaration.is_class_label]
    if not labels:
        return
    named = [declaration for declaration in labels if _plain(declaration.column) in LABEL_NAMES
             or _plain(declaration.name) in LABEL_NAMES]
    chosen = named[0] if named else labels[-1]
    plan.label = chosen.name
    why = f"named `{chosen.column}`" if named else "the last class label"
    plan.label_note = f"guessed: {why}; input_fn yields (features, label) (remove for features only)"


def _plain(name: str) -> str:
    return name.strip().lower().rstrip("_")
