"""A small Keras model trains from the generated input_fn of the wine spec to an accuracy bar."""
from __future__ import annotations

import train  # demo/train.py: the demo's own model code

import tfrecord_builder as tb

from conftest import ROOT, import_module


def test_wine_trains_to_90_percent_from_the_generated_input_fn(tf, tmp_path):
    info = tb.build(ROOT / "specs" / "wine.yaml", output=tmp_path)
    module = import_module(f"{info.path}/wine_input.py")
    accuracy = train.train_tabular(module.input_fn, info, epochs=30)
    assert accuracy >= 0.9


def test_the_library_input_fn_trains_too(tf, tmp_path):
    info = tb.build(ROOT / "specs" / "wine.yaml", output=tmp_path)
    accuracy = train.train_tabular(lambda split: tb.input_fn(info.path, split), info, epochs=30)
    assert accuracy >= 0.9
