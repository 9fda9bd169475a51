"""16-bit TIFFs in every layout tifffile and Pillow write, read value for value as tifffile reads
them: grey, RGB and RGBA; uncompressed, LZW, deflate, PackBits, LZMA and Zstandard; predictor 1
and 2; contiguous and planar samples; little- and big-endian; strips and tiles. Both ways a
16-bit file is stored see its full 16 bits: kept (`dtype: uint16`) and brought to 8 bits
(`scale_16bit: full_range` and `min_max`). What Pillow can't read is refused for what it is.

tifffile (with imagecodecs for LZW, PackBits and Zstandard) writes the files and is the reference
reader, and libpng (imagecodecs' png_decode) reads the stored PNGs; the package itself reads them with Pillow's libtiff (images/deep.py, images/tiff.py).
"""
from __future__ import annotations

import io
import itertools

import numpy as np
import pytest
from PIL import Image

import tfrecord_builder as tb
from tfrecord_builder.features.image import ImageFeature
from tfrecord_builder.media.images import BadImage, deep, pillow

from conftest import write_spec

tifffile = pytest.importorskip("tifffile")
imagecodecs = pytest.importorskip("imagecodecs")  # tifffile's LZW, PackBits and Zstandard codecs; a PNG decoder


def _layouts():
    compressions = [(None, 1), ("packbits", 1)] + [(codec, predictor) for codec in ("lzw", "zlib", "lzma", "zstd")
                                                   for predictor in (1, 2)]
    for channels, (compression, predictor), planar, order, tiled in itertools.product(
            (1, 3, 4), compressions, ("contig", "separate"), "<>", (False, True)):
        if channels == 1 and planar == "separate":
            continue  # one sample a pixel: the same file
        yield pytest.param(channels, compression, predictor, planar, order, tiled,
                           id=f"{channels}ch-{compression or 'none'}-p{predictor}-{planar}-{order}-"
                              f"{'tiles' if tiled else 'strips'}")


LAYOUTS = list(_layouts())


def written(pixels: np.ndarray, compression=None, predictor=1, planar="contig", order="<", tiled=False) -> bytes:
    """`pixels` ([h, w] or [h, w, channels], uint16) as a TIFF written by tifffile."""
    channels = 1 if pixels.ndim == 2 else pixels.shape[2]
    options = {"photometric": "minisblack" if channels == 1 else "rgb", "compression": compression,
               "predictor": predictor if compression else None, "planarconfig": planar if channels > 1 else None,
               "byteorder": order, "extrasamples": ["unassalpha"] if channels == 4 else None}
    options.update({"tile": (16, 16)} if tiled else {"rowsperstrip": 3})
    buffer = io.BytesIO()
    tifffile.imwrite(buffer, pixels.transpose(2, 0, 1) if planar == "separate" and channels > 1 else pixels,
                     **options)
    return buffer.getvalue()


def reference(data: bytes) -> np.ndarray:
    """tifffile's values of a TIFF, as [h, w] or [h, w, channels]."""
    with tifffile.TiffFile(io.BytesIO(data)) as file:
        page = file.pages[0]
        values = page.asarray()
        return values.transpose(1, 2, 0) if page.planarconfig == 2 and values.ndim == 3 else values


def pixels_of(channels: int, seed: int = 0) -> np.ndarray:
    """Values whose high and low bytes differ everywhere (neither v >> 8 nor v * 257 passes for them),
    over a size that is no multiple of the strips' 3 rows or the tiles' 16 pixels."""
    shape = (19, 21) if channels == 1 else (19, 21, channels)
    values = np.random.default_rng(seed).integers(0, 65536, shape).astype(np.uint16)
    values.flat[0], values.flat[1] = 0, 65535
    return values


def feature(channels: int, **declared) -> ImageFeature:
    return ImageFeature(name="image", shape=[None, None, channels], encoding="png", **declared)


def decoded_png(data: bytes) -> np.ndarray:
    """A stored PNG's values by libpng (through imagecodecs): Pillow reads 16-bit colour as 8 bits."""
    return imagecodecs.png_decode(data)


