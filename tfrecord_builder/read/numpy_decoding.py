"""Reading records with NumPy, without TensorFlow: read/tfdata.py's descriptions, followed
record by record.

The same description (`Spec.reading()`: per feature its parse kinds and decode steps) drives
both. A record read here equals what `input_fn(split, batch_size=1, shuffle=False)` yields for it,
without the batch dimension and as NumPy: scalars as NumPy scalars (`bytes` for a string),
variable-length values as arrays of their own length, a sequence's features as [steps, ...]
(a variable-length step padded to the record's longest step), its length under the length
feature, images decoded by Pillow to the pixels TensorFlow decodes.

Each decode step of reading.py has its twin here, by the same name and arguments, working on one
record's value instead of a batch.
"""
from __future__ import annotations

import io
import math
from typing import Any, Callable, Mapping

import numpy as np
from PIL import Image

from ..media.images import deep


Lists = dict[str, np.ndarray]  # a parsed record's values by record key (codec/arrays.py)
Steps = dict[str, list[np.ndarray]]  # a parsed SequenceExample's feature lists, each step's values
# stored dtype -> the array the values are read as
_STORED = {"int64": np.int64, "float32": np.float32, "string": object}


class RecordError(ValueError):
    """A record that doesn't hold what the dataset's description says (the reader adds where)."""


def decode_record(lists: Lists, steps: Steps | None, reading: Mapping[str, Any]) -> dict[str, Any]:
    """One parsed record's features, decoded as the description `reading` says."""
    record: dict[str, Any] = {}
    lengths: dict[str, int] = {}
    for name, feature in reading["features"].items():
        parsed = {}
        for key, (kind, dtype, shape) in feature["parse"].items():
            if feature["sequence"] and kind != "fixed":  # (a `fixed` key of a per-step feature: context)
                found = (steps or {}).get(key)
                if found is None:
                    raise RecordError(f"feature `{name}`: no feature list {key!r}")
                parsed[key] = _steps(found, kind, dtype, shape, name)
                lengths[key] = len(found)
            else:
                if key not in lists:
                    raise RecordError(f"feature `{name}`: no key {key!r}")
                parsed[key] = _values(lists[key], kind, dtype, shape, name)
        record[name] = decoded(feature, parsed, lengths)
        for companion, described in feature.get("companions", {}).items():  # an audio feature's length, mask
            record[companion] = decoded(described, parsed, lengths)
    if reading["format"] == "sequence_example":
        length = lengths[reading["length_key"]]
        if reading["max_length"] is not None:
            for name, feature in reading["features"].items():
                if feature["sequence"]:
                    record[name] = record[name][: reading["max_length"]]
            length = min(length, reading["max_length"])
        if reading["length_feature"] is not None:
            record[reading["length_feature"]] = np.int64(length)
        if reading["mask_feature"] is not None:
            record[reading["mask_feature"]] = np.ones(length, dtype=bool)
    return record


def _values(values: np.ndarray, kind: str, dtype: str, shape: list[int | None], name: str) -> Any:
    """A record's stored list as the parse kind shapes it."""
    values = _typed(values, dtype, name)
    if kind == "var":
        return values
    inner = [int(dim) for dim in shape[1:]] if kind == "ragged" else [int(dim) for dim in shape]
    size = math.prod(inner)
    if kind == "ragged":
        if size == 0 or len(values) % size:
            raise RecordError(f"feature `{name}`: {len(values)} values, expected a multiple of {size} (shape {shape})")
        return values.reshape([-1, *inner])
    if len(values) != size:
        raise RecordError(f"feature `{name}`: {len(values)} values, expected {size} (shape {shape})")
    shaped = values.reshape(inner)
    return shaped[()] if not inner else shaped


def _steps(found: list[np.ndarray], kind: str, dtype: str, shape: list[int | None], name: str) -> Any:
    """A record's feature list: [steps, *shape] for a fixed step shape, else each step's values."""
    if kind == "fixed_steps":
        inner = [int(dim) for dim in shape]
        rows = [_values(step, "fixed", dtype, shape, name) for step in found]
        return np.array(rows, dtype=_STORED[dtype]).reshape([len(found), *inner])
    return [_values(step, "ragged" if len(shape) > 1 else "var", dtype, shape, name) for step in found]


