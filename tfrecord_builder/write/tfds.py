"""What TensorFlow Datasets reads in a dataset folder, so `tfds.builder_from_directory` opens ours.

TFDS reads `dataset_info.json` (its DatasetInfo protobuf as JSON: name, version, splits with
their shard lengths and a file name template that matches our shard names, in either naming), `features.json`
(its FeaturesDict) and a `KEY.labels.txt` per class label with names. Each feature type describes
its own (`Feature.tfds_features` and `tfds_labels`; by default from its reading description,
read/tfdata.py), so TFDS parses the keys our records hold: a class label is a `ClassLabel`, an image an `Image` (a raw one a uint8 `Tensor` of bytes; a
mask an `Image` of one channel, its class indices, PNG), bounding boxes a `Sequence` of
`BBoxFeature`s (in the object_detection layout, a `Sequence` of floats under each of its four
keys), everything else a `Tensor` of the feature's dtype and shape, variable length as `-1`.

TFDS reads `tf.train.Example`s from uncompressed shards only. A SequenceExample dataset, or one
with compressed shards, is one TFDS refuses with the reason in one line, never one that reads back
empty: its dataset_info.json marks its config as blocked with the reason (`isBlocked`), which TFDS
raises as it opens the folder, with or without tfrecord_builder installed; and it has no
`features.json`, which TFDS reads before that check. (Datasets built by earlier 0.3 versions name
a feature class of ours instead, tfrecord_builder/tfds_refusal.py, which refuses only where our
package is installed.)
"""
from __future__ import annotations

import json
import os
from typing import Any

from ..features.tfds import FEATURES_DICT
from .info import write_file
from .naming import FEATURES_FILE, INFO_FILE, TFDS_TEMPLATES, labels_name

# the config an unreadable dataset's refusal is recorded for: TFDS checks a blocked config, not a
# blocked version, of a folder it opens
REFUSED_CONFIG = "tfrecord_builder"


def unreadable_reason(info: Any) -> str | None:
    """Why TFDS can't read the dataset (None: it can)."""
    spec = info.spec
    if spec.is_sequence:
        return (f"{spec.name} {spec.version} holds tf.train.SequenceExample records, which TensorFlow Datasets "
                f"does not read (it would see their sequence features as empty); read it with {spec.name}_input.py, "
                "tb.input_fn or tb.read")
    if spec.output.compression != "none":
        return (f"{spec.name} {spec.version} has {spec.output.compression}-compressed shards, which TensorFlow "
                f"Datasets does not read; read it with {spec.name}_input.py, tb.input_fn or tb.read, or build it "
                "with compression: none")
    keys = [key for feature in spec.features.values() for key in feature.tfds_features(spec.input)]
    for key in keys:
        nested = next((other for other in keys if other.startswith(key + "/")), None)
        if nested is not None:  # TFDS nests keys at "/": one can't be a feature and hold others
            return (f"{spec.name} {spec.version} stores a feature under the key {key!r} and another under {nested!r}, "
                    f"which TensorFlow Datasets nests inside it; give the first another `key:` (an object_detection "
                    "layout's image: `key: image/encoded`), or read it with tb.input_fn or tb.read")
    return None


def dataset_info(info: Any) -> dict[str, Any]:
    """TFDS's DatasetInfo of the dataset, as the protobuf JSON it reads (int64s are strings)."""
    spec = info.spec
    reason = unreadable_reason(info)
    described = spec.description or ""
    if reason is not None:
        described = f"{described}\n\n{reason}".strip()
    value: dict[str, Any] = {
        "name": spec.name,
        "version": spec.version,
        "description": described,
        "fileFormat": "tfrecord",
        "moduleName": "tfrecord_builder",
        "disableShuffling": not spec.output.shuffle,
        **({"configName": REFUSED_CONFIG, "isBlocked": reason} if reason is not None else {}),
        "splits": [{
            "name": name,
            "numBytes": str(split.num_bytes),
            "shardLengths": [str(shard["num_examples"]) for shard in split.shards],
            "filepathTemplate": TFDS_TEMPLATES[spec.output.naming],  # how TFDS finds the shards by name
        } for name, split in info.splits.items()],
    }
    label = spec.features[spec.label].record_key if spec.label is not None else None
    if reason is None and label is not None and "/" not in label:
        # as_supervised=True gives (features, label), as input_fn does; TFDS looks a key up among the
        # top-level features, so a key with "/" is reached through its first part (a nested dict)
        tops = [feature.record_key.split("/")[0] for name, feature in spec.features.items() if name != spec.label]
        inputs = {top: {"featureKey": top} for top in tops}
        value["supervisedKeys"] = {"tuple": {"items": [{"dict": {"dict": inputs}}, {"featureKey": label}]}}
    return value


def features_file(info: Any) -> dict[str, Any]:
    """TFDS's features.json: a FeaturesDict by record key (keys with `/` nest, as TFDS nests them)."""
    options = info.spec.input
    nested: dict[str, Any] = {}
    for feature in info.spec.features.values():
        for key, described in feature.tfds_features(options).items():
            *parents, leaf = key.split("/")
            place = nested
            for parent in parents:
                place = place.setdefault(parent, {})
            place[leaf] = described
    return {"pythonClassName": FEATURES_DICT, "featuresDict": {"features": _dicts(nested)}}


def _dicts(nested: dict[str, Any]) -> dict[str, Any]:
    return {key: value if "pythonClassName" in value
            else {"pythonClassName": FEATURES_DICT, "featuresDict": {"features": _dicts(value)}}
            for key, value in nested.items()}


def label_files(info: Any) -> dict[str, str]:
    """The class names of each class label with names, as TFDS reads them (`KEY.labels.txt`)."""
    if unreadable_reason(info) is not None:
        return {}
    return {labels_name(key): "".join(f"{name}\n" for name in names)
            for feature in info.spec.features.values() for key, names in feature.tfds_labels().items()}


def tfds_files(info: Any) -> dict[str, bytes]:
    """Every file TFDS reads but dataset_info.json (written last, by the build), by name: none for a
    dataset TFDS can't read (a features.json would be read, and could fail, before TFDS meets the
    refusal in dataset_info.json)."""
    if unreadable_reason(info) is not None:
        return {}
    files = {name: text.encode("utf-8") for name, text in label_files(info).items()}
    files[FEATURES_FILE] = _json(features_file(info))
    return files


def info_json(info: Any) -> bytes:
    """The text of dataset_info.json."""
    return _json(dataset_info(info))


def _json(value: Any) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def write_metadata(info: Any, folder: str) -> None:
    """Writes the dataset's metadata into `folder`: ours (tfrecord_builder.json), TFDS's features and
    class names, and last dataset_info.json, the commit: only then is the folder a whole dataset."""
    info.write(folder)
    for name, data in tfds_files(info).items():
        write_file(os.path.join(folder, name), data)
    write_file(os.path.join(folder, INFO_FILE), info_json(info))
