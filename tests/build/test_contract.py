"""The runner contract (build/runners/contract.py): the local and Beam runners implement it, the table in
build/runners/__init__.py chooses them, and a runner the table gains builds a dataset with no edit to
build/run.py, byte for byte the local runner's."""
from __future__ import annotations

import shutil
import subprocess

import pytest

import tfrecord_builder as tb
from tfrecord_builder.build import runners
from tfrecord_builder.cli.main import parser
from tfrecord_builder.errors import UsageError
from tfrecord_builder.build.runners.contract import Runner, RunJob, RunResult
from tfrecord_builder.build.runners.local import CheckpointedEncoding, LocalRunner, first_pass, write_shards
from tfrecord_builder.write.manifest import Manifest

from conftest import ROOT, write_spec
from support.engines import BEAM_PYTHON, assert_chosen_runner
from support.reading import files_of as _files

SPEC = {"name": "wine", "source": {"builder": "csv", "path": "d.csv", "key": "id"}, "on_error": "skip",
        "features": {"x": {"dtype": "float32"}, "y": {"type": "class_label", "names": ["a", "b"]}},
        "splits": {"train": 0.75, "test": 0.25}, "label": "y", "output": {"shards": 2}}
ROWS = "id,x,y\n" + "".join(f"r{i},{'oops' if i == 5 else i / 3},{'ab'[i % 2]}\n" for i in range(40))


class InProcessRunner:
    """A third engine, as a test registers it: the local runner's stages, in this process only,
    with no checkpoint."""

    name = "in-process"
    takes_options = False
    checkpoints = False
    shards_to_bucket = False

    def check(self, spec, folder, options, workers) -> None:
        pass

    def run(self, job: RunJob) -> RunResult:
        assert job.restored is None and job.shards == job.staging  # as its attributes ask
        strata = first_pass(job.spec, job.tasks, job.builders, 1, job.progress)
        encoded = CheckpointedEncoding(job.spec, job.staging, job.build_id, None, job.keep)
        encoded.run(job.tasks, job.builders, 1, job.progress, strata)
        encoded.combine_runs(1)
        splits, distinct = write_shards(job.spec, job.shards, encoded.records, job.kept,
                                        Manifest(job.shards, job.build_id), job.progress, 1)
        members = {name: encoded.split_members(name) for name in job.spec.splits}
        return RunResult(splits, encoded.statistics.to_dict(), encoded.skipped, distinct, encoded.state.notices,
                         members, encoded.state.kept)


def test_the_local_runner_is_a_runner_and_the_table_chooses_it():
    assert_chosen_runner("local", LocalRunner, (False, True, False))
    assert runners.runner_names() == ("local", "beam", "spark")


@pytest.mark.beam
def test_the_beam_runner_is_a_runner_and_the_table_chooses_it():
    """In Beam's own environment (tests/build/test_beam.py), where apache_beam imports."""
    if not BEAM_PYTHON.exists():
        pytest.fail(f"{BEAM_PYTHON}: no Beam environment; `make test` makes it (or set TFRECORD_BUILDER_BEAM_PYTHON)")
    code = ("import inspect, sys\n"
            "from tfrecord_builder.build.runners import chosen_runner\n"
            "from tfrecord_builder.build.runners.beam import BeamRunner\n"
            "from tfrecord_builder.build.runners.contract import Runner\n"
            "chosen = chosen_runner('beam')\n"
            "same = all(list(inspect.signature(getattr(BeamRunner, m)).parameters)"
            " == list(inspect.signature(getattr(Runner, m)).parameters) for m in ('check', 'run'))\n"
            "print(type(chosen).__name__, isinstance(chosen, Runner), same, chosen.name, chosen.takes_options,"
            " chosen.checkpoints, chosen.shards_to_bucket)\n")
    done = subprocess.run([str(BEAM_PYTHON), "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "BeamRunner True True beam True False True\n"


def test_the_table_refuses_a_runner_it_lacks_and_one_whose_engine_is_missing(monkeypatch, tmp_path):
    with pytest.raises(UsageError) as raised:
        runners.chosen_runner("flink")
    assert str(raised.value) == "runner: expected one of local, beam, spark, received 'flink'"
    spec = write_spec(tmp_path, SPEC, {"d.csv": ROWS})
    with pytest.raises(UsageError) as raised:
        tb.build(spec, output=tmp_path / "out", runner="flink")
    assert str(raised.value) == "runner: expected one of local, beam, spark, received 'flink'"
    with pytest.raises(UsageError) as raised:
        tb.build(spec, output=tmp_path / "out", runner=["local"])
    assert str(raised.value) == "runner: expected one of local, beam, spark, received ['local']"
    monkeypatch.setitem(runners.RUNNERS, "nowhere", runners.Implementation("no_such_module:X", "no_such_engine",
                                                                           "No Such Engine"))
    with pytest.raises(UsageError) as raised:
        runners.chosen_runner("nowhere")
    assert str(raised.value) == "--runner nowhere needs No Such Engine: install tfrecord-builder's `nowhere` extra " \
                                "(pip install '.[nowhere]' in a checkout; see docs/install.md)"
    assert not (tmp_path / "out").exists()


def test_a_runner_added_to_the_table_builds_the_local_runners_dataset(monkeypatch, tmp_path):
    """The issue's claim: a new engine is one implementation and one line of the table, nothing
    in build/run.py; its dataset is the local runner's, byte for byte (built into the same path)."""
    monkeypatch.setitem(runners.RUNNERS, "in-process", runners.Implementation(f"{__name__}:InProcessRunner"))
    assert isinstance(runners.chosen_runner("in-process"), Runner)
    spec = write_spec(tmp_path, SPEC, {"d.csv": ROWS})
    out = tmp_path / "out"
    local = tb.build(spec, output=out, workers=2)
    local_files = _files(out)
    shutil.rmtree(out)
    other = tb.build(spec, output=out, runner="in-process")
    assert _files(out) == local_files
    assert other.skipped == local.skipped == 1
    assert (other.splits["train"].num_examples, other.splits["test"].num_examples) == (
        local.splits["train"].num_examples, local.splits["test"].num_examples)
    assert {"wine/1.0.0/wine-train.tfrecord-00000-of-00002", "wine/1.0.0/dataset_info.json"} <= set(local_files)
    assert "--runner" in [action.option_strings[0] for action in _build_parser()._actions if action.option_strings]
    assert _runner_choices() == ["local", "beam", "spark", "in-process"]  # the CLI takes it too


def _build_parser():
    commands = next(action for action in parser()._actions if action.dest == "command")
    return commands.choices["build"]


def _runner_choices() -> list[str]:
    return list(next(action for action in _build_parser()._actions if action.dest == "runner").choices)
