"""The Pillow pipeline: an image opened from a path, bytes, an array or a PIL image; checked
for truncation; decoded; turned upright; converted to 1, 3 or 4 channels; resized; re-encoded."""
from __future__ import annotations

import io
import os
import warnings
from typing import Any, Literal

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from .. import fs
from . import BadImage
from .jpeg import jpeg_ends

FORMATS = {"jpeg": "JPEG", "png": "PNG"}
FILTERS = {"nearest": Image.Resampling.NEAREST, "bilinear": Image.Resampling.BILINEAR,
           "bicubic": Image.Resampling.BICUBIC, "lanczos": Image.Resampling.LANCZOS,
           "box": Image.Resampling.BOX}
MODES = {1: "L", 3: "RGB", 4: "RGBA"}
_EXIF_ORIENTATION = 0x0112

Encoding = Literal["jpeg", "png", "raw"]


def opened(value: Any) -> tuple[bytes | None, Image.Image]:
    """(the source file's bytes if there is a file, the opened image): its header read, no pixels."""
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
        data = read_file(value)
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


def read_file(path: str | os.PathLike) -> bytes:
    """An image file's bytes (a local path or a URL)."""
    try:
        with fs.open_file(os.fspath(path)) as file:
            return file.read()
    except FileNotFoundError:
        raise BadImage("file not found") from None
    except IsADirectoryError:
        raise BadImage("is a folder, not an image file") from None
    except OSError as error:
        raise BadImage(f"can't read the file ({error.strerror})") from None


def fits_as_it_is(image: Image.Image, encoding: Encoding, channels: int, size: tuple[int, int] | None) -> bool:
    """Whether an opened file can be stored as it is: the encoding, colour mode and size asked,
    8 bits a channel, and upright."""
    tile = getattr(image, "tile", None)  # only images opened from a file have one (Pillow 13)
    raw_mode = tile[0][3] if tile and len(tile[0]) > 3 else ""
    return (
        image.format == FORMATS.get(encoding)
        and image.mode == MODES[channels]
        and ";16" not in str(raw_mode)
        and (size is None or size == (image.height, image.width))
        and ("exif" not in image.info or image.getexif().get(_EXIF_ORIENTATION, 1) == 1)  # parsing EXIF is slow
    )


def check_structure(data: bytes, image: Image.Image) -> None:
    """A file kept as it is ends where its format says it does: a JPEG has its end-of-image
    marker after the start of its compressed data, a PNG ends with its IEND chunk. Pillow has
    already read the header; this catches truncated files without decoding a pixel."""
    if image.format == "JPEG":
        if not jpeg_ends(data, image.tile[0][2] if getattr(image, "tile", None) else 0):
            raise BadImage("truncated JPEG (no end-of-image marker after the compressed data)")
    elif image.format == "PNG" and not data.rstrip(b"\0").endswith(b"IEND\xaeB`\x82"):
        raise BadImage("truncated PNG (it doesn't end with an IEND chunk)")


def load(image: Image.Image) -> None:
    """Decodes the pixels; a bad file raises BadImage saying why."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            image.load()
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as error:
            raise BadImage(f"over Pillow's decompression-bomb limit ({error})") from None
        except (OSError, SyntaxError, ValueError, EOFError) as error:
            raise BadImage(f"corrupt or truncated image ({error})") from None


def upright(image: Image.Image) -> Image.Image:
    """The image turned as its EXIF orientation says (a no-op without one)."""
    if "exif" not in image.info and not hasattr(image, "tag_v2"):
        return image  # no EXIF block (TIFFs keep theirs in tags): nothing to parse
    try:
        return ImageOps.exif_transpose(image)
    except (OSError, ValueError, SyntaxError) as error:
        raise BadImage(f"unreadable EXIF orientation ({error})") from None


def converted(image: Image.Image, channels: int) -> Image.Image:
    """The image in the colour mode of `channels` (1: L, 3: RGB, 4: RGBA)."""
    target = MODES[channels]
    mode = image.mode
    if mode.startswith("I"):  # 16- or 32-bit grey: keep the high byte of 16-bit values
        pixels = np.asarray(image).astype(np.int64)
        image = Image.fromarray((np.clip(pixels, 0, 65535) >> 8).astype(np.uint8), "L")
    elif mode in ("P", "PA"):
        image = image.convert("RGBA" if target == "RGBA" or "transparency" in image.info else "RGB")
    elif mode == "1":
        image = image.convert("L")
    elif mode not in ("L", "LA", "RGB", "RGBA", "RGBX", "CMYK", "YCbCr", "La", "RGBa"):
        raise BadImage(f"can't convert colour mode {mode} to {channels} channels")
    return image if image.mode == target else image.convert(target)


def resized(image: Image.Image, size: tuple[int, int] | None, how: str, resample: str) -> Image.Image:
    """The image at (height, width) `size` (None: as it is): stretched, or scaled to fit and
    padded with black (`pad`), or scaled to cover and centre-cropped (`crop`)."""
    if size is None or size == (image.height, image.width):
        return image
    height, width = size
    resample_filter = FILTERS[resample]
    if how == "stretch":
        return image.resize((width, height), resample_filter)
    scale = (min if how == "pad" else max)(width / image.width, height / image.height)
    scaled = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    image = image.resize(scaled, resample_filter)
    if how == "crop":
        left, top = (scaled[0] - width) // 2, (scaled[1] - height) // 2
        return image.crop((left, top, left + width, top + height))
    canvas = Image.new(image.mode, (width, height))
    canvas.paste(image, ((width - scaled[0]) // 2, (height - scaled[1]) // 2))
    return canvas


def encoded(image: Image.Image, encoding: Encoding, quality: int) -> bytes:
    """The image's bytes: a JPEG of `quality`, a PNG, or raw uint8 pixels."""
    if encoding == "raw":
        if image.mode in ("L", "RGB", "RGBA"):  # 8 bits a channel: Pillow's own bytes, one copy
            return image.tobytes()
        return np.asarray(image, dtype=np.uint8).tobytes()
    buffer = io.BytesIO()
    if encoding == "jpeg":
        image.save(buffer, "JPEG", quality=quality)
    else:
        image.save(buffer, "PNG", compress_level=6)
    return buffer.getvalue()
