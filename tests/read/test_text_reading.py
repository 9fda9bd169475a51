"""A text feature read beyond its padded ids, on real text (tests/support/texts.py): the
masked-language-model view (`input.mlm`: masks drawn at read time, never on special ids or
padding, at the asked rates within binomial bounds, the same for the same seed and each epoch its
own, what KerasHub's BertMaskedLM fits on, the same in the generated module) and batches of texts
of similar length (`input.bucket_boundaries` on a `format: example` spec)."""
from __future__ import annotations

import collections
import json
import math
from pathlib import Path

import numpy as np
import pytest

import tfrecord_builder as tb
from conftest import batches_as_numpy, import_module, write_spec
from support.texts import english
from tfrecord_builder import text

TEXTS = english()


@pytest.fixture(scope="module")
def vocab_bytes() -> bytes:
    """A small BERT vocab.txt (800 WordPiece ids with [PAD] [UNK] [CLS] [SEP] [MASK]) learned from the text."""
    counts = collections.Counter(word for line in TEXTS for word in text.words(line))
    return text.learn(counts, "wordpiece", 800).data


def _build(folder: Path, vocab: bytes, input_options: dict, count: int = 400, pair: bool = True,
           label: bool = False, **feature) -> tb.DatasetInfo:
    """`count` records of a text (or a pair of texts) of up to 48 ids, and a label when asked."""
    lines = (TEXTS * 4)[:2 * count]
    rows = "".join(json.dumps({"id": number, "text": lines[number], "other": lines[-number - 1], "label": number % 2})
                   + "\n" for number in range(count))
    features = {"id": {"dtype": "int64"},
                "text": {"type": "text", "tokenizer": "vocab.txt", "max_length": 48,
                         **({"source": ["text", "other"]} if pair else {}), **feature}}
    if label:
        features["label"] = {"type": "class_label", "names": ["a", "b"]}
    path = write_spec(folder, {"name": "texts", "source": {"builder": "jsonl", "path": "rows.jsonl"},
                               "features": features, **({"label": "label"} if label else {}),
                               "input": input_options, "output": {"dir": "out"}},
                      {"rows.jsonl": rows, "vocab.txt": vocab})
    return tb.build(path, overwrite=True)


def _epochs(dataset, count: int) -> list[list]:
    """`count` passes over a dataset, each a list of its batches as NumPy."""
    return [batches_as_numpy(dataset) for _ in range(count)]


