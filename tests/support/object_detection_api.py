"""The spec of docs/detection.md's section "For the Object Detection API and TF Model Garden", and
what it is built from: a COCO JSON of real photographs (scikit-image's astronaut, chelsea and
coffee as JPEG files) with boxes and polygons placed on their objects. TF Model Garden's decoder
(tests/build/test_model_garden.py) and Datumaro's importer (tests/build/test_datumaro.py) read it."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from PIL import Image

from conftest import ROOT

# scikit-image's photos: a test module that imports this one is skipped where it is missing
skimage_data = pytest.importorskip("skimage.data")

CATEGORIES = {1: "person", 3: "cat", 7: "cup", 9: "rocket"}  # ids with gaps: classes 1..4 in the label map
# each photo's objects: (category id, [x, y, width, height] in pixels, iscrowd); a polygon inside each box
PHOTOS = {
    "astronaut.jpg": ("astronaut", [(1, [140.0, 20.0, 200.0, 240.0], 0), (9, [400.0, 80.5, 90.0, 150.0], 1)]),
    "chelsea.jpg": ("chelsea", [(3, [80.0, 30.0, 260.0, 240.0], 0)]),
    "coffee.jpg": ("coffee", [(7, [180.0, 40.0, 250.0, 260.0], 0), (7, [30.0, 10.0, 60.0, 50.0], 0)]),
}


def coco_files(folder: Path) -> Path:
    """The photos as JPEG files in folder/images and their COCO JSON, folder/annotations/instances.json."""
    (folder / "images").mkdir(parents=True)
    images, annotations = [], []
    for number, (name, (photo, objects)) in enumerate(PHOTOS.items()):
        pixels = getattr(skimage_data, photo)()
        Image.fromarray(pixels).save(folder / "images" / name, quality=90)
        images.append({"id": 20 + number, "file_name": name, "height": pixels.shape[0], "width": pixels.shape[1]})
        for category, (x, y, w, h), crowd in objects:
            polygon = [x + 2, y + 3, x + w - 1, y + h / 3, x + w / 2, y + h - 2, x + 1, y + h / 2]
            annotations.append({"id": 100 + len(annotations), "image_id": 20 + number, "category_id": category,
                                "bbox": [x, y, w, h], "area": w * h / 2 + 0.25, "iscrowd": crowd,
                                "segmentation": [polygon]})
    path = folder / "annotations" / "instances.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"images": images, "annotations": annotations,
                                "categories": [{"id": key, "name": value} for key, value in CATEGORIES.items()]}))
    return path


def documented_spec() -> str:
    """The spec of docs/detection.md's section for the Object Detection API, with our file's name."""
    text = (ROOT / "docs" / "detection.md").read_text(encoding="utf-8")
    section = text.split("## For the Object Detection API and TF Model Garden", 1)[1]
    spec = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    return spec.replace("instances_train.json", "instances.json")
