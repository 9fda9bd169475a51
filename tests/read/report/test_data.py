"""What the report shows, computed before anything is drawn (`report_data`), against the build's
statistics and against the records read independently with `tb.read`."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tfrecord_builder as tb
from tfrecord_builder.errors import UsageError
from tfrecord_builder.read.report import report, report_data
from tfrecord_builder.read.report.wording import number
from tfrecord_builder.read.report.sample import quotas
from tfrecord_builder.write.info import read_info


def _feature(data, name):
    return next(feature for feature in data.features if feature.name == name)


def _statistics(path):
    return json.loads((path / "tfrecord_builder.json").read_text(encoding="utf-8"))["statistics"]


def test_quotas_share_the_sample_among_shards_in_proportion():
    assert quotas([361, 362, 362, 362], None) == [361, 362, 362, 362]
    assert quotas([361, 362, 362, 362], 5000) == [361, 362, 362, 362]
    assert quotas([361, 362, 362, 362], 100) == [25, 25, 25, 25]
    assert quotas([10, 0, 30], 8) == [2, 0, 6]
    shares = quotas([7, 11, 13, 17, 19], 23)
    assert sum(shares) == 23 and all(0 <= share <= size for share, size in zip(shares, [7, 11, 13, 17, 19]))


def test_histograms_count_every_value_of_the_records_read(datasets):
    data = report_data(read_info(str(datasets["wine"])), sample=None)
    assert [(split.name, split.sampled, split.is_sample) for split in data.splits] == [("train", 147, False),
                                                                                       ("test", 31, False)]
    for feature in data.features:
        if feature.kind != "number":
            continue
        histogram = feature.values
        for split in ("train", "test"):
            # the same counts as NumPy's over the values tb.read gives, in the same bins
            values = np.array([record[feature.name] for record in tb.read(datasets["wine"], split)], np.float64)
            expected, _ = np.histogram(values, bins=np.asarray(histogram.edges))
            assert histogram.counts[split] == expected.tolist(), (feature.name, split)
            assert histogram.totals[split] == len(values)
        # the bins span the build's exact min and max over both splits
        statistics = _statistics(datasets["wine"])
        assert histogram.edges[0] == min(statistics[split][feature.name]["min"] for split in ("train", "test"))
        assert histogram.edges[-1] == max(statistics[split][feature.name]["max"] for split in ("train", "test"))


def test_a_sample_reads_at_most_its_size_per_split_and_says_so(datasets):
    data = report_data(read_info(str(datasets["wine"])), sample=100)
    assert [(split.name, split.sampled, split.is_sample) for split in data.splits] == [("train", 100, True),
                                                                                       ("test", 31, False)]
    assert data.is_sample
    assert _feature(data, "alcohol").values.totals == {"train": 100, "test": 31}
    # the exact statistics are the build's, whatever the sample
    assert dict(_feature(data, "alcohol").rows)["values"] == {"train": "147", "test": "31"}
    page = report(datasets["wine"], sample=100)
    assert "100 of 147 (a sample)" in page and "all 31" in page
    assert "up to 100 per split" in page


def test_class_counts_are_the_builds_and_appear_on_the_page(datasets):
    data = report_data(read_info(str(datasets["digits"])))
    statistics = _statistics(datasets["digits"])
    balance = _feature(data, "label").classes
    assert balance.names == [str(digit) for digit in range(10)]
    for split in ("train", "test"):
        assert balance.counts[split] == list(statistics[split]["label"]["classes"].values())
        assert sum(balance.counts[split]) == data.splits[0 if split == "train" else 1].num_examples
    page = report(datasets["digits"])
    for split in ("train", "test"):
        for count in statistics[split]["label"]["classes"].values():
            assert f"<td class=n>{count:,} <span" in page
    assert "1,447" in page and "1,797" in page


def test_image_grids_hold_the_first_images_of_each_class_as_stored(datasets):
    data = report_data(read_info(str(datasets["digits"])))
    grids = {grid.split: grid for grid in _feature(data, "image").images}
    assert list(grids) == ["train", "test"]
    for split, grid in grids.items():
        assert [label for label, _ in grid.rows] == [str(digit) for digit in range(10)]
        assert all(len(images) == 8 for _, images in grid.rows)
        # as stored: uint8 [8, 8, 1], not the float32 the spec's input.image_dtype asks input_fn for
        records = list(tb.read(datasets["digits"], split))
        for label, images in grid.rows:
            first = [record["image"] for record in records if record["label"] == int(label)][:8]
            assert all(image.dtype == np.uint8 and image.shape == (8, 8, 1) for image in images)
            assert all(np.array_equal(image.astype(np.float32) / 255, expected)
                       for image, expected in zip(images, first))


def test_sequences_show_their_steps_and_values_per_step(datasets):
    data = report_data(read_info(str(datasets["japanese_vowels"])), sample=None)
    statistics = _statistics(datasets["japanese_vowels"])
    frames = _feature(data, "frames")
    assert frames.per_step and frames.kind == "number"
    for split in ("train", "test"):
        steps = [len(record["frames"]) for record in tb.read(datasets["japanese_vowels"], split)]
        centres = (np.asarray(frames.steps.edges[:-1]) + np.asarray(frames.steps.edges[1:])) / 2
        assert frames.steps.whole
        assert sum(frames.steps.counts[split]) == len(steps)
        assert float(np.dot(centres, frames.steps.counts[split])) == sum(steps)  # each record in its own bin
        assert min(steps) == statistics[split]["frames"]["steps"]["min"]
        # every coefficient of every step: 12 per step
        assert frames.values.totals[split] == 12 * sum(steps) == statistics[split]["frames"]["num_values"]
    assert dict(frames.rows)["steps per sequence"]["train"].startswith(
        f"{statistics['train']['frames']['steps']['min']}–{statistics['train']['frames']['steps']['max']}")
    assert _feature(data, "speaker").classes.counts["test"] == list(statistics["test"]["speaker"]["classes"].values())


def test_strings_show_their_top_values_and_lists_their_lengths(datasets):
    data = report_data(read_info(str(datasets["digit_captions"])), sample=None)
    statistics = _statistics(datasets["digit_captions"])
    caption = _feature(data, "caption")
    assert caption.kind == "string" and caption.values is None
    assert caption.top_values["train"] == [(top["value"], top["count"])
                                           for top in statistics["train"]["caption"]["top_values"]]
    tokens = _feature(data, "tokens")
    lengths = [len(record["tokens"]) for record in tb.read(datasets["digit_captions"], "test")]
    assert tokens.lengths.totals["test"] == len(lengths) == 172
    assert sum(tokens.classes.counts["test"]) == sum(lengths)  # tokens, not records
    # no class label per record: the first images, ungrouped
    grid = _feature(data, "image").images[0]
    assert [label for label, _ in grid.rows] == ["", ""] and sum(len(images) for _, images in grid.rows) == 16
    page = report(datasets["digit_captions"])
    assert "the digit five written by hand" in page


def test_missing_nan_and_skipped_records_are_counted(datasets):
    data = report_data(read_info(str(datasets["quality"])))
    assert data.skipped == 1
    assert data.skipped_entries[0]["record"].endswith("rows.csv, line 5")
    assert _feature(data, "x").non_finite == {"train": 2}
    assert _feature(data, "x").values.totals == {"train": 2}  # NaN and inf left out of the bins
    assert _feature(data, "y").missing == {"train": 1}
    page = report(datasets["quality"])
    assert "1 skipped" in page and "expected a number (float32), received &#x27;oops&#x27;" in page
    assert '<a href="#feature-x">x</a></td><td class=n>2</td>' in page
    assert '<a href="#feature-y">y</a></td><td class=n>1</td>' in page


@pytest.mark.parametrize("sample", [0, -5, 2.5, True, "10"])
def test_a_sample_must_be_a_positive_number_of_records(datasets, sample):
    with pytest.raises(UsageError, match="sample: expected a positive number of records per split"):
        report_data(read_info(str(datasets["wine"])), sample=sample)


def test_lists_per_step_count_their_values_not_the_pads_and_compressed_shards_read(tmp_path):
    # steps of 0 to 3 values: read back padded to the record's longest step, whose pads aren't values
    rows = [{"id": number, "nums": [[0.5] * ((number + step) % 4) for step in range(1 + number % 3)]}
            for number in range(24)]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    (tmp_path / "spec.yaml").write_text(
        "name: steps\nformat: sequence_example\nsource: {builder: sequence_jsonl, path: rows.jsonl}\n"
        "context: {id: {dtype: int64}}\nsequence: {nums: {dtype: float32, shape: [null]}}\n"
        "output: {shards: 2, compression: gzip}\n", encoding="utf-8")
    info = tb.build(tmp_path / "spec.yaml", output=tmp_path / "out", workers=1)
    data = report_data(info, sample=None)
    nums = _feature(data, "nums")
    per_step = [len(step) for row in rows for step in row["nums"]]
    assert nums.values.totals == {"train": sum(per_step)} == {"train": info.statistics["train"]["nums"]["num_values"]}
    assert nums.lengths.totals == {"train": len(per_step)}  # values per step, one count per step
    assert nums.steps.totals == {"train": 24}
    assert dict(nums.rows)["length (values per step)"] == {"train": "0–3, mean 1.5 ± 1.1"}


def test_a_features_statistics_are_written_as_its_values_are_without_thousands_separators(tmp_path):
    """Years: min and max 2007 and 2010 beside a mean of 2008, not 2,007 (counts keep theirs)."""
    years = [2007, 2008, 2008, 2010] * 300
    (tmp_path / "rows.csv").write_text("year,price\n" + "".join(f"{year},{year * 61.5}\n" for year in years),
                                       encoding="utf-8")
    (tmp_path / "spec.yaml").write_text("name: cars\nsource: {builder: csv, path: rows.csv}\n"
                                        "features: {year: {dtype: int64}, price: {dtype: float64}}\n",
                                        encoding="utf-8")
    info = tb.build(tmp_path / "spec.yaml", output=tmp_path / "out", workers=1)
    data = report_data(info, sample=None)
    year = dict(_feature(data, "year").rows)
    assert (year["values"], year["min"], year["max"], year["mean"]) == (
        {"train": "1,200"}, {"train": "2007"}, {"train": "2010"}, {"train": "2008"})
    price = dict(_feature(data, "price").rows)  # to the unit from 1000 on: 123507.375 is 123507, not 1.235e+05
    assert (price["min"], price["max"], price["mean"]) == ({"train": "123430"}, {"train": "123615"},
                                                           {"train": "123507"})


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e15, max_value=1e15))
def test_a_statistic_reads_back_to_within_its_last_digit(value):
    text = number(value)
    assert "," not in text
    if value.is_integer() or abs(value) >= 1000:
        assert float(text) == round(value) or abs(float(text) - value) <= 0.5
    else:
        assert float(text) == pytest.approx(value, rel=5e-4, abs=1e-300)


def test_uint16_images_are_shown_scaled_to_their_own_range_and_the_page_says_so(tmp_path):
    """Before: the report cast uint16 thumbnails to uint8, each value modulo 256 (noise)."""
    from pathlib import Path

    from PIL import Image

    from conftest import write_spec

    scans = Path(__file__).resolve().parents[3] / "data" / "scans16"
    (tmp_path / "scans").mkdir()
    for name in ("ct_small.png", "mr_small.png"):
        (tmp_path / "scans" / name).write_bytes((scans / name).read_bytes())
    spec = {"name": "deep", "source": {"builder": "image_folder", "path": "scans"},
            "features": {"image": {"type": "image", "channels": 1, "dtype": "uint16"},
                         "filename": {"dtype": "string"}}}
    info = tb.build(write_spec(tmp_path, spec), output=tmp_path / "out")
    (grid,) = _feature(report_data(info), "image").images
    shown = {}
    for _, images in grid.rows:
        shown.update({image.shape[:2]: image for image in images})
    for name in ("ct_small.png", "mr_small.png"):
        pixels = np.asarray(Image.open(scans / name)).astype(np.int64)
        low, span = pixels.min(), pixels.max() - pixels.min()
        expected = ((pixels - low) * 510 + span) // (2 * span)  # min_max, rounded half up
        image = shown[pixels.shape]
        assert image.dtype == np.uint8
        np.testing.assert_array_equal(image[:, :, 0], expected, err_msg=name)
    assert grid.shown == "16-bit values: each image is shown from its own lowest (black) to highest value (white)."
    assert grid.shown in report(info)