@pytest.mark.parametrize("channels, compression, predictor, planar, order, tiled", LAYOUTS)
def test_every_16_bit_layout_is_read_exactly_by_both_paths(channels, compression, predictor, planar, order, tiled):
    """Before: LZW, deflate, PackBits, LZMA and Zstandard colour files (Pillow's libtiff, raw mode
    RGB;16N) kept each value as (v >> 8) * 257, and planar colour ones were "an 8-bit RGB image"."""
    pixels = pixels_of(channels)
    data = written(pixels, compression, predictor, planar, order, tiled)
    np.testing.assert_array_equal(reference(data), pixels)  # what tifffile reads is what it wrote
    source, image = pillow.opened(data)
    depth = deep.bits(image)
    assert depth == 16
    pillow.load(image)
    np.testing.assert_array_equal(deep.values(image, source, depth), pixels)

    kept, shape = feature(channels, dtype="uint16").prepare(data)  # `dtype: uint16`: a 16-bit PNG
    assert shape == (19, 21, channels)
    np.testing.assert_array_equal(decoded_png(kept).reshape(pixels.shape), pixels)
    colour = pixels if channels == 1 else pixels[..., :3]
    for scale, low, high in (("full_range", 0, 65535), ("min_max", int(colour.min()), int(colour.max()))):
        stored, _ = feature(channels, scale_16bit=scale).prepare(data)
        expected = deep.eight_bits(colour.astype(np.int64), scale, low, high)
        if channels == 4:  # alpha always by full_range
            expected = np.dstack([expected, deep.eight_bits(pixels[..., 3].astype(np.int64), "full_range", 0, 65535)])
        np.testing.assert_array_equal(decoded_png(stored), expected, err_msg=scale)


@pytest.mark.parametrize("mode", ["I;16", "I;16B"])
@pytest.mark.parametrize("compression", ["raw", "tiff_lzw", "tiff_adobe_deflate", "packbits", "tiff_deflate",
                                         "lzma", "zstd"])
def test_every_16_bit_tiff_pillow_writes_is_read_exactly(mode, compression):
    """Pillow writes 16-bit TIFFs in grey only (little- and big-endian), in each of its compressions."""
    pixels = pixels_of(1, seed=3)
    buffer = io.BytesIO()
    order = ">u2" if mode == "I;16B" else "<u2"
    Image.frombytes(mode, pixels.shape[::-1], pixels.astype(order).tobytes()).save(buffer, "TIFF",
                                                                                   compression=compression)
    data = buffer.getvalue()
    np.testing.assert_array_equal(reference(data), pixels)
    kept, _ = feature(1, dtype="uint16").prepare(data)
    np.testing.assert_array_equal(decoded_png(kept), pixels)
    stored, _ = feature(1, scale_16bit="full_range").prepare(data)
    np.testing.assert_array_equal(decoded_png(stored), deep.eight_bits(pixels.astype(np.int64), "full_range", 0, 0))


def test_a_planar_tiff_is_turned_upright_as_a_contiguous_one():
    """An Orientation tag (6: turned 90 degrees clockwise) turns every plane alike."""
    pixels = pixels_of(3, seed=5)
    turned = [(274, "H", 1, 6, True)]

    def read(planar: str, compression: str | None) -> np.ndarray:
        buffer = io.BytesIO()
        tifffile.imwrite(buffer, pixels.transpose(2, 0, 1) if planar == "separate" else pixels, photometric="rgb",
                         planarconfig=planar, compression=compression, extratags=turned)
        source, image = pillow.opened(buffer.getvalue())
        depth = deep.bits(image)
        pillow.load(image)
        return deep.values(image, source, depth)

    upright = np.rot90(pixels, -1)  # the picture as shown: the stored rows turned clockwise
    for planar, compression in itertools.product(("contig", "separate"), (None, "lzw")):
        np.testing.assert_array_equal(read(planar, compression), upright, err_msg=f"{planar} {compression}")


