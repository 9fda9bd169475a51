"""Segmentation masks: the plan of mask files beside their images (`builder: segmentation`,
Pascal VOC's `SegmentationClass/` and `JPEGImages/`), and the checks of a table's mask column
(declare.py finds palette PNGs among a table's image columns, tables.py links them).

A mask is read as the `mask` feature reads it (`mask_indices`: palette indices, never colours)
and checked against its image's upright size, so a spec infer writes doesn't stop at the first
mask of another size: infer names it, in one line.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...builders.segmentation import SegmentationBuilder
from ...errors import DataError
from ...features.mask import mask_indices
from ...media.images import BadImage, pillow
from .image_files import image_guess, look, spread
from .names import dataset_name
from .parts import Found, count, named_folder, place_parts, shown_name
from .plan import Declaration, Plan

VOID = 255  # VOC's masks draw a border of 255 around each object: the class a loss ignores


def segmentation_plan(data: str, found: Found) -> Plan:
    """`segmentation`: the images, their masks (`type: mask` linked to the image) and, for VOC,
    the instance masks of SegmentationObject/."""
    parts = list(found.parts.values())
    for part in parts:
        builder = SegmentationBuilder(None, part.path, {key: value for key, value in
                                                        (("images", part.images), ("image_set", part.image_set)) if value})
        for _, record in builder.generate(None):
            part.files.append(record["image"])
            part.shown.append(record["filename"])
            for name in ("mask", "object_mask"):
                if name in record:
                    part.images_fields.setdefault(name, []).append(record[name])
    files = [file for part in parts for file in part.files]
    masks = [mask for part in parts for mask in part.images_fields["mask"]]
    plan = Plan(name=dataset_name(named_folder(data)), source={"builder": "segmentation"})
    place_parts(plan, found.parts)
    plan.source_notes["builder"] = "recognised: masks beside their images by name"
    plan.header = [f"Written by `tfrecord-builder infer` from {shown_name(data)}: {count(len(files), 'image')} "
                   "with a mask each."] + found.notes
    picked = spread(list(range(len(files))))
    image = image_guess([look(files[index], files[index]) for index in picked], len(files))
    plan.features.append(Declaration("image", image.fields(), [f"guessed: {image.note}"], column="image"))
    values = checked_masks([(masks[index], files[index], masks[index]) for index in picked])
    plan.features.append(Declaration("mask", {"type": "mask", "image": "image"},
                                     [f"class indices (palette PNGs); {values_note(values, len(picked), len(files))}"],
                                     column="mask"))
    objects = [mask for part in parts for mask in part.images_fields.get("object_mask", [])]
    if objects:
        values = checked_masks([(objects[index], files[index], objects[index]) for index in picked])
        plan.features.append(Declaration("object_mask", {"type": "mask", "image": "image"},
                                         ["SegmentationObject/: each object's own index (instance masks); "
                                          f"{values_note(values, len(picked), len(files))}"], column="object_mask"))
    plan.features.append(Declaration("filename", {"dtype": "string"}, ["the image's file name"], column="filename"))
    return plan


def checked_masks(pairs: Sequence[tuple[Any, Any, str]]) -> set[int]:
    """The class indices the masks hold, each mask read as the mask feature reads it and of its
    image's upright size (`pairs`: mask, image or None, where the pair is in messages)."""
    seen: set[int] = set()
    for mask, image, where in pairs:
        try:
            indices = mask_indices(mask)
        except BadImage as error:
            raise DataError(f"{where}: mask {_name(mask)}: {error}") from None
        seen.update(np.unique(indices).tolist())
        if image is None:
            continue
        try:
            height, width = pillow.oriented_size(image)
        except BadImage as error:
            raise DataError(f"{where}: image {_name(image)}: {error}") from None
        if (height, width) != indices.shape:
            raise DataError(f"{where}: mask {_name(mask)} is {indices.shape[1]}×{indices.shape[0]} but its image "
                            f"{_name(image)} is {width}×{height} (width×height, upright); a mask must have its "
                            "image's size")
    return seen


def values_note(values: set[int], sampled: int, total: int) -> str:
    """`indices 0-20 and 255 (VOC's border, ...) in all 12 masks`."""
    plain = sorted(values - {VOID})
    runs: list[str] = []
    for value in plain:
        if runs and value == int(runs[-1].rsplit("-", 1)[-1]) + 1:
            runs[-1] = f"{runs[-1].split('-')[0]}-{value}"
        else:
            runs.append(str(value))
    shown = ", ".join(runs) or "none"
    void = f" and {VOID} (the void border VOC draws: a class a loss ignores)" if VOID in values else ""
    where = f"in all {total:,} masks" if sampled == total else f"in the {sampled:,} masks sampled of {total:,}"
    return f"indices {shown}{void} {where}"


def _name(value: Any) -> str:
    return value if isinstance(value, str) else f"{len(value):,} bytes"
