"""Vocabularies learned from word counts: the same bytes from the same counts, in any order and in
any process; each file loads back as the tokenizer learned; counting and encoding split alike."""
from __future__ import annotations

import collections
import hashlib
import json
import os
import random
import subprocess
import sys

import pytest

from conftest import ROOT
from support.texts import corpus
from tfrecord_builder import text

TEXTS = corpus()
COUNTS = collections.Counter(word for line in TEXTS for word in text.words(line))
SIZES = {"wordpiece": 2000, "bpe": 2000, "unigram": 2000, "word": 2000}


@pytest.fixture(scope="module")
def learned() -> dict[str, text.Learned]:
    return {kind: text.learn(COUNTS, kind, SIZES[kind]) for kind in text.LEARNED_KINDS}


def _scrambled(counts: dict[str, int], seed: int) -> dict[str, int]:
    items = list(counts.items())
    random.Random(seed).shuffle(items)
    return dict(items)


def test_the_same_counts_in_any_order_give_the_same_bytes(learned):
    for kind in text.LEARNED_KINDS:
        again = text.learn(_scrambled(COUNTS, 7), kind, SIZES[kind])
        assert again.data == learned[kind].data
        assert again.tokenizer.fingerprint == learned[kind].tokenizer.fingerprint == hashlib.sha256(again.data).hexdigest()


LEARN = """
import collections, hashlib, json, random, sys
from tfrecord_builder import text
counts = json.loads(sys.stdin.read())
items = list(counts.items()); random.Random(int(sys.argv[1])).shuffle(items)
print(json.dumps({kind: hashlib.sha256(text.learn(dict(items), kind, 2000).data).hexdigest()
                  for kind in text.LEARNED_KINDS}))
"""


def test_two_processes_learn_the_same_bytes(learned):
    """Hugging Face's Rust hash maps are seeded per process: the bytes must not depend on them."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    answers = [json.loads(subprocess.run([sys.executable, "-c", LEARN, str(seed)], input=json.dumps(COUNTS),
                                         capture_output=True, text=True, env=env, check=True, timeout=600).stdout)
               for seed in (1, 2)]
    expected = {kind: hashlib.sha256(learned[kind].data).hexdigest() for kind in text.LEARNED_KINDS}
    assert answers == [expected, expected]


def test_each_file_loads_back_as_the_tokenizer_learned(learned, tmp_path):
    for kind, result in learned.items():
        assert result.file_name == ("vocab.txt" if kind in ("wordpiece", "word") else "tokenizer.json")
        path = tmp_path / f"{kind}-{result.file_name}"
        path.write_bytes(result.data)
        loaded = text.load(str(path))
        assert loaded.encode(TEXTS) == result.tokenizer.encode(TEXTS)
        assert loaded.specials[:4] == result.tokenizer.specials[:4]
        assert [loaded.specials.pad.token, loaded.specials.unk.token, loaded.specials.cls.token,
                loaded.specials.sep.token, loaded.specials.mask.token] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        assert [special.id for special in loaded.specials if special] == [0, 1, 2, 3, 4]
        assert loaded.vocab_size == SIZES[kind] or kind in ("wordpiece", "unigram")


def test_learned_vocabularies_cover_their_text(learned):
    """A sub-word vocabulary knows every character it counted, so no counted word is unknown; the
    word vocabulary keeps the most frequent words."""
    for kind in ("wordpiece", "bpe", "unigram"):
        tokenizer = learned[kind].tokenizer
        ids = tokenizer.encode(TEXTS)
        assert all(tokenizer.specials.unk.id not in line for line in ids), kind
        assert sum(map(len, ids)) < sum(len(line) for line in TEXTS) / 1.5  # pieces, not characters
    words = learned["word"].data.decode().splitlines()
    ranked = sorted(COUNTS.items(), key=lambda item: (-item[1], item[0]))
    assert words == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [word for word, _ in ranked[:1995]]
    assert len(learned["wordpiece"].data.decode().splitlines()) == 2000


def test_decoding_gives_back_the_words(learned):
    line = "The JSON encoder, asynchronous iterators."
    for kind in ("wordpiece", "bpe", "unigram"):
        tokenizer = learned[kind].tokenizer
        assert text.words(tokenizer.decode(tokenizer.encode([line])[0])) == text.words(line), kind


def test_min_count_and_case(learned):
    rare = {word for word, count in COUNTS.items() if count < 3}
    kept = text.learn(COUNTS, "word", 100_000, min_count=3).data.decode().splitlines()
    assert set(kept[5:]) == set(COUNTS) - rare
    cased_counts = collections.Counter(word for line in TEXTS for word in text.words(line, lowercase=False))
    cased = text.learn(cased_counts, "bpe", 1000, lowercase=False).tokenizer
    assert cased.tokens(cased.encode(["JSON json"])[0]) != learned["bpe"].tokenizer.tokens(
        learned["bpe"].tokenizer.encode(["JSON json"])[0])
    with pytest.raises(ValueError, match="vocabulary kind 'chars'"):
        text.learn(COUNTS, "chars", 100)
    with pytest.raises(ValueError, match="vocabulary size 5"):
        text.learn(COUNTS, "word", 5)
