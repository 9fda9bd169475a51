"""`builder: labelme`: a folder of labelme JSON files, one per image.

    source: {builder: labelme, path: photos/}

labelme (github.com/wkentaro/labelme) saves one JSON per image: `{"shapes": [{"label",
"points", "shape_type", "group_id", "flags", "description"}, ...], "imagePath", "imageData",
"imageHeight", "imageWidth", "flags"}`. Every `.json` file below `path` (sorted by its path below
it; hidden files and folders left out) is one record:

- `image`: the file `imagePath` names, relative to the JSON's folder (as labelme writes it); when
  that file is missing, the image embedded in the JSON's `imageData` (base64), and the build
  says how many images were read so; with neither, an error naming the JSON.
- `filename` (`imagePath` as written, with `/`), `image_id` (the JSON's path below `path`,
  without `.json`), `height` and `width` (`imageHeight`, `imageWidth`, checked against the image's
  own size: annotations.py's `measured`, the source's `size_mismatch:`), and `image_flag_NAME`
  (1 or 0) for each image-level flag the folder's files name.
- one object per shape that has an area, in the file's order: `bbox` ([xmin, ymin, xmax, ymax]
  in pixels: the extent of its points, so a rectangle's two corners, a polygon's vertices as
  labelme2coco boxes them, a circle's centre plus and minus its radius, a `mask` shape's two
  corners), `label`, `shape_type`, `group_id` (-1 where null), `description` ("" where absent),
  `points` (the shape's points as labelme wrote them, JSON text `[[x, y], ...]` in pixels) and
  `flag_NAME` (1 or 0; 0 where a shape lacks it) for each shape flag the folder's files name.
- shapes without an area (`line`, `linestrip`, `point`, `points`) are no objects: each is left
  out and counted, and the build says how many of each type (never dropped without a word).

The class names are the labels of the objects found, sorted, or `names_file:` (one a line).
"""
from __future__ import annotations

import base64
import binascii
import json
import math
import os
from dataclasses import dataclass
from typing import Any

from ..errors import DataError
from ..features.class_label import class_order
from ..features.notices import Notices
from .annotations import AnnotationBuilder, Sized, measured, names_from_file, problem

Item = tuple[str, str]  # (the JSON file's path: its place in messages too, its path below the folder without .json)


@dataclass(frozen=True)
class Context:
    """What reading a JSON file needs besides it (it travels to the encoding workers)."""

    image_flags: list[str]  # the image flags and the shape flags the folder's files name, sorted: every
    shape_flags: list[str]  # record offers each
    size_rule: str = "error"  # `size_mismatch:`
    measures: bool = True  # whether each image's file is measured against imageHeight and imageWidth

AREA_SHAPES = ("rectangle", "polygon", "circle", "mask")
NO_AREA_SHAPES = ("line", "linestrip", "point", "points")
LEFT_OUT_NOTICE = "source: {count} labelme `%s` shape{s} left out: no area, so no object with a box"
IMAGE_DATA_NOTICE = ("source: {count} image{s} read from the labelme JSON's `imageData`: the file its `imagePath` "
                     "names is missing")


class LabelmeBuilder(AnnotationBuilder):
    """Images and their objects from labelme JSON files."""

    OPTIONS = {key: AnnotationBuilder.OPTIONS[key] for key in ("names_file", "size_mismatch")}
    FIELDS = ("image", "filename", "image_id", "height", "width", "bbox", "label", "shape_type", "group_id",
              "description", "points")
    SOURCE_KEYS = frozenset({"names_file"})
    READS_FOLDER = True

    def __init__(self, spec: Any, path: str | None = None, options: dict[str, Any] | None = None):
        super().__init__(spec, path, options)
        self._index: tuple[list[Item], list[dict[str, str]], list[str], tuple[list[str], list[str]]] | None = None

    def _indexed(self) -> tuple[list[Item], list[dict[str, str]], list[str], tuple[list[str], list[str]]]:
        """Every JSON file, read once here for the labels and flags the folder names."""
        if self._index is None:
            folder = self.path or ""
            found = json_files(folder)
            if not found:
                raise DataError(f"{folder}: no labelme .json files found")
            items: list[Item] = []
            skipped: list[dict[str, str]] = []
            labels: set[str] = set()
            image_flags: set[str] = set()
            shape_flags: set[str] = set()
            for relative in found:
                path = os.path.join(folder, relative)
                try:
                    document = load(path)
                    shapes = [shape for _, shape in area_shapes(path, document)]
                except DataError as error:
                    problem(self.keep_going, skipped, path, str(error))
                    continue
                items.append((path, os.path.splitext(relative)[0].replace(os.sep, "/")))
                labels.update(shape["label"] for shape in shapes)
                image_flags.update(_flags(document, path))
                for shape in shapes:
                    shape_flags.update(_flags(shape, path))
            self._index = items, skipped, class_order(labels), (sorted(image_flags), sorted(shape_flags))
        return self._index

    def listed(self) -> tuple[list[Item], list[dict[str, str]]]:
        items, skipped, _, _ = self._indexed()
        return items, skipped

    def names(self) -> list[str]:
        names_file = self.setting("names_file")
        return names_from_file(names_file) if names_file is not None else self._indexed()[2]

    def context(self) -> Context:
        image_flags, shape_flags = self._indexed()[3]
        return Context(image_flags, shape_flags, self.size_rule, self.measures_images())

    def fields(self) -> list[str]:
        image_flags, shape_flags = self._indexed()[3]
        return list(self.FIELDS) + [f"flag_{name}" for name in shape_flags] + \
            [f"image_flag_{name}" for name in image_flags]

    @staticmethod
    def READ(item: Item, context: Context, notices: Notices) -> tuple[Any, dict[str, Any]]:
        return record(item, context, notices)


