"""`build --runner beam`: the same dataset as the local runner, byte for byte, on Beam's own
DirectRunner in multi-processing mode (2 workers).

Beam lives in an environment of its own (`.venv-beam`, made by `make test`): it caps protobuf and
pyarrow below what TensorFlow takes, and the build's workers need no TensorFlow, so that
environment has none. Every case builds the same spec twice into the same path, once with each
runner (in its own environment), and compares every file of the two folders. A Beam job takes
5-10 s to start whatever its size, so the tests asserting on one build share its job (`table_built`).
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
from PIL import Image

from conftest import ROOT, write_spec
from support.engines import (BEAM_PYTHON, SMALL_TASKS, big_table, parts_spec as _parts_spec, photos_spec,
                             run_beam as _beam, run_in as _cli, sequence_sources, shapes_spec, table as _table,
                             tabular as _tabular)
from support.reading import assert_same_files as _same, files_of as _files

pytestmark = pytest.mark.beam


def _both(spec: Path, tmp_path: Path, env: dict[str, str] | None = None,
          local_python: Path | str = sys.executable) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """Every file of the local build and of the Beam build of `spec`, built into the same path."""
    out = tmp_path / "out"
    local = _cli(local_python, "build", str(spec), "--output", str(out), "--workers", "2", env=env)
    assert local.returncode == 0, local.stderr
    local_files = _files(out)
    shutil.rmtree(out)
    beam = _beam("build", str(spec), "--output", str(out), "--workers", "2", env=env)
    assert beam.returncode == 0, beam.stderr
    assert beam.stderr == local.stderr  # the same warnings: Beam's own log lines are held back
    return local_files, _files(out)


# Beam's own options for the DirectRunner in 2 processes, as `--runner-option KEY=VALUE` (and KEY
# alone for a flag): the job they name is the one `--workers 2` starts
RUNNER_OPTIONS = ("runner=DirectRunner", "direct_running_mode=multi_processing", "direct_num_workers=2",
                  "save_main_session")
# the table's cases: (spec keys added, output options, how Beam's steps carry records, runner
# options). Each is one Beam job shared by every test asserting on it: a job takes 5-10 s whatever
# its size, so each case takes one of the paths that differ on Beam (records as files or as Beam
# elements, shuffled or in the source's order) with the options besides (stratify, gzip, names)
TABLE_CASES = {
    "shuffled-stratified-runner-options": ({"stratify": "label"}, {}, "files", RUNNER_OPTIONS),
    "source-order-shards-named-tfrecord": ({}, {"shuffle": False, "naming": "suffix"}, "files", ()),
    "gzip-as-elements": ({}, {"compression": "gzip"}, "elements", ()),
    "source-order-as-elements": ({}, {"shuffle": False}, "elements", ()),
}


@dataclass(frozen=True)
class Built:
    """One spec built on both runners into the same path: what each said and every file it wrote."""
    local: subprocess.CompletedProcess
    local_files: dict[str, bytes]
    beam: subprocess.CompletedProcess
    beam_files: dict[str, bytes]


@pytest.fixture(scope="module")
def table_built(tmp_path_factory) -> Callable[[str], Built]:
    """`table_built(case)`: the 3,000-row table with bad rows built as TABLE_CASES[case] says, on
    the local runner (once per output: how Beam carries records is no option of its) and on Beam,
    each built once for the whole module."""
    folder = tmp_path_factory.mktemp("table")
    local: dict[str, tuple[Path, subprocess.CompletedProcess, dict[str, bytes]]] = {}
    jobs: dict[str, Built] = {}

    def built(case: str) -> Built:
        if case in jobs:
            return jobs[case]
        added, output, records, options = TABLE_CASES[case]
        named = json.dumps([added, output], sort_keys=True)
        if named not in local:
            spec = write_spec(folder / str(len(local)), {**_tabular(**output), **added},
                              {"rows.csv": _table(3000, bad=(5, 1234, 2999))})
            out = spec.parent / "out"
            said = _cli(sys.executable, "build", str(spec), "--output", str(out), "--workers", "2", env=SMALL_TASKS)
            assert said.returncode == 0, said.stderr
            local[named] = (spec, said, _files(out))
            shutil.rmtree(out)
        spec, said, local_files = local[named]
        out = spec.parent / "out"  # the local build's path
        given = [word for option in options for word in ("--runner-option", option)] or ["--workers", "2"]
        beam = _beam("build", str(spec), "--output", str(out), *given,
                     env={**SMALL_TASKS, "TFRECORD_BUILDER_BEAM_RECORDS": records})
        assert beam.returncode == 0, beam.stderr
        jobs[case] = Built(said, local_files, beam, _files(out))
        shutil.rmtree(out)
        return jobs[case]
    return built


@pytest.mark.parametrize("case", list(TABLE_CASES))
def test_a_table_builds_the_same_bytes_on_beam(table_built, case):
    """Records cross the job's steps as files on the DirectRunner, as Beam elements on a remote
    runner (`TFRECORD_BUILDER_BEAM_RECORDS` chooses here): the same bytes either way."""
    built = table_built(case)
    assert built.beam.stderr == built.local.stderr  # the same warnings: Beam's own log lines are held back
    beam = built.beam_files
    _same(built.local_files, beam)
    skipped = beam["rows/1.0.0/skipped.jsonl"].decode().splitlines()
    assert [json.loads(line)["record"] for line in skipped] == ["rows.csv, line 7", "rows.csv, line 1236",
                                                                  "rows.csv, line 3001", "rows.csv, line 3007"]
    info = json.loads(beam["rows/1.0.0/tfrecord_builder.json"])
    assert sum(split["num_examples"] for split in info["splits"].values()) == 3000 + 39 - 4
    if TABLE_CASES[case][1].get("naming") == "suffix":
        assert "rows/1.0.0/rows-train-00002-of-00003.tfrecord" in beam
    if TABLE_CASES[case][1].get("compression") == "gzip":
        assert "rows/1.0.0/rows-train.tfrecord-00002-of-00003.gz" in beam


@pytest.mark.parametrize("shuffle", [True, False], ids=["shuffled", "source-order"])
def test_splits_far_from_the_fractions_asked_are_the_same_warning_on_both_runners(tmp_path, shuffle):
    """The same count of different keys (write/order.py), the rows read in 4 tasks on Beam: a key
    in several tasks counts once, in the source's order too."""
    rows = "id,x\n" + "".join(f"{row % 3},{row % 3}.5\n" for row in range(12000))  # 3 different rows
    spec = write_spec(tmp_path, {"name": "few", "source": {"builder": "csv", "path": "rows.csv"},
                                 "features": {"x": {"dtype": "float32"}}, "splits": {"train": 0.5, "test": 0.5},
                                 "output": {"shards": 1, "shuffle": shuffle}}, {"rows.csv": rows})
    said = [_cli(sys.executable, "build", str(spec), "--output", str(tmp_path / "local")),
            _beam("build", str(spec), "--output", str(tmp_path / "beam"), env=SMALL_TASKS)]
    assert [done.returncode for done in said] == [0, 0], said[1].stderr
    assert "only 3 different keys" in said[0].stderr and said[1].stderr == said[0].stderr


