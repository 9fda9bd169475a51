"""`builder: coco`: a COCO instances JSON (`images`, `annotations`, `categories`) and its image folder.

    source: {builder: coco, path: annotations/instances_train.json, images: images/}

One record per entry of `images` (an image without annotations is a record with no boxes), with
`image` (the file's path in `images:`, default the JSON's folder), `filename` (`file_name`),
`image_id` (`id`), `height`, `width` and, one per annotation in the file's order: `bbox`
([x, y, width, height] in pixels, as COCO has it), `label` (the category's name), `category_id`
(the original id), `iscrowd`, `area`, `annotation_id`, `segmentation` (as in the JSON),
`masks` (instance masks: one PNG of 0 and 1 an object, made from its polygons or RLE with
pycocotools, as the Object Detection API stores `image/object/mask`), and where the JSON has
them `keypoints` ([x, y, v] triples, null for an annotation without), `num_keypoints` and
`attributes.NAME` (a per-object attribute, as CVAT and Datumaro export them: null where an
object lacks it). The classes are the categories sorted by id: index 0 is the smallest id; the
keypoints' names are their categories' `keypoints`.

The JSON is read without building it whole in Python (json_stream.py): its top-level values are
decoded one at a time, and each element of `images` and `annotations` is packed into arrays as soon
as it is read (the dicts of a 450 MB file would take about 10 times its size). `segmentation` is kept, as
JSON text, only when the spec reads it or `masks` (keypoints and attributes likewise), and masks are
made only for a spec that reads them.
"""
from __future__ import annotations

import json
import os
from array import array
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..errors import DataError
from ..features.notices import Notices
from . import json_stream
from .annotations import AnnotationBuilder, Sized, image_path, measured, problem

Item = tuple  # (place, image id, file name, height, width, objects or a problem's text)

# what every record offers; `keypoints`, `num_keypoints` and `attributes.NAME` where the JSON has them
FIELDS = ("image", "filename", "image_id", "height", "width", "bbox", "label", "category_id", "iscrowd", "area",
          "annotation_id", "segmentation", "masks")
# kept per annotation as JSON text, only when the spec reads them
KEPT = ("segmentation", "keypoints", "num_keypoints", "attributes")
ATTRIBUTE = "attributes."  # `attributes.occluded`: one of an annotation's `attributes`


class CocoBuilder(AnnotationBuilder):
    """Images and their objects from a COCO instances JSON."""

    FIELDS = FIELDS
    SOURCE_KEYS = frozenset({"images"})

    def __init__(self, spec: Any, path: str | None = None, options: dict[str, Any] | None = None):
        super().__init__(spec, path, options)
        self._index: tuple[list[Item], list[dict[str, str]], dict[int, str]] | None = None
        self._offered: tuple[list[str], dict[int, list[str]]] | None = None  # fields beyond FIELDS, point names

    def listed(self) -> tuple[list[Item], list[dict[str, str]]]:
        items, skipped, _ = self._indexed()
        return items, skipped

    def names(self) -> list[str]:
        return list(self._indexed()[2].values())

    def fields(self) -> list[str]:
        self._indexed()
        return list(self.FIELDS) + self._offered[0]

    def class_names(self, field: str) -> list[str] | None:
        if field == "label":
            return self.names()
        if field != "keypoints":
            return None
        self._indexed()
        named = {tuple(names): category for category, names in self._offered[1].items()}
        if len(named) > 1:
            (first, one), (second, other) = list(named.items())[:2]
            raise DataError(f"{self.path}: categories {one} and {other} name different keypoints ({len(first)} and "
                            f"{len(second)} points); a keypoints feature holds one list of points: give its `names:`")
        return list(next(iter(named))) if named else None

    def context(self) -> "Context":
        folder = self.setting("images") or os.path.dirname(self.path or "")
        return Context(folder, self._indexed()[2], self._reads("masks"), self.size_rule, self.measures_images())

    def _reads(self, field: str) -> bool:
        """Whether a feature of the spec reads `field` (every field, without a spec)."""
        return self.spec is None or any(field in feature.source_names for feature in self.spec.features.values())

    def _kept(self) -> tuple[str, ...]:
        """The fields kept per annotation as JSON text: those the spec reads (every one, without a spec)."""
        kept = [field for field in KEPT if self._reads(field)]
        if self._reads("masks") and "segmentation" not in kept:
            kept.append("segmentation")
        if self.spec is not None and "attributes" not in kept and any(
                name.startswith(ATTRIBUTE) for feature in self.spec.features.values() for name in feature.source_names):
            kept.append("attributes")
        return tuple(kept)

    def _indexed(self) -> tuple[list[Item], list[dict[str, str]], dict[int, str]]:
        if self._index is None:
            if self._reads("masks") and self.spec is not None:
                _mask_api(self.path or "")  # said before the JSON is read
            images, annotations = Images(self.path or ""), Annotations(self.path or "", self._kept())
            rest = parse(self.path or "", {"images": images.add, "annotations": annotations.add})
            self._index = arrange(self.path or "", images, annotations, rest, self.keep_going)
            offered = (["keypoints", "num_keypoints"] if annotations.keypointed or images.point_names else []) + \
                sorted(ATTRIBUTE + name for name in annotations.attribute_names)
            self._offered = offered, images.point_names
        return self._index

    def item_key(self, item: Item) -> Any:
        return item[1]  # its image id

    @staticmethod
    def READ(item: Item, context: "Context", notices: Notices) -> tuple[Any, dict[str, Any]]:
        return record(item, context, notices)

    def image_file(self, item: Item, context: "Context") -> str:
        return image_path(context.folder, item[2])


