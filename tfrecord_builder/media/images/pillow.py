"""The Pillow pipeline: an image opened from a path, bytes, an array or a PIL image; checked
for truncation; decoded (a JPEG at a reduced scale when it will be shrunk a lot); turned
upright; converted to 1, 3 or 4 channels and resized; re-encoded."""
from __future__ import annotations

import io
import os
import warnings
from typing import Any, Literal

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from .. import source
from . import BadImage, tiff
from .jpeg import jpeg_ends, jpeg_header

FORMATS = {"jpeg": {"JPEG", "MPO"}, "png": {"PNG"}}  # what each encoding stores as it is
FILTERS = {"nearest": Image.Resampling.NEAREST, "bilinear": Image.Resampling.BILINEAR,
           "bicubic": Image.Resampling.BICUBIC, "lanczos": Image.Resampling.LANCZOS,
           "box": Image.Resampling.BOX}
MODES = {1: "L", 3: "RGB", 4: "RGBA"}
_EXIF_ORIENTATION = 0x0112
_TRANSPOSING = {5, 6, 7, 8}  # EXIF orientations that swap width and height
# A JPEG drafted for a resize keeps at least this many times the resized size: the filter then
# still averages over 3x3 or more decoded pixels per output pixel. With 2, a 4x reduction drafted
# to 1/8 scale lost 0.4 dB against the full decode's resize (tests/images/test_pillow.py); with 3
# a 12-megapixel photo resized to 224x224 keeps the full decode's PSNR (bench/README.md)
DRAFT_MARGIN = 3
_HEADER_BYTES = 1 << 16  # where a JPEG's markers end, but for large embedded tables or thumbnails

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
        raise BadImage(tiff.unreadable(data) or "not an image Pillow can read (unsupported format or corrupt "
                       "header)") from None
    except (OSError, SyntaxError, ValueError) as error:
        raise BadImage(f"corrupt image ({error})") from None


def read_file(path: str | os.PathLike) -> bytes:
    """An image file's bytes (a local path or a URL)."""
    return source.read_whole(path, "an image file", BadImage)


def fits_as_it_is(image: Image.Image, encoding: Encoding, channels: int, size: tuple[int, int] | None) -> bool:
    """Whether an opened file can be stored as it is: the encoding, colour mode and size asked,
    8 bits a channel, and upright."""
    tile = getattr(image, "tile", None)  # only images opened from a file have one (Pillow 13)
    raw_mode = tile[0][3] if tile and len(tile[0]) > 3 else ""
    return (
        image.format in FORMATS.get(encoding, ())
        and image.mode == MODES[channels]
        and ";16" not in str(raw_mode)
        and (size is None or size == (image.height, image.width))
        and orientation(image) == 1
    )


def kept(data: bytes, image: Image.Image) -> bytes:
    """The bytes of a file stored as it is: all of them, but for an MPO (a camera's JPEG with more
    pictures appended: a stereo pair, a depth map, a preview) its first picture alone, the
    complete JPEG up to its end-of-image marker that the MP index gives. Decoders read only that
    picture of the whole file (tf.io.decode_jpeg and Pillow alike, to the same pixels), so the
    rest would be bytes no reader decodes."""
    if image.format != "MPO":
        return data
    entries = (getattr(image, "mpinfo", None) or {}).get(0xB002) or []
    first = entries[0] if entries and isinstance(entries[0], dict) else {}
    size = first.get("Size")
    if first.get("DataOffset") == 0 and isinstance(size, int) and 4 <= size <= len(data) \
            and data[size - 2 : size] == b"\xff\xd9":
        return data[:size]
    return data  # an index that doesn't point at the first picture's end: the whole file, as read


def second_pass(image: Image.Image, encoding: Encoding, channels: int, size: tuple[int, int] | None) -> str | None:
    """Why a JPEG that is already the picture the spec asks for (its upright size, its number of
    channels) can't be stored as it is and is encoded a second time, lossily: its EXIF
    orientation turns it, or it is CMYK or YCbCr. None when the spec asked for a change (another
    size or channel count, another encoding), which needs a new encoding anyway."""
    natural = 1 if image.mode == "L" else 3
    if encoding != "jpeg" or image.format not in FORMATS["jpeg"] or channels != natural:
        return None
    turned = orientation(image)
    upright_size = (image.width, image.height) if turned in _TRANSPOSING else (image.height, image.width)
    if size is not None and size != upright_size:
        return None
    if turned != 1:
        return "turned upright by the EXIF orientation"
    if image.mode != MODES[channels]:
        return f"converted from {image.mode} to RGB"
    return None


def orientation(image: Image.Image) -> int:
    """The image's EXIF orientation (1: upright), read without the pixels."""
    if "exif" not in image.info:  # parsing EXIF is slow: only where there is a block
        return 1
    return image.getexif().get(_EXIF_ORIENTATION, 1)


def check_structure(data: bytes, image: Image.Image) -> None:
    """A file kept as it is ends where its format says it does: a JPEG has its end-of-image
    marker after the start of its compressed data, a PNG ends with its IEND chunk. Pillow has
    already read the header; this catches truncated files without decoding a pixel."""
    if image.format in FORMATS["jpeg"]:
        if not jpeg_ends(data, image.tile[0][2] if getattr(image, "tile", None) else 0):
            raise BadImage("truncated JPEG (no end-of-image marker after the compressed data)")
    elif image.format == "PNG" and not data.rstrip(b"\0").endswith(b"IEND\xaeB`\x82"):
        raise BadImage("truncated PNG (it doesn't end with an IEND chunk)")