def test_filled_values_are_counted_apart_the_same_on_beam(tmp_path):
    """Gaps filled by a default (NaN, -1, a class): both runners leave them out of the figures and
    count them as `num_filled`, in the same statistics, byte for byte."""
    lines = ["id,x,n,label"] + [f"{row},{'' if row % 6 == 0 else row / 4},{'' if row % 5 == 0 else row % 7},"
                                f"{'' if row % 9 == 0 else ['cat', 'dog'][row % 2]}" for row in range(2000)]
    spec = write_spec(tmp_path, {"name": "gaps", "source": {"builder": "csv", "path": "rows.csv", "key": "id"},
                                 "features": {"x": {"dtype": "float32", "default": float("nan"), "allow_nan": True},
                                              "n": {"dtype": "int64", "default": -1},
                                              "label": {"type": "class_label", "names": ["cat", "dog"],
                                                        "default": "cat"}},
                                 "splits": {"train": 0.8, "test": 0.2}, "output": {"shards": 2}},
                      {"rows.csv": "\n".join(lines) + "\n"})
    local, beam = _both(spec, tmp_path, SMALL_TASKS)
    _same(local, beam)
    statistics = json.loads(beam["gaps/1.0.0/tfrecord_builder.json"])["statistics"]
    for feature, gaps in (("x", range(0, 2000, 6)), ("n", range(0, 2000, 5)), ("label", range(0, 2000, 9))):
        assert sum(statistics[split][feature]["num_filled"] for split in ("train", "test")) == len(gaps)
    assert min(statistics[split]["n"]["min"] for split in ("train", "test")) == 0  # the default -1 left out
    assert not any("num_non_finite" in statistics[split]["x"] for split in ("train", "test"))


