"""Datasets the report tests read, built once per test process from the repository's specs
(and one small dataset with missing, NaN and skipped records) into a temporary folder."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import tfrecord_builder as tb

from conftest import ROOT

SPECS = ("wine", "digits", "japanese_vowels", "digit_captions")

QUALITY_SPEC = """\
name: quality
description: missing values, NaN and a skipped row
source: {builder: csv, path: rows.csv}
features:
  x: {dtype: float32, allow_nan: true}
  y: {dtype: int64, default: 0}
  kind: {type: class_label, names: [a, b]}
label: kind
on_error: skip
output: {shards: 1}
"""
QUALITY_ROWS = "x,y,kind\n1.5,2,a\nnan,,b\n2.5,3,a\noops,4,b\ninf,5,a\n"


@pytest.fixture(scope="session")
def datasets(tmp_path_factory) -> dict[str, Path]:
    """Dataset folders by name: the specs' datasets, and `quality`."""
    output = tmp_path_factory.mktemp("report-datasets")
    built = {name: Path(tb.build(ROOT / "specs" / f"{name}.yaml", output=output, workers=1).path) for name in SPECS}
    source = tmp_path_factory.mktemp("quality-source")
    (source / "rows.csv").write_text(QUALITY_ROWS, encoding="utf-8")
    (source / "quality.yaml").write_text(textwrap.dedent(QUALITY_SPEC), encoding="utf-8")
    built["quality"] = Path(tb.build(source / "quality.yaml", output=output, workers=1).path)
    return built
