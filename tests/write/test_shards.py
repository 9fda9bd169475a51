"""How many shards a split gets, and how its records are dealt out: no shard holds one record
where the split has more (the `tfrecord` package's reader fails on a one-record shard's index)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tfrecord_builder as tb
from tfrecord_builder.write.order import count_shards, shard_starts

from conftest import write_spec

TARGET = 1000


@given(st.integers(0, 500), st.integers(1, 64) | st.none(), st.integers(0, 10**6))
def test_every_shard_holds_two_records_where_the_split_has_two(num_examples, asked, num_bytes):
    num_bytes = num_bytes if num_examples else 0
    num_shards = count_shards(num_examples, num_bytes, asked, TARGET)
    counts = np.diff(shard_starts(num_examples, num_shards))
    wanted = asked if asked is not None else max(1, -(-num_bytes // TARGET)) if num_examples else 1
    assert counts.sum() == num_examples
    if num_examples == 0:
        assert num_shards == wanted  # an empty split keeps the shards asked, empty
    elif num_examples == 1:
        assert counts.tolist() == [1]  # one shard of one record: nothing else can hold it
    else:
        assert counts.min() >= 2
        # as many shards as asked, or as many as leave each two records
        assert num_shards == min(wanted, num_examples // 2)


@pytest.mark.parametrize("rows, counts, message", [
    (5, [2, 3], "split train: 2 shards, not the 4 asked, so that no shard holds just one of its 5 records (the "
                "tfrecord package's reader can't read a shard of one record through its index file)"),
    (3, [3], "split train: 1 shard, not the 4 asked, so that no shard holds just one of its 3 records (the "
             "tfrecord package's reader can't read a shard of one record through its index file)"),
    (1, [1], "split train has 1 record: 1 shard, not the 4 asked (the tfrecord package's reader can't read a shard of "
             "one record through its index file)"),
    (8, [2, 2, 2, 2], None),
])
def test_fewer_shards_than_asked_are_said(tmp_path, rows, counts, message):
    data = "x\n" + "".join(f"{row}\n" for row in range(rows))
    spec = write_spec(tmp_path, {"name": "few", "source": {"builder": "csv", "path": "few.csv"},
                                 "splits": {"train": 1.0}, "features": {"x": {"dtype": "int64"}},
                                 "output": {"shards": 4}}, {"few.csv": data})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        info = tb.build(spec, output=tmp_path / "out")
    said = [str(item.message) for item in caught if item.category is tb.BuildWarning]
    assert [shard["num_examples"] for shard in info.splits["train"].shards] == counts
    assert said == ([message] if message else [])
    assert info.warnings == said


class _NoPool:
    def __init__(self, *args, **kwargs):
        raise AssertionError("shard writers were started for a few kilobytes of records")


def test_runs_below_pool_bytes_are_written_by_the_build_process(tmp_path, monkeypatch):
    """Records the workers wrote into runs, a few kilobytes of them (under POOL_BYTES): the
    shards are merged from the runs in the build's process, with the bytes one process writes."""
    from tfrecord_builder.features import TensorFeature
    from tfrecord_builder.write import shards

    monkeypatch.setattr(TensorFeature, "batch_rows", 100)  # 10 batches, 9 of them to the workers (conftest)
    spec = write_spec(tmp_path, {"name": "small", "source": {"builder": "csv", "path": "d.csv"},
                                 "output": {"shards": 3}, "features": {"id": {"dtype": "int64"}}},
                      {"d.csv": "id\n" + "".join(f"{i}\n" for i in range(1000))})
    one = tb.build(spec, output=tmp_path / "one", workers=1)
    monkeypatch.setattr(shards, "worker_pool", _NoPool)
    two = tb.build(spec, output=tmp_path / "two", workers=2)
    assert [shard["sha256"] for shard in two.splits["train"].shards] == \
        [shard["sha256"] for shard in one.splits["train"].shards] and len(one.splits["train"].shards) == 3


@given(st.lists(st.integers(0, 2**63 - 1) | st.integers(0, 10**6), max_size=30))
def test_index_decimals_are_the_numbers_as_str_writes_them(values):
    from tfrecord_builder.write.index import decimals

    column = decimals(np.array(values, np.int64))
    assert column.data[: column.offsets[-1]].tobytes() == "".join(map(str, values)).encode()
    assert np.diff(column.offsets).tolist() == [len(str(value)) for value in values]
