"""The plan of a folder of images: one sub-folder per class (`image` and a class `label`), a
flat folder (`image` and its `filename`), or split folders (`train/`, `valid/`, `test/`) each of
those, a source each.

Sub-folders named like splits are never taken for classes: all of them so named are the data's
own split (a source each); some of them so named beside others is an error saying so. Nor are
the folders of annotation layouts (`images/`, `labels/`, `Annotations/`, `JPEGImages/`, ...) that
layouts.py didn't recognise: infer says why they aren't one it reads.
"""
from __future__ import annotations

import os

from ...errors import DataError
from ...features.class_label import class_order
from .box_tables import box_table_plan
from .image_files import image_guess, look, spread
from .layouts import split_folders, split_word, subfolders
from .names import dataset_name
from .parts import count, listed
from .plan import Declaration, Plan
from .sources import Folder, read_folder, read_table

_TABLES = (".csv", ".tsv")
# the folders of annotation layouts: never classes
LAYOUT_FOLDERS = {"images": "images", "labels": "labels", "annotations": "annotations", "jpegimages": "JPEGImages",
                  "segmentationclass": "SegmentationClass", "segmentationobject": "SegmentationObject",
                  "imagesets": "ImageSets", "masks": "masks"}


def folder_plan(data: str) -> Plan:
    """`image_folder`: the images (their encoding and shape from the files) and their classes,
    or a source per split folder."""
    splits = split_folders(data)
    if len(splits) == 1:  # one split folder (train/ alone): divided by fractions, as a folder without splits
        (folder,) = splits.values()
        plan = folder_plan(folder)
        plan.name, plan.source["path"] = dataset_name(data), folder
        plan.header.append(f"One split folder, {os.path.basename(folder)}/: divided by the fractions below.")
        return plan
    if splits:
        return _split_plan(data, splits)
    _check_class_folders(data)
    return _plan_of(data, [read_folder(data)])


def _check_class_folders(data: str) -> None:
    """A DataError for sub-folders that aren't classes: split names beside others, annotation
    folders (with why infer didn't read them as their layout)."""
    names = [os.path.basename(folder) for folder in subfolders(data)]
    splits = [name for name in names if split_word(name) is not None]
    if splits:
        others = [name for name in names if name not in splits]
        raise DataError(f"{data}: sub-folders {_slashed(splits)} are named like splits, beside {_slashed(others)}: "
                        "expected split folders only (each a source) or class folders only; move or rename them")
    layout = [name for name in names if name.lower() in LAYOUT_FOLDERS]
    if layout:
        raise DataError(f"{data}: sub-folders {_slashed(layout)} are an annotation layout's, not classes, but "
                        f"{_why_not(data, layout)}; expected a layout infer reads (see docs/infer.md) or class "
                        "sub-folders")


def _why_not(data: str, layout: list[str]) -> str:
    lowered = {name.lower() for name in layout}
    if {"images", "labels"} <= lowered:
        return "labels/ holds no YOLO .txt file"
    if "annotations" in lowered:
        return "annotations/ holds no COCO JSON nor Pascal VOC .xml file"
    if "jpegimages" in lowered:
        return "no Annotations/*.xml (VOC's boxes) nor SegmentationClass/ masks lie beside JPEGImages/"
    if lowered & {"segmentationclass", "masks"}:
        return "no JPEGImages/ or images/ beside the masks holds their images by name"
    if lowered == {"images"}:
        return f"nothing beside it annotates them (for the images alone: infer {os.path.join(data, layout[0])})"
    return "no annotations beside them were found"


def _slashed(names: list[str]) -> str:
    return ", ".join(f"{name}/" for name in names) if names else "nothing"


