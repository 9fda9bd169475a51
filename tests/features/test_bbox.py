"""The `bbox` feature type: boxes in every format and unit in, [ymin, xmin, ymax, xmax] fractions
out, through `input_fn`, the generated module, `tb.read` and TensorFlow Datasets, on real photos
(scikit-image's), an EXIF-rotated one among them."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from PIL import Image

import tfrecord_builder as tb
from tfrecord_builder.errors import DataError, SpecError

from conftest import batches_as_numpy, import_module, write_spec

skimage_data = pytest.importorskip("skimage.data")


# ---- helpers ---------------------------------------------------------------------------------------
def photos(folder: Path) -> dict[str, tuple[int, int]]:
    """astronaut, coffee and chelsea as JPEGs, and chelsea stored on its side with EXIF orientation 6
    (shown upright, turned back by a quarter turn): {file name: (height, width) as shown}."""
    folder.mkdir(parents=True, exist_ok=True)
    sizes = {}
    for name in ("astronaut", "coffee", "chelsea"):
        pixels = getattr(skimage_data, name)()
        Image.fromarray(pixels).save(folder / f"{name}.jpg", quality=95)
        sizes[f"{name}.jpg"] = pixels.shape[:2]
    upright = skimage_data.chelsea()
    exif = Image.Exif()
    exif[0x0112] = 6  # shown turned 90° clockwise: stored turned 90° counter-clockwise
    Image.fromarray(np.rot90(upright, 1)).save(folder / "chelsea_turned.jpg", quality=95, exif=exif)
    sizes["chelsea_turned.jpg"] = upright.shape[:2]
    return sizes


def pixel_boxes(height: int, width: int) -> list[list[float]]:
    """Two xyxy pixel boxes inside an image: an exact quarter and a thin strip."""
    return [[width / 4, height / 4, width / 2, height / 2], [0, height - 10, width, height]]


def convert(box_xyxy: list[float], fmt: str) -> list[float]:
    xmin, ymin, xmax, ymax = box_xyxy
    return {"xyxy": [xmin, ymin, xmax, ymax], "yxyx": [ymin, xmin, ymax, xmax],
            "xywh": [xmin, ymin, xmax - xmin, ymax - ymin],
            "cxcywh": [(xmin + xmax) / 2, (ymin + ymax) / 2, xmax - xmin, ymax - ymin]}[fmt]


def build(folder: Path, rows: list[dict], features: dict, **spec) -> tb.DatasetInfo:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "boxes.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    document = {"name": "boxes", "source": {"builder": "jsonl", "path": "boxes.jsonl"},
                "splits": {"train": 1.0}, "features": features, "output": {"shuffle": False, "shards": 1}, **spec}
    return tb.build(write_spec(folder, document), output=folder / "out")


def read_module_and_library(info, batch_size=8):
    module = import_module(Path(info.path) / f"{info.name}_input.py")
    datasets = [module.input_fn("train", batch_size=batch_size, shuffle=False),
                tb.input_fn(info.path, "train", batch_size=batch_size, shuffle=False)]
    first, second = (batches_as_numpy(dataset) for dataset in datasets)
    assert json.dumps(first, default=str) == json.dumps(second, default=str)
    return first


def feature_of(folder: Path, declared: dict, others: dict | None = None):
    path = write_spec(folder, {"name": "b", "source": {"builder": "jsonl", "path": "x.jsonl"},
                               "features": {**(others or {}), "objects": declared}})
    return tb.load_spec(path).features["objects"]


def encoded(feature, rows, images=None, base_dir=None):
    """The feature's boxes per row (float32 [n, 4]) as it encodes a batch of `rows`."""
    from tfrecord_builder.features.gathered import GatheredColumns

    values = rows if images is None else GatheredColumns(["bbox", "path"], [rows, images])
    out = feature.encode(values, tb.EncodeContext(lambda row: f"boxes.jsonl, line {row + 1}", base_dir))
    flat = out[feature.record_key]
    values = np.asarray(flat.values, np.float32).reshape(-1, 4)
    return np.split(values, np.cumsum(flat.counts // 4)[:-1])


# ---- conversion --------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["yxyx", "xyxy", "xywh", "cxcywh"])
def test_every_format_in_pixels_becomes_the_same_fractions_on_real_photos(tmp_path, fmt):
    sizes = photos(tmp_path / "images")
    feature = feature_of(tmp_path, {"type": "bbox", "source": "bbox", "format": fmt, "units": "pixels",
                                    "image": "image"}, {"image": {"type": "image", "source": "path"}})
    names = sorted(sizes)
    rows = [[convert(box, fmt) for box in pixel_boxes(*sizes[name])] for name in names]
    got = encoded(feature, rows, [f"images/{name}" for name in names], str(tmp_path))
    for name, boxes in zip(names, got):
        height, width = sizes[name]
        expected = np.array([[0.25, 0.25, 0.5, 0.5], [(height - 10) / height, 0, 1, 1]], np.float32)
        np.testing.assert_array_equal(boxes, expected, err_msg=name)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5000), st.integers(1, 5000), st.sampled_from(["yxyx", "xyxy", "xywh", "cxcywh"]),
       st.lists(st.tuples(*[st.floats(0, 1)] * 4), min_size=1, max_size=5), st.booleans())
