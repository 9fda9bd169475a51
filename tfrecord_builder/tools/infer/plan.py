"""What the written spec will say, before it is text: a `Plan` of declarations with their notes.

The kinds of source fill a Plan (tables.py, sequences.py, folders.py); spec_text.py writes it.
A note is a comment beside its line; "guessed" marks every choice the data didn't force.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# columns a person takes for the target by their name (the penguins' `species`, a `category`)
LABEL_NAMES = ("label", "labels", "class", "classes", "target", "y", "species", "category", "outcome")
# the names of splits (a split column's values, split folders), in the order a person lists them
SPLIT_WORDS = ("train", "training", "validation", "valid", "val", "dev", "eval", "evaluation", "test", "testing")


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
    splits: dict[str, Any] | None = None  # None: fractions (train 0.8, test 0.2); else the split column's splits
    splits_note: str = ""
    header: list[str] = field(default_factory=list)  # the comment lines above the spec

    @property
    def declarations(self) -> list[Declaration]:
        return self.features + self.context + self.sequence


def split_rank(name: str) -> tuple[int, str]:
    """Where a split goes in a list: by SPLIT_WORDS (train first, test last), others between, by name."""
    word = name.lower()
    if word in SPLIT_WORDS:
        return SPLIT_WORDS.index(word) * 2, name
    return (0 if word.startswith("train") else 2 * len(SPLIT_WORDS) if word.startswith("test") else 9), name


def guess_label(plan: Plan, columns: list[str] | None = None) -> None:
    """The label, as a person reading the table would pick it: a class label named like a target
    (label, class, target, y, species, category, ...); else the first per-step class label (tags of
    a sequence); else the table's first column, then its
    last, when a class label (tables lead with the class, as wine's cultivar, or end with it, as
    UCI's); else the first class label. None without class labels. Always a guess, and said to be.
    `columns`: the table's columns in order."""
    labels = [declaration for declaration in plan.declarations if declaration.is_class_label]
    if not labels:
        return
    named = [declaration for declaration in labels if _plain(declaration.column) in LABEL_NAMES
             or _plain(declaration.name) in LABEL_NAMES]
    by_column = {declaration.column: declaration for declaration in labels}
    per_step = [declaration for declaration in plan.sequence if declaration.is_class_label]
    if named:
        chosen, why = named[0], f"named `{named[0].column}` (like a target)"
    elif per_step:  # classes per step beside the steps: a tagging task
        chosen, why = per_step[0], "the first class label per step (tags)"
    elif columns and columns[0] in by_column:
        chosen, why = by_column[columns[0]], "the first column, a class label"
    elif columns and columns[-1] in by_column:
        chosen, why = by_column[columns[-1]], "the last column, a class label"
    else:
        chosen, why = labels[0], "the first class label"
    plan.label = chosen.name
    plan.label_note = f"guessed: {why}; input_fn yields (features, label) (remove for features only)"


def _plain(name: str) -> str:
    return name.strip().lower().rstrip("_")
