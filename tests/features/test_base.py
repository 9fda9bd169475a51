"""Feature types' names: registered (`tb.register_feature`) or referenced by a spec
(`file.py:Class`), known to the registry without being set on the class."""
from __future__ import annotations

import pytest

import tfrecord_builder as tb
from tfrecord_builder.features import base

from conftest import write_spec

SPEC = {"name": "t", "source": {"builder": "csv", "path": "rows.csv"}, "splits": {"train": 1.0}}


@pytest.fixture
def registry(monkeypatch):
    """The feature types as they are, given back after the test."""
    monkeypatch.setattr(base, "FEATURE_TYPES", dict(base.FEATURE_TYPES))
    monkeypatch.setattr(base, "TYPE_NAMES", dict(getattr(base, "TYPE_NAMES", {})), raising=False)


def test_a_registered_type_is_named_by_the_registry_not_by_an_attribute_set_on_it(tmp_path, registry):
    @tb.register_feature("percent")
    class Percent(tb.TensorFeature):
        pass

    class Share(Percent):  # not registered: named as the type it extends
        pass

    assert "type_name" not in vars(Percent)
    assert (Percent.type_name, Share.type_name, tb.Feature.type_name) == ("percent", "percent", "")
    spec = tb.load_spec(write_spec(tmp_path, {**SPEC, "features": {"x": {"type": "percent", "dtype": "float32"}}},
                                   {"rows.csv": "x\n1\n"}))
    assert (type(spec.features["x"]), spec.features["x"].type_name) == (Percent, "percent")


def test_a_type_a_spec_references_is_named_by_the_reference(tmp_path, registry):
    code = "import tfrecord_builder as tb\n\n\nclass Ratio(tb.TensorFeature):\n    pass\n"
    spec = tb.load_spec(write_spec(tmp_path, {**SPEC, "features": {"x": {"type": "ratios.py:Ratio", "dtype": "float32"}}},
                                   {"rows.csv": "x\n1\n", "ratios.py": code}))
    feature = spec.features["x"]
    assert (type(feature).__name__, feature.type_name, type(feature).type_name) == \
        ("Ratio", "ratios.py:Ratio", "ratios.py:Ratio")
    assert "type_name" not in vars(type(feature))
    assert spec.to_dict()["features"]["x"]["type"] == "ratios.py:Ratio"  # what dataset_info.json records
