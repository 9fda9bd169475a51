"""`tb.infer(frame)`: a frame's spec is the one its rows give as a Parquet file, but for where
they come from, and it builds from the frame."""
from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

import tfrecord_builder as tb

from support.frames import KINDS, canonical


def _without_source(text: str, where: str, source: list[str]) -> str:
    """The spec text with the lines that say where the rows come from taken out, checked first."""
    lines = text.splitlines()
    assert lines[0] == f"# Written by `tfrecord-builder infer` from {where}: all 40 rows read."
    assert lines[5:5 + len(source) + 1] == ["source:"] + source
    return "\n".join(lines[1:5] + lines[6 + len(source):])


LABELS = {"pandas": "the pandas DataFrame", "polars": "the polars DataFrame", "table": "the pyarrow Table",
          "reader": "the pyarrow RecordBatchReader", "dataset": "the pyarrow Dataset",
          "hugging_face": "the Hugging Face dataset"}


@pytest.mark.parametrize("kind", KINDS)
def test_a_frame_gives_the_guesses_its_rows_give_in_a_parquet_file(tmp_path, kind):
    parquet = tmp_path / "frame.parquet"
    frame = KINDS[kind](canonical(), parquet)
    from_file = tb.infer(parquet, tmp_path / "spec.yaml")
    from_frame = tb.infer(frame, tmp_path / "spec.yaml")
    assert _without_source(from_frame, LABELS[kind], ["  builder: dataframe"]) == \
        _without_source(from_file, "frame.parquet", ["  builder: parquet", "  path: frame.parquet"])
    if kind != "reader":  # (read once, by infer)
        spec = tmp_path / "frame.yaml"
        spec.write_text(from_frame)
        info = tb.build(spec, output=tmp_path / "out", source=frame, progress=False)
        assert sum(split.num_examples for split in info.splits.values()) == 40


def test_an_empty_frame_is_refused_in_one_line():
    with pytest.raises(tb.DataError) as error:
        tb.infer(pd.DataFrame({"x": pa.array([], pa.int64())}))
    assert str(error.value) == "the pandas DataFrame: no rows; expected at least one row to infer the features from"
