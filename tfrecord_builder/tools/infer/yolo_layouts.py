"""The YOLO layouts, each read by the `yolo` builder:

- **Ultralytics**: a folder with `images/` and `labels/*.txt`, and `data.yaml` or `classes.txt` (in
  it or above it); a split a sub-folder of `images/` (`images/train`, `images/val`) when it holds
  only sub-folders.
- **data.yaml's paths** (Roboflow's export: `train/images`, `valid/images`, `test/images` beside
  a top-level `data.yaml` with `names:` and `train: ../train/images`, `val: ...`): a split each
  of `train`, `val`, `test` that names an images folder, relative to `path:` or to the YAML's
  folder (Roboflow's `../train/images` read as Ultralytics reads it: from the YAML's folder when
  the path above it doesn't exist).
- **darknet** (CVAT's "YOLO 1.1"): `obj.names`, `obj.data` and a folder `obj_SPLIT_data/` per
  split, each image's `.txt` beside it; `SPLIT.txt` lists the folder's images.
"""
from __future__ import annotations

import os
import re

import yaml

from ...builders.annotations import names_from_file
from ...builders.image_folder import EXTENSIONS, _images
from ...errors import DataError
from .parts import Found, Part, listed, ordered

NAMES_FILES = ("data.yaml", "data.yml", "classes.txt")
_DARKNET = re.compile(r"obj_(.+)_data\Z")


def yolo_layout(data: str) -> Found | None:
    return _ultralytics(data) or _yaml_paths(data)


def _names_file(data: str) -> str | None:
    """data.yaml, data.yml or classes.txt in the folder, else in the one above it (a split's folder)."""
    for folder in (data, os.path.dirname(os.path.abspath(data))):
        for name in NAMES_FILES:
            if os.path.isfile(os.path.join(folder, name)):
                return os.path.join(folder, name)
    return None


def _ultralytics(data: str) -> Found | None:
    images, labels = os.path.join(data, "images"), os.path.join(data, "labels")
    if not (os.path.isdir(images) and os.path.isdir(labels)):
        return None
    if not any(name.endswith(".txt") for _, _, files in os.walk(labels) for name in files):
        return None
    names_file = _names_file(data)
    if names_file is None:
        raise DataError(f"{data}: a YOLO folder (images/, labels/*.txt) without class names: expected data.yaml "
                        "(`names:`) or classes.txt (one name a line) in it")
    # a split a sub-folder of images/ (one without labels/ beside it too: its images have no objects)
    splits = [name for name in listed(images) if os.path.isdir(os.path.join(images, name)) and not name.startswith(".")]
    loose = [name for name in listed(images) if os.path.splitext(name)[1].lower() in EXTENSIONS]
    if len(splits) > 1 and not loose:
        return Found("yolo", ordered({split: Part(os.path.join(images, split), names_file=names_file)
                                      for split in splits}))
    return Found("yolo", {None: Part(data, names_file=names_file)})


def _yaml_paths(data: str) -> Found | None:
    """A data.yaml whose `train:` (and `val:`, `test:`) name images folders."""
    names_file = next((os.path.join(data, name) for name in NAMES_FILES[:2] if os.path.isfile(os.path.join(data, name))),
                      None)
    if names_file is None:
        return None
    try:
        with open(names_file, encoding="utf-8") as file:
            document = yaml.safe_load(file)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None  # (the builder says what is wrong with it, if it reads it)
    if not isinstance(document, dict) or not isinstance(document.get("train"), str):
        return None
    root = os.path.join(data, document["path"]) if isinstance(document.get("path"), str) else data
    folders = {split: folder for split in ("train", "val", "test") if isinstance(document.get(split), str)
               if (folder := _images_folder(root, data, document[split])) is not None}
    if "train" not in folders:
        return None
    names_from_file(names_file)  # the names, or the line that says why not
    parts = {split: Part(folder, names_file=names_file) for split, folder in folders.items()}
    written = ", ".join(f"{split}: {document[split]}" for split in folders)
    notes = [f"the splits are data.yaml's ({written})."]
    if len(parts) == 1:
        return Found("yolo", {None: parts["train"]}, [f"data.yaml names only `train:` ({document['train']}): "
                                                      "divided by the fractions below."])
    return Found("yolo", ordered(parts), notes)  # type: ignore[arg-type]


def _images_folder(root: str, here: str, written: str) -> str | None:
    """An images folder data.yaml names: below `path:` (or the YAML's folder), else from the
    YAML's folder with its leading `../` left out (Roboflow writes `../train/images` beside it)."""
    for base, path in ((root, written), (here, re.sub(r"^(\.\./)+", "", written.replace("\\", "/")))):
        folder = os.path.normpath(os.path.join(base, path))
        if os.path.isdir(folder):
            return folder
    return None


def darknet_layout(data: str) -> Found | None:
    """CVAT's YOLO 1.1: obj.names (or obj.data naming it) and obj_SPLIT_data/ folders."""
    folders = {match.group(1): os.path.join(data, name) for name in listed(data)
               if (match := _DARKNET.match(name)) and os.path.isdir(os.path.join(data, name))}
    settings = _obj_data(os.path.join(data, "obj.data"))
    if not folders or not (settings or os.path.isfile(os.path.join(data, "obj.names"))):
        return None
    names_file = os.path.join(data, os.path.basename(settings.get("names", "obj.names")))
    if not os.path.isfile(names_file):
        raise DataError(f"{data}: a darknet folder (obj_*_data/) without its class names: expected "
                        f"{os.path.basename(names_file)} (one name a line) in it")
    for split, folder in folders.items():
        _check_list(data, split, folder, settings)
    parts = {split: Part(folder, names_file=names_file) for split, folder in folders.items()}
    if len(parts) == 1:
        (split,) = parts
        return Found("yolo", {None: parts[split]}, [f"darknet (CVAT's YOLO 1.1): one folder, obj_{split}_data/: "
                                                    "divided by the fractions below."])
    return Found("yolo", ordered(parts),  # type: ignore[arg-type]
                 ["darknet (CVAT's YOLO 1.1): a split a obj_*_data/ folder."])


def _obj_data(path: str) -> dict[str, str]:
    """obj.data's `key = value` lines (classes, train, valid, names, backup)."""
    if not os.path.isfile(path):
        return {}
    found = {}
    with open(path, encoding="utf-8", errors="replace") as file:
        for line in file:
            key, equals, value = line.partition("=")
            if equals:
                found[key.strip()] = value.strip()
    return found


def _check_list(data: str, split: str, folder: str, settings: dict[str, str]) -> None:
    """The split's list (`train.txt`, as obj.data names it) holds exactly the folder's images: the
    yolo builder reads every image of the folder, so a list of fewer would be ignored in silence."""
    written = settings.get(split) or settings.get("valid" if split == "val" else split) or f"{split}.txt"
    path = os.path.join(data, os.path.basename(written))
    if not os.path.isfile(path):
        return
    marker = os.path.basename(folder) + "/"
    with open(path, encoding="utf-8", errors="replace") as file:
        named = {line.strip().replace("\\", "/").split(marker, 1)[-1] for line in file if line.strip()}
    present = {relative for relative, _ in _images(folder)}
    if named != present:
        extra = sorted(named - present) or sorted(present - named)
        which = "lists an image not" if named - present else "leaves out an image"
        raise DataError(f"{path}: {which} in {folder} ({extra[0]}): the yolo builder reads every image of the folder; "
                        "make the list and the folder agree")
