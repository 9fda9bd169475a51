"""The encoding stage: worker processes only for work that outlasts their start-up, and under
`on_error: skip` a bad row costs about its own encoding."""
from __future__ import annotations

import hashlib
import json
import os
import time

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrecord_builder as tb
from tfrecord_builder import processes
from tfrecord_builder.builders.base import Batch
from tfrecord_builder.features.cells import TextCells
from tfrecord_builder.build import encoding

from conftest import write_spec

DEFAULT_SECONDS = encoding.IN_PROCESS_SECONDS  # as imported, before tests/conftest.py's fixture sets 0
DEFAULT_PARALLEL = encoding.PARALLEL_SECONDS
SPEC = {"name": "small", "source": {"builder": "csv", "path": "d.csv"}, "output": {"shards": 2},
        "features": {"id": {"dtype": "int64"}, "word": {"dtype": "string"}}}
ROWS = "id,word\n" + "".join(f"{i},w{i % 7}\n" for i in range(3000))


class _NoPool:
    def __init__(self, *args, **kwargs):
        raise AssertionError("a worker pool was started for a build of a few milliseconds")


def _digests(info):
    return sorted(hashlib.sha256(open(os.path.join(info.path, name), "rb").read()).hexdigest()
                  for split in info.splits.values() for name in split.files)


def test_a_build_within_the_in_process_time_starts_no_workers(tmp_path, monkeypatch):
    """Six batches asked of 2 workers, all encoded before IN_PROCESS_SECONDS (raised so that a
    loaded machine can't stretch them past it): no pool."""
    from tfrecord_builder.features import TensorFeature

    assert 0.05 <= DEFAULT_SECONDS <= 0.5  # about what starting and stopping the pool costs
    monkeypatch.setattr(TensorFeature, "batch_rows", 500)
    monkeypatch.setattr(encoding, "IN_PROCESS_SECONDS", 30.0)
    monkeypatch.setattr(processes, "worker_pool", _NoPool)
    monkeypatch.setattr(processes, "ProcessPoolExecutor", _NoPool)  # (a pool kept for the shards, too)
    spec = write_spec(tmp_path, SPEC, {"d.csv": ROWS})
    in_process = tb.build(spec, output=tmp_path / "a", workers=2)
    assert in_process.splits["train"].num_examples == 3000


def test_workers_started_midway_write_the_same_bytes(tmp_path, monkeypatch):
    """The first batches in the build's process, the rest in workers: the same shards as one process."""
    from tfrecord_builder.features import TensorFeature

    monkeypatch.setattr(TensorFeature, "batch_rows", 100)  # 30 batches
    spec = write_spec(tmp_path, SPEC, {"d.csv": ROWS})
    one = tb.build(spec, output=tmp_path / "one", workers=1)
    monkeypatch.setattr(encoding, "IN_PROCESS_SECONDS", 0.0)  # workers from the second batch on
    two = tb.build(spec, output=tmp_path / "two", workers=2)
    assert _digests(one) == _digests(two) and len(_digests(one)) == 2


def test_the_encodings_workers_write_the_shards_the_same(tmp_path, monkeypatch):
    """Records in the workers' runs, shards written side by side (POOL_BYTES 0): the workers that
    encoded merge the runs into the shards, so a build starts one pool, not two; the same shards
    as writers started for them, and as one process."""
    from tfrecord_builder.build.runners import local
    from tfrecord_builder.features import TensorFeature
    from tfrecord_builder.write import shards

    started = []

    class Counted(processes.ProcessPoolExecutor):
        def __init__(self, *args, **kwargs):
            started.append(args)
            super().__init__(*args, **kwargs)

    def own_pool(*args, **kwargs):  # the shards' writers started for them, as before
        return shards.write_split(*args, **{**kwargs, "pool": None})

    monkeypatch.setattr(TensorFeature, "batch_rows", 100)  # 30 batches
    monkeypatch.setattr(shards, "POOL_BYTES", 0)
    monkeypatch.setattr(processes, "ProcessPoolExecutor", Counted)
    spec = write_spec(tmp_path, SPEC, {"d.csv": ROWS})
    one = tb.build(spec, output=tmp_path / "one", workers=1)
    assert not started
    kept = tb.build(spec, output=tmp_path / "kept", workers=2)
    assert len(started) == 1
    monkeypatch.setattr(local, "write_split", own_pool)
    apart = tb.build(spec, output=tmp_path / "apart", workers=2)
    assert len(started) == 3
    assert _digests(kept) == _digests(apart) == _digests(one) and len(_digests(one)) == 2
    assert kept.statistics == apart.statistics == one.statistics


