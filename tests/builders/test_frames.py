"""`tb.build(spec, source=frame)`: pandas, polars, pyarrow (Table, Dataset, RecordBatchReader) and
Hugging Face frames give the shards the same rows give from a Parquet file written by pyarrow,
byte for byte, and every value exact against the rows as built here."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import datasets
import pandas as pd
import pyarrow.parquet as pq
import pytest

import tfrecord_builder as tb
from tfrecord_builder.codec.example_reader import parse_record
from tfrecord_builder.codec.tfrecord import open_records, read_records
from tfrecord_builder.features import TensorFeature

from conftest import write_spec
from support.frames import COLORS, KINDS, canonical, expected_rows
from support.reading import files_of


def spec_of(color: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "name": "frame",
        "features": {
            "id": {"dtype": "int64"}, "i8": {"dtype": "int64"}, "u8": {"dtype": "int64"},
            "f32": {"dtype": "float32"}, "f64": {"dtype": "float64", "default": -1.0},
            "flag": {"dtype": "bool", "default": False}, "text": {"dtype": "string", "default": ""},
            "raw": {"dtype": "bytes"}, "ints": {"dtype": "int64", "shape": [None]},
            "words": {"dtype": "string", "shape": [None]}, "day": {"dtype": "string", "default": ""},
            "when": {"dtype": "string"}, "color": color or {"type": "class_label"},
        },
        "splits": {"train": 0.7, "test": 0.3},
        "output": {"shuffle": False},
    }


def records(info: tb.DatasetInfo) -> dict[int, dict[str, list]]:
    """Every record of every split, by its id, read with the package's TensorFlow-free reader."""
    out = {}
    for split in info.splits.values():
        for shard in split.shards:
            with open_records(str(Path(info.path) / shard["file"]), info.spec.output.compression) as stream:
                for record in read_records(stream, shard["file"]):
                    features, _ = parse_record(record)
                    row = {key: [value.decode() if isinstance(value, bytes) and key != "raw" else value
                                 for value in values] for key, (_, values) in features.items()}
                    out[row["id"][0]] = row
    return out


def data_files(info: tb.DatasetInfo) -> dict[str, bytes]:
    """The dataset's files but those that name the spec (its source differs): shards, indexes,
    split keys, class names."""
    return {name: content for name, content in files_of(info.path).items()
            if not name.endswith((".py", "tfrecord_builder.json", "dataset_info.json"))}


@pytest.mark.parametrize("kind", KINDS)
def test_a_frame_gives_the_shards_of_its_rows_in_parquet_and_every_value_exact(tmp_path, kind):
    parquet = tmp_path / "rows.parquet"
    frame = KINDS[kind](canonical(), parquet)
    # Hugging Face keeps no categorical column (a dictionary becomes text): its classes are named
    color = {"type": "class_label", "names": COLORS} if kind == "hugging_face" else None
    spec = spec_of(color)
    from_frame = tb.build(write_spec(tmp_path / "frame", spec), output=tmp_path / "out-frame", workers=2,
                          source=frame, progress=False)
    from_file = tb.build(write_spec(tmp_path, {**spec, "source": {"builder": "parquet", "path": "rows.parquet"}}),
                         output=tmp_path / "out-file", workers=2, progress=False)
    assert data_files(from_frame) == data_files(from_file)
    assert any(name.endswith("-00000-of-00001") for name in data_files(from_frame))
    assert records(from_frame) == expected_rows()
    assert from_frame.spec.features["color"].names == COLORS
    assert [name for name in os.listdir(tmp_path / "out-frame" / "frame") if "frame-" in name] == []  # cleaned up


def test_a_shuffled_hugging_face_dataset_is_read_in_its_own_order(tmp_path):
    dataset = datasets.Dataset(canonical()).shuffle(seed=3).select(range(30))
    ids = dataset["id"]
    spec = {**spec_of({"type": "class_label", "names": COLORS}), "splits": {"train": 1.0}}
    info = tb.build(write_spec(tmp_path, spec), output=tmp_path / "out", source=dataset, progress=False)
    from_reader = list(tb.read(info.path, "train"))
    assert [record["id"] for record in from_reader] == ids != sorted(ids)


