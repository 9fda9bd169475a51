"""`infer` on COCO person keypoints: a keypoints feature in pixels beside the boxes, which builds
as written with every point as the JSON has it."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

import tfrecord_builder as tb

skimage_data = pytest.importorskip("skimage.data")

POINTS = ["nose", "left_eye", "right_eye", "left_shoulder", "right_shoulder"]
PEOPLE = {  # image: (size, [(box, keypoints [x, y, v] * 5)])
    "astronaut.jpg": ((128, 128), [([30, 10, 60, 110], [62, 30, 2, 58, 26, 2, 67, 26, 2, 45, 60, 1, 80, 61, 2]),
                                   ([90, 40, 30, 80], [100, 50, 2, 0, 0, 0, 105, 48, 1, 95, 70, 2, 115.5, 71, 2])]),
    "camera.jpg": ((96, 96), [([20, 5, 50, 80], [45, 15, 2, 42, 12, 2, 48, 12, 2, 30, 30, 2, 60, 31, 2])]),
}


def write_keypoints(folder: Path) -> None:
    images, annotations = [], []
    for number, (name, ((height, width), people)) in enumerate(PEOPLE.items(), start=1):
        pixels = getattr(skimage_data, name.removesuffix(".jpg"))()
        (folder / "images").mkdir(parents=True, exist_ok=True)
        Image.fromarray(pixels).convert("RGB").resize((width, height)).save(folder / "images" / name, quality=92)
        images.append({"id": number, "file_name": name, "height": height, "width": width})
        for box, points in people:
            annotations.append({"id": len(annotations) + 1, "image_id": number, "category_id": 1, "bbox": box,
                                "iscrowd": 0, "area": box[2] * box[3], "keypoints": points,
                                "num_keypoints": sum(1 for v in points[2::3] if v)})
    document = {"images": images, "annotations": annotations,
                "categories": [{"id": 1, "name": "person", "supercategory": "person", "keypoints": POINTS,
                                "skeleton": [[1, 2], [1, 3], [4, 5]]}]}
    (folder / "annotations").mkdir(parents=True, exist_ok=True)
    (folder / "annotations" / "person_keypoints_train.json").write_text(json.dumps(document))


def test_coco_person_keypoints_infer_a_keypoints_feature_that_builds(tmp_path):
    write_keypoints(tmp_path / "people")
    spec_path = tmp_path / "people.yaml"
    spec_path.write_text(tb.infer(tmp_path / "people", spec_path))
    declared = yaml.safe_load(spec_path.read_text())["features"]
    assert declared["keypoints"] == {"type": "keypoints", "units": "pixels", "image": "image"}
    assert declared["num_keypoints"] == {"dtype": "int64", "shape": [None]}
    text = spec_path.read_text()
    assert "the points of category person: 5 points (nose, left_eye, right_eye, left_shoulder ...)" in text
    info = tb.build(spec_path, workers=1)
    assert info.spec.features["keypoints"].names == POINTS
    by_size = {record["image"].shape[:2]: record for record in tb.read(info.path, "train")}  # (sizes differ)
    for name, ((height, width), people) in PEOPLE.items():
        record = by_size[(height, width)]
        triples = np.array([points for _, points in people], np.float64).reshape(len(people), 5, 3)
        labelled = triples[..., 2] > 0
        expected = np.where(labelled[..., None], triples[..., [1, 0]] / np.array([height, width]), 0)
        np.testing.assert_allclose(record["keypoints"], expected.astype(np.float32), atol=1e-7)
        np.testing.assert_array_equal(record["keypoints_visibility"], triples[..., 2].astype(np.int64))
        assert record["num_keypoints"].tolist() == labelled.sum(axis=1).tolist()
