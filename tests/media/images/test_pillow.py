"""images/pillow.py on its own: JPEG DCT scaling before a large reduction (16-bit images:
test_deep.py). No TensorFlow: Pillow and NumPy only."""
from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from tfrecord_builder.media.images import pillow


def _photo(height: int, width: int, seed: int = 0) -> np.ndarray:
    """Photo-like uint8 RGB: smooth shading, a hard-edged disc and sensor noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    image = np.stack([128 + 90 * np.sin(x / 40), 40 + 160 * y / height, 60 + 80 * np.cos((x + y) / 70)], -1)
    image[(y - height / 2) ** 2 + (x - width / 3) ** 2 < (height / 5) ** 2] = (230, 20, 90)
    image += rng.normal(0, 4, image.shape)
    return np.clip(image, 0, 255).round().astype(np.uint8)


def _opened(pixels: np.ndarray, orientation: int = 1, format: str = "JPEG") -> Image.Image:
    buffer = io.BytesIO()
    exif = Image.Exif()
    if orientation != 1:
        exif[0x0112] = orientation
    if format == "JPEG":
        Image.fromarray(pixels).save(buffer, format, quality=95, exif=exif.tobytes())
    else:
        Image.fromarray(pixels).save(buffer, format)
    return pillow.opened(buffer.getvalue())[1]


@pytest.mark.parametrize("size, how, orientation, decoded", [
    ((100, 100), "stretch", 1, (400, 300)),  # 1/4 scale: 3 times 100x100 (1/8 would not be)
    ((300, 300), "stretch", 1, (1600, 1200)),  # shrunk less than 6 times: decoded whole
    ((100, 100), "crop", 1, (400, 300)),  # crop covers 133x100 first: 1/4 keeps 3 times that
    ((250, 50), "stretch", 6, (800, 600)),  # upright it is 1600 high: 250 rows of it are the stored width's
    ((250, 50), "stretch", 1, (1600, 1200)),  # not turned: 250 of 1200 rows is a small reduction
])
def test_a_jpeg_shrunk_4_times_or_more_decodes_at_a_reduced_scale_keeping_twice_the_size(size, how, orientation,
                                                                                            decoded):
    image = _opened(_photo(1200, 1600), orientation)
    pillow.drafted(image, size, how)
    pillow.load(image)
    assert image.size == decoded


def test_other_formats_and_kept_sizes_are_not_drafted():
    png = _opened(_photo(1200, 1600), format="PNG")
    pillow.drafted(png, (100, 100), "stretch")
    assert png.size == (1600, 1200)
    jpeg = _opened(_photo(1200, 1600))
    pillow.drafted(jpeg, None, "stretch")
    assert jpeg.size == (1600, 1200)


def _psnr(image: np.ndarray, wanted: np.ndarray) -> float:
    return float(10 * np.log10(255.0**2 / np.mean((image.astype(np.float64) - wanted) ** 2)))


def _lanczos(pixels: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """The reference: each channel resized by LANCZOS in float."""
    channels = pixels.reshape(*pixels.shape[:2], -1).astype(np.float32)
    return np.squeeze(np.stack([np.asarray(Image.fromarray(np.ascontiguousarray(channels[..., c]), "F")
                                           .resize(size[::-1], Image.Resampling.LANCZOS))
                                for c in range(channels.shape[2])], -1))


def test_a_drafted_resize_is_as_close_to_the_reference_as_the_full_decodes():
    source = _opened(_photo(1200, 1600))
    full = np.asarray(Image.open(io.BytesIO(source.fp.getvalue())).convert("RGB"))
    wanted = _lanczos(full, (64, 64))
    whole = np.asarray(pillow.resized(Image.fromarray(full), (64, 64), "stretch", "bilinear"))
    pillow.drafted(source, (64, 64), "stretch")
    pillow.load(source)
    assert source.size == (400, 300)  # 1/4 scale: still 3 times 64x64
    drafted = np.asarray(pillow.fitted(source, 3, (64, 64), "stretch", "bilinear"))
    assert _psnr(drafted, wanted) >= _psnr(whole, wanted) - 0.3  # dB; 12 MP -> 224 in bench/README.md


@pytest.mark.parametrize("orientation", [1, 3, 6, 8])
@pytest.mark.parametrize("form", ["jpeg", "png"])
def test_oriented_size_is_the_size_an_image_is_shown_at_read_from_its_header(tmp_path, orientation, form):
    """What the bbox feature divides pixel boxes by: the size after EXIF orientation, as Pillow's
    exif_transpose of the decoded image gives it, from a path, bytes or an array alike."""
    from PIL import ImageOps

    from tfrecord_builder.media.images.pillow import oriented_size

    exif = Image.Exif()
    exif[0x0112] = orientation
    path = tmp_path / f"photo.{form}"
    Image.fromarray(np.zeros((30, 70, 3), np.uint8)).save(path, exif=exif)
    with Image.open(path) as image:
        shown = ImageOps.exif_transpose(image)
        expected = (shown.height, shown.width)
    assert expected == ((70, 30) if orientation in (6, 8) else (30, 70))
    assert oriented_size(path) == oriented_size(path.read_bytes()) == expected
    assert oriented_size(np.zeros((30, 70), np.uint8)) == (30, 70)