def _typed(values: np.ndarray, dtype: str, name: str) -> np.ndarray:
    wanted = _STORED[dtype]
    if values.dtype != wanted and len(values):
        raise RecordError(f"feature `{name}`: a {_LIST_NAMES[values.dtype.kind]} list where {dtype} values belong")
    return values.astype(wanted, copy=False)


_LIST_NAMES = {"i": "int64", "f": "float", "O": "bytes"}


def decoded(feature: Mapping[str, Any], parsed: Mapping[str, Any], lengths: Mapping[str, int]) -> Any:
    """One feature's value from its parsed keys, by its decode steps (reading.decoded's twin)."""
    def argument(value: Any) -> Any:
        if isinstance(value, dict):  # {"parsed": KEY} or {"lengths": KEY}
            (source, key), = value.items()
            return (parsed if source == "parsed" else lengths)[key]
        return value

    value = parsed[next(iter(feature["parse"]))]
    for step, arguments in feature["decode"]:
        function = DECODE_STEPS.get(step)
        if function is None:
            raise ValueError(f"unknown decode step {step!r}")
        value = function(value, **{name: argument(item) for name, item in arguments.items()})
    return value


# ---- decode steps: reading.py's, for one record ------------------------------------------------
def cast(values: Any, dtype: str) -> Any:
    """Stored values in the declared dtype (as tf.cast: bool is "not zero")."""
    return np.asarray(values).astype(np.dtype(dtype))[()]


def exact_float64(values: Any) -> Any:
    """float32 as float64 (NumPy keeps subnormals, as reading.py takes pains to)."""
    return np.asarray(values, dtype=np.float64)[()]


def to_ragged(values: Any) -> Any:
    """A variable-length value: already an array of its own length."""
    return values


def to_padded(values: list[np.ndarray], pad: Any) -> np.ndarray:
    """Steps of different lengths as one array, padded with `pad` to the longest step."""
    pad = pad_value(pad)
    if not values:
        return np.zeros((0, 0), dtype=object if isinstance(pad, bytes) else None)
    longest = max(len(step) for step in values)
    out = np.full((len(values), longest, *values[0].shape[1:]), pad, dtype=values[0].dtype)
    for row, step in enumerate(values):
        out[row, : len(step)] = step
    return out


def stacked_boxes(ymin: np.ndarray, xmin: np.ndarray, ymax: np.ndarray, xmax: np.ndarray) -> np.ndarray:
    """Four box lists as one float32 [n, 4] of [ymin, xmin, ymax, xmax]."""
    sides = [np.asarray(side, np.float32) for side in (ymin, xmin, ymax, xmax)]
    if len({len(side) for side in sides}) > 1:
        raise RecordError(f"a record's four box lists differ in length: {[len(side) for side in sides]}")
    return np.stack(sides, axis=1).reshape(-1, 4)


def padded_boxes(boxes: np.ndarray, shapes: np.ndarray) -> np.ndarray:
    """A record's image is its batch's largest: its boxes stay as they are."""
    return boxes


def point_rows(values: np.ndarray, size: int) -> np.ndarray:
    """A record's `size` values an object as [objects, size]."""
    return np.asarray(values).reshape(-1, size)


def stacked_points(y: np.ndarray, x: np.ndarray, size: int) -> np.ndarray:
    """Two keypoint lists, y and x, as float32 [objects, size, 2] of [y, x]."""
    if len(y) != len(x):
        raise RecordError(f"a record's keypoint lists differ in length: {len(y)} and {len(x)}")
    return np.stack([np.asarray(y, np.float32), np.asarray(x, np.float32)], axis=1).reshape(-1, size, 2)


def padded_points(points: np.ndarray, shapes: np.ndarray) -> np.ndarray:
    """A record's image is its batch's largest: its points stay as they are."""
    return points


def pad_value(pad: Any) -> Any:
    """A pad as a description holds it ("nan", "inf", "-inf" for the floats that have no literal)."""
    return float(pad) if isinstance(pad, str) else pad


