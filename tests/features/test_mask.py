"""The `mask` feature type: a real photograph (scikit-image's coins) with a real segmentation of
it (Otsu's threshold, connected regions labelled), saved as palette and grey PNGs, built and
read back pixel for pixel through the generated module, `tb.input_fn`, `tb.read` and TFDS."""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

import tfrecord_builder as tb
from tfrecord_builder.errors import DataError, SpecError
from tfrecord_builder.features.mask import mask_indices
from tfrecord_builder.media.images import BadImage
from tfrecord_builder.read import numpy_decoding

from conftest import write_spec
from support.reading import read_all

CLASSES = 6
PALETTE = [0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 0, 255, 0, 255]  # black, red, green, blue, ...


@pytest.fixture(scope="module")
def coins():
    """(the coins photo, uint8 [303, 384]; its segmentation: each coin's region label mod CLASSES)."""
    pytest.importorskip("skimage")
    from skimage import data, filters, measure

    photo = data.coins()
    regions = measure.label(photo > filters.threshold_otsu(photo))
    assert regions.max() > 20  # ~24 coins and specks: a real segmentation, many regions
    return photo, (regions % CLASSES).astype(np.uint8)


def save_palette(indices: np.ndarray, path: Path) -> Path:
    image = Image.fromarray(indices, "P")
    image.putpalette(PALETTE)
    image.save(path)
    return path


def build(folder: Path, features: dict, rows: str, input_: dict | None = None) -> tb.DatasetInfo:
    spec = {"name": "seg", "source": {"builder": "csv", "path": "table.csv"}, "features": features}
    if input_:
        spec["input"] = input_
    return tb.build(write_spec(folder, spec, {"table.csv": rows}), output=folder / "out")


def test_a_real_segmentation_round_trips_pixel_for_pixel_everywhere(tf, tmp_path, coins):
    photo, indices = coins
    Image.fromarray(photo).save(tmp_path / "coins.png")
    save_palette(indices, tmp_path / "palette.png")
    Image.fromarray(indices, "L").save(tmp_path / "grey.png")
    info = build(tmp_path, {"image": {"type": "image", "channels": 1}, "name": {"dtype": "string"},
                            "mask": {"type": "mask", "source": "mask_path", "image": "image"}},
                 "image,mask_path,name\ncoins.png,palette.png,p\ncoins.png,grey.png,g\n")
    batches, records = read_all(info)
    assert [batch["mask"].shape for batch in batches] == [(1, 303, 384, 1)] * 2
    for batch, record in zip(batches, records):
        assert batch["mask"].dtype == np.uint8 and record["mask"].dtype == np.uint8
        np.testing.assert_array_equal(batch["mask"][0, :, :, 0], indices)
        np.testing.assert_array_equal(record["mask"][:, :, 0], indices)
    tfds = pytest.importorskip("tensorflow_datasets")
    read = list(tfds.as_numpy(tfds.builder_from_directory(info.path).as_dataset(split="train", shuffle_files=False)))
    assert [example["mask"].shape for example in read] == [(303, 384, 1)] * 2
    for example in read:
        np.testing.assert_array_equal(example["mask"][:, :, 0], indices)


def test_a_palette_mask_is_read_as_its_indices_not_its_colours(tmp_path):
    indices = np.tile(np.arange(CLASSES, dtype=np.uint8), (4, 1))
    path = save_palette(indices, tmp_path / "mask.png")
    np.testing.assert_array_equal(mask_indices(str(path)), indices)
    # what a colour conversion would have given instead (red -> 76 in grey), which must not be stored
    assert np.asarray(Image.open(path).convert("L"))[0, 1] == 76


def test_a_mask_of_another_size_than_its_image_is_an_error_naming_both(tmp_path, coins):
    photo, indices = coins
    Image.fromarray(photo).save(tmp_path / "coins.png")
    Image.fromarray(indices[:300, :380], "L").save(tmp_path / "small.png")
    with pytest.raises(DataError) as error:
        build(tmp_path, {"image": {"type": "image", "channels": 1},
                         "mask": {"type": "mask", "source": "mask_path", "image": "image"}},
              "image,mask_path\ncoins.png,small.png\n")
    assert str(error.value) == (
        "table.csv, line 2: feature `mask`: mask small.png is 380×300 but its image coins.png "
        "(feature `image`) is 384×303 (width×height, upright); a mask must have its image's size")


