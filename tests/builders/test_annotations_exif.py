"""EXIF-turned photos with boxes, from each annotation source: COCO JSON, VOC XML, YOLO text and
a CSV of boxes grouped by file.

scikit-image's chelsea (451 wide, 300 high as a viewer shows it) is stored turned with EXIF
orientation 6, 8 and 3 (and once upright); the boxes are drawn on the upright view, as a person
labelling it in a viewer would. Every stored box must be the expected fraction of the upright image,
and must land on the object: the decoded image's crop at the box equals the upright photo's crop.
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image, ImageOps

import tfrecord_builder as tb

from conftest import write_spec

skimage_data = pytest.importorskip("skimage.data")

UPRIGHT = skimage_data.chelsea()  # (300, 451, 3)
HEIGHT, WIDTH = UPRIGHT.shape[:2]
# how each orientation stores the upright view (a viewer turns it back): np.rot90 turns anticlockwise
STORED = {1: lambda p: p, 6: lambda p: np.rot90(p, 1), 8: lambda p: np.rot90(p, -1), 3: lambda p: np.rot90(p, 2)}
BOXES = [[140, 40, 290, 160], [20, 180, 120, 280]]  # xyxy pixels on the upright view: the face, a paw
LABELS = ["cat", "cat"]


def save_turned(folder: Path) -> list[str]:
    """chelsea stored as each orientation has it; the file names."""
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for orientation, turn in STORED.items():
        exif = Image.Exif()
        exif[0x0112] = orientation
        name = f"chelsea_{orientation}.jpg"
        Image.fromarray(np.ascontiguousarray(turn(UPRIGHT))).save(folder / name, quality=95, exif=exif)
        with Image.open(folder / name) as image:  # what a viewer shows is the upright photo
            assert ImageOps.exif_transpose(image).size == (WIDTH, HEIGHT)
        names.append(name)
    return names


def write_coco(root: Path) -> dict:
    names = save_turned(root / "images")
    images = [{"id": number, "file_name": name, "height": HEIGHT, "width": WIDTH} for number, name in enumerate(names)]
    annotations = [{"id": 10 * number + k, "image_id": number, "category_id": 5, "iscrowd": 0,
                    "bbox": [x0, y0, x1 - x0, y1 - y0], "area": float((x1 - x0) * (y1 - y0))}
                   for number in range(len(names)) for k, (x0, y0, x1, y1) in enumerate(BOXES)]
    (root / "instances.json").write_text(json.dumps({"images": images, "annotations": annotations,
                                                     "categories": [{"id": 5, "name": "cat"}]}))
    return {"builder": "coco", "path": "instances.json", "images": "images"}


def write_voc(root: Path) -> dict:
    names = save_turned(root / "JPEGImages")
    (root / "Annotations").mkdir()
    for name in names:
        xml = ElementTree.Element("annotation")
        ElementTree.SubElement(xml, "filename").text = name
        size = ElementTree.SubElement(xml, "size")
        for key, value in (("width", WIDTH), ("height", HEIGHT), ("depth", 3)):
            ElementTree.SubElement(size, key).text = str(value)
        for box in BOXES:
            element = ElementTree.SubElement(xml, "object")
            ElementTree.SubElement(element, "name").text = "cat"
            corners = ElementTree.SubElement(element, "bndbox")
            for key, value in zip(("xmin", "ymin", "xmax", "ymax"), box):
                ElementTree.SubElement(corners, key).text = str(value)
        ElementTree.ElementTree(xml).write(root / "Annotations" / (Path(name).stem + ".xml"))
    return {"builder": "voc", "path": "Annotations", "images": "JPEGImages"}


def write_yolo(root: Path) -> dict:
    names = save_turned(root / "images")
    (root / "labels").mkdir()
    for name in names:  # fractions of the upright view, written exactly (powers of two apart)
        lines = [f"0 {(x0 + x1) / 2 / WIDTH!r} {(y0 + y1) / 2 / HEIGHT!r} {(x1 - x0) / WIDTH!r} {(y1 - y0) / HEIGHT!r}"
                 for x0, y0, x1, y1 in BOXES]
        (root / "labels" / (Path(name).stem + ".txt")).write_text("\n".join(lines) + "\n")
    (root / "data.yaml").write_text(yaml.safe_dump({"names": ["cat"]}))
    return {"builder": "yolo", "path": ".", "names_file": "data.yaml"}


def write_csv(root: Path) -> dict:
    names = save_turned(root / "photos")
    rows = ["filename,path,xmin,ymin,xmax,ymax,label"]
    rows += [f"{name},photos/{name},{x0},{y0},{x1},{y1},cat" for name in names for x0, y0, x1, y1 in BOXES]
    (root / "boxes.csv").write_text("\n".join(rows) + "\n")
    return {"builder": "image_manifest", "path": "boxes.csv", "group_by": "filename"}


SOURCES = {  # the source, and how its boxes are declared
    "coco": (write_coco, {"source": "bbox", "format": "xywh", "units": "pixels"}),
    "voc": (write_voc, {"source": "bbox", "format": "xyxy", "units": "pixels"}),
    "yolo": (write_yolo, {"source": "bbox", "format": "cxcywh", "units": "fraction"}),
    "csv": (write_csv, {"columns": ["xmin", "ymin", "xmax", "ymax"], "format": "xyxy", "units": "pixels"}),
}


@pytest.mark.parametrize("kind", list(SOURCES))
def test_boxes_drawn_on_the_upright_view_land_on_the_object_of_exif_turned_photos(tmp_path, kind):
    write, boxes = SOURCES[kind]
    source = write(tmp_path)
    image = {"type": "image", "encoding": "png", **({"source": "path"} if kind == "csv" else {})}
    spec = {"name": "turned", "source": source, "output": {"shuffle": False},
            "features": {"image": image, "filename": {"dtype": "string"},
                         "objects": {"type": "bbox", "image": "image", **boxes},
                         "labels": {"type": "class_label", "shape": [None], "source": "label", "names": ["cat"]}}}
    info = tb.build(write_spec(tmp_path, spec), workers=1)
    got = {Path(record["filename"].decode()).name: record for record in tb.read(info.path, "train")}
    assert sorted(got) == [f"chelsea_{orientation}.jpg" for orientation in sorted(STORED)]
    expected = np.array([[y0 / HEIGHT, x0 / WIDTH, y1 / HEIGHT, x1 / WIDTH] for x0, y0, x1, y1 in BOXES], np.float32)
    for name, record in got.items():
        assert record["image"].shape == (HEIGHT, WIDTH, 3), name  # stored upright
        np.testing.assert_allclose(record["objects"], expected, rtol=0, atol=2**-23)
        assert record["labels"].tolist() == [0, 0]
        for ymin, xmin, ymax, xmax in record["objects"].astype(np.float64):
            rows = slice(round(ymin * HEIGHT), round(ymax * HEIGHT))
            columns = slice(round(xmin * WIDTH), round(xmax * WIDTH))
            crop, truth = record["image"][rows, columns].astype(int), UPRIGHT[rows, columns].astype(int)
            assert np.abs(crop - truth).mean() < 4, name  # the object itself (JPEG's loss aside)
