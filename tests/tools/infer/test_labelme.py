"""`infer` on labelme's per-image JSON files (on 850d6ac: "invalid JSON" at line 1, the folder
read as a JSONL file): the spec reads them with `builder: labelme` and builds as written, every
box the extent of its shape, every label, group and flag as labelme wrote them.
"""
from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

import tfrecord_builder as tb

from .exports import infer_build
from .helpers import comment, infer_validate_build

skimage_data = pytest.importorskip("skimage.data")

PHOTOS = {"coffee": skimage_data.coffee, "chelsea": skimage_data.chelsea, "astronaut": skimage_data.astronaut,
          "rocket": skimage_data.rocket}
# each photo's shapes: (label, shape_type, points, group_id, flags)
SHAPES = {
    "coffee": [("cup", "rectangle", [[430.5, 300.0], [180.0, 40.25]], None, {"occluded": True}),
               ("spoon", "polygon", [[30, 10], [90.5, 15], [60, 61]], 1, {"occluded": False}),
               ("steam", "point", [[200, 20]], None, {})],
    "chelsea": [("cat", "polygon", [[80, 30], [340, 40], [330, 270], [90, 260]], None, {"occluded": False})],
    "astronaut": [("person", "rectangle", [[140, 20], [340, 260]], 1, {"occluded": False}),
                  ("flag", "polygon", [[400, 80], [490, 90], [480, 230]], None, {"occluded": True})],
    "rocket": [],
}


def write_labelme(folder: Path, embedded: str | None = None) -> dict[str, tuple[int, int]]:
    """A JSON beside each photo (`embedded`: that photo only in its JSON's imageData); the sizes."""
    folder.mkdir(parents=True)
    sizes = {}
    for name, make in PHOTOS.items():
        pixels = make()
        sizes[name] = pixels.shape[:2]
        buffer = io.BytesIO()
        Image.fromarray(pixels).save(buffer, format="JPEG", quality=90)
        if name != embedded:
            (folder / f"{name}.jpg").write_bytes(buffer.getvalue())
        shapes = [{"label": label, "points": points, "group_id": group, "description": "", "shape_type": kind,
                   "flags": flags, "mask": None} for label, kind, points, group, flags in SHAPES[name]]
        (folder / f"{name}.json").write_text(json.dumps({
            "version": "5.5.0", "flags": {}, "shapes": shapes, "imagePath": f"{name}.jpg",
            "imageData": base64.b64encode(buffer.getvalue()).decode() if name == embedded else None,
            "imageHeight": sizes[name][0], "imageWidth": sizes[name][1]}, indent=2))
    return sizes


def expected_boxes(name: str, size: tuple[int, int]) -> np.ndarray:
    """The objects' [ymin, xmin, ymax, xmax] fractions: each shape's extent (points left out)."""
    height, width = size
    boxes = []
    for _, kind, points, _, _ in SHAPES[name]:
        if kind == "point":
            continue
        xs, ys = [x for x, _ in points], [y for _, y in points]
        boxes.append([min(ys) / height, min(xs) / width, max(ys) / height, max(xs) / width])
    return np.array(boxes, np.float32).reshape(-1, 4)


def test_a_labelme_folder_becomes_a_spec_that_builds_on_the_command_line(tmp_path):
    sizes = write_labelme(tmp_path / "photos")

    text, spec, records = infer_validate_build(tmp_path, "photos")

    assert spec["source"] == {"builder": "labelme", "path": "photos"}
    assert spec["features"] == {
        "image": {"type": "image", "encoding": "jpeg", "shape": [None, None, 3]},
        "objects": {"type": "bbox", "source": "bbox", "format": "xyxy", "units": "pixels", "image": "image"},
        "labels": {"type": "class_label", "shape": [None], "source": "label"},
        "shape_type": {"dtype": "string", "shape": [None]}, "group_id": {"dtype": "int64", "shape": [None]},
        "points": {"dtype": "string", "shape": [None]}, "flag_occluded": {"dtype": "int64", "shape": [None]},
        "filename": {"dtype": "string"}}
    assert text.splitlines()[0] == ("# Written by `tfrecord-builder infer` from photos/: a folder of labelme JSON "
                                    "files, 4 images (1 without objects: records with no boxes), 5 objects, 5 classes.")
    assert "# 1 labelme `point` shape left out: no area, so no object with a box (the build says so too)." \
        in text.splitlines()
    assert comment(text, "objects:") == ("xyxy pixels, each labelme shape's extent (a polygon's vertices, a circle's "
                                         "centre and radius); stored [ymin, xmin, ymax, xmax] fractions")
    assert "  # description: left out: \"\" for every one of the 5 objects (add `description: {dtype: string, " \
           "shape: [null]}` to keep it)" in text.splitlines()
    names = sorted({label for shapes in SHAPES.values() for label, kind, *_ in shapes if kind != "point"})
    found = {record["filename"].decode(): record for split in records.values() for record in split}
    assert sorted(found) == sorted(f"{name}.jpg" for name in PHOTOS)
    for name in PHOTOS:
        record = found[f"{name}.jpg"]
        objects = [shape for shape in SHAPES[name] if shape[1] != "point"]
        np.testing.assert_array_equal(record["objects"], expected_boxes(name, sizes[name]))
        assert record["labels"].tolist() == [names.index(label) for label, *_ in objects]
        assert record["shape_type"].tolist() == [kind.encode() for _, kind, *_ in objects]
        assert record["group_id"].tolist() == [-1 if group is None else group for *_, group, _ in objects]
        assert record["flag_occluded"].tolist() == [int(flags["occluded"]) for *_, flags in objects]
        assert [json.loads(points) for points in record["points"]] == [points for _, _, points, *_ in objects]


def test_one_labelme_json_gives_its_folder_and_an_embedded_image_is_said(tmp_path):
    sizes = write_labelme(tmp_path / "photos", embedded="chelsea")

    text, spec, splits, path = infer_build(tmp_path, tmp_path / "photos" / "coffee.json")

    assert spec["source"] == {"builder": "labelme", "path": "../photos"}
    assert "# coffee.json is a labelme JSON: the spec reads every labelme JSON in its folder." in text.splitlines()
    assert ("# 1 image read from the labelme JSON's `imageData`: the file its `imagePath` names is missing (the "
            "build says so too).") in text.splitlines()
    records = {name: record for split in splits.values() for name, record in split.items()}
    np.testing.assert_array_equal(records["chelsea.jpg"]["objects"], expected_boxes("chelsea", sizes["chelsea"]))
    assert records["chelsea.jpg"]["image"].shape == (*sizes["chelsea"], 3)
    assert tb.dry_run(path, workers=1).findings == []


def test_a_rectangles_only_labelme_folder_has_no_points_feature(tmp_path):
    folder = tmp_path / "photos"
    write_labelme(folder)
    for path in folder.glob("*.json"):
        document = json.loads(path.read_text())
        document["shapes"] = [shape for shape in document["shapes"] if shape["shape_type"] == "rectangle"]
        path.write_text(json.dumps(document))
    spec = yaml.safe_load(tb.infer(folder, tmp_path / "spec.yaml"))
    assert spec["source"]["builder"] == "labelme"
    assert "points" not in spec["features"] and "shape_type" not in spec["features"]
