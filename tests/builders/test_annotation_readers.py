"""Every box, class and attribute of each annotation source equal to the source's own view, through
`tb.read`, `tb.input_fn` and TensorFlow Datasets (tests/builders/test_annotations.py checks
`tb.read` with boxes as raw numbers; here they are `type: bbox` fractions, through every reader).

The source's view: pycocotools' for the COCO JSON, the XML values for VOC, the YOLO numbers
converted; each box as [ymin, xmin, ymax, xmax] fractions of its image.
"""
from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pytest

import tfrecord_builder as tb

from conftest import write_spec
from support.annotated_photos import COCO_SOURCE, PHOTOS, write_coco, write_voc, write_yolo

BOXES = {"coco": ("xywh", "pixels"), "voc": ("xyxy", "pixels"), "yolo": ("cxcywh", "fraction")}
ATTRIBUTES = {"coco": ["iscrowd", "category_id"], "voc": ["difficult", "truncated"], "yolo": ["class_id"]}


def coco_view(tmp_path: Path):
    from pycocotools.coco import COCO

    path = write_coco(tmp_path)
    api = COCO(str(path))
    names = [category["name"] for category in api.loadCats(sorted(api.getCatIds()))]
    view = {}
    for image in api.loadImgs(api.getImgIds()):
        height, width = image["height"], image["width"]
        objects = api.loadAnns(api.getAnnIds(imgIds=[image["id"]]))
        view[image["file_name"]] = {
            "objects": [[y / height, x / width, (y + h) / height, (x + w) / width] for x, y, w, h in
                        (annotation["bbox"] for annotation in objects)],
            "labels": [names.index(api.loadCats(a["category_id"])[0]["name"]) for a in objects],
            "iscrowd": [a["iscrowd"] for a in objects], "category_id": [a["category_id"] for a in objects]}
    return COCO_SOURCE, view


def voc_view(tmp_path: Path):
    folder = write_voc(tmp_path)
    names = sorted({element.text for xml in folder.glob("*.xml") for element in ElementTree.parse(xml).iter("name")})
    view = {}
    for xml in folder.glob("*.xml"):
        root = ElementTree.parse(xml).getroot()
        height, width = int(root.findtext("size/height")), int(root.findtext("size/width"))
        objects = root.findall("object")
        corners = [[float(o.findtext(f"bndbox/{key}")) for key in ("xmin", "ymin", "xmax", "ymax")] for o in objects]
        view[root.findtext("filename")] = {
            "objects": [[b / height, a / width, d / height, c / width] for a, b, c, d in corners],
            "labels": [names.index(o.findtext("name")) for o in objects],
            "difficult": [int(o.findtext("difficult")) for o in objects],
            "truncated": [int(o.findtext("truncated")) for o in objects]}
    return {"builder": "voc", "path": "VOC/Annotations"}, view


def yolo_view(tmp_path: Path):
    dataset, _ = write_yolo(tmp_path)
    view = {}
    for name in PHOTOS:
        labels = dataset / "labels" / "train" / (Path(name).stem + ".txt")
        rows = [[float(word) for word in line.split()] for line in labels.read_text().splitlines()] \
            if labels.exists() else []
        view[f"images/train/{name}"] = {
            "objects": [[cy - h / 2, cx - w / 2, cy + h / 2, cx + w / 2] for _, cx, cy, w, h in rows],
            "labels": [int(row[0]) for row in rows], "class_id": [int(row[0]) for row in rows]}
    return {"builder": "yolo", "path": "dataset", "names_file": "dataset/data.yaml"}, view


VIEWS = {"coco": coco_view, "voc": voc_view, "yolo": yolo_view}


@pytest.mark.parametrize("kind", list(VIEWS))
def test_every_box_class_and_attribute_equals_the_sources_view_through_every_reader(tf, tmp_path, kind):
    tfds = pytest.importorskip("tensorflow_datasets")
    if kind == "coco":
        pytest.importorskip("pycocotools")
    source, view = VIEWS[kind](tmp_path)
    form, units = BOXES[kind]
    per_object = {name: {"dtype": "int64", "shape": [None]} for name in ATTRIBUTES[kind]}
    spec = {"name": "det", "version": "1.0.0", "source": source, "output": {"shuffle": False},
            "features": {"image": {"type": "image", "encoding": "jpeg"}, "filename": {"dtype": "string"},
                         "objects": {"type": "bbox", "source": "bbox", "format": form, "units": units,
                                     "image": "image"},
                         "labels": {"type": "class_label", "shape": [None], "source": "label"}, **per_object}}
    info = tb.build(write_spec(tmp_path, spec), workers=1)
    fields = ["labels", *ATTRIBUTES[kind]]

    def check(name: str, objects, values: dict) -> None:
        expected = view[name]
        np.testing.assert_allclose(np.asarray(objects, np.float64).reshape(-1, 4),
                                   np.array(expected["objects"], np.float64).reshape(-1, 4), rtol=0, atol=2**-24)
        for field in fields:
            assert np.asarray(values[field]).tolist() == expected[field], (name, field)

    read = list(tb.read(info.path, "train"))
    order = [record["filename"].decode() for record in read]
    assert sorted(order) == sorted(view)
    for record in read:
        assert record["objects"].dtype == np.float32
        check(record["filename"].decode(), record["objects"], record)
    batches = list(tb.input_fn(info.path, "train", batch_size=1, shuffle=False))
    assert [batch["filename"][0].numpy().decode() for batch in batches] == order
    for batch in batches:
        check(batch["filename"][0].numpy().decode(), batch["objects"][0].numpy(),
              {field: batch[field][0].numpy() for field in fields})
    builder = tfds.builder_from_directory(info.path)
    examples = list(tfds.as_numpy(builder.as_dataset(split="train", shuffle_files=False)))
    assert [example["filename"].decode() for example in examples] == order
    for example in examples:
        check(example["filename"].decode(), example["objects"], example)
