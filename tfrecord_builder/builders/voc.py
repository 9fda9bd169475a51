"""`builder: voc`: a folder of Pascal VOC XML files, one per image.

    source: {builder: voc, path: VOC/Annotations}            # images in VOC/JPEGImages or beside
    source: {builder: voc, path: VOC/Annotations, images: VOC/photos}
    splits: {train: {path: VOC/Annotations, options: {image_set: VOC/ImageSets/Main/train.txt}}, ...}

One record per XML file (sorted by name; a file without `<object>` is a record with no boxes),
with `image` (`<filename>` in `images:`, default the XML's folder if it holds images, else its
sibling `JPEGImages`), `filename`, `image_id` (the XML file's stem), `height` and `width`
(`<size>`) and, one per `<object>`: `bbox` ([xmin, ymin, xmax, ymax] in pixels, as in the XML),
`label` (`<name>`), `difficult`, `truncated`, `occluded` (0 where absent) and `pose`
("Unspecified" where absent). The classes are the names found, sorted, or those of `names_file`.
A split's `image_set:` option (VOC's `ImageSets/Main/train.txt`: an image id, the XML's stem, first
on each line) reads only the XML files it lists, in its order; an id without its XML is an error.
"""
from __future__ import annotations

import os
import xml.etree.ElementTree as ElementTree
from typing import Any

from ..errors import DataError
from ..features.class_label import class_order
from .annotations import AnnotationBuilder, image_files, image_path, names_from_file

Item = tuple[str]  # (the XML file's path,): its place in messages, too

_FLAGS = ("difficult", "truncated", "occluded")
_CORNERS = ("xmin", "ymin", "xmax", "ymax")


class VocBuilder(AnnotationBuilder):
    """Images and their objects from Pascal VOC XML files."""

    OPTIONS = {**AnnotationBuilder.OPTIONS,
               "image_set": "a file of image ids, one a line (ImageSets/Main/train.txt): this split's XML files"}

    def __init__(self, spec: Any, path: str | None = None, options: dict[str, Any] | None = None):
        super().__init__(spec, path, options)
        self._items: list[Item] | None = None
        self._names: list[str] | None = None

    def listed(self) -> tuple[list[Item], list[dict[str, str]]]:
        if self._items is None:
            folder = self.path or ""
            files = sorted(name for name in os.listdir(folder)
                           if name.lower().endswith(".xml") and not name.startswith("."))
            if not files:
                raise DataError(f"{folder}: no Pascal VOC .xml files found")
            image_set = self.setting("image_set")
            if image_set is not None:
                files = _listed_ids(image_set, folder, set(files))
            self._items = [(os.path.join(folder, name),) for name in files]
        return self._items, []

    def context(self) -> str:
        """The image folder: `images:`, or the XML's folder if it holds images, or its `JPEGImages` sibling."""
        given = self.setting("images")
        if given is not None:
            return given
        folder = self.path or ""
        beside = os.path.join(os.path.dirname(os.path.normpath(folder)), "JPEGImages")
        return beside if not image_files(folder) and os.path.isdir(beside) else folder

    def names(self) -> list[str]:
        if self._names is None:
            names_file = self.setting("names_file")
            if names_file is not None:
                self._names = names_from_file(names_file)
            else:  # every object's name, sorted; a file that can't be read is said (or skipped) when read
                found: set[str] = set()
                for (path,) in self.listed()[0]:
                    try:
                        root = _root(path)
                    except DataError:
                        if self.keep_going:
                            continue
                        raise
                    found.update((element.text or "").strip() for element in root.iterfind("object/name"))
                self._names = class_order(found)
        return self._names

    @staticmethod
    def READ(item: Item, context: str) -> tuple[Any, dict[str, Any]]:
        return record(item, context)


def record(item: Item, folder: str) -> tuple[str, dict[str, Any]]:
    """One XML file's record."""
    (path,) = item
    root = _root(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    filename = _text(root, "filename", path)
    size = root.find("size")
    if size is None:
        raise DataError(f"{path}: expected <size> with <width> and <height>")
    width, height = (_whole(size, key, f"{path}: <size>") for key in ("width", "height"))
    boxes, labels, poses = [], [], []
    flags: dict[str, list[int]] = {flag: [] for flag in _FLAGS}
    for number, element in enumerate(root.iterfind("object")):
        where = f"{path}: object {number}"
        labels.append(_text(element, "name", where))
        box = element.find("bndbox")
        if box is None:
            raise DataError(f"{where} ({labels[-1]}): expected <bndbox> with {', '.join(_CORNERS)}")
        boxes.append([_number(box, corner, f"{where} ({labels[-1]}): <bndbox>") for corner in _CORNERS])
        for flag in _FLAGS:
            flags[flag].append(_whole(element, flag, where, default=0))
        pose = element.find("pose")
        poses.append((pose.text or "").strip() if pose is not None else "Unspecified")
    return stem, {"image": image_path(folder, filename), "filename": filename, "image_id": stem,
                  "height": height, "width": width, "bbox": boxes, "label": labels, "pose": poses, **flags}


def _listed_ids(image_set: str, folder: str, present: set[str]) -> list[str]:
    """The XML file names an image set lists (the first word of each line), in its order."""
    try:
        with open(image_set, encoding="utf-8") as file:
            lines = file.read().splitlines()
    except OSError as error:
        raise DataError(f"{image_set}: can't read the image set ({error.strerror})") from None
    names: list[str] = []
    for number, line in enumerate(lines, 1):
        words = line.split()
        if not words:
            continue
        name = words[0] + ".xml"
        if name not in present:
            raise DataError(f"{image_set}, line {number}: image {words[0]!r} has no {name} in {folder}")
        if name in names:
            raise DataError(f"{image_set}, line {number}: image {words[0]!r} is listed twice")
        names.append(name)
    return names


def _root(path: str) -> ElementTree.Element:
    try:
        return ElementTree.parse(path).getroot()
    except ElementTree.ParseError as error:
        line, column = error.position
        message = str(error).split(":")[0]
        raise DataError(f"{path}, line {line}: malformed XML: {message} (column {column + 1})") from None
    except OSError as error:
        raise DataError(f"{path}: can't read the XML file ({error.strerror})") from None


def _text(element: ElementTree.Element, key: str, where: str) -> str:
    found = element.find(key)
    if found is None or not (found.text or "").strip():
        raise DataError(f"{where}: expected <{key}> with text")
    return found.text.strip()


def _number(element: ElementTree.Element, key: str, where: str) -> float:
    text = _text(element, key, where)
    try:
        return float(text)
    except ValueError:
        raise DataError(f"{where}: <{key}>: expected a number, received {text!r}") from None


def _whole(element: ElementTree.Element, key: str, where: str, default: int | None = None) -> int:
    found = element.find(key)
    if found is None and default is not None:
        return default
    value = _number(element, key, where)
    if not value.is_integer():
        raise DataError(f"{where}: <{key}>: expected a whole number, received {found.text.strip()!r}")
    return int(value)
