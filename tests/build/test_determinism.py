"""Same spec and data, same bytes: across builds, row orders and shard settings."""
from __future__ import annotations

import hashlib
import os
import random

import pytest

import tfrecord_builder as tb

from conftest import write_spec

HEADER = "id,value,word\n"
ROWS = [f"{i},{i * 0.5},w{i % 7}\n" for i in range(500)]
SPEC = {
    "name": "det",
    "source": {"builder": "csv", "path": "data.csv"},
    "splits": {"train": 0.7, "validation": 0.2, "test": 0.1},
    "features": {"id": {"dtype": "int64"}, "value": {"dtype": "float32"}, "word": {"dtype": "string"}},
    "output": {"shards": 3},
}


def _digests(path):
    return {name: hashlib.sha256(open(os.path.join(path, name), "rb").read()).hexdigest()
            for name in sorted(os.listdir(path)) if name.startswith("det-")}


def _ids(tf, info, split):
    ids = []
    for name in info.splits[split].files:
        for record in tf.data.TFRecordDataset(os.path.join(info.path, name)):
            ids.append(tf.train.Example.FromString(record.numpy()).features.feature["id"].int64_list.value[0])
    return ids


def test_two_builds_give_byte_identical_shards(tmp_path):
    spec = write_spec(tmp_path, SPEC, {"data.csv": HEADER + "".join(ROWS)})
    first = tb.build(spec, output=tmp_path / "a")
    second = tb.build(spec, output=tmp_path / "b")
    assert _digests(first.path) == _digests(second.path)
    assert len(_digests(first.path)) == 9


@pytest.mark.parametrize("shuffle", [True, False])
def test_one_and_two_workers_write_the_same_bytes_held_or_spilled(tmp_path, monkeypatch, shuffle):
    """Several batches, parsed and encoded in 2 workers (which write their records to runs
    themselves) or in the build's process, kept in memory (shards written by forked processes)
    or spilled to runs and merged: the same shards and the same statistics."""
    from tfrecord_builder.features import TensorFeature
    from tfrecord_builder.write import collect

    monkeypatch.setattr(TensorFeature, "batch_rows", 64)
    spec = write_spec(tmp_path, {**SPEC, "output": {**SPEC["output"], "shuffle": shuffle},
                                 "features": {**SPEC["features"], "tags": {"dtype": "int64", "shape": [None]}}},
                      {"data.csv": "id,value,word,tags\n" + "".join(
                          f"{i},{i * 0.5},w{i % 7},{' '.join(map(str, range(i % 5)))}\n" for i in range(500))})
    results = {}
    for spill in (False, True):
        if spill:
            monkeypatch.setattr(collect, "SPILL_BYTES", 2000)  # a run every few batches
        for workers in (1, 2):
            info = tb.build(spec, output=tmp_path / f"out-{spill}-{workers}", workers=workers)
            results[spill, workers] = (_digests(info.path), info.statistics)
    assert len({str(result) for result in results.values()}) == 1
    assert len(results[False, 1][0]) == 9


def test_held_shards_written_by_forked_processes_or_in_process_are_the_same(tmp_path, monkeypatch):
    """Held records below POOL_BYTES are written by the build's process, above it by forked
    processes side by side: the same shards."""
    from tfrecord_builder.write import shards

    spec = write_spec(tmp_path, SPEC, {"data.csv": HEADER + "".join(ROWS)})
    digests = []
    for pool_bytes in (shards.POOL_BYTES, 0):
        monkeypatch.setattr(shards, "POOL_BYTES", pool_bytes)
        digests.append(_digests(tb.build(spec, output=tmp_path / f"out-{pool_bytes}", workers=2).path))
    assert digests[0] == digests[1] and len(digests[0]) == 9


def test_row_order_changes_nothing(tf, tmp_path):
    shuffled = ROWS[:]
    random.Random(7).shuffle(shuffled)
    first = tb.build(write_spec(tmp_path / "a", SPEC, {"data.csv": HEADER + "".join(ROWS)}), output=tmp_path / "a")
    second = tb.build(write_spec(tmp_path / "b", SPEC, {"data.csv": HEADER + "".join(shuffled)}),
                      output=tmp_path / "b")
    assert _digests(first.path) == _digests(second.path)
    for split in SPEC["splits"]:
        assert _ids(tf, first, split) == _ids(tf, second, split)


def test_fractions_are_respected_and_splits_partition_the_rows(tf, tmp_path):
    info = tb.build(write_spec(tmp_path, SPEC, {"data.csv": HEADER + "".join(ROWS)}), output=tmp_path)
    counts = {split: info.splits[split].num_examples for split in SPEC["splits"]}
    assert sum(counts.values()) == 500
    assert abs(counts["train"] - 350) < 40 and abs(counts["validation"] - 100) < 30
    every = sorted(i for split in SPEC["splits"] for i in _ids(tf, info, split))
    assert every == list(range(500))


def test_a_different_seed_gives_a_different_split_and_order(tf, tmp_path):
    first = tb.build(write_spec(tmp_path / "a", SPEC, {"data.csv": HEADER + "".join(ROWS)}), output=tmp_path / "a")
    other = {**SPEC, "output": {"shards": 3, "seed": 7}}
    second = tb.build(write_spec(tmp_path / "b", other, {"data.csv": HEADER + "".join(ROWS)}), output=tmp_path / "b")
    assert _ids(tf, first, "train") != _ids(tf, second, "train")


def test_shuffle_off_keeps_the_source_order(tf, tmp_path):
    spec = {**SPEC, "splits": {"train": 1.0}, "output": {"shards": 1, "shuffle": False}}
    info = tb.build(write_spec(tmp_path, spec, {"data.csv": HEADER + "".join(ROWS)}), output=tmp_path)
    assert _ids(tf, info, "train") == list(range(500))


def test_shard_size_sets_the_number_of_shards(tmp_path):
    spec = {**SPEC, "splits": {"train": 1.0}, "output": {"shard_size": "4KiB"}}
    info = tb.build(write_spec(tmp_path, spec, {"data.csv": HEADER + "".join(ROWS)}), output=tmp_path)
    split = info.splits["train"]
    record_bytes = sum(os.path.getsize(os.path.join(info.path, name)) for name in split.files)
    assert len(split.shards) == -(-record_bytes // 4096)  # the files' bytes, framing included
    counts = [shard["num_examples"] for shard in split.shards]
    assert max(counts) - min(counts) <= 1 and sum(counts) == 500


def test_per_split_sources(tf, tmp_path):
    spec = {**SPEC, "splits": {"train": {"path": "train.csv"}, "test": {"path": "test.csv"}}}
    files = {"train.csv": HEADER + "".join(ROWS[:400]), "test.csv": HEADER + "".join(ROWS[400:])}
    info = tb.build(write_spec(tmp_path, spec, files), output=tmp_path)
    assert sorted(_ids(tf, info, "test")) == list(range(400, 500))
    assert info.splits["train"].num_examples == 400
