"""A vocabulary learned from word counts, the same bytes from the same counts in any process.

The counts are of the words `words(text, lowercase)` gives (BERT's basic tokenization: bert.py),
merged from any number of tasks in any order; every learned tokenizer applies that same
pre-tokenization before its vocabulary, so the words counted are the words encoded.

| kind | learned by | file |
| --- | --- | --- |
| `word` | the `size` most frequent words (ties by the word) | vocab.txt (loads as WordPiece: a word not in it is [UNK]) |
| `wordpiece` | byte-pair merges over the words (as Hugging Face's WordPiece trainer does), turned into word-initial pieces and `##` continuations, with every character in both forms | vocab.txt |
| `bpe` | byte-pair merges over the words, each word marked with a leading `▁` (as SentencePiece does) | tokenizer.json |
| `unigram` | SentencePiece's unigram trainer over the counted words | tokenizer.json (Hugging Face's Unigram model with SentencePiece's pieces and scores) |

Every learned vocabulary starts with [PAD], [UNK], [CLS], [SEP], [MASK] (ids 0 to 4) and puts a
text in BERT's template. The merges come from Hugging Face's BPE trainer, whose result depends
only on the counts when no continuation prefix is asked of it (its WordPiece and Unigram trainers
order ties by hash maps, which differ from process to process: they are not used); the unigram
pieces from SentencePiece's trainer on one thread.
"""
from __future__ import annotations

import collections
import dataclasses
import io
import json
import os
import tempfile
from typing import Iterator, Mapping

import sentencepiece
import tokenizers
from tokenizers import decoders, models, pre_tokenizers, processors, trainers

from . import bert
from .tokenizer import Tokenizer

LEARNED_KINDS = ("wordpiece", "bpe", "unigram", "word")
SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
WORD_START = "\u2581"  # ▁, SentencePiece's mark of a word's first piece
_REPEATS = 4096  # a word repeated this many times at most in one text handed to the BPE trainer


@dataclasses.dataclass(frozen=True)
class Learned:
    """A learned vocabulary.

    Attributes:
        tokenizer: the tokenizer it makes.
        file_name: what to call its file beside the shards: "vocab.txt" or "tokenizer.json".
        data: the file's bytes (`tokenizer.fingerprint` is their sha256).
    """

    tokenizer: Tokenizer
    file_name: str
    data: bytes


def learn(counts: Mapping[str, int], kind: str, size: int, min_count: int = 1, lowercase: bool = True) -> Learned:
    """A vocabulary of about `size` tokens learned from `counts` (word -> how often it was seen,
    the words of `words(text, lowercase)`); words seen fewer than `min_count` times take no part.
    `size` counts the five special tokens; `wordpiece` and `bpe` keep every character seen even
    past it (so no counted word is unknown), `unigram` may stop short of it on little text."""
    if kind not in LEARNED_KINDS:
        raise ValueError(f"vocabulary kind {kind!r}: expected one of {', '.join(LEARNED_KINDS)}")
    if size <= len(SPECIALS):
        raise ValueError(f"vocabulary size {size}: expected more than the {len(SPECIALS)} special tokens")
    kept = sorted((word, int(count)) for word, count in counts.items() if count >= min_count and word)
    if kind == "word":
        ranked = sorted(kept, key=lambda item: (-item[1], item[0]))
        return _vocab_txt(list(SPECIALS) + [word for word, _ in ranked[:size - len(SPECIALS)]], lowercase)
    if kind == "unigram":
        return _tokenizer_json(_unigram(kept, size), lowercase)
    vocabulary, merges = _bpe(kept, size - len(SPECIALS))
    if kind == "bpe":
        tokens = list(SPECIALS) + sorted(vocabulary, key=vocabulary.__getitem__)
        model = models.BPE({token: number for number, token in enumerate(tokens)}, merges, unk_token="[UNK]")
        return _tokenizer_json(model, lowercase)
    return _vocab_txt(_wordpiece(kept, vocabulary, size), lowercase)


def _bpe(kept: list[tuple[str, int]], size: int) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """Hugging Face's BPE trainer's vocabulary and merges over the words (each marked `▁word`)."""
    model = tokenizers.Tokenizer(models.BPE())
    model.pre_tokenizer = _marked_words(pre_tokenizers.WhitespaceSplit())
    model.train_from_iterator(_repeated(kept), trainers.BpeTrainer(vocab_size=size, show_progress=False))
    learned = json.loads(model.to_str())["model"]
    return learned["vocab"], [tuple(merge) for merge in learned["merges"]]


