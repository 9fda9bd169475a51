"""`dtype: uint16` image features: 16-bit PNG and TIFF kept exactly, through every reader.

Each round trip builds with `tb.build` from real files and reads back through the generated
module's `input_fn`, `tb.input_fn`, `tb.read` (NumPy, Pillow) and TensorFlow Datasets
(`builder_from_directory`), every one compared value for value with the source's uint16 pixels.
"""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

import tfrecord_builder as tb
from tfrecord_builder.media.images import deep

from conftest import batches_as_numpy, import_module, write_spec

ROOT = Path(__file__).resolve().parents[3]
SCANS = ROOT / "data" / "scans16"


def build(folder: Path, features: dict, source: dict | None = None, **kwargs) -> tb.DatasetInfo:
    spec = {"name": "deep", "source": source or {"builder": "image_folder", "path": "scans"},
            "features": {**features, "filename": {"dtype": "string"}}}
    return tb.build(write_spec(folder, spec), output=folder / "out", **kwargs)


def every_reader(info, split: str = "train") -> dict[str, dict[str, np.ndarray]]:
    """{reader: {filename: image}} from the generated module, tb.input_fn and tb.read (batches of
    one: nothing padded), each image checked to be uint16."""
    module = import_module(Path(info.path) / f"{info.name}_input.py")
    datasets = {"module": module.input_fn(split, batch_size=1, shuffle=False),
                "library": tb.input_fn(info.path, split, batch_size=1, shuffle=False)}
    out = {}
    for reader, dataset in datasets.items():
        assert dataset.element_spec["image"].dtype.name == "uint16", reader
        out[reader] = {batch["filename"][0].decode(): batch["image"][0] for batch in batches_as_numpy(dataset)}
    out["read"] = {record["filename"].decode(): record["image"] for record in tb.read(info.path, split)}
    for reader, images in out.items():
        assert all(image.dtype == np.uint16 for image in images.values()), reader
    return out


def as_channels(image: np.ndarray) -> np.ndarray:
    return image if image.ndim == 3 else image[:, :, None]


# ---- the real slices (data/scans16: pydicom's CT and MR test files) ---------------------------------
def test_real_ct_and_mr_slices_come_back_exactly_from_every_reader(tf, tmp_path):
    """Before: `dtype` was no image key (a spec error), and the 8-bit feature refused the files."""
    tfds = pytest.importorskip("tensorflow_datasets")
    files = sorted(SCANS.glob("*.png"))
    assert len(files) >= 3
    source = {name: np.asarray(Image.open(path)) for name, path in ((path.name, path) for path in files)}
    assert all(pixels.dtype == np.uint16 and pixels.max() > 255 for pixels in source.values())
    folder = tmp_path / "scans"
    folder.mkdir()
    for path in files:
        (folder / path.name).write_bytes(path.read_bytes())
    info = build(tmp_path, {"image": {"type": "image", "channels": 1, "dtype": "uint16"}})
    read = every_reader(info)
    for reader, images in read.items():
        assert images.keys() == source.keys(), reader
        for name, pixels in source.items():
            np.testing.assert_array_equal(images[name], pixels[:, :, None], err_msg=f"{reader} {name}")
    builder = tfds.builder_from_directory(info.path)
    assert builder.info.features["image"].np_dtype == np.uint16
    records = tfds.as_numpy(builder.as_dataset(split="train", shuffle_files=False))
    found = {record["filename"].decode(): record["image"] for record in records}
    assert found.keys() == source.keys()
    for name, pixels in source.items():
        assert found[name].dtype == np.uint16
        np.testing.assert_array_equal(found[name], pixels[:, :, None], err_msg=f"tfds {name}")


def test_a_16_bit_png_that_fits_is_stored_byte_for_byte(tf, tmp_path):
    """A lossless file already in the stored form: its own bytes, not a re-encoding."""
    folder = tmp_path / "scans"
    folder.mkdir()
    data = (SCANS / "ct_small.png").read_bytes()
    (folder / "ct_small.png").write_bytes(data)
    info = build(tmp_path, {"image": {"type": "image", "channels": 1, "dtype": "uint16"}})
    files = [str(Path(info.path) / name) for name in info.splits["train"].files]
    (raw,) = list(tf.data.TFRecordDataset(files).as_numpy_iterator())
    example = tf.train.Example.FromString(raw)
    assert example.features.feature["image"].bytes_list.value[0] == data


