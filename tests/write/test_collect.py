"""Records beyond the memory budget spill to sorted runs; the merged result is byte-identical."""
from __future__ import annotations

import hashlib
import os

import numpy as np
import pytest

import tfrecord_builder as tb
from tfrecord_builder.codec.bytecolumn import ByteColumn
from tfrecord_builder.features import TensorFeature
from tfrecord_builder.write import collect

from conftest import write_spec

ROWS = "id,w,v\n" + "".join(f"{i},w{i % 13},{i * 0.25} {i}\n" for i in range(3000))


def _digests(info):
    return {name: hashlib.sha256(open(os.path.join(info.path, name), "rb").read()).hexdigest()
            for split in info.splits.values() for name in split.files}


@pytest.mark.parametrize("shuffle", [True, False])
def test_spilled_builds_equal_in_memory_builds(tmp_path, monkeypatch, shuffle):
    spec = {"name": "spill", "source": {"builder": "csv", "path": "d.csv"},
            "splits": {"train": 0.7, "test": 0.3}, "output": {"shards": 3, "shuffle": shuffle},
            "features": {"id": {"dtype": "int64"}, "w": {"dtype": "string"}, "v": {"dtype": "float32", "shape": [2]}}}
    path = write_spec(tmp_path, spec, {"d.csv": ROWS})
    in_memory = tb.build(path, output=tmp_path / "a", workers=1)
    monkeypatch.setattr(collect, "SPILL_BYTES", 2000)  # a run every batch
    monkeypatch.setattr(TensorFeature, "batch_rows", 97)  # many small batches: many runs to merge
    runs = []
    original = collect.SplitRecords._spill
    monkeypatch.setattr(collect.SplitRecords, "_spill", lambda self: (runs.append(1), original(self)))
    spilled = tb.build(path, output=tmp_path / "b", workers=1)
    assert len(runs) > 30
    assert _digests(in_memory) == _digests(spilled)
    assert spilled.statistics["train"]["w"] == in_memory.statistics["train"]["w"]
    assert sorted(os.listdir(tmp_path / "b" / "spill")) == [".1.0.0.lock", "1.0.0"]  # the runs are gone


def test_runs_are_really_written(tmp_path, monkeypatch):
    monkeypatch.setattr(collect, "SPILL_BYTES", 100)
    records = collect.SplitRecords(str(tmp_path / "runs"), shuffle=True)
    for start in range(0, 40, 10):
        rows = [f"record {i}".encode() * 3 for i in range(start, start + 10)]
        hashes = np.array([[hash((i, 1)) & (2**63 - 1), i] for i in range(start, start + 10)], dtype=np.uint64)
        records.add(hashes, ByteColumn.from_rows(rows))
    assert len(records.runs) == 4
    merged = [row for _, chunk in records.ordered() for row in chunk.rows()]
    expected = sorted(range(40), key=lambda i: (hash((i, 1)) & (2**63 - 1), i))
    assert merged == [f"record {i}".encode() * 3 for i in expected]
    records.discard()
    assert not os.listdir(tmp_path / "runs")
