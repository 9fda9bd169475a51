"""A text feature's tokenizer (features/text.py): the file named in the spec read once a process
and sent to workers as its bytes (`HeldTokenizer`), what a dataset records of it (`recorded:`), and
the vocabulary a build learns in its place (`vocabulary:`, build/vocabulary.py)."""
from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .. import fs
from ..errors import UsageError
from ..spec.fields import At, Section, meta

if TYPE_CHECKING:
    from ..text import Tokenizer

TokenizerKind = Literal["wordpiece", "sentencepiece", "tokenizer.json"]



@dataclass(frozen=True, kw_only=True)
class RecordedTokenizer(Section):
    """What a build knows of its tokenizer file without reading it again."""

    kind: TokenizerKind = meta("wordpiece (a BERT vocab.txt), sentencepiece (a .model) or tokenizer.json")
    sha256: str = meta("the sha256 of the file's bytes (hex)")
    vocab_size: int = meta("how many ids the tokenizer has")
    pad_id: int = meta("the id of its padding token, what reading pads the ids with")
    unk_id: int = meta("the id of its unknown token, which the statistics count")
    # what the masked-language-model view (input.mlm) needs: none in a dataset built before it
    mask_id: int | None = meta("the id of its mask token ([MASK], <mask>), if it has one", None)
    special_ids: list[int] | None = meta(
        "the ids of its special tokens that are no text (padding, [CLS] and [SEP] or <s> and </s>, the mask "
        "token; not the unknown token), which the masked-language-model view never masks", None)
    file: str | None = meta("a learned vocabulary's file, in the dataset's folder beside the shards "
                            "(`vocabulary:`)", None)


LearnedKind = Literal["wordpiece", "bpe", "unigram", "word"]


@dataclass(frozen=True, kw_only=True)
class Vocabulary(Section):
    """A vocabulary the build learns from the train split's texts (`vocabulary:`, instead of a
    `tokenizer:` file): build/vocabulary.py counts the words, `text.learn` makes the tokenizer."""

    kind: LearnedKind = meta("wordpiece (BERT's sub-word pieces, a vocab.txt), bpe (byte-pair merges), unigram "
                             "(SentencePiece's unigram pieces; both a tokenizer.json) or word (whole words, a "
                             "vocab.txt)")
    size: int = meta("about this many tokens, the five special ones ([PAD] [UNK] [CLS] [SEP] [MASK]) included")
    min_count: int = meta("words seen fewer times than this in the train split take no part", 1)

    def check(self, at: At) -> None:
        if self.size <= len(LEARNED_SPECIALS):
            raise (at / "size").error(f"{self.size}: expected more than the {len(LEARNED_SPECIALS)} special tokens "
                                      f"({' '.join(LEARNED_SPECIALS)})")
        if self.min_count < 1:
            raise (at / "min_count").error(f"expected a count, 1 or more, received {self.min_count}")


# what every learned vocabulary starts with (text/learn.py's SPECIALS), and its template's ids a text
LEARNED_SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


# tokenizers read in this process, by (sha256, name, lowercase): a worker reads each file once
_LOADED: dict[tuple[str, str, bool | None], "Tokenizer"] = {}
_LOADING = threading.Lock()


def held_tokenizer(data: bytes, name: str, lowercase: bool | None, sha256: str) -> "HeldTokenizer":
    """The tokenizer of a file's bytes, read once a process (what a pickled HeldTokenizer becomes)."""
    from ..text import Tokenizer
    with _LOADING:
        key = (sha256, name, lowercase)
        if key not in _LOADED:
            _LOADED[key] = Tokenizer.from_bytes(data, name, lowercase)
        return HeldTokenizer(_LOADED[key])


class HeldTokenizer:
    """A feature's tokenizer: sent to worker processes as its file's bytes, read there once."""

    def __init__(self, tokenizer: "Tokenizer"):
        self.tokenizer = tokenizer

    def __reduce__(self) -> tuple:
        found = self.tokenizer
        return held_tokenizer, (found.data, found.name, found.lowercase, found.fingerprint)

    def __repr__(self) -> str:
        return repr(self.tokenizer)


def load_tokenizer(path: str, lowercase: bool | None, at: At) -> "Tokenizer":
    """The tokenizer file at `path`, or SpecError at `at` (the text extra missing, the file missing
    or malformed, without padding or unknown tokens)."""
    try:
        from .. import text
    except ImportError as error:
        raise at.error(f"type: text needs the text extra ({error.name} is not installed): "
                       "pip install 'tfrecord-builder[text]'") from None
    try:
        with fs.open_file(path) as file:
            data = file.read()
    except FileNotFoundError:
        raise at.error(f"{path}: file not found; expected a BERT vocab.txt, a SentencePiece .model or a "
                       "tokenizer.json") from None
    except IsADirectoryError:
        raise at.error(f"{path}: is a folder, not a tokenizer file") from None
    except OSError as error:
        raise at.error(f"{path}: can't read the file ({error.strerror or error})") from None
    except UsageError as error:  # a URL no filesystem serves
        raise at.error(str(error)) from None
    try:
        return held_tokenizer(data, path, lowercase, hashlib.sha256(data).hexdigest()).tokenizer
    except text.BadTokenizer as error:
        raise at.error(str(error)) from None
    except ValueError as error:  # lowercase given for a file that normalizes text its own way
        raise at.error(str(error)) from None


def recorded_of(found: "Tokenizer", file: str | None = None) -> RecordedTokenizer:
    """What a dataset records of the tokenizer it was built with (a learned one's `file` too)."""
    kind: Any = found.kind  # (one of TokenizerKind: text.KINDS)
    specials = found.specials
    return RecordedTokenizer(kind=kind, sha256=found.fingerprint, vocab_size=found.vocab_size,
                             pad_id=specials.pad.id, unk_id=specials.unk.id,
                             mask_id=specials.mask.id if specials.mask else None,
                             special_ids=sorted({special.id for special in specials
                                                 if special is not None and special.id != specials.unk.id}),
                             file=file)
