"""The issue's bad input, table-driven, for what tests/builders/test_annotations.py doesn't check
already (there: COCO's unknown category, missing image, image twice and malformed JSON; VOC's
malformed XML; YOLO's 4 numbers; each with its exact text and its skip): a box outside its image
from each annotation source, and a malformed JSON under `on_error: skip`. Each: one line naming the
file and the object, nothing on disk that looks finished, exit 1 from the command line; and under
`on_error: skip` the record skipped, its reason listed and counted.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import tfrecord_builder as tb
from tfrecord_builder.errors import DataError

from conftest import write_spec
from support.annotated_photos import COCO_SOURCE, write_coco, write_voc, write_yolo

BOXES = {"coco": ("xywh", "pixels"), "voc": ("xyxy", "pixels"), "yolo": ("cxcywh", "fraction")}


def outside_coco(tmp_path: Path) -> tuple[dict, str]:
    def change(document):
        document["annotations"][0]["bbox"] = [300.0, 60.0, 400.0, 330.0]  # rocket.jpg's, 640 wide
    write_coco(tmp_path, change)
    return COCO_SOURCE, (f"instances.json, image 19 (rocket.jpg): feature `objects`: box 0 [300, 60, 400, 330] "
                         f"(xywh, pixels) lies outside the image {tmp_path}/images/rocket.jpg (640 x 427 pixels, "
                         "width x height); set `clip: true` to clip it")


def outside_voc(tmp_path: Path) -> tuple[dict, str]:
    folder = write_voc(tmp_path)
    xml = folder / "rocket.xml"
    xml.write_text(xml.read_text().replace("<xmax>350</xmax>", "<xmax>700</xmax>"))
    return {"builder": "voc", "path": "VOC/Annotations"}, (
        f"{xml}: feature `objects`: box 0 [271, 61, 700, 390] (xyxy, pixels) lies outside the image "
        f"{tmp_path}/VOC/JPEGImages/rocket.jpg (640 x 427 pixels, width x height); set `clip: true` to clip it")


def outside_yolo(tmp_path: Path) -> tuple[dict, str]:
    dataset, _ = write_yolo(tmp_path)
    labels = dataset / "labels" / "train" / "rocket.txt"
    labels.write_text("3 0.9 0.5 0.4 0.5\n")
    return {"builder": "yolo", "path": "dataset", "names_file": "dataset/data.yaml"}, (
        f"{dataset}/images/train/rocket.jpg: feature `objects`: box 0 [0.9, 0.5, 0.4, 0.5] (cxcywh, fraction) lies "
        "outside the image ([0, 1] in fractions); set `clip: true` to clip it")


CASES = {"coco": outside_coco, "voc": outside_voc, "yolo": outside_yolo}


def spec_file(tmp_path: Path, kind: str, source: dict, **top) -> Path:
    form, units = BOXES[kind]
    return write_spec(tmp_path, {
        "name": "det", "version": "1.0.0", "source": source, "output": {"shuffle": False}, **top,
        "features": {"image": {"type": "image"}, "filename": {"dtype": "string"},
                     "objects": {"type": "bbox", "source": "bbox", "format": form, "units": units, "image": "image"}}})


def finished(folder: Path) -> list[str]:
    """What in `folder` looks like a dataset: anything but a lock or a temporary name."""
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*")
                  if path.is_file() and not path.name.endswith(".lock") and ".tmp" not in path.name)


@pytest.mark.parametrize("kind", list(CASES))
def test_a_box_outside_its_image_is_one_line_naming_the_file_and_object_or_a_counted_skip(tmp_path, kind):
    source, expected = CASES[kind](tmp_path)
    with pytest.raises(DataError) as raised:
        tb.build(spec_file(tmp_path, kind, source), workers=1, output=tmp_path / "out")
    assert str(raised.value) == expected
    assert finished(tmp_path / "out") == []
    info = tb.build(spec_file(tmp_path, kind, source, on_error="skip"), workers=1, output=tmp_path / "skip")
    skipped = [json.loads(line) for line in (Path(info.path) / "skipped.jsonl").read_text().splitlines()]
    assert [entry["reason"] for entry in skipped] == [expected]
    assert info.skipped == 1
    assert "rocket.jpg" not in {Path(record["filename"].decode()).name for record in tb.read(info.path, "train")}


def test_a_malformed_json_stops_even_under_skip_and_exits_1_from_the_command_line(tmp_path):
    """A file that isn't JSON has no records to skip: it stops the build, one line with its line."""
    path = write_coco(tmp_path)
    lines = path.read_text().splitlines()
    lines[6] = lines[6].rstrip(",")
    path.write_text("\n".join(lines))
    expected = f"{path}, line 8: malformed JSON: Expecting ',' delimiter (column 4)"
    with pytest.raises(DataError) as raised:
        tb.build(spec_file(tmp_path, "coco", COCO_SOURCE, on_error="skip"), workers=1, output=tmp_path / "out")
    assert str(raised.value) == expected
    assert finished(tmp_path / "out") == []
    run = subprocess.run([sys.executable, "-m", "tfrecord_builder", "build", str(spec_file(tmp_path, "coco", COCO_SOURCE)),
                          "--output", str(tmp_path / "cli"), "--workers", "1"], capture_output=True, text=True)
    assert run.returncode == 1
    assert run.stderr.strip().splitlines()[-1].endswith(expected)
    assert finished(tmp_path / "cli") == []


GOOD = {"id": 7, "image_id": 3, "category_id": 18, "bbox": [1, 2.5, 3, 4], "area": 12.0, "iscrowd": 0}
# each: a change to GOOD; the quick check (COCO's `Annotations.add`) must keep what the full one keeps and
# refuse with the same words what it refuses
ANNOTATIONS = [
    {}, {"area": None}, {"iscrowd": True}, {"iscrowd": 1}, {"iscrowd": 1.0}, {"iscrowd": "1"}, {"iscrowd": None},
    {"bbox": [1, 2, 3]}, {"bbox": [1, 2, 3, "4"]}, {"bbox": [1, 2, 3, True]}, {"bbox": (1, 2, 3, 4)},
    {"image_id": 3.0}, {"image_id": True}, {"category_id": "18"}, {"area": "12"}, {"area": 5},
    {"keypoints": [1, 2, 2]}, {"keypoints": None}, {"attributes": {"occluded": True}}, {"attributes": []},
    {"id": None}, "not an object",
]


@pytest.mark.parametrize("change", ANNOTATIONS, ids=[json.dumps(change)[:40] for change in ANNOTATIONS])
@pytest.mark.parametrize("missing", [None, "area", "iscrowd", "id", "bbox", "image_id"])
def test_coco_s_quick_check_of_an_annotation_keeps_and_refuses_what_the_full_check_does(change, missing):
    from tfrecord_builder.builders.coco import Annotations

    annotation = {**GOOD, **change} if isinstance(change, dict) else change
    if isinstance(annotation, dict) and missing is not None:
        annotation.pop(missing, None)
    outcomes = []
    for way in ("add", "_checked"):
        packed = Annotations("instances.json")
        try:
            getattr(packed, way)(4, annotation)
        except (DataError, TypeError) as error:
            outcomes.append((type(error), str(error)))
            continue
        outcomes.append([list(part) for part in (packed.ids, packed.image_ids, packed.category_ids, packed.boxes,
                                                 packed.areas, packed.crowds)] + [packed.keypointed])
    assert outcomes[0] == outcomes[1]
