"""`builder: image_folder`: a folder of images, one sub-folder per class, or flat with a labels file.

Each record offers `image` (the file's path), `label` (its class sub-folder's name, or its label
from `options: {labels: labels.csv}` for a flat folder: a CSV with `filename` and `label`
columns, relative to the spec's folder, not to the image folder) and `filename` (its path relative to the
folder, which is also its key). File extensions are matched case-blind; hidden files and
folders are ignored; folders linked to are followed (a link back up the tree is not); files are
listed in sorted order. As in Keras' `image_dataset_from_directory`, the classes are the
sub-folders, sorted, empty ones included, so a class keeps its index when another gains images;
unlike Keras, folders named by numbers only (`0` to `10`) sort by number, so `10` is class 10.
"""
from __future__ import annotations

import csv
import io
import os
from typing import Any, Iterable, Iterator, Sequence, TypeVar

import numpy as np

from .. import fs
from ..errors import DataError, SpecError
from ..features.class_label import class_order
from .base import Batch, Builder, KeyedItems, PathOrigins
from .opened import task_bytes

EXTENSIONS = {".jpg", ".jpeg", ".png", ".gif", ".bmp", ".webp", ".tif", ".tiff"}


# A batch holds at most this many bytes of files (and the feature's `batch_rows` images): large
# photos travel in small batches and spread over the workers, small ones in full batches
T = TypeVar("T")
BATCH_BYTES = 4 * 1024**2

Listed = tuple[str, "str | None", int]  # an image's path below the folder, its label, its file's bytes