def test_random_boxes_round_trip_to_their_format_within_float32_rounding(height, width, fmt, corners, pixels):
    """Random boxes inside a random image size, in any format and unit, stored as fractions and
    turned back into the source's format: equal within float32's rounding of a fraction."""
    from tfrecord_builder.features.bbox import BBoxFeature

    feature = BBoxFeature(name="objects", format=fmt, units="pixels" if pixels else "fraction",
                          image="image" if pixels else None, image_source="path" if pixels else None,
                          min_size=0.0)
    scale = np.array([width, height, width, height], np.float64) if pixels else np.ones(4)
    boxes = []
    for a, b, c, d in corners:
        xmin, xmax = sorted((a, c))
        ymin, ymax = sorted((b, d))
        if xmax - xmin < 1e-3 or ymax - ymin < 1e-3:
            continue
        boxes.append(convert(list(np.array([xmin, ymin, xmax, ymax]) * scale), fmt))
    image = np.zeros((height, width), np.uint8) if pixels else None
    stored = feature.boxes(boxes, image, tb.EncodeContext(lambda row: "row"), 0)
    assert stored.shape == (len(boxes), 4) and stored.dtype == np.float32
    back = [convert([xmin * scale[0], ymin * scale[1], xmax * scale[0], ymax * scale[1]], fmt)
            for ymin, xmin, ymax, xmax in stored.astype(np.float64)]
    size = max(scale)
    np.testing.assert_allclose(np.reshape(back, (-1, 4)), np.reshape(boxes, (-1, 4)), rtol=0, atol=size * 2**-22)


def test_pixel_boxes_on_an_exif_turned_photo_are_in_the_frame_it_is_shown_in(tf, tmp_path):
    """chelsea_turned.jpg is stored 300 wide and 451 high, shown 451 wide and 300 high: a box drawn
    on the cat's face as shown lands on the cat's face of the upright image that is stored."""
    photos(tmp_path / "images")
    face = [140, 40, 290, 160]  # xyxy, pixels, on chelsea as shown (451 x 300)
    rows = [{"path": f"images/{name}", "bbox": [face]} for name in ("chelsea.jpg", "chelsea_turned.jpg")]
    info = build(tmp_path, rows, {"image": {"type": "image", "source": "path", "encoding": "png"},
                                  "objects": {"type": "bbox", "source": "bbox", "format": "xyxy", "units": "pixels",
                                              "image": "image"}})
    batch, = read_module_and_library(info)
    expected = [[40 / 300, 140 / 451, 160 / 300, 290 / 451]]
    np.testing.assert_array_equal(np.array(batch["objects"], np.float32), np.array([expected] * 2, np.float32))
    upright, turned = batch["image"]
    assert turned.shape == upright.shape == (300, 451, 3)
    face_pixels = (slice(40, 160), slice(140, 290))
    assert np.abs(turned[face_pixels].astype(int) - upright[face_pixels].astype(int)).mean() < 4


