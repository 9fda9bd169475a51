"""`Tokenizer`: one object over a BERT vocab.txt, a SentencePiece .model or a Hugging Face
tokenizer.json, whatever the file; `load(path)` reads one from a local path or a URL.

Which file is which goes by its name: `*.json` a tokenizer.json, `*.model` a SentencePiece model,
anything else a vocabulary of one token a line (BERT's vocab.txt).
"""
from __future__ import annotations

import hashlib
from typing import Any, Sequence

import sentencepiece
import tokenizers

from ..media.source import read_whole
from . import backends, bert
from .backends import Special, Specials, WordPieces
from .errors import BadText, BadTokenizer
from .inputs import Inputs, Template, assemble

KINDS = ("wordpiece", "sentencepiece", "tokenizer.json")


def kind_of(name: str) -> str:
    """The kind of tokenizer file `name` is, by its name: "tokenizer.json", "sentencepiece" or
    "wordpiece"."""
    if name.endswith(".json"):
        return "tokenizer.json"
    return "sentencepiece" if name.endswith(".model") else "wordpiece"


def load(path: str, lowercase: bool | None = None) -> Tokenizer:
    """The tokenizer in the file `path` (a local path or a URL, read through `fs`). `lowercase`
    chooses uncased (True, the default) or cased BERT for a vocab.txt; a SentencePiece model and a
    tokenizer.json normalize text their own way and take none.

    Raises BadTokenizer for a file missing, empty or malformed, or without padding or unknown token.
    """
    data = read_whole(path, "a tokenizer file", lambda why: BadTokenizer(f"{path}: {why}"))
    return Tokenizer.from_bytes(data, path, lowercase)


