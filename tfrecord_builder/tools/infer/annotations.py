"""The plan of an annotated image set with boxes: COCO, Pascal VOC, YOLO or labelme, found by
layouts.py and read by the annotation builders themselves (the COCO JSON by the builder's own
streaming parse, once: the parse that recognises it), so the counts in the spec's comments are
what the build will see. (Masks without boxes: masks.py.)

Boxes stay in the format's own layout (`format:`, `units:`); a box reaching outside its image, or
an empty one, makes the spec say `clip: true` or `min_size: 0` with a comment counting them (the
build counts them again), rather than a spec that stops at the first.

Infer reads every object, so a per-object or per-image field holding one value throughout (VOC's
`difficult` all 0, COCO's `iscrowd` all 0, one category's `category_id`) is left out, with a
comment saying so and how to keep it: a feature that never changes stores nothing, and a dry run
says so of it.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from ...builders import coco
from ...builders.annotations import WARN_NOTICE
from ...builders.labelme import LabelmeBuilder
from ...builders.voc import VocBuilder
from ...builders.yolo import YoloBuilder
from ...features.bbox import box_corners
from ...features.notices import Notices, added, said
from .image_files import image_guess, look, spread
from .names import dataset_name, identifier
from .parts import Found, Part, count, named_folder, place_parts, shown_name
from .plan import Declaration, Plan
from .spec_text import flow

_FORMATS = {"coco": ("xywh", "pixels"), "voc": ("xyxy", "pixels"), "yolo": ("cxcywh", "fraction"),
            "labelme": ("xyxy", "pixels")}
_KINDS = {"coco": "a COCO instances JSON", "voc": "a Pascal VOC folder", "yolo": "a YOLO folder",
          "labelme": "a folder of labelme JSON files"}
# the fields of each kind that a spec declares besides image, boxes and labels: per object and per
# image, each with its declaration and note (labelme's flags are found in the data: `_fields`)
_INT, _FLOAT, _TEXT = {"dtype": "int64"}, {"dtype": "float32"}, {"dtype": "string"}
_PER_OBJECT: dict[str, list[tuple[str, dict[str, Any], str]]] = {
    "coco": [("category_id", _INT, "the category's id in the JSON"), ("iscrowd", _INT, ""), ("area", _FLOAT, "")],
    "voc": [("difficult", _INT, ""), ("truncated", _INT, ""), ("occluded", _INT, ""), ("pose", _TEXT, "")],
    "yolo": [],
    "labelme": [("shape_type", _TEXT, ""), ("group_id", _INT, "-1 where null"), ("description", _TEXT, ""),
                ("points", _TEXT, "each object's points as labelme wrote them: JSON text [[x, y], ...], pixels")],
}
_PER_IMAGE: dict[str, list[tuple[str, dict[str, Any], str]]] = {
    "coco": [("image_id", _INT, ""), ("filename", _TEXT, "")],
    "voc": [("filename", _TEXT, "")],
    "yolo": [("filename", _TEXT, "the image's path below the folder")],
    "labelme": [("filename", _TEXT, "imagePath, as written")],
}


def annotation_plan(data: str, found: Found) -> Plan:
    """The plan of `data`, an annotated image set with boxes as layouts.py found it."""
    for part in found.parts.values():
        read_part(found.kind, part)
    return _plan(data, found)


# ---- reading each kind, with the builders -------------------------------------------------------
def read_part(kind: str, part: Part) -> None:
    """Fills `part` with what the kind's builder reads of it: every image and object. Each image
    is measured as a build measures it; one whose annotated size differs from its file's is
    counted (`size_mismatch: warn`), not refused: `_sizes` says so in the spec."""
    noted = Notices()  # what reading counts (labelme's shapes without an area), said here, not by a build
    if kind == "coco":
        assert part.index is not None  # (read as it was recognised)
        items, categories, _ = part.index
        part.classes = list(categories.values())
        context = coco.Context(part.images or "", categories, False, "warn", True)
        for item in items:
            _add(kind, part, coco.record(item, context, noted)[1])
    else:
        if kind == "voc":
            builder: Any = VocBuilder(None, part.path, {"size_mismatch": "warn", **(
                {"image_set": part.image_set} if part.image_set else {})})
            folder = builder.context().folder
            part.images = folder if os.path.normpath(folder) != os.path.normpath(part.path) else None
        elif kind == "yolo":
            builder = YoloBuilder(None, part.path, {"names_file": part.names_file})
        else:
            builder = LabelmeBuilder(None, part.path, {"size_mismatch": "warn"})
        part.classes = list(builder.names())
        for _, record in builder.records(None, noted):
            _add(kind, part, record)
    part.notices = noted.counts


def _add(kind: str, part: Part, record: dict[str, Any]) -> None:
    image = record["image"]
    part.files.append(image)
    part.shown.append(os.path.basename(image) if isinstance(image, str) else str(record["filename"]))
    part.boxes.append(np.asarray(record["bbox"], np.float64).reshape(-1, 4))
    part.sizes.append((record["height"], record["width"]))
    part.labels += record["label"]
    for name, _, _ in _fields(kind, record, _PER_OBJECT, "flag_"):
        part.objects.setdefault(name, []).extend(record[name])
    for name, _, _ in _fields(kind, record, _PER_IMAGE, "image_flag_"):
        part.images_fields.setdefault(name, []).append(record[name])


def _fields(kind: str, record: dict[str, Any], table: dict[str, list[tuple[str, dict[str, Any], str]]],
            prefix: str) -> list[tuple[str, dict[str, Any], str]]:
    """The kind's fields in `table`, and (labelme) the flags a record names, `prefix` first."""
    flags = [(name, _INT, "1 where set") for name in record if kind == "labelme" and name.startswith(prefix)]
    return table[kind] + flags


