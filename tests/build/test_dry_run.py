"""`build --dry-run`: a plan from a sample through the build's own path, checked against the real
build (sizes within 10%, shard counts exact), that writes nothing and catches a spec that builds
but reads back wrong."""
from __future__ import annotations

import json
import random

import pytest

import tfrecord_builder as tb
from tfrecord_builder.build.dry_run import dry_run

from support.cli import assert_ok, run_cli, show
from conftest import ROOT, write_spec


def _table(rows: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    lines = ["id,x,words,kind"]
    for i in range(rows):
        words = " ".join(rng.choice(["ab", "cde", "fghij"]) for _ in range(rng.randint(0, 6)))
        lines.append(f"{i},{rng.gauss(0, 1):.6f},{words},{rng.choice('abc')}")
    return "\n".join(lines) + "\n"


def _compare(plan, info):
    for name, split in info.splits.items():
        predicted = plan.splits[name]
        assert predicted.num_examples == split.num_examples, name
        assert predicted.num_shards == len(split.shards), name  # exact
        assert abs(predicted.num_bytes - split.num_bytes) <= 0.10 * split.num_bytes, (name, predicted, split.num_bytes)


@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_a_sample_predicts_the_table_build(tmp_path, compression):
    spec = write_spec(tmp_path, {
        "name": "t", "source": {"builder": "csv", "path": "t.csv"}, "splits": {"train": 0.7, "test": 0.3},
        "features": {"id": {"dtype": "int64"}, "x": {"dtype": "float32"},
                     "words": {"dtype": "string", "shape": [None]},
                     "kind": {"type": "class_label", "names": ["a", "b", "c"]}},
        "output": {"dir": "out", "shard_size": "64KiB", "compression": compression}}, {"t.csv": _table(20_000)})
    plan = dry_run(str(spec), sample=500)
    assert not (tmp_path / "out").exists()  # nothing written
    assert plan.num_sampled == 1000 and plan.findings == []
    info = tb.build(str(spec))
    _compare(plan, info)
    assert sum(split.num_shards for split in plan.splits.values()) > 4  # the size decided the count


def test_a_sample_predicts_image_and_sequence_builds(tmp_path):
    for name in ("digits", "japanese_vowels"):
        plan = dry_run(str(ROOT / "specs" / f"{name}.yaml"), sample=60)
        assert plan.findings == [], plan.findings
        _compare(plan, tb.build(str(ROOT / "specs" / f"{name}.yaml"), output=str(tmp_path)))


@pytest.mark.slow
def test_the_command_prints_the_plan_and_writes_nothing(tmp_path):
    spec = write_spec(tmp_path, {
        "name": "t", "source": {"builder": "csv", "path": "t.csv"},
        "features": {"x": {"dtype": "float32"}, "kind": {"type": "class_label", "names": ["a", "b", "c"]}},
        "output": {"dir": "out", "shards": 3}}, {"t.csv": _table(3000)})
    result = run_cli("build", spec, "--dry-run", "200", cwd=tmp_path)
    assert_ok(result)
    lines = result.stdout.splitlines()
    assert lines[0] == "t 1.0.0: dry run, the first 200 records of each split encoded (200 of 3,000); nothing written"
    assert lines[1].split() == ["split", "examples", "shards", "shard", "size", "size", "record", "size"]
    assert lines[2].split()[:3] == ["train", "3,000", "3"]
    assert lines[3].startswith("predicted: ") and " in 3 shards, about " in lines[3] and "peak memory about " in lines[3]
    assert lines[4] == "read back with the generated module: 200 records parsed and decoded"
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_spec_that_builds_but_reads_back_wrong_exits_1(tmp_path):
    """One class in every record (the wrong column for the label), a feature the source never
    gives (a misspelt key, hidden by its default) and a value that never changes."""
    records = [{"id": i, "label": "cat", "kind": "abc"[i % 3], "weight": 1.0, "size": i % 7} for i in range(300)]
    spec = write_spec(tmp_path, {
        "name": "j", "source": {"builder": "jsonl", "path": "j.jsonl"},
        "features": {"label": {"type": "class_label", "names": ["cat", "dog"]},
                     "kind": {"type": "class_label", "names": ["a", "b", "c"]},
                     "weigth": {"dtype": "float32", "default": 1.0},
                     "weight": {"dtype": "float32"}, "size": {"dtype": "int64"}},
        "label": "label", "output": {"dir": "out"}},
        {"j.jsonl": "".join(json.dumps(record) + "\n" for record in records)})
    result = run_cli("build", spec, "--dry-run", cwd=tmp_path)
    assert result.returncode == 1, show(result)
    assert result.stderr.splitlines() == [
        "warning: feature `label`: one class ('cat') in all 300 records sampled; expected several "
        "(a sorted source? sample more with --dry-run N)",
        "warning: feature `weigth`: the source has no value for it in all 300 records sampled, so it is "
        "always its default: is `source: weigth` the column meant?",
        "warning: feature `weight`: the same value (1) in all 300 records sampled",
    ]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("args, line", [
    (["--dry-run", "0"], "error: tfrecord-builder build: argument --dry-run: expected a positive integer, received '0'"),
    (["--dry-run", "--overwrite"], "error: --dry-run writes nothing: give it without --resume, --overwrite, "
                                   "--module, --pipeline-options and --keep-splits"),
])
def test_dry_run_usage_errors(tmp_path, args, line):
    spec = write_spec(tmp_path, {"name": "t", "source": {"builder": "csv", "path": "t.csv"},
                                 "features": {"x": {"dtype": "float32"}}}, {"t.csv": _table(10)})
    result = run_cli("build", spec, *args, cwd=tmp_path)
    assert result.returncode == 2, show(result)
    assert result.stderr.strip().startswith(line.split(" (see")[0]), show(result)
