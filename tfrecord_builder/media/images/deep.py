"""Images deeper than 8 bits a channel (16-bit grey or colour, Pillow's 32-bit integer mode "I")
brought to the 8 bits an image feature stores, by the rule the spec chooses (`scale_16bit`):
`full_range` (value / 257, rounded: 0-65535 onto 0-255) or `min_max` (the file's own lowest to
highest value onto 0-255). Without a rule such an image is refused: keeping its high byte, as
Pillow's own conversion does, leaves a 12-bit scan at most 16 grey levels (0-15), nearly black.

Pillow reads a 16-bit colour PNG or TIFF as 8-bit RGB(A) holding each value's high byte; the low
bytes are read by decoding the file a second time with the other byte order's raw mode (the
same unfiltering, the other byte of each pair), so both rules see the full 16 bits. A planar
TIFF (each channel a plane of its own), which that can't reach, is read plane by plane (tiff.py).

A feature of `dtype: uint16` keeps the 16 bits instead: `sixteen_bits` converts the channels and
resizes without leaving 16 bits, `png_16` writes the 16-bit PNG that is stored, and a 16-bit PNG
that already is that form is stored as it is (`fits_16_as_it_is`).
"""
from __future__ import annotations

import io
import struct
import sys
import zlib
from typing import Callable, Literal

import numpy as np
from PIL import Image

from . import BadImage, tiff
from .pillow import FILTERS, converted, orientation, placed, scaled_size, upright

Scale = Literal["full_range", "min_max"]
_COLOUR = {"RGB", "RGBA"}


def bits(image: Image.Image) -> int:
    """Bits a channel of an opened image (before `load`, which drops the raw modes read here):
    16 for 16-bit grey and colour files, 32 for Pillow's 32-bit integer mode, else 8. A TIFF
    says it in its tags: a planar one's raw modes are Pillow's 8-bit ones whatever its depth."""
    if image.mode.startswith("I;16") or any(";16" in mode for mode in _raw_modes(image)):
        return 16
    if image.format == "TIFF" and image.mode in _COLOUR and tiff.depth(image) == 16:
        return 16
    return 32 if image.mode == "I" else 8


def values(image: Image.Image, data: bytes | None, depth: int) -> np.ndarray:
    """The loaded image's values, upright, as int64 [height, width] or [height, width, channels]
    (grey and alpha: 2 channels)."""
    if image.mode.startswith("I"):
        return np.asarray(upright(image)).astype(np.int64)
    if image.mode in _COLOUR and depth == 16:
        if data is None:
            raise BadImage("a 16-bit colour image given as a PIL image holds only its high bytes: give the file")
        return _wide(image, data)
    raise BadImage(f"a {depth}-bit {image.mode} image: Pillow reads only its high bytes, which would cut its "
                   "values; convert it to 8 bits, or to 16-bit grey or RGB(A)")


def fitted(pixels: np.ndarray, depth: int, scale: Scale | None, channels: int, size: tuple[int, int] | None,
           how: str, resample: str) -> Image.Image:
    """Deep `pixels` (from `values`) resized at full precision (each channel as 32-bit integers),
    brought to 8 bits by `scale`, then converted to `channels`. The range of a colour image is
    its colour channels' together (its balance kept); an alpha channel always takes full_range."""
    planes = [pixels] if pixels.ndim == 2 else [pixels[..., channel] for channel in range(pixels.shape[2])]
    alpha_at = {2: 1, 4: 3}.get(len(planes))
    colour = np.stack(planes[:alpha_at], -1)
    low, high = int(colour.min()), int(colour.max())
    kind = {1: "grey", 2: "grey-and-alpha", 3: "RGB", 4: "RGBA"}[len(planes)]
    shown = f"values {low}-{high}" if low >= 0 else f"values {low} to {high}"
    if scale is None:
        raise BadImage(f"a {depth}-bit {kind} image ({shown}) into 8 bits: choose how to scale it with "
                       "`scale_16bit: full_range` (value / 257) or `scale_16bit: min_max` (the file's own "
                       "range onto 0-255)")
    if scale == "full_range" and (low < 0 or high > 65535):
        raise BadImage(f"a {depth}-bit {kind} image ({shown}) doesn't fit full_range's 0-65535: "
                       "use `scale_16bit: min_max`")
    scaled = None if size is None or size == pixels.shape[:2] else scaled_size(pixels.shape[1], pixels.shape[0],
                                                                                   size, how)
    stored = []
    for index, plane in enumerate(planes):
        if scaled is not None:
            plane = np.asarray(Image.fromarray(plane.astype(np.int32)).resize(scaled, FILTERS[resample]))
        alpha = index == alpha_at
        stored.append(eight_bits(plane, "full_range" if alpha else scale, 0 if alpha else low,
                                 65535 if alpha else high))
    image = Image.fromarray(stored[0] if len(stored) == 1 else np.dstack(stored))
    if scaled is not None:
        image = placed(image, size, how)
    return converted(image, channels)


