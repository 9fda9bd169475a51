"""`infer` on the layouts annotation tools export: each gives a spec that validates, builds as
written and passes a dry run, with every photo in its split and every box and class equal to
what the tool wrote. (On 850d6ac each of these was an image folder whose classes were the split
folders, or a YOLO folder without class names.)
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

import tfrecord_builder as tb
from tfrecord_builder.errors import DataError

from .exports import (NAMES, SPLITS, assert_records, darknet, expected, infer_build, roboflow_coco,
                      roboflow_voc, roboflow_yolo)
from .helpers import comment
from .photos import CATEGORIES, PHOTOS, coco_document, save_photos


def assert_dry_run_passes(spec: Path) -> None:
    """`build --dry-run` finds nothing to warn of in infer's own spec (it exits 1 on a finding)."""
    assert tb.dry_run(spec, workers=1).findings == []


def test_roboflow_coco_gives_a_split_a_folder_without_the_dataset_category(tmp_path):
    sizes = roboflow_coco(tmp_path / "export")

    text, spec, splits, path = infer_build(tmp_path, tmp_path / "export")

    assert spec["source"] == {"builder": "coco"}
    assert spec["splits"] == {split: {"path": f"../export/{split}/_annotations.coco.json",
                                      "options": {"images": f"../export/{split}"}} for split in SPLITS}
    assert spec["features"]["labels"] == {"type": "class_label", "shape": [None], "source": "label", "names": NAMES}
    assert comment(text, "labels:") == (
        "one a box; 4 classes: the categories sorted by id, but for `photos`: guessed: the supercategory of every "
        "other, without objects (Roboflow's dataset name), left out of the names")
    # every iscrowd is 0: left out, said in a comment (a feature that never changes stores nothing)
    assert "iscrowd" not in spec["features"]
    assert "  # iscrowd: left out: 0 for every one of the 5 objects (add `iscrowd: {dtype: int64, shape: [null]}` " \
           "to keep it)" in text.splitlines()
    assert text.splitlines()[0] == ("# Written by `tfrecord-builder infer` from export/: a COCO instances JSON, "
                                    "4 images (1 without objects: records with no boxes), 5 objects, 4 classes.")
    assert_records(splits, expected(sizes))
    assert_dry_run_passes(path)


def test_roboflow_voc_gives_a_split_a_folder_and_leaves_out_flags_that_never_change(tmp_path):
    sizes, written = roboflow_voc(tmp_path / "export")

    text, spec, splits, path = infer_build(tmp_path, tmp_path / "export")

    assert spec["source"] == {"builder": "voc"}
    assert spec["splits"] == {split: {"path": f"../export/{split}"} for split in SPLITS}
    assert sorted(spec["features"]) == ["filename", "image", "labels", "objects"]
    for flag in ("difficult", "truncated", "occluded"):
        assert f"  # {flag}: left out: 0 for every one of the 5 objects (add `{flag}: {{dtype: int64, shape: " \
               "[null]}` to keep it)" in text.splitlines()
    assert "  # pose: left out: Unspecified for every one of the 5 objects (add `pose: {dtype: string, shape: " \
           "[null]}` to keep it)" in text.splitlines()
    assert_records(splits, expected(sizes, "xyxy", written))
    assert_dry_run_passes(path)


def test_roboflow_yolo_reads_the_splits_data_yaml_names(tmp_path):
    written = roboflow_yolo(tmp_path / "export")

    text, spec, splits, path = infer_build(tmp_path, tmp_path / "export")

    assert spec["source"] == {"builder": "yolo", "names_file": "../export/data.yaml"}
    assert spec["splits"] == {"train": {"path": "../export/train/images"}, "val": {"path": "../export/valid/images"},
                              "test": {"path": "../export/test/images"}}
    assert "# the splits are data.yaml's (train: ../train/images, val: ../valid/images, test: ../test/images)." \
        in text.splitlines()
    assert_records(splits, expected({}, "cxcywh", written),
                   {"train": SPLITS["train"], "val": SPLITS["valid"], "test": SPLITS["test"]})
    assert_dry_run_passes(path)


def test_cvat_darknet_yolo_1_1_gives_a_split_an_obj_data_folder(tmp_path):
    written = darknet(tmp_path / "export", {"train": ["astronaut.jpg", "camera.jpg", "chelsea.jpg"],
                                            "valid": ["coffee.jpg"]})

    text, spec, splits, path = infer_build(tmp_path, tmp_path / "export")

    assert spec["source"] == {"builder": "yolo", "names_file": "../export/obj.names"}
    assert spec["splits"] == {"train": {"path": "../export/obj_train_data"},
                              "valid": {"path": "../export/obj_valid_data"}}
    assert "# darknet (CVAT's YOLO 1.1): a split a obj_*_data/ folder." in text.splitlines()
    assert_records(splits, expected({}, "cxcywh", written), {"train": ["astronaut.jpg", "camera.jpg", "chelsea.jpg"],
                                                             "valid": ["coffee.jpg"]})
    assert_dry_run_passes(path)


def test_a_darknet_list_that_leaves_out_an_image_is_one_line(tmp_path):
    darknet(tmp_path / "export", {"train": ["astronaut.jpg", "chelsea.jpg"], "valid": ["coffee.jpg"]})
    (tmp_path / "export" / "train.txt").write_text("data/obj_train_data/astronaut.jpg\n")
    with pytest.raises(DataError) as error:
        tb.infer(tmp_path / "export", tmp_path / "det.yaml")
    assert str(error.value) == (f"{tmp_path / 'export' / 'train.txt'}: leaves out an image in "
                                f"{tmp_path / 'export' / 'obj_train_data'} (chelsea.jpg): the yolo builder reads every "
                                "image of the folder; make the list and the folder agree")


