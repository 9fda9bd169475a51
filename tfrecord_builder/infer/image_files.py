"""What image files say about the image feature that stores them: encoding, channels, size.

Up to `PROBE_LIMIT` files are opened (spread evenly over the list, so every class folder is
seen), through the image feature's own opener, so a file it can't read is named here as the
build would name it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..errors import DataError
from ..images import BadImage
from ..images.pillow import opened

PROBE_LIMIT = 500
_GREY = {"1", "L", "I", "I;16", "I;16B", "I;16L", "F"}
_ALPHA = {"RGBA", "LA", "PA", "RGBa", "La"}
_TURNED = {5, 6, 7, 8}  # EXIF orientations that swap height and width once the image is upright


@dataclass(frozen=True)
class Picture:
    """One image file: its format (Pillow's name), upright size and natural channels."""

    format: str
    height: int
    width: int
    channels: int


@dataclass(frozen=True)
class ImageGuess:
    """The image feature for a set of files, and the comment that explains it."""

    encoding: str
    shape: list[int | None]
    note: str


def spread(items: Sequence[str], limit: int = PROBE_LIMIT) -> list[str]:
    """At most `limit` items, evenly spaced (all of them when there are few)."""
    if len(items) <= limit:
        return list(items)
    step = len(items) / limit
    return [items[int(index * step)] for index in range(limit)]


def look(path: str, shown: str) -> Picture:
    """The picture at `path` (`shown`: its name in messages); DataError if it isn't one."""
    try:
        _, image = opened(path)
        with image:
            width, height = image.size
            if image.getexif().get(0x0112) in _TURNED:
                width, height = height, width
            mode = image.mode
            transparent = mode == "P" and "transparency" in image.info
            return Picture(image.format or "?", height, width, _channels(mode, transparent))
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
    sampled = f"all {total}" if len(pictures) == total else f"{len(pictures)} sampled of {total}"
    kinds = "/".join(sorted(formats))
    if len(sizes) == 1:
        height, width = sizes.pop()
        shape: list[int | None] = [height, width, channels]
        more = "" if len(pictures) == total else "; others are resized to it"
        note = f"{sampled} images are {kinds} {height}x{width}, {channels} channel{'s' * (channels > 1)}{more}"
    else:
        heights = sorted(height for height, _ in sizes)
        widths = sorted(width for _, width in sizes)
        shape = [None, None, channels]
        note = (f"{sampled} images are {kinds}, {heights[0]}-{heights[-1]} high and {widths[0]}-{widths[-1]} "
                f"wide: each keeps its size ({channels} channel{'s' * (channels > 1)})")
    if encoding == "png" and formats != {"PNG"}:
        note += "; stored as PNG (lossless)"
    return ImageGuess(encoding, shape, note)


def _channels(mode: str, transparent: bool) -> int:
    if mode in _ALPHA or transparent:
        return 4
    return 1 if mode in _GREY else 3
