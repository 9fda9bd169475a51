"""`builder: voc`: a folder of Pascal VOC XML files, one per image.

    source: {builder: voc, path: VOC/Annotations}            # images in VOC/JPEGImages or beside
    source: {builder: voc, path: VOC/Annotations, images: VOC/photos}
    splits: {train: {path: VOC/Annotations, options: {image_set: VOC/ImageSets/Main/train.txt}}, ...}

One record per XML file (sorted by name; a file without `<object>` is a record with no boxes),
with `image` (`<filename>` in `images:`, default the XML's folder if it holds images, else its
sibling `JPEGImages`), `filename`, `image_id` (the XML file's stem), `height` and `width`
(`<size>`: checked against the image file's, `size_mismatch:`; read from the file where the XML
has none, or 0) and, one per `<object>`: `bbox` ([xmin, ymin, xmax, ymax] in pixels), `label`
(`<name>`), `difficult`, `truncated`, `occluded` (0 where absent or empty, as labelme2voc writes
them) and `pose` ("Unspecified" where absent), and `attributes.NAME` for CVAT's and Datumaro's
`<attributes><attribute><name>` (text; null where an object lacks it). The classes are the names
found, sorted, or those of `names_file`.

VOC writes pixel indices from 1 (the devkit's convention: the top-left pixel is (1, 1), `xmax` the
last pixel inside the box). `coordinates: as_written` (the default, what the Object Detection
API's create_pascal_tf_record.py does) reads them as they are; `coordinates: one_based` takes 1 from
`xmin` and `ymin`, giving the corners a COCO or YOLO export of the same boxes has.

A split's `image_set:` option (VOC's `ImageSets/Main/train.txt`: an image id, the XML's stem, first
on each line) reads only the XML files it lists, in its order; an id without its XML but with its
image (Datumaro's export of an image without annotations) is a record with no boxes, counted; an
id with neither is an error.
"""
from __future__ import annotations

import os
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from typing import Any

from ..errors import DataError
from ..features.notices import Notices
from ..features.class_label import class_order
from .annotations import AnnotationBuilder, Sized, image_files, image_path, measured, names_from_file

Item = tuple[str, str, str]  # (its place in messages, the XML file's path or "", the image id)

_FLAGS = ("difficult", "truncated", "occluded")
_CORNERS = ("xmin", "ymin", "xmax", "ymax")
ATTRIBUTE = "attributes."  # `attributes.color`: an object's <attribute> named color
COORDINATES = {"as_written": "the XML's pixel indices as they are (the Object Detection API's reading)",
               "one_based": "xmin and ymin less 1: the devkit's 1-based pixels as 0-based corners (COCO's, YOLO's)"}
NO_XML_NOTICE = "source: {count} image{s} listed without an XML file, kept as records with no boxes"


@dataclass(frozen=True)
class Context:
    """What reading an XML file needs besides it (it travels to the encoding workers)."""

    folder: str  # the images
    size_rule: str  # `size_mismatch:`
    measures: bool  # whether each image's file is measured
    one_based: bool  # `coordinates: one_based`


class VocBuilder(AnnotationBuilder):
    """Images and their objects from Pascal VOC XML files."""

    OPTIONS = {**AnnotationBuilder.OPTIONS,
               "image_set": "a file of image ids, one a line (ImageSets/Main/train.txt): this split's XML files",
               "coordinates": "; ".join(f"{name}: {what}" for name, what in COORDINATES.items())}
    FIELDS = ("image", "filename", "image_id", "height", "width", "bbox", "label", "difficult", "truncated",
              "occluded", "pose")
    SOURCE_KEYS = frozenset({"images", "names_file"})
    READS_FOLDER = True

    @classmethod
    def option_problem(cls, key: str, value: Any) -> str | None:
        if key == "coordinates":
            return None if value in COORDINATES else f"expected one of {', '.join(COORDINATES)}, received {value!r}"
        return super().option_problem(key, value)

    def __init__(self, spec: Any, path: str | None = None, options: dict[str, Any] | None = None):
        super().__init__(spec, path, options)
        self._items: list[Item] | None = None
        self._names: list[str] | None = None
        self._scan: list[str] = []
        self._attributes: list[str] | None = None

    def listed(self) -> tuple[list[Item], list[dict[str, str]]]:
        if self._items is None:
            folder = self.path or ""
            files = sorted(name for name in os.listdir(folder)
                           if name.lower().endswith(".xml") and not name.startswith("."))
            image_set = self.setting("image_set")
            if not files and image_set is None:
                raise DataError(f"{folder}: no Pascal VOC .xml files found")
            if image_set is None:
                self._items = [(os.path.join(folder, name), os.path.join(folder, name), name[:-4]) for name in files]
            else:
                self._items = _listed_ids(image_set, folder, set(files), self.context().folder)
        return self._items, []

    def context(self) -> Context:
        return Context(self._image_folder(), self.size_rule, self.measures_images(),
                       self.options.get("coordinates") == "one_based")

    def _image_folder(self) -> str:
        """The image folder: `images:`, or the XML's folder if it holds images, or its `JPEGImages` sibling."""
        given = self.setting("images")
        if given is not None:
            return given
        folder = self.path or ""
        beside = os.path.join(os.path.dirname(os.path.normpath(folder)), "JPEGImages")
        return beside if not image_files(folder) and os.path.isdir(beside) else folder

    def fields(self) -> list[str]:
        reads_attributes = self.spec is None or any(
            name.startswith(ATTRIBUTE) for feature in self.spec.features.values() for name in feature.source_names)
        return list(self.FIELDS) + (self._scanned()[1] if reads_attributes else [])

    def names(self) -> list[str]:
        if self._names is None:
            names_file = self.setting("names_file")
            self._names = names_from_file(names_file) if names_file is not None else self._scanned()[0]
        return self._names

    def _scanned(self) -> tuple[list[str], list[str]]:
        """Every object's name, sorted, and the attributes' fields, from every XML file (a file that
        can't be read is said, or skipped, when it is read)."""
        if self._attributes is None:
            found: set[str] = set()
            attributes: set[str] = set()
            for _, path, _ in self.listed()[0]:
                if not path:
                    continue
                try:
                    root = _root(path)
                except DataError:
                    if self.keep_going:
                        continue
                    raise
                found.update((element.text or "").strip() for element in root.iterfind("object/name"))
                attributes.update((element.text or "").strip()
                                  for element in root.iterfind("object/attributes/attribute/name"))
            self._scan = class_order(found)
            self._attributes = sorted(ATTRIBUTE + name for name in attributes if name)
        return self._scan, self._attributes

    def item_key(self, item: Item) -> Any:
        return item[2]  # its XML file's stem

    @staticmethod
    def READ(item: Item, context: Context, notices: Notices) -> tuple[Any, dict[str, Any]]:
        return record(item, context, notices)


