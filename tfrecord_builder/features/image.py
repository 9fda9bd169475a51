"""`image`: a picture stored as JPEG, PNG or raw uint8 pixels, decoded on the reading side.

Writing (Pillow): the image is decoded (which also catches corrupt and truncated files), turned
upright by its EXIF orientation, converted to the declared channels, resized if the shape is
fixed, and encoded. When the source file already is what the spec asks for (same format, same
channels, same size, upright), its own bytes are stored instead: no second lossy JPEG pass.

Channels: 1 grey (ITU-R 601-2 luma from colour), 3 RGB, 4 RGBA. Palette images keep their
colours (and transparency, for 4 channels); 16-bit images keep their high byte; an alpha channel
is dropped for 1 or 3 channels (not composited). Resizing uses Pillow's bilinear filter by
default, which averages over the source pixels when shrinking (antialiased).

Reading: `FixedLenFeature([], tf.string)` per image, plus `KEY/shape` (int64 [height, width,
channels]) for images kept at their own size and for raw pixels; decoded by `reading.py`.
"""
from __future__ import annotations

import dataclasses
import io
import math
import os
import warnings
from dataclasses import dataclass
from typing import Any, Literal, Sequence

import numpy as np
import simplejpeg
from PIL import Image, ImageOps, UnidentifiedImageError

from .. import fs
from ..spec.fields import At, meta
from .base import DecodeStep, Feature, Origin, ParseSpec, register
from .shown import Language
from .tensor import format_shape
from .values import ListKind, StoredColumn, Values


FORMATS = {"jpeg": "JPEG", "png": "PNG"}
FILTERS = {"nearest": Image.Resampling.NEAREST, "bilinear": Image.Resampling.BILINEAR,
           "bicubic": Image.Resampling.BICUBIC, "lanczos": Image.Resampling.LANCZOS,
           "box": Image.Resampling.BOX}
MODES = {1: "L", 3: "RGB", 4: "RGBA"}
_EXIF_ORIENTATION = 0x0112


class BadImage(ValueError):
    """An image that can't be stored as declared; the message says why."""


