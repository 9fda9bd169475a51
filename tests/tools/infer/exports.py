"""Annotated photos written as the annotation tools export them: Roboflow's COCO, VOC, YOLO and
"Tensorflow CSV" (a folder a split: train/, valid/, test/), CVAT's darknet "YOLO 1.1", a
labelme2coco `annotations.json` beside an images folder.

The photos and their objects are photos.py's (scikit-image's astronaut, chelsea, coffee
and camera, with boxes placed on them); `expected` gives each photo's boxes as the build must
store them, [ymin, xmin, ymax, xmax] fractions computed in float64 from what was written.
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import yaml

import tfrecord_builder as tb

from .photos import CATEGORIES, PHOTOS, expected_fractions, save_photos

SPLITS = {"train": ["astronaut.jpg", "camera.jpg"], "valid": ["chelsea.jpg"], "test": ["coffee.jpg"]}
NAMES = sorted(CATEGORIES.values())  # Roboflow numbers the classes in name order: cat, cup, person, rocket
DATASET = "photos"  # Roboflow's category 0: the dataset's name, supercategory of every class


def objects(name: str) -> list[tuple[str, list[float]]]:
    """A photo's objects: (class name, [x, y, width, height] pixels)."""
    return [(CATEGORIES[category], box) for category, box in PHOTOS[name][1]]


def roboflow_coco(root: Path) -> dict[str, tuple[int, int]]:
    """root/SPLIT/_annotations.coco.json beside the split's photos; every photo's (height, width)."""
    sizes = {}
    for split, names in SPLITS.items():
        sizes.update(save_photos(root / split, names))
        categories = [{"id": 0, "name": DATASET, "supercategory": "none"}] + [
            {"id": index + 1, "name": name, "supercategory": DATASET} for index, name in enumerate(NAMES)]
        images, annotations = [], []
        for number, name in enumerate(names):
            height, width = sizes[name]
            images.append({"id": number, "license": 1, "file_name": name, "height": height, "width": width,
                           "date_captured": "2024-05-01T10:00:00+00:00"})
            for label, box in objects(name):
                annotations.append({"id": len(annotations), "image_id": number, "category_id": NAMES.index(label) + 1,
                                    "bbox": box, "area": box[2] * box[3], "segmentation": [], "iscrowd": 0})
        document = {"info": {"year": "2024", "description": "Exported from roboflow.com"}, "licenses": [],
                    "categories": categories, "images": images, "annotations": annotations}
        (root / split / "_annotations.coco.json").write_text(json.dumps(document))
    return sizes


def voc_xml(folder: Path, name: str, size: tuple[int, int], written: dict[str, list[list[float]]]) -> None:
    """`folder/STEM.xml` as Roboflow writes it (whole pixels, every flag 0, pose Unspecified)."""
    height, width = size
    root = ElementTree.Element("annotation")
    for key, value in (("folder", ""), ("filename", name), ("path", name)):
        ElementTree.SubElement(root, key).text = value
    ElementTree.SubElement(ElementTree.SubElement(root, "source"), "database").text = "roboflow.com"
    element = ElementTree.SubElement(root, "size")
    for key, value in (("width", width), ("height", height), ("depth", 3)):
        ElementTree.SubElement(element, key).text = str(value)
    ElementTree.SubElement(root, "segmented").text = "0"
    written[name] = []
    for label, (x, y, w, h) in objects(name):
        item = ElementTree.SubElement(root, "object")
        for key, value in (("name", label), ("pose", "Unspecified"), ("truncated", "0"), ("difficult", "0"),
                           ("occluded", "0")):
            ElementTree.SubElement(item, key).text = value
        box = ElementTree.SubElement(item, "bndbox")
        corners = [round(x), round(y), round(x + w), round(y + h)]
        for key, value in zip(("xmin", "xmax", "ymin", "ymax"), (corners[0], corners[2], corners[1], corners[3])):
            ElementTree.SubElement(box, key).text = str(value)
        written[name].append([float(value) for value in corners])
    ElementTree.ElementTree(root).write(folder / (Path(name).stem + ".xml"))


def roboflow_voc(root: Path) -> tuple[dict[str, tuple[int, int]], dict[str, list[list[float]]]]:
    """root/SPLIT/STEM.xml beside root/SPLIT/STEM.jpg; sizes and the corners written."""
    sizes, written = {}, {}
    for split, names in SPLITS.items():
        sizes.update(save_photos(root / split, names))
        for name in names:
            voc_xml(root / split, name, sizes[name], written)
    return sizes, written


