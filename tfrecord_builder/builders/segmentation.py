"""`builder: segmentation`: a folder of mask files, each beside its image by name, as Pascal VOC's
`SegmentationClass/` and `JPEGImages/` are (and CVAT's "Segmentation mask" export, and the
`masks/` + `images/` of many data sets).

    source: {builder: segmentation, path: VOC/SegmentationClass, images: VOC/JPEGImages}
    splits: {train: {path: VOC/SegmentationClass, options: {image_set: VOC/ImageSets/Segmentation/train.txt}}, ...}

One record per mask file (PNG or another lossless image file; sorted by name), with `mask` (its
path), `image` (the image file of the same stem in `images:`; default: the mask folder's
sibling `JPEGImages`, else its sibling `images`), `filename` (the image's file name),
`image_id` (the stem) and, where the mask folder has a sibling `SegmentationObject` (VOC's
instance masks), `object_mask` (the file of the same name there). A mask without its image (or
without its object mask) is an error naming both places. A split's `image_set:` option (VOC's
`ImageSets/Segmentation/train.txt`: an image id first on each line) reads only the masks it lists,
in its order; an id without its mask is an error naming the list's line.
"""
from __future__ import annotations

import os
from typing import Any, Iterator

from ..errors import DataError
from .annotations import image_files
from .base import Builder

MASK_EXTENSIONS = (".png", ".bmp", ".tif", ".tiff", ".gif", ".webp")
IMAGE_FOLDERS = ("JPEGImages", "images")
OBJECT_FOLDER = "SegmentationObject"


class SegmentationBuilder(Builder):
    """Images and their masks from two folders, paired by file name."""

    strict_fields = False  # records offer image, mask, filename, image_id (object_mask); a spec uses what it needs
    OPTIONS = {"images": "the image folder, for this split (overrides source.images)",
               "image_set": "a file of image ids, one a line (ImageSets/Segmentation/train.txt): this split's masks"}
    SOURCE_KEYS = frozenset({"images"})
    READS_FOLDER = True

    @classmethod
    def option_problem(cls, key: str, value: Any) -> str | None:
        return None if isinstance(value, str) else "expected a path (relative to the spec's folder)"

    def __init__(self, spec: Any, path: str | None = None, options: dict[str, Any] | None = None):
        super().__init__(spec, path, options)
        self._listing: list[tuple[str, str]] | None = None

    def setting(self, key: str) -> str | None:
        """`images` or `image_set` from this split's options (or the source's `images`), resolved
        against the spec's folder."""
        value = self.options.get(key)
        if value is None and key == "images" and self.spec is not None:
            value = self.spec.source.images
        if value is None:
            return None
        return self.spec.resolve(value) if self.spec is not None else value

    def image_folder(self) -> str:
        """`images:`, or the mask folder's sibling JPEGImages, or its sibling images."""
        given = self.setting("images")
        if given is not None:
            return given
        parent = os.path.dirname(os.path.normpath(self.path or ""))
        for name in IMAGE_FOLDERS:
            if os.path.isdir(os.path.join(parent, name)):
                return os.path.join(parent, name)
        raise DataError(f"{self.path}: no image folder beside the masks (looked for {' and '.join(IMAGE_FOLDERS)} "
                        f"in {parent}); give `images:` in the source")

    def masks(self) -> list[tuple[str, str]]:
        """(stem, mask file name) of each record, sorted by name or in the image set's order."""
        if self._listing is None:
            folder = self.path or ""
            found: dict[str, str] = {}
            for name in sorted(os.listdir(folder)):
                if os.path.splitext(name)[1].lower() in MASK_EXTENSIONS and not name.startswith("."):
                    found.setdefault(os.path.splitext(name)[0], name)
            if not found:
                raise DataError(f"{folder}: no mask files found (extensions: {', '.join(MASK_EXTENSIONS)})")
            image_set = self.setting("image_set")
            stems = sorted(found) if image_set is None else listed_ids(image_set, folder, found)
            self._listing = [(stem, found[stem]) for stem in stems]
        return self._listing

    def num_records(self, split: str | None) -> int | None:
        return len(self.masks())

    def fields(self) -> list[str]:
        objects = os.path.join(os.path.dirname(os.path.normpath(self.path or "")), OBJECT_FOLDER)
        has_objects = os.path.isdir(objects) and os.path.normpath(objects) != os.path.normpath(self.path or "")
        return ["image", "mask", "filename", "image_id"] + (["object_mask"] if has_objects else [])

    def generate(self, split: str | None) -> Iterator[tuple[Any, dict[str, Any]]]:
        folder = self.path or ""
        images = self.image_folder()
        by_stem = image_files(images)
        objects = os.path.join(os.path.dirname(os.path.normpath(folder)), OBJECT_FOLDER)
        has_objects = os.path.isdir(objects) and os.path.normpath(objects) != os.path.normpath(folder)
        for stem, name in self.masks():
            mask = os.path.join(folder, name)
            if stem not in by_stem:
                raise DataError(f"{mask}: no image {stem}.* in {images}; expected each mask beside its image by name")
            found = {"image": os.path.join(images, by_stem[stem]), "mask": mask, "filename": by_stem[stem],
                     "image_id": stem}
            if has_objects:
                if not os.path.isfile(os.path.join(objects, name)):
                    raise DataError(f"{mask}: no instance mask {name} in {objects}")
                found["object_mask"] = os.path.join(objects, name)
            yield stem, found


def listed_ids(image_set: str, folder: str, present: dict[str, str]) -> list[str]:
    """The stems an image set lists (the first word of each line), in its order."""
    try:
        with open(image_set, encoding="utf-8") as file:
            lines = file.read().splitlines()
    except OSError as error:
        raise DataError(f"{image_set}: can't read the image set ({error.strerror})") from None
    stems: list[str] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, 1):
        words = line.split()
        if not words:
            continue
        if words[0] not in present:
            raise DataError(f"{image_set}, line {number}: image {words[0]!r} has no mask in {folder}")
        if words[0] in seen:
            raise DataError(f"{image_set}, line {number}: image {words[0]!r} is listed twice")
        seen.add(words[0])
        stems.append(words[0])
    return stems
