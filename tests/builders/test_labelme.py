"""`builder: labelme`: labelme's per-image JSON files beside real photographs (scikit-image's),
built and read back: every box is the extent of its shape's points (a circle's centre plus and
minus its radius), every label, type, group and flag as written; shapes without an area are
counted, an image missing beside its JSON is read from `imageData`, and bad files are one line.
"""
from __future__ import annotations

import base64
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import tfrecord_builder as tb
from tfrecord_builder.errors import DataError

from conftest import write_spec

skimage_data = pytest.importorskip("skimage.data")


def shape(label: str, points: list, kind: str = "polygon", group=None, flags=None, **more) -> dict:
    return {"label": label, "points": points, "group_id": group, "description": "", "shape_type": kind,
            "flags": flags or {}, "mask": None, **more}


def labelme(path: Path, image_path: str, size: tuple[int, int], shapes: list[dict], data: bytes | None = None,
            flags: dict | None = None) -> None:
    """A labelme 5 JSON file, as labelme saves it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "version": "5.5.0", "flags": flags or {}, "shapes": shapes, "imagePath": image_path,
        "imageData": base64.b64encode(data).decode() if data is not None else None,
        "imageHeight": size[0], "imageWidth": size[1]}, indent=2))


def jpeg(pixels: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()


SPEC = {"name": "lm", "source": {"builder": "labelme", "path": "photos"}, "splits": {"train": 1.0},
        "output": {"shuffle": False},
        "features": {
            "image": {"type": "image", "encoding": "jpeg"},
            "objects": {"type": "bbox", "source": "bbox", "format": "xyxy", "units": "pixels", "image": "image"},
            "labels": {"type": "class_label", "shape": [None], "source": "label"},
            "shape_type": {"dtype": "string", "shape": [None]}, "group_id": {"dtype": "int64", "shape": [None]},
            "occluded": {"dtype": "int64", "shape": [None], "source": "flag_occluded"},
            "blurry": {"dtype": "int64", "source": "image_flag_blurry"},
            "points": {"dtype": "string", "shape": [None]}, "filename": {"dtype": "string"},
            "height": {"dtype": "int64"}, "width": {"dtype": "int64"}}}


def write_folder(root: Path) -> dict[str, list]:
    """coffee.json beside coffee.jpg (a rectangle drawn bottom-right to top-left, a polygon, a point),
    chelsea.json whose photo is only in its imageData (a circle), astronaut.json with no shapes;
    each image's expected [xmin, ymin, xmax, ymax] boxes."""
    coffee, chelsea, astronaut = skimage_data.coffee(), skimage_data.chelsea(), skimage_data.astronaut()
    (root / "photos").mkdir(parents=True)
    Image.fromarray(coffee).save(root / "photos" / "coffee.jpg", quality=90)
    Image.fromarray(astronaut).save(root / "photos" / "astronaut.jpg", quality=90)
    labelme(root / "photos" / "coffee.json", "coffee.jpg", coffee.shape[:2], [
        shape("cup", [[430.5, 300.0], [180.0, 40.25]], "rectangle", flags={"occluded": True}),
        shape("spoon", [[30, 10], [90.5, 15], [60, 61]], "polygon", group=2),
        shape("steam", [[200, 20]], "point")], flags={"blurry": False})
    labelme(root / "photos" / "nested" / "chelsea.json", "../gone/chelsea.jpg", chelsea.shape[:2], [
        shape("cat", [[150.0, 120.0], [180.0, 160.0]], "circle")], data=jpeg(chelsea), flags={"blurry": True})
    labelme(root / "photos" / "astronaut.json", "astronaut.jpg", astronaut.shape[:2], [])
    return {"coffee.jpg": [[180.0, 40.25, 430.5, 300.0], [30.0, 10.0, 90.5, 61.0]],
            "../gone/chelsea.jpg": [[100.0, 70.0, 200.0, 170.0]], "astronaut.jpg": []}


