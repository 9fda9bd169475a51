"""TF Model Garden reads our detection records: the spec of docs/detection.md ("For the Object
Detection API and TF Model Garden"), built from a COCO JSON of real photographs (scikit-image's
astronaut, coffee and chelsea as JPEG files, with boxes and polygons placed on their objects),
decoded record by record with `official.vision.dataloaders.tf_example_decoder.TfExampleDecoder`.

Model Garden (`tf-models-official`) pins its own TensorFlow, so it lives in an environment of its
own, `.venv-tfm` (made by `make test`): the decoder runs there in a subprocess and hands back
what it decoded as NumPy arrays. Every pixel equals PIL's decoding of the JPEG file, every box
the fractions `tb.read` gives (and the COCO box divided by the image's size), every class the
category's index + 1 (as `label_map.pbtxt` names it), every mask pixel pycocotools' `annToMask`.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import tfrecord_builder as tb

from conftest import ROOT
from support.object_detection_api import CATEGORIES, coco_files as _coco, documented_spec

pytest.importorskip("skimage.data")  # the photos
TFM_PYTHON = Path(os.environ.get("TFRECORD_BUILDER_TFM_PYTHON", ROOT / ".venv-tfm" / "bin" / "python"))
needs_model_garden = pytest.mark.skipif(not TFM_PYTHON.exists(), reason=f"{TFM_PYTHON}: no Model Garden environment; "
                                "`make test` makes it (or set TFRECORD_BUILDER_TFM_PYTHON)")

DECODE = """
import json
import sys
import numpy as np
import tensorflow as tf
from official.vision.dataloaders.tf_example_decoder import TfExampleDecoder

decoder = TfExampleDecoder(include_mask=True)
out = {}
for number, record in enumerate(tf.data.TFRecordDataset(sys.argv[3:])):
    for name, value in decoder.decode(record).items():
        out[f"{number}/{name}"] = value.numpy()
    # the decoder's tf.io.decode_image takes TensorFlow's fast integer DCT; the same bytes decoded
    # with the accurate one, which libjpeg-turbo in Pillow takes
    encoded = tf.io.parse_single_example(record, {"image/encoded": tf.io.FixedLenFeature((), tf.string)})
    out[f"{number}/encoded"] = np.frombuffer(encoded["image/encoded"].numpy(), np.uint8)
    out[f"{number}/accurate"] = tf.io.decode_jpeg(encoded["image/encoded"], dct_method="INTEGER_ACCURATE").numpy()
    # and the photo's file as the decoder's decode_image takes it
    files = json.loads(sys.argv[2])
    source_id = out[f"{number}/source_id"].decode()
    out[f"{number}/file"] = tf.io.decode_image(tf.io.read_file(files[source_id]), channels=3).numpy()
