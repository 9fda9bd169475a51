"""The `image` feature type, end to end: real Pillow files in, real TensorFlow batches out.

Every test builds with `tb.build` from files written into tmp_path and reads back through both
reading paths, the generated module's `input_fn` and `tb.input_fn`, which must agree batch for
batch. Lossless encodings (png, raw) are compared pixel for pixel; lossy JPEG re-encoding is held
to a PSNR bar of 30 dB at quality 90 on smooth test images (computed here with NumPy).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageOps

import tfrecord_builder as tb

from conftest import batches_as_numpy, write_spec
from support.reading import assert_same_batches, both_paths

PSNR_BAR = 30.0  # dB: JPEG quality 90 on a smooth image is well above it (typically ~40 dB)


# ---- helpers ---------------------------------------------------------------------------------------
def build(folder: Path, spec: dict, **kwargs) -> tb.DatasetInfo:
    spec = {"name": "imgs", **spec}
    return tb.build(write_spec(folder, spec), output=folder / "out", **kwargs)


def read_both(info, split="train", batch_size=4):
    """The batches (NumPy) of both reading paths, checked to be identical; returns (element_spec, batches)."""
    datasets = both_paths(info, split, batch_size)
    specs = {name: dataset.element_spec for name, dataset in datasets.items()}
    assert specs["module"] == specs["library"]
    read = {name: batches_as_numpy(dataset) for name, dataset in datasets.items()}
    assert_same_batches(read["module"], read["library"])
    return specs["module"], read["module"]


def by_filename(batches, feature="image"):
    """{filename: (the example's image as read, the shape of its batch)}."""
    out = {}
    for batch in batches:
        for index, name in enumerate(batch["filename"].tolist()):
            out[name.decode()] = (batch[feature][index], batch[feature].shape)
    return out


def stored_records(info, split="train"):
    """Every record of the split's shards, parsed with tf.train.Example.FromString."""
    import tensorflow as tf

    files = [str(Path(info.path) / name) for name in info.splits[split].files]
    return [tf.train.Example.FromString(raw.numpy()) for raw in tf.data.TFRecordDataset(files)]


def stored_bytes_by_filename(info, feature="image"):
    out = {}
    for example in stored_records(info):
        name = example.features.feature["filename"].bytes_list.value[0].decode()
        (value,) = example.features.feature[feature].bytes_list.value
        out[name] = value
    return out


def psnr(a, b) -> float:
    error = np.mean((np.asarray(a, np.float64) - np.asarray(b, np.float64)) ** 2)
    return float("inf") if error == 0 else 10 * np.log10(255.0**2 / error)


def smooth_rgb(height, width, phase=0.0):
    """A smooth, asymmetric colour image (compresses well and shows any rotation)."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    red = 128 + 100 * np.sin(x / 5 + phase)
    green = 40 + 180 * y / max(1, height - 1)
    blue = 30 + 6 * x + 2 * y
    return np.clip(np.stack([red, green, blue], -1), 0, 255).round().astype(np.uint8)


def save(array, path: Path, mode=None, **kwargs) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    image = Image.fromarray(array) if mode is None else Image.fromarray(array).convert(mode)
    image.save(path, **kwargs)
    return path


def squeeze(array):
    """(h, w, 1) -> (h, w): grey images as Pillow gives them."""
    return array[..., 0] if array.ndim == 3 and array.shape[2] == 1 else array


# ---- lossless round trips ----------------------------------------------------------------------
FIXED_SIZE = (9, 11)
VARIABLE_SIZES = [(5, 7), (9, 4), (6, 6), (12, 3), (8, 10), (3, 13)]


@pytest.mark.parametrize("sized", ["fixed", "variable"])
@pytest.mark.parametrize("channels", [1, 3, 4])
@pytest.mark.parametrize("encoding", ["png", "raw"])
def test_png_and_raw_round_trips_are_pixel_exact(tf, tmp_path, encoding, channels, sized):
    rng = np.random.default_rng(channels * 10 + len(encoding) + len(sized))
    sources = {}
    for index, size in enumerate(VARIABLE_SIZES):
        height, width = FIXED_SIZE if sized == "fixed" else size
        shape = (height, width) if channels == 1 else (height, width, channels)
        sources[f"img{index}.png"] = rng.integers(0, 256, shape, dtype=np.uint8)
        save(sources[f"img{index}.png"], tmp_path / "images" / f"img{index}.png")
    if sized == "fixed":
        declaration = {"type": "image", "encoding": encoding, "shape": [*FIXED_SIZE, channels]}
    elif channels == 3:
        declaration = {"type": "image", "encoding": encoding, "channels": 3}  # the shorthand
    else:
        declaration = {"type": "image", "encoding": encoding, "shape": [None, None, channels]}
    info = build(tmp_path, {"source": {"builder": "image_folder", "path": "images"},
                            "features": {"image": declaration, "filename": {"dtype": "string"}}})
    assert info.splits["train"].num_examples == len(sources)

    element_spec, batches = read_both(info, batch_size=4)
    expected_shape = [None, *FIXED_SIZE, channels] if sized == "fixed" else [None, None, None, channels]
    assert element_spec["image"].shape.as_list() == expected_shape
    assert element_spec["image"].dtype == tf.uint8
    assert [len(batch["filename"]) for batch in batches] == [4, 2]

    for batch in batches:
        names = [name.decode() for name in batch["filename"].tolist()]
        images = batch["image"]
        if sized == "variable":  # padded to the batch's largest height and width
            assert images.shape[1] == max(sources[name].shape[0] for name in names)
            assert images.shape[2] == max(sources[name].shape[1] for name in names)
        for image, name in zip(images, names):
            source = sources[name]
            height, width = source.shape[:2]
            np.testing.assert_array_equal(squeeze(image[:height, :width]), source, err_msg=name)
            assert not image[height:].any() and not image[:, width:].any(), f"{name}: padding is not zeros"
    assert {name for batch in batches for name in map(bytes.decode, batch["filename"].tolist())} == set(sources)


# ---- JPEG: passthrough and re-encoding ---------------------------------------------------------------
PASSTHROUGH = {
    "rgb_fixed": ("src.jpg", "RGB", {"type": "image", "encoding": "jpeg", "shape": [16, 24, 3]}, {}),
    "rgb_own_size": ("src.jpg", "RGB", {"type": "image", "encoding": "jpeg", "channels": 3}, {}),
    "grey": ("src.jpg", "L", {"type": "image", "encoding": "jpeg", "shape": [16, 24, 1]}, {}),
    "exif_orientation_1": ("src.jpg", "RGB", {"type": "image", "encoding": "jpeg", "shape": [16, 24, 3]},
                           {"orientation": 1}),
    "png_rgb": ("src.png", "RGB", {"type": "image", "encoding": "png", "shape": [16, 24, 3]}, {}),
}


@pytest.mark.parametrize("case", sorted(PASSTHROUGH))
def test_a_file_that_already_matches_the_spec_is_stored_byte_for_byte(tf, tmp_path, case):
    name, mode, declaration, extra = PASSTHROUGH[case]
    kwargs = {"quality": 80} if name.endswith(".jpg") else {}
    if "orientation" in extra:
        exif = Image.Exif()
        exif[0x0112] = extra["orientation"]
        kwargs["exif"] = exif
    source = save(smooth_rgb(16, 24), tmp_path / "images" / name, mode, **kwargs)
    info = build(tmp_path, {"source": {"builder": "image_folder", "path": "images"},
                            "features": {"image": declaration, "filename": {"dtype": "string"}}})
    assert stored_bytes_by_filename(info) == {name: source.read_bytes()}
    # and it decodes to exactly the pixels Pillow gives (a JPEG with the accurate inverse DCT)
    _, batches = read_both(info)
    with Image.open(source) as image:
        expected = np.asarray(image.convert(mode))
    np.testing.assert_array_equal(by_filename(batches)[name][0], expected.reshape(by_filename(batches)[name][0].shape))


def save_mpo(path: Path, exif: Image.Exif | None) -> bytes:
    """A camera-style MPO: a JPEG picture with a second one appended (here noise, as a depth map
    or the other eye would be), with an MP index and, as phones write it, EXIF. Returns the
    first picture's bytes, the prefix the MP index says it ends at."""
    path.parent.mkdir(parents=True, exist_ok=True)
    second = Image.fromarray(np.random.default_rng(5).integers(0, 256, (16, 24, 3), dtype=np.uint8))
    Image.fromarray(smooth_rgb(16, 24)).save(path, "MPO", save_all=True, append_images=[second], quality=85,
                                             **({} if exif is None else {"exif": exif.tobytes()}))
    with Image.open(path) as image:
        assert image.format == "MPO" and image.n_frames == 2
        first = image.mpinfo[0xB002][0]
    data = path.read_bytes()
    assert first["DataOffset"] == 0 and data[first["Size"] - 2 : first["Size"]] == b"\xff\xd9"
    return data[: first["Size"]]


@pytest.mark.parametrize("exif", ["camera", "none"])
def test_an_mpo_is_stored_as_its_first_picture_byte_for_byte(tf, tmp_path, exif):
    """Before: an MPO with EXIF was re-encoded at quality 90 (pixels several levels off), one
    without it stored whole, its second picture included."""
    tags = None
    if exif == "camera":
        tags = Image.Exif()
        tags[0x010F], tags[0x0110], tags[0x0112] = "Phone maker", "Phone 12", 1
    first = save_mpo(tmp_path / "images" / "photo.jpg", tags)
    info = build(tmp_path, {"source": {"builder": "image_folder", "path": "images"},
                            "features": {"image": {"type": "image", "encoding": "jpeg", "channels": 3},
                                         "filename": {"dtype": "string"}}})
    assert stored_bytes_by_filename(info) == {"photo.jpg": first}
    assert len(first) < len((tmp_path / "images" / "photo.jpg").read_bytes())
    _, batches = read_both(info)
    with Image.open(tmp_path / "images" / "photo.jpg") as image:
        expected = np.asarray(image.convert("RGB"))  # Pillow's decode of the MPO's first frame
    np.testing.assert_array_equal(by_filename(batches)["photo.jpg"][0], expected)


def test_a_turned_mpo_is_re_encoded_upright_and_the_build_says_so(tf, tmp_path):
    tags = Image.Exif()
    tags[0x0112] = 6
    save_mpo(tmp_path / "images" / "photo.jpg", tags)
    with pytest.warns(tb.BuildWarning) as issued:
        info = build(tmp_path, {"source": {"builder": "image_folder", "path": "images"},
                                "features": {"image": {"type": "image", "encoding": "jpeg", "channels": 3},
                                             "filename": {"dtype": "string"}}})
    assert info.warnings == [str(warning.message) for warning in issued] == [
        "feature `image`: 1 JPEG file turned upright by the EXIF orientation, so re-encoded at quality 90 "
        "(a second lossy pass) instead of stored byte for byte"]
    _, batches = read_both(info)
    with Image.open(tmp_path / "images" / "photo.jpg") as image:
        upright = np.asarray(ImageOps.exif_transpose(image).convert("RGB"))
    assert upright.shape == (24, 16, 3)
    assert psnr(by_filename(batches)["photo.jpg"][0], upright) >= PSNR_BAR


def test_a_bad_image_skipped_beside_turned_ones_leaves_their_count_as_it_is(tmp_path):
    """Under `on_error: skip` the bad image's batch is encoded again in parts while its bad row is
    searched for: the turned JPEGs are still counted once each, as the records written hold them."""
    folder = tmp_path / "images"
    for index in range(6):
        exif = Image.Exif()
        exif[0x0112] = 6 if index % 2 else 1
        save(smooth_rgb(24 if index % 2 else 16, 16 if index % 2 else 24, index), folder / f"p{index}.jpg", exif=exif)
    (folder / "p3b.jpg").write_bytes(b"\xff\xd8\xff not a JPEG")  # among the turned ones, in the one batch
    spec = {"source": {"builder": "image_folder", "path": "images"}, "on_error": "skip",
            "features": {"image": {"type": "image", "encoding": "jpeg", "shape": [16, 24, 3], "quality": 85},
                         "filename": {"dtype": "string"}}}
    with pytest.warns(tb.BuildWarning):
        info = build(tmp_path, spec, workers=1)
    assert sum(split.num_examples for split in info.splits.values()) == 6
    assert [warning for warning in info.warnings if "JPEG" in warning] == [
        "feature `image`: 3 JPEG files turned upright by the EXIF orientation, so re-encoded at quality 85 "
        "(a second lossy pass) instead of stored byte for byte"]


@pytest.mark.parametrize("workers", [1, 2])
def test_jpegs_re_encoded_for_a_reason_the_spec_didnt_give_are_counted_in_one_warning(tmp_path, monkeypatch,
                                                                                       workers):
    """Turned (EXIF orientation 6 or 3) and CMYK JPEGs of the declared size can't be stored as they
    are: one line for the build says how many and why, counted over every batch (one file each:
    with 2 workers, most are encoded there). Resizing, which the spec asks for, and files stored
    as they are say nothing."""
    from tfrecord_builder.builders import image_folder

    monkeypatch.setattr(image_folder, "BATCH_BYTES", 1)
    folder = tmp_path / "images"
    for index in range(7):
        exif = Image.Exif()
        exif[0x0112] = (6, 3, 1)[index % 3]
        turned = exif[0x0112] == 6
        save(smooth_rgb(24 if turned else 16, 16 if turned else 24, index), folder / f"p{index}.jpg", exif=exif)
    Image.fromarray(smooth_rgb(16, 24)).convert("CMYK").save(folder / "print.jpg")
    save(smooth_rgb(32, 48), folder / "big.jpg")  # resized: asked for
    spec = {"source": {"builder": "image_folder", "path": "images"},
            "features": {"image": {"type": "image", "encoding": "jpeg", "shape": [16, 24, 3], "quality": 85},
                         "filename": {"dtype": "string"}}}
    with pytest.warns(tb.BuildWarning):
        info = build(tmp_path, spec, workers=workers)
    assert info.warnings == [
        "feature `image`: 1 JPEG file converted from CMYK to RGB, so re-encoded at quality 85 (a second lossy pass) "
        "instead of stored byte for byte",
        "feature `image`: 5 JPEG files turned upright by the EXIF orientation, so re-encoded at quality 85 "
        "(a second lossy pass) instead of stored byte for byte"]


def test_png_source_stored_as_jpeg_is_re_encoded_within_the_psnr_bar(tf, tmp_path):
    pixels = smooth_rgb(32, 32)
    source = save(pixels, tmp_path / "images" / "smooth.png")
    info = build(tmp_path, {"source": {"builder": "image_folder", "path": "images"},
                            "features": {"image": {"type": "image", "encoding": "jpeg", "shape": [32, 32, 3],
                                                   "quality": 90},
                                         "filename": {"dtype": "string"}}})
    stored = stored_bytes_by_filename(info)["smooth.png"]
    assert stored[:3] == b"\xff\xd8\xff" and stored != source.read_bytes()
    _, batches = read_both(info)
    decoded = by_filename(batches)["smooth.png"][0]
    assert decoded.shape == (32, 32, 3)
    assert psnr(decoded, pixels) >= PSNR_BAR


def test_resized_jpeg_is_re_encoded_within_the_psnr_bar(tf, tmp_path):
    source = save(smooth_rgb(32, 48), tmp_path / "images" / "big.jpg", quality=95)
    info = build(tmp_path, {"source": {"builder": "image_folder", "path": "images"},
                            "features": {"image": {"type": "image", "encoding": "jpeg", "shape": [16, 24, 3]},
                                         "filename": {"dtype": "string"}}})
    assert stored_bytes_by_filename(info)["big.jpg"] != source.read_bytes()
    _, batches = read_both(info)
    decoded = by_filename(batches)["big.jpg"][0]
    assert decoded.shape == (16, 24, 3)
    reference = np.asarray(Image.open(source).convert("RGB").resize((24, 16), Image.Resampling.BILINEAR))
    assert psnr(decoded, reference) >= PSNR_BAR


# ---- colour modes --------------------------------------------------------------------------------
def _luma(rgb):
    """ITU-R 601-2 luma, as Pillow's RGB -> L conversion computes it."""
    return np.asarray(Image.fromarray(rgb, "RGB").convert("L"))


def _mode_sources(folder: Path):
    """Source files of many colour modes: {file name: (rgb or grey pixels, alpha or None, is_grey)}."""
    rng = np.random.default_rng(7)
    sources = {}
    grey = rng.integers(0, 256, (5, 6), dtype=np.uint8)
    save(grey, folder / "grey.png")
    sources["grey.png"] = (grey, None, True)

    rgb = rng.integers(0, 256, (6, 5, 3), dtype=np.uint8)
    save(rgb, folder / "rgb.png")
    sources["rgb.png"] = (rgb, None, False)

    rgba = rng.integers(0, 256, (4, 7, 4), dtype=np.uint8)
    save(rgba, folder / "rgba.png")
    sources["rgba.png"] = (rgba[..., :3], rgba[..., 3], False)

    la = rng.integers(0, 256, (7, 3, 2), dtype=np.uint8)
    save(la, folder / "grey_alpha.png")
    assert Image.open(folder / "grey_alpha.png").mode == "LA"
    sources["grey_alpha.png"] = (la[..., 0], la[..., 1], True)

    palette = rng.integers(0, 256, (6, 3), dtype=np.uint8)
    indices = rng.integers(0, 6, (5, 8), dtype=np.uint8)
    indices[0, 0] = 0
    for name, transparency in (("palette.png", None), ("palette_alpha.png", 0)):
        image = Image.frombytes("P", (8, 5), indices.tobytes())
        image.putpalette(palette.reshape(-1).tolist())
        image.save(folder / name, **({} if transparency is None else {"transparency": transparency}))
        reopened = Image.open(folder / name)
        assert reopened.mode == "P" and (transparency is None) == ("transparency" not in reopened.info)
        alpha = None if transparency is None else np.where(indices == 0, 0, 255).astype(np.uint8)
        sources[name] = (palette[indices], alpha, False)

    deep = rng.integers(0, 65536, (6, 7), dtype=np.uint16)
    save(deep, folder / "grey16.png")
    assert Image.open(folder / "grey16.png").mode == "I;16"
    sources["grey16.png"] = (((deep.astype(np.int64) + 128) // 257).astype(np.uint8), None, True)  # scale_16bit

    bits = rng.integers(0, 2, (3, 9)).astype(bool)
    save(bits, folder / "bilevel.png")
    assert Image.open(folder / "bilevel.png").mode == "1"
    sources["bilevel.png"] = (np.where(bits, 255, 0).astype(np.uint8), None, True)
    return sources


def _as_channels(pixels, alpha, is_grey, channels):
    if channels == 1:
        return pixels if is_grey else _luma(pixels)
    rgb = np.stack([pixels] * 3, -1) if is_grey else pixels
    if channels == 3:
        return rgb  # an alpha channel is dropped, not composited
    alpha = np.full(rgb.shape[:2], 255, np.uint8) if alpha is None else alpha
    return np.dstack([rgb, alpha])


@pytest.mark.parametrize("encoding", ["png", "raw"])
@pytest.mark.parametrize("channels", [1, 3, 4])
def test_colour_modes_come_out_with_the_declared_channels(tf, tmp_path, channels, encoding):
    sources = _mode_sources(tmp_path / "images")
    info = build(tmp_path, {"source": {"builder": "image_folder", "path": "images"},
                            "features": {"image": {"type": "image", "encoding": encoding, "channels": channels,
                                                   "scale_16bit": "full_range"},
                                         "filename": {"dtype": "string"}}})
    _, batches = read_both(info, batch_size=16)
    images = by_filename(batches)
    assert set(images) == set(sources)
    for name, (pixels, alpha, is_grey) in sources.items():
        expected = _as_channels(pixels, alpha, is_grey, channels)
        image = images[name][0]
        height, width = expected.shape[:2]
        assert image.shape[2] == channels
        np.testing.assert_array_equal(squeeze(image[:height, :width]), expected, err_msg=name)
        assert not image[height:].any() and not image[:, width:].any(), name


# ---- 16-bit images ---------------------------------------------------------------------------------
def _scans(folder: Path) -> dict[str, np.ndarray]:
    """12-bit CT-like slices (highest 2191) and a 9-bit one, as 16-bit grey PNGs."""
    rng = np.random.default_rng(12)
    scans = {}
    for name, top in (("ct_001.png", 2191), ("ct_002.png", 1800), ("mr_9bit.png", 511)):
        pixels = rng.integers(0, top + 1, (6, 5)).astype(np.uint16)
        pixels[0, 0], pixels[0, 1] = 0, top
        save(pixels, folder / name)
        assert Image.open(folder / name).mode == "I;16"
        scans[name] = pixels
    return scans


def _scan_spec(**declared) -> dict:
    return {"source": {"builder": "image_folder", "path": "scans"},
            "features": {"image": {"type": "image", "encoding": "png", "shape": [6, 5, 1], **declared},
                         "filename": {"dtype": "string"}}}


def test_a_16_bit_scan_into_an_8_bit_feature_is_refused_by_default(tmp_path):
    """Before: stored as its high byte, 2191 -> 8 (nine grey levels, a black thumbnail), in silence."""
    _scans(tmp_path / "scans")
    with pytest.raises(tb.DataError) as caught:
        build(tmp_path, _scan_spec())
    assert str(caught.value) == (
        f"{tmp_path / 'scans' / 'ct_001.png'}: feature `image`: a 16-bit grey image (values 0-2191) into 8 bits: "
        "choose how to scale it with `scale_16bit: full_range` (value / 257) or `scale_16bit: min_max` "
        "(the file's own range onto 0-255)")


@pytest.mark.parametrize("scale", ["full_range", "min_max"])
def test_16_bit_scans_are_scaled_by_the_rule_the_spec_chooses(tf, tmp_path, scale):
    scans = _scans(tmp_path / "scans")
    info = build(tmp_path, _scan_spec(scale_16bit=scale))
    _, batches = read_both(info)
    images = by_filename(batches)
    for name, pixels in scans.items():
        wide = pixels.astype(np.int64)
        if scale == "full_range":  # v / 257, rounded: 2191 -> 9
            expected = (wide + 128) // 257
        else:  # the file's own lowest (0) -> 0, highest -> 255, rounded half up
            expected = (wide * 510 + wide.max()) // (2 * wide.max())
        np.testing.assert_array_equal(images[name][0][..., 0], expected, err_msg=name)
    if scale == "min_max":
        assert images["mr_9bit.png"][0].max() == 255 and images["ct_001.png"][0].min() == 0


def test_real_ct_and_mr_slices_keep_every_grey_level_their_range_holds(tf, tmp_path):
    """pydicom's own 12-bit test slices (CT 128-2191, MR 127-2145), as a PNG export writes them:
    `min_max` spreads each file's range over 0-255, where the high byte kept 9 grey levels."""
    pydicom = pytest.importorskip("pydicom")
    from pydicom.data import get_testdata_file

    slices = {}
    for name in ("CT_small.dcm", "MR_small.dcm"):
        pixels = pydicom.dcmread(get_testdata_file(name)).pixel_array.astype(np.uint16)
        slices[name.replace(".dcm", ".png")] = pixels
        save(pixels, tmp_path / "scans" / name.replace(".dcm", ".png"))
    spec = _scan_spec(scale_16bit="min_max")
    spec["features"]["image"]["shape"] = [None, None, 1]
    _, batches = read_both(build(tmp_path, spec))
    images = by_filename(batches)
    for name, pixels in slices.items():
        wide = pixels.astype(np.int64)
        low, span = wide.min(), wide.max() - wide.min()
        expected = ((wide - low) * 510 + span) // (2 * span)  # rounded half up
        stored = images[name][0][: pixels.shape[0], : pixels.shape[1], 0]  # (a batch pads to its largest)
        np.testing.assert_array_equal(stored, expected, err_msg=name)
        assert stored.min() == 0 and stored.max() == 255 and len(np.unique(stored)) > 200, name


# ---- EXIF orientation ----------------------------------------------------------------------------
@pytest.mark.parametrize("orientation", [6, 3])
def test_exif_orientation_is_applied(tf, tmp_path, orientation):
    exif = Image.Exif()
    exif[0x0112] = orientation
    source = save(smooth_rgb(16, 24), tmp_path / "images" / "turned.jpg", quality=95, exif=exif)
    stored_pixels = np.asarray(Image.open(source).convert("RGB"))  # as the file stores them: 16 x 24
    upright = np.asarray(ImageOps.exif_transpose(Image.open(source)).convert("RGB"))
    assert upright.shape == ((24, 16, 3) if orientation == 6 else (16, 24, 3))
    with pytest.warns(tb.BuildWarning, match=r"^feature `jpeg`: 1 JPEG file turned upright by the EXIF orientation"):
        info = build(tmp_path, {"source": {"builder": "image_folder", "path": "images"},
                                "features": {
                                    "lossless": {"type": "image", "encoding": "png", "channels": 3, "source": "image"},
                                    "jpeg": {"type": "image", "encoding": "jpeg", "shape": list(upright.shape),
                                             "source": "image"},
                                    "filename": {"dtype": "string"}}})
    element_spec, batches = read_both(info)
    assert element_spec["jpeg"].shape.as_list() == [None, *upright.shape]
    lossless = by_filename(batches, "lossless")["turned.jpg"][0]
    assert lossless.shape == upright.shape
    np.testing.assert_array_equal(lossless, upright)  # upright, pixel for pixel
    if orientation == 3:
        assert not np.array_equal(lossless, stored_pixels)
    jpeg = by_filename(batches, "jpeg")["turned.jpg"][0]
    assert jpeg.shape == upright.shape and psnr(jpeg, upright) >= PSNR_BAR
    # a turned file is never passed through: its bytes would decode sideways
    assert stored_bytes_by_filename(info, "jpeg")["turned.jpg"] != source.read_bytes()


# ---- resizing to a fixed shape ---------------------------------------------------------------------
def _bands(height, width):
    """Left quarter red, middle half green, right quarter blue."""
    image = np.zeros((height, width, 3), np.uint8)
    image[:, : width // 4] = (255, 0, 0)
    image[:, width // 4 : 3 * width // 4] = (0, 255, 0)
    image[:, 3 * width // 4 :] = (0, 0, 255)
    return image


def _noise(height, width, seed=3):
    return np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8)


def _pad_wide(source, image):  # 10 x 20 into 20 x 20: black bands of 5 rows above and below
    assert not image[:5].any() and not image[15:].any()
    np.testing.assert_array_equal(image[5:15], source)


def _pad_tall(source, image):  # 20 x 10 into 20 x 20: black bands of 5 columns left and right
    assert not image[:, :5].any() and not image[:, 15:].any()
    np.testing.assert_array_equal(image[:, 5:15], source)


def _pad_shrunk(source, image):  # a solid 10 x 20 shrunk to 6 x 12 and centred in 12 x 12: rows 3-8
    assert not image[:3].any() and not image[9:].any()
    assert (image[3:9] == (200, 30, 7)).all()


def _crop_wide(source, image):  # 20 x 40 to 20 x 20: the middle columns
    np.testing.assert_array_equal(image, source[:, 10:30])


def _crop_tall(source, image):  # 40 x 20 to 20 x 20: the middle rows
    np.testing.assert_array_equal(image, source[10:30])


def _crop_shrunk(source, image):  # bands 20 x 40, box-shrunk to 10 x 20, centre 10 x 10: all green
    assert (image == (0, 255, 0)).all()


def _stretch_nearest(source, image):  # 10 x 10 to 20 x 40, nearest: each pixel repeated 2 x 4
    np.testing.assert_array_equal(image, np.repeat(np.repeat(source, 2, axis=0), 4, axis=1))


def _stretch_bilinear(source, image):  # 10 x 20 to 20 x 20 with the default filter, Pillow's bilinear
    np.testing.assert_array_equal(image, np.asarray(Image.fromarray(source).resize((20, 20), Image.Resampling.BILINEAR)))


RESIZES = {
    "pad_wide": (_noise(10, 20), {"resize": "pad", "shape": [20, 20, 3]}, _pad_wide),
    "pad_tall": (_noise(20, 10), {"resize": "pad", "shape": [20, 20, 3]}, _pad_tall),
    "pad_shrunk": (np.full((10, 20, 3), (200, 30, 7), np.uint8), {"resize": "pad", "shape": [12, 12, 3]},
                   _pad_shrunk),
    "crop_wide": (_noise(20, 40), {"resize": "crop", "shape": [20, 20, 3]}, _crop_wide),
    "crop_tall": (_noise(40, 20), {"resize": "crop", "shape": [20, 20, 3]}, _crop_tall),
    "crop_shrunk": (_bands(20, 40), {"resize": "crop", "shape": [10, 10, 3], "filter": "box"}, _crop_shrunk),
    "stretch_nearest": (_noise(10, 10), {"shape": [20, 40, 3], "filter": "nearest"}, _stretch_nearest),
    "stretch_bilinear": (_noise(10, 20), {"resize": "stretch", "shape": [20, 20, 3]}, _stretch_bilinear),
}


@pytest.mark.parametrize("case", sorted(RESIZES))
def test_resize_modes_give_the_declared_shape(tf, tmp_path, case):
    source, options, check = RESIZES[case]
    save(source, tmp_path / "images" / "src.png")
    info = build(tmp_path, {"source": {"builder": "image_folder", "path": "images"},
                            "features": {"image": {"type": "image", "encoding": "png", **options},
                                         "filename": {"dtype": "string"}}})
    element_spec, batches = read_both(info)
    assert element_spec["image"].shape.as_list() == [None, *options["shape"]]
    image = by_filename(batches)["src.png"][0]
    assert list(image.shape) == options["shape"]
    check(source, image)


# ---- batch shapes and dtypes ------------------------------------------------------------------------
def test_fixed_shapes_are_static_for_every_encoding(tf, tmp_path):
    sources = {f"{index}.png": _noise(8, 12, seed=index) for index in range(5)}
    for name, pixels in sources.items():
        save(pixels, tmp_path / "images" / name)
    features = {name: {"type": "image", "encoding": name, "shape": [8, 12, 3], "source": "image"}
                for name in ("png", "jpeg", "raw")}
    info = build(tmp_path, {"source": {"builder": "image_folder", "path": "images"},
                            "features": {**features, "filename": {"dtype": "string"}}})
    element_spec, batches = read_both(info, batch_size=2)
    for name in ("png", "jpeg", "raw"):
        assert element_spec[name].shape.as_list() == [None, 8, 12, 3], name
        assert element_spec[name].dtype == tf.uint8
    assert [batch["png"].shape for batch in batches] == [(2, 8, 12, 3), (2, 8, 12, 3), (1, 8, 12, 3)]
    for name, (image, _) in by_filename(batches, "png").items():
        np.testing.assert_array_equal(image, sources[name])
    for name, (image, _) in by_filename(batches, "raw").items():
        np.testing.assert_array_equal(image, sources[name])


def test_image_size_resizes_variable_images_to_a_static_shape(tf, tmp_path):
    colours = {"small.png": (4, 4, (10, 200, 30)), "wide.png": (10, 20, (250, 0, 99)), "tall.png": (15, 3, (1, 2, 3))}
    for name, (height, width, colour) in colours.items():
        save(np.full((height, width, 3), colour, np.uint8), tmp_path / "images" / name)
    exact = _noise(6, 9)
    save(exact, tmp_path / "images" / "exact.png")
    info = build(tmp_path, {"source": {"builder": "image_folder", "path": "images"},
                            "features": {"image": {"type": "image", "channels": 3},
                                         "filename": {"dtype": "string"}},
                            "input": {"image_size": [6, 9]}})
    element_spec, batches = read_both(info, batch_size=3)
    assert element_spec["image"].shape.as_list() == [None, 6, 9, 3]
    assert element_spec["image"].dtype == tf.uint8
    images = by_filename(batches)
    for name, (_, _, colour) in colours.items():
        assert images[name][0].shape == (6, 9, 3)
        assert (images[name][0] == colour).all(), name  # a solid colour stays that colour
    np.testing.assert_array_equal(images["exact.png"][0], exact)  # already that size: unchanged


@pytest.mark.parametrize("sized", ["fixed", "variable"])
def test_float32_images_are_pixels_over_255(tf, tmp_path, sized):
    sources = {"a.png": _noise(6, 8, seed=1), "b.png": _noise(6, 8, seed=2) if sized == "fixed" else _noise(3, 5, seed=2)}
    for name, pixels in sources.items():
        save(pixels, tmp_path / "images" / name)
    declaration = {"type": "image", "shape": [6, 8, 3]} if sized == "fixed" else {"type": "image", "channels": 3}
    info = build(tmp_path, {"source": {"builder": "image_folder", "path": "images"},
                            "features": {"image": declaration, "filename": {"dtype": "string"}},
                            "input": {"image_dtype": "float32"}})
    element_spec, batches = read_both(info, batch_size=2)
    assert element_spec["image"].dtype == tf.float32
    assert element_spec["image"].shape.as_list() == ([None, 6, 8, 3] if sized == "fixed" else [None, None, None, 3])
    images = by_filename(batches)
    for name, pixels in sources.items():
        image = images[name][0]
        assert image.dtype == np.float32
        np.testing.assert_array_equal(image[: pixels.shape[0], : pixels.shape[1]],
                                      pixels.astype(np.float32) / np.float32(255))
        assert not image[pixels.shape[0]:].any() and not image[:, pixels.shape[1]:].any()


# ---- declarations the spec refuses -------------------------------------------------------------------
BAD_DECLARATIONS = [
    ({"encoding": "jpeg", "channels": 4}, "features.image.encoding", "JPEG has no alpha channel"),
    ({"shape": [8, None, 3]}, "features.image.shape", "give both height and width"),
    ({"shape": [8, 8, 2]}, "features.image.shape", "expected 1, 3 or 4 channels, received 2"),
    ({"shape": [8, 8]}, "features.image.shape", "expected [height, width, channels]"),
    ({"shape": [0, 8, 3]}, "features.image.shape", "expected positive dimensions"),
    ({"channels": 1, "shape": [8, 8, 3]}, "features.image.channels", "disagree with shape [8, 8, 3]"),
    ({"quality": 0}, "features.image.quality", "expected a JPEG quality in [1, 100]"),
    ({"resize": "fit"}, "features.image.resize", "expected one of stretch, pad, crop"),
]


@pytest.mark.parametrize("declaration, key, problem", BAD_DECLARATIONS)
def test_bad_image_declarations_are_spec_errors_at_their_key(tmp_path, declaration, key, problem):
    path = write_spec(tmp_path, {"name": "imgs", "source": {"builder": "image_folder", "path": "."},
                                 "features": {"image": {"type": "image", **declaration}}})
    with pytest.raises(tb.SpecError) as caught:
        tb.load_spec(path)
    assert str(caught.value).startswith(f"{path}, line ") and f"{key}: " in str(caught.value)
    assert problem in str(caught.value)


@pytest.mark.parametrize("validate", ["structure", "decode"])
@pytest.mark.parametrize("encoding, cut", [("jpeg", 0.5), ("jpeg", 0.9), ("jpeg", -2), ("png", 0.6), ("png", -3)])
def test_a_truncated_passthrough_image_is_caught_by_either_check(tmp_path, validate, encoding, cut):
    """Passthrough keeps the file's bytes; `validate: structure` checks its end marker without
    decoding, `decode` decodes it: both refuse a file cut short, naming it."""
    import io

    rng = np.random.default_rng(3)
    buffer = io.BytesIO()
    Image.fromarray(rng.integers(0, 255, (16, 16, 3), dtype=np.uint8)).save(buffer, encoding.upper())
    whole = buffer.getvalue()
    pics = tmp_path / "pics" / "a"
    pics.mkdir(parents=True)
    (pics / f"ok.{encoding}").write_bytes(whole)
    (pics / f"cut.{encoding}").write_bytes(whole[: int(len(whole) * cut)] if cut > 0 else whole[:cut])
    spec = {"name": "cut", "source": {"builder": "image_folder", "path": "pics"},
            "features": {"image": {"type": "image", "encoding": encoding, "shape": [16, 16, 3], "validate": validate},
                         "label": {"type": "class_label"}}}
    if (validate, encoding, cut) == ("decode", "png", -3):
        # only the IEND chunk's checksum is gone: Pillow decodes every pixel, the structure check refuses it
        assert build(tmp_path, spec).splits["train"].num_examples == 2
    else:
        with pytest.raises(tb.DataError, match=rf"cut\.{encoding}: .*(truncated|corrupt)"):
            build(tmp_path, spec)
    (pics / f"cut.{encoding}").unlink()
    info = build(tmp_path, spec, overwrite=True)
    assert info.splits["train"].num_examples == 1


@pytest.mark.parametrize("shape", [[64, 96, 3], [32, 32, 3]], ids=["passthrough", "re-encoded"])
def test_decode_catches_a_jpeg_whose_scan_was_zeroed_midway(tmp_path, shape):
    """Bytes zeroed mid-scan shift the lower half of the picture; Pillow decodes it in silence,
    libjpeg only warns. `validate: decode` refuses it; `structure` can't see it (documented)."""
    import io

    buffer = io.BytesIO()
    Image.fromarray(smooth_rgb(64, 96)).save(buffer, "JPEG", quality=90)
    data = bytearray(buffer.getvalue())
    scan = data.index(b"\xff\xda")
    middle = (scan + len(data)) // 2
    data[middle : middle + 64] = bytes(64)
    pics = tmp_path / "pics" / "a"
    pics.mkdir(parents=True)
    (pics / "zeroed.jpg").write_bytes(bytes(data))
    Image.open(io.BytesIO(bytes(data))).load()  # (Pillow decodes it without a word)
    spec = {"name": "zeroed", "source": {"builder": "image_folder", "path": "pics"},
            "features": {"image": {"type": "image", "encoding": "jpeg", "shape": shape, "validate": "decode"},
                         "label": {"type": "class_label"}}}
    with pytest.raises(tb.DataError) as error:
        build(tmp_path, spec)
    assert str(error.value) == (f"{pics / 'zeroed.jpg'}: feature `image`: corrupt JPEG data: premature end of "
                                "data segment")
    spec["features"]["image"]["validate"] = "structure"
    assert build(tmp_path, spec, overwrite=True).splits["train"].num_examples == 1


def test_the_module_loaded_from_its_path_decodes_images_of_varying_size_without_autograph_warnings(tmp_path):
    """map_fn runs its function through AutoGraph, which can't read a module loaded from its path:
    every eager parse_batch warned `AutoGraph could not transform ... Please report this`."""
    import subprocess
    import sys

    for index, (height, width) in enumerate([(10, 12), (14, 9), (8, 8)]):
        save(smooth_rgb(height, width), tmp_path / "pics" / "a" / f"{index}.png")
    cases = [({}, (3, 14, 12, 3)), ({"image_size": [6, 5]}, (3, 6, 5, 3))]
    script = "import glob, importlib.util, tensorflow as tf\n"  # one process for both: TensorFlow imported once
    for number, (spec_input, _) in enumerate(cases):
        spec = {"name": "sizes", "source": {"builder": "image_folder", "path": "pics"},
                "features": {"image": {"type": "image", "encoding": "png"}, "label": {"type": "class_label"}},
                "input": spec_input}
        info = tb.build(write_spec(tmp_path, spec), output=tmp_path / f"out{number}")
        script += (
            f"spec = importlib.util.spec_from_file_location('sizes_input', {str(Path(info.path) / 'sizes_input.py')!r})\n"
            "module = importlib.util.module_from_spec(spec)\n"
            "spec.loader.exec_module(module)\n"
            f"files = sorted(glob.glob({str(Path(info.path) / '*.tfrecord*')!r}))\n"
            "for batch in tf.data.TFRecordDataset(files).batch(3):\n"
            "    print(tuple(module.parse_batch(batch)['image'].shape))\n"
        )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    # one batch of the three images from each module
    assert result.stdout.splitlines() == [str(expected) for _, expected in cases], result.stdout
    assert "AutoGraph" not in result.stderr, result.stderr


def test_structure_check_passes_the_files_own_bytes_through(tmp_path):
    import io

    buffer = io.BytesIO()
    Image.fromarray(np.random.default_rng(4).integers(0, 255, (16, 16, 3), dtype=np.uint8)).save(buffer, "JPEG")
    (tmp_path / "pics" / "a").mkdir(parents=True)
    (tmp_path / "pics" / "a" / "x.jpg").write_bytes(buffer.getvalue() + b"trailing bytes after EOI")
    spec = {"name": "pt", "source": {"builder": "image_folder", "path": "pics"},
            "features": {"image": {"type": "image", "encoding": "jpeg", "shape": [16, 16, 3]},
                         "label": {"type": "class_label"}}}
    info = build(tmp_path, spec)
    from tfrecord_builder.codec.example_reader import parse_record
    from tfrecord_builder.codec.tfrecord import read_records
    with open(Path(info.path) / info.splits["train"].files[0], "rb") as file:
        stored, _ = parse_record(next(read_records(file, "shard")))
    assert stored["image"] == ("bytes", [buffer.getvalue() + b"trailing bytes after EOI"])


@pytest.mark.filterwarnings("ignore::tfrecord_builder.BuildWarning")  # the turned file's: asserted below
def test_the_jpeg_marker_check_stores_what_pillow_would(tmp_path, monkeypatch):
    """Passthrough JPEGs read by their markers alone give the same shards (and the same refusals)
    as the Pillow path: grey and colour, baseline and progressive, with EXIF (turned), other sizes."""
    import io

    from tfrecord_builder.media.images import jpeg as jpeg_module

    rng = np.random.default_rng(8)
    pics = tmp_path / "pics"
    variants = {}
    for index, (mode, size, options) in enumerate([
            ("RGB", 16, {}), ("RGB", 16, {"progressive": True}), ("L", 16, {}), ("RGB", 16, {"quality": 30}),
            ("RGB", 16, {"exif": _exif_orientation(1)}), ("RGB", 16, {"exif": _exif_orientation(6)}),
            ("RGB", 12, {})]):
        pixels = rng.integers(0, 255, (size, size, 3), dtype=np.uint8)
        buffer = io.BytesIO()
        Image.fromarray(pixels).convert(mode).save(buffer, "JPEG", **options)
        variants[f"v{index}.jpg"] = buffer.getvalue()
    for name, data in variants.items():
        (pics / "c").mkdir(parents=True, exist_ok=True)
        (pics / "c" / name).write_bytes(data)
    for channels in (3, 1):
        spec = {"name": f"m{channels}", "source": {"builder": "image_folder", "path": str(pics)},
                "features": {"image": {"type": "image", "encoding": "jpeg", "shape": [16, 16, channels]},
                             "label": {"type": "class_label"}}}
        fast = build(tmp_path / "fast", spec)
        with monkeypatch.context() as patch:
            patch.setattr(jpeg_module, "jpeg_header", lambda data: None)
            slow = build(tmp_path / "slow", spec)
        assert fast.to_dict()["splits"] == slow.to_dict()["splits"]  # every shard's sha256
        assert fast.warnings == slow.warnings == ([
            "feature `image`: 1 JPEG file turned upright by the EXIF orientation, so re-encoded at quality 90 "
            "(a second lossy pass) instead of stored byte for byte"] if channels == 3 else [])
    assert jpeg_module.jpeg_header(variants["v0.jpg"])[:3] == (16, 16, 3)
    assert jpeg_module.jpeg_header(variants["v1.jpg"])[:3] == (16, 16, 3)  # progressive
    assert jpeg_module.jpeg_header(variants["v2.jpg"])[:3] == (16, 16, 1)
    assert jpeg_module.jpeg_header(variants["v4.jpg"]) is None  # EXIF: Pillow reads it


def _exif_orientation(value: int) -> bytes:
    exif = Image.Exif()
    exif[0x0112] = value
    return exif.tobytes()
