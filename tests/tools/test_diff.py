"""`tfrecord-builder diff OLD NEW`: two specs or two built datasets compared, on real builds.

One small shop dataset (JSONL: a price, a rating that may be NaN, a colour, a note that may be
missing, a list of tags and a class) is built in versions: 1.0.0; 1.0.1, the same rows rebuilt;
1.0.2, four rows more of the same distribution; 1.1.0, drawn with every distribution moved; and
2.0.0 with its spec changed. The command runs in a subprocess where its exit status is the point,
in-process (`main`) elsewhere, and every value it reports is checked against the statistics in
the datasets' tfrecord_builder.json.
"""
from __future__ import annotations

import json
import math
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

import tfrecord_builder as tb
from tfrecord_builder.cli.main import main
from tfrecord_builder.tools.diff import Thresholds, diff
from tfrecord_builder.tools.diff.drift import feature_drift

from conftest import write_spec
from support.cli import assert_error, run_cli, show
from support.versions import NUM_ROWS, weather_csv

SPLITS = ("train", "test")


def _rows(count: int, seed: int, *, start: int = 0, price: float = 10.0, classes=("a", "b", "c"),
          weights=(5, 3, 2), colors=("red", "green", "blue"), color_weights=(5, 3, 2), tags=(1, 3),
          nan: float = 0.0, missing: float = 0.1) -> list[dict[str, Any]]:
    """`count` rows drawn with `seed`: the distributions a version's data is drawn from."""
    rng = random.Random(seed)
    rows = []
    for index in range(count):
        row = {"id": start + index, "price": round(rng.gauss(price, 2.0), 3),
               "rating": math.nan if rng.random() < nan else round(rng.uniform(1, 5), 2),
               "color": rng.choices(colors, color_weights)[0],
               "tags": [rng.randrange(100) for _ in range(rng.randint(*tags))],
               "kind": rng.choices(classes, weights)[0]}
        if rng.random() >= missing:
            row["note"] = rng.choice(["fragile", "gift", "urgent"])
        rows.append(row)
    return rows


BASE = _rows(200, seed=1)
VERSIONS = {
    "1.0.0": BASE,
    "1.0.1": BASE,  # the same rows, rebuilt
    "1.0.2": BASE + _rows(4, seed=3, start=1000),  # 2% more rows, same distributions
    # every distribution moved: price +1 std, a new class and another balance, a new colour,
    # longer tag lists, NaN ratings and more missing notes; 30% more rows
    "1.1.0": _rows(260, seed=2, price=12.0, classes=("a", "b", "c", "d"), weights=(2, 3, 2, 1),
                   colors=("red", "green", "blue", "black"), color_weights=(2, 3, 2, 4), tags=(3, 6),
                   nan=0.1, missing=0.3),
}


def _spec(version: str, **changes: Any) -> dict[str, Any]:
    spec = {
        "name": "shop", "version": version,
        "source": {"builder": "jsonl", "path": "rows.jsonl", "key": "id"},
        "splits": {"train": 0.8, "test": 0.2},
        "features": {
            "price": {"dtype": "float32"},
            "rating": {"dtype": "float32", "allow_nan": True},
            "color": {"dtype": "string"},
            "note": {"dtype": "string", "default": ""},
            "tags": {"dtype": "int64", "shape": [None]},
            "kind": {"type": "class_label", "names": ["a", "b", "c", "d"]},
        },
        "label": "kind", "output": {"shards": 2},
    }
    spec.update(changes)
    return spec


def _jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """Every version of the shop built under ROOT/build/shop/VERSION, and an unrelated dataset."""
    root = tmp_path_factory.mktemp("diff")
    for version, rows in VERSIONS.items():
        path = write_spec(root / "specs" / version, _spec(version), {"rows.jsonl": _jsonl(rows)})
        tb.build(path, output=root / "build", workers=1)
    # 2.0.0: one split only, price as float64, colour dropped, a weight added
    features = dict(_spec("2.0.0")["features"], price={"dtype": "float64"}, weight={"dtype": "float32", "default": 0})
    del features["color"]
    path = write_spec(root / "specs" / "2.0.0", _spec("2.0.0", features=features, splits={"train": 1.0}),
                      {"rows.jsonl": _jsonl(BASE)})
    tb.build(path, output=root / "build", workers=1)
    weather = {"name": "weather", "source": {"builder": "csv", "path": "rows.csv"},
               "features": {"temperature": {"dtype": "float32"}, "wind": {"dtype": "float32"}}}
    path = write_spec(root / "specs" / "weather", weather, {"rows.csv": "temperature,wind\n12.5,3\n14,4.5\n"})
    tb.build(path, output=root / "build", workers=1)
    return root


def _dataset(root: Path, version: str, name: str = "shop") -> Path:
    return root / "build" / name / version


def _statistics(root: Path, version: str) -> dict[str, Any]:
    info = json.loads((_dataset(root, version) / "tfrecord_builder.json").read_text(encoding="utf-8"))
    return info


def _lines(text: str) -> list[str]:
    """The report's lines with runs of spaces as one (table columns are padded to their width)."""
    return [" ".join(line.split()) for line in text.splitlines()]


