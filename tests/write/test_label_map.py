"""`label_map.pbtxt` beside a dataset of per-object class labels, and `first_id: 1`, which stores
the class index + 1 (the Object Detection API's label ids) and reads it back as stored."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

import tfrecord_builder as tb
from tfrecord_builder.codec.bytecolumn import ByteColumn
from tfrecord_builder.codec.tfrecord import frame, read_records
from tfrecord_builder.errors import SpecError
from tfrecord_builder.write.index import index_lines
from tfrecord_builder.tools.verify import verify

from conftest import write_spec

ROWS = '{"labels": ["cat", "dog\'s", "cat"]}\n{"labels": []}\n{"labels": ["bird"]}\n'


def _build(tmp_path: Path, **label) -> tb.DatasetInfo:
    spec = {"name": "objects", "source": {"builder": "jsonl", "path": "rows.jsonl"},
            "features": {"labels": {"type": "class_label", "shape": [None], "names": ["cat", "dog's", "bird"],
                                    **label}},
            "output": {"shuffle": False}}
    return tb.build(write_spec(tmp_path, spec, {"rows.jsonl": ROWS}), workers=1)


def test_first_id_one_stores_the_label_maps_ids_and_writes_the_map(tmp_path):
    info = _build(tmp_path, key="image/object/class/label", first_id=1)
    assert [record["labels"].tolist() for record in tb.read(info.path, "train")] == [[1, 2, 1], [], [3]]
    assert (Path(info.path) / "label_map.pbtxt").read_text() == (
        "# feature `labels` (key image/object/class/label) stores these ids\n"
        "item {\n  id: 1\n  name: 'cat'\n}\n"
        "item {\n  id: 2\n  name: 'dog\\'s'\n}\n"
        "item {\n  id: 3\n  name: 'bird'\n}\n")
    # counted by class, not by stored id
    assert info.statistics["train"]["labels"]["classes"] == {"cat": 2, "dog's": 1, "bird": 1}
    assert "labels.labels.txt" not in {path.name for path in Path(info.path).iterdir()}
    # verify checks ids in [1, 4), by both of its readers
    assert verify(info.path).ok and verify(info.path, reader="records").ok


def test_verify_finds_an_id_outside_first_id_ones_range(tmp_path):
    info = _build(tmp_path, first_id=1)
    metadata = json.loads((Path(info.path) / "tfrecord_builder.json").read_text())
    entry = metadata["splits"]["train"]["shards"][0]
    with open(Path(info.path) / entry["file"], "rb") as file:
        records = list(read_records(file, entry["file"]))
    # the third record's one label, 3 ("bird"), made 4: past the last id (framed anew, checksums too)
    assert records[2].count(b"\x1a\x03\x0a\x01\x03") == 1  # int64_list { value: [3] }
    records[2] = records[2].replace(b"\x1a\x03\x0a\x01\x03", b"\x1a\x03\x0a\x01\x04")
    data = frame(ByteColumn.from_rows(records))
    (Path(info.path) / entry["file"]).write_bytes(data)
    entry["sha256"], entry["num_bytes"] = hashlib.sha256(data).hexdigest(), len(data)
    index = index_lines(np.cumsum([0] + [len(record) + 16 for record in records]), 0)
    (Path(info.path) / entry["index"]["file"]).write_bytes(index)
    entry["index"].update(sha256=hashlib.sha256(index).hexdigest(), num_bytes=len(index))
    (Path(info.path) / "tfrecord_builder.json").write_text(json.dumps(metadata))
    for reader in ("columns", "records"):
        faults = verify(info.path, reader=reader).faults
        assert len(faults) == 1 and "a class id is outside [1, 4)" in faults[0], faults


def test_indices_get_a_label_map_that_says_they_are_id_minus_one(tmp_path):
    info = _build(tmp_path)
    assert [record["labels"].tolist() for record in tb.read(info.path, "train")] == [[0, 1, 0], [], [2]]
    text = (Path(info.path) / "label_map.pbtxt").read_text()
    assert text.splitlines()[0] == ("# feature `labels` (key labels) stores the class index, id - 1: "
                                    "give it `first_id: 1` to store these ids")
    assert text.splitlines()[1:5] == ["item {", "  id: 1", "  name: 'cat'", "}"]


def test_no_per_object_label_no_label_map(tmp_path):
    spec = {"name": "plain", "source": {"builder": "jsonl", "path": "rows.jsonl"},
            "features": {"label": {"type": "class_label", "names": ["a", "b"]}}}
    info = tb.build(write_spec(tmp_path, spec, {"rows.jsonl": '{"label": "a"}\n'}), workers=1)
    assert not (Path(info.path) / "label_map.pbtxt").exists()


def test_first_id_one_is_for_per_object_labels_only(tmp_path):
    spec = {"name": "plain", "source": {"builder": "jsonl", "path": "rows.jsonl"},
            "features": {"label": {"type": "class_label", "names": ["a", "b"], "first_id": 1}}}
    with pytest.raises(SpecError, match=r"`first_id: 1` is for per-object labels \(shape \[null\]\), not shape \[\]"):
        tb.load_spec(write_spec(tmp_path, spec))


def test_tfds_reads_first_id_labels_as_the_stored_ids(tmp_path):
    tfds = pytest.importorskip("tensorflow_datasets")
    info = _build(tmp_path, first_id=1)
    builder = tfds.builder_from_directory(info.path)
    assert type(builder.info.features["labels"]) is tfds.features.Tensor  # plain int64 ids, not ClassLabel indices
    examples = list(tfds.as_numpy(builder.as_dataset(split="train", shuffle_files=False)))
    assert [example["labels"].tolist() for example in examples] == [[1, 2, 1], [], [3]]
