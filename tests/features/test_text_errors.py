"""`type: text`'s errors, each one line: a tokenizer file missing or malformed (or without padding
or unknown tokens) at its spec key when the spec is checked (`validate` catches it), the keys that
don't fit together, and texts that can't be tokenized, naming the row and the feature (skipped
under `on_error: skip`)."""
from __future__ import annotations

import json
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tfrecord_builder as tb
from conftest import write_spec
from support.cli import LineOf, assert_error, run_cli

VOCAB = "".join(token + "\n" for token in ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "was",
                                            "good", "bad", "##s", ".", ","])


def _spec(feature: dict, **extra) -> dict:
    return {"name": "texts", "source": {"builder": "jsonl", "path": "rows.jsonl"},
            "features": {"review": {"type": "text", "tokenizer": "vocab.txt", **feature}}, "output": {"dir": "out"},
            **extra}


def _rows(*values) -> str:
    return "".join(json.dumps({"review": value, "other": "the movie"}) + "\n" for value in values)


SPEC_CASES = {
    "missing file": ({"tokenizer": "nowhere/vocab.txt"}, {}, [LineOf("spec.yaml", "tokenizer: nowhere"),
                     "features.review.tokenizer:", "nowhere/vocab.txt: file not found; expected a BERT vocab.txt, "
                     "a SentencePiece .model or a tokenizer.json"]),
    "no padding token": ({"tokenizer": "plain.txt"}, {"plain.txt": "[UNK]\nthe\n"},
                         ["features.review.tokenizer:", "plain.txt: no padding token [PAD]; expected a BERT "
                          "vocabulary with [PAD] and [UNK]"]),
    "not a SentencePiece model": ({"tokenizer": "spm.model"}, {"spm.model": b"\x00\x01 not a protobuf"},
                                  ["features.review.tokenizer:", "spm.model: not a SentencePiece model ("]),
    "not a tokenizer.json": ({"tokenizer": "tokenizer.json"}, {"tokenizer.json": "{\"model\": 3}"},
                             ["features.review.tokenizer:", "tokenizer.json: not a tokenizer.json Hugging Face "
                              "tokenizers reads ("]),
    "lowercase for a model": ({"tokenizer": "tokenizer.json", "lowercase": True},
                              {"tokenizer.json": "{}"}, [LineOf("spec.yaml", "lowercase"), "features.review."
                              "lowercase: applies to a vocab.txt only; a SentencePiece model or a tokenizer.json "
                              "normalizes text its own way"]),
    "max_length with no room": ({"max_length": 2}, {}, [LineOf("spec.yaml", "max_length"),
                                "features.review.max_length: 2 leaves no room for text: the template adds 2 special "
                                "ids"]),
    "three sources": ({"source": ["a", "b", "c"]}, {}, ["features.review.source: expected a column name, or a list "
                                                        "of two (a pair of texts: [question, passage]), received a "
                                                        "list"]),
    "negative min_length": ({"min_length": -1}, {}, ["features.review.min_length: expected a number of tokens, 0 or "
                                                     "more, received -1"]),
}


@pytest.mark.parametrize("case", SPEC_CASES)
def test_a_bad_tokenizer_or_key_is_refused_by_validate_at_its_key(tmp_path, case):
    feature, files, expected = SPEC_CASES[case]
    write_spec(tmp_path, _spec(feature), {"vocab.txt": VOCAB, "rows.jsonl": _rows("the movie"), **files})
    assert_error(run_cli("validate", "spec.yaml", cwd=tmp_path), 2, expected, tmp_path)


def test_keras_hub_needs_one_text_feature_and_a_pair_is_not_per_step(tmp_path):
    spec = _spec({}, input={"text": "keras_hub"})
    spec["features"]["title"] = {"type": "text", "tokenizer": "vocab.txt"}
    path = write_spec(tmp_path, spec, {"vocab.txt": VOCAB})
    with pytest.raises(tb.SpecError, match=re.escape("input.text: keras_hub gives one text feature of a format: "
                                                     "example spec as token_ids, padding_mask and segment_ids; the "
                                                     "spec has `review`, `title`")):
        tb.load_spec(path)
    path = write_spec(tmp_path, {"name": "steps", "format": "sequence_example",
                                 "source": {"builder": "jsonl", "path": "rows.jsonl"},
                                 "sequence": {"review": {"type": "text", "tokenizer": "vocab.txt",
                                                         "source": ["review", "other"]}}}, {"vocab.txt": VOCAB})
    with pytest.raises(tb.SpecError, match=re.escape("sequence.review.source: a pair of texts has segment ids beside "
                                                     "its ids: declare it under `context:` or `features:`")):
        tb.load_spec(path)