def test_labelme_records_hold_each_shapes_extent_label_type_group_and_flags(tmp_path):
    boxes = write_folder(tmp_path)
    with pytest.warns(tb.BuildWarning) as warned:
        info = tb.build(write_spec(tmp_path, SPEC), workers=1)
    said = sorted(str(warning.message) for warning in warned)
    assert "source: 1 image read from the labelme JSON's `imageData`: the file its `imagePath` names is missing" in said
    assert "source: 1 labelme `point` shape left out: no area, so no object with a box" in said
    assert "source: 1 image without objects, kept as records with no boxes" in said
    records = {record["filename"].decode(): record for record in tb.read(info.path, "train")}
    assert list(records) == ["astronaut.jpg", "coffee.jpg", "../gone/chelsea.jpg"]  # by the JSON's path
    assert info.spec.features["labels"].names == ["cat", "cup", "spoon"]  # (the point's `steam` isn't an object)
    for name, expected in boxes.items():
        record = records[name]
        height, width = int(record["height"]), int(record["width"])
        fractions = [[ymin / height, xmin / width, ymax / height, xmax / width] for xmin, ymin, xmax, ymax in expected]
        np.testing.assert_array_equal(record["objects"], np.array(fractions, np.float32).reshape(-1, 4))
    coffee, chelsea = records["coffee.jpg"], records["../gone/chelsea.jpg"]
    assert coffee["labels"].tolist() == [1, 2] and chelsea["labels"].tolist() == [0]
    assert coffee["shape_type"].tolist() == [b"rectangle", b"polygon"]
    assert coffee["group_id"].tolist() == [-1, 2] and coffee["occluded"].tolist() == [1, 0]
    assert json.loads(coffee["points"][1]) == [[30, 10], [90.5, 15], [60, 61]]
    assert (int(coffee["blurry"]), int(chelsea["blurry"])) == (0, 1)
    assert records["astronaut.jpg"]["objects"].shape == (0, 4)
    # the photo embedded in imageData is stored as it is: the same pixels as the JPEG decoded
    np.testing.assert_array_equal(chelsea["image"], np.asarray(Image.open(io.BytesIO(jpeg(skimage_data.chelsea())))))
    radius = math.hypot(30, 40)
    assert boxes["../gone/chelsea.jpg"] == [[150 - radius, 120 - radius, 150 + radius, 120 + radius]]


@pytest.mark.parametrize("case, edit, message", [
    ("no image", lambda d: d.update(imagePath="nowhere.jpg", imageData=None),
     "{path}: image {folder}/nowhere.jpg not found, and the JSON holds no `imageData`"),
    ("a polygon of two points", lambda d: d["shapes"].append(shape("cup", [[1, 2], [3, 4]])),
     "{path}: shape 3 (cup, polygon): expected at least 3 points, received 2"),
    ("an unknown type", lambda d: d["shapes"].append(shape("cup", [[1, 2], [3, 4]], "ellipse")),
     "{path}: shape 3 (cup, ellipse): unknown shape_type 'ellipse'; expected one of rectangle, polygon, circle, "
     "mask, line, linestrip, point, points"),
    ("a point that isn't one", lambda d: d["shapes"].append(shape("cup", [[1, "x"], [3, 4]], "rectangle")),
     '{path}: shape 3 (cup, rectangle): `points`: expected a list of [x, y] numbers, received [[1, "x"], [3, 4]]'),
    ("no size", lambda d: d.pop("imageHeight"),
     "{path}: `imageHeight`: expected the image's size in pixels (a whole number), received null"),
    ("not labelme", lambda d: d.pop("shapes"),
     "{path}: expected a labelme JSON (an object with `shapes` and `imagePath`); it has version, flags, imagePath, "
     "imageData, imageHeight, imageWidth"),
])
def test_bad_labelme_files_are_one_line_naming_the_file_and_shape(tmp_path, case, edit, message):
    write_folder(tmp_path)
    path = tmp_path / "photos" / "coffee.json"
    document = json.loads(path.read_text())
    edit(document)
    path.write_text(json.dumps(document))
    with pytest.raises(DataError) as error:
        tb.build(write_spec(tmp_path, SPEC), workers=1)
    assert str(error.value) == message.format(path=path, folder=path.parent)


def test_malformed_json_names_its_line_or_is_skipped_and_listed(tmp_path):
    write_folder(tmp_path)
    path = tmp_path / "photos" / "coffee.json"
    path.write_text('{"shapes": [\n  {"label": "cup",,}\n]}')
    with pytest.raises(DataError) as error:
        tb.build(write_spec(tmp_path, SPEC), workers=1)
    assert str(error.value) == f"{path}, line 2: malformed JSON: Expecting property name enclosed in double quotes (column 19)"
    # the only file naming the shape flag `occluded` is the broken one: skipped, no record offers it
    features = {name: value for name, value in SPEC["features"].items() if name != "occluded"}
    with pytest.raises(tb.SpecError, match="the labelme builder gives no field `flag_occluded`"):
        tb.build(write_spec(tmp_path, {**SPEC, "on_error": "skip"}), output=tmp_path / "skipping", workers=1)
    info = tb.build(write_spec(tmp_path, {**SPEC, "features": features, "on_error": "skip"}),
                    output=tmp_path / "skipping", workers=1)
    assert sorted(record["filename"].decode() for record in tb.read(info.path, "train")) == [
        "../gone/chelsea.jpg", "astronaut.jpg"]
    skipped = [json.loads(line) for line in (Path(info.path) / "skipped.jsonl").read_text().splitlines()]
    assert [(entry["record"], entry["reason"]) for entry in skipped] == [(str(path), str(error.value))]
