"""What the annotation builders (`coco`, `voc`, `yolo`) share: one record per image, made in
batches that list bad images under `on_error: skip`, and count the images without objects.

Each builder lists its images (`Listed`: a key and what reading that image's objects needs)
and reads one image's record with `read(item, context, notices)`, a module-level function so
that a batch pickles to the encoding workers, where it is read (`AnnotationBatch.load`). What
reading notes (an image without objects, a size taken from the file) goes to `notices`, the
collector of the batch's encoding (features/notices.py). A record offers `image` (the image
file's path), `filename`, `image_id`, `height`, `width`, per-object `bbox` (in the source's own
format) and `label` (the class name), plus what the format carries.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from .. import fs
from ..errors import DataError
from ..features.notices import Notices
from ..media.images import BadImage, pillow
from .base import Batch, Builder, KeyedItems, PendingBatch, parsed_batch
from .image_folder import BATCH_BYTES, EXTENSIONS, cut_runs

# said once for the build with the count (never a silent drop: they are records without boxes)
EMPTY_NOTICE = "source: {count} image{s} without objects, kept as records with no boxes"
BATCH_IMAGES = 256  # images a batch reads at most (their files are read by the image feature)

# what to do where the annotations give an image another size than its file has (`size_mismatch:`)
SIZE_RULES = {"error": "stop the build, naming both sizes (the default)",
              "warn": "count it, keep the file's size and the pixel coordinates as written",
              "scale": "scale the pixel coordinates (boxes, polygons, keypoints, areas) to the file's size: images "
                       "shrunk after labelling"}
NO_SIZE_NOTICE = "source: {count} image{s} without a size in the annotations: the size read from the image file"
WARN_NOTICE = ("source: {count} image{s} whose annotated size differs from the file's: the file's size kept, the pixel "
               "coordinates as written (`size_mismatch: warn`)")
SCALE_NOTICE = ("source: {count} image{s} labelled at another size than the file's: pixel coordinates scaled to the "
                "file (`size_mismatch: scale`)")
# the fields whose values depend on the image's size: where a spec reads one, each image's file is measured
SIZED_FIELDS = ("image", "height", "width", "bbox", "area", "segmentation", "masks", "keypoints")

Reader = Callable[[Any, Any, Notices], "tuple[Any, dict[str, Any]]"]


@dataclass
class Places:
    """Names a batch's records by their images' places (`instances.json, image 7`)."""

    places: list[str]

    def __call__(self, index: int) -> str:
        return self.places[index]


class AnnotationBatch(PendingBatch):
    """Images whose records are read where the batch is encoded: `read(item, context, notices)`
    gives each item's `(key, record)` or raises DataError (listed, not raised, with
    `keep_going`); an item is a tuple whose first value is its place in messages."""

    def __init__(self, items: Sequence[Any], read: Reader, context: Any, needed: Sequence[str], name: str,
                 keep_going: bool, broken: list[dict[str, str]] | None = None):
        self.items, self.read, self.context, self.needed = list(items), read, context, list(needed)
        self.name, self.keep_going = name, keep_going
        self.broken = list(broken or [])  # found while listing (a duplicate image, an orphan annotation)
        self.count = len(self.items) + len(self.broken)
        self.line = 0

    def load(self, notices: Notices) -> Batch:
        keys: list[Any] = []
        places: list[str] = []
        records: list[dict[str, Any]] = []
        broken = list(self.broken)
        for item in self.items:
            try:
                key, record = self.read(item, self.context, notices)
            except DataError as error:
                if not self.keep_going:
                    raise
                broken.append({"record": item[0], "reason": str(error)})
                continue
            if not record["bbox"]:
                notices.note(EMPTY_NOTICE)
            keys.append(key)
            places.append(item[0])
            records.append(record)
        columns = {name: [record.get(name) for record in records] for name in self.needed}
        sizes = None
        if getattr(self.context, "measures", False):  # each image's file measured (`measured`): its record's size
            sizes = {record["image"]: (record["height"], record["width"]) for record in records
                     if isinstance(record.get("image"), str)}
        return Batch(keys=keys, columns=columns, origin=Places(places), source=self.name, broken=broken,
                     image_sizes=sizes)


@dataclass(frozen=True)
class Sized:
    """An image's size as its record gives it (the file's, upright) and the factors (y, x) its
    pixel coordinates are multiplied by (`size_mismatch: scale`; None: as written)."""

    height: int
    width: int
    scale: tuple[float, float] | None = None


def measured(place: str, image: str, annotated: tuple[int, int] | None, rule: str, notices: Notices) -> Sized:
    """The size of the image file `image` (upright, after its EXIF orientation) checked against the
    (height, width) the annotations give it (None: they give none, or 0), by `rule` (SIZE_RULES);
    a size taken from the file is counted in `notices`."""
    try:
        height, width, orientation = pillow.stored_size(image)
    except BadImage as error:
        raise DataError(f"{place}: image {image}: {error}") from None
    upright = (width, height) if pillow.turns(orientation) else (height, width)
    if annotated is None:
        notices.note(NO_SIZE_NOTICE)
        return Sized(*upright)
    if tuple(annotated) == upright:
        return Sized(*upright)
    if rule == "error":
        turned = (f"; stored {width}×{height}, its EXIF orientation {orientation} turns it" if orientation != 1
                  else "")
        raise DataError(f"{place}: the annotations give the image's size as {annotated[1]}×{annotated[0]}, but "
                        f"{image} is {upright[1]}×{upright[0]} (width×height, upright{turned}); for images shrunk "
                        "after labelling set the source's `size_mismatch: scale` (pixel coordinates scaled to the "
                        "file), or `warn` (kept as written)")
    if rule == "warn":
        notices.note(WARN_NOTICE)
        return Sized(*upright)
    notices.note(SCALE_NOTICE)
    return Sized(*upright, scale=(upright[0] / annotated[0], upright[1] / annotated[1]))


class AnnotationBuilder(Builder):
    """An annotation format's builder: subclasses list the images (`listed`) and name the reading
    function (`READ`) and the class names (`names`)."""

    strict_fields = False  # records offer every field the format has; a spec uses what it needs
    OPTIONS = {"images": "the image folder, for this split (overrides source.images)",
               "names_file": "the class names file, for this split (overrides source.names_file)",
               "size_mismatch": "where the annotations give an image another size than its file's: "
                                + "; ".join(f"{rule}: {what}" for rule, what in SIZE_RULES.items())}
    FIELDS: tuple[str, ...] = ()  # what every record offers
    READ: Reader

    @classmethod
    def option_problem(cls, key: str, value: Any) -> str | None:
        if key == "size_mismatch":
            return None if value in SIZE_RULES else f"expected one of {', '.join(SIZE_RULES)}, received {value!r}"
        return None if isinstance(value, str) else "expected a path (relative to the spec's folder)"

    @property
    def size_rule(self) -> str:
        return self.options.get("size_mismatch", "error")

    def measures_images(self) -> bool:
        """Whether each image's file is measured (its size checked against the annotations'): where
        the spec reads a field that depends on it (every one, without a spec)."""
        return self.spec is None or any(field in feature.source_names for feature in self.spec.features.values()
                                        for field in SIZED_FIELDS)

    def fields(self) -> list[str] | None:
        return list(self.FIELDS)

    def setting(self, key: str) -> str | None:
        """`images` or `names_file` from this split's options or the source, resolved against the spec."""
        value = self.options.get(key)
        if value is None and self.spec is not None:
            value = getattr(self.spec.source, key, None)
        if value is None:
            return None
        return self.spec.resolve(value) if self.spec is not None else value

    @property
    def keep_going(self) -> bool:
        return self.spec is not None and self.spec.on_error == "skip"

    # -- what subclasses give --------------------------------------------------------------
    def listed(self) -> tuple[list[Any], list[dict[str, str]]]:
        """The images, each an item `READ` takes (a tuple: its place in messages first), and what
        listing them had to skip (only under `on_error: skip`; otherwise it raises)."""
        raise NotImplementedError

    def context(self) -> Any:
        """What `READ` needs besides the item (picklable: it travels to the workers)."""
        raise NotImplementedError

    def names(self) -> list[str]:
        """The class names in index order."""
        raise NotImplementedError

    # -- the Builder API -------------------------------------------------------------------
    def class_names(self, field: str) -> list[str] | None:
        return self.names() if field == "label" else None

    def num_records(self, split: str | None) -> int | None:
        return len(self.listed()[0])

    def generate(self, split: str | None) -> Iterator[tuple[Any, dict[str, Any]]]:
        """Each image's `(key, record)`; a bad one raises (the build's batches list them instead)."""
        return self.records(split, Notices())  # (what a build would note is the build's to say)

    def records(self, split: str | None, notices: Notices) -> Iterator[tuple[Any, dict[str, Any]]]:
        """`generate`'s records, what reading them notes counted in `notices`."""
        read, context = type(self).READ, self.context()
        for item in self.listed()[0]:
            yield read(item, context, notices)

    def image_file(self, item: Any, context: Any) -> str | None:
        """The item's image file where it is known before the item is read (for batches cut by
        the files' bytes); None where it isn't (VOC names it inside the XML)."""
        return None

    def encoding_batches(self, split: str | None, needed: Sequence[str], batch_size: int,
                         task: Any = None) -> Iterator[PendingBatch]:
        """Batches of BATCH_BYTES of local image files or BATCH_IMAGES images, whichever comes
        first, as an image folder cuts its batches (the plan's `batch_size`, 32 for images of no
        fixed size, made the per-batch cost of small photos show: a 5,000-photo COCO build took
        1.8x as long); where the files' sizes aren't known without a request each (an object
        store, VOC's images named inside the XML), every `batch_size` images. The first batch
        carries what listing skipped (a batch even when there are no images)."""
        items, skipped = self.listed()
        context = self.context()
        _, runs = self._runs(items, context, batch_size)
        for index, run in enumerate(runs or [()]):
            yield AnnotationBatch(run, type(self).READ, context, needed, self.path or "", self.keep_going,
                                  skipped if index == 0 else None)

    def _runs(self, items: list[Any], context: Any, batch_size: int) -> tuple[list[int], list[tuple[Any, ...]]]:
        """The images' files' bytes (0 where not known before reading the item) and the batches
        `encoding_batches` cuts of them."""
        files = [self.image_file(item, context) for item in items]
        if any(file is None or fs.is_url(file) for file in files):
            sizes = [0] * len(items)
            return sizes, list(cut_runs(items, sizes, 1, max(1, min(batch_size, BATCH_IMAGES))))
        sizes = [_file_size(file) for file in files]
        return sizes, list(cut_runs(items, sizes, BATCH_BYTES, BATCH_IMAGES))

    def item_key(self, item: Any) -> Any:
        """The key `READ` gives the item's record, known from the item alone (None: not known
        before reading it)."""
        return None

    def keyed_items(self, split: str | None, batch_size: int) -> KeyedItems | None:
        """Each image's key (`item_key`), its file's bytes and the batches `encoding_batches` cuts;
        None where listing skipped an entry (`on_error: skip`: the first batch lists it) or a key
        isn't known before its item is read."""
        items, skipped = self.listed()
        keys = [self.item_key(item) for item in items]
        if skipped or not items or any(key is None for key in keys):
            return None
        sizes, runs = self._runs(items, self.context(), batch_size)
        starts = np.cumsum([0] + [len(run) for run in runs]).tolist()
        return KeyedItems(keys, np.asarray(sizes, np.int64), [(0, low, high) for low, high in zip(starts, starts[1:])])

    def keyed_batch(self, split: str | None, rows: Sequence[int], needed: Sequence[str]) -> PendingBatch:
        items = self.listed()[0]
        return AnnotationBatch([items[row] for row in rows], type(self).READ, self.context(), needed, self.path or "",
                               self.keep_going)

    def batches(self, split: str | None, needed: Sequence[str], batch_size: int, task: Any = None) -> Iterator[Batch]:
        for batch in self.encoding_batches(split, needed, batch_size, task):
            yield parsed_batch(batch)