np.savez(sys.argv[1], **out)
"""


def _decoded(info: tb.DatasetInfo, tmp_path: Path, files: dict[str, str]) -> list[dict[str, np.ndarray]]:
    """Every record of the dataset as Model Garden's decoder gives it, in shard order (`files`:
    each source id's photo, decoded there too)."""
    shards = [os.path.join(info.path, name) for split in info.splits.values() for name in split.files]
    out = tmp_path / "decoded.npz"
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": ""}
    done = subprocess.run([str(TFM_PYTHON), "-c", DECODE, str(out), json.dumps(files), *shards], capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    arrays = np.load(out, allow_pickle=True)  # the masks' PNG bytes: an object array, of our own making
    records: dict[int, dict[str, np.ndarray]] = {}
    for key in arrays.files:
        number, name = key.split("/", 1)
        records.setdefault(int(number), {})[name] = arrays[key]
    return [records[number] for number in sorted(records)]


@needs_model_garden
@pytest.mark.extra_env
def test_model_garden_decoder_reads_every_box_class_mask_and_pixel(tmp_path):
    from pycocotools.coco import COCO

    path = _coco(tmp_path)
    (tmp_path / "spec.yaml").write_text(documented_spec().replace("output: {naming: suffix}",
                                                                  "output: {naming: suffix, shuffle: false}"))
    info = tb.build(tmp_path / "spec.yaml", workers=1)
    ours = {str(record["source_id"], "utf-8"): record for record in tb.read(info.path, "train")}
    coco = COCO(str(path))
    files = {str(image["id"]): str(tmp_path / "images" / image["file_name"]) for image in coco.dataset["images"]}
    decoded = _decoded(info, tmp_path, files)
    ids = sorted(CATEGORIES)
    assert sorted(str(record["source_id"], "utf-8") for record in decoded) == sorted(str(i) for i in coco.getImgIds())
    for record in decoded:
        image = coco.loadImgs([int(record["source_id"])])[0]
        annotations = coco.loadAnns(coco.getAnnIds(imgIds=[image["id"]]))
        height, width = image["height"], image["width"]
        # the JPEG as it is, so every pixel is the photo's: the decoder's (decode_image, TensorFlow's
        # fast integer DCT) those of the file decoded so; with the accurate DCT, Pillow's
        file = tmp_path / "images" / image["file_name"]
        assert record["encoded"].tobytes() == file.read_bytes()
        np.testing.assert_array_equal(record["image"], record["file"])
        np.testing.assert_array_equal(record["accurate"], np.asarray(Image.open(file).convert("RGB")))
        assert (record["height"], record["width"]) == (height, width)
        # boxes: exactly ours, and the COCO box as fractions
        np.testing.assert_array_equal(record["groundtruth_boxes"], ours[str(image["id"])]["objects"])
        x, y, w, h = np.array([a["bbox"] for a in annotations], np.float64).T
        expected = np.stack([y / height, x / width, (y + h) / height, (x + w) / width], axis=-1)
        np.testing.assert_allclose(record["groundtruth_boxes"], expected, rtol=1e-6)
        assert record["groundtruth_classes"].tolist() == [ids.index(a["category_id"]) + 1 for a in annotations]
        assert record["groundtruth_is_crowd"].tolist() == [bool(a["iscrowd"]) for a in annotations]
        np.testing.assert_array_equal(record["groundtruth_area"], np.array([a["area"] for a in annotations],
                                                                           np.float32))
        masks = np.stack([coco.annToMask(a) for a in annotations]).astype(np.float32)
        np.testing.assert_array_equal(record["groundtruth_instance_masks"], masks)
        assert masks.sum(axis=(1, 2)).min() > 100  # each polygon covers pixels
    # the label map names the ids the records hold
    assert (Path(info.path) / "label_map.pbtxt").read_text() == (
        "# feature `labels` (key image/object/class/label) stores these ids\n"
        + "".join(f"item {{\n  id: {index + 1}\n  name: '{CATEGORIES[key]}'\n}}\n" for index, key in enumerate(ids)))


def _stored(info: tb.DatasetInfo) -> list[dict[str, tuple[str, list]]]:
    """Every record of the dataset as stored: each key's list kind and values (TensorFlow's parse)."""
    import tensorflow as tf

    records = []
    for split in info.splits.values():
        for name in split.files:
            for data in tf.data.TFRecordDataset(os.path.join(info.path, name)):
                example = tf.train.Example.FromString(data.numpy())
                records.append({key: (feature.WhichOneof("kind"), list(getattr(feature, feature.WhichOneof("kind")).value))
                                for key, feature in example.features.feature.items()})
    return records


def test_the_documented_spec_writes_every_key_create_coco_tf_record_writes(tmp_path):
    """Each key of the Object Detection API's create_coco_tf_record.py (research/object_detection/
    dataset_tools), with the values it writes for the same COCO JSON and files: the file's bytes
    and their sha256 in hex, `jpeg`, the file name, the id as text, the JSON's size, the boxes as
    fractions (float32), the category names, iscrowd and area; the class ids are the index + 1
    (the script's category_id, where the ids run 1, 2, 3...; here they skip: 1, 3, 7, 9)."""
    path = _coco(tmp_path)
    (tmp_path / "spec.yaml").write_text(documented_spec())
    info = tb.build(tmp_path / "spec.yaml", workers=1)
    assert info.splits["train"].files == ["coco_detection-train-00000-of-00001.tfrecord"]  # the script's naming
    coco = json.loads(path.read_text())
    names = {category["id"]: category["name"] for category in coco["categories"]}
    ids = sorted(names)
    stored = {record["image/source_id"][1][0]: record for record in _stored(info)}
    assert sorted(stored) == sorted(str(image["id"]).encode() for image in coco["images"])
    for image in coco["images"]:
        record = stored[str(image["id"]).encode()]
        objects = [a for a in coco["annotations"] if a["image_id"] == image["id"]]
        data = (tmp_path / "images" / image["file_name"]).read_bytes()
        height, width = image["height"], image["width"]
        x, y, w, h = (np.array([a["bbox"] for a in objects], np.float64).T if objects else np.zeros((4, 0)))
        expected = {
            "image/encoded": ("bytes_list", [data]),
            "image/format": ("bytes_list", [b"jpeg"]),
            "image/filename": ("bytes_list", [image["file_name"].encode()]),
            "image/source_id": ("bytes_list", [str(image["id"]).encode()]),
            "image/key/sha256": ("bytes_list", [hashlib.sha256(data).hexdigest().encode()]),
            "image/height": ("int64_list", [height]),
            "image/width": ("int64_list", [width]),
            "image/object/bbox/xmin": ("float_list", np.float32(x / width).tolist()),
            "image/object/bbox/xmax": ("float_list", np.float32((x + w) / width).tolist()),
            "image/object/bbox/ymin": ("float_list", np.float32(y / height).tolist()),
            "image/object/bbox/ymax": ("float_list", np.float32((y + h) / height).tolist()),
            "image/object/class/text": ("bytes_list", [names[a["category_id"]].encode() for a in objects]),
            "image/object/class/label": ("int64_list", [ids.index(a["category_id"]) + 1 for a in objects]),
            "image/object/is_crowd": ("int64_list", [a["iscrowd"] for a in objects]),
            "image/object/area": ("float_list", np.float32([a["area"] for a in objects]).tolist()),
        }
        for key, value in expected.items():
            assert record[key] == value, key
        # besides them: the masks (the script's --include_masks) and the image's own shape
        assert sorted(set(record) - set(expected)) == ["image/encoded/shape", "image/object/mask"]
        assert len(record["image/object/mask"][1]) == len(objects)
    # with ids 1, 2, 3..., as most exports number them, the class ids are the script's category_id
    renumbered = json.loads(path.read_text())
    number = {key: index + 1 for index, key in enumerate(ids)}
    for category in renumbered["categories"]:
        category["id"] = number[category["id"]]
    for annotation in renumbered["annotations"]:
        annotation["category_id"] = number[annotation["category_id"]]
    path.write_text(json.dumps(renumbered))
    again = tb.build(tmp_path / "spec.yaml", workers=1, overwrite=True)
    for record in _stored(again):
        source_id = int(record["image/source_id"][1][0])
        assert record["image/object/class/label"][1] == [a["category_id"] for a in renumbered["annotations"]
                                                         if a["image_id"] == source_id]


def test_the_documented_spec_writes_the_decoders_keys(tmp_path):
    """The keys of a record: the decoder's (with masks), the Object Detection API's others, and
    the image's own shape beside them."""
    _coco(tmp_path)
    (tmp_path / "spec.yaml").write_text(documented_spec())
    info = tb.build(tmp_path / "spec.yaml", workers=1)
    kinds = {key: kind for key, (kind, _) in _stored(info)[0].items()}
    assert kinds == {
        "image/encoded": "bytes_list", "image/encoded/shape": "int64_list", "image/format": "bytes_list",
        "image/filename": "bytes_list", "image/key/sha256": "bytes_list",
        "image/height": "int64_list", "image/width": "int64_list", "image/source_id": "bytes_list",
        "image/object/bbox/ymin": "float_list", "image/object/bbox/xmin": "float_list",
        "image/object/bbox/ymax": "float_list", "image/object/bbox/xmax": "float_list",
        "image/object/class/text": "bytes_list", "image/object/class/label": "int64_list",
        "image/object/is_crowd": "int64_list", "image/object/area": "float_list", "image/object/mask": "bytes_list"}
