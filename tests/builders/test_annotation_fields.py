"""What an annotation source offers, and nothing else: COCO keypoints and attributes read, a field
the builder doesn't give refused, and an export of boxes alone never turned into empty masks.

The photo is scikit-image's astronaut (a real person, 512 x 512), shrunk to 128 x 128, with COCO
person keypoints placed on her (pixels, as COCO writes them) and the attributes CVAT and Datumaro
write per annotation.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import tfrecord_builder as tb
from tfrecord_builder.errors import DataError, SpecError

from conftest import import_module, write_spec

skimage_data = pytest.importorskip("skimage.data")

SIZE = 128
POINTS = ["nose", "left_eye", "right_eye", "left_shoulder", "right_shoulder"]
# (box [x, y, w, h], keypoints [x, y, v] * 5, attributes): a person with all points, one with
# two hidden and one not labelled, a cup (no keypoints)
OBJECTS = [
    (1, [30.0, 10.0, 60.0, 110.0], [62, 30, 2, 58, 26, 2, 67, 26, 2, 45, 60, 1, 80, 61, 2],
     {"occluded": False, "color": "white"}),
    (1, [90.0, 40.0, 30.0, 80.0], [100, 50, 2, 0, 0, 0, 105, 48, 1, 95, 70, 2, 115.5, 71, 2],
     {"occluded": True, "color": "blue"}),
    (2, [5.0, 100.0, 20.0, 20.0], None, {"occluded": False}),
]


def write_dataset(tmp_path: Path, change=None) -> Path:
    (tmp_path / "images").mkdir(parents=True, exist_ok=True)
    Image.fromarray(skimage_data.astronaut()).resize((SIZE, SIZE), Image.BILINEAR).save(
        tmp_path / "images" / "astronaut.jpg", quality=92)
    annotations = []
    for number, (category, box, points, attributes) in enumerate(OBJECTS):
        annotation = {"id": 40 + number, "image_id": 3, "category_id": category, "bbox": box, "iscrowd": 0,
                      "area": box[2] * box[3], "segmentation": [], "attributes": attributes}
        if points is not None:
            annotation.update(keypoints=points, num_keypoints=sum(1 for v in points[2::3] if v))
        annotations.append(annotation)
    document = {"images": [{"id": 3, "file_name": "astronaut.jpg", "height": SIZE, "width": SIZE}],
                "annotations": annotations,
                "categories": [{"id": 1, "name": "person", "keypoints": POINTS, "skeleton": [[1, 2], [1, 3]]},
                               {"id": 2, "name": "cup"}]}
    if change:
        change(document)
    (tmp_path / "person_keypoints.json").write_text(json.dumps(document))
    return tmp_path / "person_keypoints.json"


SOURCE = {"builder": "coco", "path": "person_keypoints.json", "images": "images"}


def spec_with(tmp_path: Path, features: dict, **top) -> Path:
    base = {"image": {"type": "image", "encoding": "jpeg"},
            "objects": {"type": "bbox", "source": "bbox", "format": "xywh", "units": "pixels"}}
    return write_spec(tmp_path, {"name": "people", "source": SOURCE, "features": {**base, **features},
                                 "output": {"shuffle": False}, **top})


def expected_points() -> tuple[np.ndarray, np.ndarray]:
    """[objects, 5, 2] [y, x] fractions and [objects, 5] visibilities, as COCO's numbers say."""
    points = np.zeros((3, 5, 2), np.float32)
    visible = np.zeros((3, 5), np.int64)
    for index, (_, _, numbers, _) in enumerate(OBJECTS):
        if numbers is None:
            continue
        triples = np.array(numbers, np.float64).reshape(5, 3)
        labelled = triples[:, 2] > 0
        points[index][labelled] = (triples[labelled][:, [1, 0]] / SIZE).astype(np.float32)
        visible[index] = triples[:, 2]
    return points, visible


def test_coco_keypoints_are_read_as_fractions_with_their_visibility(tf, tmp_path):
    write_dataset(tmp_path)
    features = {"keypoints": {"type": "keypoints", "units": "pixels"},
                "num_keypoints": {"dtype": "int64", "shape": [None]}}
    info = tb.build(spec_with(tmp_path, features), workers=1)
    assert info.spec.features["keypoints"].names == POINTS  # the category's, in its order
    points, visible = expected_points()
    (record,) = list(tb.read(info.path, "train"))
    np.testing.assert_array_equal(record["keypoints"], points)
    np.testing.assert_array_equal(record["keypoints_visibility"], visible)
    assert record["num_keypoints"].tolist() == [5, 4, 0]
    module = import_module(Path(info.path) / "people_input.py")
    for batch in (next(iter(tb.input_fn(info.path, "train", batch_size=1))),
                  next(iter(module.input_fn("train", batch_size=1)))):
        np.testing.assert_array_equal(batch["keypoints"].to_tensor().numpy()[0], points)
        np.testing.assert_array_equal(batch["keypoints_visibility"].to_tensor().numpy()[0], visible)


def test_generate_names_the_points_the_source_gives_as_a_build_does(tmp_path):
    write_dataset(tmp_path)
    spec = spec_with(tmp_path, {"keypoints": {"type": "keypoints", "units": "pixels"}})
    info = tb.build(spec, workers=1)
    assert tb.generate_module(spec, data_dir=info.path) == (Path(info.path) / "people_input.py").read_text()


