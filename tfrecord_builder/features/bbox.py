"""`bbox`: each record's bounding boxes, stored as fractions [ymin, xmin, ymax, xmax].

    objects: {type: bbox, source: bbox, format: xywh, units: pixels, image: image}

The source gives a list of boxes per record (`source:`), or four columns, one box per row
(`columns: [xmin, ymin, xmax, ymax]`, in the order of `format`; a grouped table gives each
cell the group's list). `format` is how a box is written: yxyx, xyxy, xywh (corner and size) or
cxcywh (centre and size); `units` fraction (of the image's height and width) or pixels. Pixel
boxes are divided by the size of the record's image as it is shown (after its EXIF
orientation), read from the file's header without decoding it (media/images/pillow.py
`oriented_size`): the feature named by `image:`. Where that image is stored at a fixed shape
with `resize: pad` or `crop`, the boxes follow it there (the same geometry, `placement`).

Every box is checked: four finite numbers, min <= max, inside the image (else an error, or
clipped with `clip: true`), not empty (else an error, or dropped when smaller than `min_size`
on a side, in the box's units); what was clipped or dropped is counted and said once for the
build (features/notices.py). Stored and read back as float32 [ymin, xmin, ymax, xmax]
fractions, what `tf.image.draw_bounding_boxes`, TFDS's BBoxFeature and the Object Detection API
take; `layout: tfds` stores one float list of 4 values a box under the feature's key,
`layout: object_detection` the API's four lists `image/object/bbox/ymin|xmin|ymax|xmax`
(under `KEY/...` when `key:` is given).
"""
from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Sequence

import numpy as np

from ..media.images import pillow
from ..spec.fields import At, meta
from . import tfds
from ..errors import DataError
from .base import DecodeStep, EncodeContext, Feature, Origin, ParseSpec, register
from .described import Card, Counted
from .image_link import image_link, record_image_size
from .gathered import GatheredColumns, is_pattern
from .notices import Notices
from .values import Kept, ListKind, Values

FORMATS = ("yxyx", "xyxy", "xywh", "cxcywh")
# the four names of each format, in its order (what messages and `columns:` speak of)
FORMAT_NAMES = {"yxyx": ("ymin", "xmin", "ymax", "xmax"), "xyxy": ("xmin", "ymin", "xmax", "ymax"),
                "xywh": ("xmin", "ymin", "width", "height"), "cxcywh": ("x_center", "y_center", "width", "height")}
SIDES = ("ymin", "xmin", "ymax", "xmax")  # the stored order
OBJECT_DETECTION_KEY = "image/object/bbox"