# ---- the plan -------------------------------------------------------------------------------------
def _plan(data: str, found: Found) -> Plan:
    kind, parts = found.kind, found.parts
    everything = list(parts.values())
    images = sum(len(part.files) for part in everything)
    objects = sum(len(boxes) for part in everything for boxes in part.boxes)
    empty = sum(not len(boxes) for part in everything for boxes in part.boxes)
    classes = _classes(everything)
    plan = Plan(name=dataset_name(named_folder(data)), source={"builder": kind})
    place_parts(plan, parts)
    first = everything[0]
    if first.names_file is not None:
        plan.source["names_file"] = first.names_file
    plan.source_notes["builder"] = f"recognised: {_KINDS[kind]}"
    _sizes(plan, everything)
    labels = _labels(kind, everything, classes)
    without = f" ({empty:,} without objects: records with no boxes)" if empty else ""
    plan.header = [f"Written by `tfrecord-builder infer` from {shown_name(data)}: {_KINDS[kind]}, "
                   f"{count(images, 'image')}{without}, {count(objects, 'object')}, "
                   f"{count(len(labels.fields.get('names', classes)), 'class')}."] + found.notes + _said(everything)
    files = [file for part in everything for file in part.files]
    shown = [name for part in everything for name in part.shown]
    picked = spread(list(range(len(files))))
    image = image_guess([look(files[index], shown[index]) for index in picked], len(files))
    plan.features.append(Declaration("image", image.fields(), [f"guessed: {image.note}"], column="image"))
    plan.features.append(_boxes(kind, everything, objects))
    plan.features.append(labels)
    if kind == "coco":
        _keypoints(plan, everything)
    _attributes(plan, kind, everything, objects, images)
    return plan