def drafted(image: Image.Image, size: tuple[int, int] | None, how: str) -> None:
    """Lets a JPEG that the resize to (height, width) `size` shrinks 6 times or more decode at
    1/2, 1/4 or 1/8 of its size (libjpeg's DCT scaling: the skipped frequencies are the ones the
    resize would average away), keeping at least `DRAFT_MARGIN` times the resized size. A
    12-megapixel photo resized to 224x224 decodes about 5 times faster. Call it before `load`;
    other images, and smaller reductions, are decoded whole as before."""
    if size is None or image.format not in FORMATS["jpeg"]:
        return
    turned = orientation(image) in _TRANSPOSING  # the size asked is the upright image's
    width, height = (image.height, image.width) if turned else (image.width, image.height)
    wanted = [DRAFT_MARGIN * side for side in scaled_size(width, height, size, how)]
    if turned:
        wanted.reverse()
    if image.width >= 2 * wanted[0] and image.height >= 2 * wanted[1]:  # else draft would keep scale 1
        image.draft(None, (wanted[0], wanted[1]))


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


def fitted(image: Image.Image, channels: int, size: tuple[int, int] | None, how: str,
           resample: str) -> Image.Image:
    """The decoded 8-bit image in the colour mode of `channels` at (height, width) `size`
    (`converted`, then `resized`). Deeper images take deep.fitted, by the spec's rule."""
    return resized(converted(image, channels), size, how, resample)


def converted(image: Image.Image, channels: int) -> Image.Image:
    """The image in the colour mode of `channels` (1: L, 3: RGB, 4: RGBA)."""
    target = MODES[channels]
    mode = image.mode
    if mode in ("P", "PA"):
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
    image = image.resize(scaled_size(image.width, image.height, size, how), FILTERS[resample])
    return placed(image, size, how)


def placed(image: Image.Image, size: tuple[int, int], how: str) -> Image.Image:
    """An image resized to `scaled_size` brought to (height, width) `size`: as it is (stretch),
    centre-cropped (crop) or centred on black (pad)."""
    height, width = size
    scaled = image.size
    if how == "stretch":
        return image
    if how == "crop":
        left, top = (scaled[0] - width) // 2, (scaled[1] - height) // 2
        return image.crop((left, top, left + width, top + height))
    canvas = Image.new(image.mode, (width, height))
    canvas.paste(image, ((width - scaled[0]) // 2, (height - scaled[1]) // 2))
    return canvas


def scaled_size(width: int, height: int, size: tuple[int, int], how: str) -> tuple[int, int]:
    """(width, height) an image of `width` x `height` is resized to before `how` (stretch, pad or
    crop) reaches (height, width) `size`: the size itself, or the aspect kept, fitting or covering."""
    if how == "stretch":
        return size[1], size[0]
    scale = (min if how == "pad" else max)(size[1] / width, size[0] / height)
    return max(1, round(width * scale)), max(1, round(height * scale))


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


def oriented_size(value: Any) -> tuple[int, int]:
    """(height, width) of an image as it is shown, after its EXIF orientation, from its header
    alone: no pixel is decoded (Pillow opens lazily). What pixel boxes drawn on it are counted in."""
    height, width, turned = stored_size(value)
    return (width, height) if turned in _TRANSPOSING else (height, width)


def stored_size(value: Any) -> tuple[int, int, int]:
    """(height, width) of an image as stored, and its EXIF orientation (1: upright), from its
    header alone; raises BadImage."""
    if isinstance(value, (str, os.PathLike)):
        try:
            with source.opened(value, "an image file", BadImage) as file, warnings.catch_warnings():
                # a plain JPEG (no EXIF to turn it) from its markers: 4 times faster than Pillow's parser
                plain = jpeg_header(file.read(_HEADER_BYTES))
                if plain is not None:
                    return plain[0], plain[1], 1
                file.seek(0)
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # (only its size is read)
                image = Image.open(file)
                return image.height, image.width, orientation(image)
        except BadImage:
            raise
        except UnidentifiedImageError:
            raise BadImage("not an image Pillow can read (unsupported format or corrupt header)") from None
        except (OSError, SyntaxError, ValueError) as error:
            raise BadImage(f"corrupt image ({error})") from None
    _, image = opened(value)
    return image.height, image.width, orientation(image)


def turns(orientation: int) -> bool:
    """Whether an EXIF orientation swaps the image's width and height (a quarter turn)."""
    return orientation in _TRANSPOSING


def placement(height: int, width: int, size: tuple[int, int], how: str) -> tuple[float, float, float, float]:
    """Where a point of an upright image of `height` x `width` lands once `resized` to (height,
    width) `size` by `how`, as fractions: (scale_y, scale_x, offset_y, offset_x), a fraction f
    of the original going to f * scale + offset. The same geometry as `scaled_size` and `placed`."""
    if how == "stretch":
        return 1.0, 1.0, 0.0, 0.0
    scaled_width, scaled_height = scaled_size(width, height, size, how)
    if how == "crop":
        left, top = -((scaled_width - size[1]) // 2), -((scaled_height - size[0]) // 2)
    else:
        left, top = (size[1] - scaled_width) // 2, (size[0] - scaled_height) // 2
    return scaled_height / size[0], scaled_width / size[1], top / size[0], left / size[1]
