"""The plan of an annotated image set: a COCO instances JSON, a Pascal VOC folder or a YOLO folder.

Recognised by their layout (`recognise`), then read by the annotation builders themselves (the
COCO JSON by the builder's own streaming parse, once: the parse that recognises it), so the counts
in the spec's comments are what the build will see:

- **coco**: a `.json` whose top-level object has `images`, `annotations` and `categories`; or a
  folder holding `instances_*.json` or `annotations/instances_*.json` (a split a file when there
  are several). The
  images folder is the one, beside or below the JSON's, that holds its `file_name`s.
- **voc**: a folder of Pascal VOC `.xml` files beside their images, or one with `Annotations/`
  (and `JPEGImages/`), or `Annotations/` itself; a split a list of `ImageSets/Main/` (`train.txt`,
  `val.txt`, `test.txt`; `trainval.txt` when there is no `train.txt` nor `val.txt`), read with the
  voc builder's `image_set:` option.
- **yolo**: a folder with `images/` and `labels/*.txt`, and `data.yaml` or `classes.txt`; a
  split a sub-folder of `images/` (`images/train`, `images/val`) when it holds only sub-folders.

Boxes stay in the format's own layout (`format:`, `units:`); a box reaching outside its image, or
an empty one, makes the spec say `clip: true` or `min_size: 0` with a comment counting them (the
build counts them again), rather than a spec that stops at the first.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...builders import coco
from ...builders.annotations import image_files
from ...builders.image_folder import EXTENSIONS
from ...builders.voc import VocBuilder
from ...builders.yolo import YoloBuilder
from ...errors import DataError
from ...features.bbox import box_corners
from .image_files import image_guess, look, spread
from .names import dataset_name
from .plan import Declaration, Plan

_INSTANCES = re.compile(r"instances_(.+)\.json\Z")
_NAMES_FILES = ("data.yaml", "data.yml", "classes.txt")
_FORMATS = {"coco": ("xywh", "pixels"), "voc": ("xyxy", "pixels"), "yolo": ("cxcywh", "fraction")}
_KINDS = {"coco": "a COCO instances JSON", "voc": "a Pascal VOC folder", "yolo": "a YOLO folder"}


@dataclass
class Part:
    """One source (or one split's): its path, image folder, and what its records hold."""

    path: str
    images: str | None = None
    names_file: str | None = None
    image_set: str | None = None  # voc: the ImageSets/Main list of this split's images
    index: tuple[list[Any], dict[int, str]] | None = None  # coco: the JSON's images and categories
    files: list[str] = field(default_factory=list)  # every image's path
    boxes: list[np.ndarray] = field(default_factory=list)  # each image's boxes, as the format writes them
    sizes: list[tuple[int, int]] = field(default_factory=list)  # each image's (height, width)
    classes: set[str] = field(default_factory=set)


def annotation_plan(data: str) -> Plan | None:
    """The plan of `data` when it is a COCO JSON, a VOC folder or a YOLO folder; else None."""
    found = recognise(data)
    if found is None:
        return None
    kind, parts = found
    for split, part in parts.items():
        {"coco": _read_coco, "voc": _read_voc, "yolo": _read_yolo}[kind](part)
    return _plan(data, kind, parts)


def recognise(data: str) -> tuple[str, dict[str | None, Part]] | None:
    """(the kind, its parts by split: one part under None without splits), or None."""
    if os.path.isfile(data):
        found = coco_index(data)
        return ("coco", {None: _coco_part(data, found)}) if found is not None else None
    if not os.path.isdir(data):
        return None
    for folder in (os.path.join(data, "annotations"), data):  # coco/ or coco/annotations/
        indexed = {name: coco_index(os.path.join(folder, name)) for name in _listed(folder) if _INSTANCES.match(name)}
        jsons = {name: found for name, found in indexed.items() if found is not None}
        if jsons:
            break
    if jsons:
        parts = {name: _coco_part(os.path.join(folder, name), found) for name, found in jsons.items()}
        if len(parts) == 1:
            return "coco", {None: next(iter(parts.values()))}
        return "coco", _ordered({_split_name(name, list(parts)): part for name, part in parts.items()})
    voc = _voc_folder(data)
    if voc is not None:
        sets = _voc_image_sets(voc)
        if sets:
            return "voc", _ordered({split: Part(voc, image_set=path) for split, path in sets.items()})
        return "voc", {None: Part(voc)}
    return _yolo(data)


def coco_index(path: str) -> tuple[list[coco.Item], dict[int, str]] | None:
    """A COCO instances JSON's images (with their objects) and categories, as the builder indexes
    them; None when `path` isn't one: a `.json` holding one object with `images`, `annotations`
    and `categories`. One parse both recognises and reads it (a large JSON is read once): a bad
    image or annotation is said once the file is known to be COCO."""
    if not path.lower().endswith(".json"):
        return None
    images, annotations = coco.Images(path), coco.Annotations(path, False)
    problems: list[DataError] = []

    def guarded(add: Any) -> Any:
        def handle(position: int, value: Any) -> None:
            if not problems:
                try:
                    add(position, value)
                except DataError as error:  # said below if the file is COCO, else not ours to judge
                    problems.append(error)
        return handle

    try:
        with open(path, "rb") as file:
            if file.read(64).lstrip()[:1] != b"{":
                return None
        rest = coco.parse(path, {"images": guarded(images.add), "annotations": guarded(annotations.add)})
    except (OSError, DataError):  # not one JSON object (a JSONL file, broken JSON): not ours to judge
        return None
    if not {"images", "annotations", "categories"} <= set(rest):
        return None
    if problems:
        raise problems[0]
    items, _, categories = coco.arrange(path, images, annotations, rest, False)
    return items, categories


def _coco_part(path: str, found: tuple[list[Any], dict[int, str]]) -> Part:
    names = [str(item[2]).replace("\\", "/") for item in found[0][:20]]
    return Part(path, _coco_images(path, names), index=found)


def _listed(folder: str) -> list[str]:
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else []


def _ordered(parts: dict[str, Part]) -> dict[str | None, Part]:
    """Splits as a person lists them: train first, test last, the others between (by name)."""
    def rank(split: str) -> tuple[int, str]:
        word = split.lower()
        return (0 if word.startswith("train") else 2 if word.startswith("test") else 1), split
    return {split: parts[split] for split in sorted(parts, key=rank)}


def _split_name(name: str, names: list[str]) -> str:
    """`instances_train2017.json` -> train (the year dropped, unless that makes two splits one)."""
    plain = [_INSTANCES.match(other).group(1) for other in names]  # type: ignore[union-attr]
    short = [re.sub(r"[-_]?[0-9]{4}\Z", "", word) or word for word in plain]
    chosen = short if len(set(short)) == len(short) else plain
    return chosen[names.index(name)]


def _coco_images(path: str, names: list[str]) -> str:
    """The image folder of a COCO JSON: the JSON's folder, its parent, or a folder below either (two
    levels: `images/train2017`) holding the most of its first file names (all of them, or an error)."""
    here = os.path.dirname(os.path.abspath(path))
    candidates = [here, os.path.dirname(here)]
    for root in list(candidates):
        for first in _folders(root):
            candidates.append(first)
            candidates += _folders(first)
    if not names:
        return here
    found = [(sum(os.path.isfile(os.path.join(folder, name)) for name in names), folder) for folder in candidates]
    best, folder = max(found, key=lambda pair: pair[0])  # (max keeps the first of equals: the nearest)
    if best < len(names):
        raise DataError(f"{path}: a COCO instances JSON, but no folder beside it holds its images (looked for "
                        f"{names[0]} in {here}, {os.path.dirname(here)} and the folders below them)")
    return folder


def _folders(root: str) -> list[str]:
    return [os.path.join(root, name) for name in _listed(root)
            if not name.startswith(".") and os.path.isdir(os.path.join(root, name))]


def _voc_folder(data: str) -> str | None:
    """The folder of VOC XML files: `data` itself (XMLs beside images, or with a `JPEGImages`
    sibling) or its `Annotations/`."""
    for folder in (os.path.join(data, "Annotations"), data):
        xmls = [name for name in _listed(folder) if name.lower().endswith(".xml") and not name.startswith(".")]
        if not xmls or not _is_voc(os.path.join(folder, xmls[0])):
            continue
        beside = os.path.join(os.path.dirname(os.path.normpath(folder)), "JPEGImages")
        if image_files(folder) or os.path.isdir(beside):
            return folder
    return None


def _voc_image_sets(folder: str) -> dict[str, str]:
    """The splits of a VOC folder: its `ImageSets/Main/{train,val,test}.txt` (or `trainval.txt` when
    neither train nor val is there: trainval is their union, never a split beside them)."""
    main = os.path.join(os.path.dirname(os.path.normpath(folder)), "ImageSets", "Main")
    found = {split: os.path.join(main, f"{split}.txt") for split in ("train", "val", "trainval", "test")
             if os.path.isfile(os.path.join(main, f"{split}.txt"))}
    if "train" in found or "val" in found:
        found.pop("trainval", None)
    return found


def _is_voc(path: str) -> bool:
    """Whether an XML file's root is a VOC `<annotation>` (a malformed one is the builder's to name)."""
    import xml.etree.ElementTree as ElementTree

    try:
        for _, element in ElementTree.iterparse(path, events=("start",)):
            return element.tag == "annotation"
    except ElementTree.ParseError:
        return True
    return False


def _yolo(data: str) -> tuple[str, dict[str | None, Part]] | None:
    images, labels = os.path.join(data, "images"), os.path.join(data, "labels")
    if not (os.path.isdir(images) and os.path.isdir(labels)):
        return None
    if not any(name.endswith(".txt") for _, _, files in os.walk(labels) for name in files):
        return None
    names_file = next((os.path.join(data, name) for name in _NAMES_FILES if os.path.isfile(os.path.join(data, name))),
                      None)
    if names_file is None:
        raise DataError(f"{data}: a YOLO folder (images/, labels/*.txt) without class names: expected data.yaml "
                        "(`names:`) or classes.txt (one name a line) in it")
    # a split a sub-folder of images/ (one without labels/ beside it too: its images have no objects)
    splits = [name for name in _listed(images) if os.path.isdir(os.path.join(images, name)) and not name.startswith(".")]
    loose = [name for name in _listed(images) if os.path.splitext(name)[1].lower() in EXTENSIONS]
    if len(splits) > 1 and not loose:
        return "yolo", _ordered({split: Part(os.path.join(images, split), names_file=names_file) for split in splits})
    return "yolo", {None: Part(data, names_file=names_file)}


# ---- reading each kind, with the builders -------------------------------------------------------
def _read_coco(part: Part) -> None:
    items, categories = part.index  # type: ignore[misc]  (read as it was recognised)
    part.classes = set(categories.values())
    for _, _, file_name, height, width, objects in items:
        part.files.append(os.path.join(part.images or "", file_name))
        part.boxes.append(np.asarray(objects[2], np.float64).reshape(-1, 4))
        part.sizes.append((height, width))


def _read_voc(part: Part) -> None:
    builder = VocBuilder(None, part.path, {"image_set": part.image_set} if part.image_set else {})
    folder = builder.context().folder
    part.images = folder if os.path.normpath(folder) != os.path.normpath(part.path) else None
    part.classes = set(builder.names())
    for _, record in builder.generate(None):
        part.files.append(record["image"])
        part.boxes.append(np.asarray(record["bbox"], np.float64).reshape(-1, 4))
        part.sizes.append((record["height"], record["width"]))


def _read_yolo(part: Part) -> None:
    builder = YoloBuilder(None, part.path, {"names_file": part.names_file})
    part.classes = set(builder.names())
    for _, record in builder.generate(None):
        part.files.append(record["image"])
        part.boxes.append(np.asarray(record["bbox"], np.float64).reshape(-1, 4))
        part.sizes.append((record["height"], record["width"]))


# ---- the plan -------------------------------------------------------------------------------------
def _plan(data: str, kind: str, parts: dict[str | None, Part]) -> Plan:
    everything = list(parts.values())
    files = [file for part in everything for file in part.files]
    objects = sum(len(boxes) for part in everything for boxes in part.boxes)
    empty = sum(not len(boxes) for part in everything for boxes in part.boxes)
    classes = set().union(*(part.classes for part in everything))
    name = dataset_name(_named_folder(data))
    plan = Plan(name=name, source={"builder": kind})
    first = everything[0]
    if None in parts:
        plan.source["path"] = first.path
        if first.images is not None:
            plan.source["images"] = first.images
    else:
        plan.splits = {split: {"path": part.path, **({"options": options} if options else {})}
                       for split, part in parts.items()
                       for options in [{key: value for key, value in (("images", part.images),
                                                                       ("image_set", part.image_set)) if value}]}
        counts = ", ".join(f"{split} {len(part.files):,}" for split, part in parts.items())
        plan.splits_note = f"the data's own split, a source each (images: {counts})"
    if first.names_file is not None:
        plan.source["names_file"] = first.names_file
    plan.source_notes["builder"] = f"recognised: {_KINDS[kind]}"
    without = f" ({empty:,} without objects: records with no boxes)" if empty else ""
    plan.header = [f"Written by `tfrecord-builder infer` from {_shown(data)}: {_KINDS[kind]}, "
                   f"{_count(len(files), 'image')}{without}, {_count(objects, 'object')}, "
                   f"{_count(len(classes), 'class')}."]
    pictures = [look(file, file) for file in spread(files)]
    image = image_guess(pictures, len(files))
    plan.features.append(Declaration("image", image.fields(), [f"guessed: {image.note}"], column="image"))
    plan.features.append(_boxes(kind, everything, objects))
    if classes:
        plan.features.append(Declaration("labels", {"type": "class_label", "shape": [None], "source": "label"},
                                         [_class_note(kind, len(classes))], column="label"))
    else:  # (VOC files without objects): a class label without names can't build
        plan.features.append(Declaration("labels", {"dtype": "string", "shape": [None], "source": "label"},
                                         ["no object names a class: kept as text (a class_label needs `names:`)"],
                                         column="label"))
    for feature, fields, note in _attributes(kind):
        plan.features.append(Declaration(feature, fields, [note] if note else [], column=feature))
    return plan


def _named_folder(data: str) -> str:
    """The folder the dataset is named after: the data's, or the one above `annotations/`."""
    folder = os.path.abspath(data) if os.path.isdir(data) else os.path.dirname(os.path.abspath(data))
    if os.path.basename(folder).lower() in ("annotations", "labels") and os.path.dirname(folder) != folder:
        return os.path.dirname(folder)
    return folder


def _count(number: int, unit: str) -> str:
    return f"{number:,} {unit}{'' if number == 1 else ('es' if unit.endswith('s') else 's')}"


def _shown(data: str) -> str:
    return os.path.basename(os.path.normpath(data)) + ("/" if os.path.isdir(data) else "")


def _class_note(kind: str, count: int) -> str:
    rule = {"coco": "the categories sorted by id (the original ids in `category_id`)",
            "voc": "the <name>s found, sorted", "yolo": "the names file's, in index order"}[kind]
    return f"one a box; {_count(count, 'class')}: {rule}"


def _attributes(kind: str) -> list[tuple[str, dict[str, Any], str]]:
    per_object = {"dtype": "int64", "shape": [None]}
    if kind == "coco":
        return [("category_id", dict(per_object), "the category's id in the JSON"),
                ("iscrowd", dict(per_object), ""), ("area", {"dtype": "float32", "shape": [None]}, ""),
                ("image_id", {"dtype": "int64"}, ""), ("filename", {"dtype": "string"}, "")]
    if kind == "voc":
        return [("difficult", dict(per_object), ""), ("truncated", dict(per_object), ""),
                ("filename", {"dtype": "string"}, "")]
    return [("filename", {"dtype": "string"}, "the image's path below the folder")]


def _boxes(kind: str, parts: list[Part], objects: int) -> Declaration:
    form, units = _FORMATS[kind]
    fields: dict[str, Any] = {"type": "bbox", "source": "bbox", "format": form, "units": units, "image": "image"}
    notes = [f"{form} {'pixels' if units == 'pixels' else 'fractions'}, as {kind.upper()} writes them; "
             "stored [ymin, xmin, ymax, xmax] fractions"]
    outside, small, example = 0, 0, ""
    for part in parts:
        for file, boxes, size in zip(part.files, part.boxes, part.sizes):
            if not len(boxes):
                continue
            corners = box_corners(boxes, form)
            if units == "pixels":
                corners = corners / np.array([size[0], size[1], size[0], size[1]], np.float64)
            out = ((corners < 0) | (corners > 1)).any(axis=1)
            tiny = (corners[:, 2] <= corners[:, 0]) | (corners[:, 3] <= corners[:, 1])
            if out.any() and not example:
                example = f" (first: {os.path.basename(file)}, box {int(np.flatnonzero(out)[0])})"
            outside += int(out.sum())
            small += int((tiny & ~out).sum())
    if outside:
        fields["clip"] = True
        notes.append(f"guessed: {outside:,} of {objects:,} boxes reach outside their image{example}: clipped to it "
                     "and counted by the build (remove `clip` to stop at them)")
    if small:
        fields["min_size"] = 0
        notes.append(f"guessed: {small:,} boxes are empty (no width or height): dropped and counted by the build")
    return Declaration("objects", fields, notes, column="bbox")


