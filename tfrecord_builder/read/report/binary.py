"""Binary values as what they are: `described` ("PNG 64×48"), `shown` (the text a person reads
for any bytes value: text as itself, binary as "<PNG 64×48, 1,276 bytes>") and `decoded` (an
image's pixels, for a thumbnail). Never the raw bytes: a PNG's NUL and ^Z have no place on a page
or a terminal.

Whether bytes are text is the statistics' rule (`write.stats.is_text`), so the page, `inspect`
and `tfrecord_builder.json` agree on which values are binary. An image is named by Pillow from its
header alone (a few microseconds; its pixels are decoded only for the thumbnails); a few other
formats by their first bytes.
"""
from __future__ import annotations

import numpy as np

from ...media.images import BadImage
from ...media.images.pillow import load, opened
from ...write.stats import is_text

__all__ = ["decoded", "described", "is_text", "shown"]

# the first bytes of formats Pillow doesn't open: (offset, signature, name)
_SIGNATURES = [
    (0, b"fLaC", "FLAC audio"), (0, b"OggS", "Ogg"), (0, b"ID3", "MP3 audio"), (0, b"\x1f\x8b", "gzip data"),
    (0, b"PK\x03\x04", "zip archive"), (0, b"%PDF", "PDF document"), (0, b"\x93NUMPY", "NumPy array"),
    (0, b"\x1a\x45\xdf\xa3", "Matroska/WebM"), (4, b"ftyp", "MP4/QuickTime"),
]


def described(value: bytes) -> str:
    """What a binary value is, from its first bytes: `PNG 64×48` (an image: its format and size),
    `WAV audio`, `gzip data`, ...; "" when it is none of those."""
    if value[:4] == b"RIFF" and value[8:12] == b"WAVE":  # (before Pillow, which opens no WAV but tries every plugin)
        return "WAV audio"
    for offset, signature, name in _SIGNATURES:
        if value[offset:offset + len(signature)] == signature:
            return name
    try:
        _, image = opened(value)
    except BadImage:  # not an image Pillow knows, or a broken one: named by its size alone
        return ""
    width, height = image.size
    return f"{image.format} {width}×{height}"


def shown(value: bytes) -> str:
    """A bytes value as a person reads it: text as itself, anything else as what it is and its
    size, in angle brackets as `inspect` shows an image: `<PNG 64×48, 1,276 bytes>` (or `<1,276 bytes>`)."""
    if is_text([value]):
        return value.decode("utf-8")
    what = described(value)
    return f"<{what}, {len(value):,} bytes>" if what else f"<{len(value):,} bytes>"


def decoded(value: bytes) -> np.ndarray | None:
    """An image's pixels as stored ([height, width] or [height, width, channels]; uint8, or uint16
    for a 16-bit image; a palette image's indices), or None if the value is no image Pillow reads."""
    try:
        _, image = opened(value)
        load(image)
    except BadImage:
        return None
    if image.mode == "1":
        image = image.convert("L")
    pixels = np.asarray(image)
    if pixels.dtype.kind not in "ui":  # (a float TIFF: not a picture's values)
        return None
    if pixels.dtype.itemsize > 1 and pixels.dtype != np.uint16:  # 32-bit integers, 16-bit signed: as 16-bit
        pixels = np.clip(pixels, 0, 65535).astype(np.uint16)
    return pixels
