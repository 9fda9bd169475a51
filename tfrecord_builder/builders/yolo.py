"""`builder: yolo`: a folder of images with one `.txt` of boxes per image, YOLO's way.

    source: {builder: yolo, path: dataset/, names_file: data.yaml}

The images are every image file below `path` (sorted); an image's labels file is the same path
with `images` (its last such folder) turned into `labels` and the extension into `.txt`, as
Ultralytics finds them (`dataset/images/train/a.jpg` -> `dataset/labels/train/a.txt`), or the
`.txt` beside it when its path has no `images` folder. An image without a labels file, or with
an empty one, is a record with no boxes. Each line is `class cx cy w h`: the class's index and
the box's centre and size as fractions of the image.

Records offer `image`, `filename` (the image's path below `path`), `image_id` (its stem),
`height` and `width` (the image's, from its header, upright as its EXIF orientation says),
and per line: `bbox` ([cx, cy, w, h] fractions, as written), `class_id` and `label` (its name).
The class names come from `names_file`: a `classes.txt` (one a line) or a `data.yaml` (`names:`
a list, or indices to names); without it, `classes.txt` or `data.yaml` in `path` or above it.
"""
from __future__ import annotations

import os
from typing import Any

from ..errors import DataError
from ..features.notices import Notices
from .annotations import AnnotationBuilder, names_from_file, problem
from .image_folder import EXTENSIONS, _images

Item = tuple[str, str, str]  # (the image's path, its path below the folder, its labels file's path)

_NAMES_FILES = ("classes.txt", "data.yaml", "data.yml")


class YoloBuilder(AnnotationBuilder):
    """Images and their boxes from YOLO text files."""

    SOURCE_KEYS = frozenset({"names_file"})
    READS_FOLDER = True

    def __init__(self, spec: Any, path: str | None = None, options: dict[str, Any] | None = None):
        super().__init__(spec, path, options)
        self._items: list[Item] | None = None
        self._orphans: list[dict[str, str]] = []  # labels files without an image, under on_error: skip
        self._names: list[str] | None = None

    def listed(self) -> tuple[list[Item], list[dict[str, str]]]:
        if self._items is None:
            folder = self.path or ""
            self._items = [(os.path.join(folder, relative), relative, labels_file(folder, relative))
                           for relative, _ in _images(folder)]
            if not self._items:
                raise DataError(f"{folder}: no images found")
            self._orphans = []
            for labels in orphan_labels(folder, {labels for _, _, labels in self._items}):
                problem(self.keep_going, self._orphans, labels,
                        f"{labels}: a labels file without its image (expected {image_for(labels)} with an "
                        "image's extension)")
        return self._items, self._orphans

    def fields(self) -> list[str]:
        return ["image", "filename", "image_id", "height", "width", "bbox", "class_id", "label"]

    def names(self) -> list[str]:
        if self._names is None:
            self._names = names_from_file(self._names_file())
        return self._names

    def _names_file(self) -> str:
        given = self.setting("names_file")
        if given is not None:
            return given
        folder = os.path.abspath(self.path or "")
        for _ in range(3):  # dataset/, or dataset/images/train/ two levels below it
            for name in _NAMES_FILES:
                if os.path.isfile(os.path.join(folder, name)):
                    return os.path.join(folder, name)
            folder = os.path.dirname(folder)
        raise DataError(f"{self.path}: no class names: expected classes.txt or data.yaml in the folder (or "
                        "above it), or `names_file:` in the source")

    def context(self) -> list[str]:
        return self.names()

    def item_key(self, item: Item) -> Any:
        return item[1]  # its path below the folder

    @staticmethod
    def READ(item: Item, context: list[str], notices: Notices) -> tuple[Any, dict[str, Any]]:
        return record(item, context)  # (a YOLO labels file says nothing to count)

    def image_file(self, item: Item, context: list[str]) -> str:
        return item[0]