@dataclass(frozen=True, kw_only=True)
class ImageFeature(Feature):
    """An image: `{type: image, encoding: jpeg, shape: [64, 64, 3]}`."""

    @property
    def batch_rows(self) -> int:  # type: ignore[override]
        """About 2 MiB of pixels to a batch (32 to 512 images): NumPy's cost per batch spreads over
        small images, large ones spread over the workers in small batches, and the first batches
        come back soon enough to keep every worker busy."""
        if self.size is None:
            return 32
        return max(32, min(512, 2 * 1024**2 // (self.size[0] * self.size[1] * self.num_channels)))

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

    # ---- writing side ----------------------------------------------------------------------------
    def encode(self, values: Sequence[Any], origin: Origin, base_dir: str | None = None,
               language: Language = "python") -> dict[str, Values]:
        stored: list[bytes] = []
        shapes: list[tuple[int, int, int]] = []
        for row, value in enumerate(values):
            if value is None:
                raise self.fail(origin, row, "missing image")
            if base_dir is not None and isinstance(value, str) and not os.path.isabs(value) and not fs.is_url(value):
                value = fs.join(base_dir, value)
            try:
                data, shape = self.prepare(value)
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

    def prepare(self, value: Any) -> tuple[bytes, tuple[int, int, int]]:
        """The bytes to store for one image and its (height, width, channels)."""
        if self.encoding == "jpeg" and self.validate == "structure" and isinstance(value, (str, os.PathLike)):
            fast = self._plain_jpeg(value)
            if fast is not None:
                return fast
        source, image = _open(value)
        tile = getattr(image, "tile", None)  # only images opened from a file have one (Pillow 13)
        raw_mode = tile[0][3] if tile and len(tile[0]) > 3 else ""
        passthrough = source is not None and self._can_pass_through(image, raw_mode)
        size = (image.height, image.width)
        if passthrough and self.validate == "structure":
            _check_structure(source, image)
            return source, (*size, self.num_channels)
        if source is not None and image.format == "JPEG" and self.validate == "decode":
            _check_jpeg_data(source)  # Pillow decodes corrupt data in silence
            if passthrough:
                return source, (*size, self.num_channels)
        _load(image)
        if passthrough:
            return source, (*size, self.num_channels)
        image = _upright(image)
        image = self._convert(image)
        image = self._resize(image)
        return self._encode_pixels(image), (image.height, image.width, self.num_channels)

    def _plain_jpeg(self, path: Any) -> tuple[bytes, tuple[int, int, int]] | None:
        """A JPEG file stored as it is, checked from its markers alone (several times faster than
        Pillow's parser); None for anything unusual (EXIF, 12-bit, another size or channel count,
        a malformed header), which Pillow then handles and explains."""
        try:
            with fs.open_file(os.fspath(path)) as file:
                data = file.read()
        except OSError:
            return None
        header = jpeg_header(data)
        if header is None:
            return None
        height, width, channels, scan = header
        if channels != self.num_channels or (self.size is not None and self.size != (height, width)):
            return None
        if height * width > (Image.MAX_IMAGE_PIXELS or float("inf")) or not _jpeg_ends(data, scan):
            return None
        return data, (height, width, channels)

    def _can_pass_through(self, image: Image.Image, raw_mode: Any) -> bool:
        return (
            image.format == FORMATS.get(self.encoding)
            and image.mode == MODES[self.num_channels]
            and ";16" not in str(raw_mode)
            and (self.size is None or self.size == (image.height, image.width))
            and ("exif" not in image.info or image.getexif().get(_EXIF_ORIENTATION, 1) == 1)  # parsing EXIF is slow
        )

    def _convert(self, image: Image.Image) -> Image.Image:
        target = MODES[self.num_channels]
        mode = image.mode
        if mode.startswith("I"):  # 16- or 32-bit grey: keep the high byte of 16-bit values
            pixels = np.asarray(image).astype(np.int64)
            image = Image.fromarray((np.clip(pixels, 0, 65535) >> 8).astype(np.uint8), "L")
        elif mode in ("P", "PA"):
            image = image.convert("RGBA" if target == "RGBA" or "transparency" in image.info else "RGB")
        elif mode == "1":
            image = image.convert("L")
        elif mode not in ("L", "LA", "RGB", "RGBA", "RGBX", "CMYK", "YCbCr", "La", "RGBa"):
            raise BadImage(f"can't convert colour mode {mode} to {self.num_channels} channels")
        return image if image.mode == target else image.convert(target)

    def _resize(self, image: Image.Image) -> Image.Image:
        if self.size is None or self.size == (image.height, image.width):
            return image
        height, width = self.size
        resample = FILTERS[self.filter]
        if self.resize == "stretch":
            return image.resize((width, height), resample)
        scale = (min if self.resize == "pad" else max)(width / image.width, height / image.height)
        scaled = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
        image = image.resize(scaled, resample)
        if self.resize == "crop":
            left, top = (scaled[0] - width) // 2, (scaled[1] - height) // 2
            return image.crop((left, top, left + width, top + height))
        canvas = Image.new(image.mode, (width, height))
        canvas.paste(image, ((width - scaled[0]) // 2, (height - scaled[1]) // 2))
        return canvas

    def _encode_pixels(self, image: Image.Image) -> bytes:
        if self.encoding == "raw":
            if image.mode in ("L", "RGB", "RGBA"):  # 8 bits a channel: Pillow's own bytes, one copy
                return image.tobytes()
            return np.asarray(image, dtype=np.uint8).tobytes()
        buffer = io.BytesIO()
        if self.encoding == "jpeg":
            image.save(buffer, "JPEG", quality=self.quality)
        else:
            image.save(buffer, "PNG", compress_level=6)
        return buffer.getvalue()

    def check_stored(self, stored: dict[str, tuple[str, list[Any]]]) -> str | None:
        kind, values = stored.get(self.record_key, ("bytes", []))
        if self.record_key not in stored or kind != "bytes" or len(values) != 1:
            return f"expected one encoded image under {self.record_key!r}"
        if self.stores_shape:
            kind, shape = stored.get(self.shape_key, ("int64", []))
            if kind != "int64" or len(shape) != 3 or shape[2] != self.num_channels or min(shape) < 1:
                return f"expected [height, width, {self.num_channels}] under {self.shape_key!r}"
            if self.encoding == "raw" and len(values[0]) != math.prod(shape):
                return f"{len(values[0])} bytes of pixels, but shape {shape}"
        if self.size is not None and self.stores_shape and list(shape) != self.shape:
            return f"shape {list(shape)} under {self.shape_key!r}, expected {self.shape}"
        return None

    def statistics_values(self, encoded: dict[str, Values]) -> Values:
        if self.stores_shape:
            return encoded[self.shape_key]
        count = encoded[self.record_key].num_rows
        return Values("int64", np.tile(np.array(self.shape, np.int64), count), np.full(count, 3, np.int64))

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
        specs: dict[str, ParseSpec] = {self.record_key: ("fixed", "string", [])}
        if self.stores_shape:
            specs[self.shape_key] = ("fixed", "int64", [3])
        return specs

    def decoding(self, options: Any) -> list[DecodeStep]:
        if self.size is not None:
            steps: list[DecodeStep] = [("fixed_images", {"encoding": self.encoding, "shape": list(self.shape)})]
        else:
            images = {"shapes": {"parsed": self.shape_key}, "encoding": self.encoding, "channels": self.num_channels}
            if options.image_size is not None:
                steps = [("resized_images", {**images, "size": list(options.image_size)})]
            else:
                steps = [("padded_images", images)]
        return steps + [("scaled_images", {})] if options.image_dtype == "float32" else steps

    def describe(self) -> str:
        height, width, channels = ("null" if dim is None else dim for dim in self.shape)
        return f"image {self.encoding} [{height}, {width}, {channels}]"


register("image")(ImageFeature)


def _open(value: Any) -> tuple[bytes | None, Image.Image]:
    """(the source file's bytes if there is a file, the opened image)."""
    if isinstance(value, Image.Image):
        return None, value
    if isinstance(value, np.ndarray):
        if value.dtype != np.uint8 or value.ndim not in (2, 3):
            raise BadImage(f"expected a uint8 array [height, width(, channels)], received {value.dtype} "
                           f"{list(value.shape)}")
        return None, Image.fromarray(value[:, :, 0] if value.ndim == 3 and value.shape[2] == 1 else value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
    elif isinstance(value, (str, os.PathLike)):
        try:
            with fs.open_file(os.fspath(value)) as file:
                data = file.read()
        except FileNotFoundError:
            raise BadImage("file not found") from None
        except IsADirectoryError:
            raise BadImage("is a folder, not an image file") from None
        except OSError as error:
            raise BadImage(f"can't read the file ({error.strerror})") from None
    else:
        raise BadImage(f"expected a file path, encoded bytes, a PIL image or a uint8 array, "
                       f"received {type(value).__name__}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            return data, Image.open(io.BytesIO(data))
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as error:
        raise BadImage(f"over Pillow's decompression-bomb limit ({error})") from None
    except UnidentifiedImageError:
        raise BadImage("not an image Pillow can read (unsupported format or corrupt header)") from None
    except (OSError, SyntaxError, ValueError) as error:
        raise BadImage(f"corrupt image ({error})") from None


_SOF_MARKERS = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def jpeg_header(data: bytes) -> tuple[int, int, int, int] | None:
    """(height, width, components, offset of the compressed data) of a baseline or progressive
    8-bit JPEG without EXIF, read from its markers; None if the file is anything else."""
    if not data.startswith(b"\xff\xd8"):
        return None
    position, size, frame = 2, len(data), None
    while position + 4 <= size:
        if data[position] != 0xFF:
            return None
        marker = data[position + 1]
        if marker == 0xFF:  # fill byte
            position += 1
            continue
        length = (data[position + 2] << 8) | data[position + 3]
        if length < 2 or position + 2 + length > size:
            return None
        if marker == 0xE1 and data[position + 4 : position + 8] == b"Exif":
            return None  # it may turn the image: Pillow reads the orientation
        if marker in _SOF_MARKERS:
            if frame is not None or length < 8 or data[position + 4] != 8:
                return None
            frame = ((data[position + 5] << 8) | data[position + 6], (data[position + 7] << 8) | data[position + 8],
                     data[position + 9])
        elif marker == 0xDA:  # start of scan: the compressed data follows the header
            if frame is None or not frame[0] or not frame[1] or frame[2] not in (1, 3):
                return None
            return (*frame, position + 2 + length)
        elif marker in (0xD9, 0xD8) or 0xD0 <= marker <= 0xD7:
            return None
        position += 2 + length
    return None


def _jpeg_ends(data: bytes, scan: int) -> bool:
    """The JPEG's end-of-image marker comes after its compressed data starts (at `scan`)."""
    return data.rfind(b"\xff\xd9") >= scan


def _check_structure(data: bytes, image: Image.Image) -> None:
    """A file kept as it is ends where its format says it does: a JPEG has its end-of-image
    marker after the start of its compressed data, a PNG ends with its IEND chunk. Pillow has
    already read the header; this catches truncated files without decoding a pixel."""
    if image.format == "JPEG":
        if not _jpeg_ends(data, image.tile[0][2] if getattr(image, "tile", None) else 0):
            raise BadImage("truncated JPEG (no end-of-image marker after the compressed data)")
    elif image.format == "PNG" and not data.rstrip(b"\0").endswith(b"IEND\xaeB`\x82"):
        raise BadImage("truncated PNG (it doesn't end with an IEND chunk)")


def _check_jpeg_data(data: bytes) -> None:
    """Decodes a JPEG with libjpeg-turbo strictly: what libjpeg only warns about (corrupt data,
    such as bytes zeroed mid-scan, "premature end of data segment", extraneous bytes) is an error.
    Pillow discards those warnings and decodes shifted or grey blocks. At 1/8 scale the entropy
    decoder still reads every byte, but most of the inverse DCT is skipped."""
    try:
        height, width, colorspace, _ = simplejpeg.decode_jpeg_header(data)
        simplejpeg.decode_jpeg(data, colorspace=_JPEG_COLORSPACES.get(colorspace, "RGB"), strict=True,
                               min_height=max(1, height // 8), min_width=max(1, width // 8))
    except ValueError as error:  # libjpeg's own words: "Corrupt JPEG data: premature end of data segment"
        text = str(error)
        text = text[:1].lower() + text[1:]
        if text.startswith("premature end of JPEG file"):
            raise BadImage(f"truncated JPEG ({text})") from None
        raise BadImage(text if text.startswith("corrupt JPEG") else f"corrupt JPEG ({text})") from None


_JPEG_COLORSPACES = {"Gray": "GRAY", "CMYK": "CMYK", "YCCK": "CMYK"}  # simplejpeg's names -> what it decodes to


def _load(image: Image.Image) -> None:
    """Decodes the pixels; a bad file raises BadImage saying why."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            image.load()
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as error:
            raise BadImage(f"over Pillow's decompression-bomb limit ({error})") from None
        except (OSError, SyntaxError, ValueError, EOFError) as error:
            raise BadImage(f"corrupt or truncated image ({error})") from None


def _upright(image: Image.Image) -> Image.Image:
    """The image turned as its EXIF orientation says (a no-op without one)."""
    if "exif" not in image.info and not hasattr(image, "tag_v2"):
        return image  # no EXIF block (TIFFs keep theirs in tags): nothing to parse
    try:
        return ImageOps.exif_transpose(image)
    except (OSError, ValueError, SyntaxError) as error:
        raise BadImage(f"unreadable EXIF orientation ({error})") from None


def _describe(value: Any) -> str:
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"{len(value)} bytes"
    return type(value).__name__
