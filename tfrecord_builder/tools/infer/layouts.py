"""Where an annotated image set is, as the tools that export them lay it out: its kind (coco,
voc, yolo, labelme, segmentation) and its parts, one a split.

- **coco**: a `.json` whose top-level object has `images`, `annotations` and `categories`; or a
  folder holding `instances_*.json` (COCO's own), or `annotations/instances_*.json`, or other
  such JSONs (`annotations.json` of labelme2coco, kwcoco's `data.kwcoco.json`; several are a
  split each when named by one: `train.json`, `val.json`). The images folder is the one, beside
  or below the JSON's, that holds its `file_name`s.
- **labelme**: a folder of labelme JSON files (or one of them: its folder).
- **voc**: a folder of Pascal VOC `.xml` files beside their images, or one with `Annotations/`
  (and `JPEGImages/`), or `Annotations/` itself; a split a list of `ImageSets/Main/` (`train.txt`,
  `val.txt`, `test.txt`; `trainval.txt` when there is no `train.txt` nor `val.txt`).
- **segmentation**: mask files beside their images by name: `SegmentationClass/` and
  `JPEGImages/` (Pascal VOC, CVAT's "Segmentation mask" export), or `masks/` and `images/`; a
  split a list of `ImageSets/Segmentation/`.
- **yolo**: see yolo_layouts.py (Ultralytics, Roboflow, darknet).
- **split folders**: sub-folders named like splits (`train/`, `valid/`, `test/`, as Roboflow
  exports every format), each holding one of the above, all of one kind: a split each.
"""
from __future__ import annotations

import os
import re
from typing import Any

from ...builders import coco
from ...builders.annotations import image_files
from ...builders.labelme import is_labelme, json_files
from ...builders.segmentation import MASK_EXTENSIONS
from ...errors import DataError
from .parts import Found, Part, listed, ordered, subfolders
from .plan import SPLIT_WORDS, split_rank
from .yolo_layouts import darknet_layout, yolo_layout

_INSTANCES = re.compile(r"instances_(.+)\.json\Z")
_YEAR = re.compile(r"[-_.]?[0-9]{4}\Z")
_DECORATIONS = re.compile(r"^(_?annotations?[-_.]?|instances[-_])|([-_.]?(annotations?|coco|kwcoco|instances))+$")


def recognise(data: str) -> Found | None:
    """The layout at `data` (a file or a folder), or None when it is none of them."""
    if os.path.isfile(data):
        return _file(data)
    if not os.path.isdir(data):
        return None
    for recogniser in (_coco_instances, _labelme_folder, _coco_folder, _voc, _segmentation, yolo_layout,
                       darknet_layout):
        found = recogniser(data)
        if found is not None:
            return found
    return _split_folders(data)


def _file(path: str) -> Found | None:
    found = coco_index(path)
    if found is not None:
        return Found("coco", {None: _coco_part(path, found)})
    if path.lower().endswith(".json") and is_labelme(path):
        folder = os.path.dirname(os.path.abspath(path))
        return Found("labelme", {None: Part(folder)},
                     [f"{os.path.basename(path)} is a labelme JSON: the spec reads every labelme JSON in its folder."])
    return None


# ---- split folders -----------------------------------------------------------------------------
def split_folders(data: str) -> dict[str, str]:
    """The sub-folders named like splits (train, valid, val, test, ...; a year after the name
    too: train2017), by split name, in a person's order; {} unless every sub-folder is one."""
    folders = subfolders(data)
    named = {split_word(os.path.basename(folder)): folder for folder in folders}
    if not folders or None in named or len(named) != len(folders):
        return {}
    return {split: named[split] for split in sorted(named, key=split_rank)}  # type: ignore[arg-type]


def split_word(name: str) -> str | None:
    """The split a folder's or file's name says (`train`, `val2017` -> val), or None."""
    plain = _YEAR.sub("", name) or name
    return plain if plain.lower() in SPLIT_WORDS else None


