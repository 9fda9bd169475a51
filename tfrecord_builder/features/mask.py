"""`mask`: a semantic segmentation mask, one class index per pixel, stored losslessly.

Writing: a mask file (PNG, or another lossless format Pillow reads; a path, relative to the
table's folder as image paths are, or its bytes) is read as class indices, never as colours: a
palette ("P") PNG gives its palette indices, a grey ("L") one its values, a bilevel ("1") one 0
and 1, a 16-bit or 32-bit one its values where they all fit 0-255. A colour (RGB, RGBA) mask, a
mask with an alpha channel and a JPEG (lossy: its edges hold values between classes) are
refused. The mask is turned upright by its own EXIF orientation (masks rarely have one), resized
with nearest neighbour only when the shape is fixed, and stored as a one-channel PNG.

`image: NAME` links the mask to the image feature of the same record: the mask must then have
that image's size as it is displayed (after the image's EXIF orientation: a mask is drawn on
the upright picture), read from the image file's header; and a fixed image shape, with its
`resize: stretch | pad | crop`, is the mask's too, so the two stay pixel for pixel aligned. A
pad is filled with the class `pad_value` (0 by default).

Reading: uint8 [height, width, 1] (what Keras' sparse categorical cross-entropy takes beside an
image batch), never scaled to float; `input.image_size` resizes masks of varying size with
nearest neighbour (read/tfdata.py's `resized_masks`); a batch of masks of varying size is
padded with 0 at the bottom and right, as its images are.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal, Mapping, Sequence

import numpy as np
from PIL import Image

from .. import fs
from ..media.images import BadImage, pillow
from ..spec.fields import At, meta
from .base import DecodeStep, EncodeContext, Feature, register
from .described import Card
from .image import ImageFeature, _describe
from .rows import format_shape
from .values import Values

LOSSY_FORMATS = {"JPEG", "MPO", "WEBP"}  # a mask stored lossy holds values between classes at its edges


@dataclass(frozen=True, kw_only=True)
class MaskFeature(ImageFeature):
    """A semantic mask: `{type: mask, source: mask_path, image: image}`."""

    encoding: Literal["png"] = meta("masks are stored as one-channel PNG (lossless)", "png")
    shape: list[int | None] | None = meta(
        "[height, width] (or [height, width, 1]); null keeps each mask's own size; with `image:` a fixed "
        "image shape is the mask's", None)
    channels: Literal[1] | None = meta("always 1: one class index per pixel", None)
    resize: Literal["stretch", "pad", "crop"] | None = meta(
        "how a fixed shape is reached (nearest neighbour always): stretch, pad or crop; with `image:` the "
        "image's", None)
    filter: Literal["nearest"] = meta("always nearest: a mask's values are classes, never averaged", "nearest")
    # an image's choices that a mask doesn't have (lossless, 8-bit indices): not spec keys
    quality: int = dataclasses.field(default=90, metadata={"internal": True})
    validate: Literal["structure", "decode"] = dataclasses.field(default="decode", metadata={"internal": True})
    scale_16bit: Literal["full_range", "min_max"] | None = dataclasses.field(default=None,
                                                                             metadata={"internal": True})
    dtype: Literal["uint8"] = dataclasses.field(default="uint8", metadata={"internal": True})
    image: str | None = meta("the image feature this mask belongs to: the mask must have its (upright) size, "
                             "and takes its fixed shape and resize", None)
    pad_value: int = meta("the class a `resize: pad` border is filled with", 0)
    # the linked image feature (set from `image:` once every feature is known: Feature.linked)
    linked_image: Any = dataclasses.field(default=None, compare=False, repr=False, metadata={"internal": True})

    def normalised(self, at: At) -> "MaskFeature":
        """`shape: [h, w]` spelt out as `[h, w, 1]`."""
        shape = list(self.shape) if self.shape is not None else [None, None, 1]
        if len(shape) == 2:
            shape.append(1)
        if len(shape) != 3 or shape[2] != 1:
            raise (at / "shape").error(f"expected [height, width] or [height, width, 1], received {format_shape(shape)}")
        return dataclasses.replace(self, shape=shape, channels=None)

    def check(self, at: At) -> None:
        height, width, _ = self.shape
        if (height is None) != (width is None):
            raise (at / "shape").error("give both height and width, or neither (null keeps each mask's size)")
        if any(dim is not None and dim < 1 for dim in (height, width)):
            raise (at / "shape").error(f"expected positive dimensions, received {format_shape(self.shape)}")
        if height is None and self.resize not in (None, "stretch") and self.image is None:
            raise (at / "resize").error(f"`resize: {self.resize}` needs a fixed height and width")
        if not 0 <= self.pad_value <= 255:
            raise (at / "pad_value").error(f"expected a class index in [0, 255], received {self.pad_value}")

    def linked(self, features: Mapping[str, Feature], at: At) -> "MaskFeature":
        """The mask linked to its image feature (`image:`, or the spec's only one): it reads the
        image's column too (to check sizes), and takes the image's fixed shape and resize. With
        several images, a mask names its own; with none, it stands alone."""
        images = [name for name, feature in features.items()
                  if isinstance(feature, ImageFeature) and not isinstance(feature, MaskFeature)
                  and feature.sequence == self.sequence]
        if self.image is None and len(images) > 1:
            raise (at / "image").error(f"the spec has {len(images)} image features ({', '.join(images)}): name the "
                                       "one this mask belongs to (it must have that image's size)")
        if self.image is None and not images:
            return self
        name = self.image if self.image is not None else images[0]
        image = features.get(name)
        if not isinstance(image, ImageFeature) or isinstance(image, MaskFeature):
            expected = f"the name of an image feature ({', '.join(images)})" if images else \
                "the name of an image feature (the spec has none)"
            raise (at / "image").error(f"expected {expected}, received {name!r}")
        shape, resize = list(self.shape), self.resize
        if image.size is not None:
            if self.size is not None and self.size != image.size:
                raise (at / "shape").error(f"the mask's shape {format_shape(self.shape[:2])} differs from image "
                                           f"`{name}`'s {format_shape(image.shape[:2])}; omit it (the "
                                           "image's is taken)")
            if resize is not None and resize != image.resize:
                raise (at / "resize").error(f"`resize: {resize}` differs from image `{name}`'s "
                                            f"`{image.resize}`; omit it (the image's is taken)")
            shape, resize = [*image.size, 1], image.resize
        elif resize not in (None, "stretch"):
            raise (at / "resize").error(f"image `{name}` keeps each image's own size, so its mask does too; "
                                        f"omit `resize: {resize}`")
        elif self.size is not None:
            raise (at / "shape").error(f"image `{name}` keeps each image's own size, so its mask does too; "
                                       "omit the mask's shape (or fix the image's)")
        return dataclasses.replace(self, image=name, shape=shape, resize=resize, linked_image=image)

    @property
    def image_name(self) -> str | None:
        return self.image

    @property
    def linked_columns(self) -> list[str]:
        """Its image's column (read for its size), beside the mask's own."""
        return [] if self.linked_image is None else [self.linked_image.source_name]

    @property
    def geometry(self) -> str:
        return self.resize or "stretch"

    @property
    def card(self) -> Card:
        """An image's thumbnails, its class indices in the class colours, drawn over its image too."""
        return dataclasses.replace(super().card, mask=True, over=self.image)

    # ---- writing side ----------------------------------------------------------------------------
    def encode(self, values: Sequence[Any], context: EncodeContext) -> dict[str, Values]:
        origin, base_dir = context.origin, context.base_dir
        images: Sequence[Any] = [None] * len(values)
        if self.linked_image is not None:  # a GatheredColumns: the mask's column, then the image's
            values, images = list(values.columns[0]), list(values.columns[1])  # type: ignore[attr-defined]
        stored: list[bytes] = []
        shapes: list[tuple[int, int, int]] = []
        for row, (value, image) in enumerate(zip(values, images)):
            if value is None:
                raise self.fail(origin, row, "missing mask")
            try:
                indices = mask_indices(_resolved(value, base_dir))
            except BadImage as error:
                raise self.fail(origin, row, f"{_describe(value)}: {error}") from None
            if self.linked_image is not None and image is not None:
                try:
                    height, width = pillow.oriented_size(_resolved(image, base_dir))  # its header only
                except BadImage as error:
                    raise self.fail(origin, row, f"its image {_describe(image)}: {error}") from None
                if (height, width) != indices.shape[:2]:
                    raise self.fail(origin, row, f"mask {_describe(value)} is {indices.shape[1]}×{indices.shape[0]} "
                                    f"but its image {_describe(image)} (feature `{self.image}`) is {width}×{height} "
                                    "(width×height, upright); a mask must have its image's size")
            indices = resized_mask(indices, self.size, self.geometry, self.pad_value)
            stored.append(pillow.encoded(Image.fromarray(indices, "L"), "png", 0))
            shapes.append((indices.shape[0], indices.shape[1], 1))
        ones = np.ones(len(stored), dtype=np.int64)
        encoded = {self.record_key: Values("bytes", stored, ones)}
        if self.stores_shape:
            encoded[self.shape_key] = Values("int64", np.array(shapes, dtype=np.int64).reshape(-1), ones * 3)
        return encoded

    # ---- reading side ----------------------------------------------------------------------------
    def decoding(self, options: Any) -> list[DecodeStep]:
        """uint8 [height, width, 1] class indices; never scaled to float (`image_dtype` is for pictures)."""
        if self.size is not None:
            return [("fixed_images", {"encoding": "png", "shape": list(self.shape)})]
        shapes = {"parsed": self.shape_key}
        if options.image_size is not None:
            return [("resized_masks", {"shapes": shapes, "size": list(options.image_size)})]
        return [("padded_images", {"shapes": shapes, "encoding": "png", "channels": 1})]

    def describe(self) -> str:
        height, width, _ = ("null" if dim is None else dim for dim in self.shape)
        return f"mask png [{height}, {width}, 1]"


register("mask")(MaskFeature)


def _resolved(value: Any, base_dir: str | None) -> Any:
    return fs.resolve(value, base_dir) if base_dir is not None and isinstance(value, str) else value


def mask_indices(value: Any) -> np.ndarray:
    """A mask's class indices, uint8 [height, width], upright: palette indices (not colours) of a
    palette image, the values of a grey or 16-bit one. Raises BadImage for what isn't a mask."""
    if isinstance(value, np.ndarray) and value.ndim == 3 and value.shape[2] == 1:
        value = value[:, :, 0]
    source, image = pillow.opened(value)
    if source is not None and image.format in LOSSY_FORMATS:
        raise BadImage(f"a {image.format} mask is lossy (its edges hold values between classes): save masks as PNG")
    mode = image.mode
    if mode not in ("P", "L", "1", "I", "I;16", "I;16B", "I;16L", "I;16N"):
        alpha = "" if mode in ("RGB", "RGBX", "CMYK", "YCbCr") else ", without alpha"
        raise BadImage(f"colour mode {mode}: a mask holds class indices, not colours; save it as a palette (P) or "
                       f"grey (L) PNG of class indices{alpha}")
    pillow.load(image)
    indices = np.asarray(pillow.upright(image))  # P: the indices; never converted, which would give colours
    if indices.dtype == bool:  # mode "1"
        return indices.astype(np.uint8)
    if indices.dtype != np.uint8:
        low, high = int(indices.min()), int(indices.max())
        if low < 0 or high > 255:
            raise BadImage(f"mode {mode} with values {low}-{high}: a mask holds class indices 0-255")
        indices = indices.astype(np.uint8)
    return np.ascontiguousarray(indices)


def resized_mask(indices: np.ndarray, size: tuple[int, int] | None, how: str, pad_value: int) -> np.ndarray:
    """Class indices at (height, width) `size` by nearest neighbour (None: as they are), by the
    image's geometry: stretched, centre-cropped, or centred on a border of class `pad_value`."""
    if size is None or size == indices.shape:
        return indices
    height, width = size
    scaled = pillow.scaled_size(indices.shape[1], indices.shape[0], size, how)
    image = Image.fromarray(indices, "L").resize(scaled, Image.Resampling.NEAREST)
    if how == "pad":
        canvas = Image.new("L", (width, height), pad_value)
        canvas.paste(image, ((width - scaled[0]) // 2, (height - scaled[1]) // 2))
        image = canvas
    else:
        image = pillow.placed(image, size, how)
    return np.asarray(image)
