"""images/deep.py on its own: 16-bit grey and colour files (and Pillow's 32-bit mode "I") brought
to 8 bits by the spec's rule, or refused without one. No TensorFlow: Pillow and NumPy only."""
from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from tfrecord_builder.media.images import BadImage, deep, pillow

REFUSAL = ("a 16-bit grey image (values {}) into 8 bits: choose how to scale it with `scale_16bit: full_range` "
           "(value / 257) or `scale_16bit: min_max` (the file's own range onto 0-255)")


def png_16bit(pixels: np.ndarray, filters=(0, 1, 2), exif: bytes | None = None) -> bytes:
    """A 16-bit PNG (grey, RGB or RGBA) written by hand, which Pillow can't: rows filtered in turn
    with None, Sub and Up (Sub reaches back one whole pixel, so a wrong pixel size shows)."""
    height, width = pixels.shape[:2]
    channels = 1 if pixels.ndim == 2 else pixels.shape[2]
    colour_type = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    rows = pixels.astype(">u2").reshape(height, -1).view(np.uint8).reshape(height, -1).astype(np.int64)
    step = 2 * channels
    lines = []
    for y in range(height):
        kind = filters[y % len(filters)]
        if kind == 1:
            line = rows[y] - np.concatenate([np.zeros(step, np.int64), rows[y][:-step]])
        elif kind == 2:
            line = rows[y] - (rows[y - 1] if y else 0)
        else:
            line = rows[y]
        lines.append(bytes([kind]) + (line % 256).astype(np.uint8).tobytes())

    def chunk(name: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + name + data + struct.pack(">I", zlib.crc32(name + data))

    header = struct.pack(">IIBBBBB", width, height, 16, colour_type, 0, 0, 0)
    extra = chunk(b"eXIf", exif) if exif is not None else b""
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + extra + chunk(b"IDAT", zlib.compress(b"".join(lines)))
            + chunk(b"IEND", b""))


def saved(pixels: np.ndarray, format: str = "PNG") -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format)
    return buffer.getvalue()


def stored(data: bytes, scale, channels=1, size=None, how="stretch", resample="bilinear") -> np.ndarray:
    """What the image feature stores (before encoding) for the file `data`."""
    source, image = pillow.opened(data)
    depth = deep.bits(image)
    pillow.load(image)
    return np.asarray(deep.fitted(deep.values(image, source, depth), depth, scale, channels, size, how, resample))


def twelve_bit(height=6, width=7, seed=0, top=2191) -> np.ndarray:
    pixels = np.random.default_rng(seed).integers(0, top + 1, (height, width)).astype(np.uint16)
    pixels.flat[0], pixels.flat[1] = 0, top
    return pixels


@pytest.mark.parametrize("format", ["PNG", "TIFF"])
def test_a_16_bit_grey_file_is_refused_without_a_rule(format):
    data = saved(twelve_bit(), format)
    assert pillow.opened(data)[1].mode == "I;16"
    with pytest.raises(BadImage) as caught:
        stored(data, None)
    assert str(caught.value) == REFUSAL.format("0-2191")


def test_a_16_bit_file_whose_values_fit_8_bits_is_still_refused():
    """Its depth says 16 bits: 0-200 may be 8-bit data written wide, or a dark 16-bit scan."""
    with pytest.raises(BadImage) as caught:
        stored(saved(twelve_bit(top=200)), None)
    assert str(caught.value) == REFUSAL.format("0-200")


@pytest.mark.parametrize("top", [2191, 511, 65535])  # 12-bit CT, 9-bit, full 16-bit
@pytest.mark.parametrize("format", ["PNG", "TIFF"])
def test_full_range_divides_by_257_and_min_max_stretches_the_files_own_range(format, top):
    pixels = twelve_bit(top=top - 7) + 7  # values 7 to top
    data = saved(pixels, format)
    full = stored(data, "full_range")
    np.testing.assert_array_equal(full, np.round(pixels / 257).astype(np.uint8))
    stretched = stored(data, "min_max")
    np.testing.assert_array_equal(stretched, np.floor((pixels - 7.0) * 255 / (top - 7) + 0.5).astype(np.uint8))
    assert stretched.min() == 0 and stretched.max() == 255