def _paced(spec, split, batch):
    """A stage for `encode_batches`: a batch is [seconds to take, its index, padding...]."""
    time.sleep(batch[0])  # waiting, as for a file, is work that workers overlap
    return batch[1], os.getpid()


def _paced_batches(first_seconds: float, rows: int, count: int) -> list:
    """A first batch of 10 records taking `first_seconds`, then `count` instant batches of `rows`."""
    return [(None, [first_seconds, 0] + [0] * 8)] + [(None, [0, index] + [0] * (rows - 2)) for index in range(1, count + 1)]


def test_workers_start_only_for_parallel_seconds_of_work_ahead(monkeypatch):
    """After IN_PROCESS_SECONDS, the batches ahead are weighed at the pace so far (here 10 records
    in 50 ms, so PARALLEL_SECONDS = 5 s is about 1,000 records): 30 records left are encoded in
    this process, 2,000 in the workers; either way in source order. A busy machine's slower pace
    only makes the 2,000 more work; the 30 stay below unless the first batch takes 30 times as long."""
    assert 0.2 <= DEFAULT_PARALLEL <= 2  # a few times what the pool costs
    monkeypatch.setattr(encoding, "PARALLEL_SECONDS", 5.0)
    short = list(encoding.encode_batches(None, _paced_batches(0.05, 10, 3), workers=2, stage=_paced))
    assert short == [(index, os.getpid()) for index in range(4)]
    long = list(encoding.encode_batches(None, _paced_batches(0.05, 100, 20), workers=2, stage=_paced))
    assert [index for index, _ in long] == list(range(21))
    assert long[0][1] == os.getpid() and {pid for _, pid in long[1:]} - {os.getpid()}


def test_a_build_with_little_work_left_after_the_in_process_time_starts_no_workers(tmp_path, monkeypatch):
    """Workers asked for, the first batch encoded, and the 29 left hold less than
    PARALLEL_SECONDS of work (raised, so that a loaded machine can't make them more): no pool, and
    the bytes of one process."""
    from tfrecord_builder.features import TensorFeature

    monkeypatch.setattr(TensorFeature, "batch_rows", 100)  # 30 batches
    monkeypatch.setattr(encoding, "PARALLEL_SECONDS", 60.0)
    spec = write_spec(tmp_path, SPEC, {"d.csv": ROWS})
    one = tb.build(spec, output=tmp_path / "one", workers=1)
    monkeypatch.setattr(processes, "worker_pool", _NoPool)
    two = tb.build(spec, output=tmp_path / "two", workers=2)
    assert _digests(one) == _digests(two) and len(_digests(one)) == 2


BAD_ROWS = (3, 4, 900, 1501, 1502, 1503, 1999)  # 7 bad cells in 2,000 rows: neighbours, a run, the last row


def _table(bad: bool):
    """id, x, word: x reads `not-a-number` in the rows BAD_ROWS (`bad`), or those rows are left out."""
    return "id,x,word\n" + "".join(f"{i},{'not-a-number' if i in BAD_ROWS else i / 4},w{i % 7}\n"
                                   for i in range(2000) if bad or i not in BAD_ROWS)


def _records(info):
    """Every record's bytes, sorted (the shards a record lands in depend on its key: its line)."""
    from tfrecord_builder.codec.tfrecord import read_records

    records = []
    for split in info.splits.values():
        for name in split.files:
            with open(os.path.join(info.path, name), "rb") as stream:
                records.extend(read_records(stream, name))
    return sorted(records)