def _split_plan(data: str, splits: dict[str, str]) -> Plan:
    """A source per split folder: each a table of one box a row (Roboflow's "Tensorflow CSV"), each
    a folder of class sub-folders, or each a flat folder."""
    tables = {split: [name for name in listed(folder) if name.lower().endswith(_TABLES)]
              for split, folder in splits.items()}
    if all(len(names) == 1 for names in tables.values()):
        read = [read_table(os.path.join(splits[split], names[0])) for split, names in tables.items()]
        plan = box_table_plan(read, list(splits))
        if plan is None:
            named = ", ".join(os.path.join(split, names[0]) for split, names in tables.items())
            raise DataError(f"{data}: split folders each holding a table ({named}): infer reads them together when "
                            "they are tables of one box a row (filename, class, xmin, ymin, xmax, ymax); infer each "
                            "table instead")
        return plan
    folders = {split: read_folder(folder) for split, folder in splits.items()}
    for split, folder in folders.items():
        if not any(label is not None for label in folder.labels):
            continue
        _check_class_folders(splits[split])
    plan = _plan_of(data, list(folders.values()))
    plan.splits = {split: {"path": folder} for split, folder in splits.items()}
    counts = ", ".join(f"{split} {len(folder.files):,}" for split, folder in folders.items())
    plan.splits_note = f"the split folders, a source each (images: {counts})"
    return plan


def _plan_of(data: str, folders: list[Folder]) -> Plan:
    """The plan of one folder, or of split folders alike (every one flat, or every one of classes)."""
    flat = [all(label is None for label in folder.labels) for folder in folders]
    for folder, is_flat in zip(folders, flat):
        outside = [file for file, label in zip(folder.files, folder.labels) if label is None]
        if outside and not is_flat:
            lie = f"{len(outside)} images lie" if len(outside) > 1 else "1 image lies"
            raise DataError(f"{folder.path}: {lie} beside the class sub-folders (e.g. {outside[0]}); "
                            "expected every image in a class sub-folder, or all of them in the folder itself")
    if len(set(flat)) > 1:
        without = _slashed([_name(folder) for folder, is_flat in zip(folders, flat) if is_flat])
        with_classes = _slashed([_name(folder) for folder, is_flat in zip(folders, flat) if not is_flat])
        raise DataError(f"{data}: {without} hold images without class sub-folders, {with_classes} class "
                        "sub-folders; expected every split alike")
    files = [os.path.join(folder.path, file) for folder in folders for file in folder.files]
    pictures = [look(file, file) for file in spread(files)]
    image = image_guess(pictures, len(files))
    plan = Plan(name=dataset_name(data), source={"builder": "image_folder"})
    plan.features.append(Declaration("image", image.fields(), [f"guessed: {image.note}"], column="image"))
    where = f"{_name_of(data)}" if len(folders) == 1 else f"{_name_of(data)} ({len(folders)} split folders)"
    if flat[0]:
        plan.features.append(Declaration("filename", {"dtype": "string"},
                                         ["the image's path in the folder (a flat folder: no classes)"],
                                         column="filename"))
        plan.header = [f"Written by `tfrecord-builder infer` from {where}: {count(len(files), 'image')}, no class "
                       "sub-folders."]
        return plan
    # as the build takes them: one folder's (or every split's alike), else every split's together, sorted
    same = all(folder.classes == folders[0].classes for folder in folders)
    classes = folders[0].classes if same else class_order(name for folder in folders for name in folder.classes)
    by = " by number" if classes != sorted(classes) else ""
    shown = ", ".join(classes[:10]) + (f" and {len(classes) - 10} more" if len(classes) > 10 else "")
    notes = [f"names: the {len(classes)} sub-folders, sorted{by}: {shown}"]
    lacking = [f"{_name(folder)} lacks {', '.join(sorted(set(classes) - set(folder.classes)))}"
               for folder in folders if set(folder.classes) != set(classes)]
    if lacking:
        notes.append("; ".join(lacking) + " (every split's sub-folders together, sorted)")
    plan.features.append(Declaration("label", {"type": "class_label"}, notes, column="label"))
    plan.label = "label"
    plan.label_note = "the class sub-folder; input_fn yields (features, label)"
    plan.header = [f"Written by `tfrecord-builder infer` from {where}: {count(len(files), 'image')} in "
                   f"{count(len(classes), 'class sub-folder')}."]
    return plan


def _name(folder: Folder) -> str:
    return os.path.basename(os.path.normpath(folder.path))


def _name_of(path: str) -> str:
    return os.path.basename(os.path.normpath(path)) + "/"