def _section(lines: list[str], name: str) -> list[str]:
    """The lines of one section of the report, its heading first, up to the blank line after it."""
    start = next(index for index, line in enumerate(lines) if line.split(" ")[0] == name)
    end = lines.index("", start) if "" in lines[start:] else len(lines)
    return lines[start:end]


def _run(capsys, *args: Any) -> tuple[int, str]:
    """The command line in this process: (exit status, stdout)."""
    status = main(["diff", *map(str, args)])
    return status, capsys.readouterr().out


# --- two datasets ------------------------------------------------------------------------------


def test_a_drifted_version_fails_naming_each_measure_over_its_threshold(built):
    old, new = _statistics(built, "1.0.0"), _statistics(built, "1.1.0")
    result = run_cli("diff", _dataset(built, "1.0.0"), _dataset(built, "1.1.0"), cwd=built)
    assert result.returncode == 1, show(result)
    assert result.stderr == ""
    lines = _lines(result.stdout)
    assert lines[:4] == [f"shop 1.0.0 ({_dataset(built, '1.0.0')}) -> shop 1.1.0 ({_dataset(built, '1.1.0')})", "",
                         "spec", "(no changes)"]
    for split in SPLITS:
        before, after = old["splits"][split]["num_examples"], new["splits"][split]["num_examples"]
        assert any(line.startswith(f"! {split} {before} -> {after} ({(after - before) / before:+.1%}, over 10.0%)")
                   for line in lines), result.stdout
    expected = []
    for split in SPLITS:
        stats_old, stats_new = old["statistics"][split], new["statistics"][split]
        price_old, price_new = stats_old["price"], stats_new["price"]
        shift = abs(price_new["mean"] - price_old["mean"]) / price_old["std"]
        assert 0.5 < shift < 1.6  # the data moved by one std; its sample, a little more or less
        expected.append(f"! {split} price mean shift {shift:.2f} std 0.50 std "
                        f"{price_old['mean']:.4g} -> {price_new['mean']:.4g} (old std {price_old['std']:.4g})")
        length_old, length_new = stats_old["tags"]["length"], stats_new["tags"]["length"]
        shift = abs(length_new["mean"] - length_old["mean"]) / length_old["std"]
        expected.append(f"! {split} tags mean length {shift:.2f} std 0.50 std {length_old['mean']:.4g} -> "
                        f"{length_new['mean']:.4g} (old std {length_old['std']:.4g})")
        expected.append(f"! {split} tags max length 100.0% 20.0% 1-3 -> 3-6")
        classes_old, classes_new = stats_old["kind"]["classes"], stats_new["kind"]["classes"]
        shares_old = {name: count / sum(classes_old.values()) for name, count in classes_old.items()}
        shares_new = {name: count / sum(classes_new.values()) for name, count in classes_new.items()}
        name = max(shares_old, key=lambda name: abs(shares_new[name] - shares_old[name]))
        expected.append(f"! {split} kind class shift {abs(shares_new[name] - shares_old[name]) * 100:.1f} pts 5.0 pts "
                        f"{name}: {shares_old[name]:.1%} -> {shares_new[name]:.1%}")
        assert classes_old["d"] == 0 and classes_new["d"] > 0
        expected.append(f"! {split} kind new classes 1 0 d ({classes_new['d']})")
        expected.append(f"! {split} color vocabulary size 33.3% 20.0% 3 -> 4 (+33.3%)")
        black = next(item["count"] for item in stats_new["color"]["top_values"] if item["value"] == "black")
        share = black / stats_new["color"]["num_values"]
        expected.append(f"! {split} color top value shift {share * 100:.1f} pts 5.0 pts 'black' 0.0% -> {share:.1%}")
        nan = stats_new["rating"]["num_non_finite"]
        share = nan / (nan + stats_new["rating"]["num_values"])
        assert "num_non_finite" not in stats_old["rating"]
        expected.append(f"! {split} rating NaN share {share * 100:.1f} pts 1.0 pts 0.0% -> {share:.1%} (0 -> {nan})")
        missing_old, missing_new = stats_old["note"]["num_missing"], stats_new["note"]["num_missing"]
        examples_old, examples_new = old["splits"][split]["num_examples"], new["splits"][split]["num_examples"]
        share_old, share_new = missing_old / examples_old, missing_new / examples_new
        expected.append(f"! {split} note missing share {abs(share_new - share_old) * 100:.1f} pts 1.0 pts "
                        f"{share_old:.1%} -> {share_new:.1%} ({missing_old} -> {missing_new})")
        # the default fills a missing note: counted as filled, not as a value "" among the notes given
        assert [stats["note"]["num_filled"] for stats in (stats_old, stats_new)] == [missing_old, missing_new]
        assert all(item["value"] != "" for stats in (stats_old, stats_new) for item in stats["note"]["top_values"])
        shift = next(measure for measure in feature_drift(split, "note", stats_old["note"], stats_new["note"],
                                                          (examples_old, examples_new), Thresholds())
                     if measure.measure == "top value shift")
        if shift.crossed:  # the given notes' own balance, drawn at random
            expected.append(f"! {split} note top value shift {shift.value * 100:.1f} pts 5.0 pts {shift.detail}")
    assert sorted(_section(lines, "drift")[2:]) == sorted(expected), result.stdout
    assert lines[-1] == f"DRIFT: {4 + len(expected)} over their thresholds (splits 4, drift {len(expected)})"