def eight_bits(plane: np.ndarray, scale: Scale, low: int, high: int) -> np.ndarray:
    """uint8 values by `scale`, rounded half up in integers: full_range (v + 128) // 257;
    min_max (v - low) * 255 / (high - low), so low -> 0 and high -> 255 (one value -> 0).
    Values a resize's filter took past the range (bicubic, lanczos) are clipped to it first."""
    plane = np.asarray(plane, dtype=np.int64)
    if scale == "full_range":
        return ((np.clip(plane, 0, 65535) + 128) // 257).astype(np.uint8)
    if high == low:
        return np.zeros(plane.shape, np.uint8)
    span = high - low
    return (((np.clip(plane, low, high) - low) * 510 + span) // (2 * span)).astype(np.uint8)


def _raw_modes(image: Image.Image) -> list[str]:
    modes = []
    for tile in getattr(image, "tile", None) or []:
        args = tile[3] if len(tile) > 3 else None
        mode = args if isinstance(args, str) else args[0] if isinstance(args, tuple) and args else None
        if isinstance(mode, str):
            modes.append(mode)
    return modes


def _wide(image: Image.Image, data: bytes) -> np.ndarray:
    """A 16-bit colour file's values from its bytes `data` (`image`: the file loaded as Pillow
    reads it, each value's high byte). The file is decoded again with the other byte order's raw
    mode (RGB;16B <-> RGB;16L, and libtiff's native order RGB;16N taken as the machine's: the same
    unfiltering or decompression, each pair's other byte): its low bytes. A planar TIFF is read
    plane by plane instead (tiff.planes). A 16-bit grey-and-alpha PNG, which Pillow shows as RGBA of high bytes (raw mode LA;16B), is
    decoded again as RGBA's 4 bytes a pixel: grey's and alpha's two bytes each."""
    again = Image.open(io.BytesIO(data))
    if _raw_modes(again) == ["LA;16B"] * len(again.tile):
        pairs = np.asarray(upright(_loaded(again, lambda mode: "RGBA")), dtype=np.int64)
        return np.dstack([pairs[..., 0] << 8 | pairs[..., 1], pairs[..., 2] << 8 | pairs[..., 3]])
    if tiff.planar(again):
        return tiff.planes(data, again)
    swapped = _loaded(again, lambda mode: mode.replace(";16N", _NATIVE).replace(";16B", ";16_").replace(
        ";16L", ";16B").replace(";16_", ";16L"))
    return np.asarray(upright(image), dtype=np.int64) << 8 | np.asarray(upright(swapped), dtype=np.int64)


# libtiff hands Pillow a compressed TIFF's samples in this machine's byte order (raw mode ";16N"):
# that order's explicit raw mode, which the swap below turns into the other byte's
_NATIVE = ";16L" if sys.byteorder == "little" else ";16B"


def _loaded(image: Image.Image, raw_mode: Callable[[str], str]) -> Image.Image:
    """`image` (opened, not loaded) decoded with each tile's raw mode changed by `raw_mode`."""
    tiles = []
    for tile in image.tile:
        args = tile[3]
        mode = raw_mode(args if isinstance(args, str) else args[0])
        tiles.append(tile._replace(args=mode if isinstance(args, str) else (mode, *args[1:])))
    image.tile = tiles
    try:
        image.load()
    except (OSError, SyntaxError, ValueError, EOFError) as error:  # ValueError: no unpacker for the raw mode
        raise BadImage(f"a 16-bit {image.mode} image whose low bytes Pillow can't read ({error})") from None
    return image


# ---- kept at 16 bits (`dtype: uint16`) ------------------------------------------------------------
_PNG_16 = {1: "I;16B", 3: "RGB;16B", 4: "RGBA;16B"}  # Pillow's raw mode of a 16-bit PNG of each channel count
_PNG_COLOUR_TYPE = {1: 0, 3: 2, 4: 6}  # grey, RGB, RGBA


def fits_16_as_it_is(image: Image.Image, channels: int, size: tuple[int, int] | None) -> bool:
    """Whether an opened file can be stored as it is in a `dtype: uint16` feature: a 16-bit PNG
    of exactly the channels asked (grey, RGB or RGBA; not grey-and-alpha), at the size asked,
    upright. PNG is lossless and tf.io.decode_png(dtype=uint16) reads the file itself to the same
    values a re-encoding would hold, so re-encoding would only cost time (and may lose the file's
    better compression): the file's own bytes are stored, as an 8-bit PNG's are."""
    modes = _raw_modes(image)
    return (image.format == "PNG" and bool(modes) and all(mode == _PNG_16[channels] for mode in modes)
            and (size is None or size == (image.height, image.width)) and orientation(image) == 1)


def sixteen_bits(pixels: np.ndarray, depth: int, channels: int, size: tuple[int, int] | None, how: str,
                 resample: str) -> np.ndarray:
    """Deep `pixels` (from `values`) as uint16 [height, width, channels]: converted to `channels`
    (grey repeated; colour to grey by ITU-R 601-2 luma, (299 R + 587 G + 114 B) / 1000 rounded,
    Pillow's own weights; an alpha channel dropped, or 65535 where none is), then resized plane by
    plane in Pillow's 32-bit integer mode "I" (every filter; never through 8 bits) and clipped to
    0-65535 where a filter (bicubic, lanczos) overshoots."""
    planes = [pixels] if pixels.ndim == 2 else [pixels[..., channel] for channel in range(pixels.shape[2])]
    low, high = int(min(plane.min() for plane in planes)), int(max(plane.max() for plane in planes))
    if low < 0 or high > 65535:
        raise BadImage(f"a {depth}-bit image with values {low} to {high}: a uint16 feature holds 0-65535")
    colour, alpha = (planes[:1], None) if len(planes) == 1 else (planes[:1], planes[1]) if len(planes) == 2 \
        else (planes[:3], planes[3] if len(planes) == 4 else None)
    if channels == 1:
        out = colour if len(colour) == 1 else [(299 * colour[0] + 587 * colour[1] + 114 * colour[2] + 500) // 1000]
    else:
        out = colour * 3 if len(colour) == 1 else colour
        if channels == 4:
            out = out + [alpha if alpha is not None else np.full(pixels.shape[:2], 65535, np.int64)]
    if size is not None and size != pixels.shape[:2]:
        scaled = scaled_size(pixels.shape[1], pixels.shape[0], size, how)
        out = [np.asarray(placed(Image.fromarray(np.asarray(plane, np.int32)).resize(scaled, FILTERS[resample]),
                                 size, how)) for plane in out]
    return np.clip(np.dstack(out), 0, 65535).astype(np.uint16)


def png_16(pixels: np.ndarray) -> bytes:
    """uint16 [height, width, 1, 3 or 4] as a 16-bit PNG (grey, RGB or RGBA), written here: Pillow
    writes 16-bit grey PNGs but no 16-bit colour ones. Each row is filtered by `Up` (its difference
    from the row above, bytewise modulo 256: smooth scans compress to about a half of their bytes)."""
    height, width, channels = pixels.shape
    rows = pixels.astype(">u2").view(np.uint8).reshape(height, width * channels * 2)
    up = rows.copy()
    up[1:] -= rows[:-1]  # uint8 arithmetic wraps modulo 256, as the filter is defined
    filtered = np.hstack([np.full((height, 1), 2, np.uint8), up]).tobytes()

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 16, _PNG_COLOUR_TYPE[channels], 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(filtered, 6))
            + chunk(b"IEND", b""))
