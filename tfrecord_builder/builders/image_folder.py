"""`builder: image_folder`: a folder of images, one sub-folder per class, or flat with a labels file.

Each record offers `image` (the file's path), `label` (its class sub-folder's name, or its label
from `options: {labels: labels.csv}` for a flat folder: a CSV with `filename` and `label`
columns, relative to the spec's folder, not to the image folder) and `filename` (its path relative to the
folder, which is also its key). File extensions are matched case-blind; hidden files and
folders are ignored; folders linked to are followed (a link back up the tree is not); files are
listed in sorted order. As in Keras' `image_dataset_from_directory`, the classes are the
sub-folders, sorted, empty ones included, so a class keeps its index when another gains images.
"""
from __future__ import annotations

import csv
import io
import os
from typing import Any, Iterator

from .. import fs
from ..errors import DataError, SpecError
from .base import Builder, PathOrigins
from .opened import TASK_BYTES

EXTENSIONS = {".jpg", ".jpeg", ".png", ".gif", ".bmp", ".webp", ".tif", ".tiff"}


class ImageFolderBuilder(Builder):
    """Images from a folder tree."""

    strict_fields = False  # records offer image, label and filename; a spec uses what it needs
    OPTIONS = {"labels": "a flat folder: a CSV with `filename` and `label` columns (relative to the spec's folder)"}

    @classmethod
    def option_problem(cls, key: str, value: Any) -> str | None:
        return None if isinstance(value, str) else "expected the path of a CSV file with filename and label columns"

    def generate(self, split: str | None) -> Iterator[tuple[Any, dict[str, Any]]]:
        folder = self._folder()
        for relative, label in self._labelled(folder):
            yield relative, {"image": fs.join(folder, relative), "label": label, "filename": relative}

    def tasks(self, split: str | None) -> list[tuple[tuple[str, str | None], ...]] | None:
        """The sorted images in runs of about `TASK_BYTES` of files, each image with its label."""
        folder = self._folder()
        tasks: list[tuple[tuple[str, str | None], ...]] = []
        current: list[tuple[str, str | None]] = []
        size = 0
        sizes = fs.files_below(folder) if fs.is_url(folder) else None  # a store: one listing
        for relative, label in self._labelled(folder):
            current.append((relative, label))
            try:
                size += sizes.get(relative, 0) if sizes is not None else os.path.getsize(os.path.join(folder, relative))
            except OSError:
                pass  # read as the image is encoded, which says what is wrong
            if size >= TASK_BYTES:
                tasks.append(tuple(current))
                current, size = [], 0
        if current:
            tasks.append(tuple(current))
        return tasks if len(tasks) > 1 else None

    def generate_task(self, split: str | None, task: tuple[tuple[str, str | None], ...]) -> Iterator[tuple[Any, dict[str, Any]]]:
        folder = self._folder()
        for relative, label in task:
            yield relative, {"image": fs.join(folder, relative), "label": label, "filename": relative}

    def _labelled(self, folder: str) -> Iterator[tuple[str, str | None]]:
        """Each image's path below the folder, sorted, with its label (its class folder, or the
        labels file's)."""
        labels = self._labels_file(folder)
        found = False
        unseen = dict(labels) if labels is not None else {}
        for relative in _images(folder):
            found = True
            parts = relative.split("/")
            if labels is not None:
                label = labels[relative][1] if relative in labels else None
                unseen.pop(relative, None)
            else:
                label = parts[0] if len(parts) > 1 else None
            yield relative, label
        if not found:
            raise DataError(f"{folder}: no images found (extensions: {', '.join(sorted(EXTENSIONS))})")
        if unseen:  # a listed example that isn't there would otherwise be lost without a word
            filename, (where, _) = next(iter(unseen.items()))
            more = f" (and {len(unseen) - 1} more rows)" if len(unseen) > 1 else ""
            raise DataError(f"{where}: `{filename}` is not an image file in {folder}{more}")

    def origins(self, keys: list[Any]) -> PathOrigins:
        return PathOrigins(self.path, keys)

    def class_names(self, field: str) -> list[str] | None:
        if field != "label":
            return None
        folder = self._folder()
        labels = self._labels_file(folder)
        if labels is not None:
            return sorted({label for _, label in labels.values()})
        if fs.is_url(folder):  # a store has no empty folders: the classes are the prefixes with images
            return [name for name in fs.subfolders(folder) if not name.startswith(".")] or None
        names = [name for name in os.listdir(folder) if os.path.isdir(os.path.join(folder, name))]
        return [name for name, _ in _followed(folder, names, _ancestors(folder))] or None

    def _folder(self) -> str:
        if self.path is None or not fs.isdir(self.path):
            raise DataError(f"{self.path}: expected a folder of images")
        return self.path

    def _labels_file(self, folder: str) -> dict[str, tuple[str, str]] | None:
        """The labels file's `filename` -> (its place, e.g. "labels.csv, line 3", its label)."""
        name = self.options.get("labels")
        if name is None:
            return None
        path = self.spec.resolve(name) if self.spec is not None else os.path.join(folder, name)
        labels: dict[str, tuple[str, str]] = {}
        try:
            with io.TextIOWrapper(fs.open_file(path), encoding="utf-8", newline="") as file:
                reader = csv.DictReader(file)
                if reader.fieldnames is not None and not {"filename", "label"} <= set(reader.fieldnames):
                    raise DataError(f"{path}, line 1: expected columns `filename` and `label`, "
                                    f"received {', '.join(reader.fieldnames)}")
                line = reader.line_num + 1
                for row in reader:
                    where = f"{path}, line {line}"
                    filename, label = row["filename"], row["label"]
                    if filename is None or label is None:
                        raise DataError(f"{where}: expected a filename and a label")
                    filename = filename.replace(os.sep, "/")
                    if filename in labels:
                        raise DataError(f"{where}: `{filename}` is listed twice (also at {labels[filename][0]})")
                    labels[filename] = (where, label)
                    line = reader.line_num + 1
        except FileNotFoundError:
            message = self._no_labels_file(path, name, folder)
            if self.spec is not None and "labels" in self.spec.source.options:
                raise self.spec.error(("source", "options", "labels"), message) from None
            raise SpecError(message) from None
        except OSError as error:
            raise DataError(f"{path}: can't read the labels file ({error.strerror})") from None
        except UnicodeDecodeError as error:
            raise DataError(f"{path}: not valid UTF-8 text ({error.reason})") from None
        except csv.Error as error:
            raise DataError(f"{path}, line {reader.line_num}: malformed CSV: {error}") from None
        return labels


    def _no_labels_file(self, path: str, name: str, folder: str) -> str:
        """Where the labels file was looked for, and where it may be instead (the image folder)."""
        message = (f"{path}: labels file not found (options.labels is relative to the spec's folder, "
                   f"{os.path.dirname(path) if self.spec is not None else folder}, not to the image folder)")
        beside = fs.join(folder, name)
        if self.spec is not None and not fs.is_url(beside) and os.path.isfile(beside):
            relative = os.path.relpath(beside, self.spec.base_dir).replace(os.sep, "/")
            message += f"; there is one in the image folder: write `labels: {relative}`"
        return message


