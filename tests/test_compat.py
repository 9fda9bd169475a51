"""The records are plain tf.train.Examples: a hand-written parse spec and FromString read them."""
from __future__ import annotations

import numpy as np

import tfrecord_builder as tb

from conftest import write_spec

DATA = """id,price,tags,point,grade
1,9.5,red big,0.5 1.5,a
2,-3.25,,2 4,b
3,0,blue,"[7.5, 8]",a
"""
SPEC = {
    "name": "shop",
    "source": {"builder": "csv", "path": "shop.csv"},
    "features": {
        "id": {"dtype": "int64"},
        "price": {"dtype": "float32"},
        "tags": {"dtype": "string", "shape": [None]},
        "point": {"dtype": "float32", "shape": [2]},
        "grade": {"type": "class_label", "names": ["a", "b"], "key": "label/grade"},
    },
    "output": {"shards": 2},
}


def test_a_hand_written_parse_spec_reads_the_shards(tf, tmp_path):
    info = tb.build(write_spec(tmp_path, SPEC, {"shop.csv": DATA}), output=tmp_path / "out")
    files = [f"{info.path}/{name}" for name in info.splits["train"].files]
    spec = {
        "id": tf.io.FixedLenFeature([], tf.int64),
        "price": tf.io.FixedLenFeature([], tf.float32),
        "tags": tf.io.VarLenFeature(tf.string),
        "point": tf.io.FixedLenFeature([2], tf.float32),
        "label/grade": tf.io.FixedLenFeature([], tf.int64),
    }
    parsed = {}
    for batch in tf.data.TFRecordDataset(files).batch(10).map(lambda x: tf.io.parse_example(x, spec)):
        order = np.argsort(batch["id"].numpy())
        parsed = {key: value for key, value in batch.items()}
    ids = parsed["id"].numpy()[order].tolist()
    assert ids == [1, 2, 3]
    assert parsed["price"].numpy()[order].tolist() == [9.5, -3.25, 0.0]
    assert parsed["point"].numpy()[order].tolist() == [[0.5, 1.5], [2.0, 4.0], [7.5, 8.0]]
    assert parsed["label/grade"].numpy()[order].tolist() == [0, 1, 0]
    tags = tf.sparse.to_dense(parsed["tags"], default_value=b"").numpy()[order].tolist()
    assert tags == [[b"red", b"big"], [b"", b""], [b"blue", b""]]


def test_every_record_reads_with_from_string(tf, tmp_path):
    info = tb.build(write_spec(tmp_path, SPEC, {"shop.csv": DATA}), output=tmp_path / "out")
    seen = {}
    for name in info.splits["train"].files:
        for record in tf.data.TFRecordDataset(f"{info.path}/{name}"):
            example = tf.train.Example.FromString(record.numpy())
            feature = example.features.feature
            seen[feature["id"].int64_list.value[0]] = (list(feature["tags"].bytes_list.value),
                                                       list(feature["point"].float_list.value))
            assert example.SerializeToString(deterministic=True) == record.numpy()
    assert seen == {1: ([b"red", b"big"], [0.5, 1.5]), 2: ([], [2.0, 4.0]), 3: ([b"blue"], [7.5, 8.0])}
