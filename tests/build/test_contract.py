"""The runner contract (build/runners/contract.py): the local and Beam runners implement it, the table in
build/runners/__init__.py chooses them, and a runner the table gains builds a dataset with no edit to
build/run.py, byte for byte the local runner's: one of the local runner's stages, and one of the
distributed steps that Beam and Spark run (build/runners/steps.py), here in plain Python."""
from __future__ import annotations

import random
import shutil
import subprocess
from collections import defaultdict
from typing import Any, Iterable

import pytest

import tfrecord_builder as tb
from tfrecord_builder.build import runners
from tfrecord_builder.build.plan import read_tasks
from tfrecord_builder.cli.main import parser
from tfrecord_builder.errors import UsageError
from tfrecord_builder.build.runners.contract import Runner, RunJob, RunResult
from tfrecord_builder.build.runners.distributed import layout_of, strata_from
from tfrecord_builder.build.runners.local import CheckpointedEncoding, LocalRunner, first_pass, write_shards
from tfrecord_builder.build.runners.steps import (DISTINCT, KEYS, OWN_KEYS, PARTS, PROBLEMS, RECORDS, SUMMARY, Steps,
                                                  counted_keys, own_key_problems)
from tfrecord_builder.builders.sources import source_builders
from tfrecord_builder.spec.load import load_spec
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


class StepsRunner(InProcessRunner):
    """An engine as a test writes one: the distributed steps Beam and Spark run (runners/steps.py),
    in this process, in plain Python (the flags and checks of the runner above). It only makes
    the groupings the steps' tags name, each a dict, and takes every step's inputs in an order of
    its own (tasks last to first, groups and their values shuffled), as an engine's workers may."""

    name = "steps"

    def run(self, job: RunJob) -> RunResult:
        steps = Steps.of(job)
        builders = steps.builders()
        tasks = job.tasks[::-1]
        stratified = None
        if job.spec.stratify is not None:  # the first pass: every task's classes, then the strata
            stratified = strata_from([steps.classify(builders, task) for task in tasks], job.spec)
        encoded = _by_tag(output for task in tasks for output in steps.encode(builders, task, stratified))
        layout, summary = layout_of(encoded[SUMMARY], job.spec)
        later = steps.past_encoding()
        sorted_ = _by_tag(output for key, pieces in _grouped(encoded[RECORDS])
                          for output in later.sort(key, pieces, layout))
        for key, parts in _grouped(sorted_[PARTS]):
            later.write(key, parts, layout)
        distinct: dict[str, int] = defaultdict(int)
        for split, count in sorted_[DISTINCT] + [counted_keys(group) for group in _grouped(sorted_[KEYS])]:
            distinct[split] += count
        problems = sorted_[PROBLEMS] + [found for group in _grouped(encoded[OWN_KEYS])
                                        for found in own_key_problems(group)]
        return steps.result(summary, problems, distinct)


def _by_tag(outputs: Iterable[tuple[str, Any]]) -> dict[str, list]:
    """A step's outputs, by their tags."""
    found: dict[str, list] = defaultdict(list)
    for tag, value in outputs:
        found[tag].append(value)
    return found


def _grouped(pairs: list[tuple[Any, Any]]) -> list[tuple[Any, list]]:
    """(key, value) pairs grouped by key, as an engine's shuffle groups them: in no order."""
    groups: dict[Any, list] = defaultdict(list)
    for key, value in pairs:
        groups[key].append(value)
    shuffled = random.Random(len(pairs))
    for values in groups.values():
        shuffled.shuffle(values)
    items = list(groups.items())
    shuffled.shuffle(items)
    return items


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


def _table(rows: int, repeated: int | None = None) -> str:
    """Rows of SPEC's table, row 5 bad (skipped); row `repeated` has row 7's key."""
    return "id,x,y\n" + "".join(f"r{7 if i == repeated else i},{'oops' if i == 5 else i / 3},{'ab'[(i * 7) % 3 % 2]}\n"
                                for i in range(rows))


