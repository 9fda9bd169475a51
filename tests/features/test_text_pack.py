"""The spec's `pack: {length: N}` on real text (tests/support/texts.py): every example's ids back
exactly once, in source order, with T5's segment ids and positions; packs within one split;
byte-identical rebuilds; fixed [batch, N] reading through tb.read, both input_fns and TFDS;
and what it refuses."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import tfrecord_builder as tb
from conftest import write_spec
from support.reading import assert_same_files, files_of, read_both
from support.texts import english, english_vocab
from tfrecord_builder import text
from tfrecord_builder.text.pack import unpacked

TEXTS = english()
SENTENCES = [part for line in TEXTS for part in re.split(r"\. |\n", line) if part.strip()]  # many short texts, some long


@pytest.fixture(scope="module")
def vocab(tmp_path_factory) -> Path:
    """A BERT vocab.txt learned from half of the text (`english_vocab`)."""
    return english_vocab(tmp_path_factory.mktemp("vocab"))


def _spec(features: dict, **keys) -> dict:
    return {"name": "packed", "source": {"builder": "jsonl", "path": "rows.jsonl"}, "features": features,
            "pack": {"length": 64}, **keys}


def _rows(texts: list[str], others: list[str] | None = None) -> str:
    return "".join(json.dumps({"text": line, **({"other": others[number]} if others else {})}) + "\n"
                   for number, line in enumerate(texts))


def _build(folder: Path, features: dict, texts: list[str], others: list[str] | None = None, **keys) -> tb.DatasetInfo:
    path = write_spec(folder, _spec(features, **keys), {"rows.jsonl": _rows(texts, others)})
    return tb.build(path, output=folder / "out", overwrite=True)


def _records(info: tb.DatasetInfo, split: str = "train") -> list[dict]:
    return list(tb.read(info.path, split))


def test_every_examples_ids_come_back_once_in_order_with_segments_and_positions(tmp_path, vocab, tf):
    tokenizer = text.load(str(vocab))
    expected = tokenizer.inputs(SENTENCES, max_length=64)  # pack.length is the max_length it gives none
    info = _build(tmp_path, {"text": {"type": "text", "tokenizer": str(vocab)}}, SENTENCES, output={"shuffle": False})
    records = _records(info)
    ids = np.stack([record["text"] for record in records])
    segments = np.stack([record["text_packed_segment_ids"] for record in records])
    positions = np.stack([record["text_packed_positions"] for record in records])
    assert ids.shape == (len(records), 64) and ids.dtype == np.int64
    assert unpacked(ids, segments) == expected.ids  # every example once, in source order
    for row in range(len(records)):
        used = int((segments[row] > 0).sum())
        assert (ids[row, used:] == 0).all() and (segments[row, used:] == 0).all() and (positions[row, used:] == 0).all()
        starts = np.flatnonzero(positions[row, :used] == 0)
        assert segments[row, starts].tolist() == list(range(1, len(starts) + 1))  # 1, 2, 3 ... from the start
        for number, start in enumerate(starts):  # positions count up within each example
            stop = starts[number + 1] if number + 1 < len(starts) else used
            assert positions[row, start:stop].tolist() == list(range(stop - start))
            assert (segments[row, start:stop] == number + 1).all()
        assert records[row]["text_mask"].tolist() == (segments[row] > 0).tolist()
    lengths = [len(example) for example in expected.ids]
    packs, used = [], 64  # greedy: the next example starts a new record only where it doesn't fit
    for size in lengths:
        if used + size > 64:
            packs.append(0)
            used = 0
        used += size
        packs[-1] += 1
    assert [int(segments[row].max()) for row in range(len(records))] == packs
    assert len(records) < len(SENTENCES) / 2  # (short texts: several a record)
    cut = expected.truncated
    assert f"feature `text`: {cut} texts cut to max_length: 64 (truncation: right)" in info.warnings
    figures = info.statistics["train"]["text"]  # the ids before each record's padding
    assert figures["num_values"] == sum(lengths) and figures["max"] < tokenizer.vocab_size
    batches = read_both(info, batch_size=8)  # fixed [batch, 64], the module's equal to tb.input_fn's
    assert all(batch["text"].shape == (len(batch["text"]), 64) for batch in batches)
    np.testing.assert_array_equal(np.concatenate([batch["text"] for batch in batches]), ids)
    np.testing.assert_array_equal(np.concatenate([batch["text_packed_positions"] for batch in batches]), positions)
    assert batches[0]["text_mask"].dtype == bool


def test_two_text_features_pack_together_and_a_pair_keeps_its_segment_ids(tmp_path, vocab):
    tokenizer = text.load(str(vocab))
    inputs, targets = [line[:300] for line in TEXTS[:120]], [line[:80] for line in TEXTS[120:240]]
    features = {"inputs": {"type": "text", "tokenizer": str(vocab), "source": ["text", "other"], "max_length": 48},
                "targets": {"type": "text", "tokenizer": str(vocab), "source": "other", "max_length": 24}}
    info = _build(tmp_path, features, inputs, targets, output={"shuffle": False})
    records = _records(info)
    pairs = tokenizer.inputs(inputs, targets, max_length=48)
    alone = tokenizer.inputs(targets, max_length=24)
    assert unpacked(np.stack([r["inputs"] for r in records]),
                    np.stack([r["inputs_packed_segment_ids"] for r in records])) == pairs.ids
    assert unpacked(np.stack([r["inputs_segment_ids"] for r in records]),
                    np.stack([r["inputs_packed_segment_ids"] for r in records])) == pairs.segments
    assert unpacked(np.stack([r["targets"] for r in records]),
                    np.stack([r["targets_packed_segment_ids"] for r in records])) == alone.ids
    for record in records:  # one numbering of the examples in both features
        assert record["inputs_packed_segment_ids"].max() == record["targets_packed_segment_ids"].max()
        assert record["inputs_mask"].sum() <= 64 and record["targets_mask"].sum() <= 64


def test_packs_keep_to_one_split_and_rebuild_byte_for_byte(tmp_path, vocab):
    keys = {"splits": {"train": 0.5, "test": 0.5}, "output": {"shards": 2}}
    feature = {"text": {"type": "text", "tokenizer": str(vocab), "max_length": 32}}
    path = write_spec(tmp_path, _spec(feature, **keys), {"rows.jsonl": _rows(SENTENCES)})
    one = tb.build(path, output=tmp_path / "out", workers=1)
    first = files_of(one.path)
    assert_same_files(first, files_of(tb.build(path, output=tmp_path / "out", workers=2, overwrite=True).path))
    # the split of each row, from the same rows unpacked (a row's split follows its key, packed or not)
    plain = _spec(feature, **keys)
    del plain["pack"]
    unpacked_info = tb.build(write_spec(tmp_path / "plain", plain, {"rows.jsonl": _rows(SENTENCES)}),
                             output=tmp_path / "plain" / "out")
    for split in ("train", "test"):
        own = sorted(record["text"].tolist() for record in tb.read(unpacked_info.path, split))
        records = _records(one, split)
        found = unpacked(np.stack([r["text"] for r in records]), np.stack([r["text_packed_segment_ids"]
                                                                           for r in records]))
        assert sorted(found) == own  # every example of the split, and none of the other's
    assert one.splits["train"].num_examples > 0 and one.splits["test"].num_examples > 0


def test_tfds_and_verify_read_the_packed_layout(tmp_path, vocab):
    from support.cli import assert_ok, run_cli
    info = _build(tmp_path, {"text": {"type": "text", "tokenizer": str(vocab), "max_length": 40}}, TEXTS[:60])
    result = run_cli("verify", info.path, cwd=tmp_path)
    assert_ok(result)
    assert f"{info.splits['train'].num_examples} records, checksums and every record match the spec" in result.stdout
    tfds = pytest.importorskip("tensorflow_datasets")
    read = list(tfds.as_numpy(tfds.builder_from_directory(info.path).as_dataset(split="train", shuffle_files=False)))
    ours = _records(info)
    assert len(read) == len(ours)
    assert sorted(r["text"].tolist() for r in read) == sorted(r["text"].tolist() for r in ours)
    assert all(r["text_packed_positions"].shape == (64,) for r in read)


def test_an_empty_text_without_special_tokens_is_left_out_counted(tmp_path, vocab):
    lines = ["the module", "", "a function", ""]
    info = _build(tmp_path, {"text": {"type": "text", "tokenizer": str(vocab), "special_tokens": False}}, lines)
    assert "pack: 2 examples of no ids (an empty text without special tokens) left out" in info.warnings
    tokenizer = text.load(str(vocab))
    (record,) = _records(info)
    assert unpacked(record["text"][None], record["text_packed_segment_ids"][None]) == \
        tokenizer.encode(["the module", "a function"])


@pytest.mark.parametrize("features, keys, expected", [
    ({"text": {"type": "text", "tokenizer": "VOCAB"}, "label": {"type": "class_label", "names": ["a", "b"]}}, {},
     "features.label: is not a text, and pack: packs text features only (it would need one value per packed "
     "example); leave it out, or leave pack: out"),
    ({"text": {"type": "text", "tokenizer": "VOCAB", "max_length": 65}}, {},
     "features.text.max_length: 65 is more than pack.length: 64; a text must fit a pack"),
    ({"text": {"type": "text", "tokenizer": "VOCAB", "window": {"tokens": 32}}}, {},
     "features.text.window: a window is a record of its own; pack: packs short texts"),
    ({"text": {"type": "text", "tokenizer": "VOCAB"}}, {"input": {"text": "keras_hub"}},
     "input.text: KerasHub's text models take no packed segment ids"),
    ({"text": {"type": "text", "tokenizer": "VOCAB"}}, {"pack": {"length": 0}},
     "pack.length: expected a positive number of ids, received 0"),
    ({"text": {"type": "text", "tokenizer": "VOCAB"}}, {"pack": {"length": 2}},
     "features.text: pack.length: 2 leaves no room for text: the template adds 2 special ids"),
    ({"text": {"type": "text", "tokenizer": "VOCAB"},
      "other": {"type": "text", "tokenizer": "VOCAB", "key": "text_packed_positions"}}, {},
     "features.other: `text_packed_positions` is where packing stores `text`'s ids' layout"),
])
def test_pack_mistakes_are_one_line_at_their_key(tmp_path, vocab, features, keys, expected):
    features = {name: {key: str(vocab) if value == "VOCAB" else value for key, value in feature.items()}
                for name, feature in features.items()}
    with pytest.raises(tb.SpecError) as error:
        tb.load_spec(write_spec(tmp_path, _spec(features, **keys), {"rows.jsonl": ""}))
    assert expected in str(error.value) and "\n" not in str(error.value)


@pytest.mark.spark
def test_spark_packs_and_windows_as_the_local_runner_does(spark, tmp_path, vocab):
    """Packing happens where each batch is encoded, and windows fan out there: a Spark build (its
    Python workers, their batches: the executors of the run's one session on the cluster,
    support/spark_cluster.py) writes the local bytes."""
    import shutil
    keys = {"splits": {"train": 0.7, "test": 0.3}, "output": {"shards": 2}}
    packed = _spec({"text": {"type": "text", "tokenizer": str(vocab), "max_length": 32}}, **keys)
    windowed = {**_spec({"text": {"type": "text", "tokenizer": str(vocab), "window": {"tokens": 32, "stride": 16}}},
                        **keys), "name": "windowed"}
    del windowed["pack"]
    for number, spec in enumerate((packed, windowed)):
        path = write_spec(tmp_path / str(number), spec, {"rows.jsonl": _rows(SENTENCES[:1500])})
        local = files_of(tb.build(path, output=tmp_path / "out", workers=2).path)
        shutil.rmtree(tmp_path / "out")
        assert_same_files(local, files_of(tb.build(path, output=tmp_path / "out", runner="spark").path))
        shutil.rmtree(tmp_path / "out")