class ImageFolderBuilder(Builder):
    """Images from a folder tree."""

    strict_fields = False  # records offer image, label and filename; a spec uses what it needs
    OPTIONS = {"labels": "a flat folder: a CSV with `filename` and `label` columns (relative to the spec's folder)"}
    READS_FOLDER = True

    @classmethod
    def option_problem(cls, key: str, value: Any) -> str | None:
        return None if isinstance(value, str) else "expected the path of a CSV file with filename and label columns"

    def __init__(self, spec: Any, path: str | None = None, options: dict[str, Any] | None = None):
        super().__init__(spec, path, options)
        self._listing: tuple[str, list[Listed]] | None = None  # (folder, what `_listed` found there)

    def generate(self, split: str | None) -> Iterator[tuple[Any, dict[str, Any]]]:
        return self.generate_task(split, tuple(self._listed()))

    def tasks(self, split: str | None) -> list[tuple[Listed, ...]] | None:
        """The sorted images in runs of about `task_bytes()` of files, each image with its label."""
        tasks = list(_runs(self._listed(), task_bytes(), None))
        return tasks if len(tasks) > 1 else None

    def generate_task(self, split: str | None, task: tuple[Listed, ...]) -> Iterator[tuple[Any, dict[str, Any]]]:
        folder = self._folder()
        for relative, label, _ in task:
            yield relative, {"image": fs.join(folder, relative), "label": label, "filename": relative}

    def encoding_batches(self, split: str | None, needed: Sequence[str], batch_size: int,
                         task: tuple[Listed, ...] | None = None) -> Iterator[Batch]:
        """The task's images in batches of `batch_size` or `BATCH_BYTES` of files, whichever
        comes first, made column by column: `generate`'s records without a dict per image."""
        folder = self._folder()
        for run in _runs(self._listed() if task is None else task, BATCH_BYTES, batch_size):
            yield self._images_batch(folder, run, needed)

    def keyed_items(self, split: str | None, batch_size: int) -> KeyedItems:
        """Every image's path below the folder (its key), its file's bytes, and the batches
        `encoding_batches` cuts of each task: an image's record is known before its file is read."""
        listed = self._listed()
        batches, start = [], 0
        for number, task in enumerate(self.tasks(split) or [tuple(listed)]):
            for run in _runs(task, BATCH_BYTES, batch_size):
                batches.append((number, start, start + len(run)))
                start += len(run)
        return KeyedItems([relative for relative, _, _ in listed],
                          np.array([size for _, _, size in listed], dtype=np.int64), batches)

    def keyed_batch(self, split: str | None, rows: Sequence[int], needed: Sequence[str]) -> Batch:
        listed = self._listed()
        return self._images_batch(self._folder(), [listed[row] for row in rows], needed)

    def _images_batch(self, folder: str, run: Sequence[Listed], needed: Sequence[str]) -> Batch:
        """The batch of these listed images, made column by column."""
        keys = [relative for relative, _, _ in run]
        inside = fs.join(folder, "")  # the folder and its separator, joined once (listed paths are relative)
        offered = {"image": [inside + relative for relative in keys],
                   "label": [label for _, label, _ in run], "filename": keys}
        return self._column_batch(keys, {name: offered.get(name, [None] * len(keys)) for name in needed})

    def _listed(self) -> list[Listed]:
        """Every image below the folder, sorted, with its label and size: listed once per build
        (the plan's tasks and the batches both read it)."""
        folder = self._folder()
        if self._listing is None or self._listing[0] != folder:
            self._listing = (folder, list(self._labelled(folder)))
        return self._listing[1]

    def _labelled(self, folder: str) -> Iterator[Listed]:
        """Each image's path below the folder, sorted, with its label (its class folder, or the
        labels file's) and its size."""
        labels = self._labels_file(folder)
        found = False
        unseen = dict(labels) if labels is not None else {}
        for relative, size in _images(folder):
            found = True
            if labels is not None:
                label = labels[relative][1] if relative in labels else None
                unseen.pop(relative, None)
            else:
                slash = relative.find("/")
                label = relative[:slash] if slash >= 0 else None
            yield relative, label, size
        if not found:
            raise DataError(f"{folder}: no images found (extensions: {', '.join(sorted(EXTENSIONS))})")
        if unseen:  # a listed example that isn't there would otherwise be lost without a word
            filename, (where, _) = next(iter(unseen.items()))
            more = f" (and {len(unseen) - 1} more rows)" if len(unseen) > 1 else ""
            raise DataError(f"{where}: `{filename}` is not an image file in {folder}{more}")

    def origins(self, keys: list[Any]) -> PathOrigins:
        return PathOrigins(self.path, keys)

    def fields(self) -> list[str]:
        return ["image", "label", "filename"]

    def class_names(self, field: str) -> list[str] | None:
        if field != "label":
            return None
        folder = self._folder()
        labels = self._labels_file(folder)
        if labels is not None:
            return class_order(label for _, label in labels.values())
        if fs.is_url(folder):  # a store has no empty folders: the classes are the prefixes with images
            return class_order(name for name in fs.subfolders(folder) if not name.startswith(".")) or None
        names = [name for name in os.listdir(folder) if os.path.isdir(os.path.join(folder, name))]
        return class_order(name for name, _ in _followed(folder, names, _ancestors(folder))) or None

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
        # the hint is a path relative to the spec's folder: only an image folder on this machine has one
        if self.spec is not None and not fs.is_url(beside) and os.path.isfile(beside):
            relative = os.path.relpath(beside, self.spec.base_dir).replace(os.sep, "/")
            message += f"; there is one in the image folder: write `labels: {relative}`"
        return message


def _images(folder: str) -> list[tuple[str, int]]:
    """Paths of the image files below `folder`, relative and with `/`, sorted, with their sizes
    (0 where unreadable: reading the image says why); hidden ones skipped. A folder's files come
    before its sub-folders, as `os.walk` gives them."""
    if fs.is_url(folder):  # a store lists every object below a prefix at once, and has no links to follow
        return _stored_images(folder)
    return list(_walk(folder, "", _ancestors(folder)))


def _walk(root: str, prefix: str, chain: set[str]) -> Iterator[tuple[str, int]]:
    """`_images` below `root` (`prefix` its path below the top); `chain` the real paths above."""
    listed = _folder_entries(root)
    if listed is None:  # a folder that can't be listed is passed over, as os.walk does
        return
    files, folders = listed
    for name, size in files:
        yield prefix + name, size
    for name, real in _followed(root, folders, chain):
        yield from _walk(os.path.join(root, name), f"{prefix}{name}/", chain | {real})