# ---- random pixels, PNG and TIFF sources -------------------------------------------------------------
@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(height=st.integers(1, 9), width=st.integers(1, 9), channels=st.sampled_from([1, 3, 4]),
       form=st.sampled_from(["PNG", "TIFF"]), seed=st.integers(0, 2**16))
def test_random_uint16_pixels_round_trip_exactly(tf, tmp_path_factory, height, width, channels, form, seed):
    pixels = np.random.default_rng(seed).integers(0, 65536, (height, width, channels), dtype=np.uint16)
    pixels[0, 0, 0] = 65535  # the top of the range, and the bottom beside it
    pixels[-1, -1, -1] = 0
    folder = tmp_path_factory.mktemp("uint16")
    (folder / "scans").mkdir()
    if form == "PNG":  # a 16-bit colour PNG is written here: Pillow writes 16-bit grey only
        (folder / "scans" / "a.png").write_bytes(deep.png_16(pixels))
    elif channels == 1:
        Image.fromarray(pixels[:, :, 0]).save(folder / "scans" / "a.tif")
    else:  # Pillow writes no 16-bit colour TIFF
        _tiff_16(pixels, folder / "scans" / "a.tif")
    info = build(folder, {"image": {"type": "image", "channels": channels, "dtype": "uint16"}})
    for reader, images in every_reader(info).items():
        np.testing.assert_array_equal(images[next(iter(images))], pixels, err_msg=reader)


def _tiff_16(pixels: np.ndarray, path: Path) -> None:
    """A 16-bit RGB(A) TIFF, uncompressed, written with tifffile when there is one."""
    tifffile = pytest.importorskip("tifffile")
    tifffile.imwrite(path, pixels, photometric="rgb", extrasamples=["unassalpha"] if pixels.shape[2] == 4 else None)


# ---- resizing keeps 16 bits ------------------------------------------------------------------------
def test_resize_keeps_16_bits(tf, tmp_path):
    """A 4x4 ramp of values far above 255 stretched to 8x8 (nearest: each value repeated) and
    shrunk to 2x2 (box: each 2x2 block's mean): every value beyond 255 survives, not a high byte."""
    ramp = (np.arange(16, dtype=np.uint16).reshape(4, 4) * 4000 + 1001)
    (tmp_path / "scans").mkdir()
    Image.fromarray(ramp).save(tmp_path / "scans" / "ramp.png")
    grown = build(tmp_path / "grown", {"image": {"type": "image", "shape": [8, 8, 1], "dtype": "uint16",
                                                 "filter": "nearest"}},
                  source={"builder": "image_folder", "path": str(tmp_path / "scans")})
    for reader, images in every_reader(grown).items():
        np.testing.assert_array_equal(images["ramp.png"][:, :, 0], ramp.repeat(2, 0).repeat(2, 1), err_msg=reader)
    shrunk = build(tmp_path / "shrunk", {"image": {"type": "image", "shape": [2, 2, 1], "dtype": "uint16",
                                                   "filter": "box"}},
                   source={"builder": "image_folder", "path": str(tmp_path / "scans")})
    blocks = ramp.astype(np.float64).reshape(2, 2, 2, 2).mean(axis=(1, 3))
    for reader, images in every_reader(shrunk).items():
        np.testing.assert_array_equal(images["ramp.png"][:, :, 0], np.round(blocks), err_msg=reader)


def test_float32_divides_uint16_by_65535(tf, tmp_path):
    (tmp_path / "scans").mkdir()
    pixels = np.array([[0, 1, 65535], [257, 4095, 32768]], np.uint16)
    Image.fromarray(pixels).save(tmp_path / "scans" / "a.png")
    spec = {"name": "deep", "source": {"builder": "image_folder", "path": "scans"},
            "features": {"image": {"type": "image", "channels": 1, "dtype": "uint16"}},
            "input": {"image_dtype": "float32"}}
    info = tb.build(write_spec(tmp_path, spec), output=tmp_path / "out")
    module = import_module(Path(info.path) / f"{info.name}_input.py")
    expected = pixels.astype(np.float32)[:, :, None] / np.float32(65535)
    for dataset in (tb.input_fn(info.path, "train", batch_size=1, shuffle=False),
                    module.input_fn("train", batch_size=1, shuffle=False)):
        (batch,) = batches_as_numpy(dataset)
        assert batch["image"].dtype == np.float32
        np.testing.assert_array_equal(batch["image"][0], expected)
    (record,) = list(tb.read(info.path, "train"))
    np.testing.assert_array_equal(record["image"], expected)


