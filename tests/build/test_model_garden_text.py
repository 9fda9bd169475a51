"""TF Model Garden reads our text records: the specs of docs/text.md ("TF Model Garden"), sentence
prediction (a pair of texts, a class) and tagging (words, a tag a word), built with a BERT
vocab.txt and read by Model Garden's own loaders, `data_loader_factory.get_data_loader(
SentencePredictionDataConfig / TaggingDataConfig).load()`, in its own environment (`.venv-tfm`,
made by `make test`; tests/build/test_model_garden.py reads our detection records the same way).

Every value the loaders give equals what Model Garden's own writers (`classifier_data_lib.
file_based_convert_examples_to_features`, `tagging_data_lib.write_example_to_file`, over its
`FullTokenizer` of the same vocab.txt) give for the same examples, read by the same loaders, and
what `tb.read` gives of our records.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import tfrecord_builder as tb
from conftest import write_spec
from support.conll import CONLL2003, NER, conll2003_sentences
from support.texts import TFM_PYTHON, english, needs_model_garden, english_vocab

SEQ_LENGTH = 64

READ = """
import json
import sys

import numpy as np
import tensorflow as tf
from official.nlp.data import classifier_data_lib, data_loader_factory, tagging_data_lib
from official.nlp.data import sentence_prediction_dataloader as spd, tagging_dataloader as tgd
from official.nlp.tools import tokenization

request = json.loads(open(sys.argv[1]).read())
tokenizer = tokenization.FullTokenizer(request["vocab"], do_lower_case=True)
length = request["seq_length"]
out = {}


def loaded(config, prefix):
    for number, batch in enumerate(data_loader_factory.get_data_loader(config).load()):
        x, y = batch if isinstance(batch, tuple) else (batch, None)
        for name, value in {**x, **({"labels": y} if y is not None else {})}.items():
            out[f"{prefix}/{number}/{name}"] = value.numpy()
        out[f"{prefix}/{number}/loader"] = np.array(type(data_loader_factory.get_data_loader(config)).__name__)


def classification(paths, prefix):
    loaded(spd.SentencePredictionDataConfig(input_path=paths, seq_length=length, global_batch_size=1000,
                                            is_training=False, drop_remainder=False, include_example_id=True), prefix)


def tagging(paths, prefix):
    loaded(tgd.TaggingDataConfig(input_path=paths, seq_length=length, global_batch_size=1000, is_training=False,
                                 drop_remainder=False, include_sentence_id=True), prefix)


classification(request["ours_classification"], "ours_classification")
tagging(request["ours_tagging"], "ours_tagging")
examples = [classifier_data_lib.InputExample(guid=str(number), text_a=a, text_b=b, label=label, example_id=number)
            for number, a, b, label in request["classification"]]
theirs = sys.argv[2] + "/classification.tfrecord"
classifier_data_lib.file_based_convert_examples_to_features(examples, request["classes"], length, tokenizer, theirs)
classification(theirs, "theirs_classification")
tagged = []
for number, words, labels in request["tagging"]:
    example = tagging_data_lib.InputExample(sentence_id=number)
    for word, label in zip(words, labels):
        example.add_word_and_label_id(word, label)
    tagged.append(example)