def json_files(folder: str) -> list[str]:
    """The `.json` files below `folder`, by their path below it (sorted; hidden ones left out)."""
    found = []
    for root, folders, files in os.walk(folder):
        folders[:] = sorted(name for name in folders if not name.startswith("."))
        for name in sorted(files):
            if name.lower().endswith(".json") and not name.startswith("."):
                found.append(os.path.relpath(os.path.join(root, name), folder))
    return sorted(found, key=lambda relative: relative.replace(os.sep, "/"))


def load(path: str) -> dict[str, Any]:
    """A labelme JSON's object, or a DataError naming the file (and the line of malformed JSON)."""
    try:
        with open(path, encoding="utf-8") as file:
            document = json.load(file)
    except OSError as error:
        raise DataError(f"{path}: can't read the labelme JSON ({error.strerror})") from None
    except UnicodeDecodeError as error:
        raise DataError(f"{path}: not valid UTF-8 text ({error.reason} at byte {error.start})") from None
    except json.JSONDecodeError as error:
        raise DataError(f"{path}, line {error.lineno}: malformed JSON: {error.msg} (column {error.colno})") from None
    if not isinstance(document, dict) or not isinstance(document.get("shapes"), list) or "imagePath" not in document:
        keys = ", ".join(document) if isinstance(document, dict) else f"a JSON {type(document).__name__}"
        raise DataError(f"{path}: expected a labelme JSON (an object with `shapes` and `imagePath`); it has "
                        f"{keys or 'nothing'}")
    return document


def is_labelme(path: str) -> bool:
    """Whether a file is a labelme JSON (one object with `shapes` and `imagePath`). Its first KiBs
    are looked at first, so a large JSON of another kind (a COCO JSON) isn't read whole here."""
    try:
        with open(path, "rb") as file:
            start = file.read(_PEEK)
    except OSError:
        return False
    if not start.lstrip().startswith(b"{") or not any(key in start for key in _KEYS):
        return False
    try:
        load(path)
    except DataError:
        return False
    return True


_PEEK = 8192
_KEYS = (b'"shapes"', b'"imagePath"', b'"imageData"')  # one of them comes early in any key order