# ---- what is refused -------------------------------------------------------------------------------
def test_an_8_bit_file_into_a_uint16_feature_is_refused(tmp_path):
    (tmp_path / "scans").mkdir()
    Image.fromarray(np.full((3, 4), 200, np.uint8)).save(tmp_path / "scans" / "grey.png")
    with pytest.raises(tb.DataError) as caught:
        build(tmp_path, {"image": {"type": "image", "channels": 1, "dtype": "uint16"}})
    assert str(caught.value) == (
        f"{tmp_path / 'scans' / 'grey.png'}: feature `image`: an 8-bit L image into a `dtype: uint16` feature: "
        "convert the file to 16 bits, or declare `dtype: uint8`")


@pytest.mark.parametrize("declared, key, problem", [
    ({"encoding": "jpeg"}, "encoding",
     "expected `encoding: png` for `dtype: uint16` (lossless, 16 bits a channel), received jpeg"),
    ({"encoding": "raw"}, "encoding",
     "expected `encoding: png` for `dtype: uint16` (lossless, 16 bits a channel), received raw"),
    ({"scale_16bit": "min_max"}, "scale_16bit",
     "`scale_16bit` brings 16-bit images to 8 bits; a `dtype: uint16` feature keeps their 16 bits: remove one "
     "of them"),
])
def test_uint16_declarations_that_cant_hold_16_bits_are_spec_errors(tmp_path, declared, key, problem):
    (tmp_path / "scans").mkdir()
    with pytest.raises(tb.SpecError) as caught:
        build(tmp_path, {"image": {"type": "image", "channels": 1, "dtype": "uint16", **declared}})
    assert f"features.image.{key}" in str(caught.value) and str(caught.value).endswith(problem)
    assert "\n" not in str(caught.value)


def test_png_16_is_a_png_every_decoder_reads_the_same():
    pixels = np.random.default_rng(1).integers(0, 65536, (5, 6, 3), dtype=np.uint16)
    data = deep.png_16(pixels)
    image = Image.open(io.BytesIO(data))
    assert deep.bits(image) == 16
    image.load()
    np.testing.assert_array_equal(deep.values(image, data, 16), pixels)


def test_padded_and_resized_batches_stay_uint16(tf, tmp_path):
    """Images of their own sizes in one batch: padded with 0 to the largest, or resized by
    `input.image_size` (TensorFlow's antialiased bilinear, and tb.read's NumPy twin of it, to the
    same values), each kept in 0-65535 rather than clipped at 255."""
    (tmp_path / "scans").mkdir()
    big = np.full((4, 6), 40000, np.uint16)
    big[:, 3:] = 1000
    small = np.full((2, 3), 65535, np.uint16)
    Image.fromarray(big).save(tmp_path / "scans" / "a.png")
    Image.fromarray(small).save(tmp_path / "scans" / "b.png")
    features = {"image": {"type": "image", "channels": 1, "dtype": "uint16"}, "filename": {"dtype": "string"}}
    spec = {"name": "deep", "source": {"builder": "image_folder", "path": "scans"}, "features": features}
    info = tb.build(write_spec(tmp_path, spec), output=tmp_path / "out")
    (batch,) = batches_as_numpy(tb.input_fn(info.path, "train", batch_size=2, shuffle=False))
    images = dict(zip([name.decode() for name in batch["filename"]], batch["image"]))
    assert batch["image"].dtype == np.uint16 and batch["image"].shape == (2, 4, 6, 1)
    np.testing.assert_array_equal(images["a.png"][:, :, 0], big)
    np.testing.assert_array_equal(images["b.png"][:2, :3, 0], small)
    assert not images["b.png"][2:].any() and not images["b.png"][:, 3:].any()
    spec["input"] = {"image_size": [2, 2]}
    spec["source"]["path"] = str(tmp_path / "scans")
    info = tb.build(write_spec(tmp_path / "sized", spec), output=tmp_path / "sized" / "out")
    (batch,) = batches_as_numpy(tb.input_fn(info.path, "train", batch_size=2, shuffle=False))
    resized = dict(zip([name.decode() for name in batch["filename"]], batch["image"]))
    read = {record["filename"].decode(): record["image"] for record in tb.read(info.path, "train")}
    assert batch["image"].dtype == np.uint16 and batch["image"].shape == (2, 2, 2, 1)
    np.testing.assert_array_equal(resized["b.png"][:, :, 0], np.full((2, 2), 65535))
    left, right = resized["a.png"][0, :, 0]  # (the triangle kernel, 3 columns wide, mixes the halves)
    assert 1000 < right < 20000 < left < 40000 and (resized["a.png"][0] == resized["a.png"][1]).all()
    for name, image in read.items():
        assert image.dtype == np.uint16
        np.testing.assert_array_equal(image, resized[name], err_msg=name)


