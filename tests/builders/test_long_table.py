"""Long tables: one CSV row per step, grouped into sequences by `group_by` and ordered by `order_by`.

The rows arrive shuffled; the built records must hold each group's steps in `order_by` order
(numerically when every value is a number), with one context value per group.
"""
from __future__ import annotations

import csv
import datetime
import io
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrecord_builder as tb
from tfrecord_builder.builders.long_table import OrderDates, _ordered
from tfrecord_builder.features import times

from conftest import batches_as_numpy, import_module, write_spec

HEADER = ["id", "t", "value", "word", "label"]


def _sequences(seed=0, count=10):
    """id -> (label, [(t, value, word), ...] in step order). One group counts t = 1..12 (9 before 10);
    the others take sorted random t values with one, two and three digits."""
    generator = random.Random(seed)
    groups = {}
    for index in range(count):
        name = f"s{index}"
        if index == 0:
            times = list(range(1, 13))
        else:
            times = sorted(generator.sample(range(0, 400), generator.randint(1, 14)))
        steps = [(t, generator.randint(-40, 40) / 4, f"{name}@{t}") for t in times]
        groups[name] = (index % 3, steps)
    return groups


def _rows(groups):
    return [[name, str(t), repr(value), word, str(label)]
            for name, (label, steps) in groups.items() for t, value, word in steps]


def _csv(rows):
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(HEADER)
    writer.writerows(rows)
    return text.getvalue()


def _spec(**extra):
    spec = {
        "name": "steps",
        "format": "sequence_example",
        "source": {"builder": "csv", "path": "steps.csv", "group_by": "id", "order_by": "t"},
        "context": {"id": {"dtype": "string"}, "label": {"dtype": "int64"}},
        "sequence": {"value": {"dtype": "float32"}, "word": {"dtype": "string", "pad": "<pad>"}},
        "label": "label",
        "output": {"shards": 2},
        "input": {"mask_feature": "mask"},
    }
    spec.update(extra)
    return spec


def _build(folder, rows, **extra):
    return tb.build(write_spec(folder, _spec(**extra), {"steps.csv": _csv(rows)}), output=folder / "out")


def _read(info, split, batch_size):
    """Both reading paths' batches (features with the label put back), checked identical."""
    module = import_module(f"{info.path}/steps_input.py")
    through_module = batches_as_numpy(module.input_fn(split, batch_size=batch_size, shuffle=False))
    through_library = batches_as_numpy(tb.input_fn(info.path, split, batch_size=batch_size, shuffle=False))
    assert len(through_module) == len(through_library)
    batches = []
    for (features, label), (other_features, other_label) in zip(through_module, through_library):
        assert sorted(features) == sorted(other_features)
        for name in features:
            assert features[name].dtype == other_features[name].dtype
            assert features[name].tolist() == other_features[name].tolist(), name
        assert label.tolist() == other_label.tolist()
        batches.append({**features, "label": label})
    return batches


def _check(batches, groups):
    """Every group once, its steps in order, padded, with its label, length and mask."""
    seen = []
    for batch in batches:
        names = [name.decode() for name in batch["id"].tolist()]
        seen.extend(names)
        lengths = np.array([len(groups[name][1]) for name in names], dtype=np.int64)
        time = int(lengths.max())
        assert batch["sequence_length"].tolist() == lengths.tolist()
        assert batch["value"].shape == (len(names), time) and batch["value"].dtype == np.float32
        assert batch["mask"].tolist() == (np.arange(time)[None, :] < lengths[:, None]).tolist()
        for position, name in enumerate(names):
            label, steps = groups[name]
            assert batch["label"][position] == label
            assert batch["value"][position].tolist() == [value for _, value, _ in steps] + [0.0] * (time - len(steps))
            assert batch["word"][position].tolist() == \
                [word.encode() for _, _, word in steps] + [b"<pad>"] * (time - len(steps))
    return seen


def test_shuffled_rows_are_grouped_and_ordered_by_step(tf, tmp_path):
    groups = _sequences()
    rows = _rows(groups)
    random.Random(7).shuffle(rows)
    info = _build(tmp_path, rows)
    assert info.splits["train"].num_examples == len(groups)
    seen = _check(_read(info, "train", 4), groups)
    assert sorted(seen) == sorted(groups)

    # t is numeric: 10, 11 and 12 follow 9 (as text "10" would sort before "2")
    (batch,) = _read(info, "train", len(groups))
    position = [name.decode() for name in batch["id"].tolist()].index("s0")
    assert batch["word"][position].tolist() == [f"s0@{t}".encode() for t in range(1, 13)]


