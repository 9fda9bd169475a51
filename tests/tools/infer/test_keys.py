"""infer's `source.key`: a column unique in every row keeps each row in its split when other
columns change (a re-export converting one column), where the whole-row key moves most rows."""
from __future__ import annotations

import pytest
import yaml

import tfrecord_builder as tb
from tfrecord_builder.tools.infer import infer

from support.versions import NUM_ROWS, weather_csv
from .helpers import comment


def _splits_by_station_date(dataset) -> dict[str, str]:
    return {record["station_date"].decode(): split for split in ("train", "test")
            for record in tb.read(dataset, split)}


def test_a_unique_text_column_becomes_the_key_and_keeps_rows_in_their_splits(tmp_path):
    (tmp_path / "celsius.csv").write_text(weather_csv(), encoding="utf-8")
    (tmp_path / "fahrenheit.csv").write_text(weather_csv(fahrenheit=True), encoding="utf-8")
    text = infer(tmp_path / "celsius.csv", tmp_path / "weather.yaml")
    spec = yaml.safe_load(text)
    assert spec["source"] == {"builder": "csv", "path": "celsius.csv", "key": "station_date"}
    assert comment(text, "key:") == ("guessed: `station_date` is unique in all 3,071 rows; a key keeps each row "
                                     "in its split when other columns change (without one, the key is the whole row)")
    (tmp_path / "weather.yaml").write_text(text, encoding="utf-8")
    old = tb.build(tmp_path / "weather.yaml", output=tmp_path / "keyed-c", workers=1)
    converted = text.replace("path: celsius.csv", "path: fahrenheit.csv")
    (tmp_path / "weather.yaml").write_text(converted, encoding="utf-8")
    new = tb.build(tmp_path / "weather.yaml", output=tmp_path / "keyed-f", workers=1)
    before, after = _splits_by_station_date(old.path), _splits_by_station_date(new.path)
    assert len(before) == NUM_ROWS and before == after  # every row where it was
    # without the key (the whole row), converting one column re-draws every row's split
    (tmp_path / "weather.yaml").write_text(text.replace("  key: station_date", ""), encoding="utf-8")
    whole_c = _splits_by_station_date(tb.build(tmp_path / "weather.yaml", output=tmp_path / "row-c", workers=1).path)
    (tmp_path / "weather.yaml").write_text(converted.replace("  key: station_date", ""), encoding="utf-8")
    whole_f = _splits_by_station_date(tb.build(tmp_path / "weather.yaml", output=tmp_path / "row-f", workers=1).path)
    moved = sum(whole_c[key] == "test" and whole_f[key] == "train" for key in whole_c)
    assert moved > 200  # of about 307 rows of test


@pytest.mark.parametrize("columns, rows, key", [
    # named like an id: whole numbers too, and before an earlier unique text column
    ("code,row_id,x", [("a", 1, 0.5), ("b", 2, 1.5), ("c", 3, 2.5)], "row_id"),
    # else the first unique column of text
    ("x,name,code", [(0.5, "a", "p"), (1.5, "b", "q"), (2.5, "c", "r")], "name"),
    # unique numbers (a measurement may be unique by chance) and booleans are no key
    ("count,ratio,flag,kind", [(1, 0.5, "true", "a"), (2, 1.5, "false", "a"), (3, 2.5, "TRUE", "b")], None),
    # text with a repeated or a missing value
    ("name,other", [("a", "p"), ("a", "q"), ("b", "")], None),
    # numbers written as text with units stay text: a key
    ("reading,kind", [("1.5 m", "a"), ("2 m", "a"), ("3 m", "b")], "reading"),
])
def test_which_column_is_proposed_as_the_key(tmp_path, columns, rows, key):
    lines = [columns] + [",".join(map(str, row)) for row in rows]
    (tmp_path / "rows.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    spec = yaml.safe_load(infer(tmp_path / "rows.csv", tmp_path / "rows.yaml"))
    assert spec["source"].get("key") == key
