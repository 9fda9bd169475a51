"""The report of a detection dataset: real photos (scikit-image's astronaut, coffee and chelsea as
JPEG) with boxes in pixels from a JSONL table, a class per box and a mask per photo. Boxes are
drawn on the thumbnails where they belong, masks overlaid where they are not 0, and the Objects
section counts objects per image, box areas, aspect ratios and objects per class."""
from __future__ import annotations

import base64
import dataclasses
import html
import io
import json
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from skimage import data as photos

import tfrecord_builder as tb
from tfrecord_builder.read.report.data import report_data
from tfrecord_builder.read.report.figures import ANNOTATED, GAP, LINE, MASK_OPACITY, mosaic_of
from tfrecord_builder.read.report.style import class_colour, rgb
from tfrecord_builder.write.info import read_info

NAMES = ["cat", "cup", "face", "flag"]
# per record: photo, boxes [xmin, ymin, xmax, ymax] in pixels, their classes, the mask's rectangle
# (xmin, ymin, xmax, ymax; class 1) away from the boxes' edges
RECORDS = [
    ("astronaut", [[150, 30, 350, 260], [10, 300, 120, 500]], ["face", "flag"], (300, 400, 500, 500)),
    ("coffee", [[100, 50, 500, 330]], ["cup"], (0, 0, 60, 40)),
    ("chelsea", [[80, 40, 380, 290]], ["cat"], (150, 100, 300, 200)),
    ("chelsea", [], [], (0, 0, 30, 30)),
]
SPEC = """\
name: detection
source: {builder: jsonl, path: table.jsonl}
features:
  image: {type: image, encoding: jpeg}
  objects: {type: bbox, source: boxes, format: xyxy, units: pixels, image: image}
  labels: {type: class_label, shape: [null], source: label, names: [cat, cup, face, flag]}
  mask: {type: mask, source: mask, image: image}
output: {shards: 1, shuffle: false}
"""


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("detection-source")
    rows = []
    for number, (photo, boxes, labels, masked) in enumerate(RECORDS):
        pixels = getattr(photos, photo)()
        Image.fromarray(pixels).save(folder / f"{photo}.jpg", quality=92)
        mask = np.zeros(pixels.shape[:2], np.uint8)
        xmin, ymin, xmax, ymax = masked
        mask[ymin:ymax, xmin:xmax] = 1
        Image.fromarray(mask, "L").save(folder / f"mask{number}.png")
        rows.append({"image": f"{photo}.jpg", "boxes": boxes, "label": labels, "mask": f"mask{number}.png"})
    (folder / "table.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    (folder / "spec.yaml").write_text(textwrap.dedent(SPEC), encoding="utf-8")
    output = tmp_path_factory.mktemp("detection-build")
    return Path(tb.build(folder / "spec.yaml", output=output, workers=1, progress=False).path)


def _thumbnail_size(photo: str) -> tuple[int, int]:
    """(height, width) of a photo's thumbnail: its longer side ANNOTATED pixels, as Pillow's
    `thumbnail` rounds the other."""
    height, width = getattr(photos, photo)().shape[:2]
    picture = Image.new("RGB", (width, height))
    picture.thumbnail((ANNOTATED, ANNOTATED))
    return picture.height, picture.width


def _places() -> list[tuple[int, int, int, int]]:
    """Each record's thumbnail in the grid: (top, left, height, width) in the mosaic's pixels."""
    places = []
    for column, (photo, *_) in enumerate(RECORDS):
        height, width = _thumbnail_size(photo)
        places.append((GAP + (ANNOTATED - height) // 2, GAP + column * (ANNOTATED + GAP) + (ANNOTATED - width) // 2,
                       height, width))
    return places


def _expected_boxes() -> list[tuple[float, float, float, float, int, str]]:
    """Each box's edges on the mosaic (left, top, right, bottom: the last pixel inside), from the
    pixel boxes scaled to the thumbnail, with its class."""
    expected = []
    for (photo, boxes, labels, _), (top, left, height, width) in zip(RECORDS, _places()):
        full_height, full_width = getattr(photos, photo)().shape[:2]
        for (xmin, ymin, xmax, ymax), label in zip(boxes, labels):
            expected.append((left + xmin * width / full_width, top + ymin * height / full_height,
                             left + xmax * width / full_width - 1, top + ymax * height / full_height - 1,
                             NAMES.index(label), label))
    return expected


def _drawn_boxes(page: str, stem: str) -> list[list]:
    found = re.search(rf'data-file="{re.escape(stem)}\.png" data-boxes="([^"]*)"', page)
    assert found, f"no boxes on {stem}"
    return json.loads(html.unescape(found.group(1)))


def test_the_boxes_are_drawn_on_the_thumbnails_where_they_belong(dataset):
    page = tb.report(dataset)
    drawn = _drawn_boxes(page, "image-images-train")
    expected = _expected_boxes()
    assert [(index, name) for *_, index, name in drawn] == [(index, name) for *_, index, name in expected]
    for box, want in zip(drawn, expected):
        assert np.abs(np.array(box[:4], float) - np.array(want[:4])).max() <= 1, (box, want)

    # in the grid's pixels: each box's edge LINE pixels wide in its class's colour, the image just outside
    grid = report_data(read_info(str(dataset))).features[0].images[0]
    mosaic, _, marks = mosaic_of(grid)
    assert [list(mark) for mark in marks] == drawn
    for left, top, right, bottom, index, _ in drawn:
        colour = rgb(class_colour(index))
        middle_x, middle_y = (left + right) // 2, (top + bottom) // 2
        for y, x in [(top, middle_x), (top + LINE - 1, middle_x), (bottom, middle_x), (middle_y, left),
                     (middle_y, right), (middle_y, right - LINE + 1)]:
            assert tuple(mosaic[y, x]) == colour, (y, x, index)
        assert tuple(mosaic[top + LINE, middle_x]) != colour and tuple(mosaic[middle_y, left + LINE]) != colour

    # the figure the page embeds holds those colours, and the class names beside them
    png = re.search(r'src="data:image/png;base64,([^"]+)"[^>]*data-file="image-images-train.png"', page).group(1)
    pixels = np.asarray(Image.open(io.BytesIO(base64.b64decode(png))).convert("RGB"))
    for index in {box[4] for box in drawn}:
        assert (pixels == rgb(class_colour(index))).all(axis=2).sum() > 100, NAMES[index]


def test_a_mask_is_overlaid_where_it_is_not_zero(dataset):
    grid = report_data(read_info(str(dataset))).features[0].images[0]
    annotated, _, _ = mosaic_of(grid)
    plain, _, _ = mosaic_of(dataclasses.replace(grid, annotations=[[None] * len(row) for row in grid.annotations]))
    colour = np.array(rgb(class_colour(1)), float)
    (photo, _, _, masked), (top, left, height, width) = RECORDS[2], _places()[2]  # chelsea: the mask inside the box
    full_height, full_width = getattr(photos, photo)().shape[:2]
    xmin, ymin, xmax, ymax = masked
    inside = (top + (ymin + ymax) // 2 * height // full_height, left + (xmin + xmax) // 2 * width // full_width)
    blended = np.round(plain[inside] * (1 - MASK_OPACITY) + colour * MASK_OPACITY)
    assert tuple(annotated[inside]) == tuple(blended.astype(np.uint8))
    outside = (top + height * 5 // 100 + 1, left + width - 2)  # top right corner: no mask, no box
    assert tuple(annotated[outside]) == tuple(plain[outside])
    changed = (annotated[top:top + height, left:left + width] != plain[top:top + height, left:left + width]).any(axis=2)
    box_and_mask = changed.sum()
    assert 0.15 * height * width < box_and_mask < 0.5 * height * width  # the mask (a quarter) and the box's edges


def test_the_objects_section_counts_objects_sizes_ratios_and_classes(dataset):
    objects = report_data(read_info(str(dataset))).objects
    assert [item.name for item in objects] == ["objects"]
    item = objects[0]
    assert (item.image, item.label, item.aspect_pixels, item.classes_exact) == ("image", "labels", True, True)
    assert item.per_image.edges == [-0.5, 0.5, 1.5, 2.5] and item.per_image.counts == {"train": [1, 2, 1]}
    assert item.classes.names == NAMES and item.classes.counts == {"train": [1, 1, 1, 1]}
    assert dict(item.rows)["objects"] == {"train": "4"}
    assert dict(item.rows)["of those without objects"] == {"train": "1"}
    # areas as fractions of the image's, none on a bin's edge: the cup's 400 x 280 of 600 x 400 pixels is 0.467
    areas = []
    ratios = []
    for photo, boxes, _, _ in RECORDS:
        full_height, full_width = getattr(photos, photo)().shape[:2]
        for xmin, ymin, xmax, ymax in boxes:
            areas.append((xmax - xmin) * (ymax - ymin) / (full_width * full_height))
            ratios.append((xmax - xmin) / (ymax - ymin))
    assert item.areas.counts == {"train": np.histogram(areas, bins=20, range=(0, 1))[0].tolist()}
    assert item.areas.counts["train"][9] == 1
    edges = np.asarray(item.aspects.edges)
    assert edges[0] == pytest.approx(min(ratios), rel=1e-5) and edges[-1] == pytest.approx(max(ratios), rel=1e-5)
    assert item.aspects.log and sum(item.aspects.counts["train"]) == 4
    assert item.aspects.counts["train"][-1] == 1  # the cup's 400 / 280, the widest

    page = tb.report(dataset, sample=2)
    assert '<section id="objects"><h2>Objects</h2>' in page and '<a href="#objects">Objects</a>' in page
    assert "the histograms are from 2 sampled images" in page
    for stem in ("objects-objects", "objects-areas", "objects-aspects", "objects-classes"):
        assert f'data-file="{stem}.png"' in page


@pytest.mark.browser
def test_in_a_browser_the_boxes_show_on_the_grid_and_the_console_is_silent(dataset, tmp_path):
    from .browser import (PROBE, body_attribute as _body_attribute, dump_dom, pixels_near as _pixels_near,
                          screenshot)

    page = tmp_path / "detection.html"
    tb.report(dataset, page)
    text = page.read_text(encoding="utf-8")
    probe = tmp_path / "probe.html"
    probe.write_text(text.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    laid_out = dump_dom(probe)
    shot = screenshot(page, tmp_path / "shot.png")
    assert laid_out.console == [] and shot.console == []
    images = len(re.findall(r"<img ", text))
    assert _body_attribute(laid_out.stdout, "data-images-loaded") == f"{images}/{images}"
    places = {item.split(",")[0]: [int(value) for value in item.split(",")[1:]]
              for item in _body_attribute(laid_out.stdout, "data-probe").split(";")}
    left, top, width, height = places["image-images-train.png"]
    region = np.asarray(Image.open(tmp_path / "shot.png").convert("RGB"))[top:top + height, left:left + width]
    for index in range(len(NAMES)):  # every class's box edges, in its colour (scaled to the page: near it)
        assert _pixels_near(region, class_colour(index), tolerance=30) > 40, NAMES[index]


def test_boxes_without_an_image_have_aspect_ratios_in_fractions_and_no_classes(tmp_path):
    Image.fromarray(photos.coffee()).save(tmp_path / "coffee.jpg")
    rows = [{"image": "coffee.jpg", "boxes": [[0.1, 0.2, 0.5, 0.4], [0.0, 0.0, 0.25, 1.0]]}]
    (tmp_path / "table.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    (tmp_path / "spec.yaml").write_text(textwrap.dedent("""\
        name: fractions
        source: {builder: jsonl, path: table.jsonl}
        features:
          image: {type: image, encoding: jpeg}
          thumb: {type: image, source: image, shape: [32, 32, 3]}
          objects: {type: bbox, source: boxes, format: yxyx}
        output: {shards: 1}
        """), encoding="utf-8")  # (beside one image, the boxes would be its own)
    info = tb.build(tmp_path / "spec.yaml", output=tmp_path / "build", workers=1, progress=False)
    data = report_data(info)
    item = data.objects[0]
    assert (item.aspect_pixels, item.label, item.classes) == (False, None, None)
    assert item.aspects.edges[0] == pytest.approx(0.5) and item.aspects.edges[-1] == pytest.approx(4.0)
    assert data.features[0].images[0].annotations == []  # boxes not linked to the image: none drawn
    page = tb.report(info)
    assert "aspect ratio (width / height, in fractions of the image, whose size in pixels is unknown)" in page
    assert "No per-object class label" in page and "data-boxes" not in page
