"""Real text for the tokenizer tests, and the reference tokenizers of TF Model Garden's environment.

The text: the docstrings of a dozen standard-library modules (English prose with code, quotes and
punctuation), this repository's docs pages, and Babel's (a dependency of the docs extra) names of
the world's languages as Chinese, Japanese, Korean, Greek, Russian, Arabic, Hindi, Vietnamese,
French and German write them (accents, CJK ideographs, Hangul, scripts without case).

`Reference` runs one Python process in `.venv-tfm` (TF Model Garden's environment, made by `make
test`), which answers batches over a pipe: the original BERT tokenizer
(`official.nlp.tools.tokenization.FullTokenizer`), KerasHub's WordPieceTokenizer and
SentencePieceTokenizer with tensorflow-text, and tensorflow-text's BertTokenizer.
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import email
import inspect
import json
import os
import subprocess
import typing
import unittest
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT

TFM_PYTHON = Path(os.environ.get("TFRECORD_BUILDER_TFM_PYTHON", ROOT / ".venv-tfm" / "bin" / "python"))
needs_model_garden = pytest.mark.skipif(not TFM_PYTHON.exists(), reason=f"{TFM_PYTHON}: no Model Garden environment; "
                                        "`make test` makes it (or set TFRECORD_BUILDER_TFM_PYTHON)")
LANGUAGES = ("zh", "ja", "ko", "el", "ru", "ar", "hi", "vi", "fr", "de")


def english() -> list[str]:
    """Paragraphs of the standard library's docstrings and of this repository's docs pages."""
    modules = [argparse, asyncio, collections, email, inspect, json, subprocess, typing, unittest]
    texts = [inspect.getdoc(module) or "" for module in modules]
    texts += [inspect.getdoc(function) or "" for function in
              (json.dumps, json.loads, subprocess.run, collections.namedtuple, inspect.signature, typing.cast)]
    for page in sorted((ROOT / "docs").glob("*.md"))[:12]:
        texts += page.read_text(encoding="utf-8").split("\n\n")
    return [text for text in texts if text.strip()]


def english_vocab(folder: Path, size: int = 1500) -> Path:
    """`folder`/vocab.txt: a BERT vocabulary (WordPiece) of `size` learned from every other text of
    `english()`, so the other half holds words it splits into many pieces."""
    from tfrecord_builder import text  # (the text extra)

    counts = collections.Counter(word for line in english()[::2] for word in text.words(line))
    path = folder / "vocab.txt"
    path.write_bytes(text.learn(counts, "wordpiece", size).data)
    return path


def world() -> list[str]:
    """Babel's names of languages as each of LANGUAGES writes them, 40 to a text."""
    from babel import Locale
    texts = []
    for code in LANGUAGES:
        names = sorted(Locale.parse(code).languages.values())
        texts += [", ".join(names[start:start + 40]) for start in range(0, len(names), 40)]
    return texts


def corpus() -> list[str]:
    return english() + world()


SERVER = r"""
import json
import sys

import tensorflow as tf

tf.get_logger().setLevel("ERROR")
made = {}


def listed(ids):
    return ids.to_list() if hasattr(ids, "to_list") else ids


def tokenizer(request):
    key = json.dumps({k: v for k, v in request.items() if k != "texts"}, sort_keys=True)
    if key in made:
        return made[key]
    kind = request["kind"]
    if kind == "original":
        from official.nlp.tools import tokenization
        full = tokenization.FullTokenizer(request["vocab"], do_lower_case=request["lower"])
        made[key] = lambda texts: [full.convert_tokens_to_ids(full.tokenize(text)) for text in texts]
    elif kind == "keras_hub_wordpiece":
        import keras_hub
        from keras_hub.src.tokenizers import word_piece_tokenizer
        assert word_piece_tokenizer.tf_text is not None  # with tensorflow-text, not its Python fallback
        layer = keras_hub.tokenizers.WordPieceTokenizer(vocabulary=request["vocab"], lowercase=request["lower"],
                                                        strip_accents=request["lower"], oov_token="[UNK]")
        made[key] = lambda texts: [list(map(int, ids)) for ids in listed(layer(tf.constant(texts)))]
    elif kind == "keras_hub_sentencepiece":
        import keras_hub
        layer = keras_hub.tokenizers.SentencePieceTokenizer(proto=request["model"])
        made[key] = lambda texts: [list(map(int, ids)) for ids in listed(layer(tf.constant(texts)))]
    elif kind == "tf_text_bert":
        import tensorflow_text as text
        with open(request["vocab"], encoding="utf-8") as file:
            tokens = file.read().splitlines()
        table = tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(
            tokens, tf.range(len(tokens), dtype=tf.int64)), num_oov_buckets=1)
        bert = text.BertTokenizer(table, lower_case=request["lower"], token_out_type=tf.int64,
                                  unknown_token="[UNK]")
        made[key] = lambda texts: [[int(i) for word in ids for i in word]
                                   for ids in bert.tokenize(tf.constant(texts)).to_list()]
    return made[key]


for line in sys.stdin:
    request = json.loads(line)
    try:
        answer = {"ids": tokenizer(request)(request["texts"])}
    except Exception as error:
        answer = {"error": f"{type(error).__name__}: {error}"}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
"""


class Reference:
    """The reference tokenizers of `.venv-tfm`, in one process started once."""

    def __init__(self) -> None:
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": "", "CUDA_VISIBLE_DEVICES": ""}
        self.process = subprocess.Popen([str(TFM_PYTHON), "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, encoding="utf-8", env=env)

    def ids(self, kind: str, texts: list[str], **options: Any) -> list[list[int]]:
        """Each text's ids by the reference `kind` ("original", "keras_hub_wordpiece",
        "keras_hub_sentencepiece", "tf_text_bert"), with its options (vocab, lower, model)."""
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps({"kind": kind, "texts": texts, **options}) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line, "the reference process ended"
        answer = json.loads(line)
        assert "error" not in answer, answer.get("error")
        return answer["ids"]

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(timeout=60)
