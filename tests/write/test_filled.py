"""Values the `default:` filled in are not the source's: the statistics describe the values given
(min, max, mean, std, histograms, classes, top values) and count the filled ones apart
(`num_filled`), which `inspect` and the report show; a dataset of an earlier build, whose
statistics lack the count, still reads."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest

import tfrecord_builder as tb
from tfrecord_builder.read.report import report, report_data
from tfrecord_builder.write.info import read_info
from tfrecord_builder.write.stats import FeatureStatistics

from support.cli import assert_ok, run_cli
from conftest import write_spec

ROWS, GAPS = 322, 59


def _rows() -> tuple[str, list[float | None]]:
    """A regression table: `target` missing in 59 of 322 rows, `count` in some, `kind` in some."""
    rng = random.Random(4)
    gaps = set(rng.sample(range(ROWS), GAPS))
    targets = [None if row in gaps else round(rng.uniform(300, 770), 2) for row in range(ROWS)]
    lines = ["id,target,count,kind"]
    for row, target in enumerate(targets):
        lines.append(f"{row},{'' if target is None else target},{'' if row % 7 == 0 else row % 9 + 1},"
                     f"{'' if row % 10 == 0 else 'ab'[row % 2]}")
    return "\n".join(lines) + "\n", targets


SPEC = {"name": "prices", "source": {"builder": "csv", "path": "rows.csv", "key": "id"},
        "splits": {"train": 0.8, "test": 0.2},
        # the defaults an earlier infer wrote: 0 for every gap, which passed for a value
        "features": {"id": {"dtype": "int64"}, "target": {"dtype": "float32", "default": 0.0},
                     "count": {"dtype": "int64", "default": 0},
                     "kind": {"type": "class_label", "names": ["a", "b"], "default": "a"}}}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("filled")
    text, targets = _rows()
    spec = write_spec(folder, SPEC, {"rows.csv": text})
    info = tb.build(spec, output=folder / "out", workers=2)
    return info, targets


def _whole(statistics: dict, feature: str) -> dict:
    """The statistics of both splits as one: counts summed, means weighted."""
    parts = [statistics[split][feature] for split in ("train", "test")]
    total = sum(part["num_values"] for part in parts)
    return {"num_values": total, "num_filled": sum(part.get("num_filled", 0) for part in parts),
            "num_missing": sum(part.get("num_missing", 0) for part in parts),
            "min": min(part["min"] for part in parts), "max": max(part["max"] for part in parts),
            "mean": sum(part["mean"] * part["num_values"] for part in parts) / total}


def test_the_statistics_describe_the_values_given_and_count_the_filled_apart(built):
    info, targets = built
    given = np.array([target for target in targets if target is not None], np.float32).astype(np.float64)
    target = _whole(info.statistics, "target")
    assert (target["num_values"], target["num_filled"], target["num_missing"]) == (ROWS - GAPS, GAPS, GAPS)
    assert (target["min"], target["max"]) == (given.min(), given.max())  # not 0
    assert target["mean"] == pytest.approx(given.mean(), rel=1e-12)
    count = _whole(info.statistics, "count")
    assert count["num_filled"] == len(range(0, ROWS, 7)) and count["min"] == 1
    classes = [info.statistics[split]["kind"] for split in ("train", "test")]
    assert sum(part["num_filled"] for part in classes) == len(range(0, ROWS, 10))
    assert sum(part["classes"]["a"] for part in classes) == sum(1 for row in range(ROWS) if row % 10 and row % 2 == 0)


def test_inspect_shows_the_filled_count(built, tmp_path):
    info, _ = built
    shown = run_cli("inspect", info.path, "--split", "test", cwd=tmp_path)
    assert_ok(shown)
    line = next(line for line in shown.stdout.splitlines() if line.startswith("  target: "))
    assert line.endswith(f"; filled {info.statistics['test']['target']['num_filled']}")
    assert "classes a " in shown.stdout and f"; filled {info.statistics['test']['kind']['num_filled']}" in shown.stdout


def test_the_report_leaves_the_filled_values_out_of_its_histograms_and_counts_them(built):
    info, targets = built
    data = report_data(read_info(str(info.path)), sample=None)
    count = next(feature for feature in data.features if feature.name == "count")
    for split in ("train", "test"):
        stats = info.statistics[split]["count"]
        assert count.filled[split] == stats["num_filled"]
        # every value drawn is one the source gave: none in a bar at 0 (below the least value, 1)
        assert count.values.totals[split] == stats["num_values"]
        records = [int(record["count"]) for record in tb.read(info.path, split)]
        expected, _ = np.histogram([value for value in records if value != 0], bins=np.asarray(count.values.edges))
        assert count.values.counts[split] == expected.tolist()
    rows = dict(count.rows)
    assert rows["filled (default, not counted above)"] == {split: f"{info.statistics[split]['count']['num_filled']:,}"
                                                           for split in ("train", "test")}
    assert "filled by the default" in report(info.path)


def test_a_dataset_of_an_earlier_build_without_the_filled_count_still_reads(built, tmp_path):
    info, _ = built
    import shutil

    copy = tmp_path / "old"
    shutil.copytree(info.path, copy)
    path = copy / "tfrecord_builder.json"
    written = json.loads(path.read_text(encoding="utf-8"))
    for split in written["statistics"].values():
        for stats in split.values():
            stats.pop("num_filled", None)
    path.write_text(json.dumps(written), encoding="utf-8")
    data = report_data(read_info(str(copy)), sample=None)
    target = next(feature for feature in data.features if feature.name == "target")
    assert target.filled == {} and target.missing == {split: info.statistics[split]["target"]["num_missing"]
                                                       for split in ("train", "test")}
    shown = run_cli("inspect", copy, "--split", "test", cwd=tmp_path)
    assert_ok(shown)
    assert f"; missing {info.statistics['test']['target']['num_missing']}" in shown.stdout


def test_a_checkpoint_without_the_filled_count_restores_as_none_filled():
    from tfrecord_builder.features import TensorFeature
    from tfrecord_builder.spec.fields import At, convert
    from tfrecord_builder.spec.yaml_source import Document

    feature = convert(TensorFeature, {"dtype": "float32"}, At(Document(None, "spec.yaml"))).named("f")
    saved = FeatureStatistics(feature).state()
    del saved["filled"]
    restored = FeatureStatistics(feature)
    restored.restore({**saved, "missing": 3})
    assert restored.filled == 0 and restored.to_dict() == {"num_missing": 3}