def test_the_row_order_does_not_change_the_shards(tf, tmp_path):
    groups = _sequences(seed=1)
    rows = _rows(groups)
    contents = []
    for seed in (1, 2):
        shuffled = list(rows)
        random.Random(seed).shuffle(shuffled)
        info = _build(tmp_path / f"order{seed}", shuffled)
        contents.append([(tmp_path / f"order{seed}" / "out" / "steps" / "1.0.0" / file).read_bytes()
                         for file in info.splits["train"].files])
    assert contents[0] == contents[1]


def test_groups_stay_whole_across_fraction_splits(tf, tmp_path):
    groups = _sequences(seed=2, count=16)
    rows = _rows(groups)
    random.Random(3).shuffle(rows)
    info = _build(tmp_path, rows, splits={"train": 0.5, "test": 0.5})
    seen = []
    for split in ("train", "test"):
        seen.extend(_check(_read(info, split, 5), groups))
    assert sorted(seen) == sorted(groups)


def test_text_steps_are_ordered_as_text(tf, tmp_path):
    rows = [["a", "2024-01-03", "3.0", "third", "1"], ["a", "2024-01-01", "1.0", "first", "1"],
            ["b", "x", "0.5", "only", "0"], ["a", "2024-01-02", "2.0", "second", "1"]]
    info = _build(tmp_path, rows)
    (batch,) = _read(info, "train", 2)
    words = dict(zip([name.decode() for name in batch["id"].tolist()], batch["word"].tolist()))
    assert words == {"a": [b"first", b"second", b"third"], "b": [b"only", b"<pad>", b"<pad>"]}


def test_a_context_value_that_differs_within_a_group_names_the_row_and_group(tmp_path):
    groups = _sequences()
    rows = _rows(groups)
    # s3's third step (in t order) gets another label; rows are written shuffled
    name = "s3"
    assert len(groups[name][1]) >= 3
    third = groups[name][1][2]
    bad = next(row for row in rows if row[0] == name and row[1] == str(third[0]))
    bad[4] = "2" if bad[4] != "2" else "1"
    random.Random(11).shuffle(rows)
    line = rows.index(bad) + 2  # the header is line 1
    with pytest.raises(tb.DataError) as caught:
        _build(tmp_path, rows)
    message = str(caught.value)
    assert f"steps.csv, line {line}" in message
    assert "'s3'" in message
    assert "label" in message