def test_the_same_rows_rebuilt_as_a_new_version_pass_with_every_measure_unmoved(built, capsys):
    comparison = diff(_dataset(built, "1.0.0"), _dataset(built, "1.0.1"))
    assert not comparison.crossed and comparison.spec == []
    assert [(split.name, split.change) for split in comparison.splits] == [("train", "kept"), ("test", "kept")]
    assert {measure.value for split in comparison.splits for measure in split.measures} == {0.0}
    values = {(measure.measure, measure.value) for measure in comparison.drift}
    assert values == {("mean shift", 0.0), ("std ratio", 1.0), ("vocabulary size", 0.0), ("top value shift", 0.0),
                      ("missing share", 0.0), ("mean length", 0.0), ("max length", 0.0), ("class shift", 0.0)}
    features = {measure.feature for measure in comparison.drift}
    assert features == {"price", "rating", "color", "note", "tags", "kind"}
    status, out = _run(capsys, _dataset(built, "1.0.0"), _dataset(built, "1.0.1"))
    assert status == 0
    assert _lines(out)[-3:] == ["drift (train, test: 28 measures, 0 over their thresholds; --all lists every one)", "",
                                "ok: nothing over its threshold"]


def test_a_few_more_rows_of_the_same_data_stay_under_every_threshold(built):
    result = run_cli("diff", _dataset(built, "1.0.0"), _dataset(built, "1.0.2"), "--all", cwd=built)
    assert result.returncode == 0, show(result)
    lines = _lines(result.stdout)
    old, new = _statistics(built, "1.0.0"), _statistics(built, "1.0.2")
    before, after = old["splits"]["train"]["num_examples"], new["splits"]["train"]["num_examples"]
    assert 0 < after - before <= 4
    assert any(line.startswith(f"train {before} -> {after} ({(after - before) / before:+.1%}) 2 -> 2")
               for line in lines), result.stdout
    assert not any(line.startswith("!") for line in lines)
    drift = [line for line in lines if line.startswith(("train ", "test ")) and " -> " in line][2:]
    # --all: every measure, none marked: per split 2 for each number (price, rating), 2 for each
    # string (color; note, with its missing share: 3), 4 for the tags (their values, their lengths), 1 for the kind
    assert len(drift) == 28
    assert lines[-1] == "ok: nothing over its threshold"


def test_thresholds_on_the_command_line_flip_the_outcome(built, capsys):
    small = (_dataset(built, "1.0.0"), _dataset(built, "1.0.2"))
    status, out = _run(capsys, *small, "--max-count-change", "0.01")
    assert status == 1
    assert _lines(out)[-1] == "DRIFT: 1 over its threshold (splits 1)"
    assert any(line.startswith("! train ") and "(+2.5%, over 1.0%)" in line for line in _lines(out)), out
    comparison = diff(*small)
    price = next(m for m in comparison.drift if (m.split, m.feature, m.measure) == ("train", "price", "mean shift"))
    assert 0 < price.value < 0.05
    status, out = _run(capsys, *small, "--max-mean-shift", f"{price.value / 2:.6f}")
    assert status == 1
    assert any(line.startswith(f"! train price mean shift {price.value:.2f} std") for line in _lines(out)), out
    # the drifted version passes once every measure it moved is allowed to move that far
    drifted = (_dataset(built, "1.0.0"), _dataset(built, "1.1.0"))
    loose = ["--max-mean-shift", "5", "--max-count-change", "0.5", "--max-size-change", "0.5", "--max-class-shift",
             "0.6", "--max-classes-changed", "1", "--max-vocabulary-change", "inf", "--max-length-change", "1.5",
             "--max-nan-change", "0.2", "--max-missing-change", "0.3"]
    status, out = _run(capsys, *drifted, *loose)
    assert (status, _lines(out)[-1]) == (0, "ok: nothing over its threshold"), out
    status, out = _run(capsys, *drifted, *loose[:-1], "0.1")
    assert status == 1
    assert _lines(out)[-1] == "DRIFT: 2 over their thresholds (drift 2)"


