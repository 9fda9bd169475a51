"""`stratify:` end to end: each split's class shares within one record per class, byte-identical
whatever the worker count, with the statistics, skips, dry run and resume of a stratified build."""
from __future__ import annotations

import hashlib
import os
import random

import numpy as np
import pytest

import tfrecord_builder as tb
from tfrecord_builder.features import TensorFeature
from tfrecord_builder.build import encoding
from tfrecord_builder.write import checkpoint

from conftest import import_module, write_spec

SPEC = {"name": "imbalanced", "source": {"builder": "csv", "path": "d.csv", "key": "id"},
        "features": {"x": {"dtype": "float32"}, "y": {"type": "class_label", "names": ["a", "b", "c"]}},
        "splits": {"train": 0.8, "test": 0.2}, "stratify": "y", "label": "y", "output": {"shards": 2}}
COUNTS = {"a": 500, "b": 90, "c": 10}


def _rows(counts: dict[str, int] = COUNTS, bad: int = 0, tag: str = "") -> str:
    """A shuffled table of `counts` records per class; every `bad`-th has an x that isn't a number."""
    rows = [(f"{tag}{label}{i}", label) for label, count in counts.items() for i in range(count)]
    random.Random(7).shuffle(rows)
    return "id,x,y\n" + "".join(f"{key},{'oops' if bad and n % bad == 0 else n / 7},{label}\n"
                                for n, (key, label) in enumerate(rows))


def _classes(info, split: str) -> list[int]:
    labels = np.concatenate([np.atleast_1d(record["y"]) for record in tb.read(info.path, split=split)])
    return np.bincount(labels, minlength=3).tolist()


def _digests(info) -> list[str]:
    return [hashlib.sha256(open(os.path.join(info.path, name), "rb").read()).hexdigest()
            for split in info.splits.values() for name in split.files]


def test_each_split_holds_its_share_of_every_class(tmp_path, monkeypatch):
    monkeypatch.setattr(TensorFeature, "batch_rows", 100)  # 6 batches: the workers see some each
    spec = write_spec(tmp_path, SPEC, {"d.csv": _rows()})
    one = tb.build(spec, output=tmp_path / "one", workers=1)
    assert _classes(one, "test") == [100, 18, 2] and _classes(one, "train") == [400, 72, 8]
    assert one.statistics["test"]["y"]["classes"] == {"a": 100, "b": 18, "c": 2}
    assert one.statistics["train"]["y"]["classes"] == {"a": 400, "b": 72, "c": 8}
    assert (one.splits["train"].num_examples, one.splits["test"].num_examples) == (480, 120)
    again = tb.build(spec, output=tmp_path / "again", workers=1)
    two = tb.build(spec, output=tmp_path / "two", workers=2)  # tests/conftest.py: workers from the first batch
    assert _digests(one) == _digests(again) == _digests(two) and len(_digests(one)) == 4
    assert one.statistics == two.statistics
    assert tb.load(one.path).info.spec.stratify == "y"


def test_unstratified_the_same_table_misses_the_shares(tmp_path):
    """What the test above would find without `stratify:` (the item's failing case)."""
    spec = write_spec(tmp_path, {key: value for key, value in SPEC.items() if key != "stratify"}, {"d.csv": _rows()})
    assert _classes(tb.build(spec, output=tmp_path / "out", workers=1), "test") != [100, 18, 2]


def test_shares_are_of_the_records_kept_when_some_are_skipped(tmp_path, monkeypatch):
    """Under on_error: skip the first pass encodes every feature: the skipped records take no share."""
    monkeypatch.setattr(TensorFeature, "batch_rows", 100)
    spec = write_spec(tmp_path, {**SPEC, "on_error": "skip"}, {"d.csv": _rows(bad=9)})
    info = tb.build(spec, output=tmp_path / "one", workers=1)
    kept = {"a": 0, "b": 0, "c": 0}
    for n, line in enumerate(_rows(bad=9).splitlines()[1:]):
        if n % 9:
            kept[line.rsplit(",", 1)[1]] += 1
    assert info.skipped == 600 - sum(kept.values())
    test = _classes(info, "test")
    for made, count in zip(test, kept.values()):
        assert abs(made - 0.2 * count) <= 0.5 + 1e-9, (test, kept)
    two = tb.build(spec, output=tmp_path / "two", workers=2)
    assert _digests(info) == _digests(two) and info.skipped == two.skipped