def test_a_large_frame_is_read_in_several_tasks_by_workers_and_gives_the_same_bytes(tmp_path, monkeypatch):
    monkeypatch.setenv("TFRECORD_BUILDER_TASK_BYTES", "20000")
    table = canonical(3000)
    parquet = tmp_path / "rows.parquet"
    pq.write_table(table, parquet, row_group_size=700)
    spec = {**spec_of(), "output": {"shuffle": True, "shards": 3}}
    spec["features"] = {name: spec["features"][name] for name in ("id", "text", "ints", "when", "color")}
    from tfrecord_builder.builders.frames import FrameBuilder, frame_builders, staged
    from tfrecord_builder.spec.load import load_spec
    (_, builder), = frame_builders(load_spec(write_spec(tmp_path / "frame", spec)), table)
    with staged([(None, builder)], str(tmp_path / "staged")):
        assert isinstance(builder, FrameBuilder) and len(builder.tasks(None) or []) > 3
    from_frame = tb.build(write_spec(tmp_path / "frame", spec), output=tmp_path / "a", workers=2, source=table,
                          progress=False)
    from_file = tb.build(write_spec(tmp_path, {**spec, "source": {"builder": "parquet", "path": "rows.parquet"}}),
                         output=tmp_path / "b", workers=2, progress=False)
    assert data_files(from_frame) == data_files(from_file)
    assert from_frame.splits["train"].num_examples + from_frame.splits["test"].num_examples == 3000


def test_a_split_column_divides_the_frame(tmp_path):
    frame = pd.DataFrame({"x": [1, 2, 3, 4], "part": ["train", "test", "train", "train"]})
    spec = {"name": "parts", "source": {"builder": "dataframe", "split_column": "part"},
            "features": {"x": {"dtype": "int64"}}, "splits": {"train": {}, "test": {}}, "output": {"shuffle": False}}
    info = tb.build(write_spec(tmp_path, spec), output=tmp_path / "out", source=frame, progress=False)
    assert [record["x"] for record in tb.read(info.path, "train")] == [1, 3, 4]
    assert [record["x"] for record in tb.read(info.path, "test")] == [2]


def test_a_pandas_index_is_kept_as_to_parquet_keeps_it(tmp_path):
    frame = pd.DataFrame({"x": [5, 6]}, index=pd.Index([10, 11], name="row"))
    spec = {"name": "indexed", "features": {"x": {"dtype": "int64"}, "row": {"dtype": "int64"}},
            "output": {"shuffle": False}}
    info = tb.build(write_spec(tmp_path, spec), output=tmp_path / "out", source=frame, progress=False)
    assert [(record["row"], record["x"]) for record in tb.read(info.path, "train")] == [(10, 5), (11, 6)]


# ---- what is refused, in one line ------------------------------------------------------------

def _build(tmp_path: Path, spec: dict, frame: Any, **options: Any) -> tb.DatasetInfo:
    spec = {"name": "bad", "features": {"x": {"dtype": "int64"}}, **spec}
    return tb.build(write_spec(tmp_path, spec), output=tmp_path / "out", source=frame, progress=False, **options)


def test_a_column_the_frame_lacks_is_named_with_the_frames_columns(tmp_path):
    with pytest.raises(tb.DataError) as error:
        _build(tmp_path, {"features": {"y": {"dtype": "int64"}}}, pd.DataFrame({"x": [1], "z": [2]}))
    assert str(error.value) == "the pandas DataFrame: feature `y`: no column `y` in the source; its columns: x, z"
    assert not (tmp_path / "out").exists()


def test_a_spec_whose_source_names_files_is_refused_with_a_frame(tmp_path):
    with pytest.raises(tb.SpecError) as error:
        _build(tmp_path, {"source": {"builder": "parquet", "path": "rows.parquet"}}, pd.DataFrame({"x": [1]}))
    assert "source= gives the rows, and the spec's source names files (builder: parquet, path: rows.parquet)" \
        in str(error.value)
    assert "\n" not in str(error.value)


def test_a_dataframe_spec_without_a_frame_says_where_its_rows_come_from(tmp_path):
    spec = write_spec(tmp_path, {"name": "bad", "features": {"x": {"dtype": "int64"}}})
    with pytest.raises(tb.SpecError) as error:
        tb.build(spec, output=tmp_path / "out", progress=False)
    assert "the dataframe builder reads a frame given from Python, tb.build(spec, source=frame)" in str(error.value)


@pytest.mark.parametrize("frame, message", [
    (pd.DataFrame({"x": [1, "two"]}), "the pandas DataFrame: column `x` of dtype object: Arrow can't convert it"),
    (pd.DataFrame({"x": pd.period_range("2020-01", periods=2, freq="M")}),
     "the pandas DataFrame: column `x` of type extension<pandas.period<ArrowPeriodType>>: no exact mapping"),
    (pd.DataFrame({"x": pd.to_timedelta([1, 2], unit="s")}),
     "the pandas DataFrame: column `x`: a duration["),
])
def test_a_column_type_without_an_exact_mapping_is_refused_naming_it(tmp_path, frame, message):
    with pytest.raises(tb.DataError) as error:
        _build(tmp_path, {}, frame)
    assert str(error.value).startswith(message), str(error.value)
    assert "\n" not in str(error.value)


