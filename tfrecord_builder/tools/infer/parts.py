"""What infer finds of an annotated image set: its parts (one a split) and what the builders read
of each (layouts.py finds them, annotations.py reads them)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from .plan import Plan, split_rank


@dataclass
class Part:
    """One source (or one split's): its path, image folder, and what its records hold (filled in
    by annotations.py from the builder's records)."""

    path: str
    images: str | None = None
    names_file: str | None = None
    image_set: str | None = None  # voc, segmentation: the list of this split's images
    index: tuple[list[Any], dict[int, str], list[Any]] | None = None  # coco: items, categories, the raw categories
    files: list[Any] = field(default_factory=list)  # every image's path (labelme: or its embedded bytes)
    shown: list[str] = field(default_factory=list)  # every image's name in notes
    boxes: list[Any] = field(default_factory=list)  # each image's boxes, as the format writes them
    sizes: list[tuple[int, int]] = field(default_factory=list)  # each image's (height, width)
    classes: list[str] = field(default_factory=list)  # the builder's class names, in index order
    labels: list[str] = field(default_factory=list)  # every object's label
    objects: dict[str, list[Any]] = field(default_factory=dict)  # per-object fields: every object's value
    images_fields: dict[str, list[Any]] = field(default_factory=dict)  # per-image fields: every image's value
    notices: dict[str, int] = field(default_factory=dict)  # what the builder counted while reading (labelme)


@dataclass
class Found:
    """A recognised layout: its kind, its parts (one under None without splits) and what the
    spec's header says of how it was read."""

    kind: str
    parts: dict[str | None, Part]
    notes: list[str] = field(default_factory=list)


def ordered(parts: dict[str, Part]) -> dict[str | None, Part]:
    """Splits as a person lists them: train first, test last, the others between (by name)."""
    return {split: parts[split] for split in sorted(parts, key=split_rank)}


def listed(folder: str) -> list[str]:
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else []


def subfolders(root: str) -> list[str]:
    return [os.path.join(root, name) for name in listed(root)
            if not name.startswith(".") and os.path.isdir(os.path.join(root, name))]


def place_parts(plan: Plan, parts: dict[str | None, Part]) -> None:
    """`source.path` (and `images`) of one part, or a split each with its own."""
    first = next(iter(parts.values()))
    if None in parts:
        plan.source["path"] = first.path
        if first.images is not None:
            plan.source["images"] = first.images
        return
    plan.splits = {split: {"path": part.path, **({"options": options} if options else {})}
                   for split, part in parts.items()
                   for options in [{key: value for key, value in (("images", part.images),
                                                                   ("image_set", part.image_set)) if value}]}
    counts = ", ".join(f"{split} {len(part.files):,}" for split, part in parts.items())
    plan.splits_note = f"the data's own split, a source each (images: {counts})"


def named_folder(data: str) -> str:
    """The folder the dataset is named after: the data's, or the one above `annotations/`."""
    folder = os.path.abspath(data) if os.path.isdir(data) else os.path.dirname(os.path.abspath(data))
    if os.path.basename(folder).lower() in ("annotations", "labels", "segmentationclass", "masks") \
            and os.path.dirname(folder) != folder:
        return os.path.dirname(folder)
    return folder


def count(number: int, unit: str) -> str:
    """`1 box`, `2 boxes`, `1,500 images`."""
    plural = unit + ("es" if unit.endswith(("s", "x")) else "s")
    return f"{number:,} {unit if number == 1 else plural}"


def shown_name(data: str) -> str:
    return os.path.basename(os.path.normpath(data)) + ("/" if os.path.isdir(data) else "")
