"""The camera-photo cases of the image benchmark (bench/images.py): 12-megapixel sources resized
to a model's input.

- the data: deterministic photo-like 4000x3000 images (seeded NumPy, as images.py's small photos
  but with detail at every scale and hard-edged objects), saved three ways: JPEG at quality 90,
  8-bit RGB PNG, and 16-bit grey PNG;
- the hand-written loops `tb.build` is compared with: Pillow (open, full decode, resize, encode,
  in one process) and `tf.image` (decode, antialiased resize, encode);
- the quality check: the PSNR of each method's stored 224x224 images against a reference made by
  Pillow's LANCZOS resize of the full-resolution decode, in float.

TensorFlow is imported by the functions that use it (images.py imports it up front).
"""
from __future__ import annotations

import io
import os
import shutil
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from PIL import Image

from harness import record_writers, shard_paths

WIDTH, HEIGHT = 4000, 3000  # 12 megapixels, 4:3 as a phone's camera
TARGET = 224  # the model's input: TARGET x TARGET
QUALITY = 90
CLASSES = 2
SEED = 20240602
BILINEAR = Image.Resampling.BILINEAR  # the spec's default filter, and the loops'


@dataclass(frozen=True)
class Kind:
    """One kind of camera source: its files' format and the image feature that resizes them."""

    name: str  # "jpeg", "png", "png16"
    extension: str
    channels: int  # of the stored 224x224 image
    encoding: str  # how it is stored: jpeg or png
    label: str  # as the report names it
    scale: str = ""  # 16 bits into 8: how (`scale_16bit`; the build refuses to choose)

    @property
    def feature(self) -> str:
        scale = f", scale_16bit: {self.scale}" if self.scale else ""
        return f"{{type: image, encoding: {self.encoding}, shape: [{TARGET}, {TARGET}, {self.channels}]{scale}}}"


KINDS = {
    "jpeg": Kind("jpeg", ".jpg", 3, "jpeg", "12 MP JPEG"),
    "png": Kind("png", ".png", 3, "jpeg", "12 MP PNG (8-bit RGB)"),
    # the loops keep the high byte (value >> 8); full_range is value / 257, rounded
    "png16": Kind("png16", ".png", 1, "png", "12 MP PNG (16-bit grey)", "full_range"),
}


# ---- data ---------------------------------------------------------------------------------------------

