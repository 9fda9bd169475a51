"""The annotated photos of the `infer` tests: scikit-image's astronaut, chelsea, coffee and camera,
saved as JPEG, with boxes placed on them, and the boxes as a build must store them
(test_annotations.py writes them as COCO, VOC and YOLO; exports.py as the annotation tools export them)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

# scikit-image's photos: a test module that imports this one is skipped where it is missing
skimage_data = pytest.importorskip("skimage.data")

CATEGORIES = {1: "person", 3: "cat", 7: "cup", 9: "rocket"}  # ids with gaps: classes 0..3 by id
NAMES = ["person", "cat", "cup", "rocket"]
# each photo's objects: (category id, [x, y, width, height] in pixels)
PHOTOS = {
    "astronaut.jpg": ("astronaut", [(1, [140.0, 20.0, 200.0, 240.0]), (9, [400.0, 80.5, 90.0, 150.0])]),
    "chelsea.jpg": ("chelsea", [(3, [80.0, 30.0, 260.0, 240.0])]),
    "coffee.jpg": ("coffee", [(7, [180.0, 40.0, 250.0, 260.0]), (7, [30.0, 10.0, 60.0, 50.0])]),
    "camera.jpg": ("camera", []),  # no objects: a record with no boxes
}


def save_photos(folder: Path, names=PHOTOS) -> dict[str, tuple[int, int]]:
    """The photos `names` as JPEG files in `folder`; their (height, width)."""
    folder.mkdir(parents=True, exist_ok=True)
    sizes = {}
    for name in names:
        pixels = getattr(skimage_data, PHOTOS[name][0])()
        pixels = np.stack([pixels] * 3, axis=-1) if pixels.ndim == 2 else pixels
        Image.fromarray(pixels).save(folder / name, quality=90)
        sizes[name] = pixels.shape[:2]
    return sizes


def coco_document(sizes: dict[str, tuple[int, int]]) -> dict:
    """The COCO instances document of the photos `sizes` names (each one's (height, width))."""
    images, annotations = [], []
    for number, name in enumerate(sizes):
        height, width = sizes[name]
        images.append({"id": 10 + number, "file_name": name, "height": height, "width": width})
        for category, box in PHOTOS[name][1]:
            annotations.append({"id": 100 + len(annotations), "image_id": 10 + number, "category_id": category,
                                "bbox": box, "area": box[2] * box[3] - 1.5, "iscrowd": len(annotations) % 2})
    return {"info": {"description": "test"}, "images": images, "annotations": annotations,
            "categories": [{"id": key, "name": value} for key, value in CATEGORIES.items()]}


def expected_fractions(box: list[float], form: str, size: tuple[int, int]) -> list[float]:
    """[ymin, xmin, ymax, xmax] fractions of a box as the format writes it (float64 arithmetic)."""
    height, width = size
    a, b, c, d = box
    if form == "xywh":
        return [b / height, a / width, (b + d) / height, (a + c) / width]
    if form == "xyxy":
        return [b / height, a / width, d / height, c / width]
    return [b - d / 2, a - c / 2, b + d / 2, a + c / 2]
