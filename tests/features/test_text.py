"""`type: text` on real text (tests/support/texts.py): every stored id equal to the tokenizer
libraries' own (a BERT vocab.txt through `Tokenizer.inputs` and KerasHub's WordPieceTokenizer,
SentencePiece's encode, a tokenizer.json's own template), pairs with their segment ids, each
cut counted and said once, the sequence layout, and every reading path: input_fn, the generated
module, tb.read (and its text back), TFDS."""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
import sentencepiece
import tokenizers
from tokenizers import models, normalizers, pre_tokenizers, processors, trainers

import tfrecord_builder as tb
from conftest import write_spec
from support.reading import read_both
from support.texts import corpus, english, english_vocab
from tfrecord_builder import text

TEXTS = english()


@pytest.fixture(scope="module")
def vocab(tmp_path_factory) -> Path:
    """A BERT vocab.txt learned from half of the text (`english_vocab`)."""
    return english_vocab(tmp_path_factory.mktemp("vocab"))


def _rows(texts: list[str], second: list[str] | None = None) -> str:
    rows = [{"id": number, "text": line, **({"other": second[number]} if second else {})}
            for number, line in enumerate(texts)]
    return "".join(json.dumps(row) + "\n" for row in rows)


def _build(folder: Path, feature: dict, texts: list[str], second: list[str] | None = None, files=None,
           **spec) -> tb.DatasetInfo:
    path = write_spec(folder, {"name": "texts", "source": {"builder": "jsonl", "path": "rows.jsonl"},
                               "features": {"id": {"dtype": "int64"}, "text": {"type": "text", **feature}},
                               "output": {"dir": "out"}, **spec},
                      {"rows.jsonl": _rows(texts, second), **(files or {})})
    return tb.build(path, overwrite=True)


def _by_id(info: tb.DatasetInfo, **options) -> dict[int, dict]:
    return {int(record["id"]): record for record in tb.read(info.path, "train", **options)}


def test_vocab_txt_ids_are_the_tokenizers_with_each_cut_counted_once(tmp_path, vocab):
    info = _build(tmp_path, {"tokenizer": str(vocab), "max_length": 64}, TEXTS)
    tokenizer = text.load(str(vocab))
    expected = tokenizer.inputs(TEXTS, max_length=64)
    records = _by_id(info)
    assert len(records) == len(TEXTS)
    for number, ids in enumerate(expected.ids):
        assert records[number]["text"].tolist() == ids
        assert records[number]["text_mask"].tolist() == [True] * len(ids)
    cut = sum(len(ids) > 62 for ids in tokenizer.encode(TEXTS))
    assert 0 < cut == expected.truncated
    unknown = sum(tokenizer.specials.unk.id in ids for ids in tokenizer.encode(TEXTS))
    assert 0 < unknown and sorted(info.warnings) == [
        f"feature `text`: {cut} texts cut to max_length: 64 (truncation: right)",
        f"feature `text`: {unknown} text{'s' if unknown > 1 else ''} with unknown tokens ([UNK])"]
    lengths = [len(ids) for ids in expected.ids]
    figures = info.statistics["train"]["text"]
    assert (figures["length"]["min"], figures["length"]["max"]) == (min(lengths), max(lengths))
    assert figures["length"]["mean"] == pytest.approx(np.mean(lengths)) and figures["num_values"] == sum(lengths)
    every = [number for ids in expected.ids for number in ids]
    assert (figures["min"], figures["max"]) == (min(every), max(every))
    recorded = info.spec.features["text"].recorded
    assert (recorded.kind, recorded.sha256, recorded.pad_id) == ("wordpiece", tokenizer.fingerprint, 0)
    saved = json.loads((Path(info.path) / "tfrecord_builder.json").read_text())["spec"]["features"]["text"]
    assert saved["recorded"] == {"kind": "wordpiece", "sha256": tokenizer.fingerprint,
                                 "vocab_size": tokenizer.vocab_size, "pad_id": 0, "unk_id": 1, "mask_id": 4,
                                 "special_ids": [0, 2, 3, 4]}  # [PAD] [CLS] [SEP] [MASK]: never masked
    unknown_ids = sum(ids.count(1) for ids in expected.ids)
    assert figures["tallies"] == {"unknown_tokens": {"values": unknown_ids,
                                                     "records": sum(1 in ids for ids in expected.ids)}}


