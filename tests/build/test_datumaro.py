"""Datumaro reads our detection records: the spec of docs/detection.md ("For the Object Detection
API and TF Model Garden", boxes only), built from a COCO JSON of real photographs, imported with
Datumaro's own `tf_detection_api` importer.

Datumaro 1.13 lives in an environment of its own, `.venv-datumaro` (made by `make test`, with the
TensorFlow its importer needs): it runs there in a subprocess, as a user runs it, and hands back
what it imported. Every image, box and label must equal ours. The importer wants files that end in
`.tfrecord` (`output.naming: suffix`), `image/filename`, `image/source_id`,
`image/object/class/text` and a `label_map.pbtxt` beside the shards.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import tfrecord_builder as tb

from conftest import ROOT
from support.object_detection_api import CATEGORIES, PHOTOS, coco_files as _coco, documented_spec

DATUMARO_PYTHON = Path(os.environ.get("TFRECORD_BUILDER_DATUMARO_PYTHON",
                                      ROOT / ".venv-datumaro" / "bin" / "python"))
pytestmark = [pytest.mark.extra_env,
              pytest.mark.skipif(not DATUMARO_PYTHON.exists(), reason=f"{DATUMARO_PYTHON}: no Datumaro environment; "
                                 "`make test` makes it (or set TFRECORD_BUILDER_DATUMARO_PYTHON)")]

IMPORT = """
import json, sys
import numpy as np
from datumaro.components.annotation import AnnotationType
from datumaro.components.dataset import Dataset

try:
    dataset = Dataset.import_from(sys.argv[1], "tf_detection_api")
except Exception as error:
    print(json.dumps({"error": f"{type(error).__name__}: {error}"}))
    sys.exit(0)
out = {"labels": [category.name for category in dataset.categories()[AnnotationType.label]], "items": []}
pixels = {}
for item in dataset:
    boxes = [a for a in item.annotations if a.type == AnnotationType.bbox]
    out["items"].append({"id": item.id, "subset": item.subset, "source_id": item.attributes["source_id"],
                         "size": list(item.media.size), "bytes": item.media.bytes.hex(),
                         "points": [box.points for box in boxes],  # x1, y1, x2, y2: float32, rounded
                         "labels": [box.label for box in boxes],
                         "others": len(item.annotations) - len(boxes)})
    pixels[item.id] = item.media.data  # decoded by OpenCV: BGR
np.savez(sys.argv[2], **pixels)
print(json.dumps(out))
"""


def _datumaro(folder: str, tmp_path: Path) -> tuple[dict, dict[str, np.ndarray]]:
    """What Datumaro imports from the dataset `folder`, and each item's pixels (RGB)."""
    arrays = tmp_path / "pixels.npz"
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": ""}
    done = subprocess.run([str(DATUMARO_PYTHON), "-c", IMPORT, folder, str(arrays)], capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    imported = json.loads(done.stdout.strip().splitlines()[-1])
    if "error" in imported:
        return imported, {}
    with np.load(arrays) as loaded:
        return imported, {name: loaded[name][:, :, ::-1] for name in loaded.files}


def _boxes_only() -> str:
    """The documented spec without its masks (Datumaro reads masks in place of the boxes)."""
    spec = documented_spec()
    assert "  masks:" in spec
    return "".join(line for line in spec.splitlines(keepends=True) if not line.startswith("  masks:"))


def test_datumaro_imports_every_image_box_and_label_of_our_records(tmp_path):
    _coco(tmp_path)
    (tmp_path / "spec.yaml").write_text(_boxes_only())
    info = tb.build(tmp_path / "spec.yaml", workers=1)
    assert all(name.endswith(".tfrecord") for name in info.splits["train"].files)
    imported, pixels = _datumaro(info.path, tmp_path)
    assert "error" not in imported, imported["error"]
    names = [CATEGORIES[key] for key in sorted(CATEGORIES)]
    assert imported["labels"] == names  # from label_map.pbtxt: ids - 1, our class indices
    ours = {record["filename"].decode(): record for record in tb.read(info.path, "train")}
    items = {item["id"]: item for item in imported["items"]}
    assert sorted(items) == sorted(os.path.splitext(name)[0] for name in ours)  # every record, once
    for filename, record in ours.items():
        item = items[os.path.splitext(filename)[0]]
        assert item["subset"] == os.path.splitext(info.splits["train"].files[0])[0]  # a shard's name
        assert item["source_id"] == record["source_id"].decode()
        height, width = int(record["height"]), int(record["width"])
        assert item["size"] == [height, width]
        # the image: the JPEG file's bytes as we store them, and decoded (OpenCV) to the pixels we decode
        assert bytes.fromhex(item["bytes"]) == (tmp_path / "images" / filename).read_bytes()
        np.testing.assert_array_equal(pixels[item["id"]], record["image"])
        np.testing.assert_array_equal(record["image"], np.asarray(Image.open(tmp_path / "images" / filename)))
        # the boxes: our fractions times the size, kept as Datumaro keeps points (float32, rounded to 2
        # decimals): the COCO boxes' pixels exactly
        ymin, xmin, ymax, xmax = record["objects"].astype(np.float64).T
        ours_in_pixels = np.stack([xmin * width, ymin * height, xmax * width, ymax * height], axis=-1)
        assert item["points"] == np.float32(ours_in_pixels).round(2).tolist()
        coco = [[x, y, x + w, y + h] for _, (x, y, w, h), _ in PHOTOS[filename][1]]
        assert item["points"] == np.float32(coco).round(2).tolist()
        assert item["others"] == 0
        # labels by name: the category of each of our objects
        assert [names[label] for label in item["labels"]] == [name.decode() for name in record["names"]]
        assert item["labels"] == (record["labels"] - 1).tolist()


def test_datumaro_finds_no_shard_named_as_tensorflow_datasets_names_them(tmp_path):
    """Why the documented spec names its shards `NAME-SPLIT-00000-of-00001.tfrecord`."""
    _coco(tmp_path)
    (tmp_path / "spec.yaml").write_text(_boxes_only().replace("output: {naming: suffix}", "output: {naming: tfds}"))
    info = tb.build(tmp_path / "spec.yaml", workers=1)
    assert info.splits["train"].files == ["coco_detection-train.tfrecord-00000-of-00001"]
    imported, _ = _datumaro(info.path, tmp_path)
    assert imported == {"error": f"DatasetNotFoundError: Failed to find dataset 'tf_detection_api' at '{info.path}'"}