# ---- errors, clip and min_size ---------------------------------------------------------------------------
def test_bad_boxes_are_refused_in_one_line_naming_the_row_the_box_and_the_image(tmp_path):
    sizes = photos(tmp_path / "images")
    assert sizes["coffee.jpg"] == (400, 600)
    pixels = feature_of(tmp_path, {"type": "bbox", "format": "xywh", "units": "pixels", "image": "image"},
                        {"image": {"type": "image", "source": "path"}})
    coffee = ["images/coffee.jpg"]
    cases = {
        "outside": ([[[10, 20, 30, 40], [590, 0, 20, 10]]], coffee,
                    "boxes.jsonl, line 1: feature `objects`: box 1 [590, 0, 20, 10] (xywh, pixels) lies outside the "
                    f"image {tmp_path}/images/coffee.jpg (600 x 400 pixels, width x height); set `clip: true` to "
                    "clip it"),
        "empty": ([[[10, 20, 0, 40]]], coffee,
                  "boxes.jsonl, line 1: feature `objects`: box 0 [10, 20, 0, 40] (xywh) is empty (zero width or "
                  "height); set `min_size: 0` to drop empty boxes"),
        "negative": ([[[10, 20, -5, 40]]], coffee,
                     "boxes.jsonl, line 1: feature `objects`: box 0 [10, 20, -5, 40] (xywh) is upside down; "
                     "expected a width >= 0"),
        "nan": ([[[10, float("nan"), 5, 40]]], coffee,
                "boxes.jsonl, line 1: feature `objects`: box 0 [10, nan, 5, 40]: expected 4 finite numbers "
                "[xmin, ymin, width, height]"),
        "three": ([[[10, 20, 5]]], coffee,
                  "boxes.jsonl, line 1: feature `objects`: expected a list of boxes, each 4 numbers "
                  "[xmin, ymin, width, height], received [[10, 20, 5]]"),
        "no image": ([[[10, 20, 5, 5]]], ["images/missing.jpg"],
                     f"boxes.jsonl, line 1: feature `objects`: image {tmp_path}/images/missing.jpg: file not found"),
    }
    for name, (rows, images, message) in cases.items():
        with pytest.raises(DataError) as raised:
            encoded(pixels, rows, images, str(tmp_path))
        assert str(raised.value) == message, name
    fractions = feature_of(tmp_path, {"type": "bbox", "format": "xyxy"})
    with pytest.raises(DataError) as raised:
        encoded(fractions, [[], [[0.5, 0.5, 0.4, 0.9]]])
    assert str(raised.value) == ("boxes.jsonl, line 2: feature `objects`: box 0 [0.5, 0.5, 0.4, 0.9] (xyxy) is "
                                 "upside down; expected xmin <= xmax and ymin <= ymax")
    with pytest.raises(DataError) as raised:
        encoded(fractions, [[[0.5, 0.5, 1.25, 0.9]]])
    assert str(raised.value) == ("boxes.jsonl, line 1: feature `objects`: box 0 [0.5, 0.5, 1.25, 0.9] (xyxy, fraction) "
                                 "lies outside the image ([0, 1] in fractions); set `clip: true` to clip it")


def test_pixel_boxes_without_an_image_and_an_unknown_image_are_spec_errors(tmp_path):
    with pytest.raises(SpecError, match=r"objects\.units: pixel boxes need `image:`, the image feature whose size "
                                        r"they are in \(the spec has none\)$"):
        feature_of(tmp_path, {"type": "bbox", "units": "pixels"})
    with pytest.raises(SpecError, match=r"objects\.units: pixel boxes need `image:`, the image feature whose size "
                                        r"they are in \(photo, thumb\)$"):
        feature_of(tmp_path, {"type": "bbox", "units": "pixels"},
                   {"photo": {"type": "image", "source": "path"}, "thumb": {"type": "image", "source": "small"}})
    with pytest.raises(SpecError, match=r"objects\.image: expected the name of an image feature of this spec "
                                        r"\(photo\), received 'image'$"):
        feature_of(tmp_path, {"type": "bbox", "units": "pixels", "image": "image"},
                   {"photo": {"type": "image", "source": "path"}})