def test_a_top_level_annotations_json_beside_an_images_folder(tmp_path):
    """labelme2coco's and kwcoco's layout: `annotations.json` at the top, the photos in images/."""
    sizes = save_photos(tmp_path / "export" / "images")
    document = coco_document(sizes)
    for image in document["images"]:
        image["file_name"] = f"images/{image['file_name']}"  # (relative to the JSON, as kwcoco writes them)
    (tmp_path / "export" / "annotations.json").write_text(json.dumps(document))

    text, spec, splits, path = infer_build(tmp_path, tmp_path / "export")

    assert spec["source"] == {"builder": "coco", "path": "../export/annotations.json", "images": "../export"}
    records = {name: record for split in splits.values() for name, record in split.items()}
    assert sorted(records) == sorted(sizes)
    boxes = expected(sizes)
    by_id = sorted(CATEGORIES)  # COCO's classes: the categories sorted by id
    for name, record in records.items():
        np.testing.assert_array_equal(record["objects"], np.array(boxes[name], np.float32).reshape(-1, 4))
        assert record["labels"].tolist() == [by_id.index(category) for category, _ in PHOTOS[name][1]]


def test_several_coco_jsons_not_named_by_split_are_one_line(tmp_path):
    sizes = save_photos(tmp_path / "export")
    for name in ("people.json", "things.json"):
        (tmp_path / "export" / name).write_text(json.dumps(coco_document(sizes)))
    with pytest.raises(DataError) as error:
        tb.infer(tmp_path / "export", tmp_path / "det.yaml")
    assert str(error.value) == (f"{tmp_path / 'export'}: 2 COCO JSONs (people.json, things.json), not each named by a "
                                "split (train.json, val.json, ...): infer one of them")


def test_coco_jsons_named_by_split_are_a_split_each(tmp_path):
    sizes = save_photos(tmp_path / "export" / "images")
    parts = {"train": ["astronaut.jpg", "camera.jpg", "chelsea.jpg"], "val": ["coffee.jpg"]}
    for split, names in parts.items():
        (tmp_path / "export" / f"{split}.json").write_text(json.dumps(coco_document({name: sizes[name]
                                                                                    for name in names})))
    text, spec, splits, path = infer_build(tmp_path, tmp_path / "export")
    assert list(spec["splits"]) == ["train", "val"]
    assert {split: sorted(records) for split, records in splits.items()} == \
        {split: sorted(names) for split, names in parts.items()}
    boxes = expected(sizes)
    for records in splits.values():
        for name, record in records.items():
            np.testing.assert_array_equal(record["objects"], np.array(boxes[name], np.float32).reshape(-1, 4))


def test_a_one_class_roboflow_export_passes_the_dry_run(tmp_path):
    """One class (and Roboflow's dataset category beside it): the labels are that class in every
    record, as they must be; the dry run doesn't take that for a wrong column (it did, exit 1)."""
    sizes = save_photos(tmp_path / "export" / "train", ["astronaut.jpg", "chelsea.jpg", "coffee.jpg"])
    images = [{"id": number, "file_name": name, "height": sizes[name][0], "width": sizes[name][1]}
              for number, name in enumerate(sizes)]
    annotations = [{"id": number, "image_id": number, "category_id": 1, "bbox": [10.0, 20.0, 30.0 + number, 40.0],
                    "area": 1200.0, "iscrowd": 0, "segmentation": []} for number in range(3)]
    categories = [{"id": 0, "name": "pets", "supercategory": "none"}, {"id": 1, "name": "pet", "supercategory": "pets"}]
    (tmp_path / "export" / "train" / "_annotations.coco.json").write_text(json.dumps(
        {"images": images, "annotations": annotations, "categories": categories}))

    text, spec, splits, path = infer_build(tmp_path, tmp_path / "export")

    assert spec["features"]["labels"]["names"] == ["pet"]
    assert "# one split folder, train/: divided by the fractions below." in text.splitlines()
    assert "  # category_id: left out: 1 for every one of the 3 objects (add `category_id: {dtype: int64, shape: " \
           "[null]}` to keep it)" in text.splitlines()
    assert sorted(name for records in splits.values() for name in records) == sorted(sizes)
    assert_dry_run_passes(path)


def test_an_empty_box_gets_min_size_0_with_a_comment_counting_it(tmp_path):
    """A box of no width (a slip of the mouse, kept by the exporter): `min_size: 0`, and the comment
    says how many there are and that the build drops each such object whole (its label too); on
    850d6ac the comment said "1 boxes are empty" and nothing of the label."""
    roboflow_voc(tmp_path / "export")
    xml = tmp_path / "export" / "train" / "astronaut.xml"
    xml.write_text(xml.read_text().replace("<xmax>340</xmax>", "<xmax>140</xmax>", 1))

    text = tb.infer(tmp_path / "export", tmp_path / "det.yaml")

    objects = yaml.safe_load(text)["features"]["objects"]
    assert objects["min_size"] == 0
    assert comment(text, "objects:").endswith(
        "; 1 empty box (no width or height): `min_size: 0` drops each such object whole, its label and other "
        "per-object values with it, and the build counts them")