def test_masks_are_drawn_at_the_rates_and_never_on_special_ids_or_padding(tmp_path, vocab_bytes, tf):
    """Over 3 epochs of 400 pairs ([CLS] a [SEP] b [SEP]): every picked place holds a text's id
    (never [CLS], [SEP], [PAD]) and its target is the stored id; the share of ids picked is the
    rate, and of the picked the shares masked, replaced and kept are 80/10/10, each within 4.5
    standard deviations of its binomial; a replacement is never a special id; nothing else
    changes."""
    info = _build(tmp_path, vocab_bytes, {"text": "keras_hub", "batch_size": 16,
                                          "mlm": {"max_predictions": 48, "seed": 7}})
    recorded = info.spec.features["text"].recorded
    special, mask_id = set(recorded.special_ids), recorded.mask_id
    assert {0, 2, 3, 4} <= special and recorded.unk_id not in special and mask_id == 4
    records = list(tb.read(info.path, "train"))
    eligible = picked = masked = replaced = kept = 0
    for epoch in _epochs(tb.input_fn(info.path, "train", shuffle=False), 3):
        start = 0
        for inputs, targets, weights in epoch:
            assert sorted(inputs) == ["mask_positions", "padding_mask", "segment_ids", "token_ids"]
            assert inputs["mask_positions"].shape == targets.shape == weights.shape == (len(targets), 48)
            assert weights.dtype == np.float32 and targets.dtype == inputs["token_ids"].dtype == np.int64
            for row in range(len(targets)):
                stored = records[start + row]["text"]
                ids = inputs["token_ids"][row]
                length = len(stored)
                count = int(weights[row].sum())
                positions = inputs["mask_positions"][row][:count]
                assert weights[row][:count].tolist() == [1.0] * count and not weights[row][count:].any()
                assert not inputs["mask_positions"][row][count:].any() and not targets[row][count:].any()
                assert positions.tolist() == sorted(set(positions.tolist()))  # ascending, each once
                assert all(position < length and stored[position] not in special for position in positions)
                assert targets[row][:count].tolist() == stored[positions].tolist()
                unpicked = np.ones(len(ids), bool)
                unpicked[positions] = False
                assert ids[:length][unpicked[:length]].tolist() == stored[unpicked[:length]].tolist()
                assert not ids[length:].any() and inputs["padding_mask"][row].sum() == length
                assert inputs["segment_ids"][row][:length].tolist() == records[start + row]["text_segment_ids"].tolist()
                now = ids[positions]
                assert not (set(now[now != mask_id].tolist()) & special)
                eligible += sum(1 for number in stored if number not in special)
                picked += count
                masked += int((now == mask_id).sum())
                kept += int((now == stored[positions]).sum())
                replaced += int(((now != mask_id) & (now != stored[positions])).sum())
            start += len(targets)
        assert start == len(records)

    def within(found: int, trials: int, share: float) -> bool:
        return abs(found - trials * share) <= 4.5 * math.sqrt(trials * share * (1 - share))

    others = recorded.vocab_size - len(special)  # a replacement may draw the id that was there: then kept
    print(f"{picked} of {eligible} ids picked; {masked} masked, {replaced} replaced, {kept} kept")
    assert eligible > 30_000 and within(picked, eligible, 0.15)
    assert within(masked, picked, 0.8) and within(replaced, picked, 0.1 * (1 - 1 / others))
    assert masked + replaced + kept == picked


def test_the_same_seed_gives_the_same_masks_and_each_epoch_its_own(tmp_path, vocab_bytes, tf):
    """Two pipelines of one seed (the library's and the generated module's) mask each epoch alike;
    a second epoch, a repeated pass and another seed mask differently; the ids masked are the
    same records' either way."""
    info = _build(tmp_path, vocab_bytes, {"text": "keras_hub", "batch_size": 32, "mlm": {"seed": 1}}, count=128)
    module = import_module(Path(info.path) / "texts_input.py")
    ours = _epochs(tb.input_fn(info.path, "train", shuffle=False), 2)
    generated = _epochs(module.input_fn("train", shuffle=False), 2)

    def positions(epoch: list) -> list:
        return [inputs["mask_positions"].tolist() for inputs, _, _ in epoch]

    def ids(epoch: list) -> list:
        return [inputs["token_ids"].tolist() for inputs, _, _ in epoch]

    assert positions(ours[0]) == positions(generated[0]) and ids(ours[0]) == ids(generated[0])
    assert positions(ours[1]) == positions(generated[1])
    assert positions(ours[0]) != positions(ours[1])
    repeated = batches_as_numpy(tb.input_fn(info.path, "train", shuffle=False, repeat=True).take(8))
    assert positions(repeated[:4]) == positions(ours[0]) and positions(repeated[4:]) != positions(ours[0])
    other = tmp_path / "other.yaml"  # the same dataset read with another seed: a module of its own
    other.write_text((tmp_path / "spec.yaml").read_text().replace("seed: 1", "seed: 2"))
    (tmp_path / "other").mkdir()
    tb.generate_module(other, tmp_path / "other" / "texts_input.py", data_dir=info.path)
    reseeded = import_module(tmp_path / "other" / "texts_input.py").input_fn("train", shuffle=False)
    assert positions(batches_as_numpy(reseeded)) != positions(ours[0])