def test_vocab_txt_ids_equal_keras_hubs_wordpiece_tokenizer(tmp_path, vocab):
    keras_hub = pytest.importorskip("keras_hub")
    lines = [line for line in TEXTS if len(line) < 400][:60]
    info = _build(tmp_path, {"tokenizer": str(vocab)}, lines)
    layer = keras_hub.tokenizers.WordPieceTokenizer(vocabulary=str(vocab), lowercase=True)
    cls, sep = layer.token_to_id("[CLS]"), layer.token_to_id("[SEP]")
    records = _by_id(info)
    for number, line in enumerate(lines):
        assert records[number]["text"].tolist() == [cls] + [int(i) for i in layer(line)] + [sep]


def test_left_truncation_and_no_special_tokens(tmp_path, vocab):
    tokenizer = text.load(str(vocab))
    info = _build(tmp_path, {"tokenizer": str(vocab), "max_length": 16, "truncation": "left",
                             "special_tokens": False}, TEXTS[:40])
    records = _by_id(info)
    for number, ids in enumerate(tokenizer.encode(TEXTS[:40])):
        assert records[number]["text"].tolist() == ids[-16:]
    cut = sum(len(ids) > 16 for ids in tokenizer.encode(TEXTS[:40]))
    assert f"feature `text`: {cut} texts cut to max_length: 16 (truncation: left)" in info.warnings


def test_pairs_carry_berts_segment_ids_in_every_reading_path(tmp_path, vocab, tf):
    first, second = TEXTS[:60], TEXTS[60:120]
    info = _build(tmp_path, {"source": ["text", "other"], "tokenizer": str(vocab), "max_length": 48}, first, second,
                  input={"batch_size": 8})
    expected = text.load(str(vocab)).inputs(first, second, max_length=48)
    records = _by_id(info, decode_text=True)
    for number, (ids, segments) in enumerate(zip(expected.ids, expected.segments)):
        assert records[number]["text"].tolist() == ids
        assert records[number]["text_segment_ids"].tolist() == segments
        assert set(segments) == {0, 1} and segments == sorted(segments)
    batches = read_both(info, batch_size=8)  # the generated module's batches equal tb.input_fn's
    ordered = list(tb.read(info.path, "train"))
    for index, batch in enumerate(batches):
        chunk = ordered[index * 8:(index + 1) * 8]
        longest = max(len(record["text"]) for record in chunk)
        assert batch["text"].shape == (len(chunk), longest) and batch["text"].dtype == np.int64
        for row, record in enumerate(chunk):
            length = len(record["text"])
            assert batch["text"][row, :length].tolist() == record["text"].tolist()
            assert batch["text"][row, length:].tolist() == [0] * (longest - length)  # [PAD]
            assert batch["text_mask"][row].tolist() == [True] * length + [False] * (longest - length)
            assert batch["text_segment_ids"][row, :length].tolist() == record["text_segment_ids"].tolist()
    tokenizer = text.load(str(vocab))
    assert records[0]["text_text"] == tokenizer.decode(expected.ids[0])


def test_a_sentencepiece_model_keeps_its_own_ids_and_end_of_sentence(tmp_path):
    source = tmp_path / "corpus.txt"
    source.write_text("\n".join(line.replace("\n", " ") for line in corpus()), encoding="utf-8")
    proto = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(input=str(source), model_writer=proto, vocab_size=2000, minloglevel=2,
                                             num_threads=1, pad_id=0, eos_id=1, unk_id=2, bos_id=-1)
    (tmp_path / "spm.model").write_bytes(proto.getvalue())
    lines = corpus()[::3]
    info = _build(tmp_path / "build", {"tokenizer": "../spm.model"}, lines)
    reference = sentencepiece.SentencePieceProcessor(model_file=str(tmp_path / "spm.model"))
    records = _by_id(info, decode_text=True)
    for number, line in enumerate(lines):
        assert records[number]["text"].tolist() == reference.encode(line) + [1]
        assert records[number]["text_text"] == reference.decode(reference.encode(line))
    assert info.spec.features["text"].recorded.kind == "sentencepiece"