def padded_audio(encoded: bytes, lengths: Any, encoding: str, channels: int, dtype: str) -> np.ndarray:
    """A waveform: [samples] (one channel) or [samples, channels], float32 (int16 / 32768) or int16."""
    stored = np.dtype("<i2" if encoding == "pcm16" else "<f4")
    length = int(lengths)
    if len(encoded) != length * channels * stored.itemsize:
        raise RecordError(f"{len(encoded)} bytes of samples, expected {length * channels * stored.itemsize}")
    samples = np.frombuffer(encoded, dtype=stored).astype(stored.newbyteorder("="))
    samples = samples.reshape([length, channels] if channels > 1 else [length])
    if dtype == "float32" and encoding == "pcm16":
        return samples.astype(np.float32) / np.float32(32768.0)
    return samples


def padded_ids(values: np.ndarray, pad: int) -> np.ndarray:
    """A record's token ids: its own length, no pad."""
    return values


def length_mask(lengths: Any) -> np.ndarray:
    """A record's length as a mask of its own width (all true)."""
    return np.ones(int(lengths), dtype=bool)


def pad_steps(values: Any, length: int, pad: Any) -> Any:
    """A record's own steps need no pad (only a batch's shorter records do)."""
    return values


def decode_image(encoded: bytes, shape: list[int | None], encoding: str, channels: int,
                 dtype: str = "uint8") -> np.ndarray:
    """One stored image as uint8 (or, for `dtype: uint16`, uint16) [height, width, channels]."""
    if encoding == "raw":
        return np.frombuffer(encoded, dtype=np.uint8).reshape([int(dim) for dim in shape])
    if dtype == "uint16":  # a 16-bit PNG of the feature's channels (deep.png_16, or a file stored as it is)
        with Image.open(io.BytesIO(encoded)) as image:
            depth = deep.bits(image)
            image.load()
            pixels = deep.values(image, encoded, depth).astype(np.uint16)
        return pixels.reshape(*pixels.shape[:2], channels)
    with Image.open(io.BytesIO(encoded)) as image:
        mode = {1: "L", 3: "RGB", 4: "RGBA"}[channels]
        pixels = np.asarray(image if image.mode == mode else image.convert(mode))
    return pixels.reshape(*pixels.shape[:2], channels)


def fixed_images(encoded: bytes, encoding: str, shape: list[int], dtype: str = "uint8") -> np.ndarray:
    """An image of the declared `shape`."""
    image = decode_image(encoded, shape, encoding, shape[-1], dtype)
    if list(image.shape) != list(shape):
        raise RecordError(f"an image of shape {list(image.shape)}, expected {list(shape)}")
    return image


def padded_images(encoded: bytes, shapes: np.ndarray, encoding: str, channels: int, dtype: str = "uint8") -> np.ndarray:
    """An image of its own size (a batch pads to its largest; one image is its own largest)."""
    return decode_image(encoded, [int(dim) for dim in shapes], encoding, channels, dtype)


def resized_images(encoded: bytes, shapes: np.ndarray, encoding: str, channels: int, size: list[int],
                   dtype: str = "uint8") -> np.ndarray:
    """An image resized to `size` as tf.image.resize(bilinear, antialias) does, rounded to uint8 (or uint16)."""
    image = decode_image(encoded, [int(dim) for dim in shapes], encoding, channels, dtype).astype(np.float32)
    resized = _resample(_resample(image, size[0], axis=0), size[1], axis=1)
    return np.clip(np.round(resized), 0, np.iinfo(dtype).max).astype(dtype)


def step_images(encoded: np.ndarray, length: int, steps: list[Any], shapes: np.ndarray | None = None) -> np.ndarray:
    """A record's images, one per step, as [steps, height, width, channels] (its frames share one size)."""
    frames = []
    for index, image in enumerate(encoded):
        for step, arguments in steps:
            function = DECODE_STEPS.get(step)
            if function is None:
                raise ValueError(f"unknown decode step {step!r}")
            arguments = {name: shapes[index] if isinstance(item, dict) else item for name, item in arguments.items()}
            image = function(image, **arguments)
        frames.append(image)
    if not frames:  # [0, height, width, channels] as far as they are known (0 where not)
        (first, arguments), = steps[:1]
        dims = {"fixed_images": lambda: arguments["shape"], "resized_images": lambda: [*arguments["size"],
                arguments["channels"]]}.get(first, lambda: [0, 0, arguments["channels"]])()
        scaled = any(step == "scaled_images" for step, _ in steps)
        return np.zeros((0, *dims), dtype=np.float32 if scaled else np.uint8)
    if len({frame.shape for frame in frames}) > 1:
        raise RecordError(f"frames of different shapes in one record: {sorted({frame.shape for frame in frames})}")
    return np.stack(frames)