@pytest.mark.filterwarnings("ignore::tfrecord_builder.BuildWarning")  # asserted below
def test_clipped_and_dropped_boxes_are_counted_in_the_builds_notices(tmp_path):
    rows = [{"bbox": [[-0.1, 0.2, 0.5, 0.6], [0.1, 0.1, 0.1001, 0.3]]},
            {"bbox": [[0.2, 0.2, 0.2, 0.3], [0.5, 0.5, 1.5, 0.7], [1.2, 0.1, 1.5, 0.2]]}]
    info = build(tmp_path, rows, {"objects": {"type": "bbox", "source": "bbox", "format": "xyxy", "clip": True, "min_size": 0.01}})
    assert sorted(info.warnings) == [
        "feature `objects`: 1 object outside the image dropped (empty once clipped)",
        "feature `objects`: 2 objects smaller than `min_size: 0.01` dropped",
        "feature `objects`: 3 objects clipped to the image (`clip: true`)",
    ]
    first, second = (record["objects"] for record in tb.read(info.path, "train"))
    np.testing.assert_array_equal(first, np.array([[0.2, 0, 0.6, 0.5]], np.float32))
    np.testing.assert_array_equal(second, np.array([[0.5, 0.5, 0.7, 1]], np.float32))
    statistics = info.statistics["train"]["objects"]  # boxes per record under `length`
    assert statistics["length"] == {"min": 1, "max": 1, "mean": 1.0, "std": 0.0}
    assert (statistics["num_values"], statistics["min"], statistics["max"]) == (8, 0.0, 1.0)


# ---- layouts and readers ------------------------------------------------------------------------------
FACES = {  # xywh pixel boxes on each photo as shown, made for them: a face (or the cup), and a corner
    "astronaut.jpg": [[170, 30, 120, 150], [0, 0, 512, 512]],
    "coffee.jpg": [[130, 20, 320, 260]],
    "chelsea.jpg": [[140, 40, 150, 120], [0, 290, 10, 10]],
    "chelsea_turned.jpg": [[140, 40, 150, 120]],
}


def expected_fractions(sizes, name):
    height, width = sizes[name]
    return np.array([[y / height, x / width, (y + h) / height, (x + w) / width] for x, y, w, h in FACES[name]],
                    np.float32).reshape(-1, 4)


def photo_rows(tmp_path):
    sizes = photos(tmp_path / "images")
    rows = [{"path": f"images/{name}", "name": name, "bbox": boxes} for name, boxes in FACES.items()]
    rows.append({"path": "images/coffee.jpg", "name": "nothing", "bbox": []})  # an image without objects
    sizes["nothing"] = sizes["coffee.jpg"]
    return sizes, rows


@pytest.mark.parametrize("layout", ["tfds", "object_detection"])
def test_both_layouts_read_back_the_same_boxes_through_every_reader(tf, tmp_path, layout):
    tfds = pytest.importorskip("tensorflow_datasets")
    sizes, rows = photo_rows(tmp_path)
    info = build(tmp_path, rows, {
        "image": {"type": "image", "source": "path", "encoding": "jpeg",
                  **({"key": "image/encoded"} if layout == "object_detection" else {})},
        "name": {"dtype": "string"},
        "objects": {"type": "bbox", "source": "bbox", "format": "xywh", "units": "pixels", "image": "image",
                    "layout": layout}})
    names = [row["name"] for row in rows]
    expected = [expected_fractions(sizes, name) if name != "nothing" else np.zeros((0, 4), np.float32)
                for name in names]
    # tb.read: float32 [n, 4] per record
    read = list(tb.read(info.path, "train"))
    assert [record["name"].decode() for record in read] == names
    for record, boxes in zip(read, expected):
        assert record["objects"].dtype == np.float32 and record["objects"].shape == boxes.shape
        np.testing.assert_array_equal(record["objects"], boxes)
    # input_fn and the generated module: a ragged [batch, None, 4], as fractions of the batch's images,
    # which are padded at the bottom and right to the largest (512 x 600): each image's share of it
    batch, = read_module_and_library(info)
    assert batch["image"].shape == (len(rows), 512, 600, 3)
    assert [len(boxes) for boxes in batch["objects"]] == [len(boxes) for boxes in expected]
    for got, boxes, name in zip(batch["objects"], expected, names):
        share = np.array(sizes[name], np.float32) / np.array([512, 600], np.float32)
        np.testing.assert_array_equal(np.array(got, np.float32).reshape(-1, 4), boxes * np.tile(share, 2))
    element = tb.input_fn(info.path, "train", batch_size=8, shuffle=False).element_spec["objects"]
    assert isinstance(element, tf.RaggedTensorSpec) and element.shape.as_list() == [None, None, 4]
    # stored keys: the layout's
    record = next(iter(tf.data.TFRecordDataset([str(Path(info.path) / shard["file"])
                                                for shard in info.splits["train"].shards])))
    keys = set(tf.train.Example.FromString(record.numpy()).features.feature)
    sides = ["image/object/bbox/ymin", "image/object/bbox/xmin", "image/object/bbox/ymax", "image/object/bbox/xmax"]
    assert keys == ({"image", "image/shape", "name", "objects"} if layout == "tfds" else
                    {"image/encoded", "image/encoded/shape", "name", *sides})
    # TensorFlow Datasets: a Sequence of BBoxFeature (tfds), or the four lists of floats
    builder = tfds.builder_from_directory(info.path)
    if layout == "tfds":
        feature = builder.info.features["objects"]
        assert isinstance(feature, tfds.features.Sequence)
        assert isinstance(feature.feature, tfds.features.BBoxFeature)
    examples = list(tfds.as_numpy(builder.as_dataset(split="train", shuffle_files=False)))
    for example, boxes in zip(examples, expected):
        if layout == "tfds":
            got = example["objects"]
        else:
            bbox = example["image"]["object"]["bbox"]
            got = np.stack([bbox["ymin"], bbox["xmin"], bbox["ymax"], bbox["xmax"]], axis=1)
        np.testing.assert_array_equal(np.asarray(got, np.float32).reshape(-1, 4), boxes)