def test_a_planar_16_bit_tiff_is_no_longer_8_bits_of_garbage():
    """Before: Pillow read an uncompressed planar 16-bit RGB TIFF as 8-bit planes (the first bytes
    of each plane), which an 8-bit feature stored without a word; its depth now comes from its tags."""
    data = written(pixels_of(3), planar="separate")
    with pytest.raises(BadImage, match=r"^a 16-bit RGB image \(values 0-65535\) into 8 bits: choose how to scale"):
        feature(3).prepare(data)


@pytest.mark.parametrize("array, options, problem", [
    (np.ones((3, 2, 2), np.uint16), {"photometric": "minisblack", "extrasamples": ["unassalpha"]},
     "a 16-bit grey-and-alpha TIFF, which Pillow doesn't read (it reads unsigned grey, RGB and RGBA TIFFs of 8 or "
     "16 bits): convert it"),
    (np.ones((3, 2, 3), np.int16), {"photometric": "rgb"},
     "a 16-bit signed RGB TIFF, which Pillow doesn't read (it reads unsigned grey, RGB and RGBA TIFFs of 8 or 16 "
     "bits): convert it"),
    (np.ones((3, 2), np.float16), {},
     "a 16-bit floating-point grey TIFF, which Pillow doesn't read (it reads unsigned grey, RGB and RGBA TIFFs of 8 "
     "or 16 bits): convert it"),
    (np.ones((3, 2, 3), np.uint16), {"photometric": "rgb", "compression": "jpeg2000"},
     "a 16-bit RGB TIFF compressed with JPEG 2000 (compression 34712), which Pillow's libtiff doesn't decode: "
     "convert it"),
], ids=["grey-and-alpha", "signed", "float16", "jpeg2000"])
def test_a_tiff_pillow_cant_read_is_refused_for_what_it_is(tmp_path, array, options, problem):
    """Before: "not an image Pillow can read (unsupported format or corrupt header)"."""
    (tmp_path / "scans").mkdir()
    tifffile.imwrite(tmp_path / "scans" / "odd.tif", array, **options)
    spec = {"name": "deep", "source": {"builder": "image_folder", "path": "scans"},
            "features": {"image": {"type": "image", "channels": 3, "dtype": "uint16"}}}
    with pytest.raises(tb.DataError) as caught:
        tb.build(write_spec(tmp_path, spec), output=tmp_path / "out")
    assert str(caught.value) == f"{tmp_path / 'scans' / 'odd.tif'}: feature `image`: {problem}"


def test_lzw_and_planar_16_bit_tiffs_build_exactly(tmp_path):
    """The issue's files through a whole build and back (`tb.read`): an LZW RGB TIFF with a
    predictor and a planar deflate one, kept at 16 bits and scaled to 8 by each rule."""
    folder = tmp_path / "scans"
    folder.mkdir()
    sources = {"lzw.tif": pixels_of(3, seed=1), "planar.tif": pixels_of(3, seed=2)}
    (folder / "lzw.tif").write_bytes(written(sources["lzw.tif"], "lzw", 2))
    (folder / "planar.tif").write_bytes(written(sources["planar.tif"], "zlib", 2, "separate"))
    declared = {"kept": {"dtype": "uint16"}, "full": {"scale_16bit": "full_range"},
                "stretched": {"scale_16bit": "min_max"}}
    for name, options in declared.items():
        spec = {"name": name, "source": {"builder": "image_folder", "path": "scans"},
                "features": {"image": {"type": "image", "channels": 3, **options}, "filename": {"dtype": "string"}}}
        info = tb.build(write_spec(tmp_path, spec), output=tmp_path / name)
        records = {record["filename"].decode(): record["image"] for record in tb.read(info.path, "train")}
        assert records.keys() == sources.keys()
        for file, pixels in sources.items():
            if name == "kept":
                expected = pixels
            else:
                scale = options["scale_16bit"]
                expected = deep.eight_bits(pixels.astype(np.int64), scale, int(pixels.min()), int(pixels.max()))
            np.testing.assert_array_equal(records[file], expected, err_msg=f"{name} {file}")

