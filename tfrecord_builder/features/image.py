"""`image`: a picture stored as JPEG, PNG or raw uint8 pixels, decoded on the reading side.

Writing (Pillow, through media/images/pillow.py): the image is decoded (which also catches corrupt and
truncated files; a JPEG the resize shrinks 6 times or more is decoded at 1/2, 1/4 or 1/8 scale by
libjpeg, keeping at least 3 times the resized size), turned upright by its EXIF orientation,
converted to the declared channels, resized if the shape is fixed, and encoded. When the source
file already is what the spec asks for (same format, same channels, same size, upright), its own
bytes are stored instead: no second lossy JPEG pass (a camera's MPO: its first picture's bytes).
A JPEG re-encoded all the same, for a reason the spec didn't give (its EXIF orientation, CMYK),
is counted in features/notices.py: the build says so once.

Channels: 1 grey (ITU-R 601-2 luma from colour), 3 RGB, 4 RGBA. Palette images keep their
colours (and transparency, for 4 channels); a 16-bit image is refused unless `scale_16bit` says
how it becomes 8 bits (media/images/deep.py: resized at full precision first), or the feature keeps
16 bits (`dtype: uint16`: stored as 16-bit PNG, read back as uint16); an alpha channel is
dropped for 1 or 3 channels (not composited). Resizing uses Pillow's bilinear filter by default,
which averages over the source pixels when shrinking (antialiased).

Reading: `FixedLenFeature([], tf.string)` per image, plus `KEY/shape` (int64 [height, width,
channels]) for images kept at their own size and for raw pixels; decoded by `reading.py`.

Per step (declared under a sequence_example's `sequence:`): a feature list of one encoded image
per step (and, where the shape is stored, a feature list of the step's [height, width,
channels]); every frame of a record has the same size, read back as [batch, steps, height,
width, channels], zero-padded past each record's length (`step_images`).
"""
from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass
from typing import Any, Literal, Sequence

import numpy as np
from PIL import Image

from .. import fs
from ..media.images import BadImage, deep, jpeg, pillow
from ..media.images.pillow import MODES
from ..spec.fields import At, meta
from . import tfds
from .notices import Notices
from .base import DecodeStep, EncodeContext, Feature, ParseSpec, register
from .described import Card, Counted
from .rows import BadRow, format_shape, steps
from .values import ListKind, StoredColumn, Values


