"""`builder: image_folder`: a folder of images, one sub-folder per class, or flat with a labels file.

Each record offers `image` (the file's path), `label` (its class sub-folder's name, or its label
from `options: {labels: labels.csv}` for a flat folder: a CSV with `filename` and `label`
columns, relative to the spec) and `filename` (its path relative to the
folder, which is also its key). File extensions are matched case-blind; hidden files and
folders are ignored; files are listed in sorted order.
"""
from __future__ import annotations

import csv
import os
from typing import Any, Iterator

from ..errors import DataError
from .base import Builder, PathOrigins

EXTENSIONS = {".jpg", ".jpeg", ".png", ".gif", ".bmp", ".webp", ".tif", ".tiff"}


class ImageFolderBuilder(Builder):
    """Images from a folder tree."""

    strict_fields = False  # records offer image, label and filename; a spec uses what it needs

    def generate(self, split: str | None) -> Iterator[tuple[Any, dict[str, Any]]]:
        folder = self._folder()
        labels = self._labels_file(folder)
        found = False
        for relative in _images(folder):
            found = True
            parts = relative.split("/")
            if labels is not None:
                label = labels.get(relative)
            else:
                label = parts[0] if len(parts) > 1 else None
            yield relative, {"image": os.path.join(folder, relative), "label": label, "filename": relative}
        if not found:
            raise DataError(f"{folder}: no images found (extensions: {', '.join(sorted(EXTENSIONS))})")

    def origins(self, keys: list[Any]) -> PathOrigins:
        return PathOrigins(self.path, keys)

    def class_names(self, field: str) -> list[str] | None:
        if field != "label":
            return None
        folder = self._folder()
        labels = self._labels_file(folder)
        if labels is not None:
            return sorted(set(labels.values()))
        return sorted({relative.split("/")[0] for relative in _images(folder) if "/" in relative}) or None

    def _folder(self) -> str:
        if self.path is None or not os.path.isdir(self.path):
            raise DataError(f"{self.path}: expected a folder of images")
        return self.path

    def _labels_file(self, folder: str) -> dict[str, str] | None:
        name = self.options.get("labels")
        if name is None:
            return None
        path = self.spec.resolve(name) if self.spec is not None else os.path.join(folder, name)
        try:
            with open(path, newline="", encoding="utf-8") as file:
                rows = list(csv.DictReader(file))
        except OSError as error:
            raise DataError(f"{path}: can't read the labels file ({error.strerror})") from None
        if rows and not {"filename", "label"} <= set(rows[0]):
            raise DataError(f"{path}, line 1: expected columns `filename` and `label`, received {', '.join(rows[0])}")
        return {row["filename"]: row["label"] for row in rows}


def _images(folder: str) -> Iterator[str]:
    """Paths of the image files below `folder`, relative and with `/`, sorted; hidden ones skipped."""
    for root, folders, files in os.walk(folder):
        folders[:] = sorted(name for name in folders if not name.startswith("."))
        prefix = os.path.relpath(root, folder).replace(os.sep, "/") + "/"
        prefix = "" if prefix == "./" else prefix
        for name in sorted(files):
            if name.startswith(".") or os.path.splitext(name)[1].lower() not in EXTENSIONS:
                continue
            yield prefix + name