def _repeated(kept: list[tuple[str, int]]) -> Iterator[str]:
    """The words as texts the trainer counts: each word as often as it was seen."""
    for word, count in kept:
        while count > 0:
            times = min(count, _REPEATS)
            yield (word + " ") * times
            count -= times


def _wordpiece(kept: list[tuple[str, int]], vocabulary: dict[str, int], size: int) -> list[str]:
    """WordPiece's tokens from BPE's: `▁abc` is a word's first piece `abc`, `bc` the continuation
    `##bc`; every character first in both forms, the most frequent first."""
    seen: collections.Counter[str] = collections.Counter()
    for word, count in kept:
        for character in word:
            seen[character] += count
    characters = sorted(seen, key=lambda character: (-seen[character], character))
    tokens = list(SPECIALS) + [form for character in characters for form in (character, "##" + character)]
    size, known = max(size, len(tokens)), set(tokens)
    for token in sorted(vocabulary, key=vocabulary.__getitem__):
        piece = token[1:] if token.startswith(WORD_START) else "##" + token
        if len(tokens) == size:
            break
        if token != WORD_START and piece not in known:
            tokens.append(piece)
            known.add(piece)
    return tokens


def _unigram(kept: list[tuple[str, int]], size: int) -> models.Model:
    """SentencePiece's unigram pieces and scores over the words, as Hugging Face's Unigram model."""
    proto = io.BytesIO()
    with tempfile.TemporaryDirectory(prefix="tfrecord-builder-vocabulary-") as folder:
        path = os.path.join(folder, "words.tsv")
        with open(path, "w", encoding="utf-8") as file:  # SentencePiece's `sentence<TAB>count` input
            file.writelines(f"{word}\t{count}\n" for word, count in kept)
        sentencepiece.SentencePieceTrainer.train(
            input=path, input_format="tsv", model_writer=proto, model_type="unigram", vocab_size=size,
            hard_vocab_limit=False, character_coverage=1.0, normalization_rule_name="identity",
            num_threads=1, shuffle_input_sentence=False, input_sentence_size=0, minloglevel=2,
            pad_id=0, unk_id=1, bos_id=-1, eos_id=-1, pad_piece=SPECIALS[0], unk_piece=SPECIALS[1],
            control_symbols=list(SPECIALS[2:]))
    trained = sentencepiece.SentencePieceProcessor(model_proto=proto.getvalue())
    pieces = [(trained.id_to_piece(number), float(trained.get_score(number)))
              for number in range(trained.get_piece_size())]
    return models.Unigram(pieces, unk_id=1, byte_fallback=False)


def _marked_words(split: pre_tokenizers.PreTokenizer) -> pre_tokenizers.PreTokenizer:
    """`split`'s words, each marked with a leading ▁."""
    return pre_tokenizers.Sequence([split, pre_tokenizers.Metaspace(replacement=WORD_START, prepend_scheme="always",
                                                                    split=False)])


def _tokenizer_json(model: models.Model, lowercase: bool) -> Learned:
    """A tokenizer.json of `model` behind BERT's basic tokenization, with BERT's template."""
    learned = tokenizers.Tokenizer(model)
    learned.normalizer = bert.normalizer(lowercase)
    learned.pre_tokenizer = _marked_words(bert.pre_tokenizer())
    learned.decoder = decoders.Metaspace(replacement=WORD_START, prepend_scheme="always", split=False)
    cls, sep = (learned.token_to_id(token) for token in SPECIALS[2:4])
    learned.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A:0 [SEP]:0 $B:1 [SEP]:1",
        special_tokens=[(SPECIALS[2], cls), (SPECIALS[3], sep)])
    data = learned.to_str().encode("utf-8")
    return Learned(Tokenizer.from_bytes(data, "tokenizer.json"), "tokenizer.json", data)


def _vocab_txt(tokens: list[str], lowercase: bool) -> Learned:
    data = "".join(token + "\n" for token in tokens).encode("utf-8")
    return Learned(Tokenizer.from_bytes(data, "vocab.txt", lowercase), "vocab.txt", data)


__all__ = ["LEARNED_KINDS", "Learned", "learn"]