ENGINE_SPECS = {
    "shuffled": SPEC,
    "source-order": {**SPEC, "output": {"shards": 3, "shuffle": False}},
    "stratified": {**SPEC, "stratify": "y", "splits": {"train": 0.6, "validation": 0.2, "test": 0.2}},
}


@pytest.mark.parametrize("variant", [*ENGINE_SPECS, "keep-splits"])
def test_an_engine_of_the_distributed_steps_in_this_process_writes_the_local_runners_bytes(monkeypatch, tmp_path,
                                                                                          variant):
    """The seam Beam and Spark share is engine-neutral: an engine of 60 lines in the test, which
    runs the same steps in plain Python, builds the local runner's dataset, byte for byte (many
    read tasks: buckets of several tasks each)."""
    monkeypatch.setenv("TFRECORD_BUILDER_TASK_BYTES", "2000")
    monkeypatch.setitem(runners.RUNNERS, "steps", runners.Implementation(f"{__name__}:StepsRunner"))
    spec = write_spec(tmp_path, ENGINE_SPECS.get(variant, SPEC), {"d.csv": _table(1500)})
    keep = None
    if variant == "keep-splits":  # an earlier version of fewer rows, whose records keep their splits
        old = write_spec(tmp_path / "old", SPEC, {"d.csv": _table(700)})
        keep = tb.build(old, output=tmp_path / "old" / "out").path
    out = tmp_path / "out"
    local = tb.build(spec, output=out, workers=2, keep_splits=keep)
    local_files = _files(out)
    shutil.rmtree(out)
    other = tb.build(spec, output=out, runner="steps", keep_splits=keep)
    assert _files(out) == local_files
    assert other.skipped == local.skipped == 1
    assert len(read_tasks(source_builders(load_spec(spec)))) >= 10
    if keep is not None:
        assert other.membership["kept_splits"] == local.membership["kept_splits"] == {
            "dataset": keep, "kept": 699, "new": 800}


@pytest.mark.parametrize("shuffle", [True, False], ids=["shuffled", "source-order"])
def test_an_engine_of_the_distributed_steps_stops_at_the_local_runners_error(monkeypatch, tmp_path, shuffle):
    """A key given twice (found as a bucket is sorted, or across buckets in the source's order),
    a bad record (on_error: fail), and a bad class met by a stratified build's first pass stop the
    build with the local runner's error."""
    monkeypatch.setenv("TFRECORD_BUILDER_TASK_BYTES", "2000")
    monkeypatch.setitem(runners.RUNNERS, "steps", runners.Implementation(f"{__name__}:StepsRunner"))
    output = {"shards": 2, "shuffle": shuffle}
    cases = [("twice", {**SPEC, "output": output}, _table(900, repeated=800),
              "d.csv, line 802: duplicate key 'r7' (also yielded at d.csv, line 9); expected unique keys"),
             ("bad", {**SPEC, "output": output, "on_error": "fail"}, _table(900),
              "d.csv, line 7: feature `x`: expected a number (float32), received 'oops'"),
             ("bad-class", {**SPEC, "output": output, "stratify": "y", "on_error": "fail"},
              _table(900).replace("r3,1.0,a", "r3,1.0,c"),
              "d.csv, line 5: feature `y`: expected a class name (a, b) or an index in [0, 2), received 'c'")]
    for name, spec, rows, message in cases:
        path = write_spec(tmp_path / name, spec, {"d.csv": rows})
        with pytest.raises(tb.DataError) as local:
            tb.build(path, output=tmp_path / name / "local")
        with pytest.raises(tb.DataError) as other:
            tb.build(path, output=tmp_path / name / "steps", runner="steps")
        assert str(other.value) == str(local.value) == message
        assert not (tmp_path / name / "steps" / "wine" / "1.0.0").exists()