def area_shapes(path: str, document: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """The shapes that are objects, with their place in `shapes`: each checked (a label, a known
    type, its number of points); shapes without an area are left out here (counted by `record`)."""
    found = []
    for number, shape in enumerate(document["shapes"]):
        where = f"{path}: shape {number}"
        if not isinstance(shape, dict) or not isinstance(shape.get("label"), str) or not shape["label"].strip():
            raise DataError(f"{where}: expected an object with a `label` (text), received {json.dumps(shape)[:80]}")
        kind = shape_type(shape)
        where = f"{where} ({shape['label']}, {kind})"
        if kind in NO_AREA_SHAPES:
            continue
        if kind not in AREA_SHAPES:
            raise DataError(f"{where}: unknown shape_type {kind!r}; expected one of "
                            f"{', '.join(AREA_SHAPES + NO_AREA_SHAPES)}")
        points = shape.get("points")
        if not (isinstance(points, list) and all(isinstance(point, list) and len(point) == 2 and all(
                isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
                for value in point) for point in points)):
            raise DataError(f"{where}: `points`: expected a list of [x, y] numbers, received "
                            f"{json.dumps(points)[:80]}")
        wanted = 3 if kind == "polygon" else 2
        if (len(points) < wanted) if kind == "polygon" else (len(points) != wanted):
            expected = "at least 3 points" if kind == "polygon" else "2 points"
            raise DataError(f"{where}: expected {expected}, received {len(points)}")
        found.append((number, shape))
    return found


def shape_type(shape: dict[str, Any]) -> str:
    """A shape's type: `shape_type`, or polygon where it is absent or null (as labelme reads files
    of versions that didn't write it)."""
    kind = shape.get("shape_type")
    return "polygon" if kind is None else str(kind)


def box(shape: dict[str, Any]) -> list[float]:
    """[xmin, ymin, xmax, ymax]: the extent of the shape's points (a circle's: its centre, plus
    and minus the distance to its second point)."""
    points = shape["points"]
    if shape_type(shape) == "circle":
        (x, y), (edge_x, edge_y) = points
        radius = math.hypot(edge_x - x, edge_y - y)
        return [x - radius, y - radius, x + radius, y + radius]
    xs = [float(point[0]) for point in points]
    ys = [float(point[1]) for point in points]
    return [min(xs), min(ys), max(xs), max(ys)]


def _flags(element: dict[str, Any], where: str) -> list[str]:
    """The names of an image's or a shape's `flags` (true or false each)."""
    flags = element.get("flags")
    if flags is None:
        return []
    if not isinstance(flags, dict) or not all(isinstance(value, bool) for value in flags.values()):
        raise DataError(f"{where}: `flags`: expected an object of true or false values, received "
                        f"{json.dumps(flags)[:80]}")
    return list(flags)


def record(item: Item, context: Context, notices: Notices) -> tuple[str, dict[str, Any]]:
    """One JSON file's record (see the module's docstring)."""
    path, image_id = item
    image_flags, shape_flags = context.image_flags, context.shape_flags
    document = load(path)
    shapes = area_shapes(path, document)
    for shape in document["shapes"]:
        if shape_type(shape) in NO_AREA_SHAPES:
            notices.note(LEFT_OUT_NOTICE % shape_type(shape))
    annotated = tuple(_whole(document, key, path) for key in ("imageHeight", "imageWidth")) \
        if document.get("imageHeight") is not None or document.get("imageWidth") is not None else None
    filename = str(document["imagePath"]).replace("\\", "/")
    image = _image(path, filename, document.get("imageData"), notices)
    sized = measured(path, image, annotated, context.size_rule, notices) if context.measures else \
        Sized(*(annotated or (0, 0)))
    boxes = [box(shape) for _, shape in shapes]
    points = [shape["points"] for _, shape in shapes]
    if sized.scale is not None:  # (`size_mismatch: scale`: drawn on the image before it was shrunk)
        scale_y, scale_x = sized.scale
        boxes = [[xmin * scale_x, ymin * scale_y, xmax * scale_x, ymax * scale_y] for xmin, ymin, xmax, ymax in boxes]
        points = [[[x * scale_x, y * scale_y] for x, y in outline] for outline in points]
    found: dict[str, Any] = {
        "image": image, "filename": filename, "image_id": image_id,
        "height": sized.height, "width": sized.width,
        "bbox": boxes, "label": [shape["label"].strip() for _, shape in shapes],
        "shape_type": [shape_type(shape) for _, shape in shapes],
        "group_id": [_group(shape, f"{path}: shape {number}") for number, shape in shapes],
        "description": [str(shape.get("description") or "") for _, shape in shapes],
        "points": [json.dumps(outline, separators=(",", ":")) for outline in points],
    }
    own = document.get("flags") or {}
    found.update({f"image_flag_{name}": int(bool(own.get(name, False))) for name in image_flags})
    for name in shape_flags:
        found[f"flag_{name}"] = [int(bool((shape.get("flags") or {}).get(name, False))) for _, shape in shapes]
    return image_id, found


def _image(path: str, filename: str, data: Any, notices: Notices) -> str | bytes:
    """The image's file (relative to the JSON's folder), or the bytes embedded in `imageData`."""
    image = os.path.normpath(os.path.join(os.path.dirname(path), filename)) if filename else ""
    if image and os.path.isfile(image):
        return image
    if isinstance(data, str) and data:
        try:
            embedded = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise DataError(f"{path}: `imageData`: not base64 text; and the image file {image} is missing") from None
        notices.note(IMAGE_DATA_NOTICE)
        return embedded
    raise DataError(f"{path}: image {image or '(no imagePath)'} not found, and the JSON holds no `imageData`")


def _whole(document: dict[str, Any], key: str, path: str) -> int:
    value = document.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise DataError(f"{path}: `{key}`: expected the image's size in pixels (a whole number), received "
                        f"{json.dumps(value)}")
    return value


def _group(shape: dict[str, Any], where: str) -> int:
    group = shape.get("group_id")
    if group is None:
        return -1
    if not isinstance(group, int) or isinstance(group, bool):
        raise DataError(f"{where}: `group_id`: expected a whole number or null, received {json.dumps(group)}")
    return group