# Files are stat'ed by name in their open folder (`fstatat`) where the system offers it: the kernel
# then looks up one name, not every folder of the path again. 20,000 photos listed and stat'ed in
# 55-80 ms, where a stat of each path took 115-135 ms (in two threads); with the folder open, two
# threads were slower than one, taking the GIL back after every stat
_BY_DESCRIPTOR = os.scandir in os.supports_fd and os.stat in os.supports_dir_fd


def _folder_entries(root: str) -> tuple[list[tuple[str, int]], list[str]] | None:
    """The image files right in `root`, sorted by name, each with its size (0 where it can't be
    stat'ed), and the names of its sub-folders (links followed); None where it can't be listed."""
    try:
        descriptor = (os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
                      if _BY_DESCRIPTOR else None)
    except OSError:
        return None
    try:
        files: list[str] = []
        folders: list[str] = []
        try:
            with os.scandir(root if descriptor is None else descriptor) as entries:
                for entry in entries:
                    try:
                        is_folder = entry.is_dir()  # links followed
                    except OSError:
                        is_folder = False
                    (folders if is_folder else files).append(entry.name)
        except OSError:
            return None
        # (os.path.splitext's extension, without its call: 20,000 photos, 30 ms; no dot: its last letter)
        images = sorted(name for name in files
                        if not name.startswith(".") and name[name.rfind("."):].lower() in EXTENSIONS)
        return list(zip(images, _sizes(root, descriptor, images))), folders
    finally:
        if descriptor is not None:
            os.close(descriptor)


def _sizes(root: str, descriptor: int | None, names: list[str]) -> list[int]:
    """Each of the files `names` in the folder `root` (open as `descriptor`, or None): its bytes, 0
    where it can't be stat'ed (reading it says why)."""
    sizes = []
    stat = os.stat
    for name in names:
        try:
            sizes.append(stat(name, dir_fd=descriptor).st_size if descriptor is not None
                         else stat(os.path.join(root, name)).st_size)
        except OSError:
            sizes.append(0)
    return sizes


def _runs(listed: Iterable[Listed], max_bytes: int, max_rows: int | None) -> Iterator[tuple[Listed, ...]]:
    """The listed images in order, cut into runs once they hold `max_bytes` of files or
    `max_rows` images."""
    listed = list(listed)
    yield from cut_runs(listed, [size for _, _, size in listed], max_bytes, max_rows)


def cut_runs(items: Sequence[T], sizes: Sequence[int], max_bytes: int, max_rows: int | None) -> Iterator[tuple[T, ...]]:
    """`items` in order, cut into runs once they hold `max_bytes` (by their `sizes`, a file's
    bytes each) or `max_rows` items (at least 1): how image sources cut their batches and tasks.
    Each cut is found in the sizes' running sums (a search a run, not a step of Python an item:
    20,000 photos' tasks and batches in 2 ms, not 15)."""
    ends = np.cumsum(np.asarray(sizes, dtype=np.int64))  # the bytes up to each item, it included
    start, count = 0, len(items)
    while start < count:
        before = int(ends[start - 1]) if start else 0
        last = int(np.searchsorted(ends, before + max_bytes, side="left"))  # the first to reach max_bytes
        if max_rows is not None:
            last = min(last, start + max_rows - 1)
        last = min(max(last, start), count - 1)
        yield tuple(items[start:last + 1])
        start = last + 1


def _stored_images(url: str) -> list[tuple[str, int]]:
    """`_images` below a URL's prefix, in the order a folder's walk gives: a folder's files, then
    its sub-folders, each sorted."""
    found = []
    for relative, size in fs.files_below(url).items():
        parts = relative.split("/")
        if any(part.startswith(".") for part in parts) or os.path.splitext(parts[-1])[1].lower() not in EXTENSIONS:
            continue
        found.append((tuple((1, part) for part in parts[:-1]) + ((0, parts[-1]),), relative, size))
    return [(relative, size) for _, relative, size in sorted(found)]


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
