"""`infer` on a table of one box a row (the Object Detection API tutorials' CSV, Roboflow's
"Tensorflow CSV": filename, width, height, class, xmin, ymin, xmax, ymax). On 850d6ac it was one
record a row, an image's boxes spread over both splits; now one record an image
(`group_by: filename`, `columns:` boxes, `shape: [null]` labels), each image in one split, every
box and class as written.
"""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

import tfrecord_builder as tb

from .exports import infer_build
from .helpers import comment, infer_validate_build

skimage_data = pytest.importorskip("skimage.data")

PHOTOS = {"coffee.jpg": skimage_data.coffee, "chelsea.jpg": skimage_data.chelsea,
          "astronaut.jpg": skimage_data.astronaut, "rocket.jpg": skimage_data.rocket, "camera.jpg": skimage_data.camera}
# each photo's boxes: (class, xmin, ymin, xmax, ymax) in pixels; camera.jpg has none (a row with empty corners)
BOXES = {"coffee.jpg": [("cup", 180, 40, 430, 300), ("spoon", 30, 10, 90, 61)],
         "chelsea.jpg": [("cat", 80, 30, 340, 270)],
         "astronaut.jpg": [("person", 140, 20, 340, 260), ("flag", 400, 80, 490, 230), ("person", 0, 0, 10, 10)],
         "rocket.jpg": [("rocket", 270, 60, 350, 390)],
         "camera.jpg": []}
NAMES = ["cat", "cup", "flag", "person", "rocket", "spoon"]


def save(folder: Path, names) -> dict[str, tuple[int, int]]:
    folder.mkdir(parents=True, exist_ok=True)
    sizes = {}
    for name in names:
        pixels = PHOTOS[name]()
        pixels = np.stack([pixels] * 3, axis=-1) if pixels.ndim == 2 else pixels
        Image.fromarray(pixels).save(folder / name, quality=90)
        sizes[name] = pixels.shape[:2]
    return sizes


def write_table(path: Path, sizes: dict[str, tuple[int, int]]) -> None:
    """The rows in the tutorials' order of columns, an image's boxes not next to each other."""
    rows = [(name, box) for index in range(3) for name in sizes for box in BOXES[name][index:index + 1]]
    rows += [(name, None) for name in sizes if not BOXES[name]]
    with open(path, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["filename", "width", "height", "class", "xmin", "ymin", "xmax", "ymax"])
        for name, box in rows:
            height, width = sizes[name]
            writer.writerow([name, width, height, *(box if box else ["", "", "", "", ""])])


def assert_records(records: dict[str, dict], sizes: dict[str, tuple[int, int]]) -> None:
    assert sorted(records) == sorted(sizes)
    for name, record in records.items():
        height, width = sizes[name]
        expected = [[ymin / height, xmin / width, ymax / height, xmax / width] for _, xmin, ymin, xmax, ymax in BOXES[name]]
        np.testing.assert_array_equal(record["objects"], np.array(expected, np.float32).reshape(-1, 4))
        assert record["labels"].tolist() == [NAMES.index(label) for label, *_ in BOXES[name]], name


def test_a_table_of_one_box_a_row_is_grouped_into_a_record_an_image(tmp_path):
    sizes = save(tmp_path / "photos", PHOTOS)
    write_table(tmp_path / "photos" / "train_labels.csv", sizes)

    text, spec, records = infer_validate_build(tmp_path, "photos/train_labels.csv")

    assert spec["source"] == {"builder": "image_manifest", "path": "photos/train_labels.csv", "group_by": "filename"}
    assert comment(text, "group_by:") == ("one record an image: its rows' boxes together (5 images, 8 rows); each image "
                                          "is in one split")
    assert spec["features"] == {
        "image": {"type": "image", "encoding": "jpeg", "shape": [None, None, 3], "source": "filename"},
        "filename": {"dtype": "string"},
        "objects": {"type": "bbox", "columns": ["xmin", "ymin", "xmax", "ymax"], "format": "xyxy", "units": "pixels",
                    "image": "image"},
        "labels": {"type": "class_label", "shape": [None], "source": "class", "names": NAMES},
        "width": {"dtype": "int64"}, "height": {"dtype": "int64"}}
    found = {split: {record["filename"].decode(): record for record in split_records}
             for split, split_records in records.items()}
    assert sum(len(split) for split in found.values()) == len(PHOTOS)  # each image once: in one split
    assert_records({name: record for split in found.values() for name, record in split.items()}, sizes)
    for split in found.values():
        for name, record in split.items():
            assert (int(record["height"]), int(record["width"])) == sizes[name]


def test_roboflow_tensorflow_csv_split_folders_are_a_table_each(tmp_path):
    """train/_annotations.csv, valid/..., test/... beside their photos, every photo 3 channels of
    its own size; width and height columns kept (they differ)."""
    parts = {"train": ["coffee.jpg", "astronaut.jpg", "camera.jpg"], "valid": ["chelsea.jpg"], "test": ["rocket.jpg"]}
    sizes = {}
    for split, names in parts.items():
        part = save(tmp_path / "export" / split, names)
        write_table(tmp_path / "export" / split / "_annotations.csv", part)
        sizes.update(part)

    text, spec, splits, path = infer_build(tmp_path, tmp_path / "export")

    assert spec["name"] == "export"
    assert spec["source"] == {"builder": "image_manifest", "group_by": "filename"}
    assert spec["splits"] == {split: {"path": f"../export/{split}/_annotations.csv"} for split in parts}
    assert comment(text, "splits:") == "the split folders, a table each (images: train 3, valid 1, test 1)"
    assert {split: sorted(records) for split, records in splits.items()} == \
        {split: sorted(names) for split, names in parts.items()}
    assert_records({name: record for split in splits.values() for name, record in split.items()}, sizes)
    assert tb.dry_run(path, workers=1).findings == []


def test_sizes_that_never_change_are_left_out_and_images_elsewhere_keep_the_numbers(tmp_path):
    """Every photo resized to 320x240 (as Roboflow exports them): width and height left out; the
    table alone (images not beside it): the boxes kept as numbers, grouped all the same."""
    sizes = {name: (240, 320) for name in PHOTOS}
    write_table(tmp_path / "labels.csv", sizes)
    spec = yaml.safe_load(text := tb.infer(tmp_path / "labels.csv", tmp_path / "spec.yaml"))
    assert spec["source"] == {"builder": "csv", "path": "labels.csv", "group_by": "filename"}
    assert spec["features"]["objects"] == {"dtype": "float32", "shape": [None, 4],
                                           "columns": ["xmin", "ymin", "xmax", "ymax"]}
    assert "width" not in spec["features"] and "height" not in spec["features"]
    assert "  # width: left out: 320 in every row (add `width: {dtype: int64}` to keep it)" in text.splitlines()
    (tmp_path / "spec.yaml").write_text(text)
    info = tb.build(tmp_path / "spec.yaml", output=tmp_path / "out", workers=1, progress=False)
    records = {record["filename"].decode(): record for split in info.splits for record in tb.read(info.path, split)}
    for name, record in records.items():
        assert record["objects"].tolist() == [[xmin, ymin, xmax, ymax] for _, xmin, ymin, xmax, ymax in BOXES[name]]