@dataclass(frozen=True)
class Context:
    """What reading an image's record needs besides its item (it travels to the encoding workers)."""

    folder: str  # the images
    names: dict[int, str]  # the category names by id
    masks: bool  # whether instance masks are made
    size_rule: str  # `size_mismatch:`
    measures: bool  # whether each image's file is measured


def record(item: Item, context: Context, notices: Notices) -> tuple[int, dict[str, Any]]:
    """One image's record (raises the problem its annotations had, found while indexing)."""
    place, image_id, file_name, height, width, objects = item
    if isinstance(objects, str):
        raise DataError(objects)
    image = image_path(context.folder, file_name)
    annotated = (height, width) if height > 0 and width > 0 else None
    sized = measured(place, image, annotated, context.size_rule, notices) if context.measures else Sized(height, width)
    height, width = sized.height, sized.width
    ids, categories, boxes, areas, crowds, kept = objects
    extras = [json.loads(text) for text in kept] if kept is not None else []
    if sized.scale is not None:
        boxes, areas, extras = _scaled(place, sized.scale, boxes, areas, extras)
    shapes = [extra.get("segmentation") for extra in extras] if kept is not None else None
    names = context.names
    record = {
        "image": image, "filename": file_name, "image_id": image_id,
        "height": height, "width": width, "bbox": boxes.tolist(),
        "label": [names[category] for category in categories.tolist()],
        "category_id": categories.tolist(), "iscrowd": crowds.tolist(), "area": areas.tolist(),
        "annotation_id": ids.tolist(), "segmentation": shapes,
        "masks": instance_masks(place, shapes or [], ids.tolist(), height, width) if context.masks else None,
        "keypoints": [extra.get("keypoints") for extra in extras],
        "num_keypoints": [extra.get("num_keypoints", 0) for extra in extras],
    }
    for name in {name for extra in extras for name in extra.get("attributes") or {}}:
        record[ATTRIBUTE + name] = [(extra.get("attributes") or {}).get(name) for extra in extras]
    return image_id, record


def _scaled(place: str, scale: tuple[float, float], boxes: np.ndarray, areas: np.ndarray, extras: list[dict]
            ) -> tuple[np.ndarray, np.ndarray, list[dict]]:
    """An image's pixel coordinates scaled by (y, x) factors (`size_mismatch: scale`): boxes,
    areas, polygons and keypoints (an RLE mask, a grid of pixels, can't be: it is refused)."""
    scale_y, scale_x = scale
    boxes = boxes * np.array([scale_x, scale_y, scale_x, scale_y])
    areas = areas * (scale_x * scale_y)
    scaled = []
    for extra in extras:
        extra = dict(extra)
        shape = extra.get("segmentation")
        if isinstance(shape, dict):
            raise DataError(f"{place}: an RLE `segmentation` is a grid of the annotated size and can't be scaled to "
                            "the file's (`size_mismatch: scale`)")
        if isinstance(shape, list):
            extra["segmentation"] = [[value * (scale_x if index % 2 == 0 else scale_y)
                                      for index, value in enumerate(polygon)] for polygon in shape]
        points = extra.get("keypoints")
        if isinstance(points, list):
            extra["keypoints"] = [value * scale_x if index % 3 == 0 else value * scale_y if index % 3 == 1 else value
                                  for index, value in enumerate(points)]
        scaled.append(extra)
    return boxes, areas, scaled


