"""What TensorFlow Datasets reads in a dataset folder, so `tfds.builder_from_directory` opens ours.

TFDS reads `dataset_info.json` (its DatasetInfo protobuf as JSON: name, version, splits with
their shard lengths and a file name template that matches our shard names, in either naming), `features.json`
(its FeaturesDict) and a `KEY.labels.txt` per class label with names. Each feature is described
from its reading description (read/tfdata.py), so TFDS parses the keys our records hold:
a class label is a `ClassLabel`, an image an `Image` (a raw one a uint8 `Tensor` of bytes; a
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

from ..features import AudioFeature, BBoxFeature, ClassLabelFeature, Feature
from ..features.image import ImageFeature
from .info import write_file
from .naming import FEATURES_FILE, INFO_FILE, TFDS_TEMPLATES, labels_name

_FEATURES = "tensorflow_datasets.core.features."
TENSOR = _FEATURES + "tensor_feature.Tensor"
CLASS_LABEL = _FEATURES + "class_label_feature.ClassLabel"
IMAGE = _FEATURES + "image_feature.Image"
SEQUENCE = _FEATURES + "sequence_feature.Sequence"
AUDIO = _FEATURES + "audio_feature.Audio"
BBOX = _FEATURES + "bounding_boxes.BBoxFeature"
FEATURES_DICT = _FEATURES + "features_dict.FeaturesDict"
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
    keys = [key for feature in spec.features.values() for key in _tfds_entries(feature, spec.input)]
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
        for key, described in _tfds_entries(feature, options).items():
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
    return {labels_name(feature.record_key): "".join(f"{name}\n" for name in feature.names)
            for feature in info.spec.features.values()
            if isinstance(feature, ClassLabelFeature) and feature.names is not None and not feature.first_id}


def _tfds_entries(feature: Feature, options: Any) -> dict[str, dict[str, Any]]:
    """The TFDS features of `feature` by record key: one, but for boxes in four lists."""
    if isinstance(feature, BBoxFeature) and feature.layout == "object_detection":
        floats = {"pythonClassName": SEQUENCE, "sequence": {"feature": _tensor([], "float32"), "length": "-1"}}
        return {key: floats for key in feature.record_keys}
    if isinstance(feature, AudioFeature):  # its length (and a window's offset) beside it, as plain numbers
        numbers = [feature.length_key] + ([feature.offset_key] if feature.window is not None else [])
        return {feature.record_key: tfds_feature(feature, options), **{key: _tensor([], "int64") for key in numbers}}
    parsed = feature.parsing()
    if feature.record_key not in parsed:  # stored under keys of its own (the Object Detection API's keypoint lists)
        return {key: _tensor(_dimensions([None] if kind == "var" else shape), dtype)
                for key, (kind, dtype, shape) in parsed.items() if key.startswith(feature.record_key + "/")}
    entries = {feature.record_key: tfds_feature(feature, options)}
    for companion in feature.reading(options).get("companions", {}).values():  # keypoints' visibilities
        key, (kind, dtype, shape) = next(iter(companion["parse"].items()))
        entries.setdefault(key, _tensor(_dimensions([None] if kind == "var" else shape), dtype))
    return entries


def tfds_feature(feature: Feature, options: Any) -> dict[str, Any]:
    """The TFDS feature that parses and decodes what `feature` stores under its record key."""
    kind, stored, shape = next(iter(feature.parsing().values()))
    if isinstance(feature, ImageFeature):
        dimensions = _dimensions(feature.shape)
        if feature.encoding == "raw":  # the pixels' bytes
            return _tensor(dimensions, "uint8", "bytes")
        # TFDS's Image takes uint16 for PNG (its decode_png(dtype=uint16)): the values stored, exactly
        return {"pythonClassName": IMAGE, "image": {"shape": {"dimensions": dimensions}, "dtype": feature.dtype,
                                                     "encodingFormat": feature.encoding}}
    if isinstance(feature, AudioFeature):  # TFDS's Audio reads our samples' bytes (decode_raw, little-endian)
        shape = ["-1"] if feature.channels == 1 else ["-1", str(feature.channels)]
        return {"pythonClassName": AUDIO, "audio": {
            "shape": {"dimensions": shape}, "dtype": "int16" if feature.encoding == "pcm16" else "float32",
            "sampleRate": str(feature.sample_rate), "encoding": "bytes"}}
    if isinstance(feature, BBoxFeature):  # TFDS's own `objects/bbox`: REL_YXYX fractions, as stored
        box = {"pythonClassName": BBOX, "boundingBox": {"shape": {"dimensions": ["4"]}, "dtype": "float32",
                                                         "bboxFormat": "REL_YXYX"}}
        return {"pythonClassName": SEQUENCE, "sequence": {"feature": box, "length": "-1"}}
    dimensions = _dimensions([None] if kind == "var" else shape)
    if isinstance(feature, ClassLabelFeature) and feature.first_id:  # ids, not TFDS's indices: plain numbers
        return _tensor(dimensions, "int64")
    if isinstance(feature, ClassLabelFeature):
        count = len(feature.names) if feature.names is not None else feature.num_classes
        label = {"pythonClassName": CLASS_LABEL, "classLabel": {"numClasses": str(count)} if count else {}}
        if not dimensions:
            return label
        if len(dimensions) > 1:  # TFDS's Sequence of labels is one-dimensional
            return _tensor(dimensions, "int64")
        return {"pythonClassName": SEQUENCE, "sequence": {"feature": label, "length": dimensions[0]}}
    return _tensor(dimensions, _decoded_dtype(feature, stored, options))


def _decoded_dtype(feature: Feature, stored: str, options: Any) -> str:
    """The dtype the decode steps end in: the last cast's, float64's, or the stored one."""
    dtype = stored
    for step, arguments in feature.decoding(options):
        if step == "cast":
            dtype = arguments["dtype"]
        elif step == "exact_float64":
            dtype = "float64"
    return dtype


def _tensor(dimensions: list[str], dtype: str, encoding: str = "none") -> dict[str, Any]:
    return {"pythonClassName": TENSOR, "tensor": {"shape": {"dimensions": dimensions} if dimensions else {},
                                                   "dtype": dtype, "encoding": encoding}}


def _dimensions(shape: list[int | None]) -> list[str]:
    return [str(-1 if dim is None else dim) for dim in shape]


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