def test_a_tokenizer_json_pair_is_its_own_template(tmp_path):
    model = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
    model.normalizer = normalizers.BertNormalizer(lowercase=True)
    model.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    model.train_from_iterator(TEXTS, trainers.WordPieceTrainer(
        vocab_size=2000, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], show_progress=False))
    model.post_processor = processors.BertProcessing(("[SEP]", 3), ("[CLS]", 2))
    (tmp_path / "tokenizer.json").write_text(model.to_str(), encoding="utf-8")
    first, second = TEXTS[:50], TEXTS[50:100]
    info = _build(tmp_path, {"source": ["text", "other"], "tokenizer": "tokenizer.json"}, first, second)
    theirs = model.encode_batch(list(zip(first, second)))
    records = _by_id(info)
    for number, encoding in enumerate(theirs):
        assert records[number]["text"].tolist() == encoding.ids
        assert records[number]["text_segment_ids"].tolist() == encoding.type_ids


def test_per_step_text_is_one_id_a_step(tmp_path, vocab, tf):
    lines = TEXTS[:30]
    path = write_spec(tmp_path, {
        "name": "steps", "format": "sequence_example", "source": {"builder": "jsonl", "path": "rows.jsonl"},
        "context": {"id": {"dtype": "int64"}},
        "sequence": {"text": {"type": "text", "tokenizer": str(vocab), "max_length": 40}},
        "input": {"mask_feature": "mask", "batch_size": 4}, "output": {"dir": "out"}}, {"rows.jsonl": _rows(lines)})
    info = tb.build(path, overwrite=True)
    expected = text.load(str(vocab)).inputs(lines, max_length=40)
    records = _by_id(info)
    for number, ids in enumerate(expected.ids):
        assert records[number]["text"].tolist() == ids
        assert records[number]["sequence_length"] == len(ids)
    assert info.statistics["train"]["text"]["steps"]["max"] == max(len(ids) for ids in expected.ids)
    batches = read_both(info, batch_size=4)
    ordered = list(tb.read(info.path, "train"))
    first = ordered[:4]
    longest = max(len(record["text"]) for record in first)
    assert batches[0]["text"].shape == (4, longest)
    assert batches[0]["sequence_length"].tolist() == [len(record["text"]) for record in first]


def test_tfds_reads_the_ids_as_a_sequence_of_int64(tmp_path, vocab):
    tfds = pytest.importorskip("tensorflow_datasets")
    info = _build(tmp_path, {"source": ["text", "other"], "tokenizer": str(vocab), "max_length": 32},
                  TEXTS[:20], TEXTS[20:40])
    described = json.loads((Path(info.path) / "features.json").read_text())["featuresDict"]["features"]
    assert described["text"]["pythonClassName"].endswith("sequence_feature.Sequence")
    builder = tfds.builder_from_directory(info.path)
    ours = {int(record["id"]): record for record in tb.read(info.path, "train")}
    for example in tfds.as_numpy(builder.as_dataset(split="train")):
        record = ours[int(example["id"])]
        assert example["text"].tolist() == record["text"].tolist()
        assert example["text_segment_ids"].tolist() == record["text_segment_ids"].tolist()
        assert example["text_length"] == len(record["text"])


def test_reading_needs_no_tokenizer_file_but_decoding_text_needs_the_same_one(tmp_path, vocab, tf):
    own = tmp_path / "vocab.txt"
    own.write_bytes(vocab.read_bytes())
    info = _build(tmp_path, {"tokenizer": "vocab.txt"}, TEXTS[:10])
    expected = list(tb.read(info.path, "train"))
    own.unlink()
    for changed in (False, True):
        if changed:
            own.write_bytes(vocab.read_bytes() + b"zzzunseentoken\n")
        records = list(tb.read(info.path, "train"))
        assert [record["text"].tolist() for record in records] == [record["text"].tolist() for record in expected]
        assert len(list(tb.input_fn(info.path, "train", batch_size=4))) == 3
        why = (r"sha256 [0-9a-f]{12}\.\.\., expected [0-9a-f]{12}\.\.\. \(`recorded:`\): not the file the dataset "
               r"was built with" if changed else r"file not found \(the dataset recorded sha256 [0-9a-f]{12}\.\.\.\)")
        with pytest.raises(tb.SpecError, match=r"^feature `text`: tokenizer .*vocab\.txt: " + why + "; put that file "
                                               "back to build or decode text$"):
            next(tb.read(info.path, "train", decode_text=True))


