"""infer's guesses made as a person reading the table would make them: the label, a `split`
column, a JSONL series; each spec validates and builds as written, and its records are checked."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tfrecord_builder.tools.infer import infer

from .helpers import by_key, comment, infer_validate_build, write_jsonl


def _penguins(path, columns=("species", "island", "bill_length_mm", "body_mass_g", "year")) -> None:
    rows = [",".join(columns)]
    for i in range(30):
        cells = {"species": ["Adelie", "Gentoo", "Chinstrap"][i % 3], "island": ["Biscoe", "Dream", "Torgersen"][i % 2],
                 "bill_length_mm": f"{30 + i * 0.7:.1f}", "body_mass_g": str(3000 + i * 10), "year": str(2007 + i % 3),
                 "cultivar": ["a", "b", "c"][i % 3], "region": ["n", "s"][i % 2], "income": ["<=50K", ">50K"][i % 2]}
        rows.append(",".join(cells[column] for column in columns))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def test_the_label_is_the_column_named_like_a_target_not_the_last_class_label(tmp_path):
    _penguins(tmp_path / "penguins.csv")
    text, spec, records = infer_validate_build(tmp_path, "penguins.csv")
    assert spec["label"] == "species"
    assert comment(text, "label:") == ("guessed: named `species` (like a target); input_fn yields (features, label) "
                                       "(remove for features only)")
    assert sorted(int(record["species"]) for split in records.values() for record in split) == \
        sorted(["Adelie", "Chinstrap", "Gentoo"].index(["Adelie", "Gentoo", "Chinstrap"][i % 3]) for i in range(30))


@pytest.mark.parametrize("columns, label, why", [
    (("cultivar", "region", "bill_length_mm"), "cultivar", "the first column, a class label"),
    (("bill_length_mm", "region", "income"), "income", "the last column, a class label"),
    (("bill_length_mm", "region", "cultivar", "year"), "region", "the first class label"),
])
def test_without_a_target_name_the_first_or_last_column_then_the_first_class_label(tmp_path, columns, label, why):
    _penguins(tmp_path / "table.csv", columns)
    text = infer(tmp_path / "table.csv", tmp_path / "spec.yaml")
    assert comment(text, "label:") == f"guessed: {why}; input_fn yields (features, label) (remove for features only)"
    assert f"\nlabel: {label} " in text


def test_a_split_column_of_train_validation_test_becomes_the_split_column(tmp_path):
    lines = ["x,label,split"] + [f"{i * 0.5},{'ab'[i % 2]},{['train', 'train', 'test', 'validation'][i % 4]}"
                                 for i in range(20)]
    (tmp_path / "rows.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    text, spec, records = infer_validate_build(tmp_path, "rows.csv")
    assert spec["source"]["split_column"] == "split"
    assert spec["splits"] == {"train": {}, "validation": {}, "test": {}}
    assert "split" not in spec["features"]
    assert comment(text, "  split_column:") == "guessed: the data's own split (train 10, validation 5, test 5)"
    assert comment(text, "splits:") == "the values of `split`; a row's value chooses its split"
    assert {split: sorted(float(record["x"]) for record in found) for split, found in records.items()} == {
        name: [i * 0.5 for i in range(20) if ["train", "train", "test", "validation"][i % 4] == name]
        for name in ("train", "validation", "test")}


def test_a_split_column_of_other_words_stays_a_feature(tmp_path):
    lines = ["x,split"] + [f"{i},{['left', 'right'][i % 2]}" for i in range(10)]
    (tmp_path / "rows.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    text = infer(tmp_path / "rows.csv", tmp_path / "spec.yaml")
    assert "split_column" not in text and "\n  split: {type: class_label, names: [left, right]}" in text


def test_a_jsonl_of_one_series_per_row_beside_a_label_is_a_sequence_example(tmp_path):
    rng = np.random.default_rng(3)
    given = [{"id": i, "values": [round(float(v), 3) for v in rng.random(3 + i % 4)], "label": "ud"[i % 2]}
             for i in range(12)]
    write_jsonl(tmp_path / "series.jsonl", given)
    text, spec, records = infer_validate_build(tmp_path, "series.jsonl")
    assert spec["format"] == "sequence_example" and spec["source"]["builder"] == "sequence_jsonl"
    assert spec["context"] == {"id": {"dtype": "int64"}, "label": {"type": "class_label", "names": ["d", "u"]}}
    assert spec["sequence"] == {"values": {"dtype": "float32"}}
    assert comment(text, "format:") == (
        "guessed: `values`, the only list field, holds numbers of varying length beside per-record `id`, "
        "`label`: a series, read as steps (padded and masked for an RNN; --no-sequence reads it as one "
        "variable-length list)")
    found = by_key(records, "id")
    for record_in in given:
        assert found[record_in["id"]]["values"].tolist() == np.float32(record_in["values"]).tolist()


def test_a_lone_list_of_words_stays_a_list_feature(tmp_path):
    write_jsonl(tmp_path / "tags.jsonl", [{"tags": ["red", "big", "old"][: 1 + i % 3], "label": "ud"[i % 2]}
                                          for i in range(8)])
    text = infer(tmp_path / "tags.jsonl", tmp_path / "spec.yaml")
    assert "format:" not in text and "\n  tags:  {dtype: string, shape: [null]}" in text


def test_a_regression_target_with_gaps_keeps_them_as_nan_and_the_statistics_describe_the_rest(tmp_path):
    """59 of 322 prices missing: NaN, not 0 (which made the mean 419 against a true 536); the
    whole-number column beside it takes -1, which its values never are."""
    rng = np.random.default_rng(8)
    gaps = set(rng.choice(322, 59, replace=False).tolist())
    prices = [None if row in gaps else round(float(rng.uniform(300, 770)), 2) for row in range(322)]
    lines = ["rooms,price"] + [f"{'' if row % 9 == 0 else row % 5},{'' if price is None else price}"
                               for row, price in enumerate(prices)]
    (tmp_path / "houses.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    text, spec, records = infer_validate_build(tmp_path, "houses.csv")
    assert spec["features"]["price"]["allow_nan"] is True and np.isnan(spec["features"]["price"]["default"])
    assert "\n  price: {dtype: float32, default: .nan, allow_nan: true}" in text
    assert comment(text, "price:") == ("guessed: 59 of 322 rows missing -> default NaN, not 0, which would pass for "
                                       "a value; statistics count them apart (impute in the model)")
    assert spec["features"]["rooms"] == {"dtype": "int64", "default": -1}
    stored = [float(record["price"]) for split in records.values() for record in split]
    assert sum(np.isnan(stored)) == 59
    statistics = json.loads((tmp_path / "out" / "houses" / "1.0.0" / "tfrecord_builder.json").read_text())["statistics"]
    parts = [statistics[split]["price"] for split in ("train", "test")]
    assert sum(part["num_filled"] for part in parts) == 59 and not any("num_non_finite" in part for part in parts)
    given = np.array([price for price in prices if price is not None], np.float32).astype(np.float64)
    mean = sum(part["mean"] * part["num_values"] for part in parts) / sum(part["num_values"] for part in parts)
    assert mean == pytest.approx(given.mean(), rel=1e-12)
