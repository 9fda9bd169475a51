"""Records beyond the memory budget spill to sorted runs; the merged result is byte-identical."""
from __future__ import annotations

import hashlib
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrecord_builder as tb
from tfrecord_builder.codec.bytecolumn import ByteColumn
from tfrecord_builder.errors import DataError
from tfrecord_builder.features import TensorFeature
from tfrecord_builder.build import encoding
from tfrecord_builder.write import collect, merge, runs as run_files
from tfrecord_builder.write.order import shard_starts

from conftest import write_spec

ROWS = "id,w,v\n" + "".join(f"{i},w{i % 13},{i * 0.25} {i}\n" for i in range(3000))


def _digests(info):
    return {name: hashlib.sha256(open(os.path.join(info.path, name), "rb").read()).hexdigest()
            for split in info.splits.values() for name in split.files}


@pytest.mark.parametrize("shuffle,max_runs,workers", [(True, 128, 1), (False, 128, 1), (True, 4, 2), (False, 4, 2)])
def test_spilled_builds_equal_in_memory_builds(tmp_path, monkeypatch, shuffle, max_runs, workers):
    """Many runs, merged into shards as they are or, past MAX_RUNS, first merged into fewer
    (side by side in 2 processes): the same bytes as a build held in memory."""
    spec = {"name": "spill", "source": {"builder": "csv", "path": "d.csv"},
            "splits": {"train": 0.7, "test": 0.3}, "output": {"shards": 3, "shuffle": shuffle},
            "features": {"id": {"dtype": "int64"}, "w": {"dtype": "string"}, "v": {"dtype": "float32", "shape": [2]}}}
    path = write_spec(tmp_path, spec, {"d.csv": ROWS})
    in_memory = tb.build(path, output=tmp_path / "a", workers=1)
    monkeypatch.setattr(collect, "SPILL_BYTES", 2000)  # a run every batch
    monkeypatch.setattr(TensorFeature, "batch_rows", 97)  # many small batches: many runs to merge
    monkeypatch.setattr(encoding, "IN_PROCESS_SECONDS", 0)  # with 2 workers, they write the runs
    runs = []
    original = collect.SplitRecords.combine
    monkeypatch.setattr(collect.SplitRecords, "combine", lambda self, processes=1: (
        self.spill(), runs.append(len(self.runs)), original(self, processes))[-1])
    monkeypatch.setattr(collect, "MAX_RUNS", max_runs)
    combined = []
    pool_map = collect._map
    monkeypatch.setattr(collect, "_map", lambda function, jobs, processes: (
        combined.extend((len(job[0]), processes) for job in jobs), pool_map(function, jobs, processes))[1])
    spilled = tb.build(path, output=tmp_path / "b", workers=workers)
    assert sum(runs) > 30
    assert bool(combined) == (max_runs == 4)
    assert all(2 <= size <= 4 and processes == workers for size, processes in combined)
    assert _digests(in_memory) == _digests(spilled)
    assert spilled.statistics["train"]["w"] == in_memory.statistics["train"]["w"]
    assert sorted(os.listdir(tmp_path / "b" / "spill")) == [".1.0.0.lock", "1.0.0"]  # the runs are gone


def _written(records, shards=1):
    """Every record in the order the shards hold them, through `slices` and `read_slices`, as
    the shard writers read them; and the shards' sizes."""
    plan, _ = records.slices(shard_starts(records.num_examples, shards))
    chunks = [chunk for shard in plan for chunk in merge.read_slices(shard.slices, records._shuffle)]
    return chunks, [shard.count for shard in plan]