def _upsampled(low: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """float32 [h, w, c] bicubic-upsampled to (width, height) `size`, channel by channel."""
    return np.stack([np.asarray(Image.fromarray(np.ascontiguousarray(low[..., channel], dtype=np.float32), "F")
                                .resize(size, Image.Resampling.BICUBIC)) for channel in range(low.shape[2])], axis=-1)


def camera_photo(rng: np.random.Generator) -> np.ndarray:
    """A photo-like uint8 [HEIGHT, WIDTH, 3]: a gradient, soft blobs, hard-edged objects and
    texture at four scales drawn at a quarter of the size (camera optics are that soft), then
    upsampled, plus sensor noise at full size. About 2 MB as a quality-90 JPEG."""
    height, width = HEIGHT // 4, WIDTH // 4
    y = (np.arange(height, dtype=np.float32) / (height - 1))[:, None]
    x = (np.arange(width, dtype=np.float32) / (width - 1))[None, :]
    angle = rng.uniform(0.0, 2.0 * np.pi)
    ramp = np.cos(angle) * x + np.sin(angle) * y
    ramp = (ramp - ramp.min()) / max(float(np.ptp(ramp)), 1e-6)
    start, end = rng.uniform(0.0, 255.0, size=(2, 3)).astype(np.float32)
    image = start + (end - start) * ramp[..., None]
    for _ in range(int(rng.integers(2, 6))):  # soft blobs: objects out of focus
        cy, cx = rng.uniform(0.0, 1.0, size=2)
        radius = rng.uniform(0.08, 0.3)
        weight = (np.exp(-((y - cy) ** 2) / (2 * radius**2)) * np.exp(-((x - cx) ** 2) / (2 * radius**2)))[..., None]
        image += (rng.uniform(0.0, 255.0, size=3).astype(np.float32) - image) * weight
    for _ in range(int(rng.integers(3, 8))):  # objects in focus: hard edges
        cy, cx = rng.uniform(0.0, 1.0, size=2)
        radius = rng.uniform(0.03, 0.15)
        inside = ((y - cy) ** 2 + ((x - cx) * width / height) ** 2 < radius**2)[..., None]
        image = np.where(inside, rng.uniform(0.0, 255.0, size=3).astype(np.float32), image)
    for cells, amplitude in ((8, 20.0), (24, 12.0), (96, 8.0), (400, 6.0)):  # shading to surface detail
        image += _upsampled(rng.normal(0.0, amplitude, size=(cells * height // width, cells, 3)), (width, height))
    image = _upsampled(image, (WIDTH, HEIGHT))
    image += rng.standard_normal(size=image.shape, dtype=np.float32) * 4.0
    return np.clip(np.rint(image, out=image), 0, 255, out=image).astype(np.uint8)


def grey16(photo: np.ndarray) -> np.ndarray:
    """The photo as 16-bit grey (the channels' mean, scaled to 0-65535): a scientific camera's frame."""
    return np.rint(photo.astype(np.float32).mean(axis=-1) * 257.0).astype(np.uint16)


def write_camera_photos(folders: dict[str, str], count: int) -> dict[str, int]:
    """Writes `count` photos into each kind's folder (`folders[kind]`), photo i into class_{i % 2}/;
    deterministic. Returns each kind's total bytes."""
    for folder in folders.values():
        if os.path.isdir(folder):
            shutil.rmtree(folder)
        for index in range(CLASSES):
            os.makedirs(os.path.join(folder, f"class_{index}"))
    rng = np.random.default_rng(SEED)
    sizes = dict.fromkeys(folders, 0)
    for index in range(count):
        photo = camera_photo(rng)
        for kind, folder in folders.items():
            path = os.path.join(folder, f"class_{index % CLASSES}", f"photo_{index:04d}{KINDS[kind].extension}")
            if kind == "jpeg":
                Image.fromarray(photo, "RGB").save(path, "JPEG", quality=QUALITY)
            elif kind == "png":
                Image.fromarray(photo, "RGB").save(path, "PNG", compress_level=6)
            else:
                Image.fromarray(grey16(photo)).save(path, "PNG", compress_level=6)  # mode I;16
            sizes[kind] += os.path.getsize(path)
    return sizes


def list_files(folder: str) -> list[tuple[str, str, int]]:
    """(path, name below the folder, label) of every photo, classes and files sorted."""
    classes = sorted(os.listdir(folder))
    return [(os.path.join(folder, name, file), f"{name}/{file}", label)
            for label, name in enumerate(classes) for file in sorted(os.listdir(os.path.join(folder, name)))]


# ---- the hand-written loops ---------------------------------------------------------------------------

def pillow_resized(path: str, kind: Kind) -> bytes:
    """The seed-style Pillow way: open, decode all 12 MP, resize (bilinear), encode.

    A 16-bit grey image keeps its high byte before the resize (`convert("L")` would clip it)."""
    image = Image.open(path)
    if kind.name == "png16":
        image = Image.fromarray((np.asarray(image) >> 8).astype(np.uint8), "L")
    else:
        image = image.convert("RGB")
    image = image.resize((TARGET, TARGET), BILINEAR)
    buffer = io.BytesIO()
    if kind.encoding == "jpeg":
        image.save(buffer, "JPEG", quality=QUALITY)
    else:
        image.save(buffer, "PNG", compress_level=6)
    return buffer.getvalue()


def tf_resized(path: str, kind: Kind) -> bytes:
    """The `tf.image` way: `tf.io.decode_jpeg` / `decode_png` (uint16 for 16 bits), `tf.image.resize`
    (bilinear, antialias=True), back to uint8 (16 bits: the high byte), `encode_jpeg` / `encode_png`."""
    import tensorflow as tf

    data = tf.io.read_file(path)
    if kind.name == "jpeg":
        pixels = tf.io.decode_jpeg(data, channels=3)
    else:
        pixels = tf.io.decode_png(data, channels=kind.channels, dtype=tf.uint16 if kind.name == "png16" else tf.uint8)
    resized = tf.image.resize(pixels, (TARGET, TARGET), antialias=True)
    if kind.name == "png16":
        resized = tf.floor(resized / 256.0)
    stored = tf.cast(tf.clip_by_value(tf.round(resized), 0, 255), tf.uint8)
    if kind.encoding == "jpeg":
        return tf.io.encode_jpeg(stored, quality=QUALITY).numpy()
    return tf.io.encode_png(stored).numpy()


def loop(folder: str, out: str, name: str, kind: Kind, resize: Callable[[str, Kind], bytes], shards: int) -> None:
    """A hand-written build: each photo resized and encoded by `resize`, in a `tf.train.Example`
    with its label and file name, written round-robin over `shards` TFRecord files."""
    import tensorflow as tf

    with record_writers(shard_paths(out, name, shards)) as writers:
        for index, (path, filename, label) in enumerate(list_files(folder)):
            example = tf.train.Example(features=tf.train.Features(feature={
                "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[resize(path, kind)])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
                "filename": tf.train.Feature(bytes_list=tf.train.BytesList(value=[filename.encode()])),
            }))
            writers[index % shards].write(example.SerializeToString())


# ---- quality ------------------------------------------------------------------------------------------

def reference(path: str, kind: Kind) -> np.ndarray:
    """float32 [TARGET, TARGET(, 3)]: the full-resolution decode resized by Pillow's LANCZOS in
    float, on the stored 0-255 scale (16 bits divided by 256, as the high byte is)."""
    image = Image.open(path)
    if kind.name == "png16":
        pixels = np.asarray(image, dtype=np.float32)[..., None] / 256.0
    else:
        pixels = np.asarray(image.convert("RGB"), dtype=np.float32)
    resized = np.stack([np.asarray(Image.fromarray(np.ascontiguousarray(pixels[..., channel]), "F")
                                   .resize((TARGET, TARGET), Image.Resampling.LANCZOS))
                        for channel in range(pixels.shape[2])], axis=-1)
    return resized if kind.channels == 3 else resized[..., 0]


def references(folder: str, kind: Kind) -> dict[str, np.ndarray]:
    """The reference of every photo of a folder, by its name below the folder."""
    return {filename: reference(path, kind) for path, filename, _ in list_files(folder)}


def psnr(image: np.ndarray, wanted: np.ndarray) -> float:
    """Peak signal-to-noise ratio in dB of uint8 `image` against float `wanted` (peak 255)."""
    error = np.mean((image.astype(np.float64) - wanted) ** 2)
    return float(10.0 * np.log10(255.0**2 / max(error, 1e-12)))


def mean_psnr(files: list[str], wanted: dict[str, np.ndarray]) -> float:
    """The mean PSNR of the images in a dataset's shards (records with `image` and `filename`)
    against their references; every photo must be there once."""
    import tensorflow as tf

    spec = {"image": tf.io.FixedLenFeature([], tf.string), "filename": tf.io.FixedLenFeature([], tf.string)}
    values: dict[str, float] = {}
    for record in tf.data.TFRecordDataset(files):
        parsed = tf.io.parse_single_example(record, spec)
        filename = parsed["filename"].numpy().decode()
        values[filename] = psnr(np.asarray(Image.open(io.BytesIO(parsed["image"].numpy()))), wanted[filename])
    if sorted(values) != sorted(wanted):
        raise RuntimeError(f"{len(values)} distinct photos in {files[0]}..., expected {len(wanted)}")
    return float(np.mean(list(values.values())))


def settings() -> dict[str, Any]:
    """The camera cases' settings, for the JSON report."""
    return {"size": [HEIGHT, WIDTH], "target": [TARGET, TARGET], "quality": QUALITY, "classes": CLASSES,
            "filter": "bilinear", "reference": "Pillow LANCZOS of the full decode, float",
            "kinds": {name: kind.feature for name, kind in KINDS.items()}}