def test_a_mask_beside_one_image_belongs_to_it_without_naming_it(tmp_path, coins):
    """No `image:`: the spec's one image is the mask's, so its size is checked all the same."""
    photo, indices = coins
    Image.fromarray(photo).save(tmp_path / "coins.png")
    Image.fromarray(indices[:300, :380], "L").save(tmp_path / "small.png")
    with pytest.raises(DataError) as error:
        build(tmp_path, {"image": {"type": "image", "channels": 1}, "mask": {"type": "mask", "source": "mask_path"}},
              "image,mask_path\ncoins.png,small.png\n")
    assert str(error.value) == (
        "table.csv, line 2: feature `mask`: mask small.png is 380×300 but its image coins.png "
        "(feature `image`) is 384×303 (width×height, upright); a mask must have its image's size")


def test_a_mask_beside_several_images_must_name_its_own(tmp_path):
    spec = {"name": "seg", "source": {"builder": "csv", "path": "table.csv"},
            "features": {"image": {"type": "image"}, "depth": {"type": "image", "dtype": "uint16"},
                         "mask": {"type": "mask", "source": "mask_path"}}}
    with pytest.raises(SpecError) as error:
        tb.load_spec(write_spec(tmp_path, spec))
    assert str(error.value).endswith("features.mask.image: the spec has 2 image features (image, depth): name the "
                                     "one this mask belongs to (it must have that image's size)")


def _exif(orientation: int) -> bytes:
    exif = Image.Exif()
    exif[0x0112] = orientation
    return exif.tobytes()


def test_a_mask_is_drawn_on_the_upright_image(tf, tmp_path):
    """A photo stored 20 wide and 10 tall, EXIF orientation 6 (displayed 10 wide, 20 tall): its
    mask is 10×20; a mask of the stored frame's 20×10 is refused."""
    Image.fromarray(np.zeros((10, 20), np.uint8)).save(tmp_path / "photo.jpg", exif=_exif(6))
    upright = np.arange(200, dtype=np.uint8).reshape(20, 10) % 3
    Image.fromarray(upright, "L").save(tmp_path / "upright.png")
    Image.fromarray(upright.T.copy(), "L").save(tmp_path / "stored.png")
    features = {"image": {"type": "image", "channels": 1, "encoding": "png"},
                "mask": {"type": "mask", "source": "mask_path", "image": "image"}}
    batches, _ = read_all(build(tmp_path / "a", features, f"image,mask_path\n{tmp_path}/photo.jpg,"
                                                          f"{tmp_path}/upright.png\n"))
    assert batches[0]["image"].shape == batches[0]["mask"].shape == (1, 20, 10, 1)
    np.testing.assert_array_equal(batches[0]["mask"][0, :, :, 0], upright)
    with pytest.raises(DataError, match=r"is 20×10 but its image .*photo.jpg \(feature `image`\) is 10×20"):
        build(tmp_path / "b", features, f"image,mask_path\n{tmp_path}/photo.jpg,{tmp_path}/stored.png\n")


@pytest.mark.parametrize("fmt, mode, problem", [
    ("JPEG", "L", "a JPEG mask is lossy (its edges hold values between classes): save masks as PNG"),
    ("PNG", "RGB", "colour mode RGB: a mask holds class indices, not colours; save it as a palette (P) or grey "
                   "(L) PNG of class indices"),
    ("PNG", "LA", "colour mode LA: a mask holds class indices, not colours; save it as a palette (P) or grey "
                  "(L) PNG of class indices, without alpha"),
])
def test_lossy_and_colour_masks_are_refused(tmp_path, fmt, mode, problem):
    Image.new(mode, (8, 4)).save(tmp_path / "mask.file", fmt)
    with pytest.raises(DataError) as error:
        build(tmp_path, {"mask": {"type": "mask", "source": "mask_path"}}, "mask_path\nmask.file\n")
    assert str(error.value) == f"table.csv, line 2: feature `mask`: mask.file: {problem}"


