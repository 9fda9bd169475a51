"""`keypoints`: each object's named points (a person's nose, eyes, shoulders), stored as [y, x]
fractions of the image with a visibility each.

    points: {type: keypoints, source: keypoints, units: pixels}   # COCO's person keypoints

The source gives, per record, a list per object: COCO's `[x1, y1, v1, x2, y2, v2, ...]`
(`format: xyv`; v 0: not labelled, 1: labelled but not visible, 2: visible) or `[x1, y1, x2, y2,
...]` (`format: xy`: every point visible). An object given no list (null: an annotation without
keypoints) has none labelled. The points an object has, K, are `names:` (in order; a COCO source
gives its category's `keypoints`) or `num_keypoints:`.

Pixel coordinates are divided by the upright size of the record's image (`image:`, or the spec's
only image feature), and move with its `resize: pad` or `crop` as boxes do. A labelled point
outside the image is an error naming the object and the point; one outside what a crop keeps is
stored as not labelled, counted. A point not labelled is stored as [0, 0] with visibility 0,
whatever the source wrote there.

Stored with `layout: tfds` (the default) under KEY (float32, K [y, x] pairs an object) and
KEY_visibility (int64, K an object: not KEY/visibility, which TensorFlow Datasets would nest
inside KEY); with `layout: object_detection` as the Object Detection API's
`create_coco_tf_record.py` writes them: `image/object/keypoint/y`, `x` (fractions), `visibility`,
`num` (the points labelled, one an object) and `text` (the names, K an object). Read back as
float32 [objects, K, 2] [y, x] fractions, and `NAME_visibility` int64 [objects, K] beside it.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Sequence

import numpy as np

from ..media.images import pillow
from ..spec.fields import At, meta
from .base import DecodeStep, EncodeContext, Feature, Origin, ParseSpec, register
from .gathered import GatheredColumns
from .image_link import image_link, record_image_size
from .notices import Notices
from .values import Values

OBJECT_DETECTION_KEY = "image/object/keypoint"
_VISIBILITY = (0, 1, 2)


@dataclass(frozen=True, kw_only=True)
class KeypointsFeature(Feature):
    """Keypoints: `{type: keypoints, source: keypoints, units: pixels}`, read back as float32
    [objects, K, 2] [y, x] fractions and `NAME_visibility` int64 [objects, K]."""

    format: Literal["xyv", "xy"] = meta(
        "how the source writes an object's points: xyv ([x, y, visibility] each, COCO's) or xy ([x, y] each, all "
        "visible)", "xyv")
    units: Literal["fraction", "pixels"] = meta(
        "the source's coordinates: fractions of the image's width and height, or pixels of the image (upright)",
        "fraction")
    image: str | None = meta("the image feature the points are on (default: the spec's only one)", None)
    names: list[str] | None = meta("the points' names, in order (default: the source's, e.g. a COCO category's "
                                   "`keypoints`)", None)
    num_keypoints: int | None = meta("the points an object has, where they have no names", None)
    layout: Literal["tfds", "object_detection"] = meta(
        "tfds: KEY ([y, x] pairs) and KEY_visibility; object_detection: the Object Detection API's "
        "image/object/keypoint/x, y, visibility, num and text", "tfds")
    # filled in from the image feature when the spec is loaded (`linked`)
    image_source: str | None = meta("the image feature's source column", None, internal=True)
    image_fit: tuple[int, int, str] | None = meta("the image's fixed (height, width, resize)", None, internal=True)
    image_shapes: str | None = meta("the record key of the image's own [height, width, channels]", None,
                                    internal=True)

    holds_objects: ClassVar[bool] = True  # type: ignore[misc]  # one list of points per object
    batch_rows: ClassVar[int] = 1024

    # ---- spec ----------------------------------------------------------------------------------
    def check(self, at: At) -> None:
        if self.names is not None:
            names = [str(name) for name in self.names]
            duplicates = sorted({name for name in names if names.count(name) > 1})
            if not names or duplicates:
                raise (at / "names").error(f"expected the points' names, each once; received "
                                           f"{'none' if not names else 'twice: ' + ', '.join(duplicates)}")
            if self.num_keypoints is not None and self.num_keypoints != len(names):
                raise (at / "num_keypoints").error(f"{self.num_keypoints} differs from the {len(names)} names; give "
                                                   "one of them")
        if self.num_keypoints is not None and (isinstance(self.num_keypoints, bool) or self.num_keypoints < 1):
            raise (at / "num_keypoints").error(f"expected a count >= 1, received {self.num_keypoints!r}")
        if self.key is not None and self.key.endswith("/"):
            raise (at / "key").error(f"expected a record key, received {self.key!r}")

    def linked(self, features: dict[str, Feature], at: At) -> "KeypointsFeature":
        link = image_link(features, self.image, at, needed=self.units == "pixels", what="pixel keypoints"
                          if self.units == "pixels" else "keypoints")
        if link is None:
            return self
        return dataclasses.replace(self, image=link.name, image_source=link.source, image_fit=link.fit,
                                   image_shapes=link.shapes)

    @property
    def wants_source_names(self) -> bool:
        return self.names is None and self.num_keypoints is None

    def with_source_names(self, found: list[list[str]]) -> "KeypointsFeature":
        if not found:
            raise ValueError("keypoints need `names:` (the points' names, in order) or `num_keypoints:`; this source "
                             "doesn't name its points")
        if any(names != found[0] for names in found):
            raise ValueError(f"the splits' sources name different points ({found[0]} and "
                             f"{next(names for names in found if names != found[0])}); give `names:`")
        return dataclasses.replace(self, names=[str(name) for name in found[0]])

    @property
    def size(self) -> int:
        """K, the points an object has."""
        if self.names is not None:
            return len(self.names)
        if self.num_keypoints is None:
            raise ValueError(f"keypoints `{self.name}`: the points come from the source and are known once it is "
                             "built (use the built dataset's info.spec)")
        return int(self.num_keypoints)

    @property
    def is_variable(self) -> bool:
        return True

    @property
    def inner_size(self) -> int:
        """Values an object (statistics count objects by it)."""
        return self.size * 2

    @property
    def fills_absent(self) -> bool:
        return True  # a record without objects

    @property
    def record_key(self) -> str:
        return self.key or (OBJECT_DETECTION_KEY if self.layout == "object_detection" else self.name)

    @property
    def visibility_key(self) -> str:
        if self.layout == "object_detection":
            return f"{self.record_key}/visibility"
        return f"{self.record_key}_visibility"

    @property
    def visibility_name(self) -> str:
        return f"{self.name}_visibility"

    @property
    def companion_names(self) -> list[str]:
        return [self.visibility_name]

    @property
    def image_name(self) -> str | None:
        return self.image

    @property
    def linked_columns(self) -> list[str]:
        return [self.image_source] if self.image_source is not None else []

    # ---- writing side --------------------------------------------------------------------------
    def encode(self, values: Sequence[Any], context: EncodeContext) -> dict[str, Values]:
        images: Sequence[Any] = [None] * len(values)
        if isinstance(values, GatheredColumns):
            rows, images = list(values.columns[0]), list(values.columns[-1])
        else:
            rows = list(values)
        points, visible, objects = [], [], np.zeros(len(rows), dtype=np.int64)
        for row, value in enumerate(rows):
            found, seen = self.points(value, images[row], context, row)
            points.append(found)
            visible.append(seen)
            objects[row] = len(found)
        size = self.size
        flat = np.concatenate(points) if points else np.zeros((0, size, 2), np.float32)
        shown = np.concatenate(visible) if visible else np.zeros((0, size), np.int64)
        if self.layout == "tfds":
            return {self.record_key: Values("float", flat.reshape(-1), objects * size * 2),
                    self.visibility_key: Values("int64", shown.reshape(-1), objects * size)}
        encoded = {f"{self.record_key}/y": Values("float", np.ascontiguousarray(flat[..., 0].reshape(-1)), objects * size),
                   f"{self.record_key}/x": Values("float", np.ascontiguousarray(flat[..., 1].reshape(-1)), objects * size),
                   self.visibility_key: Values("int64", shown.reshape(-1), objects * size),
                   f"{self.record_key}/num": Values("int64", (shown > 0).sum(axis=1).astype(np.int64), objects.copy())}
        if self.names is not None:
            names = [name.encode("utf-8") for name in self.names]
            encoded[f"{self.record_key}/text"] = Values("bytes", names * int(objects.sum()), objects * size)
        return encoded

    def points(self, value: Any, image: Any, context: EncodeContext, row: int) -> tuple[np.ndarray, np.ndarray]:
        """One record's points as float32 [objects, K, 2] [y, x] fractions, and int64 [objects, K]
        visibilities, checked."""
        origin = context.origin
        objects = self._objects(value, origin, row)
        size = self.size
        points = np.zeros((len(objects), size, 2), np.float32)
        visible = np.zeros((len(objects), size), np.int64)
        if not objects:
            return points, visible
        scale, shown_image = None, ""
        if self.units == "pixels" or self.image_fit is not None:
            height_width, shown_image = record_image_size(self, image, origin, row, context, "keypoints")
            scale = height_width
        per_point = 3 if self.format == "xyv" else 2
        for index, numbers in enumerate(objects):
            if numbers is None:
                continue  # an object without keypoints: none labelled
            array = self._numbers(numbers, index, origin, row)
            if array.size != size * per_point:
                raise self.fail(origin, row, f"object {index}: expected {size} points of {per_point} numbers "
                                             f"[{'x, y, v' if per_point == 3 else 'x, y'}] ({size * per_point} numbers), "
                                             f"received {array.size}")
            array = array.reshape(size, per_point)
            where = array[:, [1, 0]]  # [y, x]
            seen = array[:, 2] if per_point == 3 else np.full(size, 2.0)
            bad = np.flatnonzero(~np.isin(seen, _VISIBILITY))
            if len(bad):
                raise self.fail(origin, row, f"object {index}: {self._point(bad[0])}: visibility {seen[bad[0]]:g}; "
                                             "expected 0 (not labelled), 1 (labelled, not visible) or 2 (visible)")
            labelled = seen > 0
            if not np.isfinite(where[labelled]).all():
                point = int(np.flatnonzero(labelled & ~np.isfinite(where).all(axis=1))[0])
                raise self.fail(origin, row, f"object {index}: {self._point(point)}: expected finite x and y")
            if self.units == "pixels":
                where = where / np.array(scale, np.float64)
            outside = labelled & ((where < 0) | (where > 1)).any(axis=1)
            if outside.any():
                point = int(np.flatnonzero(outside)[0])
                x, y = array[point, 0], array[point, 1]
                image_is = (f"the image {shown_image} ({scale[1]} x {scale[0]} pixels, width x height)"
                            if self.units == "pixels" else "the image ([0, 1] in fractions)")
                raise self.fail(origin, row, f"object {index}: {self._point(point)} [{x:g}, {y:g}] lies outside "
                                             f"{image_is}")
            if self.image_fit is not None:
                where, labelled = self._placed(where, labelled, scale, context.notices)
            points[index][labelled] = where[labelled]
            visible[index][labelled] = seen[labelled].astype(np.int64)
        return points, visible

    def _objects(self, value: Any, origin: Origin, row: int) -> list[Any]:
        """A record's objects' lists of numbers, as the source gives them (None: an object without)."""
        if value is None:
            return []
        if isinstance(value, str):
            try:
                value = json.loads(value) if value.strip() else []
            except ValueError:
                raise self.fail(origin, row, "expected a JSON list of each object's keypoints, received "
                                             f"{value[:60]!r}") from None
        if isinstance(value, np.ndarray):
            value = list(value)
        if not isinstance(value, (list, tuple)):
            raise self.fail(origin, row, f"expected a list of each object's keypoints, received "
                                         f"{type(value).__name__}")
        return list(value)

    def _numbers(self, numbers: Any, index: int, origin: Origin, row: int) -> np.ndarray:
        try:
            array = np.asarray(numbers, dtype=np.float64)
        except (TypeError, ValueError):
            array = None
        if array is None or array.ndim not in (1, 2):
            raise self.fail(origin, row, f"object {index}: expected a list of numbers "
                                         f"[{'x, y, v' if self.format == 'xyv' else 'x, y'}, ...], received "
                                         f"{str(numbers)[:60]}")
        return array.reshape(-1)

    def _point(self, index: int) -> str:
        return f"keypoint {index}" + (f" ({self.names[index]})" if self.names is not None else "")

    def _placed(self, where: np.ndarray, labelled: np.ndarray, size: tuple[int, int], notices: Notices
                ) -> tuple[np.ndarray, np.ndarray]:
        """Points on the image as stored (its `resize: pad` or `crop`); a labelled point outside
        what a crop keeps is no longer labelled (counted)."""
        height, width, how = self.image_fit
        scale_y, scale_x, top, left = pillow.placement(size[0], size[1], (height, width), how)
        placed = where * np.array([scale_y, scale_x]) + np.array([top, left])
        outside = labelled & ((placed < 0) | (placed > 1)).any(axis=1)
        for _ in range(int(outside.sum())):
            notices.note(f"feature `{self.name}`: {{count}} keypoint{{s}} outside the part `resize: crop` keeps of "
                         f"image `{self.image}` stored as not labelled (visibility 0)")
        return placed, labelled & ~outside

    def check_stored(self, stored: dict[str, tuple[str, list[Any]]]) -> str | None:
        size = self.size
        keys = list(self.parsing())
        for key in keys:
            if key != self.image_shapes and key not in stored:
                return f"key {key!r} is missing"
        visibility = np.asarray(stored[self.visibility_key][1], np.int64)
        if self.layout == "tfds":
            pairs = np.asarray(stored[self.record_key][1], np.float64)
            if len(pairs) != 2 * len(visibility) or len(visibility) % size:
                return f"{len(pairs)} coordinates beside {len(visibility)} visibilities ({size} points an object)"
        else:
            sides = [np.asarray(stored[f"{self.record_key}/{side}"][1], np.float64) for side in ("y", "x")]
            if {len(side) for side in sides} != {len(visibility)} or len(visibility) % size:
                return f"the y, x and visibility lists hold {[len(side) for side in sides] + [len(visibility)]} values"
            if len(stored[f"{self.record_key}/num"][1]) * size != len(visibility):
                return f"{len(stored[f'{self.record_key}/num'][1])} objects' counts beside {len(visibility)} points"
            pairs = np.stack(sides, axis=1).reshape(-1)
        if not np.isin(visibility, _VISIBILITY).all():
            return "a visibility is not 0, 1 or 2"
        if not ((pairs >= 0) & (pairs <= 1)).all():
            return "a point is outside [0, 1]"
        return None

    # ---- reading side --------------------------------------------------------------------------
    def parsing(self) -> dict[str, ParseSpec]:
        size = self.size
        if self.layout == "tfds":
            specs: dict[str, ParseSpec] = {self.record_key: ("ragged", "float32", [None, size, 2])}
        else:
            specs = {f"{self.record_key}/y": ("var", "float32", [None]),
                     f"{self.record_key}/x": ("var", "float32", [None]),
                     f"{self.record_key}/num": ("var", "int64", [None])}
            if self.names is not None:
                specs[f"{self.record_key}/text"] = ("var", "string", [None])
        specs[self.visibility_key] = ("ragged", "int64", [None, size]) if self.layout == "tfds" else \
            ("var", "int64", [None])
        if self.image_shapes is not None:
            specs[self.image_shapes] = ("fixed", "int64", [3])
        return specs

    def decoding(self, options: Any = None) -> list[DecodeStep]:
        steps: list[DecodeStep] = []
        if self.layout == "object_detection":
            steps.append(("stacked_points", {"x": {"parsed": f"{self.record_key}/x"}, "size": self.size}))
        if self.image_shapes is not None and getattr(options, "image_size", None) is None:
            steps.append(("padded_points", {"shapes": {"parsed": self.image_shapes}}))
        return steps

    def reading(self, options: Any) -> dict[str, Any]:
        """Its description, with the visibilities decoded beside it (`NAME_visibility`)."""
        parse = self.parsing()
        decode: list[DecodeStep] = [] if self.layout == "tfds" else [("point_rows", {"size": self.size})]
        visibility = {"parse": {self.visibility_key: parse[self.visibility_key]}, "decode": decode}
        return {**super().reading(options), "companions": {self.visibility_name: visibility}}

    def describe(self) -> str:
        return (f"keypoints float32 [null, {self.size}, 2] [y, x] fractions (ragged), with `{self.visibility_name}` "
                f"int64 [null, {self.size}]")


register("keypoints")(KeypointsFeature)