def instance_masks(place: str, shapes: list[Any], ids: list[int], height: int, width: int) -> list[bytes]:
    """Each object's mask as a PNG of 0 and 1 at the image's size, from its polygons or RLE (what
    the Object Detection API's `create_coco_tf_record.py` stores as `image/object/mask`)."""
    import io

    from PIL import Image

    api = _mask_api(place)
    out = []
    for shape, annotation in zip(shapes, ids):
        if shape is None or shape == [] or shape == {}:
            raise DataError(f"{place}: annotation {annotation}: `segmentation` is empty, so it has no mask; expected "
                            "polygons or RLE (an export of boxes alone has no masks: leave `masks` out of the spec)")
        try:
            if isinstance(shape, list):  # polygons: [[x1, y1, x2, y2, ...], ...]
                encoded = api.merge(api.frPyObjects(shape, height, width))
            elif isinstance(shape, dict) and isinstance(shape.get("counts"), list):  # uncompressed RLE
                encoded = api.frPyObjects(shape, height, width)
            else:
                encoded = shape
            pixels = api.decode(encoded)
        except Exception as error:  # pycocotools' own message on a malformed polygon or RLE
            raise DataError(f"{place}: annotation {annotation}: `segmentation`: can't make a mask of it "
                            f"({type(error).__name__}: {error})") from None
        if pixels.shape[:2] != (height, width):
            raise DataError(f"{place}: annotation {annotation}: `segmentation` is {pixels.shape[1]}x{pixels.shape[0]}; "
                            f"the image is {width}x{height}")
        buffer = io.BytesIO()
        Image.fromarray(pixels.reshape(height, width).astype(np.uint8)).save(buffer, format="PNG")
        out.append(buffer.getvalue())
    return out


def _mask_api(where: str) -> Any:
    try:
        from pycocotools import mask
    except ImportError:
        raise DataError(f"{where}: instance masks (`masks`) are made with pycocotools: pip install "
                        "pycocotools") from None
    return mask