theirs = sys.argv[2] + "/tagging.tfrecord"
tagging_data_lib.write_example_to_file(tagged, tokenizer, length, theirs)
tagging(theirs, "theirs_tagging")
np.savez(sys.argv[2] + "/read.npz", **out)
"""


@pytest.fixture(scope="module")
def vocab(tmp_path_factory) -> Path:
    """A BERT vocab.txt learned from half of the text (`english_vocab`)."""
    return english_vocab(tmp_path_factory.mktemp("vocab"))


def _classification(tmp_path: Path, vocab: Path) -> tuple[tb.DatasetInfo, list]:
    lines = [line.replace("\n", " ") for line in english() if len(line) < 600]
    rows = [{"id": number, "premise": lines[number], "hypothesis": lines[number + 60],
             "label": ["contradiction", "neutral", "entailment"][number % 3]} for number in range(60)]
    path = write_spec(tmp_path, {
        "name": "pairs", "source": {"builder": "jsonl", "path": "rows.jsonl"},
        "features": {"input_ids": {"type": "text", "source": ["premise", "hypothesis"], "tokenizer": str(vocab),
                                   "max_length": SEQ_LENGTH, "layout": "model_garden"},
                     "label_ids": {"type": "class_label", "source": "label",
                                   "names": ["contradiction", "neutral", "entailment"]},
                     "example_id": {"dtype": "int64", "source": "id"}},
        "output": {"dir": "out", "naming": "suffix"}},
        {"rows.jsonl": "".join(json.dumps(row) + "\n" for row in rows)})
    examples = [[row["id"], row["premise"], row["hypothesis"], row["label"]] for row in rows]
    return tb.build(path, overwrite=True), examples


def _tagging(tmp_path: Path, vocab: Path) -> tuple[tb.DatasetInfo, list]:
    sentences = conll2003_sentences(CONLL2003)
    rows = [{"id": number, "words": [token[0] for token in sentence], "tags": [token[3] for token in sentence]}
            for number, sentence in enumerate(sentences)]
    path = write_spec(tmp_path, {
        "name": "ner", "source": {"builder": "jsonl", "path": "rows.jsonl"},
        "features": {"input_ids": {"type": "text", "source": "words", "words": True, "tokenizer": str(vocab),
                                   "max_length": SEQ_LENGTH, "layout": "model_garden"},
                     "label_ids": {"type": "class_label", "shape": [None], "source": "tags", "names": NER,
                                   "align": "words"},
                     "sentence_id": {"dtype": "int64", "source": "id"},
                     "sub_sentence_id": {"dtype": "int64", "value": 0}},
        "output": {"dir": "out", "naming": "suffix"}},
        {"rows.jsonl": "".join(json.dumps(row) + "\n" for row in rows)})
    examples = [[row["id"], row["words"], [NER.index(tag) for tag in row["tags"]]] for row in rows]
    return tb.build(path, overwrite=True), examples


def _shards(info: tb.DatasetInfo) -> list[str]:
    return [os.path.join(info.path, name) for split in info.splits.values() for name in split.files]


def _read(folder: Path, request: dict) -> dict[str, dict[str, np.ndarray]]:
    """What Model Garden's loaders give, by prefix ("ours_tagging", ...): each key's batches joined."""
    (folder / "request.json").write_text(json.dumps(request))
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": "", "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run([str(TFM_PYTHON), "-c", READ, str(folder / "request.json"), str(folder)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    arrays = np.load(folder / "read.npz")
    found: dict[str, dict[str, list[np.ndarray]]] = {}
    for key in sorted(arrays.files, key=lambda key: (key.split("/")[0], int(key.split("/")[1]), key)):
        prefix, _, name = key.split("/")
        found.setdefault(prefix, {}).setdefault(name, []).append(arrays[key])
    return {prefix: {name: (np.concatenate(parts) if parts[0].ndim else parts[0]) for name, parts in named.items()}
            for prefix, named in found.items()}


def _by(read: dict[str, np.ndarray], key: str) -> dict[str, np.ndarray]:
    order = np.argsort(read[key], kind="stable")
    return {name: value[order] if value.ndim else value for name, value in read.items()}


@needs_model_garden
@pytest.mark.extra_env
def test_model_garden_loaders_read_our_records_as_their_own(tmp_path, vocab):
    classified, classification = _classification(tmp_path / "classification", vocab)
    tagged, tagging = _tagging(tmp_path / "tagging", vocab)
    assert all(name.endswith(".tfrecord") for name in _shards(classified) + _shards(tagged))
    assert classified.warnings and "cut to max_length: 64" in classified.warnings[0]  # (pairs cut, BERT's way)
    read = _read(tmp_path, {"vocab": str(vocab), "seq_length": SEQ_LENGTH, "classes": ["contradiction", "neutral",
                                                                                       "entailment"],
                            "ours_classification": ",".join(_shards(classified)),
                            "ours_tagging": ",".join(_shards(tagged)),
                            "classification": classification, "tagging": tagging})
    assert str(read["ours_classification"]["loader"]) == "SentencePredictionDataLoader"
    assert str(read["ours_tagging"]["loader"]) == "TaggingDataLoader"
    # the loaders read ours as they read Model Garden's own records of the same examples
    ours, theirs = _by(read["ours_classification"], "example_id"), _by(read["theirs_classification"], "example_id")
    assert ours["example_id"].tolist() == list(range(60))
    for name in ("input_word_ids", "input_mask", "input_type_ids", "label_ids"):
        np.testing.assert_array_equal(ours[name], theirs[name], err_msg=name)
    ours, theirs = _by(read["ours_tagging"], "sentence_id"), _by(read["theirs_tagging"], "sentence_id")
    assert ours["sentence_id"].tolist() == list(range(len(tagging))) and not ours["sub_sentence_id"].any()
    assert theirs["sub_sentence_id"].tolist() == [0] * len(tagging)  # (no sentence split into several)
    for name in ("input_word_ids", "input_mask", "input_type_ids", "labels"):
        np.testing.assert_array_equal(ours[name], theirs[name], err_msg=name)
    assert (ours["labels"] == -1).any() and ours["labels"].shape == (len(tagging), SEQ_LENGTH)
    # and what they read is what tb.read gives
    records = sorted(tb.read(tagged.path, "train"), key=lambda record: int(record["sentence_id"]))
    for row, record in enumerate(records):
        assert ours["input_word_ids"][row].tolist() == record["input_ids"].tolist()
        assert ours["input_mask"][row].tolist() == record["input_ids_mask"].astype(int).tolist()
        assert ours["labels"][row].tolist() == record["label_ids"].tolist()
    records = sorted(tb.read(classified.path, "train"), key=lambda record: int(record["example_id"]))
    segments = _by(read["ours_classification"], "example_id")["input_type_ids"]
    for row, record in enumerate(records):
        assert segments[row].tolist() == record["input_ids_segment_ids"].tolist()
        assert int(read["ours_classification"]["label_ids"][list(
            read["ours_classification"]["example_id"]).index(row)]) == int(record["label_ids"])
