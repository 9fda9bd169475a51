"""`text`: a string column (or a pair of them) as token ids, by a tokenizer file named in the spec.

Writing: the column's texts are encoded a batch at a time by the tokenizer library
(tfrecord_builder/text: a BERT vocab.txt, a SentencePiece .model or a Hugging Face
tokenizer.json), placed in the tokenizer's own template (`[CLS] a [SEP]`, `[CLS] a [SEP] b [SEP]`;
`special_tokens: false` leaves it out) and cut to `max_length` ids (`truncation: right` keeps the
start, `left` the end; a pair loses ids from its longer text first, as BERT does), each cut
counted in a notice of the build, as each text holding an unknown token is. `words: true` reads
lists of words (already split, as a CoNLL file or JSON lists give them) instead of texts.

Stored form (a record): `KEY` the ids (an int64 list), `KEY_length` their number (int64), and for
a pair `KEY_segment_ids` (0 for the first text and its special ids, 1 for the second's). Not
`KEY/length`: TensorFlow Datasets would nest it inside `KEY`, which is a Sequence. Under
`sequence:` the ids are the steps, one id a step, and the record's length is its number of steps.

The tokenizer is read when the spec is loaded, so `validate` refuses a missing or malformed file
(or one without padding and unknown tokens) at its key; the feature holds it (`tokenizer`),
pickled to worker processes as the file's bytes and read there once a process. Its kind, sha256,
size and padding id are recorded in the spec (`recorded:`), so the dataset's saved spec names the
file it was built with, reading needs no tokenizer file (the padding id is known), and a spec that
gives `recorded:` refuses a file whose sha256 differs.

Reading: `NAME` the ids padded with the tokenizer's padding id to the batch's longest, `NAME_mask`
(bool, true on ids) and, for a pair, `NAME_segment_ids` (padded with 0); with `input: {text:
keras_hub}` the features dict is exactly KerasHub's `token_ids`, `padding_mask`, `segment_ids`.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Mapping, Sequence

import numpy as np

from .. import fs
from ..errors import SpecError, UsageError
from ..spec.fields import At, Section, describe, meta
from . import tfds
from .base import DecodeStep, EncodeContext, Feature, ParseSpec, register
from .described import Card, Counted, CountedIds
from .gathered import GatheredColumns
from .values import Values

if TYPE_CHECKING:
    from ..text import Tokenizer

TokenizerKind = Literal["wordpiece", "sentencepiece", "tokenizer.json"]


def _source(value: Any, at: At) -> str | list[str]:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and len(value) == 2 and all(isinstance(item, str) for item in value):
        return list(value)
    raise at.error(f"expected a column name, or a list of two (a pair of texts: [question, passage]), "
                   f"received {describe(value)}")


@dataclass(frozen=True, kw_only=True)
class RecordedTokenizer(Section):
    """What a build knows of its tokenizer file without reading it again."""

    kind: TokenizerKind = meta("wordpiece (a BERT vocab.txt), sentencepiece (a .model) or tokenizer.json")
    sha256: str = meta("the sha256 of the file's bytes (hex)")
    vocab_size: int = meta("how many ids the tokenizer has")
    pad_id: int = meta("the id of its padding token, what reading pads the ids with")
    unk_id: int = meta("the id of its unknown token, which the statistics count")


# tokenizers read in this process, by (sha256, name, lowercase): a worker reads each file once
_LOADED: dict[tuple[str, str, bool | None], "Tokenizer"] = {}
_LOADING = threading.Lock()


def _held(data: bytes, name: str, lowercase: bool | None, sha256: str) -> "HeldTokenizer":
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
        return _held, (found.data, found.name, found.lowercase, found.fingerprint)

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
        return _held(data, path, lowercase, hashlib.sha256(data).hexdigest()).tokenizer
    except text.BadTokenizer as error:
        raise at.error(str(error)) from None
    except ValueError as error:  # lowercase given for a file that normalizes text its own way
        raise at.error(str(error)) from None


@dataclass(frozen=True, kw_only=True)
class TextFeature(Feature):
    """Token ids of a text: `{type: text, tokenizer: vocab.txt, max_length: 256}`."""

    source: str | list[str] | None = meta(  # type: ignore[assignment]  # a column, or a pair of them
        "the column of the text (default: the feature's name), or a list of two columns: a pair of texts "
        "(text_a, text_b: a question and a passage), stored with segment ids", None, convert=_source,
        schema={"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}, "minItems": 2,
                                                "maxItems": 2}]})
    tokenizer: str = meta("the tokenizer file, relative to the spec: a BERT vocab.txt (WordPiece), a "
                          "SentencePiece .model or a Hugging Face tokenizer.json")
    lowercase: bool | None = meta("a vocab.txt only: true (uncased BERT, the default) or false (cased)", None)
    max_length: int | None = meta("at most this many ids a record, special ids included (each text cut is "
                                  "counted in a notice of the build)", None)
    truncation: Literal["right", "left"] = meta(
        "which end of a text too long loses ids: right (keep the start) or left (keep the end)", "right")
    special_tokens: bool = meta("put the ids in the tokenizer's template ([CLS] a [SEP] b [SEP] for BERT); "
                                "false: the text's ids alone", True)
    words: bool = meta("the column holds lists of words, already split (a CoNLL file's, JSON lists)", False)
    min_length: int | None = meta("a text of fewer tokens than this (an empty one, for 1) is an error naming "
                                  "its row (skipped under on_error: skip)", None)
    recorded: RecordedTokenizer | None = meta(
        "the tokenizer file's kind, sha256, size, padding and unknown ids: filled in when the spec is loaded and kept in "
        "the dataset's saved spec; given in a spec, a file whose sha256 differs is refused", None)
    held: HeldTokenizer | None = dataclasses.field(default=None, compare=False, repr=False,
                                                   metadata={"internal": True})
    # why the tokenizer isn't held where it recorded one: its file gone or changed (None: held)
    unusable: str | None = dataclasses.field(default=None, compare=False, repr=False, metadata={"internal": True})

    def normalised(self, at: At) -> "TextFeature":
        """With its tokenizer read (and recorded). Where it recorded one already (a dataset's saved
        spec) and the file is gone or changed, it keeps what it recorded, all that reading needs,
        and says why wherever the file itself is needed (a build, decoding text)."""
        if self.lowercase is not None and self.tokenizer.endswith((".json", ".model")):
            raise (at / "lowercase").error("applies to a vocab.txt only; a SentencePiece model or a tokenizer.json "
                                           "normalizes text its own way")
        folder = os.path.dirname(os.path.abspath(at.document.file)) if at.document is not None else os.getcwd()
        path = fs.resolve(self.tokenizer, folder)
        try:
            found = load_tokenizer(path, self.lowercase, at / "tokenizer")
        except SpecError:
            if self.recorded is not None and not fs.exists(path):
                return dataclasses.replace(self, unusable=f"{path}: file not found (the dataset recorded sha256 "
                                                          f"{self.recorded.sha256[:12]}...)")
            raise
        if self.recorded is not None and self.recorded.sha256 != found.fingerprint:
            return dataclasses.replace(self, unusable=f"{path}: sha256 {found.fingerprint[:12]}..., expected "
                                                      f"{self.recorded.sha256[:12]}... (`recorded:`): not the file "
                                                      "the dataset was built with")
        kind: Any = found.kind  # (one of TokenizerKind: text.KINDS)
        recorded = RecordedTokenizer(kind=kind, sha256=found.fingerprint, vocab_size=found.vocab_size,
                                     pad_id=found.specials.pad.id, unk_id=found.specials.unk.id)
        return dataclasses.replace(self, recorded=recorded, held=HeldTokenizer(found))

    def check(self, at: At) -> None:
        if self.min_length is not None and self.min_length < 0:
            raise (at / "min_length").error(f"expected a number of tokens, 0 or more, received {self.min_length}")
        if self.max_length is not None:
            added = self.tokenizer_object.template.added(self.is_pair) if self.special_tokens and self.held else 0
            if self.max_length < added + 1:
                raise (at / "max_length").error(
                    f"{self.max_length} leaves no room for text: the template adds {added} special ids")
        if self.columns is not None:
            raise (at / "columns").error("a text reads one column, or a pair: give `source: [a, b]`")

    def check_sequence(self, at: At) -> None:
        """Per step: one id a step; not a pair, whose segment ids would be a second list of steps."""
        if self.is_pair:
            raise (at / "source").error("a pair of texts has segment ids beside its ids: declare it under "
                                        "`context:` or `features:`, not per step")

    @property
    def is_variable(self) -> bool:
        """A record's ids are as many as its text's (per step: one id a step)."""
        return not self.sequence

    @property
    def holds_text(self) -> bool:
        return not self.sequence

    @property
    def is_pair(self) -> bool:
        return isinstance(self.source, list)

    @property
    def source_name(self) -> str:
        if isinstance(self.source, list):
            return self.source[0]
        return self.source if self.source is not None else self.name

    @property
    def source_names(self) -> list[str]:
        """Both columns of a pair: what the source must offer and the build reads."""
        return list(self.source) if isinstance(self.source, list) else [self.source_name]

    @property
    def linked_columns(self) -> list[str]:
        """A pair's second column, which makes the batch hand `encode` its columns gathered
        (the first two of them: its `source_names`, then this one again)."""
        return [self.source[1]] if isinstance(self.source, list) else []

    @property
    def tokenizer_object(self) -> "Tokenizer":
        """The tokenizer (read when the spec was loaded)."""
        if self.held is None:
            raise SpecError(f"feature `{self.name}`: tokenizer {self.unusable}; put that file back to build or "
                            "decode text")
        return self.held.tokenizer

    @property
    def pad_id(self) -> int:
        assert self.recorded is not None
        return self.recorded.pad_id

    @property
    def length_key(self) -> str:
        return f"{self.record_key}_length"

    @property
    def segments_key(self) -> str:
        return f"{self.record_key}_segment_ids"

    @property
    def mask_name(self) -> str:
        return f"{self.name}_mask"

    @property
    def segments_name(self) -> str:
        return f"{self.name}_segment_ids"

    @property
    def companion_names(self) -> list[str]:
        if self.sequence:
            return []
        return [self.mask_name] + ([self.segments_name] if self.is_pair else [])

    # ---- writing side ----------------------------------------------------------------------------
    def encode(self, values: Sequence[Any], context: EncodeContext) -> dict[str, Values]:
        from ..text import BadText
        tokenizer = self.tokenizer_object
        columns = values.columns if isinstance(values, GatheredColumns) else [values]
        texts = []
        for number, column in enumerate(columns[:2]):
            column = list(column)
            for row, value in enumerate(column):
                if value is None:
                    raise self.fail(context.origin, row, f"missing text{' (the second of the pair)' if number else ''}")
            try:
                texts.append([pieces.ids for pieces in tokenizer.encode_words(column)] if self.words
                             else tokenizer.encode(column))
            except BadText as error:
                raise self.fail(context.origin, error.index, str(error)) from None
        self._check_lengths(texts, context)
        unknown = tokenizer.specials.unk.id
        for row in range(len(texts[0])):
            if any(unknown in text[row] for text in texts):
                context.notices.note(f"feature `{self.name}`: {{count}} text{{s}} with unknown tokens "
                                     f"({tokenizer.specials.unk.token})")
        if self.special_tokens:
            placed = tokenizer.assemble(texts[0], texts[1] if self.is_pair else None, self.max_length, self.truncation)
            ids, segments, truncated = placed.ids, placed.segments, placed.truncated
        else:
            ids, segments, truncated = self._cut(texts)
        if truncated:
            for _ in range(truncated):
                context.notices.note(f"feature `{self.name}`: {{count}} text{{s}} cut to max_length: "
                                     f"{self.max_length} (truncation: {self.truncation})")
        lengths = np.array([len(row) for row in ids], dtype=np.int64)
        flat = np.fromiter((number for row in ids for number in row), dtype=np.int64, count=int(lengths.sum()))
        marks = self._marks(texts, lengths)
        if self.sequence:  # one id a step
            return {self.record_key: Values("int64", flat, np.ones(len(flat), dtype=np.int64), steps=lengths,
                                            marks=marks)}
        ones = np.ones(len(ids), dtype=np.int64)
        encoded = {self.record_key: Values("int64", flat, lengths, marks=marks),
                   self.length_key: Values("int64", lengths, ones)}
        if self.is_pair:
            encoded[self.segments_key] = Values("int64", np.fromiter(
                (number for row in segments for number in row), dtype=np.int64, count=len(flat)), lengths)
        return encoded

    def _marks(self, texts: list[list[list[int]]], lengths: np.ndarray) -> dict[str, np.ndarray] | None:
        """Per record, the ids max_length cut off (`truncated`, for the statistics): its texts' ids
        and the template's, less those kept."""
        if self.max_length is None:
            return None
        added = self.tokenizer_object.template.added(self.is_pair) if self.special_tokens else 0
        whole = np.array([sum(len(text[row]) for text in texts) + added for row in range(len(lengths))], np.int64)
        return {"truncated": whole - lengths}

    def _check_lengths(self, texts: list[list[list[int]]], context: EncodeContext) -> None:
        if self.min_length is None:
            return
        for number, encoded in enumerate(texts):
            for row, ids in enumerate(encoded):
                if len(ids) < self.min_length:
                    which = " (the second of the pair)" if number else ""
                    raise self.fail(context.origin, row, f"{_tokens(len(ids))}{which}; "
                                                         f"expected at least {self.min_length} (min_length)")

    def _cut(self, texts: list[list[list[int]]]) -> tuple[list[list[int]], list[list[int]], int]:
        """Without special ids: a text's ids, or a pair's side by side (segment 0 then 1), cut as
        the template would be, with no special ids added."""
        from ..text import Template
        from ..text.inputs import assemble
        result = assemble(Template(), texts[0], texts[1] if self.is_pair else None, self.max_length, self.truncation)
        return result.ids, result.segments, result.truncated

    def check_stored(self, stored: dict[str, tuple[str, list[Any]]]) -> str | None:
        kind, ids = stored.get(self.record_key, ("", []))
        if kind != "int64":
            return f"expected token ids (int64) under {self.record_key!r}"
        if self.sequence:
            return None
        kind, length = stored.get(self.length_key, ("", []))
        if kind != "int64" or len(length) != 1 or length[0] != len(ids):
            return f"expected the number of ids ({len(ids)}) under {self.length_key!r}"
        if self.is_pair:
            kind, segments = stored.get(self.segments_key, ("", []))
            if kind != "int64" or len(segments) != len(ids):
                return f"expected {len(ids)} segment ids under {self.segments_key!r}"
        if self.recorded is not None and any(not 0 <= number < self.recorded.vocab_size for number in ids):
            return f"an id outside the tokenizer's {self.recorded.vocab_size} ids"
        return None

    def statistics_values(self, encoded: dict[str, Values]) -> Values:
        """The ids: their figures (the smallest and largest id used), and the lengths of a variable
        number of values, each text's number of ids (special ids included); per step, the steps a
        record's length (and a bucketed input_fn) counts."""
        return encoded[self.record_key]

    @property
    def counted(self) -> Counted:
        """Its ids, and of them the unknown token's (`tallies.unknown_tokens`: how many, in how
        many records); each id counted (`tokens`: the most frequent, the vocabulary's coverage,
        the template's special ids left out) and, with max_length, the ids cut off each record
        (`marked.truncated`)."""
        if self.recorded is None:
            return Counted()
        special = sorted(set(self._special_ids())) if self.special_tokens and self.held is not None else []
        return Counted(tallied=(("unknown_tokens", self.recorded.unk_id),),
                       marked=("truncated",) if self.max_length is not None else (),
                       ids=CountedIds(self.recorded.vocab_size, tuple(special), self.recorded.unk_id))

    def _special_ids(self) -> list[int]:
        template = self.tokenizer_object.template
        parts = (template.before, template.after, template.pair_before, template.between, template.pair_after)
        return [number for part in parts for number, _ in part]

    @property
    def card(self) -> Card:
        """The `text` card: its lengths in ids (the histogram the report draws of every feature of a
        variable number of values), truncation and unknown tokens, the most frequent tokens, the
        vocabulary's coverage and a few records as their tokens."""
        return Card("text")

    # ---- reading side ----------------------------------------------------------------------------
    def parsing(self) -> dict[str, ParseSpec]:
        if self.sequence:
            return {self.record_key: ("fixed_steps", "int64", [])}
        parsed: dict[str, ParseSpec] = {self.record_key: ("var", "int64", [None]),
                                        self.length_key: ("fixed", "int64", [])}
        if self.is_pair:
            parsed[self.segments_key] = ("var", "int64", [None])
        return parsed

    def decoding(self, options: Any) -> list[DecodeStep]:
        if self.sequence:
            return [("pad_steps", {"length": {"lengths": self.record_key}, "pad": self.pad_id})]
        return [("padded_ids", {"pad": self.pad_id})]

    def reading(self, options: Any) -> dict[str, Any]:
        """Its description, with `companions`: the padding mask and a pair's segment ids."""
        described = super().reading(options)
        if self.sequence:
            return described
        companions: dict[str, Any] = {
            self.mask_name: {"parse": {self.length_key: ("fixed", "int64", [])}, "decode": [("length_mask", {})]}}
        if self.is_pair:
            companions[self.segments_name] = {"parse": {self.segments_key: ("var", "int64", [None])},
                                              "decode": [("padded_ids", {"pad": 0})]}
        return {**described, "companions": companions}

    def tfds_features(self, options: Any) -> dict[str, dict[str, Any]]:
        """The ids as TFDS's Sequence of int64 (its length and segment ids beside them)."""
        ids = tfds.sequence(tfds.tensor([], "int64"))
        if self.sequence:
            return {self.record_key: ids}
        entries = {self.record_key: ids, self.length_key: tfds.tensor([], "int64")}
        if self.is_pair:
            entries[self.segments_key] = tfds.sequence(tfds.tensor([], "int64"))
        return entries

    def tfds_feature(self, options: Any) -> dict[str, Any]:
        return tfds.sequence(tfds.tensor([], "int64"))

    def describe(self) -> str:
        kind = self.recorded.kind if self.recorded is not None else "text"
        return f"text {kind} int64 [{'steps' if self.sequence else 'null'}] (ids{', a pair' if self.is_pair else ''})"

    def text_of(self, ids: Sequence[int]) -> str:
        """The text of stored ids, special ids left out (what `tb.read(decode_text=True)` gives)."""
        return self.tokenizer_object.decode([int(number) for number in ids])

    def tokens_of(self, ids: Sequence[int]) -> list[str]:
        """Each id's token as the tokenizer spells it (`[CLS]`, `##s`, `▁the`); SpecError where
        its file is gone or changed."""
        return self.tokenizer_object.tokens([int(number) for number in ids])

    def linked(self, features: Mapping[str, Feature], at: At) -> "TextFeature":
        """Refuses another feature stored under its length's or segment ids' record key."""
        own = [self.length_key] + ([self.segments_key] if self.is_pair else []) if not self.sequence else []
        for name, other in features.items():
            if other.record_key in own:
                raise at.error(f"stores `{other.record_key}` beside its ids, already feature `{name}`'s record key; "
                               "rename one (or give it another `key:`)")
        return self


register("text")(TextFeature)


def _tokens(count: int) -> str:
    return "empty text" if not count else f"{count} token{'' if count == 1 else 's'}"