def resized_masks(encoded: bytes, shapes: np.ndarray, size: list[int]) -> np.ndarray:
    """A mask resized to `size` by nearest neighbour as tf.image.resize(method="nearest") picks
    its pixels: source index floor((i + 0.5) * in / out), in float32 as TensorFlow computes it."""
    mask = decode_image(encoded, [int(dim) for dim in shapes], "png", 1)
    rows, columns = (_nearest(mask.shape[axis], int(size[axis])) for axis in (0, 1))
    return mask[rows][:, columns]


def _nearest(in_size: int, out_size: int) -> np.ndarray:
    scale = np.float32(in_size) / np.float32(out_size)
    centres = (np.arange(out_size, dtype=np.float32) + np.float32(0.5)) * scale
    return np.minimum(np.floor(centres).astype(np.int64), in_size - 1)


def scaled_images(images: np.ndarray) -> np.ndarray:
    """uint8 (or uint16) pixels as float32 in [0, 1]: divided by 255 (or 65535)."""
    return images.astype(np.float32) / np.float32(np.iinfo(images.dtype).max)


def _resample(image: np.ndarray, out_size: int, axis: int) -> np.ndarray:
    """One axis of TensorFlow's antialiased bilinear resize (its ScaleAndTranslate with a triangle
    kernel), in float32 and summed in its order, so the result rounds as TensorFlow's does."""
    in_size = image.shape[axis]
    if in_size == out_size:
        return image
    scale = np.float32(out_size) / np.float32(in_size)
    inverse = np.float32(1) / scale
    kernel_scale = max(inverse, np.float32(1))  # antialias: the kernel widens when shrinking
    starts, weights = [], []
    for out in range(out_size):
        centre = (np.float32(out) + np.float32(0.5)) * inverse
        first = max(0, int(math.ceil(centre - kernel_scale - np.float32(0.5))))
        last = min(in_size, int(math.floor(centre + kernel_scale - np.float32(0.5))) + 1)
        taps = np.arange(first, last, dtype=np.float32)
        weight = np.maximum(np.float32(0), np.float32(1) - np.abs((taps + np.float32(0.5) - centre)
                                                                  * (np.float32(1) / kernel_scale)))
        weight = weight.astype(np.float32)
        total = np.float32(weight.sum(dtype=np.float32))
        if abs(total) >= 1000 * np.finfo(np.float32).tiny:
            weight = (weight / total).astype(np.float32)
        starts.append(first)
        weights.append(weight)
    moved = np.moveaxis(image, axis, 0)
    out = np.zeros((out_size, *moved.shape[1:]), dtype=np.float32)
    for row, (first, weight) in enumerate(zip(starts, weights)):
        total = np.zeros(moved.shape[1:], dtype=np.float32)
        for tap, value in enumerate(weight):
            total += value * moved[first + tap]
        out[row] = total
    return np.moveaxis(out, 0, axis)


DECODE_STEPS: dict[str, Callable[..., Any]] = {
    "cast": cast, "exact_float64": exact_float64, "to_ragged": to_ragged, "to_padded": to_padded,
    "pad_steps": pad_steps, "fixed_images": fixed_images, "padded_images": padded_images,
    "resized_images": resized_images, "scaled_images": scaled_images, "resized_masks": resized_masks,
    "stacked_boxes": stacked_boxes, "padded_boxes": padded_boxes, "padded_audio": padded_audio,
    "length_mask": length_mask, "step_images": step_images, "stacked_points": stacked_points,
    "point_rows": point_rows, "padded_points": padded_points, "padded_ids": padded_ids,
}
