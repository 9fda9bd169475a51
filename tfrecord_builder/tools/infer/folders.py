"""The plan of a folder of images: one sub-folder per class (`image` and a class `label`), or a
flat folder (`image` and its `filename`)."""
from __future__ import annotations

import os

from ...errors import DataError
from .image_files import image_guess, look, spread
from .names import dataset_name
from .plan import Declaration, Plan
from .sources import Folder


def folder_plan(folder: Folder) -> Plan:
    """`image_folder`: the images (their encoding and shape from the files) and their classes."""
    outside = [file for file, label in zip(folder.files, folder.labels) if label is None]
    if outside and len(outside) != len(folder.files):
        count = f"{len(outside)} images lie" if len(outside) > 1 else "1 image lies"
        raise DataError(f"{folder.path}: {count} beside the class sub-folders (e.g. {outside[0]}); "
                        "expected every image in a class sub-folder, or all of them in the folder itself")
    sample = spread(folder.files)
    pictures = [look(os.path.join(folder.path, file), os.path.join(folder.path, file)) for file in sample]
    image = image_guess(pictures, len(folder.files))
    plan = Plan(name=dataset_name(folder.path), source={"builder": "image_folder"})
    plan.features.append(Declaration("image", image.fields(),
                                     [f"guessed: {image.note}"], column="image"))
    if outside:
        plan.features.append(Declaration("filename", {"dtype": "string"},
                                         ["the image's path in the folder (a flat folder: no classes)"],
                                         column="filename"))
        plan.header = [f"Written by `tfrecord-builder infer` from {_name(folder)}: {len(folder.files)} images, "
                       "no class sub-folders."]
        return plan
    classes = folder.classes
    by = " by number" if classes != sorted(classes) else ""
    shown = ", ".join(classes[:10]) + (f" and {len(classes) - 10} more" if len(classes) > 10 else "")
    plan.features.append(Declaration("label", {"type": "class_label"},
                                     [f"names: the {len(classes)} sub-folders, sorted{by}: {shown}"], column="label"))
    plan.label = "label"
    plan.label_note = "the class sub-folder; input_fn yields (features, label)"
    plan.header = [f"Written by `tfrecord-builder infer` from {_name(folder)}: {len(folder.files)} images in "
                   f"{len(classes)} class sub-folders."]
    return plan


def _name(folder: Folder) -> str:
    return os.path.basename(os.path.normpath(folder.path)) + "/"
