"""An unshuffled pass reads the shards as a hand-written pipeline does (one `TFRecordDataset` of
all of them, or, for large batches of small records, two shards at a time, each whole before the
next; batches cut across them), and still fails by name on a damaged shard, whatever the damage
leaves of the pass's batches; errors that aren't damage keep TensorFlow's own words."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import tfrecord_builder as tb
from tfrecord_builder.read import tfdata

from conftest import batches_as_numpy, import_module, write_spec

# x's width makes the records small (under tfdata.SMALL_RECORD bytes) or large
WIDTHS = {"small records": 2, "large records": 300}


def _rows(width):
    return "".join(f'{{"id": {i}, "x": {[i + j for j in range(width)]}}}\n' for i in range(60))


def _spec(width):
    return {"name": "o", "source": {"builder": "jsonl", "path": "d.jsonl"}, "output": {"shards": 3},
            "features": {"id": {"dtype": "int64"}, "x": {"dtype": "float32", "shape": [width]}}}


@pytest.fixture(scope="module", params=list(WIDTHS))
def built(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp("in_order")
    width = WIDTHS[request.param]
    info = tb.build(write_spec(folder, _spec(width), {"d.jsonl": _rows(width)}), output=folder / "out", workers=1)
    assert _small(info) == (request.param == "small records")
    return info


def _small(info):
    return sum(shard["num_bytes"] for shard in info.splits["train"].shards) <= tfdata.SMALL_RECORD * 60


def _readers(path, module, **options):
    """The two readers' datasets of the dataset at `path`, `module` its generated module."""
    return {"tb.input_fn": tb.input_fn(path, "train", **options),
            "generated module": module.input_fn("train", **options)}


@pytest.fixture
def readers(built, monkeypatch):
    """`readers(path, **options)`: the two readers' datasets of the dataset at `path`. Over small
    records any batch counts as large (LARGE_BATCH 1), so that these tests' batches of 7-64
    records are read two shards at a time; over large records they are read one after another."""
    def make(path, **options):
        module = import_module(Path(path) / "o_input.py")
        if _small(built):
            monkeypatch.setattr(tfdata, "LARGE_BATCH", 1)
            monkeypatch.setattr(module, "LARGE_BATCH", 1)
        return _readers(path, module, **options)
    return make


def _per_shard_ops(tf, dataset):
    """The ops of the functions the pipeline's top-level `flat_map`s and `interleave`s run per
    shard (TFRecordDataset's own of several files is one: a bare record dataset per file)."""
    graph = tf.compat.v1.GraphDef()
    graph.ParseFromString(dataset._as_serialized_graph().numpy())
    functions = {function.signature.name: function for function in graph.library.function}
    return [sorted(node.op for node in functions[node.attr["f"].func.name].node_def)
            for node in graph.node if node.op in ("FlatMapDataset", "InterleaveDataset", "ParallelInterleaveDatasetV4")]


def test_an_unshuffled_pass_reads_each_shard_as_a_hand_written_pipeline_does(tf, built, readers):
    """Large records: one `TFRecordDataset` of all the shards, as a sequential hand-written
    pipeline reads them. Small records: each shard read in batches, two at a time, as a
    hand-written pipeline that interleaves its files does, and its errors dropped. Before: each
    shard read in batches, its errors dropped, a failure concatenated, its batches counted and
    prefetched (a dataset of six stages per shard), the batches then cut again."""
    files = [str(Path(built.path) / name) for name in built.splits["train"].files]
    if not _small(built):
        hand = _per_shard_ops(tf, tf.data.TFRecordDataset(files).batch(7))
    else:
        interleaved = tf.data.Dataset.from_tensor_slices(files).interleave(
            lambda file: tf.data.TFRecordDataset(file).batch(7), cycle_length=2, num_parallel_calls=2)
        hand = [sorted(ops + ["IgnoreErrorsDataset"]) for ops in _per_shard_ops(tf, interleaved)]
    assert len(hand) == 1
    for reader, dataset in readers(built.path, batch_size=7, shuffle=False).items():
        assert _per_shard_ops(tf, dataset) == hand, reader


