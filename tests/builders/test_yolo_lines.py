"""YOLO label lines that aren't boxes: Ultralytics' oriented boxes (OBB, 9 numbers) and segment
polygons (a class and 3 or more points) are named as what they are, with what to do instead, in
one line naming the file and the line; other counts keep the plain message."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

import tfrecord_builder as tb
from tfrecord_builder.errors import DataError

from conftest import write_spec

BOX = "0 0.5 0.5 0.2 0.3"
OBB = "0 0.1 0.1 0.4 0.1 0.4 0.3 0.1 0.3"
TRIANGLE = "1 0.1 0.1 0.4 0.1 0.25 0.4"
POLYGON = "1 0.1 0.1 0.4 0.1 0.5 0.3 0.25 0.4 0.1 0.3"


def _build(tmp_path, line: str):
    (tmp_path / "images").mkdir()
    Image.fromarray(np.zeros((48, 64, 3), np.uint8)).save(tmp_path / "images" / "a.jpg")
    (tmp_path / "labels").mkdir()
    labels = tmp_path / "labels" / "a.txt"
    labels.write_text(f"{BOX}\n{line}\n")
    (tmp_path / "classes.txt").write_text("cat\ndog\n")
    spec = {"name": "yolo", "source": {"builder": "yolo", "path": "."},
            "features": {"image": {"type": "image", "encoding": "jpeg"},
                         "boxes": {"type": "tensor", "dtype": "float32", "shape": [None, 4], "source": "bbox"}}}
    with pytest.raises(DataError) as raised:
        tb.build(write_spec(tmp_path, spec), output=tmp_path / "out", workers=1)
    return str(raised.value), labels


def test_an_oriented_box_is_named_obb_and_not_read(tmp_path):
    message, labels = _build(tmp_path, OBB)
    assert message == (f"{labels}, line 2: expected 5 numbers (class cx cy w h), received 9, an oriented box (OBB: "
                       "class x1 y1 x2 y2 x3 y3 x4 y4), which isn't read; write each as the box around its corners "
                       f"(class cx cy w h) or read it with a custom builder: {OBB!r}")


@pytest.mark.parametrize("line, points", [(TRIANGLE, 3), (POLYGON, 5)])
def test_a_segment_polygon_is_named_with_its_points_and_not_read(tmp_path, line, points):
    message, labels = _build(tmp_path, line)
    assert message == (f"{labels}, line 2: expected 5 numbers (class cx cy w h), received {2 * points + 1}, a polygon "
                       f"of {points} points (a segment label), which isn't read; use the dataset's box labels, or its "
                       f"COCO export (`builder: coco` reads polygons as masks): {line!r}")


@pytest.mark.parametrize("line", ["0 0.5 0.5 0.2 0.3 0.9", "0 0.5 0.5 0.2 0.3 0.9 0.1 0.2"])
def test_other_counts_keep_the_plain_message(tmp_path, line):
    message, labels = _build(tmp_path, line)
    count = len(line.split())
    assert message == f"{labels}, line 2: expected 5 numbers (class cx cy w h), received {count}: {line!r}"
