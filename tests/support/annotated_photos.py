"""Annotated photos: scikit-image's astronaut, chelsea, coffee, rocket and camera saved as JPEG,
with boxes placed on their objects, written out as a COCO JSON, Pascal VOC XML files and YOLO text
files, as the annotation tools export them (tests/builders/test_annotations.py and the tests of
the annotation sources read them back)."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

# scikit-image's photos: a test module that imports this one is skipped where it is missing
skimage_data = pytest.importorskip("skimage.data")

# the photos, each with its objects: (category id, name, [x, y, width, height] in pixels)
CATEGORIES = {1: "person", 3: "cat", 7: "cup", 9: "rocket"}  # ids with gaps: classes 0..3 by id
PHOTOS = {
    "astronaut.jpg": ("astronaut", [(1, [140.0, 20.0, 200.0, 240.0]), (9, [400.0, 80.5, 90.0, 150.0])]),
    "chelsea.jpg": ("chelsea", [(3, [80.0, 30.0, 260.0, 240.0])]),
    "coffee.jpg": ("coffee", [(7, [180.0, 40.0, 250.0, 260.0]), (7, [30.0, 10.0, 60.0, 50.0])]),
    "rocket.jpg": ("rocket", [(9, [270.0, 60.0, 80.0, 330.0])]),
    "camera.jpg": ("camera", []),  # an image without objects: a record with no boxes
}
IDS = {name: 10 + index * 3 for index, name in enumerate(PHOTOS)}  # COCO image ids


def photo(name: str) -> np.ndarray:
    """A photo's pixels, RGB (a grey one's plane thrice)."""
    pixels = getattr(skimage_data, PHOTOS[name][0])()
    return np.stack([pixels] * 3, axis=-1) if pixels.ndim == 2 else pixels


def save_photos(folder: Path) -> dict[str, tuple[int, int]]:
    """The photos as JPEG files in `folder`; their (height, width)."""
    folder.mkdir(parents=True, exist_ok=True)
    sizes = {}
    for name in PHOTOS:
        pixels = photo(name)
        Image.fromarray(pixels).save(folder / name, quality=90)
        sizes[name] = pixels.shape[:2]
    return sizes


# ---- COCO ------------------------------------------------------------------------------------------
def coco_json(sizes: dict[str, tuple[int, int]]) -> dict:
    """The photos' COCO instances document (`sizes`: each photo's (height, width))."""
    images, annotations = [], []
    for name, (_, objects) in PHOTOS.items():
        height, width = sizes[name]
        images.append({"id": IDS[name], "file_name": name, "height": height, "width": width})
        for category, box in objects:
            annotations.append({"id": 100 + len(annotations), "image_id": IDS[name], "category_id": category,
                                "bbox": box, "area": box[2] * box[3] - 1.5, "iscrowd": len(annotations) % 2,
                                "segmentation": [[box[0], box[1], box[0] + box[2], box[1], box[0], box[1] + box[3]]]})
    annotations.reverse()  # annotations in any order: grouped by image, in the file's order
    return {"info": {"description": "test"}, "images": images, "annotations": annotations,
            "categories": [{"id": key, "name": value, "supercategory": "thing"}
                           for key, value in reversed(list(CATEGORIES.items()))]}


def write_coco(tmp_path: Path, change=None) -> Path:
    """The photos in images/ and their JSON, annotations/instances.json (`change`: edits the document first)."""
    sizes = save_photos(tmp_path / "images")
    document = coco_json(sizes)
    if change:
        change(document)
    path = tmp_path / "annotations" / "instances.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1))
    return path


COCO_SOURCE = {"builder": "coco", "path": "annotations/instances.json", "images": "images/"}


# ---- Pascal VOC ------------------------------------------------------------------------------------
POSES = ["Frontal", "Left", "Unspecified", "Rear"]


def write_voc(tmp_path: Path) -> Path:
    """VOC/Annotations/*.xml beside VOC/JPEGImages/*.jpg, boxes as xmin ymin xmax ymax (1-based pixels)."""
    sizes = save_photos(tmp_path / "VOC" / "JPEGImages")
    folder = tmp_path / "VOC" / "Annotations"
    folder.mkdir(parents=True)
    count = 0
    for name, (_, objects) in PHOTOS.items():
        height, width = sizes[name]
        root = ElementTree.Element("annotation")
        ElementTree.SubElement(root, "folder").text = "VOC2012"
        ElementTree.SubElement(root, "filename").text = name
        size = ElementTree.SubElement(root, "size")
        for key, value in (("width", width), ("height", height), ("depth", 3)):
            ElementTree.SubElement(size, key).text = str(value)
        for category, (x, y, w, h) in objects:
            element = ElementTree.SubElement(root, "object")
            ElementTree.SubElement(element, "name").text = CATEGORIES[category]
            ElementTree.SubElement(element, "pose").text = POSES[count % 4]
            ElementTree.SubElement(element, "truncated").text = str(count % 2)
            ElementTree.SubElement(element, "difficult").text = str((count // 2) % 2)
            box = ElementTree.SubElement(element, "bndbox")
            for key, value in (("xmin", x + 1), ("ymin", y + 1), ("xmax", x + w), ("ymax", y + h)):
                ElementTree.SubElement(box, key).text = f"{value:g}"
            count += 1
        ElementTree.ElementTree(root).write(folder / (Path(name).stem + ".xml"))
    return folder


# ---- YOLO ------------------------------------------------------------------------------------------
NAMES = ["person", "cat", "cup", "rocket"]


def write_yolo(tmp_path: Path, names: object = None) -> tuple[Path, dict[str, tuple[int, int]]]:
    """dataset/images/train/*.jpg and dataset/labels/train/*.txt (class cx cy w h, fractions), data.yaml."""
    sizes = save_photos(tmp_path / "dataset" / "images" / "train")
    labels = tmp_path / "dataset" / "labels" / "train"
    labels.mkdir(parents=True)
    for name, (_, objects) in PHOTOS.items():
        height, width = sizes[name]
        if name == "camera.jpg":
            continue  # no labels file: an image without objects
        lines = [f"{NAMES.index(CATEGORIES[category])} {(x + w / 2) / width:.6f} {(y + h / 2) / height:.6f} "
                 f"{w / width:.6f} {h / height:.6f}" for category, (x, y, w, h) in objects]
        (labels / (Path(name).stem + ".txt")).write_text("\n".join(lines) + "\n")
    (tmp_path / "dataset" / "data.yaml").write_text(yaml.safe_dump(
        {"path": ".", "train": "images/train", "names": names if names is not None else dict(enumerate(NAMES))}))
    return tmp_path / "dataset", sizes
