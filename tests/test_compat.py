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


def test_the_tutorials_shard_glob_finds_only_shards(tf, tmp_path):
    """`tf.io.gfile.glob` and `Dataset.list_files` match hidden files: nothing in the folder but
    the shards has `.tfrecord` in its name."""
    info = tb.build(write_spec(tmp_path, SPEC, {"shop.csv": DATA}), output=tmp_path / "out")
    shards = sorted(f"{info.path}/{name}" for name in info.splits["train"].files)
    assert sorted(tf.io.gfile.glob(f"{info.path}/*.tfrecord*")) == shards
    listed = tf.data.Dataset.list_files(f"{info.path}/*.tfrecord*", shuffle=False)
    assert sorted(path.decode() for path in listed.as_numpy_iterator()) == shards


def test_a_dataset_with_the_old_marker_is_replaced_with_overwrite(tmp_path):
    """Folders built before the marker's rename (`.tfrecord-builder`) are still ours to replace."""
    spec = write_spec(tmp_path, SPEC, {"shop.csv": DATA})
    info = tb.build(spec, output=tmp_path / "out")
    folder = tmp_path / "out" / "shop" / "1.0.0"
    (folder / ".made-by-tb").rename(folder / ".tfrecord-builder")
    (folder / "dataset_info.json").unlink()  # an unfinished 0.2 build: not a dataset, but ours
    again = tb.build(spec, output=tmp_path / "out", overwrite=True)
    assert again.splits["train"].num_examples == info.splits["train"].num_examples
    assert sorted(path.name for path in folder.iterdir() if path.name.startswith(".")) == [".made-by-tb"]