def _split_folders(data: str) -> Found | None:
    """Split folders each holding a layout of one kind, one part each: a split each."""
    folders = split_folders(data)
    if not folders:
        return None
    found = {split: recognise(folder) for split, folder in folders.items()}
    kinds = {item.kind for item in found.values() if item is not None}
    if len(kinds) != 1 or any(item is None or list(item.parts) != [None] for item in found.values()):
        return None
    kind = kinds.pop()
    parts = {split: item.parts[None] for split, item in found.items() if item is not None}
    if len(parts) == 1:
        (split,) = parts
        return Found(kind, {None: parts[split]}, [f"one split folder, {split}/: divided by the fractions below."])
    return Found(kind, ordered(parts), [f"a split a folder: {', '.join(f'{split}/' for split in parts)}."])


# ---- COCO ----------------------------------------------------------------------------------------
def coco_index(path: str) -> tuple[list[coco.Item], dict[int, str], list[Any]] | None:
    """A COCO instances JSON's images (with their objects), categories and raw `categories`, as
    the builder indexes them; None when `path` isn't one: a `.json` holding one object with
    `images`, `annotations` and `categories`. One parse both recognises and reads it (a large
    JSON is read once): a bad image or annotation is said once the file is known to be COCO."""
    if not path.lower().endswith(".json"):
        return None
    images, annotations = coco.Images(path), coco.Annotations(path)
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
    return items, categories, rest["categories"] if isinstance(rest["categories"], list) else []


def _coco_part(path: str, found: tuple[list[Any], dict[int, str], list[Any]]) -> Part:
    names = [str(item[2]).replace("\\", "/") for item in found[0][:20]]
    return Part(path, coco_images(path, names), index=found)


def _coco_instances(data: str) -> Found | None:
    """COCO's own layout: `instances_*.json` in the folder or in its `annotations/`."""
    for folder in (os.path.join(data, "annotations"), data):
        jsons = {name: found for name in listed(folder) if _INSTANCES.match(name)
                 if (found := coco_index(os.path.join(folder, name))) is not None}
        if jsons:
            parts = {name: _coco_part(os.path.join(folder, name), found) for name, found in jsons.items()}
            if len(parts) == 1:
                return Found("coco", {None: next(iter(parts.values()))})
            return Found("coco", ordered({_split_name(name, list(parts)): part for name, part in parts.items()}))
    return None


def _coco_folder(data: str) -> Found | None:
    """Other COCO JSONs at the top of the folder (or of its `annotations/`): `annotations.json`,
    Roboflow's `_annotations.coco.json`; several only when each names a split."""
    for folder in (data, os.path.join(data, "annotations")):
        jsons = {name: found for name in listed(folder) if name.lower().endswith(".json") and not name.startswith(".")
                 if (found := coco_index(os.path.join(folder, name))) is not None}
        if not jsons:
            continue
        parts = {name: _coco_part(os.path.join(folder, name), found) for name, found in jsons.items()}
        if len(parts) == 1:
            return Found("coco", {None: next(iter(parts.values()))})
        splits = {name: _stem_split(name) for name in parts}
        if None in splits.values() or len(set(splits.values())) != len(splits):
            raise DataError(f"{folder}: {len(parts)} COCO JSONs ({', '.join(parts)}), not each named by a split "
                            "(train.json, val.json, ...): infer one of them")
        return Found("coco", ordered({splits[name]: part for name, part in parts.items()}))  # type: ignore[misc]
    return None


def _stem_split(name: str) -> str | None:
    """`train.json`, `val_annotations.json`, `instances_test2017.json` -> the split; else None."""
    stem = name[:-len(".json")].lower()
    return split_word(_DECORATIONS.sub("", stem))


def _split_name(name: str, names: list[str]) -> str:
    """`instances_train2017.json` -> train (the year dropped, unless that makes two splits one)."""
    plain = [_INSTANCES.match(other).group(1) for other in names]  # type: ignore[union-attr]
    short = [re.sub(r"[-_]?[0-9]{4}\Z", "", word) or word for word in plain]
    chosen = short if len(set(short)) == len(short) else plain
    return chosen[names.index(name)]