def test_a_keyed_table_in_source_order_with_more_shards_than_records(tmp_path):
    """Both runners lower the shard count alike so that no shard holds one record (5 into 2)."""
    spec = _tabular(shuffle=False, shards=5)
    spec["source"]["key"] = "id"
    spec["splits"] = {"train": {"path": "rows.csv"}, "test": {"path": "test.csv"}}
    spec["source"].pop("path")
    test = "id,x,y,name,label\n" + "".join(f"{row},0.5,{row},aaa,cat\n" for row in range(1, 6))
    unique = "\n".join(_table(800).splitlines()[:801]) + "\n"  # without the repeated rows: keys are unique
    spec_path = write_spec(tmp_path, spec, {"rows.csv": unique, "test.csv": test})
    local, beam = _both(spec_path, tmp_path, SMALL_TASKS)
    _same(local, beam)
    info = json.loads(beam["rows/1.0.0/tfrecord_builder.json"])
    assert [shard["num_examples"] for shard in info["splits"]["test"]["shards"]] == [2, 3]


def test_split_membership_and_kept_splits_are_the_same_bytes_on_beam(tmp_path):
    """splits/NAME-SPLIT.keys, and a build keeping an earlier version's splits (--keep-splits): the
    local runner's bytes, from many read tasks."""
    rows = _table(3000).splitlines()
    unique = "\n".join(rows[:3001]) + "\n"  # keyed by id: without the repeated rows
    spec = _tabular()
    spec["source"]["key"] = "id"
    old = write_spec(tmp_path / "old", spec, {"rows.csv": unique})
    built = _cli(sys.executable, "build", str(old), "--output", str(tmp_path / "old-out"))
    assert built.returncode == 0, built.stderr
    # the next version: 500 rows more, the splits re-weighted; the 3,000 known rows keep theirs
    spec["version"], spec["splits"] = "1.1.0", {"train": 0.5, "validation": 0.2, "test": 0.3}
    new = write_spec(tmp_path / "new", spec, {"rows.csv": unique + "\n".join(_table(3500).splitlines()[3001:3501])
                                              + "\n"})
    out, keep = tmp_path / "out", str(tmp_path / "old-out" / "rows" / "1.0.0")
    said = _cli(sys.executable, "build", str(new), "--output", str(out), "--workers", "2", "--keep-splits", keep,
                env=SMALL_TASKS)
    assert said.returncode == 0, said.stderr
    assert f"splits kept from {keep}: 3,000 records in the split they had there, 500 new to it (split by hash)" \
        in said.stdout.splitlines()
    local = _files(out)
    shutil.rmtree(out)
    said = _beam("build", str(new), "--output", str(out), "--workers", "2", "--keep-splits", keep, env=SMALL_TASKS)
    assert said.returncode == 0, said.stderr
    beam = _files(out)
    _same(local, beam)
    assert [name for name in beam if name.startswith("rows/1.1.0/splits/")] == [
        "rows/1.1.0/splits/rows-test.keys", "rows/1.1.0/splits/rows-train.keys",
        "rows/1.1.0/splits/rows-validation.keys"]
    earlier = _files(tmp_path / "old-out")
    for split in ("train", "validation", "test"):
        before = np.frombuffer(earlier[f"rows/1.0.0/splits/rows-{split}.keys"], "<u8")
        after = np.frombuffer(beam[f"rows/1.1.0/splits/rows-{split}.keys"], "<u8")
        assert np.isin(before, after).all()  # every known row where it was


def test_sequences_from_jsonl_and_from_a_long_table_build_the_same_bytes(tmp_path):
    specs, files = sequence_sources()
    for name, spec in specs.items():
        path = write_spec(tmp_path / name, spec, files)
        _same(*_both(path, tmp_path / name, SMALL_TASKS))


def test_an_image_folder_builds_the_same_bytes(tmp_path):
    spec = shapes_spec(tmp_path)
    # re-encoded images are Pillow's bytes, and Beam 2.77 holds Pillow below 13: the local build
    # runs with the Beam environment's Pillow here, as a real job's workers run with the driver's
    _same(*_both(spec, tmp_path, {"TFRECORD_BUILDER_TASK_BYTES": "4000"}, local_python=BEAM_PYTHON))


