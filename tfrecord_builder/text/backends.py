"""The two libraries behind `Tokenizer`, each read from a file's bytes: Hugging Face `tokenizers`
(a BERT vocab.txt, as WordPiece with BERT's basic tokenization, and any tokenizer.json) and
`sentencepiece` (a .model). Each gives the same small surface: batch encoding, words encoded with
the word each piece came from, decoding, its special tokens and its template.
"""
from __future__ import annotations

import json
from typing import Any, NamedTuple, Sequence

import sentencepiece
import tokenizers
from tokenizers import decoders, models, processors

from . import bert
from .errors import BadTokenizer
from .inputs import Part, Template

# how the usual vocabularies spell each role, for the files that name no role (a vocab.txt, the
# added tokens of a tokenizer.json, the pieces of a SentencePiece model)
PAD_NAMES = ("[PAD]", "<pad>", "<PAD>", "<|pad|>")
MASK_NAMES = ("[MASK]", "<mask>", "<MASK>")
# WordPiece of the original BERT: a word longer than this many characters is the unknown token
MAX_WORD_CHARACTERS = 100


class Special(NamedTuple):
    """A special token: its text and its id."""

    token: str
    id: int


class Specials(NamedTuple):
    """A tokenizer's special tokens, as its file defines them (None: it has none).

    Attributes:
        cls, sep: the tokens the input template opens and closes a text with ([CLS] and [SEP]
            for WordPiece; a tokenizer.json's template's first and last; SentencePiece's when the
            model has [CLS] and [SEP] pieces, as ALBERT's does).
        bos, eos: SentencePiece's beginning and end of sentence.
        pad, unk: padding and unknown (every tokenizer here has both).
        mask: the masked-language-model token.
    """

    pad: Special
    unk: Special
    cls: Special | None = None
    sep: Special | None = None
    bos: Special | None = None
    eos: Special | None = None
    mask: Special | None = None


class WordPieces(NamedTuple):
    """A sentence of words as pieces: `ids[i]` came from word `words[i]` (its index in the
    sentence). A word that normalizes to nothing (only control characters) has no piece."""

    ids: list[int]
    words: list[int]


# ---- Hugging Face tokenizers ----

def wordpiece(data: bytes, name: str, lowercase: bool) -> tokenizers.Tokenizer:
    """A BERT vocab.txt as Hugging Face WordPiece with the original's basic tokenization. Like
    the original's `load_vocab`, each line is one token, stripped of surrounding whitespace, with
    its line number (from 0) as its id; a leading byte-order mark is ignored."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        number = data[:error.start].count(b"\n") + 1
        raise BadTokenizer(f"{name}, line {number}: not UTF-8 text (byte 0x{data[error.start]:02x}); "
                           "expected a vocabulary of one token a line") from None
    lines = text.removeprefix("\ufeff").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    vocabulary: dict[str, int] = {}
    for number, line in enumerate(lines):
        token = line.strip()
        if token in vocabulary and token:
            raise BadTokenizer(f"{name}, line {number + 1}: token {token!r} repeats line {vocabulary[token] + 1}")
        vocabulary[token] = number
    if not any(lines):
        raise BadTokenizer(f"{name}: empty; expected a vocabulary of one token a line")
    for role, token in (("padding", "[PAD]"), ("unknown", "[UNK]")):
        if token not in vocabulary:
            raise BadTokenizer(f"{name}: no {role} token {token}; expected a BERT vocabulary with [PAD] and [UNK]")
    model = tokenizers.Tokenizer(models.WordPiece(vocabulary, unk_token="[UNK]",
                                                  max_input_chars_per_word=MAX_WORD_CHARACTERS))
    model.normalizer = bert.normalizer(lowercase)
    model.pre_tokenizer = bert.pre_tokenizer()
    model.decoder = decoders.WordPiece(prefix="##")
    if "[CLS]" in vocabulary and "[SEP]" in vocabulary:
        model.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A:0 [SEP]:0 $B:1 [SEP]:1",
            special_tokens=[("[CLS]", vocabulary["[CLS]"]), ("[SEP]", vocabulary["[SEP]"])])
    return model


def without_normalizer(model: tokenizers.Tokenizer) -> tokenizers.Tokenizer:
    """A copy of `model` that doesn't normalize: for text normalized beforehand (bert.ASCII_TABLES)."""
    copy = tokenizers.Tokenizer.from_str(model.to_str())
    copy.normalizer = None
    return copy