def test_draw_bounding_boxes_draws_what_input_fn_gives_at_the_right_pixels(tf, tmp_path):
    """A 40 x 60 black PNG with one box from pixel (x 10, y 5) to (x 29, y 24): input_fn gives the
    fractions, and tf.image.draw_bounding_boxes draws their edges where its kernel puts them."""
    folder = tmp_path / "images"
    folder.mkdir()
    Image.fromarray(np.zeros((40, 60, 3), np.uint8)).save(folder / "black.png")
    info = build(tmp_path, [{"path": "images/black.png", "bbox": [[10, 5, 29, 24]]}], {
        "image": {"type": "image", "source": "path", "encoding": "png"},
        "objects": {"type": "bbox", "source": "bbox", "format": "xyxy", "units": "pixels", "image": "image"}})
    batch = next(iter(tb.input_fn(info.path, "train", batch_size=1, shuffle=False)))
    images = tf.cast(batch["image"], tf.float32)
    drawn = tf.image.draw_bounding_boxes(images, batch["objects"].to_tensor(), [[1.0, 0.0, 0.0]])[0, :, :, 0]
    rows, columns = np.nonzero(drawn.numpy())
    # the kernel puts a fraction f at pixel int(f * (size - 1)): y 5/40 -> 4, 24/40 -> 23; x 10/60 -> 9, 29/60 -> 28
    assert (rows.min(), rows.max(), columns.min(), columns.max()) == (4, 23, 9, 28)
    assert np.array_equal(batch["objects"].to_tensor().numpy(), np.array([[[5 / 40, 10 / 60, 24 / 40, 29 / 60]]],
                                                                             np.float32))


@pytest.mark.filterwarnings("ignore::tfrecord_builder.BuildWarning")  # the crop's: asserted below
@pytest.mark.parametrize("resize", ["stretch", "pad", "crop"])
def test_boxes_follow_an_image_stored_at_a_fixed_shape_by_stretch_pad_or_crop(tf, tmp_path, resize):
    """coffee (600 x 400) stored at 100 x 100: stretched, the fractions stay; padded, it is scaled to
    100 x 67 with 16 rows of black above; cropped, scaled to 150 x 100 with 25 columns cut at each side.
    A box on the cup moves with it, one half outside the crop is cut to it, one wholly outside dropped."""
    photos(tmp_path / "images")
    boxes = [[150, 100, 450, 300], [0, 0, 60, 400], [0, 0, 10, 10]]  # xyxy pixels: the cup, a left strip, a corner
    info = build(tmp_path, [{"path": "images/coffee.jpg", "bbox": boxes}], {
        "image": {"type": "image", "source": "path", "encoding": "png", "shape": [100, 100, 3], "resize": resize},
        "objects": {"type": "bbox", "source": "bbox", "format": "xyxy", "units": "pixels", "image": "image"}})
    stored, = (record["objects"] for record in tb.read(info.path, "train"))
    if resize == "stretch":
        expected = [[0.25, 0.25, 0.75, 0.75], [0, 0, 1, 0.1], [0, 0, 0.025, 1 / 60]]
    elif resize == "pad":  # y: 16/100 + f * 67/100; x as it is
        expected = [[(16 + 0.25 * 67) / 100, 0.25, (16 + 0.75 * 67) / 100, 0.75], [0.16, 0, 0.83, 0.1],
                    [0.16, 0, (16 + 0.025 * 67) / 100, 1 / 60]]
    else:  # x: f * 150/100 - 25/100; y as it is; the strip (x < 0.1 * 150 - 25 < 0) and the corner dropped
        expected = [[0.25, 0.25 * 1.5 - 0.25, 0.75, 0.75 * 1.5 - 0.25]]
    np.testing.assert_allclose(stored, np.array(expected, np.float32).reshape(-1, 4), rtol=0, atol=1e-6)
    if resize == "crop":
        assert info.warnings == ["feature `objects`: 2 objects outside the part `resize: crop` keeps of image "
                                 "`image` dropped"]
    # the image as stored shows the cup where the box says: its pixels match the source's cup, resized
    image = next(iter(tb.input_fn(info.path, "train", batch_size=1, shuffle=False)))["image"][0].numpy()
    ymin, xmin, ymax, xmax = (np.array(stored[0]) * 100).round().astype(int)
    source = np.asarray(Image.open(tmp_path / "images/coffee.jpg").resize((xmax - xmin, ymax - ymin),
                                                                         box=(150, 100, 450, 300)), int)
    assert np.abs(image[ymin:ymax, xmin:xmax].astype(int) - source).mean() < 12