def test_bad_rows_under_skip_cost_their_own_encodings_not_one_per_row(tmp_path, monkeypatch):
    """7 bad cells among 2,000 rows in one batch: each bad row costs a few encodings of the column
    it is bad in (the one its error names, then the rows after it), not an encoding of every row
    alone (2,000 per feature before); the skipped list is what a row-by-row pass gives (each
    row's own error, in row order), and the good rows' records are byte for byte those of the
    table without the bad rows."""
    from tfrecord_builder.features import TensorFeature

    calls = []

    def counted(self, values, *args, **kwargs):
        calls.append((self.name, len(values)))
        return encode(self, values, *args, **kwargs)

    encode = TensorFeature.encode
    monkeypatch.setattr(TensorFeature, "encode", counted)
    spec = {**SPEC, "on_error": "skip", "features": {**SPEC["features"], "x": {"dtype": "float32"}}}
    info = tb.build(write_spec(tmp_path / "bad", spec, {"d.csv": _table(bad=True)}), output=tmp_path / "bad" / "out")
    assert info.splits["train"].num_examples == 2000 - len(BAD_ROWS)
    # id and word: encoded once; x: once whole, then per bad row about 3 times (the rows from it
    # on, the row alone, the rows before it), then the good rows once
    assert [name for name, _ in calls].count("id") == 1 and [name for name, _ in calls].count("word") == 1
    assert len(calls) <= 4 + 3 * len(BAD_ROWS) + 4, calls
    skipped = [json.loads(line) for line in open(os.path.join(info.path, "skipped.jsonl"), encoding="utf-8")]
    assert skipped == [{"record": f"d.csv, line {row + 2}",
                        "reason": f"d.csv, line {row + 2}: feature `x`: expected a number (float32), "
                                  "received 'not-a-number'"} for row in BAD_ROWS]
    monkeypatch.setattr(TensorFeature, "encode", encode)
    clean = tb.build(write_spec(tmp_path / "clean", spec, {"d.csv": _table(bad=False)}),
                     output=tmp_path / "clean" / "out")
    assert _records(info) == _records(clean) and len(_records(clean)) == 2000 - len(BAD_ROWS)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 200).flatmap(lambda rows: st.tuples(st.just(rows), st.sets(st.integers(0, rows - 1)),
                                                           st.sets(st.integers(0, rows - 1)), st.booleans())))
def test_bad_rows_found_feature_by_feature_are_those_encoding_each_row_alone_finds(tmp_path_factory, case):
    """Whatever rows are bad, in one feature or two (none, all, neighbours, the first or last):
    the same rows skipped with the same reasons in the same order, and the same records, as a
    row-by-row pass."""
    rows, bad, bad_ids, arrow = case
    folder = tmp_path_factory.mktemp("spec")
    spec = tb.load_spec(write_spec(folder, {**SPEC, "on_error": "skip",
                                            "features": {**SPEC["features"], "x": {"dtype": "float32"}}}))
    columns = {"id": [f"{i}.5" if i in bad_ids else str(i) for i in range(rows)], "x": ["oops" if i in bad else f"{i}.5" for i in range(rows)],
               "word": [f"w{i}" for i in range(rows)]}
    if arrow:  # as the fast CSV reader gives them
        columns = {name: TextCells(pa.array(values)) for name, values in columns.items()}
    batch = Batch(keys=list(range(rows)), columns=columns, origin=lambda row: f"d.csv, line {row + 2}", language="text")
    good, skipped = [], []
    for row in range(rows):  # the row-by-row pass
        try:
            encoding.encode_batch(spec.features, batch.select([row]))
            good.append(row)
        except tb.DataError as error:
            skipped.append({"record": batch.origin(row), "reason": str(error)})
    result = encoding.encode_for_build(spec, None, batch)
    assert result.skipped == skipped and result.count == len(good)
    if good:
        expected = encoding.encode_batch(spec.features, batch.select(good), framed=True).records
        assert [result.parts["train"].records.row(i) for i in range(len(good))] == \
            [expected.row(i) for i in range(len(good))]