def tokenizer_json(data: bytes, name: str) -> tuple[tokenizers.Tokenizer, dict[str, Any]]:
    """A Hugging Face tokenizer.json, with its own truncation and padding turned off (the caller
    cuts and pads), and the file's JSON."""
    try:
        described = json.loads(data.decode("utf-8"))
        model = tokenizers.Tokenizer.from_str(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise BadTokenizer(f"{name}: not UTF-8 text (byte 0x{data[error.start]:02x} at offset {error.start}); "
                           "expected a tokenizer.json") from None
    except Exception as error:  # json's and the Rust parser's errors, in one line
        why = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise BadTokenizer(f"{name}: not a tokenizer.json Hugging Face tokenizers reads ({why})") from None
    model.no_truncation()
    model.no_padding()
    return model, described


def hf_specials(model: tokenizers.Tokenizer, described: dict[str, Any], template: Template, name: str) -> Specials:
    """The special tokens of a Hugging Face tokenizer (`described`: its tokenizer.json's JSON):
    unknown from its model, padding from its padding settings or by name, [CLS]/[SEP] from its
    template, mask by name."""
    def special(token: str | None) -> Special | None:
        number = None if token is None else model.token_to_id(token)
        return None if token is None or number is None else Special(token, number)

    def named(names: Sequence[str]) -> Special | None:
        return next((found for token in names if (found := special(token))), None)

    settings = described.get("model") or {}
    unk = special(settings.get("unk_token"))
    if unk is None and isinstance(settings.get("unk_id"), int):  # Unigram names its unknown by id
        unk = special(model.id_to_token(settings["unk_id"]))
    padding = described.get("padding") or {}
    pad = special(padding.get("pad_token")) or named(PAD_NAMES)
    if unk is None or pad is None:
        role = "unknown" if unk is None else "padding"
        raise BadTokenizer(f"{name}: no {role} token; expected a tokenizer with padding and unknown tokens")
    first = template.before[0][0] if template.before else None
    last = template.after[-1][0] if template.after else None
    return Specials(pad=pad, unk=unk, mask=named(MASK_NAMES),
                    cls=None if first is None else Special(model.id_to_token(first) or "", first),
                    sep=None if last is None else Special(model.id_to_token(last) or "", last))


def hf_template(model: tokenizers.Tokenizer) -> Template:
    """The template a Hugging Face tokenizer's post-processor applies, read off by applying it to
    a word (the special-tokens mask tells its ids from the word's)."""
    if model.post_processor is None:
        return Template()
    word = next((found for probe in ("a", "the", "x", "0", ".")
                 if (found := model.encode([probe], is_pretokenized=True, add_special_tokens=False)).ids), None)
    if word is None:
        raise BadTokenizer("its template can't be read: it encodes no word to any id")
    size = len(word.ids)

    def split(encoding: tokenizers.Encoding, texts: int) -> tuple[list[Part], list[int]]:
        """The runs of special ids around `texts` copies of the word, and each copy's segment."""
        mask, pairs = encoding.special_tokens_mask, list(zip(encoding.ids, encoding.type_ids))
        parts, segments, start = [], [], 0
        for _ in range(texts):
            content = mask.index(0, start)
            parts.append(tuple(pairs[start:content]))
            segments.append(encoding.type_ids[content])
            start = content + size
        parts.append(tuple(pairs[start:]))
        return parts, segments

    (before, after), (segment_a,) = split(model.post_process(word), 1)
    (pair_before, between, pair_after), (pair_a, pair_b) = split(model.post_process(word, word), 2)
    return Template(before, after, pair_before, between, pair_after, segment_a, pair_a, pair_b)


# ---- SentencePiece ----

def sentencepiece_model(data: bytes, name: str) -> sentencepiece.SentencePieceProcessor:
    """A SentencePiece .model from its bytes."""
    model = sentencepiece.SentencePieceProcessor()
    try:
        model.LoadFromSerializedProto(data)
    except (RuntimeError, OSError, TypeError) as error:
        why = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise BadTokenizer(f"{name}: not a SentencePiece model ({why})") from None
    if model.get_piece_size() == 0:
        raise BadTokenizer(f"{name}: not a SentencePiece model (no pieces)")
    return model


def _piece(model: sentencepiece.SentencePieceProcessor, number: int) -> Special | None:
    return Special(model.id_to_piece(number), number) if number >= 0 else None


def _named_piece(model: sentencepiece.SentencePieceProcessor, names: Sequence[str]) -> Special | None:
    for token in names:
        number = model.piece_to_id(token)  # (an unknown piece is the unknown id)
        if model.id_to_piece(number) == token:
            return Special(token, number)
    return None


def sentencepiece_specials(model: sentencepiece.SentencePieceProcessor, name: str) -> Specials:
    """A SentencePiece model's own ids for unknown, padding, beginning and end of sentence, and its
    [CLS], [SEP] and mask pieces when it has them."""
    pad, unk = _piece(model, model.pad_id()) or _named_piece(model, PAD_NAMES), _piece(model, model.unk_id())
    if unk is None or pad is None:
        role = "unknown" if unk is None else "padding"
        raise BadTokenizer(f"{name}: no {role} piece; expected a SentencePiece model with padding and unknown "
                           "ids (trained with --pad_id, as T5's and ALBERT's are)")
    return Specials(pad=pad, unk=unk, bos=_piece(model, model.bos_id()), eos=_piece(model, model.eos_id()),
                    cls=_named_piece(model, ("[CLS]",)), sep=_named_piece(model, ("[SEP]",)),
                    mask=_named_piece(model, MASK_NAMES))


def sentencepiece_template(specials: Specials) -> Template:
    """BERT's template when the model has [CLS] and [SEP] pieces (ALBERT's models): `[CLS] a
    [SEP] b [SEP]`; otherwise the model's own beginning and end of sentence, where it has them:
    `<s> a </s>` and `<s> a </s> b </s>`. Segment 0 up to the first closing id, 1 after."""
    if specials.cls and specials.sep:
        start, end = specials.cls.id, specials.sep.id
        return Template(((start, 0),), ((end, 0),), ((start, 0),), ((end, 0),), ((end, 1),))
    start_part: Part = ((specials.bos.id, 0),) if specials.bos else ()
    end_a: Part = ((specials.eos.id, 0),) if specials.eos else ()
    end_b: Part = ((specials.eos.id, 1),) if specials.eos else ()
    return Template(start_part, end_a, start_part, end_a, end_b)