@pytest.mark.parametrize("output, manifest", [({"shards": 3}, False), ({"shuffle": False, "shards": 2}, False),
                                              ({"shards": 3}, True)], ids=["shuffled", "source-order", "manifest"])
def test_photos_in_one_copy_on_beam_are_the_usual_local_build_byte_for_byte(tmp_path, output, manifest):
    """Beam runs the keyed plan (a task per shard, each read, encoded and written whole by a worker):
    the same files as the local runner's two-copy build (TFRECORD_BUILDER_ONE_COPY=0), from a
    folder of photos or a manifest naming them."""
    spec = photos_spec(tmp_path, output, manifest=manifest)
    out = tmp_path / "out"
    usual = _cli(sys.executable, "build", str(spec), "--output", str(out), "--workers", "2",
                 env={"TFRECORD_BUILDER_ONE_COPY": "0"})
    assert usual.returncode == 0, usual.stderr
    usual_files = _files(out)
    shutil.rmtree(out)
    beam = _beam("build", str(spec), "--output", str(out), "--workers", "2")
    assert beam.returncode == 0, beam.stderr
    assert beam.stderr == usual.stderr
    _same(usual_files, _files(out))


def test_a_bad_photo_in_one_copy_on_beam_fails_as_the_usual_build_does(tmp_path):
    """A worker that can't encode a shard's file sends the build down the usual pipeline: the same
    one-line error as the local runner's, and no dataset."""
    spec = photos_spec(tmp_path, {"shards": 2}, count=12, bad=5)
    said = [_cli(sys.executable, "build", str(spec), "--output", str(tmp_path / "local"), "--workers", "2"),
            _beam("build", str(spec), "--output", str(tmp_path / "beam"), "--workers", "2")]
    assert [done.returncode for done in said] == [1, 1], said[1].stderr
    assert said[0].stderr.splitlines()[-1].replace("local", "") == said[1].stderr.splitlines()[-1].replace("beam", "")
    left = [sorted(str(path.relative_to(tmp_path / way)) for path in (tmp_path / way).rglob("*")) for way in ("local", "beam")]
    assert left[0] == left[1]  # nothing that looks like a dataset either way (a lock file)


def test_jpegs_re_encoded_to_turn_them_upright_are_the_same_notice_on_both_runners(tmp_path):
    """Counted in each Beam task, added up by the job: one line, as the local runner says it."""
    generator = np.random.default_rng(6)
    for index in range(12):
        exif = Image.Exif()
        exif[0x0112] = 6 if index % 3 else 1
        pixels = generator.integers(0, 255, (16, 24) if index % 3 else (24, 16), dtype=np.uint8)
        (tmp_path / "photos").mkdir(exist_ok=True)
        Image.fromarray(np.stack([pixels] * 3, -1)).save(tmp_path / "photos" / f"{index:02d}.jpg", exif=exif)
    spec = write_spec(tmp_path, {"name": "photos", "source": {"builder": "image_folder", "path": "photos"},
                                 "features": {"image": {"type": "image", "encoding": "jpeg", "shape": [24, 16, 3]}}})
    env = {"TFRECORD_BUILDER_TASK_BYTES": "2000"}  # several tasks
    said = [_cli(sys.executable, "build", str(spec), "--output", str(tmp_path / "local"), env=env),
            _beam("build", str(spec), "--output", str(tmp_path / "beam"), env=env)]
    assert [done.returncode for done in said] == [0, 0], said[1].stderr
    assert said[0].stderr == said[1].stderr == (
        "warning: feature `image`: 8 JPEG files turned upright by the EXIF orientation, so re-encoded at quality 90 "
        "(a second lossy pass) instead of stored byte for byte\n")