def test_a_duplicate_step_names_both_rows_and_the_group(tmp_path):
    groups = _sequences()
    rows = _rows(groups)
    random.Random(5).shuffle(rows)
    original = next(row for row in rows if row[0] == "s5")
    duplicate = [original[0], original[1], "99.0", "again", original[4]]
    rows.insert(len(rows) // 2 + 1, duplicate)
    lines = [rows.index(original) + 2, rows.index(duplicate) + 2]
    with pytest.raises(tb.DataError) as caught:
        _build(tmp_path, rows)
    message = str(caught.value)
    for line in lines:
        assert f"line {line}" in message
    assert "steps.csv" in message
    assert "'s5'" in message
    assert original[1] in message


def test_numerically_equal_steps_are_duplicates(tmp_path):
    rows = [["a", "4", "1.0", "x", "0"], ["a", "4.0", "2.0", "y", "0"], ["b", "1", "1.0", "z", "1"]]
    with pytest.raises(tb.DataError) as caught:
        _build(tmp_path, rows)
    message = str(caught.value)
    assert "steps.csv, line 2" in message and "steps.csv, line 3" in message
    assert "'a'" in message


def test_a_split_column_assigns_whole_sequences_and_a_sequence_cut_across_splits_is_an_error(tf, tmp_path):
    """Grouped before split: a sequence takes its rows' one split; rows of one sequence naming two
    splits would leak its steps from one split into the other."""
    text = "id,t,value,word,label,part\n" + "".join(
        f"s{index},{step},{index + step / 10},w,{index % 3},{'test' if index % 4 == 0 else 'train'}\n"
        for index in range(12) for step in (2, 0, 1))
    spec = _spec(source={"builder": "csv", "path": "steps.csv", "group_by": "id", "order_by": "t",
                         "split_column": "part"}, splits={"train": {}, "test": {}})
    info = tb.build(write_spec(tmp_path / "ok", spec, {"steps.csv": text}), output=tmp_path / "ok" / "out")
    ids = {split: sorted(x.decode() for features, _ in batches_as_numpy(tb.input_fn(info.path, split, shuffle=False))
                         for x in features["id"]) for split in ("train", "test")}
    assert ids["test"] == ["s0", "s4", "s8"] and len(ids["train"]) == 9
    bad = text.replace("s5,1,5.1,w,2,train", "s5,1,5.1,w,2,test")
    with pytest.raises(tb.DataError, match=r"steps\.csv, line \d+: split column `part` differs within id 's5' "
                                           r"\('train' at steps\.csv, line \d+, then 'test'\); expected one split per sequence"):
        tb.build(write_spec(tmp_path / "bad", spec, {"steps.csv": bad}), output=tmp_path / "bad" / "out")


def test_a_column_feeding_both_a_context_and_a_sequence_feature_is_a_spec_error(tmp_path):
    spec = _spec()
    spec["sequence"]["label_steps"] = {"dtype": "int64", "source": "label"}
    with pytest.raises(tb.SpecError, match=r"sequence\.label_steps: column `label` already feeds context feature "
                                           r"`label`; in a long table a column feeds context or sequence features"):
        tb.load_spec(write_spec(tmp_path, spec))


def test_a_position_of_another_kind_than_its_sequence_is_an_error_naming_group_and_value(tmp_path):
    """One `NA` among numeric times sorted the whole sequence as text: 1, 10, 11, 2, ..., NA."""
    rows = [["a", str(t), "1.0", f"w{t}", "0"] for t in (1, 2, 10, 11)] + [["a", "NA", "1.0", "wNA", "0"]]
    rows += [["b", "1", "2.0", "x", "1"]]
    with pytest.raises(tb.DataError) as caught:
        _build(tmp_path, rows)
    assert str(caught.value) == ("steps.csv, line 6: id 'a': position t 'NA' is text, but the sequence's other "
                                 "positions are numbers, so it can't be ordered among them; expected a number")
    rows[4][1] = "nan"
    with pytest.raises(tb.DataError, match=r"position t 'nan' is NaN, which has no order"):
        _build(tmp_path / "nan", rows)


def test_a_context_cell_left_empty_is_named_as_an_empty_cell(tmp_path):
    rows = [["a", "1", "1.0", "x", "0"], ["a", "2", "1.0", "y", ""]]
    with pytest.raises(tb.DataError) as caught:
        _build(tmp_path, rows)
    assert "context feature `label` differs within id 'a' ('0', then an empty cell)" in str(caught.value)


def test_na_values_make_a_missing_position_an_error_not_a_text_sort(tmp_path):
    rows = [["a", "1", "1.0", "x", "0"], ["a", "NA", "1.0", "y", "0"]]
    spec = _spec()
    spec["source"]["options"] = {"na_values": ["NA"]}
    with pytest.raises(tb.DataError, match=r"steps.csv, line 3: `t` is empty; every step needs its sequence and "
                                           r"position"):
        tb.build(write_spec(tmp_path, spec, {"steps.csv": _csv(rows)}), output=tmp_path / "out")


# ---- dates written as text ---------------------------------------------------------------------

DATED = [["a", "Feb 1 2000", "2.0"], ["a", "Jan 1 2000", "1.0"], ["b", "Apr 1 2001", "5.0"],
         ["a", "Apr 1 2000", "4.0"], ["b", "Mar 3 2001", "3.0"], ["a", "Dec 1 1999", "0.0"], ["a", "Mar 1 2000", "3.0"]]


def _dated_spec(date):
    return {"name": "dated", "format": "sequence_example",
            "source": {"builder": "csv", "path": "dated.csv", "group_by": "id", "order_by": "date"},
            "context": {"id": {"dtype": "string"}}, "sequence": {"date": date, "value": {"dtype": "float32"}},
            "splits": {"train": 1.0}}


def _dated_csv(rows):
    return "id,date,value\n" + "".join(",".join(row) + "\n" for row in rows)


def test_dates_written_as_text_order_the_steps_by_the_format_of_the_feature_reading_them(tmp_path):
    """`Jan 1 2000` sorted as text puts April first; with the feature's `format:` the steps go
    by date, and the values with them."""
    spec = _dated_spec({"dtype": "int64", "format": "%b %d %Y", "time_unit": "days"})
    info = tb.build(write_spec(tmp_path, spec, {"dated.csv": _dated_csv(DATED)}), output=tmp_path / "out")
    records = {record["id"].decode(): record for record in tb.read(info.path, "train")}
    days = {text: (np.datetime64(datetime.datetime.strptime(text, "%b %d %Y").date()) - np.datetime64("1970-01-01"))
            .astype(int) for _, text, _ in DATED}
    assert records["a"]["date"].tolist() == [days[text] for text in
                                             ["Dec 1 1999", "Jan 1 2000", "Feb 1 2000", "Mar 1 2000", "Apr 1 2000"]]
    assert records["a"]["value"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert records["b"]["value"].tolist() == [3.0, 5.0]


def test_dates_ordering_the_steps_may_be_stored_as_iso_text(tmp_path):
    """A per-step string feature with a `format:` pads with "" (a stored text, not a date to read)."""
    spec = _dated_spec({"dtype": "string", "format": "%b %d %Y"})
    info = tb.build(write_spec(tmp_path, spec, {"dated.csv": _dated_csv(DATED)}), output=tmp_path / "out")
    records = {record["id"].decode(): record for record in tb.read(info.path, "train")}
    assert [date.decode() for date in records["a"]["date"].tolist()] == \
        ["1999-12-01", "2000-01-01", "2000-02-01", "2000-03-01", "2000-04-01"]
    assert [date.decode() for date in records["b"]["date"].tolist()] == ["2001-03-03", "2001-04-01"]


def test_dates_written_as_text_without_a_format_are_refused_with_the_format_that_reads_them(tmp_path):
    spec = _dated_spec({"dtype": "string"})
    with pytest.raises(tb.DataError) as caught:
        tb.build(write_spec(tmp_path, spec, {"dated.csv": _dated_csv(DATED)}), output=tmp_path / "out")
    assert str(caught.value) == (
        "dated.csv, line 2: id 'a': position date 'Feb 1 2000' looks like a date written as text, which would be "
        "ordered as text, not by date; declare a feature that reads column `date` with its `format:` to order by "
        'it, e.g. `date: {dtype: int64, format: "%b %d %Y", time_unit: days}`')


def test_a_position_the_format_does_not_read_is_an_error_naming_the_feature(tmp_path):
    spec = _dated_spec({"dtype": "int64", "format": "%b %d %Y", "time_unit": "days"})
    rows = DATED + [["a", "2000-05-01", "5.0"]]
    with pytest.raises(tb.DataError) as caught:
        tb.build(write_spec(tmp_path, spec, {"dated.csv": _dated_csv(rows)}), output=tmp_path / "out")
    assert str(caught.value) == (
        "dated.csv, line 9: id 'a': position date '2000-05-01' can't be ordered as a date: expected a date or time "
        "as text in the format '%b %d %Y', received '2000-05-01' (the `format:` of feature `date`, which reads "
        "column `date`)")


def test_two_features_reading_the_order_column_with_different_formats_are_a_spec_error(tmp_path):
    spec = _dated_spec({"dtype": "int64", "format": "%b %d %Y", "time_unit": "days"})
    spec["sequence"]["shown"] = {"dtype": "int64", "source": "date", "format": "%d %b %Y", "time_unit": "days"}
    with pytest.raises(tb.SpecError, match=r"sequence\.shown\.format: features `date` and `shown` read the order_by "
                                           r"column `date` with different formats \('%b %d %Y', '%d %b %Y'\); "
                                           r"expected one format for the dates that order the steps"):
        tb.load_spec(write_spec(tmp_path, spec))


_ORDERED_FORMATS = [text_format for text_format in times.TEXT_DATES if "%y" not in text_format]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dates(datetime.date(1000, 1, 1), datetime.date(9999, 12, 31)), min_size=2, max_size=12,
                unique=True),
       st.sampled_from(_ORDERED_FORMATS + ["iso"]), st.randoms(use_true_random=False))
def test_dates_in_any_form_order_by_date_with_a_format_and_only_iso_ones_without(dates, text_format, generator):
    """Shuffled steps whose positions are dates written in one of the forms exports use: ordered
    by date with the format; without one, ISO 8601 text orders by date as text, and any other
    form is refused (it would sort alphabetically)."""
    def written(date):
        return date.isoformat() if text_format == "iso" else date.strftime(text_format)

    rows = [(written(date), f"line {index}", {}) for index, date in enumerate(dates)]
    generator.shuffle(rows)
    expected = [written(date) for date in sorted(dates)]
    dates_format = OrderDates("iso8601" if text_format == "iso" else text_format, "date")
    assert [order for order, _, _ in _ordered("s", rows, "id", "date", "text", dates_format)] == expected
    if text_format == "iso":
        assert [order for order, _, _ in _ordered("s", rows, "id", "date", "text")] == expected
    else:
        with pytest.raises(tb.DataError, match="looks like a date written as text"):
            _ordered("s", rows, "id", "date", "text")