def coco_images(path: str, names: list[str]) -> str:
    """The image folder of a COCO JSON: the JSON's folder, its parent, or a folder below either (two
    levels: `images/train2017`) holding the most of its first file names (all of them, or an error)."""
    here = os.path.dirname(os.path.abspath(path))
    candidates = [here, os.path.dirname(here)]
    for root in list(candidates):
        for first in subfolders(root):
            candidates.append(first)
            candidates += subfolders(first)
    if not names:
        return here
    found = [(sum(os.path.isfile(os.path.join(folder, name)) for name in names), folder) for folder in candidates]
    best, folder = max(found, key=lambda pair: pair[0])  # (max keeps the first of equals: the nearest)
    if best < len(names):
        raise DataError(f"{path}: a COCO instances JSON, but no folder beside it holds its images (looked for "
                        f"{names[0]} in {here}, {os.path.dirname(here)} and the folders below them)")
    return folder


# ---- labelme -------------------------------------------------------------------------------------
def _labelme_folder(data: str) -> Found | None:
    """A folder whose first JSON (below it) is a labelme JSON."""
    jsons = json_files(data)
    if not jsons or not is_labelme(os.path.join(data, jsons[0])):
        return None
    return Found("labelme", {None: Part(data)})


# ---- Pascal VOC ----------------------------------------------------------------------------------
def _voc(data: str) -> Found | None:
    folder = _voc_folder(data)
    if folder is None:
        return None
    notes = []
    masks = os.path.join(os.path.dirname(os.path.normpath(folder)), "SegmentationClass")
    if os.path.isdir(masks):
        count = sum(os.path.splitext(name)[1].lower() in MASK_EXTENSIONS for name in listed(masks))
        notes.append(f"(SegmentationClass/ holds {count:,} masks: `tfrecord-builder infer {masks}` writes a spec "
                     "for them.)")
    sets = _image_sets(folder, "Main")
    if sets:
        return Found("voc", ordered({split: Part(folder, image_set=path) for split, path in sets.items()}), notes)
    return Found("voc", {None: Part(folder)}, notes)


def _voc_folder(data: str) -> str | None:
    """The folder of VOC XML files: `data` itself (XMLs beside images, or with a `JPEGImages`
    sibling) or its `Annotations/`."""
    for folder in (os.path.join(data, "Annotations"), data):
        xmls = [name for name in listed(folder) if name.lower().endswith(".xml") and not name.startswith(".")]
        if not xmls or not _is_voc(os.path.join(folder, xmls[0])):
            continue
        beside = os.path.join(os.path.dirname(os.path.normpath(folder)), "JPEGImages")
        if image_files(folder) or os.path.isdir(beside):
            return folder
    return None


def _image_sets(folder: str, kind: str) -> dict[str, str]:
    """The splits of a VOC folder: its `ImageSets/KIND/{train,val,test}.txt` (or `trainval.txt` when
    neither train nor val is there: trainval is their union, never a split beside them)."""
    lists = os.path.join(os.path.dirname(os.path.normpath(folder)), "ImageSets", kind)
    found = {split: os.path.join(lists, f"{split}.txt") for split in ("train", "val", "trainval", "test")
             if os.path.isfile(os.path.join(lists, f"{split}.txt"))}
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


# ---- segmentation masks --------------------------------------------------------------------------
def _segmentation(data: str) -> Found | None:
    """Masks beside images: `SegmentationClass/` (VOC, CVAT) or `masks/`, with `JPEGImages/` or
    `images/` beside it (or `data` is the mask folder itself)."""
    candidates = [os.path.join(data, name) for name in ("SegmentationClass", "masks")]
    if os.path.basename(os.path.normpath(data)) in ("SegmentationClass", "masks"):
        candidates.append(data)
    for folder in candidates:
        masks = [name for name in listed(folder) if os.path.splitext(name)[1].lower() in MASK_EXTENSIONS
                 and not name.startswith(".")]
        parent = os.path.dirname(os.path.normpath(folder))
        images = next((os.path.join(parent, name) for name in ("JPEGImages", "images")
                       if os.path.isdir(os.path.join(parent, name))), None)
        if not masks or images is None:
            continue
        by_stem = image_files(images)
        if not any(os.path.splitext(name)[0] in by_stem for name in masks[:20]):
            continue
        sets = _image_sets(folder, "Segmentation")
        if sets:
            return Found("segmentation", ordered({split: Part(folder, images, image_set=path)
                                                  for split, path in sets.items()}))
        return Found("segmentation", {None: Part(folder, images)})
    return None