def test_a_custom_builder_runs_its_parts_in_beam_worker_processes_from_the_code_sent(tmp_path):
    spec = _parts_spec(tmp_path, 10_000, shuffle=False)
    out = tmp_path / "out"
    local = _cli(sys.executable, "build", str(spec), "--output", str(out))
    assert local.returncode == 0, local.stderr
    local_files = _files(out)
    shutil.rmtree(out)
    (tmp_path / "readers.txt").unlink()
    (tmp_path / "vanish").write_text("")
    command = [str(BEAM_PYTHON), "-m", "tfrecord_builder", "build", str(spec), "--output", str(out),
               "--runner", "beam", "--workers", "2"]
    started = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, stderr = started.communicate(timeout=600)
    assert started.returncode == 0, stderr
    _same(local_files, _files(out))
    readers = (tmp_path / "readers.txt").read_text().split()
    assert len(readers) == 8  # each part read once
    assert str(started.pid) not in readers  # by Beam's workers, not the process that started the job
    assert not (tmp_path / "parts.py").exists()  # they ran the builder's code as the job's process loaded it


@pytest.mark.parametrize("shuffle", [True, False])
def test_a_duplicate_key_is_the_same_error_on_both_runners(tmp_path, shuffle):
    spec = _parts_spec(tmp_path, 377, shuffle=shuffle)
    local = _cli(sys.executable, "build", str(spec), "--output", str(tmp_path / "a"))
    beam = _beam("build", str(spec), "--output", str(tmp_path / "b"))
    assert local.returncode == beam.returncode == 1
    assert beam.stderr == local.stderr
    first = "n0" if not shuffle else "n1"  # shuffled: the first twin in hash order
    assert beam.stderr == f"error: Parts, key '{first}': duplicate key '{first}' (also yielded at Parts, key " \
                          f"'{first}'); expected unique keys\n"
    assert not (tmp_path / "b" / "parts" / "1.0.0").exists()


def test_bad_data_stops_a_beam_build_with_the_local_error(tmp_path):
    spec = _tabular()
    spec["on_error"] = "fail"
    path = write_spec(tmp_path, spec, {"rows.csv": _table(3000, bad=(1500, 2500))})
    local = _cli(sys.executable, "build", str(path), "--output", str(tmp_path / "a"), env=SMALL_TASKS)
    beam = _beam("build", str(path), "--output", str(tmp_path / "b"), env=SMALL_TASKS)
    assert (local.returncode, beam.returncode) == (1, 1)
    assert beam.stderr == local.stderr
    assert "rows.csv, line 1502: feature `y`" in beam.stderr
    assert not (tmp_path / "b" / "rows" / "1.0.0").exists()


def test_a_stratified_table_builds_the_same_bytes_on_beam(table_built, tmp_path):
    """`stratify:` over many tasks, with skipped rows and repeated ones: Beam's first pass (a side
    input of the encoding) divides every class as the local one does (the table's stratified job);
    a bad class label, read in that first pass, is the same error on both."""
    built = table_built("shuffled-stratified-runner-options")
    assert built.beam.stderr == built.local.stderr
    _same(built.local_files, built.beam_files)
    info = json.loads(built.beam_files["rows/1.0.0/tfrecord_builder.json"])
    assert info["spec"]["stratify"] == "label"
    spec = {**_tabular(), "stratify": "label"}
    lines = _table(3000).splitlines()
    lines[2501] = lines[2501].rsplit(",", 1)[0] + ",cow"
    path = write_spec(tmp_path / "bad", {**spec, "on_error": "fail"}, {"rows.csv": "\n".join(lines) + "\n"})
    local = _cli(sys.executable, "build", str(path), "--output", str(tmp_path / "a"), env=SMALL_TASKS)
    beam = _beam("build", str(path), "--output", str(tmp_path / "b"), env=SMALL_TASKS)
    assert (local.returncode, beam.returncode) == (1, 1) and beam.stderr == local.stderr
    assert "rows.csv, line 2502: feature `label`" in beam.stderr


