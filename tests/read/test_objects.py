"""Records of objects, read as padded tensors with a count (`input.objects: padded`) and as what
KerasHub's detectors take in `model.fit` (`input.detection`), through `tb.input_fn` and the
generated module alike."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest
import yaml

import tfrecord_builder as tb
from tfrecord_builder.errors import SpecError

from conftest import ROOT, batches_as_numpy, import_module, write_spec

COINS = ROOT / "data" / "coins"
FORMATS = ["yxyx", "xyxy", "xywh", "center_xywh", "center_yxhw", "rel_yxyx", "rel_xyxy", "rel_xywh",
           "rel_center_xywh"]


def coco_spec(tmp_path, input_options: dict | None = None, layout: str = "tfds", **changes) -> str:
    """Six images of data/coins: image 2 without objects, image 3 with 5 of its 24."""
    coco = json.loads((COINS / "instances.json").read_text())
    images = coco["images"][:6]
    annotations = [item for item in coco["annotations"] if item["image_id"] <= 6 and item["image_id"] != 2]
    annotations = [item for item in annotations if item["image_id"] != 3 or item["id"] % 24 < 5]
    (tmp_path / "instances.json").write_text(json.dumps({**coco, "images": images, "annotations": annotations}))
    spec = {
        "name": "objects", "source": {"builder": "coco", "path": "instances.json", "images": str(COINS / "images")},
        "splits": {"train": 1.0},
        "features": {
            "image": {"type": "image", "channels": 3},
            "objects": {"type": "bbox", "source": "bbox", "format": "xywh", "units": "pixels", "image": "image",
                        "layout": layout},
            "labels": {"type": "class_label", "shape": [None], "source": "label"},
            "names": {"dtype": "string", "shape": [None], "source": "label"},
            "area": {"dtype": "float32", "shape": [None]},
            "image_id": {"dtype": "int64"},
        },
        "output": {"shuffle": False}, "input": {"batch_size": 6, **(input_options or {})}, **changes,
    }
    return write_spec(tmp_path, spec)


def build(tmp_path, name, input_options=None, layout="tfds", **changes):
    folder = tmp_path / name
    folder.mkdir()
    return tb.build(coco_spec(folder, input_options, layout, **changes), output=folder / "out")


def test_padded_objects_are_the_ragged_values_with_pads_and_a_count(tf, tmp_path):
    ragged = batches_as_numpy(tb.input_fn(build(tmp_path, "ragged").path, "train", shuffle=False))[0]
    info = build(tmp_path, "padded", {"objects": "padded"})
    padded = batches_as_numpy(tb.input_fn(info.path, "train", shuffle=False))[0]
    module = import_module(f"{info.path}/objects_input.py")
    generated = batches_as_numpy(module.input_fn("train", shuffle=False))[0]

    counts = [len(boxes) for boxes in ragged["objects"]]
    assert sorted(counts) == [0, 5, 24, 24, 24, 24]
    assert padded["num_objects"].dtype == np.int32 and padded["num_objects"].tolist() == counts
    assert padded["objects"].shape == (6, 24, 4) and padded["labels"].shape == (6, 24)
    pads = {"objects": -1.0, "labels": -1, "area": -1.0, "names": b""}
    for name, pad in pads.items():
        for row, values in enumerate(ragged[name]):
            kept = padded[name][row][:counts[row]]
            assert kept.tolist() == (values if name == "names" else np.asarray(values).tolist())
            assert (padded[name][row][counts[row]:] == pad).all()
    assert padded["image_id"].tolist() == ragged["image_id"].tolist()
    for name, value in padded.items():  # the generated module reads the same
        np.testing.assert_array_equal(generated[name], value)


def test_tb_read_gives_each_records_own_objects_whatever_input_says(tf, tmp_path):
    info = build(tmp_path, "padded", {"objects": "padded"})
    records = list(tb.read(info.path, "train"))
    assert sorted(len(record["objects"]) for record in records) == [0, 5, 24, 24, 24, 24]
    assert all(record["objects"].shape[1:] == (4,) and len(record["labels"]) == len(record["objects"])
               for record in records)


@pytest.mark.slow
@pytest.mark.parametrize("layout, targets", [("tfds", FORMATS), ("object_detection", ["xyxy", "rel_center_xywh"])])
def test_detection_gives_kerashubs_boxes_in_each_format(tf, tmp_path, layout, targets):
    keras = pytest.importorskip("keras")
    ragged = batches_as_numpy(tb.input_fn(build(tmp_path, "ragged").path, "train", shuffle=False))[0]
    for target in targets:
        info = build(tmp_path, target, {"detection": {"bounding_box_format": target}}, layout, label="labels")
        for source in (tb.input_fn(info.path, "train", shuffle=False),
                       import_module(f"{info.path}/objects_input.py").input_fn("train", shuffle=False)):
            images, targets = next(iter(source))
            height, width = images.shape[1:3]
            assert set(targets) == {"boxes", "labels"} and targets["labels"].dtype == tf.int32
            for row, (boxes, labels) in enumerate(zip(ragged["objects"], ragged["labels"])):
                count = len(boxes)
                expected = keras.utils.bounding_boxes.convert_format(
                    np.asarray(boxes, np.float32).reshape(-1, 4), source="rel_yxyx", target=target,
                    height=height, width=width)
                np.testing.assert_allclose(targets["boxes"][row][:count].numpy(), np.asarray(expected), rtol=1e-6,
                                           atol=1e-4)
                assert (targets["boxes"][row][count:].numpy() == -1).all()
                assert targets["labels"][row].numpy().tolist() == labels + [-1] * (24 - count)


def test_detection_images_are_the_boxes_image_feature(tf, tmp_path):
    info = build(tmp_path, "detection", {"detection": {"labels": "labels"}, "image_dtype": "float32"})
    images, targets = next(iter(tb.input_fn(info.path, "train", shuffle=False)))
    features = next(iter(tb.input_fn(build(tmp_path, "plain", {"image_dtype": "float32"}).path, "train",
                                     shuffle=False)))
    np.testing.assert_array_equal(images.numpy(), features["image"].numpy())
    # yxyx pixels of the padded batch: the stored fractions (of the batch's padded images) times its size
    height, width = images.shape[1:3]
    first = features["objects"][0].numpy() * [height, width, height, width]
    np.testing.assert_allclose(targets["boxes"][0][:len(first)].numpy(), first, rtol=1e-6)


@pytest.mark.parametrize("options, changes, message", [
    ({"objects": "padded", "count_feature": "image_id"}, {},
     "input.count_feature: `image_id` is already a feature's name; choose another (or null)"),
    ({"objects": "padded", "count_feature": "9"}, {}, "input.count_feature: expected an identifier, received '9'"),
    ({"detection": {}}, {}, "input.detection: needs the objects' class ids: name their feature in `labels:` "
                            "(or set the spec's `label`)"),
    ({"detection": {"labels": "area"}}, {},
     "input.detection.labels: expected a feature of one integer class id per object (a class_label of shape "
     "[null]), received `area`, float32 [null] (ragged)"),
    ({"detection": {}}, {"label": "image_id"},
     "input.detection: the spec's label `image_id`, int64 [] is not one integer class id per object (a "
     "class_label of shape [null]); name the objects' class ids in `labels:`"),
    ({"detection": {"labels": "labels", "boxes": "area"}}, {},
     "input.detection.boxes: expected the name of a bbox feature (objects), received 'area'"),
    ({"detection": {"labels": "labels", "bounding_box_format": "cxcywh"}}, {},
     "input.detection.bounding_box_format: expected one of yxyx, xyxy, xywh, center_xywh, center_yxhw, rel_yxyx, "
     "rel_xyxy, rel_xywh, rel_center_xywh, received 'cxcywh'"),
    ({"objects": "squeezed"}, {}, "input.objects: expected one of ragged, padded, received 'squeezed'"),
])
def test_bad_reading_options_are_refused_naming_the_key(tmp_path, options, changes, message):
    path = coco_spec(tmp_path, options, **changes)
    with pytest.raises(SpecError) as raised:
        tb.load_spec(path)
    assert re.sub(r"^.*?spec\.yaml, line \d+: ", "", str(raised.value)) == message


def test_detection_needs_a_bbox_feature_with_its_image(tmp_path):
    path = coco_spec(tmp_path, {"detection": {"labels": "labels"}})
    spec = yaml.safe_load(path.read_text())
    spec["features"]["objects"] = {"type": "bbox", "source": "bbox", "format": "xywh"}  # fractions, no image:
    spec["features"]["thumb"] = {"type": "image", "source": "image"}  # (beside one image, they'd be its boxes)
    path.write_text(yaml.safe_dump(spec))
    result = subprocess.run([sys.executable, "-m", "tfrecord_builder", "validate", str(path)], capture_output=True,
                            text=True)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().endswith(
        "input.detection.boxes: feature `objects` has no `image:`; the detector's images are the boxes' image "
        "feature: name it in the bbox feature's `image:`")
    assert "Traceback" not in result.stderr


def test_padded_objects_without_a_bbox_feature_need_count_feature_null(tmp_path):
    path = write_spec(tmp_path, {"name": "t", "source": {"builder": "jsonl", "path": "t.jsonl"},
                                 "features": {"tags": {"dtype": "int64", "shape": [None]}},
                                 "input": {"objects": "padded"}}, {"t.jsonl": '{"tags": [1]}\n'})
    with pytest.raises(SpecError, match=r"input.count_feature: counts the boxes of the spec's bbox feature, and "
                                        r"the spec has none; set `count_feature: null` to pad without a count"):
        tb.load_spec(path)
    text = path.read_text().replace("objects: padded", "objects: padded\n  count_feature: null")
    path.write_text(text)
    assert tb.load_spec(path).reading()["objects"] == {"count_feature": None, "count_of": None}


@pytest.mark.slow
def test_a_kerashub_detector_learns_from_the_generated_input_fn(tf, tmp_path):
    """specs/coins.yaml (`input.detection`) into a small KerasHub RetinaNet's model.fit: the loss
    falls (seed 0: 205 to 15.6 in two epochs; seeds 1 and 2: 7.5 and 8.7 times lower)."""
    pytest.importorskip("keras_hub")
    import train  # demo/train.py: the demo's detector

    info = tb.build(ROOT / "specs" / "coins.yaml", output=tmp_path)
    module = import_module(f"{info.path}/coins_input.py")
    first, last = train.train_detection(module.input_fn, info, epochs=2)
    assert last < first / 5, (first, last)
