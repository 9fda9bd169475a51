"""Statistics in dataset_info.json: NaN and inf counted apart, top values independent of order,
binary and long bytes values counted by their sizes instead of a vocabulary."""
from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tfrecord_builder.features import TensorFeature
from tfrecord_builder.features.values import Values
from tfrecord_builder.spec.fields import At, convert
from tfrecord_builder.spec.yaml_source import Document
from tfrecord_builder.write.stats import FeatureStatistics, add_counts, is_text


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


def test_lengths_have_an_exact_std_whatever_the_merge_order():
    feature = _feature({"dtype": "int64", "shape": [None]})

    def lengths(*batches):
        total = FeatureStatistics(feature)
        for counts in batches:
            part = FeatureStatistics(feature)
            counts = np.array(counts, np.int64)
            part.add(Values("int64", np.zeros(int(counts.sum()), np.int64), counts))
            total.merge(part)
        return total.to_dict()["length"]

    assert lengths([0, 2], [2, 4]) == lengths([4], [2, 0, 2]) == {"min": 0, "max": 4, "mean": 2.0, "std": np.sqrt(2.0)}
    restored = FeatureStatistics(feature)
    restored.restore({**FeatureStatistics(feature).state(), "lengths": [2, 6, 2, 4]})  # a checkpoint of before 0.3
    assert restored.to_dict()["length"] == {"min": 2, "max": 4, "mean": 3.0}  # no std rather than a wrong one


def test_missing_values_are_counted_per_split_on_every_source_path(tmp_path):
    """An empty CSV cell, an `na_values` text, a JSON null and an absent key are missing: counted
    before the default fills them, the same through Arrow's readers and the plain ones."""
    import json

    import tfrecord_builder as tb
    from conftest import write_spec

    rows = [(str(i) if i % 3 else "", "NA" if i % 5 == 0 else f"{i / 2}", "" if i % 4 == 0 else f"w{i % 3} x")
            for i in range(40)]
    csv = "a,b,t\n" + "".join(",".join(row) + "\n" for row in rows)
    records = [{k: v for k, v in {"a": int(a) if a else None, "b": None if b == "NA" else float(b),
                                  "t": t.split() if t else None}.items() if k != "t" or t} for a, b, t in rows]
    jsonl = "".join(json.dumps(record) + "\n" for record in records)
    features = {"a": {"dtype": "int64", "default": -1}, "b": {"dtype": "float32", "default": 0.0},
                "t": {"dtype": "string", "shape": [None]}}
    expected = {"a": sum(1 for a, _, _ in rows if not a), "b": sum(1 for _, b, _ in rows if b == "NA"),
                "t": sum(1 for _, _, t in rows if not t)}
    for builder, name, text in (("csv", "rows.csv", csv), ("jsonl", "rows.jsonl", jsonl)):
        spec = write_spec(tmp_path / builder, {
            "name": "m", "source": {"builder": builder, "path": name, "options": {"na_values": ["NA"]}},
            "splits": {"train": 0.5, "test": 0.5}, "features": features}, {name: text})
        info = tb.build(str(spec), output=str(tmp_path / builder / "out"))
        statistics = info.statistics
        for feature, count in expected.items():
            assert statistics["train"][feature].get("num_missing", 0) + statistics["test"][feature].get("num_missing", 0) == count
        assert statistics["train"]["t"]["length"]["std"] > 0


def _png(pixels):
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()


def test_binary_values_keep_no_vocabulary_but_their_sizes_in_any_order():
    """Instance masks (a PNG an object) were a vocabulary: every PNG held twice per worker and in
    every checkpoint. Binary values count their sizes instead, whichever batch met the first."""
    feature = _feature({"dtype": "bytes"})
    masks = [_png(np.kron(np.eye(2, dtype=np.uint8), np.ones((size, size), np.uint8))) for size in range(4, 24)]
    text = [b"cat", b"dog"]
    sizes = np.array([len(value) for value in masks + text])
    expected = {"num_values": len(sizes), "binary": True,
                "value_bytes": {"min": int(sizes.min()), "max": int(sizes.max()), "mean": float(sizes.mean()),
                                "std": pytest.approx(float(sizes.std()))}}
    for batches in (("bytes", text), ("bytes", masks)), (("bytes", masks[:3]), ("bytes", text), ("bytes", masks[3:])):
        stats = _stats(feature, *batches)
        assert stats.to_dict() == expected
        assert not stats.vocabulary  # no copy of any value kept
        restored = FeatureStatistics(feature)
        restored.restore(stats.state())
        assert restored.to_dict() == expected
        assert len(json.dumps(stats.state())) < 1000  # a checkpoint holds no PNG either


def test_text_over_256_bytes_keeps_no_vocabulary_and_isnt_called_binary():
    feature = _feature({"dtype": "string"})
    words = [b"pear", "café\tcrème\n".encode()]
    assert _stats(feature, ("bytes", words)).to_dict()["vocabulary_size"] == 2  # text: tab, line feed, UTF-8
    assert _stats(feature, ("bytes", [b"x" * 256])).to_dict()["vocabulary_size"] == 1  # 256 bytes: still counted
    sizes = np.array([4, 13, 257])  # café\tcrème\n: 13 bytes
    expected = {"num_values": 3, "value_bytes": {"min": 4, "max": 257, "mean": float(sizes.mean()),
                                                 "std": pytest.approx(float(sizes.std()))}}
    for batches in (("bytes", words), ("bytes", [b"x" * 257])), (("bytes", [b"x" * 257]), ("bytes", words)):
        assert _stats(feature, *batches).to_dict() == expected  # (no `binary`: text, only long)


def test_is_text_refuses_control_characters_and_utf8_cut_between_values():
    assert is_text([b"plain", "naïve\r\n\ttab".encode(), b""])
    assert not is_text([b"a\x00b"]) and not is_text([b"\x1b[0m"]) and not is_text([b"\x89PNG"])
    assert not is_text([b"caf\xc3", b"\xa9"])  # é cut in two: neither is text, nor are they joined


def test_a_coco_build_keeps_no_vocabulary_of_its_masks(tmp_path):
    pytest.importorskip("pycocotools")
    from support.coco_masks import build_coco_masks

    import tfrecord_builder as tb

    info = build_coco_masks(tmp_path, images=4, per_image=3)
    masks = [png for record in tb.read(info.path, "train") for png in record["masks"].tolist()]
    sizes = np.array([len(png) for png in masks])
    stats = info.statistics["train"]["masks"]
    assert stats == {"num_values": 12, "binary": True, "length": stats["length"],
                     "value_bytes": {"min": int(sizes.min()), "max": int(sizes.max()), "mean": float(sizes.mean()),
                                     "std": pytest.approx(float(sizes.std()))}}


_COUNTS = st.lists(st.tuples(st.binary(max_size=3), st.integers(1, 5)), max_size=30).map(
    lambda pairs: Counter(dict(pairs)))


@settings(max_examples=200, deadline=None)
@given(_COUNTS, _COUNTS)
def test_counts_are_added_as_counter_update_adds_them_in_the_same_order(counts, more):
    """The order matters: ties among the most frequent values go to the one counted first."""
    expected = Counter(counts)
    expected.update(more)
    add_counts(counts, more)
    assert list(counts.items()) == list(expected.items())
