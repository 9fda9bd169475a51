"""A COCO dataset with instance masks, made in a test's folder: random photos (JPEG), objects
whose polygons give each one a mask (one PNG an object, by pycocotools), and 80 categories of
which only a few have objects, as COCO subsets have. What the report, `inspect` and the
statistics tests show binary values and sparse classes with."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from PIL import Image

import tfrecord_builder as tb

from conftest import write_spec

NUM_CATEGORIES = 80
# category ids of the objects, in turn: 5 of the 80 categories, each a different number of times
OBJECT_CATEGORIES = [3, 1, 3, 7, 3, 1, 9, 3, 1, 7, 3, 12, 1, 3, 7, 9, 1, 7]  # 6, 5, 4, 2 and 1 of 18


def coco_masks_spec(folder: Path, images: int = 6, size: tuple[int, int] = (64, 48), per_image: int = 3) -> Path:
    """Writes the photos, `instances.json` and a spec reading image, boxes, labels and masks into
    `folder`; returns the spec's path. `size` is (width, height)."""
    rng = np.random.default_rng(38)
    width, height = size
    (folder / "images").mkdir(parents=True, exist_ok=True)
    document = {"images": [], "annotations": [],
                "categories": [{"id": number, "name": f"class{number}"} for number in range(1, NUM_CATEGORIES + 1)]}
    for index in range(images):
        name = f"photo{index}.jpg"
        Image.fromarray(rng.integers(0, 256, (height, width, 3), dtype=np.uint8)).save(folder / "images" / name)
        document["images"].append({"id": index + 1, "file_name": name, "width": width, "height": height})
        for _ in range(per_image):
            x, y = rng.uniform(0, width * 0.5), rng.uniform(0, height * 0.5)
            w, h = rng.uniform(width * 0.2, width * 0.5), rng.uniform(height * 0.2, height * 0.5)
            category = OBJECT_CATEGORIES[len(document["annotations"]) % len(OBJECT_CATEGORIES)]
            document["annotations"].append({
                "id": len(document["annotations"]) + 1, "image_id": index + 1, "category_id": category,
                "bbox": [x, y, w, h], "area": w * h, "iscrowd": 0,
                "segmentation": [[x, y, x + w, y, x + w / 2, y + h, x, y + h / 2]]})
    (folder / "instances.json").write_text(json.dumps(document))
    spec = {"name": "coco_masks", "version": "1.0.0",
            "source": {"builder": "coco", "path": "instances.json", "images": "images/"},
            "features": {"image": {"type": "image", "encoding": "jpeg"},
                         "boxes": {"type": "bbox", "source": "bbox", "format": "xywh", "units": "pixels",
                                   "image": "image"},
                         "labels": {"type": "class_label", "shape": [None], "source": "label"},
                         "masks": {"dtype": "bytes", "shape": [None], "key": "image/object/mask"}},
            "output": {"shards": 1}}
    return write_spec(folder, spec)


def build_coco_masks(folder: Path, **options) -> tb.DatasetInfo:
    """The dataset of `coco_masks_spec`, built into `folder/out`."""
    return tb.build(coco_masks_spec(folder, **options), output=folder / "out", workers=1)