def arrange(path: str, images: "Images", annotations: "Annotations", rest: dict[str, Any], keep_going: bool
            ) -> tuple[list[Item], list[dict[str, str]], dict[int, str]]:
    """`index`'s result from a parse's packed `images` and `annotations` and its other top-level
    values (`rest`): for a reader that parsed the JSON itself (infer, which recognises it in the
    same pass)."""
    name = os.path.basename(path)
    for key in ("images", "categories"):  # (`annotations` may be absent: a test set's image info)
        if key not in rest:
            raise DataError(f"{path}: expected a COCO instances JSON with `{key}`; its keys: {', '.join(rest) or 'none'}")
    categories = _categories(path, rest.get("categories", []), images.point_names)
    skipped: list[dict[str, str]] = []
    first: dict[int, int] = {}
    twice: set[int] = set()
    for position, image_id in enumerate(images.ids):
        if image_id in first:
            twice.add(image_id)
            problem(keep_going, skipped, f"{name}, image {image_id}",
                    f"{path}: image {image_id} is listed twice (images {first[image_id]} and {position} of "
                    "`images`); expected each id once")
        else:
            first[image_id] = position
    ids = np.frombuffer(annotations.image_ids, dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    ids_sorted = ids[order]
    known = np.isin(ids_sorted, np.frombuffer(images.ids, dtype=np.int64))
    for at in np.flatnonzero(~known).tolist():
        annotation = int(order[at])
        problem(keep_going, skipped, f"{name}, annotation {annotations.ids[annotation]}",
                f"{path}: annotation {annotations.ids[annotation]}: image_id {int(ids_sorted[at])} is not among "
                "the `images`")
    category_ids = np.frombuffer(annotations.category_ids, dtype=np.int64)
    boxes = np.frombuffer(annotations.boxes, dtype=np.float64).reshape(-1, 4)
    columns = (np.frombuffer(annotations.ids, dtype=np.int64), category_ids, boxes,
               np.frombuffer(annotations.areas, dtype=np.float64), np.frombuffer(annotations.crowds, dtype=np.int64))
    items: list[Item] = []
    for position, image_id in enumerate(images.ids):
        if image_id in twice:
            if position != first[image_id]:
                continue
            problem(True, skipped, f"{name}, image {image_id}",  # (raised above unless skipping)
                    f"{path}: image {image_id} is listed twice; both skipped, whose objects would be ambiguous")
            continue
        start, end = np.searchsorted(ids_sorted, [image_id, image_id + 1])
        rows = order[start:end]
        objects: Any = tuple(column[rows] for column in columns) + (
            [annotations.kept[row] for row in rows.tolist()] if annotations.fields else None,)
        unknown = [row for row in rows.tolist() if int(category_ids[row]) not in categories]
        if unknown:
            objects = (f"{path}: annotation {annotations.ids[unknown[0]]} (image {image_id}, "
                       f"{images.file_names[position]}): unknown category_id {int(category_ids[unknown[0]])}; "
                       f"the categories' ids: {', '.join(map(str, categories))}")
            if not keep_going:
                raise DataError(objects)
        items.append((f"{name}, image {image_id} ({images.file_names[position]})", image_id,
                      images.file_names[position], images.heights[position], images.widths[position], objects))
    return items, skipped, categories


class Images:
    """`images` packed as each is read: ids, sizes and file names."""

    def __init__(self, path: str):
        self.path = path
        self.ids, self.heights, self.widths = array("q"), array("q"), array("q")
        self.file_names: list[str] = []
        self.point_names: dict[int, list[str]] = {}  # the categories' `keypoints`, by id (filled by `arrange`)

    def add(self, position: int, image: Any) -> None:
        where = f"{self.path}: image {position} of `images`"
        if not isinstance(image, dict):
            raise DataError(f"{where}: expected an object, received {json.dumps(image)[:60]}")
        for key in ("id", "file_name"):
            if key not in image:
                raise DataError(f"{where}: expected `{key}`; it has {', '.join(image) or 'nothing'}")
        for key in ("id", "height", "width"):  # (a size left out, or 0, is read from the file)
            if key in image and (not isinstance(image[key], int) or isinstance(image[key], bool)):
                raise DataError(f"{where} (id {image['id']}): `{key}`: expected a whole number, received "
                                f"{json.dumps(image[key])}")
        self.ids.append(image["id"])
        self.heights.append(image.get("height", 0))
        self.widths.append(image.get("width", 0))
        self.file_names.append(str(image["file_name"]))


class Annotations:
    """`annotations` packed as each is read into arrays (a few dozen bytes an object)."""

    def __init__(self, path: str, fields: "tuple[str, ...] | bool" = ()):
        self.path = path
        self.fields = tuple(fields or ())  # of KEPT: kept as JSON text per annotation
        self.ids, self.image_ids, self.category_ids, self.crowds = array("q"), array("q"), array("q"), array("q")
        self.boxes, self.areas = array("d"), array("d")
        self.kept: list[str] = []
        self.keypointed = False  # whether an annotation has `keypoints`
        self.attribute_names: set[str] = set()

    def add(self, position: int, annotation: Any) -> None:
        # checked first in a few type tests, each part said only when something is wrong (`_checked`): a COCO file's
        # annotations are 30,000 to 900,000, and each build reads them all before its first image
        if type(annotation) is dict:
            box, image_id, category_id = annotation.get("bbox"), annotation.get("image_id"), annotation.get("category_id")
            area, crowd = annotation.get("area", _ABSENT), annotation.get("iscrowd", 0)
            if (type(box) is list and len(box) == 4 and type(box[0]) in _NUMBERS and type(box[1]) in _NUMBERS
                    and type(box[2]) in _NUMBERS and type(box[3]) in _NUMBERS and type(image_id) is int
                    and type(category_id) is int and (area is _ABSENT or type(area) in _NUMBERS)
                    and (crowd == 0 or crowd == 1) and type(crowd) is not float
                    and "keypoints" not in annotation and "attributes" not in annotation and not self.fields):
                self.ids.append(annotation.get("id", position))
                self.image_ids.append(image_id)
                self.category_ids.append(category_id)
                self.boxes.extend(box)
                self.areas.append(box[2] * box[3] if area is _ABSENT else area)
                self.crowds.append(int(crowd))
                return
        self._checked(position, annotation)

    def _checked(self, position: int, annotation: Any) -> None:
        """`add` of an annotation with more to it (keypoints, attributes, fields kept) or something
        wrong, each part checked in turn and what is wrong said."""
        where = f"{self.path}: annotation {position} of `annotations`"
        if not isinstance(annotation, dict):
            raise DataError(f"{where}: expected an object, received {json.dumps(annotation)[:60]}")
        if "id" in annotation:
            where = f"{self.path}: annotation {annotation['id']}"
        for key in ("image_id", "category_id", "bbox"):
            if key not in annotation:
                raise DataError(f"{where}: expected `{key}`; it has {', '.join(annotation) or 'nothing'}")
        box = annotation["bbox"]
        if not (isinstance(box, list) and len(box) == 4 and all(_number(value) for value in box)):
            raise DataError(f"{where}: `bbox`: expected [x, y, width, height], received {json.dumps(box)[:80]}")
        for key in ("image_id", "category_id"):
            if not isinstance(annotation[key], int) or isinstance(annotation[key], bool):
                raise DataError(f"{where}: `{key}`: expected a whole number, received {json.dumps(annotation[key])}")
        self.ids.append(annotation.get("id", position))
        self.image_ids.append(annotation["image_id"])
        self.category_ids.append(annotation["category_id"])
        self.boxes.extend(box)
        area, crowd = annotation.get("area", box[2] * box[3]), annotation.get("iscrowd", 0)
        if not _number(area):
            raise DataError(f"{where}: `area`: expected a number, received {json.dumps(area)[:60]}")
        if crowd not in (0, 1) or isinstance(crowd, float):
            raise DataError(f"{where}: `iscrowd`: expected 0 or 1, received {json.dumps(crowd)[:60]}")
        self.areas.append(area)
        self.crowds.append(int(crowd))
        points, attributes = annotation.get("keypoints"), annotation.get("attributes")
        if points is not None:
            self.keypointed = True
            if not (isinstance(points, list) and len(points) % 3 == 0 and all(_number(value) for value in points)):
                raise DataError(f"{where}: `keypoints`: expected [x1, y1, v1, x2, y2, v2, ...], received "
                                f"{json.dumps(points)[:80]}")
        if attributes is not None:
            if not isinstance(attributes, dict):
                raise DataError(f"{where}: `attributes`: expected an object of names and values, received "
                                f"{json.dumps(attributes)[:60]}")
            self.attribute_names.update(attributes)
        if self.fields:
            kept = {field: annotation[field] for field in self.fields if field in annotation}
            self.kept.append(json.dumps(kept, separators=(",", ":")))


_NUMBERS = (int, float)  # what JSON numbers decode to (a bool's type is bool)
_ABSENT = object()


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _categories(path: str, categories: Any, point_names: dict[int, list[str]] | None = None) -> dict[int, str]:
    """Category names by id, sorted by id: the class order; each category's `keypoints` (the
    names of its points) into `point_names`, where it has some."""
    if not isinstance(categories, list):
        raise DataError(f"{path}: `categories`: expected a list of {{id, name}} objects")
    names: dict[int, str] = {}
    for position, category in enumerate(categories):
        if not (isinstance(category, dict) and isinstance(category.get("id"), int) and "name" in category):
            raise DataError(f"{path}: category {position} of `categories`: expected an object with `id` (a whole "
                            f"number) and `name`, received {json.dumps(category)[:80]}")
        if category["id"] in names:
            raise DataError(f"{path}: category id {category['id']} is listed twice")
        names[category["id"]] = str(category["name"])
        points = category.get("keypoints")
        if points and point_names is not None:
            if not (isinstance(points, list) and all(isinstance(point, str) for point in points)):
                raise DataError(f"{path}: category {category['id']} ({category['name']}): `keypoints`: expected the "
                                f"points' names, received {json.dumps(points)[:80]}")
            point_names[category["id"]] = points
    ordered = dict(sorted(names.items()))
    seen: dict[str, int] = {}
    for category_id, name in ordered.items():
        if name in seen:
            raise DataError(f"{path}: categories {seen[name]} and {category_id} are both named {name!r}; "
                            "expected one name a class")
        seen[name] = category_id
    return ordered


def parse(path: str, arrays: dict[str, Callable[[int, Any], None]]) -> dict[str, Any]:
    """The COCO JSON at `path`, the lists of the top-level keys in `arrays` handed over element by
    element (json_stream.parse)."""
    return json_stream.parse(path, arrays, "COCO JSON")