def test_boxes_beside_one_image_belong_to_it_and_beside_several_must_name_theirs(tmp_path):
    cropped = {"type": "image", "source": "path", "shape": [64, 64, 3], "resize": "crop"}
    for units in ("pixels", "fraction"):
        feature = feature_of(tmp_path, {"type": "bbox", "units": units}, {"image": cropped})
        assert (feature.image, feature.image_source, feature.image_fit) == ("image", "path", (64, 64, "crop"))
    with pytest.raises(SpecError, match=r"objects: image `image` is resized with `resize: crop`, which moves what it "
                                        r"shows: name it with `image: image` so the boxes follow$"):
        feature_of(tmp_path, {"type": "bbox"}, {"image": cropped, "thumb": {"type": "image", "source": "small"}})


def test_input_image_size_stretches_images_and_leaves_the_fractions_as_stored(tf, tmp_path):
    sizes, rows = photo_rows(tmp_path)
    info = build(tmp_path, rows, {
        "image": {"type": "image", "source": "path", "encoding": "jpeg"},
        "objects": {"type": "bbox", "source": "bbox", "format": "xywh", "units": "pixels", "image": "image"}},
        input={"image_size": [64, 96]})
    batch, = read_module_and_library(info)
    assert batch["image"].shape == (len(rows), 64, 96, 3)
    for got, row in zip(batch["objects"], rows):
        expected = expected_fractions(sizes, row["name"]) if row["bbox"] else np.zeros((0, 4), np.float32)
        np.testing.assert_array_equal(np.array(got, np.float32).reshape(-1, 4), expected)


def test_four_columns_give_one_box_a_row(tf, tmp_path):
    """A CSV with one box per row in columns xmin, ymin, xmax, ymax (pixels), an empty row without one."""
    photos(tmp_path / "images")
    (tmp_path / "boxes.csv").write_text("path,x0,y0,x1,y1\nimages/coffee.jpg,150,100,450,300\n"
                                        "images/chelsea.jpg,,,,\nimages/chelsea_turned.jpg,0,0,451,300\n")
    document = {"name": "boxes", "source": {"builder": "csv", "path": "boxes.csv"}, "splits": {"train": 1.0},
                "output": {"shuffle": False, "shards": 1},
                "features": {"image": {"type": "image", "source": "path", "encoding": "jpeg"},
                             "objects": {"type": "bbox", "columns": ["x0", "y0", "x1", "y1"], "format": "xyxy",
                                         "units": "pixels", "image": "image"}}}
    info = tb.build(write_spec(tmp_path, document), output=tmp_path / "out")
    got = [record["objects"] for record in tb.read(info.path, "train")]
    assert [boxes.tolist() for boxes in got] == [[[0.25, 0.25, 0.75, 0.75]], [], [[0, 0, 1, 1]]]
    with pytest.raises(SpecError, match=r"objects\.columns: expected the four columns of a box in `format: xyxy`'s "
                                        r"order, e.g. \[xmin, ymin, xmax, ymax\], received \['x0', 'y0', 'x1'\]$"):
        feature_of(tmp_path, {"type": "bbox", "columns": ["x0", "y0", "x1"], "format": "xyxy"})