def test_keras_hub_inputs_train_a_bert_classifier(tmp_path, vocab, tf):
    """A word's presence is the label: a tiny BertTextClassifier from `input: {text: keras_hub}`
    learns it (loss down, accuracy over 0.9 on held-out texts)."""
    keras_hub = pytest.importorskip("keras_hub")
    import keras
    words = sorted({word for line in TEXTS[::2] for word in text.words(line) if word.isalpha() and len(word) > 3})
    rng = np.random.default_rng(0)
    lines = [" ".join(rng.choice(words, size=int(rng.integers(4, 10)))) for _ in range(1200)]
    for number in range(0, len(lines), 2):  # half of them hold the word
        parts = lines[number].split()
        parts.insert(int(rng.integers(0, len(parts))), "python")
        lines[number] = " ".join(parts)
    labels = ["yes" if "python" in line.split() else "no" for line in lines]
    rows = "".join(json.dumps({"id": n, "text": line, "label": label}) + "\n"
                   for n, (line, label) in enumerate(zip(lines, labels)))
    path = write_spec(tmp_path, {
        "name": "toy", "source": {"builder": "jsonl", "path": "rows.jsonl"},
        "features": {"id": {"dtype": "int64"}, "text": {"type": "text", "tokenizer": str(vocab), "max_length": 24},
                     "label": {"type": "class_label", "names": ["no", "yes"]}},
        "label": "label", "splits": {"train": 0.8, "test": 0.2}, "input": {"text": "keras_hub", "batch_size": 32},
        "output": {"dir": "out"}}, {"rows.jsonl": rows})
    info = tb.build(path, overwrite=True)
    features, label = next(iter(tb.input_fn(info.path, "train")))
    assert sorted(features) == ["padding_mask", "segment_ids", "token_ids"] and label.dtype == np.int64
    keras.utils.set_random_seed(0)
    backbone = keras_hub.models.BertBackbone(vocabulary_size=info.spec.features["text"].recorded.vocab_size,
                                             num_layers=1, num_heads=2, hidden_dim=32, intermediate_dim=64,
                                             max_sequence_length=24)
    model = keras_hub.models.BertTextClassifier(backbone=backbone, num_classes=2, preprocessor=None, dropout=0.0)
    model.compile(optimizer=keras.optimizers.Adam(2e-3), loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    history = model.fit(tb.input_fn(info.path, "train"), epochs=8, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0] * 0.5
    _, accuracy = model.evaluate(tb.input_fn(info.path, "test"), verbose=0)
    print(f"loss {history.history['loss'][0]:.3f} -> {history.history['loss'][-1]:.3f}, held-out accuracy {accuracy:.3f}")
    assert accuracy > 0.9


def test_workers_and_verify_see_the_same_dataset(tmp_path, vocab):
    """Two worker processes (the tokenizer sent as its file's bytes, read once in each) write the
    same bytes as one; `verify` reads every record back against the spec."""
    from support.cli import assert_ok, run_cli
    from support.reading import assert_same_files, files_of
    lines = TEXTS * 3
    path = write_spec(tmp_path, {"name": "texts", "source": {"builder": "jsonl", "path": "rows.jsonl"},
                                 "features": {"id": {"dtype": "int64"},
                                              "text": {"type": "text", "tokenizer": str(vocab), "max_length": 32,
                                                       "source": ["text", "other"]}},
                                 "output": {"dir": "out", "shards": 2}},
                      {"rows.jsonl": _rows(lines, lines[::-1])})
    one = files_of(tb.build(path, overwrite=True, workers=1).path)
    info = tb.build(path, overwrite=True, workers=2)
    assert_same_files(one, files_of(info.path))
    result = run_cli("verify", info.path, cwd=tmp_path)
    assert_ok(result)
    assert f"{len(lines)} records, checksums and every record match the spec" in result.stdout


def test_tb_read_is_input_fn_record_by_record(tmp_path, vocab, tf):
    """NumPy decoding (tb.read, no TensorFlow) gives what input_fn(batch_size=1) gives, without the
    batch dimension: a record's own ids, its mask and segment ids, unpadded."""
    info = _build(tmp_path, {"source": ["text", "other"], "tokenizer": str(vocab), "max_length": 40},
                  TEXTS[:25], TEXTS[25:50])
    batches = read_both(info, batch_size=1)
    records = list(tb.read(info.path, "train"))
    assert len(batches) == len(records) == 25
    for batch, record in zip(batches, records):
        assert batch.keys() == record.keys()
        for key, value in record.items():
            np.testing.assert_array_equal(batch[key][0], value, err_msg=key)
            assert batch[key][0].dtype == np.asarray(value).dtype, key


def test_keras_hub_inputs_of_a_pair_are_the_padded_reading_renamed(tmp_path, vocab, tf):
    first, second = TEXTS[:20], TEXTS[20:40]
    feature = {"source": ["text", "other"], "tokenizer": str(vocab), "max_length": 40}
    padded = _build(tmp_path / "padded", feature, first, second)
    keras = _build(tmp_path / "keras", feature, first, second, input={"text": "keras_hub"})
    for ours, theirs in zip(read_both(padded, batch_size=6), read_both(keras, batch_size=6)):
        assert sorted(theirs) == ["padding_mask", "segment_ids", "token_ids"]
        np.testing.assert_array_equal(theirs["token_ids"], ours["text"])
        np.testing.assert_array_equal(theirs["padding_mask"], ours["text_mask"])
        np.testing.assert_array_equal(theirs["segment_ids"], ours["text_segment_ids"])


@pytest.mark.spark
def test_spark_writes_the_local_bytes(spark, tmp_path, vocab):
    """The tokenizer travels to Spark's Python workers (the executors of the run's one session on
    the cluster: support/spark_cluster.py) as its file's bytes: the same dataset."""
    import shutil
    from support.reading import assert_same_files, files_of
    path = write_spec(tmp_path, {"name": "texts", "source": {"builder": "jsonl", "path": "rows.jsonl"},
                                 "features": {"id": {"dtype": "int64"},
                                              "text": {"type": "text", "tokenizer": str(vocab), "max_length": 32,
                                                       "source": ["text", "other"]}},
                                 "output": {"shards": 2}},
                      {"rows.jsonl": _rows(TEXTS, TEXTS[::-1])})
    local = files_of(tb.build(path, output=tmp_path / "out", workers=2).path)
    shutil.rmtree(tmp_path / "out")
    assert_same_files(local, files_of(tb.build(path, output=tmp_path / "out", runner="spark").path))


def test_the_report_draws_the_lengths_in_ids(tmp_path, vocab):
    pytest.importorskip("matplotlib")
    info = _build(tmp_path, {"tokenizer": str(vocab), "max_length": 64}, TEXTS[:80])
    tb.load(info.path).report(tmp_path / "report.html", png=tmp_path / "png")
    assert (tmp_path / "png" / "text-lengths.png").stat().st_size > 0
    assert "text wordpiece int64 [null] (ids)" in (tmp_path / "report.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("feature, spec", [
    ({"max_length": 32}, {}),
    ({"source": ["text", "other"], "max_length": 32}, {}),
    ({"window": {"tokens": 32, "stride": 8}}, {}),
    ({"source": ["text", "other"], "max_length": 32, "layout": "model_garden"}, {}),
    ({"source": ["text", "other"]}, {"pack": {"length": 64}}),
], ids=["own", "pair", "window", "model_garden", "packed"])
def test_each_layout_reads_back_what_it_stores_beside_the_ids(tmp_path, vocab, feature, spec):
    """A layout (features/text_layouts.py) says once what it stores and reads: the keys parsed are
    the ids' and those stored beside them, the companions read are the names it gives, each once."""
    path = write_spec(tmp_path, {"name": "texts", "source": {"builder": "jsonl", "path": "rows.jsonl"},
                                 "features": {"text": {"type": "text", "tokenizer": str(vocab), **feature}}, **spec},
                      {"rows.jsonl": _rows(TEXTS[:2], TEXTS[2:4])})
    text_feature = tb.load_spec(path).features["text"]
    layout = text_feature.ids_layout
    assert sorted(text_feature.parsing()) == sorted([text_feature.record_key, *layout.keys])
    assert len(set(layout.keys)) == len(layout.keys)
    companions = text_feature.reading(None)["companions"]
    assert list(companions) == text_feature.companion_names == layout.names
    assert len(set(layout.names)) == len(layout.names)