def record(item: Item, context: Context, notices: Notices) -> tuple[str, dict[str, Any]]:
    """One XML file's record (an image listed without one: a record with no boxes)."""
    place, path, stem = item
    if not path:
        notices.note(NO_XML_NOTICE)
        sized = measured(place, place, None, context.size_rule, notices) if context.measures else Sized(0, 0)
        return stem, {"image": place, "filename": os.path.basename(place), "image_id": stem, "height": sized.height,
                      "width": sized.width, "bbox": [], "label": [], "pose": [], **{flag: [] for flag in _FLAGS}}
    root = _root(path)
    filename = _text(root, "filename", path)
    image = image_path(context.folder, filename)
    annotated = _size(root, path)
    sized = measured(path, image, annotated, context.size_rule, notices) if context.measures else \
        Sized(*(annotated or (0, 0)))
    boxes, labels, poses = [], [], []
    flags: dict[str, list[int]] = {flag: [] for flag in _FLAGS}
    attributes: list[dict[str, str]] = []
    for number, element in enumerate(root.iterfind("object")):
        where = f"{path}: object {number}"
        labels.append(_text(element, "name", where))
        box = element.find("bndbox")
        if box is None:
            raise DataError(f"{where} ({labels[-1]}): expected <bndbox> with {', '.join(_CORNERS)}")
        xmin, ymin, xmax, ymax = (_number(box, corner, f"{where} ({labels[-1]}): <bndbox>") for corner in _CORNERS)
        if context.one_based:
            xmin, ymin = xmin - 1, ymin - 1
        if sized.scale is not None:
            (scale_y, scale_x) = sized.scale
            xmin, ymin, xmax, ymax = xmin * scale_x, ymin * scale_y, xmax * scale_x, ymax * scale_y
        boxes.append([xmin, ymin, xmax, ymax])
        for flag in _FLAGS:
            flags[flag].append(_whole(element, flag, where, default=0))
        pose = element.find("pose")
        poses.append((pose.text or "").strip() if pose is not None and (pose.text or "").strip() else "Unspecified")
        attributes.append({(attribute.findtext("name") or "").strip(): (attribute.findtext("value") or "").strip()
                           for attribute in element.iterfind("attributes/attribute")})
    found = {name for named in attributes for name in named if name}
    return stem, {"image": image, "filename": filename, "image_id": stem, "height": sized.height,
                  "width": sized.width, "bbox": boxes, "label": labels, "pose": poses, **flags,
                  **{ATTRIBUTE + name: [named.get(name) for named in attributes] for name in found}}


def _size(root: ElementTree.Element, path: str) -> tuple[int, int] | None:
    """The (height, width) <size> gives; None where it gives none (or 0, as some tools write)."""
    size = root.find("size")
    if size is None or not all((size.findtext(key) or "").strip() for key in ("width", "height")):
        return None
    width, height = (_whole(size, key, f"{path}: <size>") for key in ("width", "height"))
    return (height, width) if width > 0 and height > 0 else None


def _listed_ids(image_set: str, folder: str, present: set[str], images: str) -> list[Item]:
    """The images an image set lists (the first word of each line), in its order: each its XML
    file, or its image file where it has no XML."""
    try:
        with open(image_set, encoding="utf-8") as file:
            lines = file.read().splitlines()
    except OSError as error:
        raise DataError(f"{image_set}: can't read the image set ({error.strerror})") from None
    found = image_files(images)
    items: list[Item] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, 1):
        words = line.split()
        if not words:
            continue
        stem = words[0]
        if stem in seen:
            raise DataError(f"{image_set}, line {number}: image {stem!r} is listed twice")
        seen.add(stem)
        if stem + ".xml" in present:
            path = os.path.join(folder, stem + ".xml")
            items.append((path, path, stem))
        elif stem in found:
            items.append((os.path.join(images, found[stem]), "", stem))
        else:
            raise DataError(f"{image_set}, line {number}: image {stem!r} has neither {stem}.xml in {folder} nor an "
                            f"image file in {images}")
    return items


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
    if (found is None or not (found.text or "").strip()) and default is not None:
        return default  # absent, or empty (`<difficult/>`, as labelme2voc writes it)
    value = _number(element, key, where)
    if not value.is_integer():
        raise DataError(f"{where}: <{key}>: expected a whole number, received {found.text.strip()!r}")
    return int(value)