def test_a_record_with_a_bad_box_is_skipped_with_its_reason_under_on_error_skip(tmp_path):
    sizes = photos(tmp_path / "images")
    rows = [{"path": "images/coffee.jpg", "bbox": [[10, 10, 100, 100]]},
            {"path": "images/astronaut.jpg", "bbox": [[10, 10, 600, 100]]},
            {"path": "images/astronaut.jpg", "bbox": []}]
    info = build(tmp_path, rows, {
        "image": {"type": "image", "source": "path", "encoding": "jpeg"},
        "objects": {"type": "bbox", "source": "bbox", "format": "xywh", "units": "pixels", "image": "image",
                    "layout": "object_detection"}}, on_error="skip")
    skipped = [json.loads(line) for line in (Path(info.path) / "skipped.jsonl").read_text().splitlines()]
    assert skipped == [{"record": "boxes.jsonl, line 2", "reason": (
        "boxes.jsonl, line 2: feature `objects`: box 0 [10, 10, 600, 100] (xywh, pixels) lies outside the image "
        f"{tmp_path}/images/astronaut.jpg (512 x 512 pixels, width x height); set `clip: true` to clip it")}]
    first, second = (record["objects"] for record in tb.read(info.path, "train"))
    np.testing.assert_array_equal(first, np.array([[10 / 400, 10 / 600, 110 / 400, 110 / 600]], np.float32))
    assert second.shape == (0, 4)
    assert sizes["coffee.jpg"] == (400, 600)


def test_tfds_refuses_in_one_line_an_image_key_that_the_object_detection_boxes_nest_under(tmp_path):
    tfds = pytest.importorskip("tensorflow_datasets")
    photos(tmp_path / "images")
    info = build(tmp_path, [{"path": "images/coffee.jpg", "bbox": [[0.1, 0.1, 0.2, 0.2]]}], {
        "image": {"type": "image", "source": "path", "encoding": "jpeg"},
        "objects": {"type": "bbox", "source": "bbox", "layout": "object_detection"}})
    with pytest.raises(Exception, match="stores a feature under the key 'image' and another under "
                                        "'image/object/bbox/ymin', which TensorFlow Datasets nests inside it"):
        tfds.builder_from_directory(info.path).as_dataset(split="train")
    assert list(tb.read(info.path, "train"))[0]["objects"].shape == (1, 4)  # our readers read it


def test_a_row_of_a_group_gives_one_box(tmp_path):
    """Rows grouped into one record (source.group_by) hand each row to the feature with its first
    dimension taken off (features/grouped.py): shape [4], one box a row, from a box or four columns."""
    import dataclasses

    from tfrecord_builder.features.gathered import GatheredColumns

    photos(tmp_path / "images")
    for declared, rows in (({"source": "bbox"}, [[150, 100, 450, 300], "[0, 0, 600, 400]", None]),
                           ({"columns": ["x0", "y0", "x1", "y1"]}, None)):
        feature = feature_of(tmp_path, {"type": "bbox", "format": "xyxy", "units": "pixels", "image": "image",
                                        **declared}, {"image": {"type": "image", "source": "path"}})
        assert feature.shape == [None, 4] and feature.linked_columns == ["path"]
        row = dataclasses.replace(feature, shape=[4])
        images = ["images/coffee.jpg"] * 3
        if rows is None:
            cells = [[150, 0, None], [100, 0, None], [450, 600, None], [300, 400, None]]
            values = GatheredColumns(["x0", "y0", "x1", "y1", "path"], [*cells, images])
        else:
            values = GatheredColumns(["bbox", "path"], [rows, images])
        out = row.encode(values, tb.EncodeContext(lambda index: f"boxes.csv, line {index + 2}", str(tmp_path)))
        assert out["objects"].counts.tolist() == [4, 4, 0]
        assert np.asarray(out["objects"].values).tolist() == [0.25, 0.25, 0.75, 0.75, 0, 0, 1, 1]