def test_a_16_bit_mask_is_read_when_its_values_fit_a_byte_and_refused_when_not(tmp_path):
    small = np.array([[0, 3], [255, 7]], np.uint16)
    Image.fromarray(small).save(tmp_path / "small.png")
    np.testing.assert_array_equal(mask_indices(str(tmp_path / "small.png")), small.astype(np.uint8))
    Image.fromarray(np.array([[0, 300]], np.uint16)).save(tmp_path / "wide.png")
    with pytest.raises(BadImage, match=r"^mode I;16 with values 0-300: a mask holds class indices 0-255$"):
        mask_indices(str(tmp_path / "wide.png"))


@pytest.mark.parametrize("resize", ["stretch", "pad", "crop"])
def test_a_fixed_shape_resizes_the_mask_by_nearest_neighbour_in_its_images_geometry(tf, tmp_path, coins, resize):
    photo, indices = coins
    Image.fromarray(photo).save(tmp_path / "coins.png")
    save_palette(indices, tmp_path / "mask.png")
    info = build(tmp_path, {"image": {"type": "image", "shape": [64, 64, 1], "resize": resize},
                            "mask": {"type": "mask", "source": "mask_path", "image": "image", "pad_value": 5}},
                 "image,mask_path\ncoins.png,mask.png\n")
    batches, records = read_all(info)
    mask = batches[0]["mask"][0, :, :, 0]
    np.testing.assert_array_equal(records[0]["mask"][:, :, 0], mask)
    assert set(np.unique(mask)) <= set(np.unique(indices)) | {5}  # classes only: nothing interpolated
    # (width, height): 384×303 fitted into 64×64 is 64×50 (50.5 rounds to even), covering it 81×64
    scaled = {"stretch": (64, 64), "pad": (64, 50), "crop": (81, 64)}[resize]
    expected = np.asarray(Image.fromarray(indices, "L").resize(scaled, Image.Resampling.NEAREST))
    if resize == "pad":  # 50 rows of mask centred on 64: 7 rows of class 5 above and below, where the image is black
        expected = np.vstack([np.full((7, 64), 5), expected, np.full((7, 64), 5)])
        image = batches[0]["image"][0, :, :, 0]
        assert (image[:7] == 0).all() and (image[-7:] == 0).all() and image[7].any() and image[-8].any()
    elif resize == "crop":
        expected = expected[:, 8:72]
    np.testing.assert_array_equal(mask, expected)


def test_image_size_resizes_masks_by_nearest_neighbour_when_read(tf, tmp_path, coins):
    photo, indices = coins
    Image.fromarray(photo).save(tmp_path / "coins.png")
    save_palette(indices, tmp_path / "big.png")
    Image.fromarray(photo[:100, :150]).save(tmp_path / "part.png")
    save_palette(indices[:100, :150], tmp_path / "small.png")
    info = build(tmp_path, {"image": {"type": "image", "channels": 1},
                            "mask": {"type": "mask", "source": "mask_path", "image": "image"}},
                 "image,mask_path\ncoins.png,big.png\npart.png,small.png\n",
                 input_={"image_size": [50, 70], "image_dtype": "float32"})
    batches, records = read_all(info, batch_size=2)
    assert batches[0]["mask"].shape == (2, 50, 70, 1) and batches[0]["mask"].dtype == np.uint8  # never scaled
    for index, source in enumerate([indices, indices[:100, :150]]):
        expected = tf.image.resize(source[:, :, None], [50, 70], method="nearest").numpy()
        np.testing.assert_array_equal(batches[0]["mask"][index], expected)
        np.testing.assert_array_equal(records[index]["mask"], expected)
        assert set(np.unique(expected)) <= set(np.unique(source))