def test_its_length_and_mask_names_are_its_own(tmp_path):
    spec = _spec({})
    spec["features"]["review_length"] = {"dtype": "int64"}
    with pytest.raises(tb.SpecError, match=re.escape("features.review: stores `review_length` beside its ids, "
                                                     "already feature `review_length`'s record key; rename one")):
        tb.load_spec(write_spec(tmp_path, spec, {"vocab.txt": VOCAB}))
    spec = _spec({})
    spec["features"]["review_mask"] = {"dtype": "int64"}
    with pytest.raises(tb.SpecError, match=re.escape("features.review: yields `review_mask` beside it, already a "
                                                     "feature's name; rename one")):
        tb.load_spec(write_spec(tmp_path, spec, {"vocab.txt": VOCAB}))


def test_a_recorded_sha256_pins_the_file(tmp_path):
    recorded = {"kind": "wordpiece", "sha256": "0" * 64, "vocab_size": 13, "pad_id": 0, "unk_id": 1}
    write_spec(tmp_path, _spec({"recorded": recorded}), {"vocab.txt": VOCAB, "rows.jsonl": _rows("the movie")})
    assert_error(run_cli("build", "spec.yaml", cwd=tmp_path), 2, [re.compile(
        r"^error: feature `review`: tokenizer .*vocab\.txt: sha256 [0-9a-f]{12}\.\.\., expected 000000000000\.\.\. "
        r"\(`recorded:`\): not the file the dataset was built with; put that file back to build or decode text$")])
    assert not (tmp_path / "out" / "texts" / "1.0.0").exists()  # nothing written


DATA_CASES = {
    "a number": (_rows("the movie", 5), "rows.jsonl, line 2: feature `review`: expected text, received int 5"),
    "a lone surrogate": ('{"review": "the \\ud800 movie"}\n',
                         "rows.jsonl, line 1: feature `review`: not valid text: a lone surrogate U+D800 at character 4, "
                         "which UTF-8 can't hold"),
    "missing": (_rows("the movie", None), "rows.jsonl, line 2: feature `review`: missing text"),
}


@pytest.mark.parametrize("case", DATA_CASES)
def test_a_bad_text_is_one_line_naming_its_row(tmp_path, case):
    rows, expected = DATA_CASES[case]
    write_spec(tmp_path, _spec({}), {"vocab.txt": VOCAB, "rows.jsonl": rows})
    assert_error(run_cli("build", "spec.yaml", cwd=tmp_path), 1, [expected])


def test_bytes_that_are_not_utf8_name_their_row(tmp_path):
    pq.write_table(pa.table({"review": pa.array([b"the movie", b"bad \xff movie"], pa.binary())}),
                   tmp_path / "rows.parquet")
    spec = _spec({})
    spec["source"] = {"builder": "parquet", "path": "rows.parquet"}
    path = write_spec(tmp_path, spec, {"vocab.txt": VOCAB})
    with pytest.raises(tb.DataError, match=re.escape("feature `review`: not valid UTF-8 text (byte 0xff at offset "
                                                     "4)")):
        tb.build(path, overwrite=True)


def test_words_must_be_lists_of_words(tmp_path):
    path = write_spec(tmp_path, _spec({"words": True}), {"vocab.txt": VOCAB, "rows.jsonl": _rows(["the", "movies"],
                                                                                                  "the movie")})
    with pytest.raises(tb.DataError, match=re.escape("rows.jsonl, line 2: feature `review`: expected a list of words "
                                                     "(text), received str 'the movie'")):
        tb.build(path, overwrite=True)
    path = write_spec(tmp_path, _spec({"words": True}), {"vocab.txt": VOCAB, "rows.jsonl": _rows(["the", "movies"])})
    record = next(tb.read(tb.build(path, overwrite=True).path))
    assert record["review"].tolist() == [2, 5, 6, 10, 3]  # [CLS] the movie ##s [SEP]


def test_min_length_refuses_an_empty_text_or_skips_it(tmp_path):
    rows = _rows("the movie was good", "", "bad")
    path = write_spec(tmp_path, _spec({"min_length": 1}), {"vocab.txt": VOCAB, "rows.jsonl": rows})
    with pytest.raises(tb.DataError, match=re.escape("rows.jsonl, line 2: feature `review`: empty text; expected at "
                                                     "least 1 (min_length)")):
        tb.build(path, overwrite=True)
    path = write_spec(tmp_path, _spec({"min_length": 2}, on_error="skip"), {"vocab.txt": VOCAB, "rows.jsonl": rows})
    info = tb.build(path, overwrite=True)
    assert info.skipped == 2 and info.splits["train"].num_examples == 1
    skipped = [json.loads(line) for line in open(f"{info.path}/skipped.jsonl", encoding="utf-8")]
    assert [entry["reason"] for entry in skipped] == [
        "rows.jsonl, line 2: feature `review`: empty text; expected at least 2 (min_length)",
        "rows.jsonl, line 3: feature `review`: 1 token; expected at least 2 (min_length)"]