def test_json_holds_every_measure_with_its_value_threshold_and_verdict(built):
    result = run_cli("diff", _dataset(built, "1.0.0") / "tfrecord_builder.json",
                     _dataset(built, "1.1.0") / "dataset_info.json", "--json", "--max-std-ratio", "1.1", cwd=built)
    assert result.returncode == 1, show(result)
    report = json.loads(result.stdout)
    old, new = _statistics(built, "1.0.0"), _statistics(built, "1.1.0")
    assert report["old"] == {"path": str(_dataset(built, "1.0.0") / "tfrecord_builder.json"), "kind": "dataset",
                             "name": "shop", "version": "1.0.0"}
    assert report["new"]["version"] == "1.1.0" and report["crossed"] is True
    assert report["thresholds"]["max_std_ratio"] == 1.1 and report["thresholds"]["max_mean_shift"] == 0.5
    assert report["spec"] == []
    train = report["splits"][0]
    counts = old["splits"]["train"]["num_examples"], new["splits"]["train"]["num_examples"]
    assert train["split"] == "train" and train["change"] == "kept" and train["crossed"] is True
    assert train["old"]["num_examples"] == counts[0] and train["new"]["num_examples"] == counts[1]
    assert train["examples"] == {"value": pytest.approx((counts[1] - counts[0]) / counts[0]), "threshold": 0.1,
                                 "crossed": True}
    measures = {(m["split"], m["feature"], m["measure"]): m for m in report["drift"]}
    for split in SPLITS:
        price_old, price_new = old["statistics"][split]["price"], new["statistics"][split]["price"]
        shift = measures[(split, "price", "mean shift")]
        assert shift["value"] == pytest.approx(abs(price_new["mean"] - price_old["mean"]) / price_old["std"])
        assert (shift["unit"], shift["threshold"], shift["crossed"]) == ("std", 0.5, True)
        assert (shift["old"], shift["new"]) == (price_old["mean"], price_new["mean"])
        ratio = measures[(split, "price", "std ratio")]
        expected = max(price_new["std"] / price_old["std"], price_old["std"] / price_new["std"])
        assert ratio["value"] == pytest.approx(expected)
        assert ratio["crossed"] is (expected > 1.1)
        classes = measures[(split, "kind", "new classes")]
        assert classes["new"] == {"d": new["statistics"][split]["kind"]["classes"]["d"]} and classes["value"] == 1
        top = measures[(split, "color", "top values")]
        assert (top["new"], top["old"], top["threshold"], top["crossed"]) == (["black"], [], None, False)
        assert measures[(split, "color", "top value shift")]["old"] == {"value": "black", "share": 0.0}
    # each split: examples and bytes
    drift = sum(m["crossed"] for m in report["drift"])
    assert report["crossed_by_section"] == {"spec": 0, "splits": 4, "drift": drift, "membership": 0}
    assert report["num_crossed"] == 4 + drift
    # keyed by id: the 200 ids of 1.0.0 are in their splits again, 60 are new
    assert report["membership"] == {"compared": True, "crossed": False, "threshold": 0, "moved": [], "num_moved": 0,
                                    "stayed": 200, "unfollowed": 0, "added": 60}


def test_a_changed_spec_between_datasets_and_a_removed_split(built, capsys):
    status, out = _run(capsys, _dataset(built, "1.0.0"), _dataset(built, "2.0.0"))
    assert status == 1
    lines = _lines(out)
    assert lines[2:8] == [
        "spec",
        "! feature `price` changed: dtype: float32 -> float64",
        "! feature `color` removed (was string [])",
        "feature `weight` added: float32 []",
        "split `train`: 0.8 -> 1.0",
        "",
    ]
    assert "! test (removed)" in lines
    assert "train" in lines[lines.index("! test (removed)") - 1]
    # price is compared though its dtype changed: the same numbers, float64 stored as float32
    drift = diff(_dataset(built, "1.0.0"), _dataset(built, "2.0.0")).drift
    assert {(m.split, m.feature) for m in drift} == {("train", name) for name in
                                                      ("price", "rating", "note", "tags", "kind")}
    # train holds every row now (+25%, bytes too), test is gone; the rows are the same: no drift
    # and every row of the old test split is in train: a model trained on 2.0.0 has seen them
    test_rows = _statistics(built, "1.0.0")["splits"]["test"]["num_examples"]
    assert _section(lines, "membership") == [
        "membership", f"! {test_rows} rows of old test are in new train", f"{200 - test_rows} rows kept their split"]
    assert lines[-1] == "DRIFT: 6 over their thresholds (spec 2, splits 3, membership 1)"


def test_statistics_of_an_older_dataset_without_std_of_lengths_or_missing_counts(built, tmp_path, capsys):
    """Every statistic is optional: a dataset built before lengths had a std and missing values a
    count is compared with what it has (mean length relatively)."""
    older = tmp_path / "shop" / "0.9.0"
    shutil.copytree(_dataset(built, "1.0.0"), older)
    info = json.loads((older / "tfrecord_builder.json").read_text(encoding="utf-8"))
    for split in info["statistics"].values():
        del split["tags"]["length"]["std"]
        del split["note"]["num_missing"]
    (older / "tfrecord_builder.json").write_text(json.dumps(info), encoding="utf-8")
    comparison = diff(older, _dataset(built, "1.1.0"))
    length = next(m for m in comparison.drift if (m.split, m.feature, m.measure) == ("train", "tags", "mean length"))
    old_mean = info["statistics"]["train"]["tags"]["length"]["mean"]
    new_mean = _statistics(built, "1.1.0")["statistics"]["train"]["tags"]["length"]["mean"]
    assert (length.unit, length.threshold) == ("relative", 0.2)
    assert length.value == pytest.approx((new_mean - old_mean) / old_mean)
    missing = next(m for m in comparison.drift if (m.split, m.feature, m.measure) == ("train", "note", "missing share"))
    assert missing.old == 0  # absent: none counted
    status, out = _run(capsys, older, _dataset(built, "1.0.0"))
    assert status == 1  # the missing notes now counted are a change from none
    assert [line for line in _lines(out) if line.startswith("!")] == [
        line for line in _lines(out) if line.startswith("! ") and "note missing share" in line]