def test_keypoints_in_the_object_detection_layout_are_what_its_script_writes(tf, tmp_path):
    write_dataset(tmp_path)
    features = {"image": {"type": "image", "encoding": "jpeg", "key": "image/encoded"},
                "objects": {"type": "bbox", "source": "bbox", "format": "xywh", "units": "pixels",
                            "layout": "object_detection"},
                "keypoints": {"type": "keypoints", "units": "pixels", "layout": "object_detection"}}
    info = tb.build(spec_with(tmp_path, features), workers=1)
    shard = next(Path(info.path).glob("people-train.tfrecord-*"))
    example = tf.train.Example.FromString(next(iter(tf.data.TFRecordDataset(str(shard)))).numpy())
    feature = example.features.feature
    triples = [np.array(numbers or [0] * 15, np.float64).reshape(5, 3) for _, _, numbers, _ in OBJECTS]
    labelled = [t[:, 2] > 0 for t in triples]
    assert list(feature["image/object/keypoint/x"].float_list.value) == pytest.approx(
        [x / SIZE if seen else 0 for t, seen in zip(triples, labelled) for x, seen in zip(t[:, 0], seen)], abs=1e-7)
    assert list(feature["image/object/keypoint/visibility"].int64_list.value) == [
        int(v) for t in triples for v in t[:, 2]]
    assert list(feature["image/object/keypoint/num"].int64_list.value) == [5, 4, 0]
    assert [name.decode() for name in feature["image/object/keypoint/text"].bytes_list.value] == POINTS * 3
    points, visible = expected_points()
    (record,) = list(tb.read(info.path, "train"))
    np.testing.assert_array_equal(record["keypoints"], points)
    batch = next(iter(tb.input_fn(info.path, "train", batch_size=1)))
    np.testing.assert_array_equal(batch["keypoints"].to_tensor().numpy()[0], points)
    np.testing.assert_array_equal(batch["keypoints_visibility"].to_tensor().numpy()[0], visible)


def test_tensorflow_datasets_reads_the_keypoints(tmp_path):
    tfds = pytest.importorskip("tensorflow_datasets")
    write_dataset(tmp_path)
    info = tb.build(spec_with(tmp_path, {"keypoints": {"type": "keypoints", "units": "pixels"}}), workers=1)
    builder = tfds.builder_from_directory(info.path)
    (example,) = list(tfds.as_numpy(builder.as_dataset(split="train")))
    points, visible = expected_points()
    np.testing.assert_array_equal(example["keypoints"], points)
    np.testing.assert_array_equal(example["keypoints_visibility"], visible)


def test_per_object_attributes_of_cvat_and_datumaro_are_read(tmp_path):
    write_dataset(tmp_path)
    features = {"occluded": {"dtype": "bool", "shape": [None], "source": "attributes.occluded"},
                "color": {"dtype": "string", "shape": [None], "source": "attributes.color", "default": ""}}
    info = tb.build(spec_with(tmp_path, features), workers=1)
    (record,) = list(tb.read(info.path, "train"))
    assert record["occluded"].tolist() == [False, True, False]
    assert [value.decode() for value in record["color"]] == ["white", "blue", ""]


@pytest.mark.parametrize("field", ["is_crowd", "attributes.colour"])
def test_a_field_the_builder_doesnt_give_is_refused_naming_those_it_does(tmp_path, field):
    write_dataset(tmp_path)
    path = spec_with(tmp_path, {"crowd": {"dtype": "int64", "shape": [None], "source": field}})
    offered = ("image, filename, image_id, height, width, bbox, label, category_id, iscrowd, area, annotation_id, "
               "segmentation, masks, keypoints, num_keypoints, attributes.color, attributes.occluded")
    with pytest.raises(SpecError) as error:
        tb.build(path, workers=1)
    assert str(error.value).endswith(f"features.crowd.source: the coco builder gives no field `{field}`; its records "
                                     f"offer: {offered}")
    validated = subprocess.run([sys.executable, "-m", "tfrecord_builder", "validate", str(path)],
                               capture_output=True, text=True)
    assert validated.returncode == 2
    assert validated.stderr.strip().endswith(f"the coco builder gives no field `{field}`; its records offer: {offered}")
    assert not (tmp_path / "build").exists()


def test_keypoints_of_a_json_without_them_are_refused(tmp_path):
    def without(document):
        for annotation in document["annotations"]:
            annotation.pop("keypoints", None)
            annotation.pop("num_keypoints", None)
        document["categories"][0].pop("keypoints")

    write_dataset(tmp_path, without)
    with pytest.raises(SpecError) as error:
        tb.build(spec_with(tmp_path, {"keypoints": {"type": "keypoints", "units": "pixels"}}), workers=1)
    assert "features.keypoints: the coco builder gives no field `keypoints`" in str(error.value)


def test_a_labelled_keypoint_outside_the_image_is_one_line(tmp_path):
    def outside(document):
        document["annotations"][1]["keypoints"][12] = 140.0

    write_dataset(tmp_path, outside)
    with pytest.raises(DataError) as error:
        tb.build(spec_with(tmp_path, {"keypoints": {"type": "keypoints", "units": "pixels"}}), workers=1)
    assert str(error.value).endswith(
        "feature `keypoints`: object 1: keypoint 4 (right_shoulder) [140, 71] lies outside the image "
        f"{tmp_path / 'images' / 'astronaut.jpg'} (128 x 128 pixels, width x height)")


def test_an_empty_segmentation_has_no_mask_and_is_refused(tmp_path):
    pytest.importorskip("pycocotools")
    write_dataset(tmp_path)
    with pytest.raises(DataError) as error:
        tb.build(spec_with(tmp_path, {"masks": {"dtype": "bytes", "shape": [None]}}), workers=1)
    assert str(error.value) == (
        "person_keypoints.json, image 3 (astronaut.jpg): annotation 40: `segmentation` is empty, so it has no mask; "
        "expected polygons or RLE (an export of boxes alone has no masks: leave `masks` out of the spec)")