def yolo_lines(name: str, size: tuple[int, int]) -> list[list[float]]:
    """class cx cy w h, six decimals as exporters write them."""
    height, width = size
    return [[NAMES.index(label), round((x + w / 2) / width, 6), round((y + h / 2) / height, 6),
             round(w / width, 6), round(h / height, 6)] for label, (x, y, w, h) in objects(name)]


def write_lines(path: Path, lines: list[list[float]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(" ".join(f"{value:g}" if index else str(value) for index, value in enumerate(line)) + "\n"
                            for line in lines))


def roboflow_yolo(root: Path) -> dict[str, list[list[float]]]:
    """root/SPLIT/images, root/SPLIT/labels and root/data.yaml (`train: ../train/images`, ...)."""
    written = {}
    for split, names in SPLITS.items():
        sizes = save_photos(root / split / "images", names)
        (root / split / "labels").mkdir(parents=True)
        for name in names:
            lines = yolo_lines(name, sizes[name])
            written[name] = [line[1:] for line in lines]
            write_lines(root / split / "labels" / (Path(name).stem + ".txt"), lines)
    (root / "data.yaml").write_text(yaml.safe_dump({
        "train": "../train/images", "val": "../valid/images", "test": "../test/images", "nc": len(NAMES),
        "names": NAMES, "roboflow": {"workspace": "tests", "project": DATASET, "version": 1}}, sort_keys=False))
    (root / "README.roboflow.txt").write_text("exported from roboflow.com\n")
    return written


def darknet(root: Path, splits: dict[str, list[str]]) -> dict[str, list[list[float]]]:
    """CVAT's YOLO 1.1: obj.data, obj.names, obj_SPLIT_data/ (images, .txt beside), SPLIT.txt."""
    written = {}
    settings = [f"classes = {len(NAMES)}"]
    for split, names in splits.items():
        folder = root / f"obj_{split}_data"
        sizes = save_photos(folder, names)
        for name in names:
            lines = yolo_lines(name, sizes[name])
            written[name] = [line[1:] for line in lines]
            write_lines(folder / (Path(name).stem + ".txt"), lines)  # (an empty file: no objects)
        (root / f"{split}.txt").write_text("".join(f"data/obj_{split}_data/{name}\n" for name in names))
        settings.append(f"{split} = data/{split}.txt")
    (root / "obj.names").write_text("".join(f"{name}\n" for name in NAMES))
    (root / "obj.data").write_text("\n".join(settings + ["names = data/obj.names", "backup = backup/"]) + "\n")
    return written


def expected(sizes: dict[str, tuple[int, int]], form: str = "xywh",
             written: dict[str, list[list[float]]] | None = None) -> dict[str, list[list[float]]]:
    """Each photo's boxes as stored: [ymin, xmin, ymax, xmax] fractions."""
    if written is None:
        written = {name: [box for _, box in objects(name)] for name in sizes}
    scale = (lambda name: (1, 1)) if form == "cxcywh" else sizes.__getitem__
    return {name: [expected_fractions(box, form, scale(name)) for box in boxes] for name, boxes in written.items()}


def infer_build(tmp_path: Path, data: Path) -> tuple[str, dict, dict[str, dict[str, dict]], Path]:
    """tb.infer -> the spec file -> tb.build as written -> each split's records by photo name;
    also the spec's path."""
    spec = tmp_path / "specs" / "det.yaml"
    spec.parent.mkdir(exist_ok=True)
    text = tb.infer(data, spec)
    spec.write_text(text)
    info = tb.build(spec, output=tmp_path / "out", workers=1, progress=False)
    splits = {split: {Path(record["filename"].decode()).name: record for record in tb.read(info.path, split)}
              for split in info.splits}
    return text, yaml.safe_load(text), splits, spec


def assert_records(splits: dict[str, dict[str, dict]], boxes: dict[str, list[list[float]]],
                   layout: dict[str, list[str]] | None = SPLITS) -> None:
    """Every photo in its split (by `layout`), with its boxes (float32 of the float64 fractions)
    and its classes (by name order)."""
    if layout is not None:
        assert {split: sorted(records) for split, records in splits.items()} == \
            {split: sorted(names) for split, names in layout.items()}
    records = {name: record for split in splits.values() for name, record in split.items()}
    assert sorted(records) == sorted(boxes)
    for name, record in records.items():
        np.testing.assert_array_equal(record["objects"], np.array(boxes[name], np.float32).reshape(-1, 4))
        assert record["labels"].tolist() == [NAMES.index(label) for label, _ in objects(name)], name
