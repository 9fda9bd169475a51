"""`label_map.pbtxt`: the Object Detection API's label map, beside a dataset of per-object labels.

The API (and TF Model Garden's configs) name classes by id in a text protobuf of `item`s, ids
from 1 (0 is its background). The map is written for the per-object class label (`shape:
[null]`) stored under `image/object/class/label`, else the spec's first per-object class label;
its ids are the class index + 1. A label stored with `first_id: 1` holds exactly these ids; one
stored as indices holds id - 1, which the file's first line says.
"""
from __future__ import annotations

import os
from typing import Any

from .. import atomic
from ..features import Feature

LABEL_MAP_FILE = "label_map.pbtxt"
OBJECT_DETECTION_LABEL_KEY = "image/object/class/label"


def label_map_feature(spec: Any) -> Feature | None:
    """The class label the label map describes: the one under the API's key, else the first per-object one
    (`Feature.classes_per_object`)."""
    labels = [feature for feature in spec.features.values() if feature.classes_per_object]
    keyed = [feature for feature in labels if feature.record_key == OBJECT_DETECTION_LABEL_KEY]
    return (keyed or labels or [None])[0]


def label_map_text(feature: Feature) -> str:
    """The label map of `feature`'s classes, ids from 1, names as the spec (or the source) gave them."""
    names = feature.classes or []
    if feature.first_class_id:
        head = f"# feature `{feature.name}` (key {feature.record_key}) stores these ids\n"
    else:
        head = (f"# feature `{feature.name}` (key {feature.record_key}) stores the class index, id - 1: "
                "give it `first_id: 1` to store these ids\n")
    items = "".join(f"item {{\n  id: {index + 1}\n  name: '{_quoted(name)}'\n}}\n" for index, name in enumerate(names))
    return head + items


def write_label_map(spec: Any, folder: str) -> str | None:
    """Writes `label_map.pbtxt` into `folder` when the spec has a per-object class label; its path or None."""
    feature = label_map_feature(spec)
    if feature is None:
        return None
    return atomic.write_bytes(os.path.join(folder, LABEL_MAP_FILE), label_map_text(feature).encode("utf-8"))


def _quoted(name: str) -> str:
    """A name inside single quotes of protobuf text format: a backslash and a quote escaped."""
    return str(name).replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
