"""`build --runner spark`: the same dataset as the local runner, byte for byte, as a Spark job on a
cluster of separate processes (`local-cluster[2,1,1024]`: two executor JVMs, each with its own
Python workers), one session shared by every test of the file."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

import tfrecord_builder as tb

from conftest import write_spec

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_beam import _files, _same, _table, _tabular  # noqa: E402

pyspark = pytest.importorskip("pyspark")
pytestmark = pytest.mark.xdist_group("spark")


@pytest.fixture(scope="module")
def spark():
    """One session on a cluster of two executors, started once (about 10-50 s)."""
    from pyspark.sql import SparkSession

    if shutil.which("java") is None:
        pytest.skip("Spark needs Java 17 or later (on PATH)")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (SparkSession.builder.master("local-cluster[2,1,1024]").appName("tfrecord-builder tests")
               .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.executorEnv.PYTHONPATH", os.pathsep.join(sys.path))
               .getOrCreate())
    yield session
    session.stop()


def both(spec: Path, tmp_path: Path) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """Every file of the local build and of the Spark build of `spec`, built into the same path."""
    out = tmp_path / "out"
    tb.build(spec, output=out, workers=2)
    local = _files(out)
    shutil.rmtree(out)
    tb.build(spec, output=out, runner="spark")
    return local, _files(out)


@pytest.mark.parametrize("output", [{}, {"shuffle": False}, {"compression": "gzip"}],
                         ids=["shuffled", "source-order", "gzip"])
def test_a_table_builds_the_same_bytes_on_spark(spark, tmp_path, output):
    spec = write_spec(tmp_path, _tabular(**output), {"rows.csv": _table(600, bad=(5, 77))})
    local, built = both(spec, tmp_path)
    _same(local, built)


def test_a_stratified_table_builds_the_same_bytes_on_spark(spark, tmp_path):
    spec = write_spec(tmp_path, {**_tabular(), "stratify": "label", "splits": {"train": 0.8, "test": 0.2}},
                      {"rows.csv": _table(500)})
    _same(*both(spec, tmp_path))


def test_bad_data_stops_a_spark_build_with_the_local_error(spark, tmp_path):
    spec = write_spec(tmp_path, {**_tabular(), "on_error": "fail"}, {"rows.csv": _table(300, bad=(40,))})
    with pytest.raises(tb.DataError) as local:
        tb.build(spec, output=tmp_path / "local")
    with pytest.raises(tb.DataError) as built:
        tb.build(spec, output=tmp_path / "spark", runner="spark")
    assert str(built.value) == str(local.value)


def test_the_spark_runner_is_a_runner_and_the_table_chooses_it():
    from test_contract import assert_chosen_runner
    from tfrecord_builder.build.runners.spark import SparkRunner

    assert_chosen_runner("spark", SparkRunner, (True, False, True))


def test_spark_options_that_arent_key_value_are_one_line_and_exit_2(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cli"))
    from helpers import assert_error, run_cli

    write_spec(tmp_path, _tabular(), {"rows.csv": _table(20)})
    result = run_cli("build", "spec.yaml", "--output", "out", "--runner", "spark", "--spark-conf", "spark.master",
                     cwd=tmp_path)
    assert_error(result, 2, ["error: --spark-conf: expected KEY=VALUE (e.g. spark.master=spark://host:7077), "
                             "received 'spark.master'"])
    result = run_cli("build", "spec.yaml", "--output", "out", "--spark-conf", "a=b", cwd=tmp_path)
    assert_error(result, 2, ["error: --spark-conf options are Spark's: give them with --runner spark"])
    assert not (tmp_path / "out").exists()
