"""Split folders and annotation folders are never taken for classes (on 850d6ac `train/`,
`valid/`, `test/` were three classes, `images/` and `labels/` two): split folders of class
sub-folders (or of flat images) are a source each; sub-folders named like splits beside others,
or an annotation layout infer doesn't read, are one line saying so.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

import tfrecord_builder as tb
from tfrecord_builder.errors import DataError

from .exports import infer_build
from .helpers import comment

skimage_data = pytest.importorskip("skimage.data")

PHOTOS = {"coffee": skimage_data.coffee, "chelsea": skimage_data.chelsea, "astronaut": skimage_data.astronaut,
          "rocket": skimage_data.rocket, "cat": skimage_data.cat}


def save(path: Path, photo: str) -> np.ndarray:
    path.parent.mkdir(parents=True, exist_ok=True)
    pixels = PHOTOS[photo]()
    Image.fromarray(pixels).save(path)
    return np.asarray(Image.open(path))


def test_split_folders_of_class_folders_are_a_source_each(tmp_path):
    layout = {"train": {"cup": ["coffee", "rocket"], "pet": ["chelsea", "cat"]},
              "valid": {"cup": ["astronaut"], "pet": ["cat"]}, "test": {"pet": ["coffee"]}}
    written = {}
    for split, classes in layout.items():
        for label, photos in classes.items():
            for photo in photos:
                written[(split, f"{label}/{photo}.png")] = save(tmp_path / "pets" / split / label / f"{photo}.png", photo)

    text = tb.infer(tmp_path / "pets", tmp_path / "pets.yaml")
    (tmp_path / "pets.yaml").write_text(text)
    spec = yaml.safe_load(text)
    info = tb.build(tmp_path / "pets.yaml", output=tmp_path / "out", workers=1, progress=False)

    assert spec["source"] == {"builder": "image_folder"}
    assert spec["splits"] == {split: {"path": f"pets/{split}"} for split in layout}
    assert comment(text, "splits:") == "the split folders, a source each (images: train 4, valid 2, test 1)"
    assert comment(text, "  label:") == ("names: the 2 sub-folders, sorted: cup, pet; test lacks cup (every split's "
                                         "sub-folders together, sorted)")
    assert info.spec.features["label"].names == ["cup", "pet"]
    for split in layout:
        remaining = {name: pixels for (part, name), pixels in written.items() if part == split}
        for record in tb.read(info.path, split):  # each photo once, in its split, with its class
            name = next(name for name, pixels in remaining.items() if np.array_equal(pixels, record["image"])
                        and ["cup", "pet"].index(name.split("/")[0]) == record["label"])
            del remaining[name]
        assert remaining == {}


def test_split_folders_of_images_alone_are_a_source_each_without_classes(tmp_path):
    for split, photos in {"train": ["coffee", "chelsea"], "test": ["rocket"]}.items():
        for photo in photos:
            save(tmp_path / "photos" / split / f"{photo}.jpg", photo)
    text, spec, splits, path = infer_build(tmp_path, tmp_path / "photos")
    assert spec["splits"] == {"train": {"path": "../photos/train"}, "test": {"path": "../photos/test"}}
    assert "label" not in spec["features"] and spec["features"]["filename"] == {"dtype": "string"}


def test_one_split_folder_is_divided_by_fractions(tmp_path):
    for label, photos in {"cup": ["coffee", "rocket"], "pet": ["chelsea", "cat"]}.items():
        for photo in photos:
            save(tmp_path / "pets" / "train" / label / f"{photo}.png", photo)
    text = tb.infer(tmp_path / "pets", tmp_path / "pets.yaml")
    spec = yaml.safe_load(text)
    assert (spec["name"], spec["source"], spec["splits"]) == (
        "pets", {"builder": "image_folder", "path": "pets/train"}, {"train": 0.8, "test": 0.2})
    assert "# One split folder, train/: divided by the fractions below." in text.splitlines()
    assert spec["features"]["label"] == {"type": "class_label"}


@pytest.mark.parametrize("folders, message", [
    (["train/cat", "test/cat", "extra/cat"],
     "sub-folders test/, train/ are named like splits, beside extra/: expected split folders only (each a source) or "
     "class folders only; move or rename them"),
    (["images", "labels"],
     "sub-folders images/, labels/ are an annotation layout's, not classes, but labels/ holds no YOLO .txt file; "
     "expected a layout infer reads (see docs/infer.md) or class sub-folders"),
    (["JPEGImages", "other"],
     "sub-folders JPEGImages/ are an annotation layout's, not classes, but no Annotations/*.xml (VOC's boxes) nor "
     "SegmentationClass/ masks lie beside JPEGImages/; expected a layout infer reads (see docs/infer.md) or class "
     "sub-folders"),
])
def test_folders_that_are_not_classes_are_one_line(tmp_path, folders, message):
    for folder in folders:
        save(tmp_path / "data" / folder / "a.png", "coffee")
    with pytest.raises(DataError) as error:
        tb.infer(tmp_path / "data", tmp_path / "spec.yaml")
    assert str(error.value) == f"{tmp_path / 'data'}: {message}"