@dataclass(frozen=True, kw_only=True)
class BBoxFeature(Feature):
    """Bounding boxes: `{type: bbox, format: xywh, units: pixels, image: image}`, read back as
    float32 [n, 4] [ymin, xmin, ymax, xmax] fractions per record."""

    format: Literal["yxyx", "xyxy", "xywh", "cxcywh"] = meta(
        "how the source writes a box: yxyx, xyxy, xywh (a corner, then width and height) or cxcywh (the centre, "
        "then width and height)", "yxyx")
    units: Literal["fraction", "pixels"] = meta(
        "the source's coordinates: fractions of the image's height and width, or pixels (needs `image:`)", "fraction")
    image: str | None = meta("the image feature whose size the boxes are in (after its EXIF orientation)", None)
    clip: bool = meta("clip a box outside the image to it (counted) instead of refusing it", False)
    min_size: float | None = meta(
        "drop a box narrower or lower than this, in the box's units (counted); without it an empty box is an error",
        None)
    per_object: list[str] | None = meta(
        "the features holding one value (or row) per box, which lose a dropped box's values with it (default: "
        "every feature of shape [null] or [null, k], and keypoints)", None)
    layout: Literal["tfds", "object_detection"] = meta(
        "tfds: one float list of 4 values a box under the feature's key; object_detection: the Object Detection "
        "API's four lists image/object/bbox/xmin, ymin, xmax, ymax", "tfds")
    # filled in from the spec's `image:` feature when the spec is loaded (`linked`)
    image_source: str | None = meta("the image feature's source column", None, internal=True)
    image_fit: tuple[int, int, str] | None = meta("the image's fixed (height, width, resize)", None, internal=True)
    image_shapes: str | None = meta("the record key of the image's own [height, width, channels]", None,
                                    internal=True)
    object_keys: list[str] = meta("the record keys of the `per_object:` features (what verify checks)", [],
                                  internal=True)
    # any number of boxes of four values; [4] is one box (a row of a group, in rows grouped into one
    # record: source.group_by, features/grouped.py, whose row feature drops the first dimension)
    shape: list[int | None] = meta("the boxes' shape", [None, 4], internal=True)

    holds_objects: ClassVar[bool] = True  # type: ignore[misc]  # a box per object
    gathers_columns: ClassVar[bool] = True  # `columns: [xmin, ymin, xmax, ymax]`: one box per row
    takes_group_rows: ClassVar[bool] = True  # grouped rows: each row's box
    batch_rows: ClassVar[int] = 4096

    # ---- spec ----------------------------------------------------------------------------------
    def check(self, at: At) -> None:
        if self.columns is not None and (is_pattern(self.columns) or len(self.columns) != 4):
            raise (at / "columns").error(f"expected the four columns of a box in `format: {self.format}`'s order, "
                                         f"e.g. [{', '.join(FORMAT_NAMES[self.format])}], received {self.columns!r}")
        if self.min_size is not None and not (self.min_size >= 0 and math.isfinite(self.min_size)):
            raise (at / "min_size").error(f"expected a size >= 0 in the box's units, received {self.min_size}")
        if self.key is not None and self.layout == "tfds" and self.key.endswith("/"):
            raise (at / "key").error(f"expected a record key, received {self.key!r}")

    def linked(self, features: dict[str, Feature], at: At) -> "BBoxFeature":
        """This feature with what it needs of its image feature (`image:`, or the spec's only
        one): its source column and, for a fixed shape reached by `resize: pad` or `crop`, that
        geometry; and the features holding a value per box (`per_object:`)."""
        per_object = self._per_object(features, at)
        link = image_link(features, self.image, at, needed=self.units == "pixels", what="pixel boxes"
                          if self.units == "pixels" else "boxes")
        keys = _keys(features, per_object)
        if link is None:
            return dataclasses.replace(self, per_object=per_object, object_keys=keys)
        return dataclasses.replace(self, image=link.name, image_source=link.source, image_fit=link.fit,
                                   image_shapes=link.shapes, per_object=per_object, object_keys=keys)

    def _per_object(self, features: dict[str, Feature], at: At) -> list[str]:
        """The features that hold one value per box: `per_object:` as given, or every feature
        that may (a list of variable length, keypoints)."""
        if self.per_object is None:
            return [name for name, other in features.items() if name != self.name and other.holds_objects
                    and not isinstance(other, BBoxFeature)]  # (another bbox feature's boxes are other objects)
        for name in self.per_object:
            other = features.get(name)
            if other is None or name == self.name or not other.holds_objects:
                choices = [name for name, other in features.items() if name != self.name and other.holds_objects]
                raise (at / "per_object").error(f"expected features holding a value per box (a list: shape [null] "
                                                f"or [null, k]): {', '.join(choices) or 'the spec has none'}; "
                                                f"received {name!r}")
        return list(self.per_object)

    @property
    def objects_with(self) -> list[str]:
        return list(self.per_object or [])

    @property
    def holds_boxes(self) -> bool:
        return True

    @property
    def image_name(self) -> str | None:
        return self.image

    @property
    def drops_objects(self) -> bool:
        """Whether a box may be dropped (`min_size`, `clip`, an image's `resize: crop`)."""
        return self.min_size is not None or self.clip or (self.image_fit is not None and self.image_fit[2] == "crop")

    @property
    def is_variable(self) -> bool:
        return True

    @property
    def fills_absent(self) -> bool:
        return True  # a record without boxes

    @property
    def inner_size(self) -> int:
        return 4

    @property
    def record_key(self) -> str:
        if self.layout == "object_detection":
            return self.key or OBJECT_DETECTION_KEY
        return self.key or self.name

    @property
    def record_keys(self) -> list[str]:
        """The keys the boxes are stored under, in the stored order [ymin, xmin, ymax, xmax]."""
        if self.layout == "tfds":
            return [self.record_key]
        return [f"{self.record_key}/{side}" for side in SIDES]

    @property
    def linked_columns(self) -> list[str]:
        """The image's column, when the boxes are measured by its size."""
        return [self.image_source] if self.image_source is not None else []

    @property
    def counted(self) -> Counted:
        """Its boxes' fractions, 4 a box; its four `columns:` are one box (stored in another order),
        not columns of figures of their own."""
        return Counted()

    @property
    def card(self) -> Card:
        """The Objects section, its boxes drawn over their image's thumbnails."""
        return Card("bbox", over=self.image)

    # ---- writing side --------------------------------------------------------------------------
    def encode(self, values: Sequence[Any], context: EncodeContext) -> dict[str, Values]:
        images: Sequence[Any] = [None] * len(values)
        if isinstance(values, GatheredColumns):
            columns = list(values.columns)
            if self.image_source is not None:
                images = list(columns.pop())
            if self.columns is not None:
                rows: Sequence[Any] = [_from_columns(cells) for cells in zip(*(list(column) for column in columns))]
            else:
                rows = list(columns[0])
        else:
            rows = values
        if self.shape == [4] and self.columns is None:  # a group's row: one box (or none), not a list of them
            rows = [None if value is None else f"[{value}]" if isinstance(value, str) else [value] for value in rows]
        flat, counts, given, kept = self._batch_boxes(rows, images, context)
        # which boxes stayed, where some may go: the per-object features keep the same objects
        objects = Kept(given, kept) if self.drops_objects else None
        if self.layout == "tfds":
            return {self.record_key: Values("float", flat.reshape(-1), counts * 4, kept_objects=objects)}
        return {key: Values("float", np.ascontiguousarray(flat[:, side]), counts.copy(), kept_objects=objects)
                for side, key in enumerate(self.record_keys)}

    def boxes(self, value: Any, image: Any, context: EncodeContext, row: int) -> np.ndarray:
        """One record's boxes as float32 [n, 4] [ymin, xmin, ymax, xmax] fractions, checked."""
        return self.kept_boxes(value, image, context, row)[0]

    def kept_boxes(self, value: Any, image: Any, context: EncodeContext, row: int) -> tuple[np.ndarray, np.ndarray]:
        """`boxes`, and per box given whether it was kept (not dropped by `min_size`, clipping or a crop)."""
        origin = context.origin
        given = self._given(value, origin, row)
        if not len(given):
            return np.zeros((0, 4), np.float32), np.zeros(0, bool)
        size, shown_image = None, ""
        if self.image is not None and (self.units == "pixels" or self.image_fit is not None):
            size, shown_image = record_image_size(self, image, origin, row, context, "boxes")
        fast = self._all_fine(given, size)
        if fast is not None:
            return fast, np.ones(len(given), bool)
        return self.box_by_box(given, size, shown_image, context, row)

    def box_by_box(self, given: np.ndarray, size: tuple[int, int] | None, shown_image: str, context: EncodeContext,
                   row: int) -> tuple[np.ndarray, np.ndarray]:
        """A record's boxes (float64 [n, 4], as the source gives them) checked one at a time, on an
        image of `size` (height, width) named `shown_image` in messages: what is wrong with which,
        or which are clipped or dropped (counted). The kept boxes, and per box whether it was kept."""
        origin, notices = context.origin, context.notices
        kept, which = [], np.zeros(len(given), bool)
        for index, box in enumerate(given):
            corners = self._corners(box, index, origin, row, notices)  # ymin, xmin, ymax, xmax in the box's units
            if corners is None:
                continue
            if self.units == "pixels":
                corners = corners / np.array([size[0], size[1], size[0], size[1]], np.float64)
            if (corners < 0).any() or (corners > 1).any():
                if not self.clip:
                    where = (f"the image {shown_image} ({size[1]} x {size[0]} pixels, width x height)"
                             if self.units == "pixels" else "the image ([0, 1] in fractions)")
                    raise self.fail(origin, row, f"box {index} {_shown(box)} ({self.format}, {self.units}) lies "
                                                 f"outside {where}; set `clip: true` to clip it")
                corners = np.clip(corners, 0.0, 1.0)
                notices.note(f"feature `{self.name}`: {{count}} object{{s}} clipped to the image (`clip: true`)")
                if self._too_small(corners, size):
                    self._dropped("outside the image dropped (empty once clipped)", notices)
                    continue
            if self.image_fit is not None:
                corners = self._placed(corners, size, notices)
                if corners is None:
                    continue
            kept.append(corners)
            which[index] = True
        return np.array(kept, dtype=np.float32).reshape(-1, 4), which

    def _batch_boxes(self, rows: Sequence[Any], images: Sequence[Any], context: EncodeContext
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The boxes of a batch's rows: kept boxes float32 [n, 4], boxes kept and given per row, and
        per box given whether it was kept. The rows whose boxes are all fine are converted at once
        (`_converted`, NumPy over the whole batch: a record's few boxes cost more in NumPy's calls
        than in its arithmetic); the others box by box (`box_by_box`), which says what is wrong or
        drops and counts. An error is the first row's, in the rows' order, as box by box."""
        origin = context.origin
        givens: list[np.ndarray] = []
        sizes: list[tuple[int, int]] = []
        shown: list[str] = []
        sized = self.image is not None and (self.units == "pixels" or self.image_fit is not None)
        failure: Exception | None = None
        try:
            for row, value in enumerate(rows):
                givens.append(self._given(value, origin, row))
                size, name = (0, 0), ""
                if sized and len(givens[-1]):
                    size, name = record_image_size(self, images[row], origin, row, context, "boxes")
                sizes.append(size)
                shown.append(name)
        except DataError as error:  # raised after the rows before it, which may hold an earlier error
            failure = error
        read = len(sizes)
        given = np.array([len(boxes) for boxes in givens[:read]], dtype=np.int64)
        flat = np.concatenate(givens[:read]) if read else np.zeros((0, 4))
        corners, fine = self._converted(flat, np.repeat(np.array(sizes, np.float64).reshape(-1, 2), given, axis=0))
        wrong = set(np.repeat(np.arange(read), given)[~fine].tolist())  # the rows with a box not fine
        if not wrong and failure is None:
            return corners.astype(np.float32), given.copy(), given, np.ones(len(flat), bool)
        starts = np.concatenate([[0], np.cumsum(given)])
        boxes, kept, counts = [], [], given.copy()
        for row in range(read):
            if row in wrong:
                found, which = self.box_by_box(givens[row], sizes[row] if sized else None, shown[row], context, row)
            else:
                found, which = corners[starts[row]:starts[row + 1]].astype(np.float32), np.ones(given[row], bool)
            boxes.append(found)
            kept.append(which)
            counts[row] = len(found)
        if failure is not None:
            raise failure
        return (np.concatenate(boxes) if boxes else np.zeros((0, 4), np.float32), counts, given,
                np.concatenate(kept) if kept else np.zeros(0, bool))

    def _all_fine(self, given: np.ndarray, size: tuple[int, int] | None) -> np.ndarray | None:
        """A record's boxes converted at once (the same float64 arithmetic as box by box), when every
        one is finite, the right way up, not too small and inside the image; else None."""
        corners, fine = self._converted(given, np.tile(np.array(size or (0, 0), np.float64), (len(given), 1)))
        return corners.astype(np.float32) if fine.all() else None

    def _converted(self, given: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Boxes (float64 [n, 4], as the source gives them) as [ymin, xmin, ymax, xmax] fractions on
        the image as stored, float64, and whether each is fine: finite, the right way up, not too
        small and inside the image. `sizes`: each box's image's (height, width), in pixels. The
        same float64 arithmetic as `_corners` and `_placed`, box by box."""
        corners = box_corners(given, self.format)
        with np.errstate(invalid="ignore", divide="ignore"):  # (what isn't finite isn't fine)
            smallest = np.minimum(corners[:, 2] - corners[:, 0], corners[:, 3] - corners[:, 1])
            fine = np.isfinite(given).all(axis=1) & (smallest > 0)
            if self.min_size is not None:
                fine &= smallest >= self.min_size
            if self.units == "pixels":
                corners = corners / np.tile(sizes, 2)
            fine &= ((corners >= 0) & (corners <= 1)).all(axis=1)
            if self.image_fit is not None and len(given):
                height, width, how = self.image_fit
                keys = [(int(size[0]), int(size[1])) for size in sizes.tolist()]
                placed = {key: pillow.placement(key[0], key[1], (height, width), how) for key in set(keys)}
                scale_y, scale_x, top, left = np.array([placed[key] for key in keys], np.float64).reshape(-1, 4).T
                corners = (corners * np.stack([scale_y, scale_x, scale_y, scale_x], axis=1)
                           + np.stack([top, left, top, left], axis=1))
                fine &= ((corners >= 0) & (corners <= 1)).all(axis=1)
        return corners, fine

    def _given(self, value: Any, origin: Origin, row: int) -> np.ndarray:
        """A record's boxes as the source gives them: float64 [n, 4]."""
        if value is None:
            return np.zeros((0, 4))
        if isinstance(value, str):
            try:
                value = json.loads(value) if value.strip() else []
            except ValueError:
                raise self.fail(origin, row, f"expected a JSON list of boxes, e.g. [[10, 20, 30, 40]], received "
                                             f"{value!r}") from None
        try:
            array = np.array(value, dtype=np.float64)
        except (TypeError, ValueError):
            array = None
        if array is None or (array.size and (array.ndim != 2 or array.shape[1] != 4)):
            shown = value if not isinstance(value, np.ndarray) else value.tolist()
            raise self.fail(origin, row, f"expected a list of boxes, each 4 numbers "
                                         f"[{', '.join(FORMAT_NAMES[self.format])}], received {_short(shown)}")
        return array.reshape(-1, 4)

    def _corners(self, box: np.ndarray, index: int, origin: Origin, row: int, notices: Notices) -> np.ndarray | None:
        """A box as [ymin, xmin, ymax, xmax] in its own units; None if `min_size` drops it."""
        if not np.isfinite(box).all():
            raise self.fail(origin, row, f"box {index} {_shown(box)}: expected 4 finite numbers "
                                         f"[{', '.join(FORMAT_NAMES[self.format])}]")
        corners = box_corners(np.asarray(box, np.float64).reshape(1, 4), self.format)[0]  # as _all_fine's
        ymin, xmin, ymax, xmax = corners.tolist()
        if ymax < ymin or xmax < xmin:
            names = FORMAT_NAMES[self.format]
            wrong = ("width" if xmax < xmin else "height") if self.format in ("xywh", "cxcywh") else None
            expected = f"a {wrong} >= 0" if wrong else \
                f"{names[0]} <= {names[2]} and {names[1]} <= {names[3]}"
            raise self.fail(origin, row, f"box {index} {_shown(box)} ({self.format}) is upside down; expected "
                                         f"{expected}")
        smallest = min(ymax - ymin, xmax - xmin)
        if self.min_size is not None and (smallest < self.min_size or smallest == 0):
            self._dropped(f"smaller than `min_size: {self.min_size:g}` dropped", notices)
            return None
        if smallest == 0:
            raise self.fail(origin, row, f"box {index} {_shown(box)} ({self.format}) is empty (zero width or "
                                         "height); set `min_size: 0` to drop empty boxes")
        return np.array(corners, dtype=np.float64)

    def _dropped(self, what: str, notices: Notices) -> None:
        """Counts a dropped object, saying what went with it."""
        with_it = f", each with its {', '.join(f'`{name}`' for name in self.objects_with)}" if self.objects_with else ""
        notices.note(f"feature `{self.name}`: {{count}} object{{s}} {what}{with_it}")

    def _too_small(self, corners: np.ndarray, size: tuple[int, int] | None) -> bool:
        """Whether a clipped box (fractions) is empty, or smaller than `min_size` in its units."""
        sides = np.array([corners[2] - corners[0], corners[3] - corners[1]])
        if self.units == "pixels":
            sides = sides * np.array(size, np.float64)
        return bool((sides <= 0).any() or (self.min_size is not None and (sides < self.min_size).any()))

    def _placed(self, corners: np.ndarray, size: tuple[int, int], notices: Notices) -> np.ndarray | None:
        """A box on the image as stored: moved by its `resize: pad` (inside still) or `crop` (cut
        to the window kept, or dropped if nothing is left: both counted)."""
        height, width, how = self.image_fit
        scale_y, scale_x, top, left = pillow.placement(size[0], size[1], (height, width), how)
        placed = corners * np.array([scale_y, scale_x, scale_y, scale_x]) + np.array([top, left, top, left])
        if (placed >= 0).all() and (placed <= 1).all():
            return placed
        placed = np.clip(placed, 0.0, 1.0)
        if placed[2] <= placed[0] or placed[3] <= placed[1]:
            self._dropped(f"outside the part `resize: crop` keeps of image `{self.image}` dropped", notices)
            return None
        notices.note(f"feature `{self.name}`: {{count}} object{{s}} cut to the part `resize: crop` keeps of image "
                     f"`{self.image}`")
        return placed

    def statistics_values(self, encoded: dict[str, Values]) -> Values:
        """Every box's four fractions, 4 a box (in the stored order), whatever the layout."""
        if self.layout == "tfds":
            return encoded[self.record_key]
        sides = [encoded[key] for key in self.record_keys]
        flat = np.stack([np.asarray(side.values, np.float32) for side in sides], axis=1).reshape(-1)
        return Values("float", flat, sides[0].counts * 4, steps=sides[0].steps)  # (a sequence's: by record)

    def check_stored(self, stored: dict[str, tuple[str, list[Any]]]) -> str | None:
        lists = []
        for key in self.record_keys:
            if key not in stored:
                return f"key {key!r} is missing"
            kind, values = stored[key]
            if kind != "float" and values:
                return f"expected a float list under {key!r}, found a {kind} list"
            lists.append(values)
        if self.layout == "tfds" and len(lists[0]) % 4:
            return f"expected a multiple of 4 values (shape [null, 4]), found {len(lists[0])}"
        if len({len(values) for values in lists}) > 1:
            return f"the four lists {', '.join(self.record_keys)} hold {[len(values) for values in lists]} values"
        boxes = np.array(lists[0] if self.layout == "tfds" else np.stack(lists, axis=1), np.float64).reshape(-1, 4)
        if not ((boxes >= 0) & (boxes <= 1)).all() or (boxes[:, 2] < boxes[:, 0]).any() or \
                (boxes[:, 3] < boxes[:, 1]).any():
            return "a box is outside [0, 1] or upside down"
        if self.drops_objects:  # what was dropped went whole: a value (or row) per box kept, or none
            for key in self.object_keys:
                count = len(stored.get(key, ("", []))[1])
                if count and (not len(boxes) or count % len(boxes)):
                    return (f"{len(boxes)} box{'es' * (len(boxes) != 1)} beside {count} value{'s' * (count != 1)} "
                            f"under {key!r}, which holds a value (or row) per box")
        return None

    def stored_kinds(self) -> dict[str, ListKind] | None:
        return None  # (checked one record at a time)

    # ---- reading side --------------------------------------------------------------------------
    def parsing(self) -> dict[str, ParseSpec]:
        if self.layout == "tfds":
            specs: dict[str, ParseSpec] = {self.record_key: ("ragged", "float32", [None, 4])}
        else:
            specs = {key: ("var", "float32", [None]) for key in self.record_keys}
        if self.image_shapes is not None:  # (the image's own key: what `padded_boxes` scales by)
            specs[self.image_shapes] = ("fixed", "int64", [3])
        return specs

    def decoding(self, options: Any = None) -> list[DecodeStep]:
        steps: list[DecodeStep] = []
        if self.layout == "object_detection":
            steps.append(("stacked_boxes", {side: {"parsed": key} for side, key in zip(SIDES[1:], self.record_keys[1:])}))
        if self.image_shapes is not None and getattr(options, "image_size", None) is None:
            # the batch's images are padded at the bottom and right to its largest: the boxes follow
            steps.append(("padded_boxes", {"shapes": {"parsed": self.image_shapes}}))
        return steps

    def tfds_features(self, options: Any) -> dict[str, dict[str, Any]]:
        """In the object_detection layout, a Sequence of floats under each of its four keys."""
        if self.layout == "object_detection":
            return {key: tfds.sequence(tfds.tensor([], "float32")) for key in self.record_keys}
        return super().tfds_features(options)

    def tfds_feature(self, options: Any) -> dict[str, Any]:
        """TFDS's own `objects/bbox`: a Sequence of BBoxFeatures, REL_YXYX fractions, as stored."""
        box = {"pythonClassName": tfds.BBOX, "boundingBox": {"shape": {"dimensions": ["4"]}, "dtype": "float32",
                                                              "bboxFormat": "REL_YXYX"}}
        return tfds.sequence(box)

    def describe(self) -> str:
        return "bbox float32 [null, 4] [ymin, xmin, ymax, xmax] fractions (ragged)"


register("bbox")(BBoxFeature)


def _keys(features: dict[str, Feature], names: list[str]) -> list[str]:
    """The record keys the features `names` store their values under (a feature whose shape the
    source still has to give, keypoints named by it: its own key, until it is built)."""
    keys = []
    for name in names:
        try:
            keys += list(features[name].parsing())
        except ValueError:
            keys.append(features[name].record_key)
    return keys


def box_corners(boxes: np.ndarray, format: str) -> np.ndarray:
    """Boxes (n, 4) written in `format` (one of FORMATS) as [ymin, xmin, ymax, xmax], in their own
    units (pixels stay pixels)."""
    a, b, c, d = boxes.T
    if format == "yxyx":
        return np.stack([a, b, c, d], axis=1)
    if format == "xyxy":
        return np.stack([b, a, d, c], axis=1)
    if format == "xywh":
        return np.stack([b, a, b + d, a + c], axis=1)
    return np.stack([b - d / 2, a - c / 2, b + d / 2, a + c / 2], axis=1)


def _from_columns(cells: tuple[Any, ...]) -> Any:
    """One row's four cells as its boxes: one box, none (all four missing), or a group's boxes
    (each cell the group's list of values)."""
    if all(cell is None for cell in cells):
        return []
    if all(isinstance(cell, (list, tuple, np.ndarray)) for cell in cells):
        return [list(box) for box in zip(*cells)] if len({len(cell) for cell in cells}) == 1 else [list(cells)]
    return [[math.nan if cell is None else cell for cell in cells]]


def _shown(box: Any) -> str:
    """A box as the source gave it: [10, 20.5, 30, 40]."""
    return "[" + ", ".join(f"{float(value):g}" for value in box) + "]"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