def labels_file(folder: str, relative: str) -> str:
    """An image's labels file: its path with its last `images` folder as `labels`, `.txt`."""
    parts = os.path.splitext(relative)[0].split("/")
    below = folder.replace(os.sep, "/").rstrip("/").split("/")
    whole = below + parts
    for index in range(len(whole) - 2, -1, -1):
        if whole[index] == "images":
            whole[index] = "labels"
            break
    return "/".join(whole) + ".txt"


def orphan_labels(folder: str, expected: set[str]) -> list[str]:
    """The `.txt` files below `folder` in a `labels` folder or beside images that no image
    names as its labels file (their boxes would be lost without a word), sorted."""
    found = []
    for root, folders, files in os.walk(folder):
        folders[:] = sorted(name for name in folders if not name.startswith("."))
        root = root.replace(os.sep, "/").rstrip("/")
        has_images = any(os.path.splitext(name)[1].lower() in EXTENSIONS for name in files)
        in_labels = "labels" in root[len(folder.replace(os.sep, "/").rstrip("/")):].split("/")
        for name in sorted(files):
            path = f"{root}/{name}"
            if (name.endswith(".txt") and name not in _NAMES_FILES and (in_labels or has_images)
                    and path not in expected):
                found.append(path)
    return found


def image_for(labels: str) -> str:
    """Where a labels file's image would be: its last `labels` folder as `images`, no extension."""
    parts = os.path.splitext(labels)[0].split("/")
    for index in range(len(parts) - 2, -1, -1):
        if parts[index] == "labels":
            parts[index] = "images"
            break
    return "/".join(parts)


def record(item: Item, names: list[str]) -> tuple[str, dict[str, Any]]:
    """One image's record: its size from its header, its boxes from its labels file."""
    path, relative, labels = item
    width, height = image_size(path)
    boxes, classes = [], []
    try:
        with open(labels, encoding="utf-8") as file:
            lines = file.read().splitlines()
    except FileNotFoundError:
        lines = []  # an image without objects (Ultralytics' background image)
    except OSError as error:
        raise DataError(f"{labels}: can't read the labels file ({error.strerror})") from None
    for number, line in enumerate(lines, start=1):
        fields = line.split()
        if not fields:
            continue
        where = f"{labels}, line {number}"
        if len(fields) != 5:
            raise DataError(f"{where}: expected 5 numbers (class cx cy w h), received {len(fields)}"
                            f"{_not_a_box(len(fields))}: {line.strip()!r}")
        try:
            values = [float(field) for field in fields]
        except ValueError:
            raise DataError(f"{where}: expected 5 numbers (class cx cy w h), received {line.strip()!r}") from None
        if not values[0].is_integer() or not 0 <= values[0] < len(names):
            raise DataError(f"{where}: class {fields[0]}: expected a class index in [0, {len(names)}) "
                            f"({len(names)} class names)")
        classes.append(int(values[0]))
        boxes.append(values[1:])
    return relative, {"image": path, "filename": relative, "image_id": os.path.splitext(os.path.basename(relative))[0],
                      "height": height, "width": width, "bbox": boxes, "class_id": classes,
                      "label": [names[index] for index in classes]}


def _not_a_box(count: int) -> str:
    """What a line of `count` numbers is instead of a box, in Ultralytics' other label formats,
    and what to do with it ("" for none of them)."""
    if count == 9:  # class x1 y1 x2 y2 x3 y3 x4 y4
        return (", an oriented box (OBB: class x1 y1 x2 y2 x3 y3 x4 y4), which isn't read; write each as the box "
                "around its corners (class cx cy w h) or read it with a custom builder")
    if count >= 7 and count % 2:  # a class, then x y of 3 or more points
        return (f", a polygon of {(count - 1) // 2} points (a segment label), which isn't read; use the dataset's "
                "box labels, or its COCO export (`builder: coco` reads polygons as masks)")
    return ""


def image_size(path: str) -> tuple[int, int]:
    """An image's width and height from its header, upright (EXIF orientations 5-8 swap them)."""
    from ..media.images import BadImage
    from ..media.images.pillow import oriented_size  # Pillow: only once images are read

    try:
        height, width = oriented_size(path)
    except BadImage as error:
        raise DataError(f"{path}: can't read the image's size ({error})") from None
    return width, height