# --- two specs, or a spec and a dataset ----------------------------------------------------------


OLD_SPEC = """\
name: shop
version: 1.0.0
source: {builder: csv, path: rows.csv}
splits: {train: 0.8, test: 0.2}
features:
  price:  {dtype: float32}
  color:  {dtype: string}
  sizes:  {dtype: int64, shape: [3]}
  kind:   {type: class_label, names: [a, b, c]}
  photo:  {type: image, encoding: png, shape: [32, 32, 3]}
  note:   {dtype: string, default: "", description: a remark}
label: kind
"""

NEW_SPEC = """\
name: shop
version: 1.1.0
source: {builder: csv, path: rows-2024.csv}
splits: {train: 0.9, test: 0.1}
features:
  price:  {dtype: float64, key: price/eur}
  sizes:  {dtype: int64, shape: [null]}
  kind:   {type: class_label, names: [a, c, d]}
  photo:  {type: image, encoding: jpeg, shape: [32, 32, 3]}
  note:   {dtype: string, default: "-", description: what the buyer wrote}
  weight: {dtype: float32, default: 0}
label: price
output: {compression: gzip}
"""


def test_two_specs_list_every_feature_added_removed_or_changed(tmp_path):
    old = write_spec(tmp_path, OLD_SPEC, name="old.yaml")
    new = write_spec(tmp_path, NEW_SPEC, name="new.yaml")
    result = run_cli("diff", "old.yaml", "new.yaml", cwd=tmp_path)
    assert result.returncode == 1, show(result)
    assert result.stdout.splitlines() == [
        "shop 1.0.0 (old.yaml) -> shop 1.1.0 (new.yaml)",
        "",
        "spec",
        "! feature `price` changed: dtype: float32 -> float64; key: (unset) -> price/eur",
        "! feature `color` removed (was string [])",
        "! feature `sizes` changed: shape: [3] -> [null]",
        "! feature `kind` changed: names: indices moved: c 2 -> 1; new: d at 2; removed: b (was 1) (3 -> 3 classes)",
        "! feature `photo` changed: encoding: png -> jpeg",
        "! feature `note` changed: description: a remark -> what the buyer wrote; default: \"\" -> -",
        "  feature `weight` added: float32 []",
        "  split `train`: 0.8 -> 0.9",
        "  split `test`: 0.2 -> 0.1",
        "  source.path: rows.csv -> rows-2024.csv",
        "! label: kind -> price",
        "  output.compression: none -> gzip",
        "",
        "splits and drift: compared between two built datasets only (OLD is a spec)",
        "",
        "DRIFT: 7 over their thresholds (spec 7)",
    ]
    assert old.exists() and new.exists()


def test_added_features_fail_only_with_fail_on_added(tmp_path, capsys):
    write_spec(tmp_path, OLD_SPEC, name="old.yaml")
    write_spec(tmp_path, OLD_SPEC.replace("label: kind", "  weight: {dtype: float32}\n  ref: {dtype: string}\n"
                                          "label: kind"), name="new.yaml")
    status, out = _run(capsys, tmp_path / "old.yaml", tmp_path / "new.yaml")
    assert status == 0
    assert _lines(out)[3:5] == ["feature `weight` added: float32 []", "feature `ref` added: string []"]
    status, out = _run(capsys, tmp_path / "old.yaml", tmp_path / "new.yaml", "--fail-on-added")
    assert status == 1
    assert _lines(out)[3:5] == ["! feature `weight` added: float32 []", "! feature `ref` added: string []"]
    assert _lines(out)[-1] == "DRIFT: 2 over their thresholds (spec 2)"
    # a description is no change of the data
    write_spec(tmp_path, OLD_SPEC.replace("a remark", "another remark"), name="described.yaml")
    status, out = _run(capsys, tmp_path / "old.yaml", tmp_path / "described.yaml")
    assert status == 0 and "feature `note` changed: description: a remark -> another remark" in _lines(out)


WEATHER_SPEC = """\
name: weather
version: VERSION
source: {builder: csv, path: rows.csv}
splits: {train: 0.8, test: 0.2}
features:
  temperature: {dtype: float32}
  weather:     {type: class_label, names: NAMES}
label: weather
"""


def _weather(tmp_path: Path, version: str, names: str) -> Path:
    return write_spec(tmp_path, WEATHER_SPEC.replace("VERSION", version).replace("NAMES", names),
                      name=f"{version}.yaml")


