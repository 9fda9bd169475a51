"""What image files say about the image feature that stores them: encoding, channels, size.

Up to `PROBE_LIMIT` files are opened (spread evenly over the list, so every class folder is
seen), through the image feature's own opener, so a file it can't read is named here as the
build would name it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence, TypeVar

from ...errors import DataError
from ...media.images import BadImage, deep
from ...media.images.pillow import load, opened

PROBE_LIMIT = 500
T = TypeVar("T")
_GREY = {"1", "L", "I", "I;16", "I;16B", "I;16L", "F"}
_ALPHA = {"RGBA", "LA", "PA", "RGBa", "La"}
_TURNED = {5, 6, 7, 8}  # EXIF orientations that swap height and width once the image is upright
# Deep files whose values all lie under 2^12 (12-bit CT and MR, 9- and 10-bit sensors) would be
# nearly black at value / 257: infer stretches each file's range instead
_FEW_BITS = 4095


@dataclass(frozen=True)
class Picture:
    """One image file: its format (Pillow's name), upright size and natural channels."""

    format: str
    height: int
    width: int
    channels: int
    bits: int = 8
    values: tuple[int, int] | None = None  # a deep file's lowest and highest value
    mode: str = "RGB"  # Pillow's: P for a palette file (a mask of class indices, as VOC's)


@dataclass(frozen=True)
class ImageGuess:
    """The image feature for a set of files, and the comment that explains it."""

    encoding: str
    shape: list[int | None]
    note: str
    scale_16bit: str | None = None  # how deep files become 8 bits, when some are and some aren't
    dtype: str | None = None  # uint16 when every file sampled is deep (values in 0-65535)

    def fields(self) -> dict[str, object]:
        """The image feature's keys as the spec writes them."""
        fields: dict[str, object] = {"type": "image", "encoding": self.encoding, "shape": self.shape}
        if self.scale_16bit:
            fields["scale_16bit"] = self.scale_16bit
        if self.dtype:
            fields["dtype"] = self.dtype
        return fields


def spread(items: Sequence[T], limit: int = PROBE_LIMIT) -> list[T]:
    """At most `limit` items, evenly spaced (all of them when there are few)."""
    if len(items) <= limit:
        return list(items)
    step = len(items) / limit
    return [items[int(index * step)] for index in range(limit)]


def look(path: str, shown: str) -> Picture:
    """The picture at `path` (`shown`: its name in messages); DataError if it isn't one."""
    try:
        data, image = opened(path)
        with image:
            width, height = image.size
            if image.getexif().get(0x0112) in _TURNED:
                width, height = height, width
            mode = image.mode
            transparent = mode == "P" and "transparency" in image.info
            bits = deep.bits(image)
            values = None
            if bits > 8:  # its range decides the scaling rule: the pixels are read
                load(image)
                pixels = deep.values(image, data, bits)
                values = int(pixels.min()), int(pixels.max())
            return Picture(image.format or "?", height, width, _channels(mode, transparent), bits, values, mode)
    except BadImage as error:
        raise DataError(f"{shown}: {error}") from None
    except OSError as error:
        raise DataError(f"{shown}: can't read the image ({error})") from None


def image_guess(pictures: Sequence[Picture], total: int) -> ImageGuess:
    """JPEG when every file is a JPEG (stored as it is), else PNG (lossless); channels enough for
    every file (a grey file among colour ones becomes colour); a fixed size when every file
    sampled has the same one."""
    formats = {picture.format for picture in pictures}
    encoding = "jpeg" if formats <= {"JPEG", "MPO"} else "png"
    channels = max(picture.channels for picture in pictures)
    if encoding == "jpeg":
        channels = min(channels, 3)
    sizes = {(picture.height, picture.width) for picture in pictures}
    sampled = ("the one image is" if total == 1 else f"all {total} images are" if len(pictures) == total
               else f"{len(pictures)} images sampled of {total} are")
    kinds = "/".join(sorted(formats))
    if len(sizes) == 1:
        height, width = sizes.pop()
        shape: list[int | None] = [height, width, channels]
        more = "" if len(pictures) == total else "; others are resized to it"
        note = f"{sampled} {kinds} {height}x{width}, {channels} channel{'s' * (channels > 1)}{more}"
    else:
        heights = sorted(height for height, _ in sizes)
        widths = sorted(width for _, width in sizes)
        shape = [None, None, channels]
        note = (f"{sampled} {kinds}, {heights[0]}-{heights[-1]} high and {widths[0]}-{widths[-1]} "
                f"wide: each keeps its size ({channels} channel{'s' * (channels > 1)})")
    if encoding == "png" and formats != {"PNG"}:
        note += "; stored as PNG (lossless)"
    scale, dtype, deep_note = _deep([picture for picture in pictures if picture.values is not None], len(pictures))
    return ImageGuess(encoding, shape, note + deep_note, scale, dtype)


def _deep(deep: Sequence[Picture], sampled: int) -> tuple[str | None, str | None, str]:
    """The 16-bit files' rule and what the note says of it: `dtype: uint16` (every value kept) when
    every file sampled is deep with values in 0-65535; else 8 bits by a scale_16bit rule (a uint16
    feature refuses 8-bit files), min_max when every value sampled lies under 2^12, else full_range."""
    if not deep:
        return None, None, ""
    low = min(picture.values[0] for picture in deep)  # type: ignore[index]
    high = max(picture.values[1] for picture in deep)  # type: ignore[index]
    bits = max(picture.bits for picture in deep)
    which = f"; all {bits}-bit" if len(deep) == sampled else f"; {len(deep)} are {bits}-bit"
    rule = "full_range" if low >= 0 and high > _FEW_BITS else "min_max"
    if low >= 0 and high <= 65535 and len(deep) == sampled:
        eight = ("full_range divides them by 257" if rule == "full_range"
                 else "min_max stretches each file's own range onto 0-255")
        return None, "uint16", (f"{which} (values {low}-{high}): dtype: uint16 keeps every value (in 8 bits "
                                f"instead: scale_16bit: {eight})")
    if rule == "full_range":
        return rule, None, (f"{which} (values {low}-{high}): scale_16bit: full_range divides them by 257 "
                            f"(min_max: each file's own range onto 0-255)")
    shown = f"{low}-{high}" if low >= 0 else f"{low} to {high}"
    return rule, None, (f"{which} (values {shown}): scale_16bit: min_max stretches each file's own range onto "
                        f"0-255 (full_range, value / 257, would leave them dark)")


def _channels(mode: str, transparent: bool) -> int:
    if mode in _ALPHA or transparent:
        return 4
    return 1 if mode in _GREY else 3
