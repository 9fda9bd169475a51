"""A wide table's report: 2,000 columns as 2,000 features or as one gathered `columns:` feature
make a page of a few MB that draws the label first and MAX_PLOTTED features at most; the rest,
and each gathered column, are rows of one summary table with the build's exact statistics."""
from __future__ import annotations

import re

import pytest

import tfrecord_builder as tb
from tfrecord_builder.read.report import render
from tfrecord_builder.read.report.data import MAX_PLOTTED
from tfrecord_builder.write.info import read_info

from conftest import write_spec

COLUMNS = 2000
ROWS = 12  # few rows: the page's size and layout depend on the columns
PAGE_BYTES = 5 * 1024**2


def _wide(tmp_path, gathered: bool):
    header = ["sample"] + [f"gene_{index}" for index in range(COLUMNS)] + ["label"]
    lines = [",".join(header)]
    for row in range(ROWS):
        lines.append(",".join([f"s{row}"] + [str((row * 7 + column) % 11 - 5) for column in range(COLUMNS)]
                              + ["AB"[row % 2]]))
    features = ({"genes": {"dtype": "float32", "columns": "gene_*"}} if gathered else
                {f"gene_{index}": {"dtype": "float32"} for index in range(COLUMNS)})
    # the label declared last: it comes first all the same
    spec = {"name": "wide", "source": {"builder": "csv", "path": "wide.csv"}, "splits": {"train": 0.5, "test": 0.5},
            "features": {**features, "label": {"type": "class_label", "names": ["A", "B"]}}, "label": "label"}
    info = tb.build(write_spec(tmp_path, spec, {"wide.csv": "\n".join(lines) + "\n"}), output=tmp_path / "out")
    return read_info(info.path)


def _cards(html: str) -> list[str]:
    return re.findall(r'<article class="feature" id="feature-([^"]+)"', html)


def _summary(html: str) -> list[list[str]]:
    table = html.split('<table class="grid summary">', 1)[1].split("</table>", 1)[0]
    return [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1])]


def _expected(info, name, index=None):
    """min, max, mean and missing over both splits, from tfrecord_builder.json's statistics."""
    parts = [info.statistics[split][name] for split in info.splits]
    if index is not None:
        parts = [{key: values[index] for key, values in part["per_column"].items()} for part in parts]
    total = sum(part["num_values"] for part in parts)
    mean = sum(part["mean"] * part["num_values"] for part in parts) / total
    return [min(part["min"] for part in parts), max(part["max"] for part in parts), mean,
            sum(part.get("num_missing", 0) for part in parts)]


def _shown(value):
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:.4g}"


@pytest.mark.slow
def test_two_thousand_features_draw_the_label_first_and_summarise_the_rest(tmp_path):
    info = _wide(tmp_path, gathered=False)
    rendered = render(info, progress=False)
    html = rendered.html
    assert len(html.encode("utf-8")) < PAGE_BYTES
    cards = _cards(html)
    assert cards == ["label"] + [f"gene_{index}" for index in range(MAX_PLOTTED - 1)]
    assert {plot.feature for plot in rendered.plots} == set(cards)
    rows = _summary(html)
    assert [row[0] for row in rows] == [f"gene_{index}" for index in range(MAX_PLOTTED - 1, COLUMNS)]
    for row in rows[:50]:
        assert row[1] == "" and row[2] == "<code>float32 []</code>"
        low, high, mean, missing = _expected(info, row[0])
        assert row[3:] == [_shown(low), _shown(high), _shown(mean), str(missing)]
    assert f"The page draws {MAX_PLOTTED} of the {COLUMNS + 1:,} features (the label first)" in html


def test_a_gathered_feature_of_two_thousand_columns_gets_a_row_per_column(tmp_path):
    info = _wide(tmp_path, gathered=True)
    assert info.spec.features["genes"].shape == [COLUMNS]
    rendered = render(info, progress=False)
    html = rendered.html
    assert len(html.encode("utf-8")) < PAGE_BYTES
    assert _cards(html) == ["genes", "label"]  # few features: all drawn, in the spec's order
    assert [plot.stem for plot in rendered.plots] == ["genes-values", "label-classes"]
    rows = _summary(html)
    assert [(row[0], row[1]) for row in rows] == [("genes", f"gene_{index}") for index in range(COLUMNS)]
    for index in (0, 1, 977, COLUMNS - 1):
        low, high, mean, missing = _expected(info, "genes", index)
        assert rows[index][3:] == [_shown(low), _shown(high), _shown(mean), str(missing)]
