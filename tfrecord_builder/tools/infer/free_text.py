"""Free text told from categories and short strings, and proposed as token ids (`type: text`) of
a vocabulary the build learns from the train split.

A column of text is free text when, over the values read, all of these hold (`is_free_text`):
at least `MIN_TEXTS` values (and none missing: a text feature needs one in every row), at least
`MIN_DISTINCT_SHARE` of them distinct (or more distinct values than infer counts), `MIN_WORDS`
words a value on average, and at least `MIN_SPACED_SHARE` of them holding a space. Names, ids,
file paths, codes, dates and categories fail one of these; sentences, reviews and descriptions
pass them all. Words are counted as BERT's basic tokenization splits them, closely enough for a
guess: runs of letters and digits, each punctuation mark a word (`_WORD`).

The proposal (`text_fields`): `vocabulary: {kind: wordpiece, size: N}` with N half the distinct
words (lower-cased), rounded up to a thousand, within `MIN_SIZE`-`MAX_SIZE` (frequent words stay
whole, rare ones become pieces), and `max_length` the 99th percentile of words a value times
`PIECES_A_WORD` (a WordPiece vocabulary's pieces a word on English text) plus the template's 2
special ids, rounded up to a multiple of 8, at most `MAX_LENGTH` (BERT's). Each number's reason
is in the comment beside it. Proposed only where the `text` extra is installed and specs take
`vocabulary:` (a spec infer writes validates as it is); otherwise the column stays `string` and
the comment says how.
"""
from __future__ import annotations

import importlib.util
import math
import re
from collections import Counter
from typing import Any, Sequence

MIN_TEXTS = 20
MIN_DISTINCT_SHARE = 0.5
MIN_WORDS = 5.0
MIN_SPACED_SHARE = 0.8
MIN_SIZE, MAX_SIZE = 1000, 32000
PIECES_A_WORD = 1.3
MAX_LENGTH = 512
_WORD = re.compile(r"\w+|[^\w\s]")


def words_of(value: str) -> list[str]:
    """A text's words, lower-cased, about as BERT's basic tokenization splits them."""
    return _WORD.findall(value.lower())


def text_extra() -> bool:
    """Whether the tokenizer libraries `type: text` needs are installed."""
    return all(importlib.util.find_spec(name) is not None for name in ("tokenizers", "sentencepiece"))


def is_free_text(values: Sequence[Any], distinct: int | None) -> tuple[bool, str]:
    """Whether a column's text `values` (`distinct`: how many distinct, None for more than
    counted) are free text, and what was measured (for the comment). Missing values aren't
    looked at (the caller says what they mean for a text feature)."""
    texts = [value for value in values if isinstance(value, str)]
    if len(texts) < MIN_TEXTS:
        return False, ""
    counts = [len(words_of(value)) for value in texts]
    mean = sum(counts) / len(counts)
    spaced = sum(1 for value in texts if " " in value.strip()) / len(texts)
    share = 1.0 if distinct is None else distinct / len(texts)
    measured = (f"{'more than 1,000' if distinct is None else f'{distinct:,}'} distinct of {len(texts):,} values, "
                f"{mean:.1f} words a value on average")
    return share >= MIN_DISTINCT_SHARE and mean >= MIN_WORDS and spaced >= MIN_SPACED_SHARE, measured


def text_fields(texts: Sequence[Sequence[str]]) -> tuple[dict[str, Any], str]:
    """`vocabulary:` and `max_length` for texts given as their words, and the comment saying why."""
    vocabulary = Counter(word.lower() for words in texts for word in words)
    size = min(MAX_SIZE, max(MIN_SIZE, 1000 * math.ceil(len(vocabulary) / 2 / 1000)))
    lengths = sorted(len(words) for words in texts)
    longest = lengths[min(len(lengths) - 1, math.ceil(0.99 * len(lengths)) - 1)] if lengths else 0
    length = min(MAX_LENGTH, 8 * math.ceil((longest * PIECES_A_WORD + 2) / 8))
    note = (f"a WordPiece vocabulary of {size:,} learned from the train split ({len(vocabulary):,} distinct words: "
            f"half of them, rounded up to a thousand, {MIN_SIZE:,}-{MAX_SIZE:,}); max_length {length}: 99% of the "
            f"texts have at most {longest:,} words, x {PIECES_A_WORD} pieces a word + 2 special ids, rounded up to a "
            f"multiple of 8{f' (at most {MAX_LENGTH})' if length == MAX_LENGTH else ''}")
    return {"vocabulary": {"kind": "wordpiece", "size": size}, "max_length": length}, note


NO_EXTRA = "free text: `pip install 'tfrecord-builder[text]'` and infer again for token ids (`type: text`)"
