"""What TensorFlow Datasets calls its feature classes, and the plain dicts of its `features.json`
that describe them: what a feature type's `tfds_features` (features/base.py) is made of.

Each is a FeatureConnector as TFDS saves it to JSON (`pythonClassName` and its own content), so
`tfds.builder_from_directory` parses and decodes the keys our records hold; write/tfds.py nests
the features by record key and writes the file. No TFDS is imported: these are names and literals.
"""
from __future__ import annotations

from typing import Any

_FEATURES = "tensorflow_datasets.core.features."
TENSOR = _FEATURES + "tensor_feature.Tensor"
CLASS_LABEL = _FEATURES + "class_label_feature.ClassLabel"
IMAGE = _FEATURES + "image_feature.Image"
SEQUENCE = _FEATURES + "sequence_feature.Sequence"
AUDIO = _FEATURES + "audio_feature.Audio"
BBOX = _FEATURES + "bounding_boxes.BBoxFeature"
FEATURES_DICT = _FEATURES + "features_dict.FeaturesDict"


def tensor(dimensions: list[str], dtype: str, encoding: str = "none") -> dict[str, Any]:
    """TFDS's Tensor of `dimensions` (as dimensions() writes them; [] a scalar) and `dtype`."""
    return {"pythonClassName": TENSOR, "tensor": {"shape": {"dimensions": dimensions} if dimensions else {},
                                                   "dtype": dtype, "encoding": encoding}}


def sequence(feature: dict[str, Any], length: str = "-1") -> dict[str, Any]:
    """TFDS's Sequence of `feature`, `length` of them ("-1": any number)."""
    return {"pythonClassName": SEQUENCE, "sequence": {"feature": feature, "length": length}}


def dimensions(shape: list[int | None]) -> list[str]:
    """A shape as TFDS writes it: each dimension as text, a variable one as "-1"."""
    return [str(-1 if dim is None else dim) for dim in shape]


def parsed_dimensions(kind: str, shape: list[int | None]) -> list[str]:
    """The dimensions of what a parse spec (Feature.parsing: kind, dtype, shape) parses: a `var`
    list is one variable dimension."""
    return dimensions([None] if kind == "var" else shape)


def parsed_tensor(kind: str, dtype: str, shape: list[int | None]) -> dict[str, Any]:
    """The Tensor that holds what a parse spec parses, as stored (no decode steps)."""
    return tensor(parsed_dimensions(kind, shape), dtype)


def decoded_dtype(steps: list[tuple[str, dict[str, Any]]], stored: str) -> str:
    """The dtype decode steps (Feature.decoding) end in: the last cast's, float64's, or the stored one."""
    dtype = stored
    for step, arguments in steps:
        if step == "cast":
            dtype = arguments["dtype"]
        elif step == "exact_float64":
            dtype = "float64"
    return dtype