def test_a_class_inserted_among_the_names_fails_naming_every_index_that_moved(tmp_path, capsys):
    # the spec re-inferred after `clear` first appeared: names sorted, so it lands in the middle
    old = _weather(tmp_path, "1.0.0", "[calm, chilly, rain, snow, sun]")
    new = _weather(tmp_path, "1.1.0", "[calm, chilly, clear, rain, snow, sun]")
    status, out = _run(capsys, old, new)
    assert status == 1
    assert _section(_lines(out), "spec") == [
        "spec", "! feature `weather` changed: names: indices moved: rain 2 -> 3, snow 3 -> 4, sun 4 -> 5; "
        "new: clear at 2 (5 -> 6 classes)"]
    assert _lines(out)[-1] == "DRIFT: 1 over its threshold (spec 1)"
    (change,) = diff(old, new).to_dict()["spec"][0]["changes"]
    assert change["indices"] == {"moved": [("rain", 2, 3), ("snow", 3, 4), ("sun", 4, 5)], "new": [("clear", 2)],
                                 "removed": []}
    # the same names in another order: every index that means another class, none new
    reordered = _weather(tmp_path, "1.0.1", "[chilly, calm, rain, snow, sun]")
    status, out = _run(capsys, old, reordered)
    assert status == 1 and _section(_lines(out), "spec")[1] == (
        "! feature `weather` changed: names: indices moved: chilly 1 -> 0, calm 0 -> 1 (5 -> 5 classes)")


def test_a_class_appended_after_the_old_names_is_an_addition(tmp_path, capsys):
    old = _weather(tmp_path, "1.0.0", "[calm, chilly, rain, snow, sun]")
    new = _weather(tmp_path, "1.1.0", "[calm, chilly, rain, snow, sun, clear]")
    status, out = _run(capsys, old, new)
    assert status == 0  # every old index keeps its class: like an added feature, reported
    assert _section(_lines(out), "spec")[1] == "feature `weather` changed: names: new: clear at 5 (5 -> 6 classes)"
    status, out = _run(capsys, old, new, "--fail-on-added")
    assert status == 1
    assert _section(_lines(out), "spec")[1] == "! feature `weather` changed: names: new: clear at 5 (5 -> 6 classes)"
    # the last class dropped moves no index but a model still predicts it: a removal fails
    status, out = _run(capsys, new, old)
    assert status == 1
    assert _section(_lines(out), "spec")[1] == (
        "! feature `weather` changed: names: removed: clear (was 5) (6 -> 5 classes)")


def test_a_spec_against_its_dataset_compares_their_specs(built, capsys):
    spec = built / "specs" / "1.0.0" / "spec.yaml"
    status, out = _run(capsys, spec, _dataset(built, "1.0.0"))
    assert status == 0
    assert _lines(out)[2:] == ["spec", "(no changes)", "",
                               "splits and drift: compared between two built datasets only (OLD is a spec)", "",
                               "ok: nothing over its threshold"]
    status, out = _run(capsys, _dataset(built, "1.0.0"), built / "specs" / "2.0.0" / "spec.yaml", "--json")
    report = json.loads(out)
    assert status == 1 and report["splits"] == [] and report["drift"] == []
    assert report["new"]["kind"] == "spec"
    assert {(change["name"], change["change"]) for change in report["spec"]} == {
        ("price", "changed"), ("color", "removed"), ("weight", "added"), ("train", "changed"), ("test", "removed")}
    price = next(change for change in report["spec"] if change["name"] == "price")
    assert price["changes"] == [{"key": "dtype", "old": "float32", "new": "float64"}] and price["crossed"] is True


def test_gathered_columns_compare_by_the_columns_a_pattern_matches(tmp_path, capsys):
    """A spec's `columns:` pattern is matched against its source as a build would: the spec and its
    dataset agree; a narrower pattern is a change, its columns shown by count and ends."""
    header = ["id"] + [f"g_{index}" for index in range(10)]
    files = {"d.csv": ",".join(header) + "\n" + "".join(f"{row}," + ",".join("1" * 10) + "\n" for row in range(4))}
    spec = ("name: wide\nsource: {builder: csv, path: d.csv}\noutput: {dir: out}\n"
            "features:\n  genes: {dtype: float32, columns: 'g_*'}\n")
    write_spec(tmp_path, spec, files, name="wide.yaml")
    write_spec(tmp_path, spec.replace("g_*", "g_[0-2]"), name="narrow.yaml")
    info = tb.build(tmp_path / "wide.yaml")
    status, out = _run(capsys, tmp_path / "wide.yaml", info.path)
    assert status == 0 and _lines(out)[2:4] == ["spec", "(no changes)"]
    (tmp_path / "d.csv").unlink()  # a source that can't be read: the pattern stands for the columns it matches
    status, out = _run(capsys, tmp_path / "wide.yaml", info.path)
    assert status == 0 and _lines(out)[2:4] == ["spec", "(no changes)"]
    write_spec(tmp_path, spec, files, name="wide.yaml")
    status, out = _run(capsys, info.path, tmp_path / "narrow.yaml")
    assert status == 1
    assert _lines(out)[3] == ("! feature `genes` changed: columns: 10 columns: g_0, g_1, g_2, g_3, g_4, ..., g_9 -> "
                              "[\"g_0\", \"g_1\", \"g_2\"]; shape: [10] -> [3]")


# --- what is not two comparable things ---------------------------------------------------------------


def test_unrelated_datasets_are_refused_in_one_line(built):
    result = run_cli("diff", _dataset(built, "1.0.0"), _dataset(built, "1.0.0", name="weather"), cwd=built)
    line = assert_error(result, 2)
    assert line == (f"error: {_dataset(built, '1.0.0')} (shop) and {_dataset(built, '1.0.0', name='weather')} "
                    "(weather) are unrelated: different names and no feature in common")
    assert result.stdout == ""


