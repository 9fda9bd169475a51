"""16-bit TIFFs that Pillow reads only in part, read whole; and TIFFs it can't open, described.

Pillow (with the libtiff in its wheel, which decodes every TIFF compression: none, LZW, deflate,
PackBits, LZMA, Zstandard, with or without a predictor) reads a 16-bit grey TIFF exactly, but
keeps only the high byte of each value of a 16-bit colour one. deep.py reads the low bytes of a
contiguous (PlanarConfiguration 1) file by decoding it a second time with the other byte order's
raw mode. A planar file (PlanarConfiguration 2: each channel a plane of its own) can't be read so:
libtiff's planes are unpacked by Pillow's fixed high-byte unpackers (compressed files), or as 8-bit
samples (uncompressed files, which then hold garbage). `planes` reads such a file plane by plane
instead: each plane's strips or tiles, as they are in the file, become a grey TIFF of their own
(the same compression, predictor and byte order), which Pillow reads exactly.

`depth` gives the bits a sample from the file's own tags (Pillow's raw modes don't say it for a
planar file), and `unreadable` says what a TIFF Pillow can't open is (16-bit grey-and-alpha,
signed or floating-point colour, a compression its libtiff lacks) instead of "not an image".
"""
from __future__ import annotations

import io
import struct

import numpy as np
from PIL import Image, TiffImagePlugin
from PIL.TiffImagePlugin import ImageFileDirectory_v2

from . import BadImage

_BITS, _COMPRESSION, _PHOTOMETRIC, _SAMPLES, _ROWS_PER_STRIP = 258, 259, 262, 277, 278
_STRIP_OFFSETS, _STRIP_COUNTS, _PLANAR, _PREDICTOR = 273, 279, 284, 317
_TILE_WIDTH, _TILE_LENGTH, _TILE_OFFSETS, _TILE_COUNTS = 322, 323, 324, 325
_EXTRA_SAMPLES, _SAMPLE_FORMAT, _ORIENTATION = 338, 339, 274
_COMPRESSIONS = {1: "none", 5: "LZW", 7: "JPEG", 8: "deflate", 32773: "PackBits", 32946: "deflate",
                 34712: "JPEG 2000", 34887: "LERC", 34925: "LZMA", 50000: "Zstandard", 50001: "WebP",
                 50002: "JPEG XL", 52546: "JPEG XL", 22610: "JPEG XR"}
_SAMPLE_FORMATS = {1: "unsigned", 2: "signed", 3: "floating-point"}
_PHOTOMETRICS = {0: "grey", 1: "grey", 2: "RGB", 3: "palette", 5: "CMYK", 6: "YCbCr"}
# EXIF orientation -> the transposition that turns the image upright (ImageOps.exif_transpose's)
_TURNS = {2: Image.Transpose.FLIP_LEFT_RIGHT, 3: Image.Transpose.ROTATE_180, 4: Image.Transpose.FLIP_TOP_BOTTOM,
          5: Image.Transpose.TRANSPOSE, 6: Image.Transpose.ROTATE_270, 7: Image.Transpose.TRANSVERSE,
          8: Image.Transpose.ROTATE_90}


def depth(image: Image.Image) -> int:
    """Bits a sample of an opened TIFF, by its BitsPerSample tag (the largest; 1 when absent)."""
    return _depth(image.tag_v2)


def planar(image: Image.Image) -> bool:
    """Whether an opened TIFF of several samples a pixel keeps each in a plane of its own."""
    return image.format == "TIFF" and image.tag_v2.get(_PLANAR, 1) == 2 and image.tag_v2.get(_SAMPLES, 1) > 1


def planes(data: bytes, image: Image.Image) -> np.ndarray:
    """A planar 16-bit TIFF's values, upright, as int64 [height, width, samples]: each plane read
    as a grey TIFF made of its own strips or tiles (`data`: the file's bytes; `image`: it opened)."""
    tags = image.tag_v2
    samples = tags[_SAMPLES]
    tiled = _TILE_OFFSETS in tags
    offsets, counts = (tags[_TILE_OFFSETS], tags[_TILE_COUNTS]) if tiled else (tags[_STRIP_OFFSETS], tags[_STRIP_COUNTS])
    per_plane = len(offsets) // samples
    if per_plane * samples != len(offsets) or len(counts) != len(offsets):
        raise BadImage(f"a planar TIFF whose {len(offsets)} {'tiles' if tiled else 'strips'} don't divide into its "
                       f"{samples} planes (a corrupt file?)")
    turn = _TURNS.get(image.getexif().get(_ORIENTATION, 1))
    values = []
    for plane in range(samples):
        chosen = slice(plane * per_plane, (plane + 1) * per_plane)
        grey = Image.open(io.BytesIO(_grey_tiff(data, tags, list(offsets[chosen]), list(counts[chosen]), tiled)))
        try:
            grey.load()
        except (OSError, SyntaxError, ValueError, EOFError) as error:
            raise BadImage(f"corrupt or truncated TIFF (plane {plane}: {error})") from None
        values.append(np.asarray(grey if turn is None else grey.transpose(turn)).astype(np.int64))
    return np.dstack(values)