@pytest.mark.parametrize("named, options, message", [
    ("--pipeline-options", "--runner=NoSuchRunner", "error: --pipeline-options: Unexpected pipeline runner: NoSuchRunner."),
    ("--pipeline-options", "--no_such_option=1", "error: --pipeline-options: Beam doesn't know ['--no_such_option=1']"),
    ("--pipeline-options", "--direct_num_workers=two", "error: --pipeline-options: Beam refuses them: argument "
                                                       "--direct_num_workers: invalid int value: 'two'"),
    ("--pipeline-options", "--runner='DirectRunner", "error: --pipeline-options: No closing quotation"),
    ("--runner-option", "runner=NoSuchRunner", "error: --runner-option: Unexpected pipeline runner: NoSuchRunner."),
    ("--runner-option", "no_such_option=1", "error: --runner-option: Beam doesn't know ['--no_such_option=1']"),
    ("--runner-option", "direct_num_workers=two", "error: --runner-option: Beam refuses them: argument "
                                                  "--direct_num_workers: invalid int value: 'two'"),
    ("--runner-option", "=1", "error: --runner-option: expected KEY=VALUE (e.g. runner=DataflowRunner), received '=1'"),
])
def test_options_beam_refuses_are_one_line_and_exit_2(tmp_path, named, options, message):
    """One line, exit 2, naming the option as given: `--runner-option KEY=VALUE` or the old
    `--pipeline-options` (Beam's flags in one argument)."""
    spec = write_spec(tmp_path, _tabular(), {"rows.csv": _table(50)})
    done = _beam("build", str(spec), "--output", str(tmp_path / "out"), named, options)
    assert done.returncode == 2
    assert done.stderr.startswith(message) and done.stderr.count("\n") == 1
    assert not (tmp_path / "out" / "rows" / "1.0.0").exists()


def test_runner_options_are_beams_pipeline_options_without_their_dashes(table_built):
    """`--runner-option KEY=VALUE` is Beam's `--KEY=VALUE`, and KEY alone its flag `--KEY`: the
    DirectRunner so named (with a flag) builds the local runner's bytes (RUNNER_OPTIONS: the
    table's job built so)."""
    built = table_built("shuffled-stratified-runner-options")
    assert TABLE_CASES["shuffled-stratified-runner-options"][3] == RUNNER_OPTIONS
    assert built.beam.returncode == 0, built.beam.stderr
    assert built.beam.stderr == built.local.stderr
    _same(built.local_files, built.beam_files)


def test_without_beam_the_message_names_the_extra(tmp_path):
    pytest.importorskip("tfrecord_builder")
    if subprocess.run([sys.executable, "-c", "import apache_beam"], capture_output=True).returncode == 0:
        pytest.skip("this environment has Beam")
    spec = write_spec(tmp_path, _tabular(), {"rows.csv": _table(50)})
    done = _cli(sys.executable, "build", str(spec), "--output", str(tmp_path / "out"), "--runner", "beam")
    assert (done.returncode, done.stderr) == (2, "error: --runner beam needs Apache Beam: install tfrecord-builder's "
                                                 "`beam` extra (pip install '.[beam]' in a checkout; see "
                                                 "docs/install.md)\n")
    unknown = _cli(sys.executable, "build", str(spec), "--runner", "flink")
    assert unknown.returncode == 2 and "invalid choice: 'flink'" in unknown.stderr
    options = _cli(sys.executable, "build", str(spec), "--pipeline-options", "--runner=DirectRunner")
    assert (options.returncode, options.stderr) == (2, "error: --pipeline-options are Beam's: give them with "
                                                       "--runner beam\n")


def test_a_killed_beam_job_resumes_keeping_its_finished_shards(tmp_path):
    path = big_table(tmp_path)
    out = tmp_path / "out"
    local = _cli(sys.executable, "build", str(path), "--output", str(out), env=SMALL_TASKS)
    assert local.returncode == 0, local.stderr
    expected = _files(out)
    shutil.rmtree(out)
    command = [str(BEAM_PYTHON), "-m", "tfrecord_builder", "build", str(path), "--output", str(out), "--runner", "beam"]
    job = subprocess.Popen(command, cwd=ROOT, env={**os.environ, **SMALL_TASKS}, start_new_session=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    entries = out / "rows" / ".1.0.0.building" / "manifest"
    deadline = time.monotonic() + 300
    while job.poll() is None and time.monotonic() < deadline and not list(entries.glob("*.json")):
        time.sleep(0.005)
    os.killpg(job.pid, signal.SIGKILL)  # the job and every worker, mid-write
    job.wait()
    finished = {entry.name.removesuffix(".json"): (entries.parent / entry.name.removesuffix(".json")).stat().st_mtime_ns
                for entry in entries.glob("*.json")}
    assert 0 < len(finished) < 48 and not (out / "rows" / "1.0.0").exists()
    resumed = _beam("build", str(path), "--output", str(out), "--resume", env=SMALL_TASKS)
    assert resumed.returncode == 0, resumed.stderr
    _same(expected, _files(out))
    for name, written in finished.items():  # kept as they were, not written again
        assert (out / "rows" / "1.0.0" / name).stat().st_mtime_ns == written