def test_the_high_byte_would_leave_a_12_bit_scan_black():
    """What the build stored before: 2191 >> 8 = 8, nine grey levels; min_max keeps them apart."""
    pixels = np.arange(0, 2192, dtype=np.uint16).reshape(16, 137)
    assert len(np.unique(pixels >> 8)) == 9
    assert len(np.unique(stored(saved(pixels), "min_max"))) == 256


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 65535), st.integers(0, 65535), st.integers(0, 2**32 - 1))
def test_the_rules_round_half_up_in_integers(a, b, seed):
    low, high = min(a, b), max(a, b)
    plane = np.random.default_rng(seed).integers(low, high + 1, 64)
    plane[:2] = low, high
    np.testing.assert_array_equal(deep.eight_bits(plane, "full_range", low, high),
                                  [int(value / 257 + 0.5) for value in plane.tolist()])
    expected = [0 if high == low else (2 * (value - low) * 255 + (high - low)) // (2 * (high - low))
                for value in plane.tolist()]
    scaled = deep.eight_bits(plane, "min_max", low, high)
    np.testing.assert_array_equal(scaled, expected)
    if high > low:
        assert scaled[0] == 0 and scaled[1] == 255


def test_one_value_throughout_becomes_0_under_min_max():
    np.testing.assert_array_equal(stored(saved(np.full((3, 4), 1000, np.uint16)), "min_max"), np.zeros((3, 4)))