def _images(folder: str) -> Iterator[str]:
    """Paths of the image files below `folder`, relative and with `/`, sorted; hidden ones skipped."""
    if fs.is_url(folder):
        yield from _stored_images(folder)
        return
    above = {folder: _ancestors(folder)}  # each folder's real path and its parents'
    for root, folders, files in os.walk(folder, followlinks=True):
        chain = above.pop(root)
        followed = _followed(root, folders, chain)
        for name, real in followed:
            above[os.path.join(root, name)] = chain | {real}
        folders[:] = [name for name, _ in followed]
        prefix = os.path.relpath(root, folder).replace(os.sep, "/") + "/"
        prefix = "" if prefix == "./" else prefix
        for name in sorted(files):
            if name.startswith(".") or os.path.splitext(name)[1].lower() not in EXTENSIONS:
                continue
            yield prefix + name


def _stored_images(url: str) -> list[str]:
    """`_images` below a URL's prefix, in the order a folder's walk gives: a folder's files, then
    its sub-folders, each sorted."""
    found = []
    for relative in fs.files_below(url):
        parts = relative.split("/")
        if any(part.startswith(".") for part in parts) or os.path.splitext(parts[-1])[1].lower() not in EXTENSIONS:
            continue
        found.append((tuple((1, part) for part in parts[:-1]) + ((0, parts[-1]),), relative))
    return [relative for _, relative in sorted(found)]


def _followed(root: str, folders: list[str], chain: set[str]) -> list[tuple[str, str]]:
    """The sub-folders of `root` walked into, sorted, with their real paths: not hidden ones, nor
    links back to `root` or above it (`chain`), whose walk would never end."""
    named = ((name, os.path.realpath(os.path.join(root, name))) for name in sorted(folders) if not name.startswith("."))
    return [(name, real) for name, real in named if real not in chain]


def _ancestors(folder: str) -> set[str]:
    """The real paths of `folder` and every folder above it: a link to one of them is a loop."""
    real = os.path.realpath(folder)
    chain = {real}
    while os.path.dirname(real) != real:
        real = os.path.dirname(real)
        chain.add(real)
    return chain