def test_runs_are_really_written(tmp_path, monkeypatch):
    monkeypatch.setattr(collect, "SPILL_BYTES", 100)
    records = collect.SplitRecords(str(tmp_path / "runs"), shuffle=True)
    for start in range(0, 40, 10):
        rows = [f"record {i}".encode() * 3 for i in range(start, start + 10)]
        hashes = np.array([[hash((i, 1)) & (2**63 - 1), i] for i in range(start, start + 10)], dtype=np.uint64)
        records.add(hashes, ByteColumn.from_rows(rows))
    assert len(records.runs) == 4
    merged = [row for _, chunk in _written(records)[0] for row in chunk.rows()]
    expected = sorted(range(40), key=lambda i: (hash((i, 1)) & (2**63 - 1), i))
    assert merged == [f"record {i}".encode() * 3 for i in expected]
    records.discard()
    assert not os.listdir(tmp_path / "runs")


def test_records_held_in_memory_stay_there(tmp_path, monkeypatch):
    """Below the spill budget, `combine` writes nothing: the shards are gathered from memory."""
    monkeypatch.setattr(collect, "MAX_RUNS", 2)
    records = collect.SplitRecords(str(tmp_path / "runs"), shuffle=True)
    records.add(np.array([[3, 0], [1, 0]], dtype=np.uint64), ByteColumn.from_rows([b"three", b"one"]))
    assert records.combine() == [] and records.runs == [] and not (tmp_path / "runs").exists()
    assert [row for _, chunk in records.in_memory().chunks(0, 2) for row in chunk.rows()] == [b"one", b"three"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3), st.binary(max_size=40)), min_size=1, max_size=300),
       st.integers(1, 12), st.integers(64, 400), st.integers(1, 9), st.booleans(), st.sampled_from([2, 3, 5, 128]))
