"""Writes data/coins/: scikit-image's `coins` photograph, scaled, flipped and lit 32 ways, each
coin's box found by a threshold, with a COCO instances JSON. Run once: `python data/make_coins.py`."""
from __future__ import annotations

import json
import os
import random

import numpy as np
from PIL import Image, ImageEnhance
from scipy import ndimage
from skimage import data, filters, measure, segmentation

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "coins")
IMAGES = 32
CATEGORIES = [{"id": 3, "name": "small"}, {"id": 7, "name": "large"}]  # COCO-like: ids not 0, 1


def coins() -> list[tuple[list[int], int]]:
    """Each coin of the photo: its box [ymin, xmin, ymax, xmax) in pixels, and its area."""
    # scikit-image's own segmentation of this photo: a watershed of the Sobel gradient from markers
    # of sure background (dark) and sure coin (bright), holes filled
    photo = data.coins()
    markers = np.zeros_like(photo)
    markers[photo < 30], markers[photo > 150] = 1, 2
    mask = segmentation.watershed(filters.sobel(photo), markers) == 2
    regions = measure.regionprops(measure.label(ndimage.binary_fill_holes(mask)))
    return [(list(region.bbox), int(region.area)) for region in regions if region.area >= 200]


def main() -> None:
    random.seed(29)
    found = coins()
    cut = sorted(area for _, area in found)[len(found) // 2]
    photo = Image.fromarray(data.coins()).convert("RGB")
    os.makedirs(os.path.join(OUT, "images"), exist_ok=True)
    images, annotations = [], []
    for number in range(1, IMAGES + 1):
        scale = random.uniform(0.45, 0.65)
        flip_x, flip_y = random.random() < 0.5, random.random() < 0.5
        width, height = round(photo.width * scale), round(photo.height * scale)
        image = photo.resize((width, height), Image.Resampling.BILINEAR)
        image = ImageEnhance.Brightness(image).enhance(random.uniform(0.8, 1.2))
        if flip_x:
            image = image.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
        if flip_y:
            image = image.transpose(Image.Transpose.FLIP_TOP_BOTTOM)
        name = f"coins_{number:03d}.jpg"
        image.save(os.path.join(OUT, "images", name), quality=85)
        images.append({"id": number, "file_name": name, "height": height, "width": width})
        for (ymin, xmin, ymax, xmax), area in found:
            x0, x1 = xmin * scale, xmax * scale
            y0, y1 = ymin * scale, ymax * scale
            if flip_x:
                x0, x1 = width - x1, width - x0
            if flip_y:
                y0, y1 = height - y1, height - y0
            box = [round(x0, 1), round(y0, 1), round(x1 - x0, 1), round(y1 - y0, 1)]  # COCO: x, y, w, h
            annotations.append({"id": len(annotations) + 1, "image_id": number, "bbox": box, "iscrowd": 0,
                                "area": round(area * scale * scale, 1),
                                "category_id": CATEGORIES[area >= cut]["id"]})
    with open(os.path.join(OUT, "instances.json"), "w") as file:
        json.dump({"images": images, "annotations": annotations, "categories": CATEGORIES}, file, indent=0)
    print(f"{len(images)} images, {len(annotations)} coins ({len(found)} an image)")


if __name__ == "__main__":
    main()
