"""The engine's options, one way for every engine (build/runners/contract.py `RunnerOptions`):
`--runner-option KEY=VALUE` and `tb.build(..., runner_options=...)`, with the old spellings
(`--pipeline-options`, `--spark-conf`, `pipeline_options=`) kept. Each error is one line naming the
option as the user wrote it. Beam's side is in test_beam.py, which runs in Beam's environment;
Spark's refusals here need PySpark only (no session is started)."""
from __future__ import annotations


import pytest

import tfrecord_builder as tb
from tfrecord_builder.build.runners.contract import RunnerOptions
from tfrecord_builder.cli.main import main
from tfrecord_builder.errors import UsageError

from conftest import write_spec

SPEC = {"name": "rows", "source": {"builder": "csv", "path": "rows.csv"}, "features": {"x": {"dtype": "int64"}},
        "splits": {"train": 1.0}}
ROWS = "x\n" + "".join(f"{i}\n" for i in range(20))


def _said(capsys, *argv: str) -> tuple[int, str]:
    """The command line's exit status and standard error."""
    status = main(list(argv))
    return status, capsys.readouterr().err


def test_runner_options_are_key_value_strings_or_a_dict_and_pipeline_options_flags_as_they_are():
    assert RunnerOptions.of(["spark.master=local[2]", " a = b "], "runner_options").pairs("k=v") == [
        ("spark.master", "local[2]"), ("a", "b")]
    assert RunnerOptions.of({"runner": "DirectRunner", "direct_num_workers": 2}, "runner_options") == RunnerOptions(
        ("runner=DirectRunner", "direct_num_workers=2"), "runner_options")
    assert RunnerOptions.of(["save_main_session"], "runner_options").pairs("k=v", bare=True) == [
        ("save_main_session", None)]
    assert RunnerOptions.of(["--runner=X"], "pipeline_options", flags=True) == RunnerOptions(
        ("--runner=X",), "pipeline_options", True)
    refused = [("a=b", "runner_options: expected a list of KEY=VALUE strings or a dict, received 'a=b'"),
               ({"flag": True}, "runner_options: expected KEY: VALUE with a string key and a string or number value, "
                                "received 'flag': True"),
               ([1], "runner_options: expected a list of KEY=VALUE strings or a dict, received [1]")]
    for given, message in refused:
        with pytest.raises(UsageError) as raised:
            RunnerOptions.of(given, "runner_options")
        assert str(raised.value) == message
    with pytest.raises(UsageError) as raised:
        RunnerOptions.of(["spark.master"], "--runner-option").pairs("spark.master=spark://host:7077")
    assert str(raised.value) == ("--runner-option: expected KEY=VALUE (e.g. spark.master=spark://host:7077), "
                                 "received 'spark.master'")


def test_the_local_runner_refuses_engine_options_naming_them_as_given(tmp_path, capsys):
    spec = write_spec(tmp_path, SPEC, {"rows.csv": ROWS})
    out = tmp_path / "out"
    for keyword, value in [("runner_options", {"a": "b"}), ("runner_options", []),
                           ("pipeline_options", ["--runner=DirectRunner"])]:
        with pytest.raises(UsageError) as raised:
            tb.build(spec, output=out, **{keyword: value})
        assert str(raised.value) == (f"{keyword}: the local runner takes no engine options: give them with "
                                     "runner='beam' or runner='spark'")
    with pytest.raises(UsageError) as raised:
        tb.build(spec, output=out, runner_options=["a=b"], pipeline_options=["--a=b"])
    assert str(raised.value) == "runner_options and pipeline_options: the same options by two names; give runner_options"
    assert _said(capsys, "build", str(spec), "--output", str(out), "--runner-option", "a=b") == (
        2, "error: --runner-option: the local runner takes no engine options: give them with --runner beam or "
           "--runner spark\n")
    assert _said(capsys, "build", str(spec), "--output", str(out), "--runner", "spark", "--runner-option", "a=b",
                 "--spark-conf", "c=d") == (
        2, "error: --runner-option and --spark-conf: the engine's options by two names; give them as --runner-option\n")
    # the old spellings, each for its own runner, as ever
    assert _said(capsys, "build", str(spec), "--output", str(out), "--pipeline-options", "--runner=DirectRunner") == (
        2, "error: --pipeline-options are Beam's: give them with --runner beam\n")
    assert _said(capsys, "build", str(spec), "--output", str(out), "--runner", "beam", "--spark-conf", "a=b") == (
        2, "error: --spark-conf options are Spark's: give them with --runner spark\n")
    assert not out.exists()