def _keypoints(plan: Plan, parts: list[Part]) -> None:
    """COCO's keypoints (person keypoints), where its categories name points: a keypoints feature
    in pixels, and each object's count of labelled points."""
    named = {tuple(category["keypoints"]): str(category.get("name")) for part in parts
             for category in (part.index[2] if part.index else [])
             if isinstance(category, dict) and isinstance(category.get("keypoints"), list) and category["keypoints"]}
    if not named:
        return
    if len(named) > 1:
        plan.left_out.append(f"keypoints: left out: the categories {', '.join(sorted(named.values()))} name different "
                             "points, and a keypoints feature holds one list (declare one with its `names:`)")
        return
    (points, category), = named.items()
    shown = ", ".join(points[:4]) + (" ..." if len(points) > 4 else "")
    plan.features.append(Declaration(
        "keypoints", {"type": "keypoints", "units": "pixels", "image": "image"},
        [f"the points of category {category}: {count(len(points), 'point')} ({shown}), COCO's [x, y, v] in pixels; "
         "stored [y, x] fractions, with keypoints_visibility (0 not labelled, 1 hidden, 2 visible)"],
        column="keypoints"))
    plan.features.append(Declaration("num_keypoints", {"dtype": "int64", "shape": [None]},
                                     ["the points labelled, one an object"], column="num_keypoints"))


def _sizes(plan: Plan, parts: list[Part]) -> None:
    """`size_mismatch: warn` where images' annotated sizes differ from their files' (a build would
    stop at the first), with a comment saying what that keeps and what else there is."""
    differing = sum(part.notices.get(WARN_NOTICE, 0) for part in parts)
    if differing:
        plan.source["options"] = {"size_mismatch": "warn"}
        plan.source_notes["options"] = (f"guessed: {count(differing, 'image')} whose annotated size differs from the "
                                        "file's: the sizes taken as wrong, the boxes as the file's pixels; write "
                                        "`scale` if the images were shrunk after labelling")


def _said(parts: list[Part]) -> list[str]:
    """What the builder counted while infer read it (labelme's shapes without an area, images read
    from imageData), as the build will say it."""
    counts: dict[str, int] = {}
    for part in parts:
        added(counts, part.notices)
    return [line.removeprefix("source: ") + " (the build says so too)." for line in said(counts)]


def _classes(parts: list[Part]) -> list[str]:
    """The builder's class names (each part's, in index order; several parts' merged as the build
    merges them)."""
    names = [name for part in parts for name in part.classes]
    return list(dict.fromkeys(names))


def _labels(kind: str, parts: list[Part], classes: list[str]) -> Declaration:
    if not classes:  # (VOC files without objects): a class label without names can't build
        return Declaration("labels", {"dtype": "string", "shape": [None], "source": "label"},
                           ["no object names a class: kept as text (a class_label needs `names:`)"], column="label")
    rule = {"coco": "the categories sorted by id (the original ids in `category_id`)",
            "voc": "the <name>s found, sorted", "yolo": "the names file's, in index order",
            "labelme": "the labels found, sorted"}[kind]
    fields: dict[str, Any] = {"type": "class_label", "shape": [None], "source": "label"}
    notes = [f"one a box; {count(len(classes), 'class')}: {rule}"]
    used = {label for part in parts for label in part.labels}
    dataset = _roboflow_category(parts, used) if kind == "coco" else None
    if dataset is not None:
        fields["names"] = [name for name in classes if name != dataset]
        notes = [f"one a box; {count(len(fields['names']), 'class')}: the categories sorted by id, but for "
                 f"`{dataset}`: guessed: the supercategory of every other, without objects (Roboflow's "
                 "dataset name), left out of the names"]
    unused = [name for name in fields.get("names", classes) if name not in used]
    if unused and used:
        notes.append(f"{count(len(unused), 'class')} without objects ({', '.join(unused[:5])}"
                     f"{' ...' if len(unused) > 5 else ''})")
    return Declaration("labels", fields, notes, column="label")


def _roboflow_category(parts: list[Part], used: set[str]) -> str | None:
    """The category Roboflow adds to a COCO export: the dataset's name, id 0, with no objects and
    the supercategory of every other category; None when the categories have none such."""
    found = None
    for part in parts:
        raw = [category for category in (part.index[2] if part.index else []) if isinstance(category, dict)]
        others = {str(category.get("supercategory")) for category in raw if category.get("id") != 0}
        zero = [str(category["name"]) for category in raw if category.get("id") == 0 and "name" in category]
        if not zero or len(raw) < 2 or others != {zero[0]} or zero[0] in used or found not in (None, zero[0]):
            return None
        found = zero[0]
    return found