def test_masks_of_varying_size_are_padded_with_class_0_in_a_batch(tf, tmp_path):
    Image.fromarray(np.full((3, 4), 2, np.uint8), "L").save(tmp_path / "a.png")
    Image.fromarray(np.full((5, 2), 1, np.uint8), "L").save(tmp_path / "b.png")
    batches, records = read_all(build(tmp_path, {"mask": {"type": "mask", "source": "mask_path"}},
                                      "mask_path\na.png\nb.png\n"), batch_size=2)
    assert batches[0]["mask"].shape == (2, 5, 4, 1)
    assert sorted(record["mask"].shape for record in records) == [(3, 4, 1), (5, 2, 1)]
    for index, record in enumerate(records):  # the same order: each record's own mask, then zeros
        height, width, _ = record["mask"].shape
        padded = np.zeros((5, 4, 1), np.uint8)
        padded[:height, :width] = record["mask"]
        np.testing.assert_array_equal(batches[0]["mask"][index], padded)
        assert set(np.unique(record["mask"])) == {2 if width == 4 else 1}


@pytest.mark.parametrize("mask, key, problem", [
    ({"image": "label"}, "image", "expected the name of an image feature (image, free), received 'label'"),
    ({"image": "image", "shape": [10, 10]}, "shape",
     "the mask's shape [10, 10] differs from image `image`'s [32, 32]; omit it (the image's is taken)"),
    ({"image": "image", "resize": "crop"}, "resize",
     "`resize: crop` differs from image `image`'s `pad`; omit it (the image's is taken)"),
    ({"image": "free", "resize": "crop"}, "resize",
     "image `free` keeps each image's own size, so its mask does too; omit `resize: crop`"),
    ({"quality": 80}, "quality", None),
    ({"shape": [8, 8, 3]}, "shape", "expected [height, width] or [height, width, 1], received [8, 8, 3]"),
])
def test_bad_mask_declarations_are_spec_errors_at_their_key(tmp_path, mask, key, problem):
    features = {"image": {"type": "image", "shape": [32, 32, 3], "resize": "pad"}, "label": {"dtype": "int64"},
                "free": {"type": "image"},
                "mask": {"type": "mask", "source": "mask_path", **mask}}
    path = write_spec(tmp_path, {"name": "seg", "source": {"builder": "csv", "path": "t.csv"}, "features": features})
    with pytest.raises(SpecError) as error:
        tb.load_spec(path)
    assert f"features.mask.{key}" in str(error.value) and str(error.value).endswith(problem or "")


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.integers(1, 12), st.integers(0, 255), st.data())
def test_any_index_array_round_trips_through_a_palette_png(height, width, top, data):
    indices = np.array(data.draw(st.lists(st.integers(0, top), min_size=height * width, max_size=height * width)),
                       np.uint8).reshape(height, width)
    buffer = io.BytesIO()
    image = Image.fromarray(indices, "P")
    image.putpalette(list(range(256)) * 3)
    image.save(buffer, "PNG")
    stored = io.BytesIO()
    Image.fromarray(mask_indices(buffer.getvalue()), "L").save(stored, "PNG")
    decoded = numpy_decoding.padded_images(stored.getvalue(), np.array([height, width, 1]), "png", 1)
    np.testing.assert_array_equal(decoded[:, :, 0], indices)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 40), st.integers(1, 40), st.integers(1, 40), st.integers(1, 40))
def test_the_numpy_nearest_resize_picks_the_pixels_tensorflow_picks(tf, in_height, in_width, out_height, out_width):
    indices = (np.arange(in_height * in_width) % 251).astype(np.uint8).reshape(in_height, in_width, 1)
    stored = io.BytesIO()
    Image.fromarray(indices[:, :, 0], "L").save(stored, "PNG")
    ours = numpy_decoding.resized_masks(stored.getvalue(), np.array([in_height, in_width, 1]), [out_height, out_width])
    theirs = tf.image.resize(indices, [out_height, out_width], method="nearest").numpy()
    np.testing.assert_array_equal(ours, theirs)


