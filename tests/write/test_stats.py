"""Statistics in dataset_info.json: NaN and inf counted apart, top values independent of order."""
from __future__ import annotations

import numpy as np

from tfrecord_builder.features import TensorFeature
from tfrecord_builder.features.values import Values
from tfrecord_builder.spec.fields import At, convert
from tfrecord_builder.spec.yaml_source import Document
from tfrecord_builder.write.stats import FeatureStatistics


def _feature(declaration):
    return convert(TensorFeature, declaration, At(Document(None, "spec.yaml"))).named("f")


def _stats(feature, *batches):
    total = FeatureStatistics(feature)
    for kind, values in batches:
        part = FeatureStatistics(feature)
        part.add(Values(kind, values, np.ones(len(values), np.int64)))
        total.merge(part)
    return total


def test_nan_and_inf_are_counted_apart_from_the_moments():
    feature = _feature({"dtype": "float32", "allow_nan": True})
    stats = _stats(feature, ("float", np.array([1.0, np.nan, 3.0], np.float32)),
                   ("float", np.array([np.inf, -np.inf], np.float32)))
    assert stats.to_dict() == {"num_values": 2, "min": 1.0, "max": 3.0, "mean": 2.0, "std": 1.0, "num_non_finite": 3}
    only_nan = _stats(feature, ("float", np.array([np.nan], np.float32)))
    assert only_nan.to_dict() == {"num_non_finite": 1}
    restored = FeatureStatistics(feature)
    restored.restore(stats.state())
    assert restored.to_dict() == stats.to_dict()


def test_top_values_break_ties_by_value_not_by_arrival():
    feature = _feature({"dtype": "string"})
    words = [b"pear", b"fig", b"apple", b"fig", b"kiwi", b"apple"]
    forwards = _stats(feature, ("bytes", words)).to_dict()["top_values"]
    backwards = _stats(feature, ("bytes", words[::-1])).to_dict()["top_values"]
    assert forwards == backwards == [{"value": "apple", "count": 2}, {"value": "fig", "count": 2},
                                     {"value": "kiwi", "count": 1}, {"value": "pear", "count": 1}]
