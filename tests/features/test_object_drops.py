"""A dropped object is dropped whole: every per-object feature loses its values with the box.

A box goes when it is smaller than `min_size`, empty once clipped (`clip: true`), or wholly outside
the part an image's `resize: crop` keeps. Its label, flags, area, mask and keypoints go with it,
so the boxes and the labels of a record stay paired; the records are read back with `tb.read`,
`verify` and a KerasHub-style batch (`input: {detection: ...}`).
"""
from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import tfrecord_builder as tb
from tfrecord_builder.errors import DataError, SpecError
from tfrecord_builder.tools.verify import verify

from conftest import write_spec

skimage_data = pytest.importorskip("skimage.data")

# a real photo (scikit-image's coffee, 400 x 600) shrunk to 96 x 128: (height, width)
HEIGHT, WIDTH = 96, 128
# cat, dog (1 x 1 px), eel, fox, ant: [xmin, ymin, xmax, ymax] pixels; dog is dropped by min_size: 5
OBJECTS = [("cat", [10, 10, 40, 40]), ("dog", [50, 50, 51, 51]), ("eel", [60, 10, 120, 30]),
           ("fox", [5, 60, 45, 90]), ("ant", [70, 40, 100, 80])]


def coffee(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(skimage_data.coffee()).resize((WIDTH, HEIGHT), Image.BILINEAR).save(path, quality=92)
    return path


def voc(tmp_path: Path, objects=OBJECTS) -> Path:
    coffee(tmp_path / "VOC" / "JPEGImages" / "coffee.jpg")
    folder = tmp_path / "VOC" / "Annotations"
    folder.mkdir(parents=True)
    root = ElementTree.Element("annotation")
    ElementTree.SubElement(root, "filename").text = "coffee.jpg"
    size = ElementTree.SubElement(root, "size")
    for key, value in (("width", WIDTH), ("height", HEIGHT), ("depth", 3)):
        ElementTree.SubElement(size, key).text = str(value)
    for number, (name, box) in enumerate(objects):
        element = ElementTree.SubElement(root, "object")
        ElementTree.SubElement(element, "name").text = name
        ElementTree.SubElement(element, "difficult").text = str(number % 2)
        corners = ElementTree.SubElement(element, "bndbox")
        for key, value in zip(("xmin", "ymin", "xmax", "ymax"), box):
            ElementTree.SubElement(corners, key).text = str(value)
    ElementTree.ElementTree(root).write(folder / "coffee.xml")
    return folder


def fractions(box: list[float]) -> list[float]:
    xmin, ymin, xmax, ymax = box
    return [ymin / HEIGHT, xmin / WIDTH, ymax / HEIGHT, xmax / WIDTH]


VOC_FEATURES = {
    "image": {"type": "image", "encoding": "jpeg"},
    "objects": {"type": "bbox", "source": "bbox", "format": "xyxy", "units": "pixels", "min_size": 5},
    "labels": {"type": "class_label", "shape": [None], "source": "label",
               "names": ["ant", "cat", "dog", "eel", "fox"]},
    "difficult": {"dtype": "int64", "shape": [None]},
}


def one_record(info) -> dict:
    (record,) = list(tb.read(info.path, "train"))
    return record


def said(caught) -> list[str]:
    return [str(item.message) for item in caught if item.category is tb.BuildWarning]


def test_a_box_dropped_by_min_size_takes_its_label_and_flags_with_it(tmp_path):
    voc(tmp_path)
    spec = {"name": "pets", "source": {"builder": "voc", "path": "VOC/Annotations"}, "features": VOC_FEATURES}
    with pytest.warns(tb.BuildWarning) as caught:
        info = tb.build(write_spec(tmp_path, spec), workers=1)
    record = one_record(info)
    kept = [item for item in OBJECTS if item[0] != "dog"]
    names = VOC_FEATURES["labels"]["names"]
    assert record["objects"].shape == (4, 4)
    np.testing.assert_allclose(record["objects"], [fractions(box) for _, box in kept], rtol=1e-6)
    assert [names[index] for index in record["labels"]] == ["cat", "eel", "fox", "ant"]  # eel's box is eel's
    assert record["difficult"].tolist() == [0, 0, 1, 0]  # dog's 1 went with it
    assert info.spec.features["objects"].per_object == ["labels", "difficult"]
    assert said(caught) == ["feature `objects`: 1 object smaller than `min_size: 5` dropped, each with its "
                            "`labels`, `difficult`"]
    assert verify(info.path).ok


def test_a_keras_hub_batch_gets_as_many_labels_as_boxes(tf, tmp_path):
    voc(tmp_path)
    spec = {"name": "pets", "source": {"builder": "voc", "path": "VOC/Annotations"},
            "features": {**VOC_FEATURES, "image": {"type": "image", "shape": [96, 128, 3]}},
            "label": "labels", "input": {"batch_size": 1, "detection": {"bounding_box_format": "xyxy"}}}
    info = tb.build(write_spec(tmp_path, spec), workers=1)
    images, targets = next(iter(tb.input_fn(info.path, "train", shuffle=False)))
    assert targets["boxes"].shape == (1, 4, 4) and targets["labels"].shape == (1, 4)
    assert targets["labels"].numpy().tolist() == [[1, 3, 4, 0]]
    np.testing.assert_allclose(targets["boxes"].numpy()[0], [box for name, box in OBJECTS if name != "dog"],
                               atol=1e-4)


def test_a_grouped_table_of_one_box_a_row_drops_the_row_whole(tmp_path):
    coffee(tmp_path / "coffee.jpg")
    rows = ["filename,label,xmin,ymin,xmax,ymax,crowd"]
    rows += [f"coffee.jpg,{name},{','.join(map(str, box))},{number}" for number, (name, box) in enumerate(OBJECTS)]
    spec = {"name": "pets", "source": {"builder": "csv", "path": "boxes.csv", "group_by": "filename"},
            "features": {"image": {"type": "image", "source": "filename"},
                         "objects": {"type": "bbox", "columns": ["xmin", "ymin", "xmax", "ymax"], "format": "xyxy",
                                     "units": "pixels", "min_size": 5},
                         "labels": {"dtype": "string", "shape": [None], "source": "label"},
                         "crowd": {"dtype": "int64", "shape": [None]}}}
    info = tb.build(write_spec(tmp_path, spec, {"boxes.csv": "\n".join(rows) + "\n"}), workers=1)
    record = one_record(info)
    assert [label.decode() for label in record["labels"]] == ["cat", "eel", "fox", "ant"]
    assert record["crowd"].tolist() == [0, 2, 3, 4]
    assert record["objects"].shape == (4, 4)
    assert verify(info.path).ok


def test_a_box_outside_a_crop_goes_with_its_label(tmp_path):
    voc(tmp_path, [("cat", [2, 10, 20, 40]), ("eel", [50, 10, 80, 40]), ("fox", [114, 10, 126, 40])])
    # a 96 x 96 centre crop of the 96 x 128 photo keeps x 16..112: cat is cut, fox is outside
    spec = {"name": "pets", "source": {"builder": "voc", "path": "VOC/Annotations"},
            "features": {**VOC_FEATURES, "image": {"type": "image", "shape": [96, 96, 3], "resize": "crop"},
                         "objects": {"type": "bbox", "source": "bbox", "format": "xyxy", "units": "pixels",
                                     "image": "image"}}}
    with pytest.warns(tb.BuildWarning) as caught:
        info = tb.build(write_spec(tmp_path, spec), workers=1)
    record = one_record(info)
    names = VOC_FEATURES["labels"]["names"]
    assert [names[index] for index in record["labels"]] == ["cat", "eel"]
    assert record["difficult"].tolist() == [0, 1]
    np.testing.assert_allclose(record["objects"], [[10 / 96, 0, 40 / 96, 4 / 96], [10 / 96, 34 / 96, 40 / 96, 64 / 96]],
                               atol=1e-6)
    assert said(caught) == [
        "feature `objects`: 1 object cut to the part `resize: crop` keeps of image `image`",
        "feature `objects`: 1 object outside the part `resize: crop` keeps of image `image` dropped, each with its "
        "`labels`, `difficult`"]


def test_a_box_empty_once_clipped_goes_with_its_coco_area_and_mask(tmp_path):
    pytest.importorskip("pycocotools")
    coffee(tmp_path / "images" / "coffee.jpg")
    boxes = [[10, 10, 20, 20], [0, -3, 3, 3], [100, 50, 40, 40]]  # the 2nd is empty once clipped
    annotations = [{"id": 7 + number, "image_id": 1, "category_id": 1, "bbox": box, "area": 100.0 + number,
                    "iscrowd": 0, "segmentation": [[box[0], box[1], box[0] + box[2], box[1], box[0], box[1] + box[3]]]}
                   for number, box in enumerate(boxes)]
    coco = {"images": [{"id": 1, "file_name": "coffee.jpg", "height": HEIGHT, "width": WIDTH}],
            "annotations": annotations, "categories": [{"id": 1, "name": "thing"}]}
    spec = {"name": "things", "source": {"builder": "coco", "path": "coco.json", "images": "images"},
            "features": {"image": {"type": "image"},
                         "objects": {"type": "bbox", "source": "bbox", "format": "xywh", "units": "pixels",
                                     "clip": True},
                         "area": {"dtype": "float32", "shape": [None]},
                         "annotation_id": {"dtype": "int64", "shape": [None]},
                         "masks": {"dtype": "bytes", "shape": [None]}}}
    info = tb.build(write_spec(tmp_path, spec, {"coco.json": json.dumps(coco)}), workers=1)
    record = one_record(info)
    assert record["annotation_id"].tolist() == [7, 9]
    assert record["area"].tolist() == [100.0, 102.0]
    assert len(record["masks"]) == 2
    first = np.asarray(Image.open(io.BytesIO(record["masks"][0])))
    assert first[15, 15] == 1 and first.shape == (HEIGHT, WIDTH)
    assert record["objects"].shape == (2, 4)


def test_lists_that_arent_one_a_box_are_refused_where_a_box_may_be_dropped(tmp_path):
    coffee(tmp_path / "coffee.jpg")
    rows = [{"image": "coffee.jpg", "boxes": [box for _, box in OBJECTS], "labels": [name for name, _ in OBJECTS],
             "tags": ["kitchen", "cup"]}]
    features = {"image": {"type": "image"},
                "objects": {"type": "bbox", "source": "boxes", "format": "xyxy", "units": "pixels", "min_size": 5},
                "labels": {"dtype": "string", "shape": [None]}, "tags": {"dtype": "string", "shape": [None]}}
    files = {"rows.jsonl": "".join(json.dumps(row) + "\n" for row in rows)}
    spec = {"name": "pets", "source": {"builder": "jsonl", "path": "rows.jsonl"}, "features": features}
    with pytest.raises(DataError) as error:
        tb.build(write_spec(tmp_path, spec, files), workers=1)
    assert str(error.value) == (
        "rows.jsonl, line 1: feature `tags` holds 2 values for the 5 objects of `objects`; a dropped object is "
        "dropped whole, so each feature in `objects`'s `per_object:` must hold one value (or row) per box, or none; "
        "name only the features that do in `per_object:`")
    features["objects"]["per_object"] = ["labels"]
    info = tb.build(write_spec(tmp_path, {**spec, "features": features}, files), workers=1, overwrite=True)
    record = one_record(info)
    assert [label.decode() for label in record["labels"]] == ["cat", "eel", "fox", "ant"]
    assert [tag.decode() for tag in record["tags"]] == ["kitchen", "cup"]


def test_per_object_names_features_that_hold_lists(tmp_path):
    features = {"image": {"type": "image"},
                "objects": {"type": "bbox", "source": "boxes", "per_object": ["image"]},
                "labels": {"dtype": "string", "shape": [None]}}
    spec = {"name": "pets", "source": {"builder": "jsonl", "path": "rows.jsonl"}, "features": features}
    with pytest.raises(SpecError) as error:
        tb.load_spec(write_spec(tmp_path, spec, {"rows.jsonl": "{}\n"}))
    assert "features.objects.per_object: expected features holding a value per box (a list: shape [null] or " \
           "[null, k]): labels; received 'image'" in str(error.value)


def test_verify_finds_labels_that_dont_pair_with_the_boxes_left(tmp_path):
    """A dataset whose boxes lost one without its label, as builds before 0.9 made it, fails verify."""
    voc(tmp_path)
    features = {**VOC_FEATURES, "objects": {**VOC_FEATURES["objects"], "per_object": []}}
    spec = {"name": "pets", "source": {"builder": "voc", "path": "VOC/Annotations"}, "features": features}
    info = tb.build(write_spec(tmp_path, spec), workers=1)
    assert len(one_record(info)["labels"]) == 5 and verify(info.path).ok  # as declared: no per-object features
    metadata = Path(info.path) / "tfrecord_builder.json"
    written = json.loads(metadata.read_text())
    del written["spec"]["features"]["objects"]["per_object"]  # what an older build wrote: the default applies
    metadata.write_text(json.dumps(written))
    faults = verify(info.path).faults
    assert faults == ["pets-train.tfrecord-00000-of-00001: record 0: feature `objects`: 4 boxes beside 5 values "
                      "under 'labels', which holds a value (or row) per box"]