@pytest.mark.parametrize("channels", [3, 4])
def test_16_bit_colour_keeps_its_low_bytes(channels):
    """Pillow reads a 48- or 64-bit PNG as 8-bit RGB(A) of high bytes; the second decode adds the
    low ones, so 257 * v round trips exactly and min_max sees 12-bit colour whole."""
    rng = np.random.default_rng(channels)
    levels = rng.integers(0, 256, (5, 9, channels)).astype(np.uint16)
    data = png_16bit(levels * 257)
    assert pillow.opened(data)[1].mode == ("RGB", "RGBA")[channels == 4]
    np.testing.assert_array_equal(stored(data, "full_range", channels), levels)
    colour = rng.integers(0, 4096, (5, 9, channels)).astype(np.uint16)
    colour[..., 3:] = 65535 - colour[..., 3:]  # alpha: full_range, whatever the rule
    colour[0, 0, :3], colour[0, 1, :3] = 0, 4095
    with pytest.raises(BadImage, match=r"^a 16-bit RGBA? image \(values 0-4095\) into 8 bits: choose"):
        stored(png_16bit(colour), None, channels)
    scaled = stored(png_16bit(colour), "min_max", channels)
    np.testing.assert_array_equal(scaled[..., :3], deep.eight_bits(colour[..., :3], "min_max", 0, 4095))
    np.testing.assert_array_equal(scaled[..., 3:], (colour[..., 3:].astype(np.int64) + 128) // 257)


@pytest.mark.parametrize("channels", [1, 3, 4])
def test_16_bit_grey_and_alpha_keeps_both_whole(channels):
    """Pillow shows it as RGBA of high bytes (raw mode LA;16B); decoded again 4 bytes a pixel."""
    rng = np.random.default_rng(2)
    pixels = np.dstack([rng.integers(100, 3001, (3, 4)), rng.integers(0, 65536, (3, 4))]).astype(np.uint16)
    pixels[0, 0, 0], pixels[0, 1, 0] = 100, 3000
    data = png_16bit(pixels)
    assert pillow.opened(data)[1].mode == "RGBA"
    with pytest.raises(BadImage, match=r"^a 16-bit grey-and-alpha image \(values 100-3000\) into 8 bits: choose"):
        stored(data, None, channels)
    grey = deep.eight_bits(pixels[..., 0], "min_max", 100, 3000)
    alpha = deep.eight_bits(pixels[..., 1], "full_range", 0, 65535)
    expected = {1: grey, 3: np.dstack([grey] * 3), 4: np.dstack([grey] * 3 + [alpha])}[channels]
    np.testing.assert_array_equal(stored(data, "min_max", channels), expected)


def test_16_bit_colour_is_turned_upright_high_and_low_bytes_alike():
    exif = Image.Exif()
    exif[0x0112] = 6  # turned 90 degrees: the stored picture is upright
    colour = np.random.default_rng(3).integers(0, 65536, (4, 6, 3)).astype(np.uint16)
    turned = stored(png_16bit(colour, exif=exif.tobytes()), "full_range", 3)
    np.testing.assert_array_equal(turned, np.rot90(deep.eight_bits(colour, "full_range", 0, 65535), -1))


def test_resized_at_full_precision_before_the_rule():
    """16-bit grey is averaged in 32-bit integers, then scaled: closer to the exact average than
    scaling first (which rounds every source pixel to 8 bits)."""
    rng = np.random.default_rng(1)
    y, x = np.mgrid[0:300, 0:400]
    pixels = np.clip(20000 + 90 * x + 60 * y + rng.normal(0, 900, (300, 400)), 0, 65535).astype(np.uint16)
    result = stored(saved(pixels), "full_range", 1, (30, 40))
    exact = np.asarray(Image.fromarray(pixels.astype(np.float32)).resize((40, 30), Image.Resampling.BILINEAR))
    expected = np.asarray(Image.fromarray(pixels.astype(np.int32)).resize((40, 30), Image.Resampling.BILINEAR))
    np.testing.assert_array_equal(result, (expected.astype(np.int64) + 128) // 257)
    first = np.asarray(Image.fromarray(deep.eight_bits(pixels, "full_range", 0, 65535))
                       .resize((40, 30), Image.Resampling.BILINEAR))
    assert np.abs(result - exact / 257).mean() < np.abs(first - exact / 257).mean()


def test_padding_stays_black_and_grey_becomes_rgb():
    pixels = twelve_bit(4, 8)
    padded = stored(saved(pixels), "min_max", 3, (8, 8), "pad")
    assert padded.shape == (8, 8, 3)
    assert not padded[:2].any() and not padded[6:].any()
    assert (padded[..., 0] == padded[..., 2]).all()


def test_a_32_bit_image_with_negative_values_needs_min_max():
    """Pillow's mode "I" (here a signed 32-bit TIFF, as Hounsfield units are) isn't 0-65535."""
    pixels = np.array([[-1024, 0], [400, 3071]], np.int32)
    data = saved(pixels, "TIFF")
    assert pillow.opened(data)[1].mode == "I"
    with pytest.raises(BadImage) as caught:
        stored(data, "full_range")
    assert str(caught.value) == ("a 32-bit grey image (values -1024 to 3071) doesn't fit full_range's 0-65535: "
                                 "use `scale_16bit: min_max`")
    np.testing.assert_array_equal(stored(data, "min_max"), [[0, 64], [89, 255]])


def test_8_bit_files_are_8_bits():
    for mode in ("L", "RGB", "RGBA", "P", "1"):
        assert deep.bits(pillow.opened(saved(np.zeros((2, 2, 3), np.uint8)) if mode == "RGB"
                                       else _in_mode(mode))[1]) == 8


def _in_mode(mode: str) -> bytes:
    buffer = io.BytesIO()
    Image.new(mode, (2, 2)).save(buffer, "PNG")
    return buffer.getvalue()


# ---- kept at 16 bits (dtype: uint16) ---------------------------------------------------------------
def test_sixteen_bits_converts_channels_in_16_bits():
    """Colour to grey by Pillow's luma weights in 16 bits, grey repeated, an opaque alpha added,
    an alpha dropped: no value passes through 8 bits."""
    sixteen_bits = deep.sixteen_bits
    rgb = np.array([[[65535, 0, 0], [0, 65535, 0], [1000, 2000, 3000]]], np.int64)
    grey = sixteen_bits(rgb, 16, 1, None, "stretch", "bilinear")
    assert grey.dtype == np.uint16
    np.testing.assert_array_equal(grey[0, :, 0], [(299 * 65535 + 500) // 1000, (587 * 65535 + 500) // 1000,
                                                  (299 * 1000 + 587 * 2000 + 114 * 3000 + 500) // 1000])
    plane = np.array([[300, 65535]], np.int64)
    np.testing.assert_array_equal(sixteen_bits(plane, 16, 4, None, "stretch", "bilinear")[0],
                                  [[300, 300, 300, 65535], [65535, 65535, 65535, 65535]])
    with_alpha = np.dstack([plane, np.array([[7, 9]])])
    np.testing.assert_array_equal(sixteen_bits(with_alpha, 16, 3, None, "stretch", "bilinear")[0],
                                  [[300] * 3, [65535] * 3])


def test_sixteen_bits_clips_a_filters_overshoot_and_refuses_values_past_16_bits():
    sixteen_bits = deep.sixteen_bits
    edge = np.zeros((8, 8), np.int64)
    edge[:, 4:] = 65535  # lanczos rings past both ends of a sharp edge
    resized = sixteen_bits(edge, 16, 1, (8, 5), "stretch", "lanczos")
    assert resized.min() == 0 and resized.max() == 65535 and 0 < resized[0, 2, 0] < 65535
    with pytest.raises(BadImage) as caught:
        sixteen_bits(np.array([[-1, 70000]]), 32, 1, None, "stretch", "bilinear")
    assert str(caught.value) == "a 32-bit image with values -1 to 70000: a uint16 feature holds 0-65535"