def _attributes(plan: Plan, kind: str, parts: list[Part], objects: int, images: int) -> None:
    """The kind's other fields: declared where their values differ, else left out with a comment."""
    for table, values_of, shape, unit in ((_PER_OBJECT, "objects", [None], "object"),
                                          (_PER_IMAGE, "images_fields", [], "image")):
        found: dict[str, tuple[dict[str, Any], str]] = {}
        for part in parts:
            record = dict.fromkeys(getattr(part, values_of))
            for name, fields, note in _fields(kind, record, table, "flag_" if unit == "object" else "image_flag_"):
                found.setdefault(name, (fields, note))
        for name, (fields, note) in found.items():
            values = [value for part in parts for value in getattr(part, values_of).get(name, [])]
            declared = {**fields, **({"shape": shape} if shape else {})}
            feature = identifier(name)
            if feature != name:
                declared["source"] = name
            if name == "points" and all(value == "rectangle" for part in parts
                                        for value in part.objects.get("shape_type", [])):
                continue  # (every shape a rectangle: its points are its box)
            constant = _constant(values, objects if unit == "object" else images, unit, images)
            if constant is not None:
                plan.left_out.append(f"{feature}: left out: {constant} (add `{feature}: {flow(declared)}` to keep it)")
                continue
            plan.features.append(Declaration(feature, declared, [note] if note else [], column=name))


def _constant(values: list[Any], total: int, unit: str, images: int) -> str | None:
    """Why a field holding one value throughout (or none at all) is left out, or None."""
    if images < 2:
        return None
    if not values:
        return f"no {unit}s"
    first = values[0]
    if any(value != first for value in values):
        return None
    shown = flow(first) if not isinstance(first, str) or first else '""'
    return f"{shown} for every one of the {count(total, unit)}" if total > 1 else f"{shown} for the one {unit}"


def _boxes(kind: str, parts: list[Part], objects: int) -> Declaration:
    form, units = _FORMATS[kind]
    fields: dict[str, Any] = {"type": "bbox", "source": "bbox", "format": form, "units": units, "image": "image"}
    written = ("each labelme shape's extent (a polygon's vertices, a circle's centre and radius)" if kind == "labelme"
               else f"as {kind.upper()} writes them")
    notes = [f"{form} {'pixels' if units == 'pixels' else 'fractions'}, {written}; stored [ymin, xmin, ymax, xmax] "
             "fractions"]
    notes += box_checks(fields, [(name, boxes, size) for part in parts
                                 for name, boxes, size in zip(part.shown, part.boxes, part.sizes)], objects)
    return Declaration("objects", fields, notes, column="bbox")


def box_checks(fields: dict[str, Any], images: list[tuple[str, np.ndarray, tuple[int, int]]], objects: int) -> list[str]:
    """`clip: true` when boxes reach outside their image, `min_size: 0` when some are empty, set in
    `fields` with the notes that count them. `images`: (name, boxes as the format writes them,
    (height, width)) per image."""
    form, units = fields["format"], fields.get("units", "fraction")
    outside, small, example = 0, 0, ""
    for name, boxes, size in images:
        if not len(boxes):
            continue
        corners = box_corners(boxes, form)
        if units == "pixels":
            corners = corners / np.array([size[0], size[1], size[0], size[1]], np.float64)
        out = ((corners < 0) | (corners > 1)).any(axis=1)
        tiny = (corners[:, 2] <= corners[:, 0]) | (corners[:, 3] <= corners[:, 1])
        if out.any() and not example:
            example = f" (first: {name}, box {int(np.flatnonzero(out)[0])})"
        outside += int(out.sum())
        small += int((tiny & ~out).sum())
    notes = []
    if outside:
        fields["clip"] = True
        verb = "reaches outside its image" if outside == 1 else "reach outside their image"
        notes.append(f"guessed: {count(outside, 'box')} of {objects:,} {verb}{example}: clipped to it and counted "
                     "by the build (remove `clip` to stop at them)")
    if small:
        fields["min_size"] = 0
        notes.append(f"{count(small, 'empty box')} (no width or height): `min_size: 0` drops each such object whole, "
                     "its label and other per-object values with it, and the build counts them")
    return notes