def _file_size(path: str | None) -> int:
    try:
        return os.path.getsize(path or "")
    except OSError:  # (a missing image is said by its record's reading)
        return 0


def problem(keep_going: bool, skipped: list[dict[str, str]], where: str, message: str) -> None:
    """A bad entry found while listing: raised, or listed as skipped under `on_error: skip`."""
    if not keep_going:
        raise DataError(message)
    skipped.append({"record": where, "reason": message})


def image_path(folder: str, name: str) -> str:
    return fs.join(folder, name.replace("\\", "/"))


def image_files(folder: str) -> dict[str, str]:
    """The image files directly in `folder` by their stem (`000005` -> `000005.jpg`), sorted."""
    if not os.path.isdir(folder):
        return {}
    found: dict[str, str] = {}
    for name in sorted(os.listdir(folder)):
        stem, extension = os.path.splitext(name)
        if extension.lower() in EXTENSIONS and not name.startswith("."):
            found.setdefault(stem, name)
    return found


def names_from_file(path: str) -> list[str]:
    """Class names from classes.txt (one a line) or a YOLO data.yaml (`names:` a list, or a
    mapping of indices 0..n-1 to names)."""
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except OSError as error:
        raise DataError(f"{path}: can't read the class names ({error.strerror})") from None
    if os.path.splitext(path)[1].lower() not in (".yaml", ".yml"):
        return [line.strip() for line in text.splitlines() if line.strip()]
    import yaml

    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f", line {mark.line + 1}" if mark is not None else ""
        raise DataError(f"{path}{line}: malformed YAML: {getattr(error, 'problem', error)}") from None
    names = document.get("names") if isinstance(document, dict) else None
    if isinstance(names, dict):
        indices = sorted(names) if all(isinstance(key, int) for key in names) else None
        if indices != list(range(len(names))):
            raise DataError(f"{path}: `names`: expected a list, or a mapping of the indices 0 to "
                            f"{len(names) - 1} to names, received the keys {', '.join(map(str, names))}")
        names = [names[index] for index in indices]
    if not isinstance(names, list) or not names:
        raise DataError(f"{path}: expected `names:` with the class names (a list, or indices to names)")
    return [str(name) for name in names]