@pytest.mark.parametrize("path, status, message", [
    ("nowhere", 2, "error: nowhere: no such file or folder"),
    ("specs", 2, "error: specs: neither a spec nor a built dataset (no dataset_info.json)"),
    ("build/shop", 2, "error: build/shop: neither a spec nor a built dataset (no dataset_info.json); it holds the "
                      "versions 1.0.0, 1.0.1, 1.0.2, 1.1.0, 2.0.0: give one, e.g. build/shop/2.0.0"),
    ("specs/1.0.0/rows.jsonl", 2, "error: specs/1.0.0/rows.jsonl: neither a spec (a .yaml file) nor a built "
                                  "dataset (a NAME/VERSION folder)"),
    ("build/shop/1.0.0/shop-train.tfrecord-00000-of-00002", 2,
     "error: build/shop/1.0.0/shop-train.tfrecord-00000-of-00002: neither a spec (a .yaml file) nor a built "
     "dataset (a NAME/VERSION folder)"),
    ("unfinished", 1, "error: unfinished: not a finished dataset (no dataset_info.json); build it, or finish it "
                      "with --resume"),
])
def test_a_path_that_is_neither_a_spec_nor_a_dataset_is_one_line(built, path, status, message):
    if path == "unfinished" and not (built / path).exists():
        shutil.copytree(_dataset(built, "1.0.0"), built / path)
        (built / path / "dataset_info.json").unlink()
    for args in (("diff", path, "build/shop/1.0.0"), ("diff", "build/shop/1.0.0", path)):
        result = run_cli(*args, cwd=built)
        assert assert_error(result, status) == message
        assert result.stdout == ""


def test_a_bad_threshold_is_a_usage_error(built):
    result = run_cli("diff", "build/shop/1.0.0", "build/shop/1.0.1", "--max-mean-shift", "-1", cwd=built)
    assert assert_error(result, 2) == ("error: tfrecord-builder diff: argument --max-mean-shift: expected a number "
                                       "of 0 or more (or inf), received '-1' (see `tfrecord-builder diff --help`)")
    with pytest.raises(ValueError, match="max_class_shift: expected a number of 0 or more"):
        Thresholds(max_class_shift=-0.1)


# --- the measures the builds above don't reach -----------------------------------------------------


def test_measures_of_images_capped_vocabularies_and_vanished_classes():
    thresholds = Thresholds()
    image = {"num_images": 10, "height": {"min": 8, "max": 8, "mean": 8.0},
             "width": {"min": 8, "max": 12, "mean": 10.0}, "channels": 1}
    larger = dict(image, height={"min": 8, "max": 16, "mean": 9.0}, channels=3)
    size, channels = feature_drift("train", "photo", image, larger, (10, 10), thresholds)
    assert (size.measure, size.value, size.crossed) == ("image size", 0.125, True)
    assert size.detail == "mean 8x10 -> 9x10, range 8-8 x 8-12 -> 8-16 x 8-12"
    assert (channels.measure, channels.detail, channels.crossed) == ("channels", "1 -> 3", True)

    # a vocabulary counted only up to its cap: the least change the bound allows
    small = {"num_values": 1000, "vocabulary_size": 500, "top_values": [{"value": "x", "count": 30}]}
    capped = {"num_values": 10**6, "vocabulary_size_at_least": 100_000, "top_values": [{"value": "y", "count": 40}]}
    vocabulary, shift, top = feature_drift("train", "text", small, capped, (10, 10), thresholds)
    assert (vocabulary.value, vocabulary.detail, vocabulary.crossed) == (199.0, "500 -> ≥100,000", True)
    # 'x' was 3% of the values; outside the new top list it is at most 0.004%
    assert shift.value == pytest.approx(0.03 - 0.00004) and shift.detail == "'x' 3.0% -> ≤0.0%"
    assert (top.detail, top.threshold) == ("+ 'y'; - 'x'", None)
    both_capped = feature_drift("train", "text", capped, capped, (10, 10), thresholds)[0]
    assert (both_capped.value, both_capped.detail) == (0.0, "≥100,000 -> ≥100,000")

    classes = feature_drift("train", "kind", {"classes": {"a": 5, "b": 5}}, {"classes": {"a": 10, "b": 0}},
                            (10, 10), thresholds)
    assert [(m.measure, m.value, m.detail, m.crossed) for m in classes] == [
        ("class shift", 0.5, "a: 50.0% -> 100.0%", True), ("vanished classes", 1, "b (was 5)", True)]

    # a constant feature that moved: infinitely many of its (zero) stds
    shift, ratio = feature_drift("train", "x", {"mean": 1.0, "std": 0.0}, {"mean": 2.0, "std": 0.5}, (1, 1), thresholds)
    assert (shift.value, ratio.value) == (math.inf, math.inf)
    assert shift.to_dict()["value"] == "inf"


# --- split membership: rows that changed split between two versions ------------------------------

DRIFT_OFF = ["--max-mean-shift", "inf", "--max-std-ratio", "inf", "--max-class-shift", "inf",
             "--max-count-change", "inf", "--max-size-change", "inf"]  # only the membership decides