# ---- a batch at once, box by box where one isn't fine --------------------------------------------------
SIZES = [(480, 640), (100, 100), (3000, 20)]  # (height, width) of the images the pixel boxes are on
HOSTILE = [[-5.0, 10.0, 20.0, 30.0], [10.0, 10.0, 10.0, 30.0], [30.0, 20.0, 10.0, 40.0], [float("nan"), 1.0, 2.0, 3.0],
           [0.0, 0.0, 1e9, 1e9], [2.0, 3.0, 2.5, 3.25], [float("inf"), 0.0, 1.0, 1.0]]


def box_in(data, size, pixels, fmt):
    """A box drawn inside an image of `size`, or a hostile one (outside, empty, upside down, not
    finite, tiny), written in `fmt` and its units."""
    if data.draw(st.booleans()):
        box = data.draw(st.sampled_from(HOSTILE))
        return box if pixels else [value / 1000 for value in box]
    height, width = size if pixels else (1.0, 1.0)
    xmin, xmax = sorted(data.draw(st.floats(0, width)) for _ in range(2))
    ymin, ymax = sorted(data.draw(st.floats(0, height)) for _ in range(2))
    return convert([xmin, ymin, xmax, ymax], fmt)


@settings(max_examples=150, deadline=None)
@given(st.data(), st.sampled_from(["yxyx", "xyxy", "xywh", "cxcywh"]), st.booleans(), st.booleans(),
       st.sampled_from([None, 0.0, 2.0]), st.sampled_from([None, (64, 64, "pad"), (64, 32, "crop"), (50, 80, "stretch")]),
       st.sampled_from(["tfds", "object_detection"]))
def test_a_batch_encodes_as_its_rows_box_by_box(data, fmt, pixels, clip, min_size, fit, layout):
    """A batch's boxes, converted at once where every box of a row is fine, are the values, counts,
    kept objects, notices and error of its rows checked one by one, box by box (`box_by_box`)."""
    from tfrecord_builder.features.bbox import BBoxFeature
    from tfrecord_builder.features.gathered import GatheredColumns

    feature = BBoxFeature(name="objects", format=fmt, units="pixels" if pixels else "fraction", image="image",
                          image_source="path", clip=clip, min_size=min_size if pixels or not min_size else 0.002,
                          image_fit=fit, layout=layout)
    sizes = [data.draw(st.sampled_from(SIZES)) for _ in range(data.draw(st.integers(1, 6)))]
    rows = [[box_in(data, size, pixels, fmt) for _ in range(data.draw(st.integers(0, 4)))] for size in sizes]
    images = [np.zeros(size, np.uint8) for size in sizes]
    if data.draw(st.booleans()):  # a row the source gives wrong: no image to measure by, or 3 numbers a box
        row = data.draw(st.integers(0, len(rows) - 1))
        if data.draw(st.booleans()):
            rows[row], images[row] = rows[row] or [[1.0, 2.0, 3.0, 4.0]], None
        else:
            rows[row] = [[1.0, 2.0, 3.0]]

    def one_by_one():
        context = tb.EncodeContext(lambda row: f"line {row + 1}")
        boxes, kept = [], []
        for row, (value, image) in enumerate(zip(rows, images)):
            with pytest.MonkeyPatch.context() as patch:  # every box checked on its own
                patch.setattr(BBoxFeature, "_all_fine", lambda self, given, size: None)
                found, which = feature.kept_boxes(value, image, context, row)
            boxes.append(found)
            kept.append(which)
        return (np.concatenate(boxes), [len(found) for found in boxes], np.concatenate(kept),
                context.notices.counts)

    try:
        expected = one_by_one()
    except DataError as error:
        with pytest.raises(DataError) as raised:
            feature.encode(GatheredColumns(["bbox", "path"], [rows, images]), tb.EncodeContext(lambda row: f"line {row + 1}"))
        assert str(raised.value) == str(error)
        return
    context = tb.EncodeContext(lambda row: f"line {row + 1}")
    out = feature.encode(GatheredColumns(["bbox", "path"], [rows, images]), context)
    sides = [out[key] for key in feature.record_keys]
    np.testing.assert_array_equal(np.stack([side.values for side in sides], axis=1).reshape(-1, 4), expected[0])
    assert (sides[0].counts // (4 if layout == "tfds" else 1)).tolist() == expected[1]  # (tfds: 4 values a box)
    if feature.drops_objects:
        assert sides[0].kept_objects.given.tolist() == [len(row) for row in rows]
        np.testing.assert_array_equal(sides[0].kept_objects.kept, expected[2])
    assert context.notices.counts == expected[3]
