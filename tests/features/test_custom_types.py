"""Feature types of one's own get what the built-in ones get, with no edit anywhere else: the
build's statistics, TFDS's features.json, a card in the report, and reading back through
`tb.read`, `tb.input_fn` and TFDS. Two types live outside the package: `Percent`, a tensor
registered from this module (`tb.register_feature`), which keeps every hook `TensorFeature` has,
and `PointCloud`, written to a file a spec names (`points.py:PointCloud`), which extends
`tb.Feature` itself: its own encoding and reading, and the hooks it overrides (features/base.py)."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tfrecord_builder as tb
from tfrecord_builder.features import base
from tfrecord_builder.read.report.data import report_data

from conftest import batches_as_numpy, write_spec


@dataclasses.dataclass(frozen=True, kw_only=True)
class Percent(tb.TensorFeature):
    """A share of a whole in [0, 100], float32: a tensor whose values are checked."""

    dtype: str = tb.spec_field("always float32", "float32")

    def encode_values(self, values: Any, origin: Any, language: Any = "python") -> Any:
        encoded = super().encode_values(values, origin, language)
        wrong = np.flatnonzero((np.asarray(encoded.values) < 0) | (np.asarray(encoded.values) > 100))
        if len(wrong):
            raise self.fail(origin, int(wrong[0]), f"{encoded.values[wrong[0]]:g} is not a percentage in [0, 100]")
        return encoded


POINTS = '''\
"""A point cloud: each record any number of [x, y, z] points, float32, read back ragged [n, 3]."""
import dataclasses

import numpy as np

import tfrecord_builder as tb
from tfrecord_builder.features.values import Values


@dataclasses.dataclass(frozen=True, kw_only=True)
class PointCloud(tb.Feature):
    unit: str = tb.spec_field("what the coordinates count", "m")

    @property
    def is_variable(self):
        return True

    @property
    def fills_absent(self):
        return True  # a record without points

    @property
    def inner_size(self):
        return 3  # the statistics' lengths count points, not coordinates

    @property
    def card(self):
        return dataclasses.replace(super().card, kind="number")  # a histogram of the coordinates

    def encode(self, values, origin, base_dir=None, language="python"):
        clouds = []
        for row, value in enumerate(values):
            try:
                clouds.append(np.asarray(value if value is not None else [], np.float32).reshape(-1, 3))
            except ValueError:
                raise self.fail(origin, row, f"expected [x, y, z] points, received {value!r}") from None
        counts = np.array([cloud.size for cloud in clouds], np.int64)
        flat = np.concatenate([cloud.reshape(-1) for cloud in clouds]) if clouds else np.zeros(0, np.float32)
        return {self.record_key: Values("float", flat, counts)}

    def parsing(self):
        return {self.record_key: ("ragged", "float32", [None, 3])}

    def describe(self):
        return f"points float32 [null, 3] ({self.unit}, ragged)"
'''


@pytest.fixture
def percent(monkeypatch):
    """`type: percent`, registered for the test only."""
    monkeypatch.setattr(base, "FEATURE_TYPES", dict(base.FEATURE_TYPES))
    monkeypatch.setattr(base, "TYPE_NAMES", dict(base.TYPE_NAMES))
    tb.register_feature("percent")(Percent)


def _rows() -> list[dict[str, Any]]:
    rng = np.random.default_rng(39)
    rows = []
    for index in range(30):
        cloud = rng.normal(0.0, 2.0, (index % 4, 3)).astype(np.float32).round(2)
        rows.append({"id": index, "share": float(np.float32(index * 3.25)), "cloud": cloud.tolist(),
                     "kind": ["rock", "tree"][index % 2]})
    return rows


def _build(folder: Path) -> tb.DatasetInfo:
    rows = _rows()
    spec = {"name": "survey", "version": "1.0.0", "source": {"builder": "jsonl", "path": "rows.jsonl"},
            "splits": {"train": 1.0},
            "features": {"id": {"dtype": "int64"}, "share": {"type": "percent"},
                         "cloud": {"type": "points.py:PointCloud", "unit": "cm"},
                         "kind": {"type": "class_label", "names": ["rock", "tree"]}},
            "label": "kind", "output": {"shards": 1, "shuffle": False}}
    files = {"rows.jsonl": "".join(json.dumps(row) + "\n" for row in rows), "points.py": POINTS}
    return tb.build(write_spec(folder, spec, files), output=folder / "out", workers=1)


def _moments(values: np.ndarray) -> dict[str, float]:
    values = np.asarray(values, np.float64)
    return {"min": float(values.min()), "max": float(values.max()), "mean": float(values.mean()),
            "std": float(values.std())}


def test_types_of_ones_own_get_statistics_tfds_features_a_report_card_and_reading(tf, tmp_path, percent):
    rows = _rows()
    info = _build(tmp_path)
    shares = np.array([row["share"] for row in rows], np.float32)
    coordinates = np.concatenate([np.asarray(row["cloud"], np.float32).reshape(-1) for row in rows])
    points = np.array([len(row["cloud"]) for row in rows])

    # statistics: the percent's values; the cloud's coordinates, and its lengths in points (inner_size)
    stats = json.loads((Path(info.path) / "tfrecord_builder.json").read_text())["statistics"]["train"]
    assert stats["share"] == pytest.approx({"num_values": 30, **_moments(shares)})
    cloud = dict(stats["cloud"])
    assert cloud.pop("length") == pytest.approx({"min": 0, "max": 3, "mean": points.mean(), "std": points.std()})
    assert cloud == pytest.approx({"num_values": len(coordinates), **_moments(coordinates)})
    assert stats["kind"] == {"classes": {"rock": 15, "tree": 15}}

    # TFDS: a Tensor of each, as the reading describes it (Feature.tfds_features' default)
    described = json.loads((Path(info.path) / "features.json").read_text())["featuresDict"]["features"]
    assert described["share"]["tensor"] == {"shape": {}, "dtype": "float32", "encoding": "none"}
    assert described["cloud"]["tensor"] == {"shape": {"dimensions": ["-1", "3"]}, "dtype": "float32",
                                            "encoding": "none"}
    tfds = pytest.importorskip("tensorflow_datasets")
    read = list(tfds.builder_from_directory(info.path).as_dataset(split="train", shuffle_files=False))
    assert [float(example["share"]) for example in read] == shares.tolist()
    assert [example["cloud"].numpy().tolist() for example in read] == [np.float32(row["cloud"]).reshape(-1, 3).tolist()
                                                                      for row in rows]

    # tb.read and tb.input_fn
    records = list(tb.read(info.path, "train"))
    assert [record["share"] for record in records] == shares.tolist()
    assert [np.asarray(record["cloud"]).tolist() for record in records] == [
        np.float32(row["cloud"]).reshape(-1, 3).tolist() for row in rows]
    batches = batches_as_numpy(tb.input_fn(info.path, "train", batch_size=30, shuffle=False))
    (features, labels), = batches
    assert features["share"].tolist() == shares.tolist() and labels.tolist() == [index % 2 for index in range(30)]
    assert features["cloud"] == [np.float32(row["cloud"]).reshape(-1, 3).tolist() for row in rows]

    # the report: each a number card (the cloud's, its type's `card`), with the build's figures
    # and a histogram of the values read
    shown = {feature.name: feature for feature in report_data(tb.load(info.path).info).features}
    assert (shown["share"].kind, shown["cloud"].kind, shown["kind"].kind) == ("number", "number", "class_label")
    assert dict(shown["cloud"].rows)["values"] == {"train": f"{len(coordinates):,}"}
    assert dict(shown["cloud"].rows)["length (values per record)"] == {"train": f"0–3, mean {points.mean():.1f} ± "
                                                                                 f"{points.std():.1f}"}
    assert sum(shown["cloud"].values.counts["train"]) == len(coordinates)
    assert sum(shown["share"].values.counts["train"]) == 30
    page = tb.report(info.path, tmp_path / "report.html")
    text = Path(page).read_text(encoding="utf-8")
    for name in ("share", "cloud"):
        assert f'data-kind="number">\n<header><h3>{name}</h3>' in text
    assert "points float32 [null, 3] (cm, ragged)" in text


def test_a_type_of_ones_own_refuses_a_value_at_its_line(tmp_path, percent):
    spec = {"name": "s", "source": {"builder": "jsonl", "path": "rows.jsonl"},
            "features": {"share": {"type": "percent"}, "cloud": {"type": "points.py:PointCloud"}}}
    rows = '{"share": 5, "cloud": []}\n{"share": 250, "cloud": [[1, 2, 3]]}\n'
    with pytest.raises(tb.DataError) as raised:
        tb.build(write_spec(tmp_path, spec, {"rows.jsonl": rows, "points.py": POINTS}), output=tmp_path / "out")
    assert str(raised.value) == "rows.jsonl, line 2: feature `share`: 250 is not a percentage in [0, 100]"
    rows = '{"share": 5, "cloud": [[1, 2]]}\n'
    with pytest.raises(tb.DataError) as raised:
        tb.build(write_spec(tmp_path, spec, {"rows.jsonl": rows, "points.py": POINTS}), output=tmp_path / "out")
    assert str(raised.value) == "rows.jsonl, line 1: feature `cloud`: expected [x, y, z] points, received [[1, 2]]"
