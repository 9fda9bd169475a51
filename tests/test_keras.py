"""A small Keras model trains from the generated input_fn of the wine spec to an accuracy bar."""
from __future__ import annotations

import json
import random
import warnings
from collections import Counter

import pytest
import train  # demo/train.py: the demo's own model code

import tfrecord_builder as tb

from conftest import ROOT, import_module, write_spec

pytestmark = pytest.mark.slow  # each test trains a model


def test_wine_trains_to_90_percent_from_the_generated_input_fn(tf, tmp_path):
    info = tb.build(ROOT / "specs" / "wine.yaml", output=tmp_path)
    module = import_module(f"{info.path}/wine_input.py")
    accuracy = train.train_tabular(module.input_fn, info, epochs=30)
    assert accuracy >= 0.9


def test_the_library_input_fn_trains_too(tf, tmp_path):
    info = tb.build(ROOT / "specs" / "wine.yaml", output=tmp_path)
    accuracy = train.train_tabular(lambda split: tb.input_fn(info.path, split), info, epochs=30)
    assert accuracy >= 0.9


BUCKETED = {"name": "steps", "format": "sequence_example", "source": {"builder": "sequence_jsonl", "path": "steps.jsonl"},
            "splits": {"train": 0.75, "test": 0.25}, "context": {"y": {"type": "class_label", "num_classes": 2}},
            "sequence": {"x": {"dtype": "float32"}}, "label": "y", "output": {"shards": 2},
            "input": {"batch_size": 8, "bucket_boundaries": [5, 12, 20]}}


def test_a_bucketed_input_fn_knows_its_batches_and_keras_fits_without_running_out_of_data(tf, tmp_path):
    rng = random.Random(5)
    rows = "".join(json.dumps({"y": index % 2, "x": [rng.random() for _ in range(rng.randint(0, 30))]}) + "\n"
                   for index in range(150))
    info = tb.build(write_spec(tmp_path, BUCKETED, {"steps.jsonl": rows}), output=tmp_path / "out")
    lengths = {split: Counter(len(record["x"]) for record in tb.read(info.path, split)) for split in info.splits}
    assert {split: info.statistics[split]["x"]["steps"]["counts"] for split in info.splits} == {
        split: {str(steps): count for steps, count in sorted(counts.items())} for split, counts in lengths.items()}
    module = import_module(f"{info.path}/steps_input.py")
    for input_fn in (module.input_fn, lambda *args, **options: tb.input_fn(info.path, *args, **options)):
        for split, batch_size in (("train", 8), ("test", 1), ("train", 7), ("test", 64)):
            dataset = input_fn(split, batch_size=batch_size)
            batches = [len(labels) for _, labels in dataset]  # (assert_cardinality fails a wrong count)
            assert int(dataset.cardinality()) == len(batches) and sum(batches) == info.splits[split].num_examples
        inputs = tf.keras.Input(shape=(None,), name="x")
        pooled = tf.keras.layers.GlobalAveragePooling1D()(tf.keras.layers.Reshape((-1, 1))(inputs))
        model = tf.keras.Model({"x": inputs}, tf.keras.layers.Dense(2)(pooled))
        model.compile("adam", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        train = input_fn("train").map(lambda features, label: ({"x": features["x"]}, label))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model.fit(train, epochs=2, verbose=0)
        assert [str(item.message) for item in caught if "ran out of data" in str(item.message)] == []