def _grey_tiff(data: bytes, tags: ImageFileDirectory_v2, offsets: list[int], counts: list[int], tiled: bool) -> bytes:
    """A one-sample TIFF of the blocks at `offsets` in `data` (their bytes as they are), with the
    file's size, compression, predictor, sample format and byte order: its IFD first, the blocks
    after it."""
    prefix = data[:2]  # b"II" or b"MM": the blocks' samples are in the file's byte order
    blocks = [data[offset:offset + count] for offset, count in zip(offsets, counts)]
    if any(len(block) != count for block, count in zip(blocks, counts)):
        raise BadImage("truncated TIFF (a plane's data ends before the file says it does)")
    placed = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int).tolist()  # where each block starts
    ifd = ImageFileDirectory_v2(prefix=prefix)
    ifd[256], ifd[257] = tags[256], tags[257]
    ifd[_BITS] = (_depth(tags),)
    ifd[_COMPRESSION] = tags.get(_COMPRESSION, 1)
    ifd[_PHOTOMETRIC] = 1  # grey, 0 is black
    ifd[_SAMPLES] = 1
    for tag in (_PREDICTOR, _SAMPLE_FORMAT):
        if tag in tags:
            found = tags[tag]
            ifd[tag] = found[0] if isinstance(found, tuple) else found
    if tiled:
        ifd[_TILE_WIDTH], ifd[_TILE_LENGTH] = tags[_TILE_WIDTH], tags[_TILE_LENGTH]
        ifd[_TILE_OFFSETS], ifd[_TILE_COUNTS] = tuple(placed), tuple(counts)
        end = 8 + len(ifd.tobytes(8))  # the blocks follow the IFD (its length doesn't depend on the offsets)
        ifd[_TILE_OFFSETS] = tuple(end + start for start in placed)
    else:  # Pillow moves strip offsets past the IFD itself
        ifd[_ROWS_PER_STRIP] = tags.get(_ROWS_PER_STRIP, tags[257])
        ifd[_STRIP_OFFSETS], ifd[_STRIP_COUNTS] = tuple(placed), tuple(counts)
    order = "<" if prefix == b"II" else ">"
    return prefix + struct.pack(order + "HI", 42, 8) + ifd.tobytes(8) + b"".join(blocks)


def _depth(tags: ImageFileDirectory_v2) -> int:
    bits = tags.get(_BITS, 1)
    return max(bits) if isinstance(bits, tuple) else int(bits)


def unreadable(data: bytes) -> str | None:
    """Why Pillow can't open `data`, a TIFF: what its first image is, from its tags (samples a
    pixel, bits, sample format, compression); None if it isn't a TIFF or its tags can't be read."""
    if data[:4] not in (b"II*\0", b"MM\0*", b"II+\0", b"MM\0+"):
        return None
    try:
        file = io.BytesIO(data)
        header = file.read(8)
        if header[2] == 43 or header[3] == 43:  # BigTIFF: a 16-byte header
            header += file.read(8)
        tags = ImageFileDirectory_v2(header)
        file.seek(tags.next)
        tags.load(file)
    except (OSError, SyntaxError, ValueError, KeyError, struct.error):
        return None
    samples = tags.get(_SAMPLES, 1)
    bits = _depth(tags)
    kind = _PHOTOMETRICS.get(tags.get(_PHOTOMETRIC, -1), f"photometric {tags.get(_PHOTOMETRIC)}")
    if kind == "grey" and samples == 2:
        kind = "grey-and-alpha"
    elif samples > 1 and not (kind == "RGB" and samples == 3):
        kind = f"{kind} of {samples} samples a pixel"
    form = tags.get(_SAMPLE_FORMAT, 1)
    form = form[0] if isinstance(form, tuple) else form
    compression = tags.get(_COMPRESSION, 1)
    what = f"a {bits}-bit {_SAMPLE_FORMATS.get(form, '')} {kind} TIFF".replace("  ", " ").replace("unsigned ", "")
    if compression not in TiffImagePlugin.COMPRESSION_INFO:
        name = f"{_COMPRESSIONS[compression]} (compression {compression})" if compression in _COMPRESSIONS \
            else f"compression {compression}"
        return f"{what} compressed with {name}, which Pillow's libtiff doesn't decode: convert it"
    return (f"{what}, which Pillow doesn't read (it reads unsigned grey, RGB and RGBA TIFFs of 8 or 16 bits): "
            "convert it")