def test_the_padded_view_adds_berts_masked_lm_keys_capped_at_max_predictions(tmp_path, vocab_bytes, tf):
    """`input.text: padded`: the ids masked in place, beside them BERT's (and Model Garden's)
    masked_lm_positions, masked_lm_ids and masked_lm_weights, at most max_predictions a text; the
    label stays the label."""
    info = _build(tmp_path, vocab_bytes, {"batch_size": 50, "mlm": {"rate": 0.5, "max_predictions": 3}},
                  count=100, pair=False, label=True)
    records = list(tb.read(info.path, "train"))
    features, label = batches_as_numpy(tb.input_fn(info.path, "train", shuffle=False))[0]
    assert sorted(features) == ["id", "masked_lm_ids", "masked_lm_positions", "masked_lm_weights", "text", "text_mask"]
    assert label.tolist() == [record["label"] for record in records[:50]]
    assert features["masked_lm_positions"].shape == (50, 3) and features["masked_lm_weights"].dtype == np.float32
    picked = features["masked_lm_weights"].sum(axis=1)
    assert picked.max() == 3 and (picked == 3).sum() > 40  # half of 10 ids or more: 3 nearly always
    for row, record in enumerate(records[:50]):
        positions = features["masked_lm_positions"][row][:int(picked[row])]
        assert features["masked_lm_ids"][row][:len(positions)].tolist() == record["text"][positions].tolist()
        changed = np.flatnonzero(features["text"][row][:len(record["text"])] != record["text"])
        assert set(changed.tolist()) <= set(positions.tolist())


@pytest.mark.slow
def test_a_keras_hub_bert_masked_lm_trains_on_the_view(tmp_path, vocab_bytes, tf):
    """`BertMaskedLM(backbone, preprocessor=None)` fits on `input: {text: keras_hub, mlm: ...}` as
    it is: its loss goes down over a few epochs, each masked anew."""
    keras_hub = pytest.importorskip("keras_hub")
    import keras
    info = _build(tmp_path, vocab_bytes, {"text": "keras_hub", "batch_size": 32, "mlm": {"seed": 0}}, count=320)
    keras.utils.set_random_seed(0)
    backbone = keras_hub.models.BertBackbone(vocabulary_size=info.spec.features["text"].recorded.vocab_size,
                                             num_layers=1, num_heads=2, hidden_dim=32, intermediate_dim=64,
                                             max_sequence_length=48)
    model = keras_hub.models.BertMaskedLM(backbone=backbone, preprocessor=None)
    model.compile(optimizer=keras.optimizers.Adam(3e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), weighted_metrics=["accuracy"])
    before, _ = model.evaluate(tb.input_fn(info.path, "train"), verbose=0)
    history = model.fit(tb.input_fn(info.path, "train"), epochs=5, verbose=0)
    after, accuracy = model.evaluate(tb.input_fn(info.path, "train"), verbose=0)
    losses = history.history["loss"]
    print(f"loss {before:.3f} untrained, by epoch {[round(loss, 3) for loss in losses]}, {after:.3f} after "
          f"(accuracy on masked ids {accuracy:.3f})")
    assert after < before * 0.85 and min(losses[1:]) < losses[0]