def test_two_shards_are_read_at_a_time_where_batches_are_large_and_records_small(tf, built):
    """The rule, as both readers apply it: the split's bytes over its records at most
    SMALL_RECORD, and batches of at least LARGE_BATCH records."""
    module = import_module(Path(built.path) / "o_input.py")
    for batch_size in (tfdata.LARGE_BATCH - 1, tfdata.LARGE_BATCH):
        expected = _small(built) and batch_size >= tfdata.LARGE_BATCH
        for reader, dataset in _readers(built.path, module, batch_size=batch_size, shuffle=False).items():
            graph = tf.compat.v1.GraphDef()
            graph.ParseFromString(dataset._as_serialized_graph().numpy())
            interleaved = any(node.op == "ParallelInterleaveDatasetV4" for node in graph.node)
            assert interleaved == expected, (reader, batch_size)
            assert sum(len(batch["id"]) for batch in batches_as_numpy(dataset)) == 60


@pytest.mark.parametrize("batch_size", [7, 50, 60])
def test_batches_are_cut_across_shards_in_order(tf, built, readers, batch_size):
    ids = [int(record["id"]) for record in tb.read(built.path, "train")]
    for reader, dataset in readers(built.path, batch_size=batch_size, shuffle=False).items():
        batches = batches_as_numpy(dataset)
        assert [len(batch["id"]) for batch in batches] == [batch_size] * (60 // batch_size) + (
            [60 % batch_size] if 60 % batch_size else []), reader
        assert [int(i) for batch in batches for i in batch["id"]] == ids, reader


def test_repeated_batches_span_passes(tf, built, readers):
    ids = [int(record["id"]) for record in tb.read(built.path, "train")]
    for reader, dataset in readers(built.path, batch_size=25, shuffle=False, repeat=True).items():
        batches = batches_as_numpy(dataset.take(6))
        assert [int(i) for batch in batches for i in batch["id"]] == ids + ids + ids[:30], reader


def _damaged(built, tmp_path, shard_number, where):
    target = tmp_path / "copy"
    shutil.copytree(built.path, target)
    shard = target / built.splits["train"].files[shard_number]
    damaged = bytearray(shard.read_bytes())
    damaged[where if where >= 0 else len(damaged) + where] ^= 0x01
    shard.write_bytes(bytes(damaged))
    return target, shard


@pytest.mark.parametrize("repeat", [False, True])
@pytest.mark.parametrize("batch_size", [50, 59, 64])
def test_damage_that_leaves_the_pass_its_number_of_batches_still_fails_naming_the_shard(tf, built, readers, tmp_path,
                                                                                      batch_size, repeat):
    """The last record of the last shard: 59 records read of 60, which make as many batches of 50
    or 59 as 60 do (a short last one), or the one batch of 64: the pass is short all the same."""
    target, shard = _damaged(built, tmp_path, 2, -6)  # the last record's data, before its checksum
    message = rf"cannot be read \(corrupt or cut\) in shard\] \[{re.escape(str(shard))}\]"
    for reader, dataset in readers(target, batch_size=batch_size, shuffle=False, repeat=repeat).items():
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            for _ in dataset.take(4):
                pass


def test_a_record_the_spec_cannot_parse_fails_with_tensorflows_words(tf, built, tmp_path):
    """Not damage: the records read whole, so no shard is named, and TensorFlow's parse error stands."""
    target = tmp_path / "copy"
    shutil.copytree(built.path, target)
    module = target / "o_input.py"
    module.write_text(module.read_text().replace("'parse': {'id': ('fixed', 'int64', [])}",
                                                 "'parse': {'id': ('fixed', 'float32', [])}"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Key: id, Index: 0.  Data types don't match"):
        for _ in import_module(module).input_fn("train", batch_size=7, shuffle=False):
            pass