@pytest.mark.parametrize("given, named", [
    (["--runner-option", "spark.master"], "--runner-option"),
    (["--spark-conf", "spark.master"], "--spark-conf"),
])
def test_spark_refuses_an_option_that_isnt_key_value_naming_it_as_given(tmp_path, capsys, given, named):
    pytest.importorskip("pyspark")
    spec = write_spec(tmp_path, SPEC, {"rows.csv": ROWS})
    assert _said(capsys, "build", str(spec), "--output", str(tmp_path / "out"), "--runner", "spark", *given) == (
        2, f"error: {named}: expected KEY=VALUE (e.g. spark.master=spark://host:7077), received 'spark.master'\n")
    with pytest.raises(UsageError) as raised:
        tb.build(spec, output=tmp_path / "out", runner="spark", pipeline_options=["spark.master"])
    assert str(raised.value) == ("pipeline_options: expected KEY=VALUE (e.g. spark.master=spark://host:7077), "
                                 "received 'spark.master'")
    assert not (tmp_path / "out").exists()


def test_spark_refuses_a_master_that_doesnt_answer_naming_the_option_as_given(tmp_path, capsys):
    pytest.importorskip("pyspark")
    spec = write_spec(tmp_path, SPEC, {"rows.csv": ROWS})
    answer = ("spark.master=spark://127.0.0.1:9: no Spark master answers (127.0.0.1:9: Connection refused); start it, "
              "or name the host and port it listens on (7077 unless set)")
    with pytest.raises(UsageError) as raised:
        tb.build(spec, output=tmp_path / "out", runner="spark", runner_options={"spark.master": "spark://127.0.0.1:9"})
    assert str(raised.value) == f"runner_options {answer}"
    assert _said(capsys, "build", str(spec), "--output", str(tmp_path / "out"), "--runner", "spark",
                 "--runner-option", "spark.master=spark://127.0.0.1:9") == (2, f"error: --runner-option {answer}\n")
    assert not (tmp_path / "out").exists()


@pytest.mark.spark
def test_spark_refuses_a_master_other_than_the_active_sessions_and_builds_on_it_without_one(spark, tmp_path):
    """A process has one Spark session: a build that names another master would run on the active
    one in silence (getOrCreate); it is refused, and a build naming none uses the active one (the
    run's one session, on the tests' cluster: support/spark_cluster.py)."""
    from pyspark.sql import SparkSession
    spec = write_spec(tmp_path, SPEC, {"rows.csv": ROWS})
    master = spark.sparkContext.master
    assert master.startswith("spark://127.0.0.1:")
    with pytest.raises(UsageError) as raised:
        tb.build(spec, output=tmp_path / "out", runner="spark", runner_options={"spark.master": "local[2]"})
    assert str(raised.value) == ("runner_options: spark.master=local[2]: a Spark session is already active on "
                                 f"{master}; stop it, or leave out spark.master to build on it")
    info = tb.build(spec, output=tmp_path / "out", runner="spark", runner_options={"spark.master": master})
    assert info.splits["train"].num_examples == 20
    info = tb.build(spec, output=tmp_path / "out", runner="spark", overwrite=True)
    assert info.splits["train"].num_examples == 20
    assert SparkSession.getActiveSession().sparkContext.master == master