@pytest.mark.parametrize("validate", ["structure", "decode"])
def test_a_truncated_16_bit_png_is_caught_by_either_check(tmp_path, validate):
    (tmp_path / "scans").mkdir()
    data = (SCANS / "ct_small.png").read_bytes()
    (tmp_path / "scans" / "ct_small.png").write_bytes(data[: len(data) // 2])
    with pytest.raises(tb.DataError) as caught:
        build(tmp_path, {"image": {"type": "image", "channels": 1, "dtype": "uint16", "validate": validate}})
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'scans' / 'ct_small.png'}: feature `image`: ") and "\n" not in message
    assert ("truncated PNG (it doesn't end with an IEND chunk)" if validate == "structure"
            else "corrupt or truncated image") in message


def test_uint16_arrays_from_a_builder_are_kept_and_uint8_ones_refused(tmp_path):
    """A builder's pixels: a uint16 array is stored as a 16-bit PNG of its exact values (2 channels
    are grey and alpha); a uint8 one is refused as an 8-bit file is."""
    spec = tb.load_spec(write_spec(tmp_path, {
        "name": "deep", "source": {"builder": "image_folder", "path": "."},
        "features": {"image": {"type": "image", "channels": 3, "dtype": "uint16"}}}))
    feature = spec.features["image"]
    pixels = np.random.default_rng(2).integers(0, 65536, (3, 5, 3), dtype=np.uint16)
    data, shape = feature.prepare(pixels)
    assert shape == (3, 5, 3)
    image = Image.open(io.BytesIO(data))
    assert deep.bits(image) == 16
    image.load()
    np.testing.assert_array_equal(deep.values(image, data, 16), pixels)
    grey_alpha = np.dstack([pixels[:, :, 0], pixels[:, :, 1]])
    data, _ = feature.prepare(grey_alpha)
    image = Image.open(io.BytesIO(data))
    image.load()
    np.testing.assert_array_equal(deep.values(image, data, 16), np.dstack([pixels[:, :, 0]] * 3))
    with pytest.raises(ValueError) as caught:
        feature.prepare(np.zeros((3, 5), np.uint8))
    assert str(caught.value) == ("an 8-bit L image into a `dtype: uint16` feature: convert the file to 16 bits, "
                                 "or declare `dtype: uint8`")


def test_a_16_bit_grey_netpbm_file_is_kept_too(tf, tmp_path):
    """Another format Pillow reads in 16 bits (a PGM of maxval 65535, Pillow's mode I)."""
    pixels = np.array([[0, 300, 65535], [1, 2, 40000]], np.uint16)
    (tmp_path / "scans").mkdir()
    (tmp_path / "scans" / "a.pgm").write_bytes(b"P5\n3 2\n65535\n" + pixels.astype(">u2").tobytes())
    (tmp_path / "scans" / "list.csv").write_text("path,filename\na.pgm,a.pgm\n")  # (a table: any file path)
    info = build(tmp_path, {"image": {"type": "image", "source": "path", "channels": 1, "dtype": "uint16"}},
                 source={"builder": "csv", "path": "scans/list.csv"})
    for reader, images in every_reader(info).items():
        np.testing.assert_array_equal(images["a.pgm"][:, :, 0], pixels, err_msg=reader)