def test_the_block_merge_equals_a_stable_sort(tmp_path_factory, items, batches, window, shards, shuffle, max_runs):
    """Records (with hashes drawn from few values: many ties) spilled in several runs, merged
    into fewer runs past `max_runs`, cut into shards by rank and merged shard by shard through
    small windows, come out in hash order (or, without shuffling, in arrival order), every record
    once, the shards as `shard_starts` sizes them, and each run's records given to the shards
    without a gap or an overlap (equal hashes here carry different bytes, which real content keys
    never do), with each shard's first and last key hashes."""
    folder = tmp_path_factory.mktemp("runs")
    saved = collect.SPILL_BYTES, merge.CHUNK_BYTES, run_files.CHUNK_RECORDS, collect.MAX_RUNS
    # small windows of records and of hashes: many blocks, ties across them
    collect.SPILL_BYTES, merge.CHUNK_BYTES, run_files.CHUNK_RECORDS = 0, window, max(1, window // 50)
    collect.MAX_RUNS = max_runs
    try:
        records = collect.SplitRecords(str(folder), shuffle=shuffle)
        size = max(1, len(items) // batches)
        for start in range(0, len(items), size):
            part = items[start : start + size]
            hashes = np.array([[high, low] for high, low, _ in part], dtype=np.uint64).reshape(-1, 2)
            records.add(hashes, ByteColumn.from_rows([data for _, _, data in part]))
        records.spill()
        spilled = list(records.runs)
        replaced = records.combine()
        assert len(records.runs) <= max_runs
        assert sorted(replaced) == sorted(set(spilled) - set(records.runs))  # for the caller to remove
        assert sorted(os.listdir(folder)) == sorted(os.path.basename(run) for run in set(records.runs) | set(spilled))
        chunks, counts = _written(records, shards)
        plan, _ = records.slices(shard_starts(len(items), shards))
    finally:
        collect.SPILL_BYTES, merge.CHUNK_BYTES, run_files.CHUNK_RECORDS, collect.MAX_RUNS = saved
    merged = [(tuple(int(v) for v in h), row) for hashes, chunk in chunks for h, row in zip(hashes, chunk.rows())]
    assert counts == np.diff(shard_starts(len(items), shards)).tolist()
    # each shard's first and last key hashes (what a resumed build keeps a shard by), as written
    ranks = shard_starts(len(items), shards).tolist()
    hexes = [f"{high:016x}{low:016x}" for (high, low), _ in merged]
    assert [(shard.first, shard.last) for shard in plan] == [
        (hexes[low], hexes[high - 1]) if high > low else ("", "") for low, high in zip(ranks, ranks[1:])]
    every = [((high, low), data) for high, low, data in items]
    assert sorted(merged) == sorted(every)  # every record once
    if shuffle:
        assert [h for h, _ in merged] == sorted(h for h, _ in every)  # in hash order
    else:
        assert merged == every  # in arrival order
    for run in records.runs:  # each run's slices, shard after shard, follow each other from 0 to its end
        spans = [(first, stop) for shard in plan for path, first, stop in shard.slices if path == run]
        assert spans[0][0] == 0 and all(a[1] == b[0] for a, b in zip(spans, spans[1:]))


@given(st.integers(2, 20000), st.integers(2, 200))
def test_combined_groups_bring_the_runs_to_the_fan_in(count, fan_in):
    """Groups of 2 to `fan_in` runs next to each other, none shared; merging them leaves at most
    `fan_in` runs, merging the fewest runs that does, or a whole round cuts the runs by `fan_in`."""
    groups = collect._combined_groups(count, fan_in)
    if count <= fan_in:
        assert groups == []
        return
    assert all(2 <= stop - start <= fan_in for start, stop in groups)
    assert all(a[1] <= b[0] for a, b in zip(groups, groups[1:])) and groups[-1][1] <= count
    left = count - sum(stop - start - 1 for start, stop in groups)
    if count - fan_in <= fan_in * (fan_in - 1):
        assert left == fan_in  # exactly: no run merged that didn't need to be
    else:
        assert left == -(-count // fan_in)


@pytest.mark.parametrize("max_runs", [128, 3])
def test_a_duplicate_key_is_named_across_merge_blocks(tmp_path, monkeypatch, max_runs):
    """Found where the twins meet, with both records' labels: carried through runs merged into
    longer ones too."""
    monkeypatch.setattr(collect, "MAX_RUNS", max_runs)
    monkeypatch.setattr(collect, "SPILL_BYTES", 0)
    monkeypatch.setattr(merge, "CHUNK_BYTES", 64)
    monkeypatch.setattr(run_files, "CHUNK_RECORDS", 8)  # the hashes merged 8 a run at a time
    records = collect.SplitRecords(str(tmp_path), shuffle=True)
    for start in range(0, 200, 20):
        keys = list(range(start, start + 20)) + ([77] if start == 180 else [])
        hashes = np.array([[key * 1000, 0] for key in keys], dtype=np.uint64)
        records.add(hashes, ByteColumn.from_rows([b"x" * 30] * len(keys)), [f"f.csv, line {key}\0{key!r}" for key in keys])
    records.combine()
    with pytest.raises(DataError, match=r"^f.csv, line 77: duplicate key 77 \(also yielded at f.csv, line 77\)"):
        records.slices(shard_starts(records.num_examples, 3))


def test_an_exhausted_run_window_lets_go_of_its_records(tmp_path):
    """A merge of many runs holds one window's records at a time: a run read to its end keeps no
    view of the bytes it loaded (a merge of 470 runs once held them all, 2x a shard's size)."""
    path = str(tmp_path / "run")
    rows = [bytes([index]) * 1000 for index in range(50)]
    hashes = np.arange(100, dtype=np.uint64).reshape(50, 2)
    with run_files.RunWriter(path, 50, 50_000, 0) as writer:
        writer.write(hashes, ByteColumn.from_rows(rows), None)
    window = run_files.RunWindow(path)
    window.load(1 << 20)
    loaded = window.records.data
    taken_hashes, records, _ = window.take(50)
    assert window.exhausted and records.rows() == rows and taken_hashes.tolist() == hashes.tolist()
    owners, array = [], window.records.data  # what keeps the window's bytes alive, view by view
    while array is not None:
        owners.append(array)
        array = getattr(array, "base", None)
    assert isinstance(loaded.base, bytes) and not any(owner is loaded.base for owner in owners)
    window.close()