def _weather_spec(version: str, path: str, *, key: bool, test: float = 0.1) -> dict[str, Any]:
    return {"name": "weather", "version": version,
            "source": {"builder": "csv", "path": path, **({"key": "station_date"} if key else {})},
            "splits": {"train": round(1 - test, 2), "test": test},
            "features": {"temperature": {"dtype": "float32"}, "wind": {"dtype": "float32"},
                         "weather": {"type": "class_label", "names": ["calm", "chilly", "rain", "snow", "sun"]}},
            "label": "weather"}


@pytest.fixture(scope="module")
def weather(tmp_path_factory) -> Path:
    """The weather table in °C (1.x.0) and re-exported in °F (2.x.0): x=0 whole-row keys, x=1
    keyed by station_date; 2.2.0 keyed with the test split grown to 0.2."""
    root = tmp_path_factory.mktemp("weather")
    files = {"celsius.csv": weather_csv(), "fahrenheit.csv": weather_csv(fahrenheit=True)}
    for version, path, key, test in [("1.0.0", "celsius.csv", False, 0.1), ("2.0.0", "fahrenheit.csv", False, 0.1),
                                     ("1.1.0", "celsius.csv", True, 0.1), ("2.1.0", "fahrenheit.csv", True, 0.1),
                                     ("2.2.0", "fahrenheit.csv", True, 0.2)]:
        spec = write_spec(root / "specs", _weather_spec(version, path, key=key, test=test), files,
                          name=f"{version}.yaml")
        tb.build(spec, output=root / "build", workers=1)
    return root


def _weather_dataset(root: Path, version: str) -> Path:
    return root / "build" / "weather" / version


def test_rows_whose_whole_row_key_changed_cant_be_followed(weather, capsys):
    """The issue's re-export: one column converted, no source.key: every row has a new key."""
    status, out = _run(capsys, _weather_dataset(weather, "1.0.0"), _weather_dataset(weather, "2.0.0"), *DRIFT_OFF)
    assert _section(_lines(out), "membership") == [
        "membership", "0 rows kept their split",
        "3,071 rows of old can't be followed: their keys are not in new (removed, or the key changed: without "
        "source.key a row's key is the whole row, so a row with any value changed can't be followed)",
        "3,071 rows of new are not in old"]
    assert status == 0  # nothing seen to move: reported, the drift of `temperature` fails it


def test_a_key_keeps_rows_in_their_splits_and_rows_that_moved_fail(weather, capsys):
    status, out = _run(capsys, _weather_dataset(weather, "1.1.0"), _weather_dataset(weather, "2.1.0"), *DRIFT_OFF)
    assert status == 0
    assert _section(_lines(out), "membership") == ["membership", "3,071 rows kept their split"]
    # the test split grown from 0.1 to 0.2: rows of the old train split are tested on now
    old = json.loads((_weather_dataset(weather, "1.1.0") / "tfrecord_builder.json").read_text())["splits"]
    new = json.loads((_weather_dataset(weather, "2.2.0") / "tfrecord_builder.json").read_text())["splits"]
    moved = new["test"]["num_examples"] - old["test"]["num_examples"]
    assert moved > 250
    status, out = _run(capsys, _weather_dataset(weather, "1.1.0"), _weather_dataset(weather, "2.2.0"), *DRIFT_OFF)
    assert status == 1
    assert _section(_lines(out), "membership") == [
        "membership", f"! {moved:,} rows of old train are in new test", f"{NUM_ROWS - moved:,} rows kept their split"]
    assert _lines(out)[-1] == "DRIFT: 1 over its threshold (membership 1)"
    status, out = _run(capsys, _weather_dataset(weather, "1.1.0"), _weather_dataset(weather, "2.2.0"), *DRIFT_OFF,
                       "--max-moved-rows", str(moved))
    assert status == 0 and _section(_lines(out), "membership")[1] == f"{moved:,} rows of old train are in new test"
    comparison = diff(_weather_dataset(weather, "1.1.0"), _weather_dataset(weather, "2.2.0"))
    assert comparison.membership.moved == {("train", "test"): moved} and comparison.crossed_by_section["membership"]


def test_a_dataset_built_without_membership_files_cant_be_compared(weather, tmp_path, capsys):
    """As a dataset of an earlier tfrecord-builder: no splits/, no `membership` in its metadata."""
    older = tmp_path / "weather" / "1.1.0"
    shutil.copytree(_weather_dataset(weather, "1.1.0"), older)
    shutil.rmtree(older / "splits")
    info = json.loads((older / "tfrecord_builder.json").read_text())
    del info["membership"]
    (older / "tfrecord_builder.json").write_text(json.dumps(info))
    status, out = _run(capsys, older, _weather_dataset(weather, "2.1.0"), *DRIFT_OFF)
    assert status == 0
    assert _section(_lines(out), "membership") == [
        "membership", "can't be compared: OLD was built without the split membership files (splits/, which earlier "
        "versions of tfrecord-builder don't write); rebuild it to compare"]
    assert diff(older, _weather_dataset(weather, "2.1.0")).to_dict()["membership"] == {"compared": False, "missing": "OLD"}