@dataclass(frozen=True, kw_only=True)
class ImageFeature(Feature):
    """An image: `{type: image, encoding: jpeg, shape: [64, 64, 3]}`."""

    reads_files = True

    @property
    def batch_rows(self) -> int:  # type: ignore[override]
        """About 2 MiB of stored images to a batch (32 to 512 images): raw pixels, or a JPEG or PNG
        of about an eighth of them. NumPy's and the records' cost per batch spreads over small
        images, large ones spread over the workers in small batches (an image folder also cuts
        its batches by the files' bytes), and the first batches come back soon enough to keep
        every worker busy."""
        if self.size is None:
            return 32
        depth = 2 if self.dtype == "uint16" else 1  # bytes a value
        stored = self.size[0] * self.size[1] * self.num_channels * depth // (1 if self.encoding == "raw" else 8)
        return max(32, min(512, 2 * 1024**2 // max(1, stored)))  # (an image under 8 bytes: 512)

    encoding: Literal["jpeg", "png", "raw"] = meta("how pixels are stored: jpeg, png or raw uint8", "png")
    shape: list[int | None] | None = meta(
        "[height, width, channels]; null height and width keep each image's own size", None)
    channels: int | None = meta("1 (grey), 3 (RGB) or 4 (RGBA): shorthand for shape [null, null, channels]", None)
    resize: Literal["stretch", "pad", "crop"] = meta(
        "how a fixed shape is reached: stretch, pad (keep aspect, black borders) or crop (keep aspect, centre)",
        "stretch")
    filter: Literal["nearest", "bilinear", "bicubic", "lanczos", "box"] = meta("Pillow's resampling filter", "bilinear")
    quality: int = meta("JPEG quality, 1-100", 90)
    validate: Literal["structure", "decode"] = meta(
        "how an image stored as it is (passthrough) is checked: structure (its header and end marker: "
        "catches truncated files) or decode (every byte, several times slower; a JPEG's corrupt data, "
        "which Pillow decodes in silence, is an error)", "structure")
    scale_16bit: Literal["full_range", "min_max"] | None = meta(
        "how a 16-bit image becomes 8 bits: full_range (value / 257, rounded) or min_max (each file's own "
        "lowest to highest value onto 0-255); without it a 16-bit image is an error", None)
    dtype: Literal["uint8", "uint16"] = meta(
        "bits a channel stored and read back: uint8, or uint16 (16-bit PNG and TIFF kept exactly, stored as "
        "16-bit PNG; an 8-bit file is an error)", "uint8")

    def normalised(self, at: At) -> "ImageFeature":
        """`channels: 3` spelt out as `shape: [null, null, 3]`: the shape says it all."""
        shape = self.shape if self.shape is not None else [None, None, self.channels or 3]
        if len(shape) != 3:
            raise (at / "shape").error(f"expected [height, width, channels], received {format_shape(shape)}")
        if self.channels is not None and self.channels != shape[2] and shape[2] in MODES:
            raise (at / "channels").error(f"{self.channels} channels disagree with shape {format_shape(shape)}")
        return dataclasses.replace(self, shape=list(shape), channels=None)

    def check(self, at: At) -> None:
        height, width, channels = self.shape
        if (height is None) != (width is None):
            raise (at / "shape").error("give both height and width, or neither (null keeps each image's size)")
        if any(dim is not None and dim < 1 for dim in (height, width)):
            raise (at / "shape").error(f"expected positive dimensions, received {format_shape(self.shape)}")
        if channels not in MODES:
            raise (at / "shape").error(f"expected 1, 3 or 4 channels, received {channels}")
        if height is None and self.resize != "stretch":
            raise (at / "resize").error(f"`resize: {self.resize}` needs a fixed height and width; with null ones "
                                        "each image keeps its own size")
        if self.encoding == "jpeg" and channels == 4:
            raise (at / "encoding").error("JPEG has no alpha channel: use png or raw for 4 channels")
        if self.dtype == "uint16" and self.encoding != "png":
            raise (at / "encoding").error(f"expected `encoding: png` for `dtype: uint16` (lossless, 16 bits a "
                                          f"channel), received {self.encoding}")
        if self.dtype == "uint16" and self.scale_16bit is not None:
            raise (at / "scale_16bit").error("`scale_16bit` brings 16-bit images to 8 bits; a `dtype: uint16` "
                                             "feature keeps their 16 bits: remove one of them")
        if not 1 <= self.quality <= 100:
            raise (at / "quality").error(f"expected a JPEG quality in [1, 100], received {self.quality}")

    @property
    def num_channels(self) -> int:
        return self.shape[2]

    @property
    def size(self) -> tuple[int, int] | None:
        """(height, width) when fixed, else None."""
        return None if self.shape[0] is None else (self.shape[0], self.shape[1])

    @property
    def shape_key(self) -> str:
        return f"{self.record_key}/shape"

    @property
    def stores_shape(self) -> bool:
        """Images kept at their own size, and raw pixels (which are nothing without it), carry their shape."""
        return self.size is None or self.encoding == "raw"

    def check_sequence(self, at: At) -> None:
        """Any image can be per step: one encoded image a step, all of a record's of one size."""

    # ---- writing side ----------------------------------------------------------------------------
    def encode(self, values: Sequence[Any], context: EncodeContext) -> dict[str, Values]:
        if self.sequence and not isinstance(values, _Frames):
            return self.encode_steps(values, context)
        origin, base_dir = context.origin, context.base_dir
        stored: list[bytes] = []
        shapes: list[tuple[int, int, int]] = []
        for row, value in enumerate(values):
            if value is None:
                raise self.fail(origin, row, "missing image")
            if base_dir is not None and isinstance(value, str):
                value = fs.resolve(value, base_dir)
            try:
                data, shape = self.prepare(value, context.notices)
            except BadImage as error:
                # an image folder's record is named by its file already: no need to name it twice
                named = isinstance(value, str) and os.path.abspath(value) == os.path.abspath(origin(row))
                raise self.fail(origin, row, str(error) if named else f"{_describe(value)}: {error}") from None
            stored.append(data)
            shapes.append(shape)
        ones = np.ones(len(values), dtype=np.int64)
        encoded = {self.record_key: Values("bytes", stored, ones)}
        if self.stores_shape:
            flat = np.array(shapes, dtype=np.int64).reshape(-1)
            encoded[self.shape_key] = Values("int64", flat, ones * 3)
        return encoded

    def encode_steps(self, values: Sequence[Any], context: EncodeContext) -> dict[str, Values]:
        """A batch of sequences of images (each a list of paths or encoded images; None: no
        steps): one image per step, every frame of a record the size of its first."""
        origin = context.origin
        flat: list[Any] = []
        records: list[int] = []
        positions: list[int] = []
        lengths = np.zeros(len(values), dtype=np.int64)
        for row, value in enumerate(values):
            try:
                found = steps(value, context.language)
            except BadRow as error:
                raise self.fail(origin, row, str(error)) from None
            flat.extend(found)
            records.extend([row] * len(found))
            positions.extend(range(len(found)))
            lengths[row] = len(found)
        from .tensor import StepOrigins  # (tensor.py imports nothing of this module)
        encoded = self.encode(_Frames(flat), context.named(StepOrigins(origin, records, positions)))
        shape_of = encoded[self.shape_key].values.reshape(-1, 3) if self.stores_shape else None
        if shape_of is not None:
            for index in range(1, len(flat)):
                if positions[index] and (shape_of[index] != shape_of[index - positions[index]]).any():
                    first = shape_of[index - positions[index]]
                    raise self.fail(StepOrigins(origin, records, positions), index, mixed_sizes(shape_of[index], first))
        for stored in encoded.values():
            stored.steps = lengths
        return encoded

    def prepare(self, value: Any, notices: Notices | None = None) -> tuple[bytes, tuple[int, int, int]]:
        """The bytes to store for one image and its (height, width, channels); what the spec
        didn't ask for in so many words (a second lossy pass) is counted in `notices` (None:
        nowhere)."""
        if isinstance(value, (str, os.PathLike)):
            value = pillow.read_file(value)  # once: the marker check and Pillow read the same bytes
        if self.encoding == "jpeg" and self.validate == "structure" and isinstance(value, bytes):
            fast = self._plain_jpeg(value)
            if fast is not None:
                return fast
        if self.dtype == "uint16" and isinstance(value, np.ndarray) and value.dtype == np.uint16 \
                and value.ndim in (2, 3) and (value.ndim == 2 or value.shape[2] in (1, 2, 3, 4)):
            pixels = value[:, :, 0] if value.ndim == 3 and value.shape[2] == 1 else value  # pixels from a builder
            pixels = deep.sixteen_bits(pixels.astype(np.int64), 16, self.num_channels, self.size, self.resize,
                                       self.filter)
            return deep.png_16(pixels), pixels.shape  # type: ignore[return-value]
        source, image = pillow.opened(value)
        if self.dtype == "uint16":
            return self._prepare_16(source, image)
        as_it_is = source is not None and pillow.fits_as_it_is(image, self.encoding, self.num_channels, self.size)
        size = (image.height, image.width, self.num_channels)
        if as_it_is:
            source = pillow.kept(source, image)  # an MPO's first picture
        if as_it_is and self.validate == "structure":
            pillow.check_structure(source, image)
            return source, size
        if source is not None and image.format in pillow.FORMATS["jpeg"] and self.validate == "decode":
            jpeg.check_jpeg_data(source)  # Pillow decodes corrupt data in silence
            if as_it_is:
                return source, size
        if not as_it_is:
            why = pillow.second_pass(image, self.encoding, self.num_channels, self.size)
            # said once for the build: the spec didn't ask for this second lossy pass
            if why is not None and notices is not None:
                notices.note(f"feature `{self.name}`: {{count}} JPEG file{{s}} {why}, so re-encoded at quality "
                             f"{self.quality} (a second lossy pass) instead of stored byte for byte")
            pillow.drafted(image, self.size, self.resize)
        depth = deep.bits(image)  # before load, which drops the raw modes it reads
        pillow.load(image)
        if as_it_is:
            return source, size
        if depth > 8:
            image = deep.fitted(deep.values(image, source, depth), depth, self.scale_16bit, self.num_channels,
                                self.size, self.resize, self.filter)
        else:
            image = pillow.fitted(pillow.upright(image), self.num_channels, self.size, self.resize, self.filter)
        return pillow.encoded(image, self.encoding, self.quality), (image.height, image.width, self.num_channels)

    def _prepare_16(self, source: bytes | None, image: Image.Image) -> tuple[bytes, tuple[int, int, int]]:
        """A `dtype: uint16` image: a 16-bit PNG that already is what the spec asks is stored as it
        is (deep.fits_16_as_it_is says why), anything else 16-bit is re-encoded as a 16-bit PNG. An
        8-bit file is refused rather than widened: no rule (v * 257, v * 256, v) is right for every
        source, and one 8-bit file among 12-bit scans would be on another scale in silence."""
        depth = deep.bits(image)  # before load, which drops the raw modes it reads
        if depth == 8:
            raise BadImage(f"an 8-bit {image.mode} image into a `dtype: uint16` feature: convert the file to "
                           "16 bits, or declare `dtype: uint8`")
        size = self.size
        if source is not None and deep.fits_16_as_it_is(image, self.num_channels, size):
            if self.validate == "structure":
                pillow.check_structure(source, image)
            else:
                pillow.load(image)
            return source, (image.height, image.width, self.num_channels)
        pillow.load(image)
        pixels = deep.sixteen_bits(deep.values(image, source, depth), depth, self.num_channels, size, self.resize,
                                   self.filter)
        return deep.png_16(pixels), pixels.shape  # type: ignore[return-value]

    def _plain_jpeg(self, data: bytes) -> tuple[bytes, tuple[int, int, int]] | None:
        """A JPEG file stored as it is, checked from its markers alone (several times faster than
        Pillow's parser); None for anything unusual (EXIF, 12-bit, another size or channel count,
        a malformed header), which Pillow then handles and explains."""
        header = jpeg.jpeg_header(data)
        if header is None:
            return None
        height, width, channels, scan = header
        size = self.size
        if channels != self.num_channels or (size is not None and size != (height, width)):
            return None
        if height * width > (Image.MAX_IMAGE_PIXELS or float("inf")) or not jpeg.jpeg_ends(data, scan):
            return None
        return data, (height, width, channels)

    def check_stored(self, stored: dict[str, tuple[str, list[Any]]]) -> str | None:
        kind, values = stored.get(self.record_key, ("bytes", []))
        if self.record_key not in stored or kind != "bytes" or len(values) != 1:
            return f"expected one encoded image under {self.record_key!r}"
        if self.stores_shape and not (self.sequence and self.shape_key not in stored):  # (a step: its image)
            kind, shape = stored.get(self.shape_key, ("int64", []))
            if kind != "int64" or len(shape) != 3 or shape[2] != self.num_channels or min(shape) < 1:
                return f"expected [height, width, {self.num_channels}] under {self.shape_key!r}"
            if self.encoding == "raw" and len(values[0]) != math.prod(shape):
                return f"{len(values[0])} bytes of pixels, but shape {shape}"
        if self.size is not None and self.stores_shape and self.shape_key in stored and list(shape) != self.shape:
            return f"shape {list(shape)} under {self.shape_key!r}, expected {self.shape}"
        return None

    def statistics_values(self, encoded: dict[str, Values]) -> Values:
        if self.stores_shape:
            return encoded[self.shape_key]
        stored = encoded[self.record_key]
        count = stored.num_rows
        # with a sequence's steps: each record's images go with it (one copy puts a shard's records
        # back in the source's order by them; the statistics count images either way)
        return Values("int64", np.tile(np.array(self.shape, np.int64), count), np.full(count, 3, np.int64),
                      steps=stored.steps)

    @property
    def counted(self) -> Counted:
        """Its images' heights and widths (statistics_values: each one's [height, width, channels])."""
        return Counted("image_sizes", channels=self.num_channels)

    def stored_kinds(self) -> dict[str, ListKind]:
        """The list kind each of the feature's record keys is stored in (what `verify` reads as columns)."""
        kinds: dict[str, ListKind] = {self.record_key: "bytes"}
        if self.stores_shape:
            kinds[self.shape_key] = "int64"
        return kinds

    def check_columns(self, columns: dict[str, StoredColumn]) -> np.ndarray:
        """`check_stored` on whole columns (codec/columns.py): per record, whether check_stored
        finds something wrong there. It never misses one; `verify` then asks check_stored for the words."""
        image = columns[self.record_key]
        wrong = (image.counts != 1) | (image.kind != "bytes")
        if not self.stores_shape:
            return wrong
        shape = columns[self.shape_key]
        three = (shape.counts == 3) & (shape.kind == "int64")
        dims = np.ones((len(three), 3), dtype=np.int64)
        dims[three] = shape.values[shape.offsets[:-1][three][:, None] + np.arange(3)]
        wrong |= ~three | (dims[:, 2] != self.num_channels) | (dims.min(axis=1) < 1)
        if self.encoding == "raw":  # the pixels' bytes (a product that could pass 2^63 is left to check_stored)
            sizes = image.values[np.minimum(image.offsets[:-1], len(image.values) - 1)] if len(image.values) else 0
            wrong |= (dims > 1 << 20).any(axis=1) | (sizes != dims.prod(axis=1))
        if self.size is not None:
            wrong |= (dims != np.array(self.shape)).any(axis=1)
        return wrong

    # ---- reading side ----------------------------------------------------------------------------
    def parsing(self) -> dict[str, ParseSpec]:
        kind = "fixed_steps" if self.sequence else "fixed"
        specs: dict[str, ParseSpec] = {self.record_key: (kind, "string", [])}
        if self.stores_shape:
            specs[self.shape_key] = (kind, "int64", [3])
        return specs

    def decoding(self, options: Any) -> list[DecodeStep]:
        if self.sequence:  # the same steps, on the real steps' images (step_images)
            frames = dataclasses.replace(self, sequence=False).decoding(options)
            arguments: dict[str, Any] = {"length": {"lengths": self.record_key}, "steps": frames}
            if self.stores_shape:
                arguments["shapes"] = {"parsed": self.shape_key}
            return [("step_images", arguments)]
        deep_images = {"dtype": "uint16"} if self.dtype == "uint16" else {}  # uint8's steps as they were
        if self.size is not None:
            steps: list[DecodeStep] = [("fixed_images", {"encoding": self.encoding, "shape": list(self.shape),
                                                         **deep_images})]
        else:
            images = {"shapes": {"parsed": self.shape_key}, "encoding": self.encoding, "channels": self.num_channels,
                      **deep_images}
            if options.image_size is not None:
                steps = [("resized_images", {**images, "size": list(options.image_size)})]
            else:
                steps = [("padded_images", images)]
        return steps + [("scaled_images", {})] if options.image_dtype == "float32" else steps

    @property
    def card(self) -> Card:
        """Thumbnails, at their fixed size or their stored shape's."""
        return Card("image", size=self.size if self.size is not None else self.shape_key)

    def tfds_feature(self, options: Any) -> dict[str, Any]:
        """TFDS's Image, which decodes our JPEG or PNG (uint16 PNG too: its decode_png(dtype=uint16),
        the values stored, exactly); raw pixels a uint8 Tensor of their bytes."""
        dimensions = tfds.dimensions(self.shape or [])  # (normalised: always [height, width, channels])
        if self.encoding == "raw":  # the pixels' bytes
            return tfds.tensor(dimensions, "uint8", "bytes")
        return {"pythonClassName": tfds.IMAGE, "image": {"shape": {"dimensions": dimensions}, "dtype": self.dtype,
                                                          "encodingFormat": self.encoding}}

    def describe(self) -> str:
        height, width, channels = ("null" if dim is None else dim for dim in self.shape)
        deep_images = " uint16" if self.dtype == "uint16" else ""
        if self.sequence:
            return f"image {self.encoding}{deep_images} [null, {height}, {width}, {channels}] (steps, padded)"
        return f"image {self.encoding}{deep_images} [{height}, {width}, {channels}]"


register("image")(ImageFeature)


class _Frames(list):
    """A batch's frames laid end to end (encode_steps hands them to `encode` as images)."""


def mixed_sizes(shape: Any, first: Any) -> str:
    """The words for a frame whose (height, width, ...) `shape` isn't its record's first frame's."""
    return (f"a frame of {_size(shape)}, but step 0 is {_size(first)}: the frames of a record share one size "
            "(give the feature a fixed `shape` to resize them)")


def _size(shape: Any) -> str:
    return f"{shape[1]}x{shape[0]} pixels"


def _describe(value: Any) -> str:
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"{len(value)} bytes"
    return type(value).__name__