@pytest.mark.parametrize("change, expected", [
    ({"vocab": "no mask"}, r"input\.mlm: feature `text`'s tokenizer vocab\.txt has no mask token \(\[MASK\], <mask>\); "
                           r"expected one to mask tokens with$"),
    ({"mlm": {"mask_token_rate": 0.8, "random_token_rate": 0.3}},
     r"input\.mlm\.random_token_rate: mask_token_rate \+ random_token_rate is 1\.1; expected at most 1 \(the rest "
     r"of the picked tokens stay as they are\)$"),
    ({"mlm": {"rate": 0}}, r"input\.mlm\.rate: expected a share more than 0 and at most 1, received 0\.0$"),
    ({"mlm": {"max_predictions": 0}}, r"input\.mlm\.max_predictions: expected a positive integer, received 0$"),
    ({"second": True}, r"input\.mlm: masks the one text feature of a format: example spec; the spec has `text`, "
                       r"`title`$"),
    ({"clash": True}, r"input\.mlm: adds `masked_lm_ids` beside the ids, already a feature's name; rename it$"),
    ({"second": True, "mlm": None, "bucket_boundaries": [8, 16]},
     r"input\.bucket_boundaries: batches records by the length of one text, and the spec has 2: `text`, `title`$"),
])
def test_spec_refusals_say_what_in_one_line(tmp_path, vocab_bytes, change, expected):
    vocab = vocab_bytes.replace(b"[MASK]\n", b"[unused]\n") if change.get("vocab") else vocab_bytes
    features = {"text": {"type": "text", "tokenizer": "vocab.txt"}}
    if change.get("second"):
        features["title"] = {"type": "text", "tokenizer": "vocab.txt"}
    if change.get("clash"):
        features["masked_lm_ids"] = {"dtype": "int64"}
    options = {"mlm": change.get("mlm", {})} if change.get("mlm", {}) is not None else {}
    if "bucket_boundaries" in change:
        options["bucket_boundaries"] = change["bucket_boundaries"]
    path = write_spec(tmp_path, {"name": "texts", "source": {"builder": "jsonl", "path": "rows.jsonl"},
                                 "features": features, "input": options},
                      {"rows.jsonl": "", "vocab.txt": vocab})
    with pytest.raises(tb.SpecError) as raised:
        tb.load_spec(path)
    assert "\n" not in str(raised.value)
    assert raised.match(r"^.*spec\.yaml, line \d+: " + expected)


def test_texts_are_batched_by_length_each_batch_padded_to_its_own_longest(tmp_path, vocab_bytes, tf):
    """`input.bucket_boundaries` on a `format: example` spec: each batch holds texts of one bucket
    (lengths in [8, 16), [16, 32), ...) and is as wide as its longest; every record comes once, in
    the generated module as in tb.input_fn."""
    boundaries = [8, 16, 32]
    info = _build(tmp_path, vocab_bytes, {"batch_size": 8, "bucket_boundaries": boundaries}, count=200, pair=False)
    lengths = {int(record["id"]): len(record["text"]) for record in tb.read(info.path, "train")}
    assert len({sum(1 for bound in boundaries if bound <= length) for length in lengths.values()}) >= 3
    module = import_module(Path(info.path) / "texts_input.py")
    for dataset in (tb.input_fn(info.path, "train"), module.input_fn("train")):
        seen = []
        for batch in batches_as_numpy(dataset):
            found = [lengths[int(number)] for number in batch["id"]]
            assert batch["text"].shape[1] == max(found) == batch["text_mask"].shape[1]
            assert len({sum(1 for bound in boundaries if bound <= length) for length in found}) == 1, found
            assert batch["text_mask"].sum(axis=1).tolist() == found
            seen += batch["id"].tolist()
        assert sorted(seen) == sorted(lengths)


def test_a_recorded_tokenizer_without_special_ids_and_no_file_is_refused(tmp_path, vocab_bytes):
    """A spec that pins its tokenizer by `recorded:` as datasets recorded it before the special
    ids were (no mask_id, special_ids), with the file gone, can't be masked: it says so."""
    import hashlib
    recorded = {"kind": "wordpiece", "sha256": hashlib.sha256(vocab_bytes).hexdigest(), "vocab_size": 800,
                "pad_id": 0, "unk_id": 1}
    path = write_spec(tmp_path, {"name": "texts", "source": {"builder": "jsonl", "path": "rows.jsonl"},
                                 "features": {"text": {"type": "text", "tokenizer": "vocab.txt", "recorded": recorded}},
                                 "input": {"mlm": {}}}, {"rows.jsonl": ""})
    with pytest.raises(tb.SpecError, match=r"spec\.yaml, line \d+: input\.mlm: the dataset records no special ids of "
                                           r"feature `text`'s tokenizer \(built before they were recorded\) and its "
                                           r"file can't be read \(.*vocab\.txt: file not found \(the dataset recorded "
                                           r"sha256 [0-9a-f]{12}\.\.\.\)\); put that file back$"):
        tb.load_spec(path)
    (tmp_path / "vocab.txt").write_bytes(vocab_bytes)  # the file back: its ids recorded again
    assert tb.load_spec(path).reading()["mlm"]["special_ids"] == [0, 2, 3, 4]