def test_what_is_not_a_frame_is_refused_naming_what_is_taken(tmp_path):
    with pytest.raises(tb.UsageError) as error:
        _build(tmp_path, {}, [{"x": 1}])
    assert str(error.value) == ("source=: expected a pandas or polars DataFrame, a pyarrow Table, Dataset or "
                                "RecordBatchReader, or a Hugging Face datasets.Dataset; received builtins.list")


def test_a_dataset_dict_is_refused_naming_its_splits(tmp_path):
    splits = datasets.DatasetDict({"train": datasets.Dataset.from_dict({"x": [1]}),
                                   "test": datasets.Dataset.from_dict({"x": [2]})})
    with pytest.raises(tb.UsageError, match=r"^source=: a DatasetDict of splits train, test; give one of them"):
        _build(tmp_path, {}, splits)


def test_a_frame_with_the_spark_runner_is_refused(tmp_path):
    """(Beam's DirectRunner reads one: tests/build/test_sources_on_runners.py.)"""
    with pytest.raises(tb.UsageError) as error:
        _build(tmp_path, {}, pd.DataFrame({"x": [1]}), runner="spark")
    assert str(error.value) == ('source=: a pandas, polars or Arrow frame is read by the local runner and by Beam\'s '
                                'DirectRunner (runner="beam"), whose workers map its rows on this machine; with '
                                "runner='spark', write the frame to Parquet and name the file in the spec")


@pytest.mark.spark
@pytest.mark.parametrize("runner", ["local", "beam"])
def test_a_spark_dataframe_is_refused_naming_the_spark_runner(spark, tmp_path, runner):
    """A DataFrame of the run's one session (support/spark_cluster.py)."""
    with pytest.raises(tb.UsageError) as error:
        _build(tmp_path, {}, spark.createDataFrame([(1,)], ["x"]), runner=runner)
    assert str(error.value) == ('source=: a Spark DataFrame is read by the Spark runner, on the executors where its '
                                f'partitions are (never collected to this process): runner="spark", not {runner!r}')


# ---- a killed build, resumed ---------------------------------------------------------------------

KILLED = """
import sys
import pandas as pd
import tfrecord_builder as tb
from tfrecord_builder.write import checkpoint
from tfrecord_builder.features import TensorFeature
checkpoint.INTERVAL = 0
TensorFeature.batch_rows = 2000
frame = pd.DataFrame({"id": range(60000), "text": [f"row-{i}-" + "x" * 40 for i in range(60000)]})
tb.build(sys.argv[1], output=sys.argv[2], source=frame, workers=1, progress=False)
"""


def test_a_killed_frame_build_resumes_to_the_same_bytes_and_its_rows_file_goes(tmp_path, monkeypatch):
    monkeypatch.setattr(TensorFeature, "batch_rows", 2000)  # batched as the killed build was
    frame = pd.DataFrame({"id": range(60000), "text": [f"row-{i}-" + "x" * 40 for i in range(60000)]})
    spec = write_spec(tmp_path, {"name": "big", "features": {"id": {"dtype": "int64"}, "text": {"dtype": "string"}},
                                 "splits": {"train": 0.8, "test": 0.2}, "output": {"shards": 4}})
    reference = tb.build(spec, output=tmp_path / "reference", source=frame, workers=1, progress=False)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    process = subprocess.Popen([sys.executable, "-c", KILLED, str(spec), str(tmp_path / "out")], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    saved = tmp_path / "out" / "big" / ".1.0.0.building" / "checkpoint.json"
    deadline = time.monotonic() + 600  # a bound for a build that never gets there, not a measure
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if json.loads(saved.read_text()).get("batches", 0) >= 5:
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    assert process.wait() == -signal.SIGKILL, "the build finished before it could be killed"
    killed = json.loads(saved.read_text())
    assert 0 < killed["records"] < 60000
    assert [name for name in os.listdir(tmp_path / "out" / "big") if ".frame-" in name]  # its rows, left behind
    resumed = tb.build(spec, output=tmp_path / "out", resume=True, source=frame, workers=1, progress=False)
    assert resumed.to_dict()["splits"] == reference.to_dict()["splits"]  # every shard's sha256
    assert sorted(os.listdir(tmp_path / "out" / "big")) == [".1.0.0.lock", "1.0.0"]