def test_a_dry_run_counts_the_stratified_splits(tmp_path):
    spec = write_spec(tmp_path, SPEC, {"d.csv": _rows()})
    plan = tb.dry_run(spec, sample=50)
    assert (plan.splits["train"].num_examples, plan.splits["test"].num_examples) == (480, 120)


class _Killed(BaseException):
    pass


def _interrupted(spec, output, monkeypatch, after: int) -> None:
    """A build stopped after encoding `after` batches, with a checkpoint of them (as a killed one leaves)."""
    monkeypatch.setattr(checkpoint, "INTERVAL", 0.0)
    original, calls = encoding.encode_batch, []

    def stopping(*args, **kwargs):
        calls.append(1)
        if len(calls) > after:
            raise _Killed
        return original(*args, **kwargs)

    monkeypatch.setattr(encoding, "encode_batch", stopping)
    with pytest.raises(_Killed):
        tb.build(spec, output=output, workers=1)
    monkeypatch.setattr(encoding, "encode_batch", original)
    assert (output / "imbalanced" / ".1.0.0.building" / checkpoint.CHECKPOINT_FILE).exists()


def test_a_resumed_stratified_build_is_byte_identical(tmp_path, monkeypatch):
    monkeypatch.setattr(TensorFeature, "batch_rows", 100)
    spec = write_spec(tmp_path, SPEC, {"d.csv": _rows()})
    reference = tb.build(spec, output=tmp_path / "reference", workers=1)
    # the first pass encodes the label of the 6 batches, then the build encodes 3 before it stops
    _interrupted(spec, tmp_path / "out", monkeypatch, after=6 + 3)
    resumed = tb.build(spec, output=tmp_path / "out", resume=True, workers=1)
    assert resumed.to_dict()["splits"] == reference.to_dict()["splits"]
    assert resumed.statistics == reference.statistics


def test_a_checkpoint_of_other_strata_is_dropped(tmp_path, monkeypatch):
    """Rows appended after the checkpoint's batches leave their keys as they were, but not the
    classes' cuts: the checkpointed records were divided by other strata, so the build starts over."""
    monkeypatch.setattr(TensorFeature, "batch_rows", 100)
    spec = write_spec(tmp_path, SPEC, {"d.csv": _rows()})
    _interrupted(spec, tmp_path / "out", monkeypatch, after=6 + 3)
    grown = _rows() + _rows({"b": 40, "c": 20}, tag="new").split("\n", 1)[1]
    (tmp_path / "d.csv").write_text(grown)
    resumed = tb.build(spec, output=tmp_path / "out", resume=True, workers=1)
    fresh = tb.build(spec, output=tmp_path / "fresh", workers=1)
    assert resumed.to_dict()["splits"] == fresh.to_dict()["splits"]
    assert _classes(resumed, "test") == [100, 26, 6]


def test_a_missing_label_counts_in_its_default_class(tmp_path):
    """No stratum of missing labels: a record without one is stored, and stratified, as its default."""
    spec = {**SPEC, "features": {**SPEC["features"], "y": {"type": "class_label", "names": ["a", "b", "c"],
                                                          "default": "c"}}}
    table = _rows().replace(",c\n", ",\n")  # the 10 records of class c give no label
    info = tb.build(write_spec(tmp_path, spec, {"d.csv": table}), output=tmp_path / "out", workers=1)
    assert _classes(info, "test") == [100, 18, 2]
    assert info.statistics["test"]["y"]["num_missing"] == 2


def test_the_first_pass_shows_as_its_own_phase(tmp_path):
    seen: list[tuple[str, int, int | None]] = []
    spec = write_spec(tmp_path, SPEC, {"d.csv": _rows()})
    tb.build(spec, output=tmp_path / "out", workers=1, progress=lambda *args: seen.append(args))
    phases = [phase for phase, _, _ in seen]
    assert phases.index("encoding") > max(i for i, phase in enumerate(phases) if phase == "stratifying")
    assert [args for args in seen if args[0] == "stratifying"][-1][1] == 600


def test_the_generated_module_reads_the_stratified_splits(tmp_path, tf):
    spec = write_spec(tmp_path, SPEC, {"d.csv": _rows()})
    info = tb.build(spec, output=tmp_path / "out", workers=1)
    module = import_module(os.path.join(info.path, "imbalanced_input.py"))
    labels = np.concatenate([label.numpy() for _, label in module.input_fn("test", batch_size=64, shuffle=False)])
    assert np.bincount(labels, minlength=3).tolist() == [100, 18, 2]