class Tokenizer:
    """A tokenizer read from its file's bytes (`load`, `from_bytes`). Encodes batches of texts in
    the library's own batch calls (Rust or C++), without special ids; `inputs` and `assemble`
    put them in the tokenizer's template.

    Attributes:
        kind: "wordpiece" (a BERT vocab.txt), "sentencepiece" or "tokenizer.json".
        name: the file's path or name, for messages.
        lowercase: for a vocab.txt, uncased (True) or cased; None for the other kinds.
        fingerprint: the sha256 of the file's bytes (hex), for a dataset's metadata.
        vocab_size: how many ids the tokenizer has.
        specials: its special tokens and their ids, as its file defines them.
        template: the special ids it puts around one text and a pair.
    """

    def __init__(self, data: bytes, name: str, lowercase: bool | None = None):
        self.kind = kind_of(name)
        self.name = name
        self.data = data
        self.fingerprint = hashlib.sha256(data).hexdigest()
        if self.kind != "wordpiece" and lowercase is not None:
            raise ValueError(f"{name}: lowercase applies to a vocab.txt only; a {self.kind} file normalizes text "
                             "its own way")
        self.lowercase = (True if lowercase is None else lowercase) if self.kind == "wordpiece" else None
        self._hf: tokenizers.Tokenizer | None = None
        self._spm: sentencepiece.SentencePieceProcessor | None = None
        # a vocab.txt's copy without its normalizer, for ASCII text (bert.ascii_normalized): made at the
        # first batch that has some (30 ms for BERT's 30,522 tokens: not for a tokenizer that only decodes)
        self._ascii: tokenizers.Tokenizer | None = None
        if self.kind == "sentencepiece":
            self._spm = backends.sentencepiece_model(data, name)
            self.specials = backends.sentencepiece_specials(self._spm, name)
            self.template = backends.sentencepiece_template(self.specials)
            self.vocab_size = self._spm.get_piece_size()
            return
        if self.kind == "wordpiece":
            self._hf = backends.wordpiece(data, name, bool(self.lowercase))
            described: dict[str, Any] = {"model": {"unk_token": "[UNK]"}}
        else:
            self._hf, described = backends.tokenizer_json(data, name)
        self.template = backends.hf_template(self._hf)
        self.specials = backends.hf_specials(self._hf, described, self.template, name)
        self.vocab_size = self._hf.get_vocab_size(with_added_tokens=True)

    @classmethod
    def from_bytes(cls, data: bytes, name: str, lowercase: bool | None = None) -> Tokenizer:
        """The tokenizer of a file's bytes; `name` (a path or a file name) tells its kind."""
        return cls(data, name, lowercase)

    def __reduce__(self) -> tuple:  # to worker processes as its file's bytes
        return type(self), (self.data, self.name, self.lowercase)

    def __repr__(self) -> str:
        return f"Tokenizer({self.kind}, {self.name!r}, vocab_size={self.vocab_size})"

    def encode(self, texts: Sequence[str | bytes]) -> list[list[int]]:
        """Each text's ids, without special ids. Bytes are read as UTF-8.

        Raises BadText (with the text's `index`) for bytes that are not UTF-8 or a value that is
        no text."""
        batch = _texts(texts)
        try:
            if self._spm is not None:
                return self._spm.encode(batch, out_type=int)
            assert self._hf is not None
            if self.kind == "wordpiece":
                return self._wordpiece_ids(batch)
            return _ids(self._hf, batch)
        except (TypeError, UnicodeEncodeError):  # a str with lone surrogates (from JSON's "\ud800")
            raise _surrogates(batch) from None

    def _wordpiece_ids(self, batch: list[str]) -> list[list[int]]:
        """A vocab.txt's ids of `batch`: the ASCII texts normalized by `str.translate` and encoded
        without the normalizer, the others with it (the same ids, faster: bert.py)."""
        assert self._hf is not None
        normalized = [bert.ascii_normalized(text, bool(self.lowercase)) for text in batch]
        plain = [text for text in normalized if text is not None]
        fast = iter(_ids(self._without_normalizer(), plain) if plain else [])
        slow = iter(_ids(self._hf, [text for text, done in zip(batch, normalized) if done is None]))
        return [next(slow) if done is None else next(fast) for done in normalized]

    def _without_normalizer(self) -> tokenizers.Tokenizer:
        assert self._hf is not None
        if self._ascii is None:
            self._ascii = backends.without_normalizer(self._hf)
        return self._ascii

    def encode_words(self, sentences: Sequence[Sequence[str]]) -> list[WordPieces]:
        """Each sentence of words (a list of words, as a CoNLL file gives them) as pieces, each with
        the index of the word it came from, so word labels can follow their pieces. Each word is
        normalized and split as a text would be (a WordPiece word "don't" is three words' pieces
        under one index); a SentencePiece word is encoded alone, as a word after a space."""
        for number, sentence in enumerate(sentences):
            if isinstance(sentence, (str, bytes)) or not all(isinstance(word, str) for word in sentence):
                raise BadText(f"expected a list of words (text), received {_shown(sentence)}", number)
        if self._spm is not None:
            flat = [word for sentence in sentences for word in sentence]
            pieces = self._spm.encode(flat, out_type=int) if flat else []
            out, start = [], 0
            for sentence in sentences:
                ids, words = [], []
                for index, word_ids in enumerate(pieces[start:start + len(sentence)]):
                    ids += word_ids
                    words += [index] * len(word_ids)
                out.append(WordPieces(ids, words))
                start += len(sentence)
            return out
        assert self._hf is not None
        try:
            encodings = self._hf.encode_batch([list(sentence) for sentence in sentences], is_pretokenized=True,
                                              add_special_tokens=False)
        except (TypeError, UnicodeEncodeError):
            raise _surrogates([" ".join(sentence) for sentence in sentences]) from None
        return [WordPieces(encoding.ids, [word for word in encoding.word_ids if word is not None])
                for encoding in encodings]

    def decode(self, ids: Sequence[int]) -> str:
        """The text of `ids`, special ids left out (the unknown token stays)."""
        skipped = {special.id for special in self.specials if special is not None} - {self.specials.unk.id}
        kept = [int(number) for number in ids if int(number) not in skipped]
        if self._spm is not None:
            return self._spm.decode(kept)
        assert self._hf is not None
        return self._hf.decode(kept, skip_special_tokens=False)

    def tokens(self, ids: Sequence[int]) -> list[str]:
        """Each id's token (piece) as the vocabulary spells it, special tokens included."""
        if self._spm is not None:
            return [self._spm.id_to_piece(int(number)) for number in ids]
        assert self._hf is not None
        return [self._hf.id_to_token(int(number)) or "" for number in ids]

    def assemble(self, first: Sequence[Sequence[int]], second: Sequence[Sequence[int]] | None = None,
                 max_length: int | None = None, side: str = "right") -> Inputs:
        """Ids (of `encode`, or windows') in the template, a pair when `second` is given, cut to
        `max_length` ids with special ids (see `inputs.assemble`)."""
        return assemble(self.template, first, second, max_length, side)

    def inputs(self, first: Sequence[str | bytes], second: Sequence[str | bytes] | None = None,
               max_length: int | None = None, side: str = "right") -> Inputs:
        """Texts (or pairs of texts: `first[i]` with `second[i]`) encoded and placed in the
        template: `[CLS] a [SEP]`, `[CLS] a [SEP] b [SEP]` with segment ids 0 then 1 for BERT; cut
        to `max_length` ids from the `side` ("right": the end; "left": the start), a pair's longer
        text first as BERT's `_truncate_seq_pair` does. `Inputs.truncated` counts the examples
        cut."""
        return self.assemble(self.encode(first), None if second is None else self.encode(second), max_length, side)


def _ids(model: tokenizers.Tokenizer, batch: list[str]) -> list[list[int]]:
    """Each text's ids from a Hugging Face tokenizer, without special ids."""
    return [encoding.ids for encoding in model.encode_batch_fast(batch, add_special_tokens=False)] if batch else []


def _shown(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def _texts(texts: Sequence[str | bytes]) -> list[str]:
    """The batch as str, bytes read as UTF-8, or BadText naming the first that isn't text."""
    if isinstance(texts, (str, bytes)):
        raise TypeError("expected a sequence of texts, received one text: wrap it in a list")
    batch: list[Any] = list(texts)
    for index, text in enumerate(batch):
        if isinstance(text, str):
            continue
        if isinstance(text, (bytes, bytearray, memoryview)):
            raw = bytes(text)
            try:
                batch[index] = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise BadText(f"not valid UTF-8 text (byte 0x{raw[error.start]:02x} at offset {error.start})",
                              index) from None
        else:
            raise BadText(f"expected text, received {_shown(text)}", index)
    return batch


def _surrogates(batch: list[str]) -> BadText:
    """The error for the first text of `batch` that can't be written as UTF-8 (a lone surrogate)."""
    for index, text in enumerate(batch):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as error:
            return BadText(f"not valid text: a lone surrogate U+{ord(text[error.start]):04X} at character "
                           f"{error.start}, which UTF-8 can't hold", index)
    return BadText("not valid text", 0)


__all__ = ["KINDS", "Special", "Specials", "Template", "Tokenizer", "WordPieces", "kind_of", "load"]