def test_a_keras_segmentation_model_fits_on_images_and_their_masks(tf, tmp_path, coins):
    """`label: mask` gives (features, mask) pairs that `model.fit` takes as they come: uint8
    [batch, h, w, 1] class indices for a sparse categorical cross-entropy over per-pixel logits."""
    photo, indices = coins
    Image.fromarray(photo).save(tmp_path / "coins.png")
    save_palette(indices, tmp_path / "mask.png")
    spec = {"name": "seg", "source": {"builder": "csv", "path": "table.csv"}, "label": "mask",
            "input": {"image_dtype": "float32", "image_size": [32, 48]},
            "features": {"image": {"type": "image", "channels": 1},
                         "mask": {"type": "mask", "source": "mask_path", "image": "image"}}}
    info = tb.build(write_spec(tmp_path, spec, {"table.csv": "image,mask_path\ncoins.png,mask.png\n"}),
                    output=tmp_path / "out")
    dataset = tb.input_fn(info.path, "train", batch_size=1, shuffle=False)
    features, mask = next(iter(dataset))
    assert features["image"].shape == (1, 32, 48, 1) and mask.shape == (1, 32, 48, 1) and mask.dtype == tf.uint8
    image = tf.keras.Input((32, 48, 1), name="image")
    model = tf.keras.Model({"image": image}, tf.keras.layers.Conv2D(CLASSES, 3, padding="same")(image))
    model.compile("adam", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    losses = model.fit(dataset, epochs=3, verbose=0).history["loss"]
    assert len(losses) == 3 and losses[-1] < losses[0]


def test_under_on_error_skip_a_mask_of_another_size_is_skipped_with_its_reason(tmp_path):
    for index, size in enumerate([(6, 4), (6, 4), (5, 4), (6, 4)]):  # record 2's mask is a column short
        Image.fromarray(np.zeros((4, 6), np.uint8)).save(tmp_path / f"p{index}.png")
        Image.fromarray(np.full(size[::-1], index, np.uint8), "L").save(tmp_path / f"m{index}.png")
    rows = "image,mask_path\n" + "".join(f"p{index}.png,m{index}.png\n" for index in range(4))
    spec = {"name": "seg", "source": {"builder": "csv", "path": "table.csv"}, "on_error": "skip",
            "features": {"image": {"type": "image", "channels": 1},
                         "mask": {"type": "mask", "source": "mask_path", "image": "image"}}}
    info = tb.build(write_spec(tmp_path, spec, {"table.csv": rows}), output=tmp_path / "out", workers=1)
    assert info.skipped == 1
    assert sorted(int(record["mask"].max()) for record in tb.read(info.path, "train")) == [0, 1, 3]
    assert "mask m2.png is 5×4 but its image p2.png (feature `image`) is 6×4" in \
        (Path(info.path) / "skipped.jsonl").read_text()


@pytest.mark.parametrize("builder, table", [("csv", "table.csv"), ("jsonl", "table.jsonl"),
                                            ("parquet", "table.parquet"), ("image_manifest", "table.csv")])
def test_mask_paths_are_read_relative_to_the_table_in_any_table_source(tf, tmp_path, builder, table):
    (tmp_path / "data" / "masks").mkdir(parents=True)
    indices = np.array([[0, 1, 2], [2, 1, 0]], np.uint8)
    Image.fromarray(indices * 40).save(tmp_path / "data" / "photo.png")
    save_palette(indices, tmp_path / "data" / "masks" / "m.png")
    rows = [{"image": "photo.png", "mask_path": "masks/m.png"}]
    path = tmp_path / "data" / table
    if table.endswith(".csv"):
        path.write_text("image,mask_path\nphoto.png,masks/m.png\n")
    elif table.endswith(".jsonl"):
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq
        pq.write_table(pa.Table.from_pylist(rows), path)
    spec = {"name": "seg", "source": {"builder": builder, "path": f"data/{table}"},
            "features": {"image": {"type": "image", "channels": 1},
                         "mask": {"type": "mask", "source": "mask_path", "image": "image"}}}
    info = tb.build(write_spec(tmp_path, spec), output=tmp_path / "out")
    np.testing.assert_array_equal(next(iter(tb.read(info.path, "train")))["mask"][:, :, 0], indices)
