"""Tokenizer benchmark: `tfrecord_builder.text.Tokenizer.encode` of a batch against the loop the
NLP TFRecord scripts run (BERT's run_classifier.py, Model Garden's classifier_data_lib): one
`FullTokenizer.tokenize` + `convert_tokens_to_ids` call per example, in Python.

Run by hand (a ratio only, the best of R rounds):

    .venv/bin/python bench/text_tokenizers.py [--sentences N] [--repeats R]

The sentences: N (10,000) lines of real English prose, the standard library's docstrings and this
repository's docs cut into sentences, cycled. The vocabulary: a 8,000-token uncased WordPiece
vocab.txt learned from them with `text.learn`. Both sides give the same ids (checked).

The loop runs TF Model Garden's own `official.nlp.tools.tokenization.FullTokenizer` (the original
BERT code) in `.venv-tfm` (`make test` makes it), timed there in its own process (the same
Python 3.11); without that environment the script says so and stops.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from support.texts import english  # noqa: E402
from tfrecord_builder import text  # noqa: E402

TFM_PYTHON = Path(os.environ.get("TFRECORD_BUILDER_TFM_PYTHON", ROOT / ".venv-tfm" / "bin" / "python"))
LOOP = """
import json, sys, time
from official.nlp.tools import tokenization
vocab, sentences, repeats = sys.argv[1], json.load(open(sys.argv[2], encoding="utf-8")), int(sys.argv[3])
tokenizer = tokenization.FullTokenizer(vocab, do_lower_case=True)
best = float("inf")
for _ in range(repeats):
    start = time.perf_counter()
    ids = [tokenizer.convert_tokens_to_ids(tokenizer.tokenize(sentence)) for sentence in sentences]
    best = min(best, time.perf_counter() - start)
print(json.dumps({"seconds": best, "ids": ids}))
"""


def sentences(count: int) -> list[str]:
    found = [part.strip() for paragraph in english() for part in re.split(r"(?<=[.!?])\s+", paragraph)]
    found = [sentence for sentence in found if len(sentence.split()) >= 4]
    return [found[number % len(found)] for number in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    if not TFM_PYTHON.exists():
        sys.exit(f"{TFM_PYTHON}: no Model Garden environment (make test makes it); nothing to compare with")
    batch = sentences(options.sentences)
    counts = collections.Counter(word for sentence in set(batch) for word in text.words(sentence))
    learned = text.learn(counts, "wordpiece", 8000)
    with tempfile.TemporaryDirectory() as folder:
        vocab, data = os.path.join(folder, "vocab.txt"), os.path.join(folder, "sentences.json")
        Path(vocab).write_bytes(learned.data)
        Path(data).write_text(json.dumps(batch), encoding="utf-8")
        tokenizer = text.load(vocab)
        ours = float("inf")
        for _ in range(options.repeats):
            start = time.perf_counter()
            ids = tokenizer.encode(batch)
            ours = min(ours, time.perf_counter() - start)
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": ""}
        done = subprocess.run([str(TFM_PYTHON), "-c", LOOP, vocab, data, str(options.repeats)], capture_output=True,
                              text=True, env=env, check=True)
        loop = json.loads(done.stdout.strip().splitlines()[-1])
    assert loop["ids"] == ids, "the two sides gave different ids"
    tokens = sum(map(len, ids))
    print(f"{len(batch):,} sentences, {tokens:,} WordPiece ids, best of {options.repeats}")
    print(f"  Tokenizer.encode (one batch call): {len(batch) / ours:,.0f} sentences/s")
    print(f"  FullTokenizer loop (per example):  {len(batch) / loop['seconds']:,.0f} sentences/s")
    print(f"  ratio: {loop['seconds'] / ours:.1f}x")


if __name__ == "__main__":
    main()
