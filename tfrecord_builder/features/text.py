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

`layout: model_garden` (features/model_garden.py) stores the ids padded to `max_length` beside
`input_mask` and `segment_ids`, as TF Model Garden's loaders parse them. With `words: true` the
feature places values given one a word on its pieces (`on_pieces`: a class_label's `align:
words`, features/aligned.py).
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Mapping, Sequence

import numpy as np

from .. import fs
from ..errors import SpecError
from ..spec.fields import At, describe, meta
from . import aligned, model_garden, tfds
from .base import DecodeStep, EncodeContext, Feature, ParseSpec, TokenIds, register
from .described import Card, Counted, CountedIds
from .gathered import GatheredColumns
from .text_layouts import IdsLayout, OwnIds, StepIds
from .text_pack import PackedText
from .text_tokenizer import (HeldTokenizer, RecordedTokenizer, Vocabulary, held_tokenizer, load_tokenizer,
                             recorded_of)
from .text_window import FIRST, TextWindow, check_window, window_values, windows_of
from .values import Values, flat_int64

if TYPE_CHECKING:
    from ..text import Tokenizer

def _source(value: Any, at: At) -> str | list[str]:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and len(value) == 2 and all(isinstance(item, str) for item in value):
        return list(value)
    raise at.error(f"expected a column name, or a list of two (a pair of texts: [question, passage]), "
                   f"received {describe(value)}")


@dataclass(frozen=True, kw_only=True)
class TextFeature(Feature):
    """Token ids of a text: `{type: text, tokenizer: vocab.txt, max_length: 256}`."""

    source: str | list[str] | None = meta(  # type: ignore[assignment]  # a column, or a pair of them
        "the column of the text (default: the feature's name), or a list of two columns: a pair of texts "
        "(text_a, text_b: a question and a passage), stored with segment ids", None, convert=_source,
        schema={"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}, "minItems": 2,
                                                "maxItems": 2}]})
    tokenizer: str | None = meta("the tokenizer file, relative to the spec: a BERT vocab.txt (WordPiece), a "
                                 "SentencePiece .model or a Hugging Face tokenizer.json (or `vocabulary:`)", None)
    vocabulary: Vocabulary | None = meta(
        "a vocabulary learned from the train split's texts by the build and written beside the shards, instead of "
        "a `tokenizer:` file: {kind: wordpiece | bpe | unigram | word, size: N, min_count: k}", None)
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
    layout: Literal["model_garden"] | None = meta(
        "model_garden: the ids padded to max_length, with input_mask and segment_ids beside them (int64, "
        "max_length each), as TF Model Garden's sentence prediction and tagging loaders read them", None)
    # why the tokenizer isn't held where it recorded one: its file gone or changed (None: held)
    unusable: str | None = dataclasses.field(default=None, compare=False, repr=False, metadata={"internal": True})
    # ---- windows and packing (features/text_window.py, features/text_pack.py) ----
    window: TextWindow | None = meta("cut a long text into windows of ids, one record each, with its offset "
                                     "(`{tokens: 512, stride: 128}`: tokens counts special ids too)", None)
    # the spec's `pack: {length: N}`, set by the spec: its records are packs of N ids (None: not packed)
    packed: int | None = dataclasses.field(default=None, compare=False, repr=False, metadata={"internal": True})

    def normalised(self, at: At) -> "TextFeature":
        """With its tokenizer read (and recorded). Where it recorded one already (a dataset's saved
        spec) and the file is gone or changed, it keeps what it recorded, all that reading needs,
        and says why wherever the file itself is needed (a build, decoding text)."""
        if (self.tokenizer is None) == (self.vocabulary is None):
            raise at.error("expected a tokenizer file (`tokenizer: vocab.txt`) or a vocabulary to learn "
                           "(`vocabulary: {kind: wordpiece, size: 8000}`): exactly one of the two")
        if self.vocabulary is not None:  # learned by the build; a dataset's saved spec finds it in its folder
            return dataclasses.replace(self, unusable=None if self.recorded is None else
                                       f"{self.recorded.file}: a learned vocabulary, read from the dataset's folder")
        assert self.tokenizer is not None
        if self.lowercase is not None and self.tokenizer.endswith((".json", ".model")):
            raise (at / "lowercase").error("applies to a vocab.txt only; a SentencePiece model or a tokenizer.json "
                                           "normalizes text its own way")
        folder = os.path.dirname(os.path.abspath(at.document.file)) if at.document is not None else os.getcwd()
        path = fs.resolve(self.tokenizer, folder)
        try:
            found = load_tokenizer(path, self.lowercase, at / "tokenizer")
        except SpecError:
            if self.recorded is not None and not fs.exists(path):
                return self._without_file(path, None)
            raise
        if self.recorded is not None and self.recorded.sha256 != found.fingerprint:
            return self._without_file(path, found.fingerprint)
        return dataclasses.replace(self, recorded=recorded_of(found), held=HeldTokenizer(found))

    def check(self, at: At) -> None:
        if self.min_length is not None and self.min_length < 0:
            raise (at / "min_length").error(f"expected a number of tokens, 0 or more, received {self.min_length}")
        if self.max_length is not None:
            added = self.tokenizer_object.template.added(self.is_pair) if self.special_tokens and self.held else 0
            if self.special_tokens and self.vocabulary is not None:  # BERT's template: [CLS] a [SEP] (b [SEP])
                added = 3 if self.is_pair else 2
            if self.max_length < added + 1:
                raise (at / "max_length").error(
                    f"{self.max_length} leaves no room for text: the template adds {added} special ids")
        if self.columns is not None:
            raise (at / "columns").error("a text reads one column, or a pair: give `source: [a, b]`")
        if self.window is not None:
            if self.max_length is not None:
                raise (at / "max_length").error("a window's `tokens` is each record's length: leave max_length out "
                                                "beside window:")
            added = self.tokenizer_object.template.added(self.is_pair) if self.special_tokens and self.held else 0
            check_window(self.window, added, self.is_pair, at / "window")
        if self.layout is not None and self.window is not None:
            raise (at / "layout").error("Model Garden's records are max_length ids long, and a window's are "
                                        "window.tokens long: leave one of layout: and window: out")
        if self.layout == model_garden.LAYOUT and self.max_length is None:
            raise (at / "layout").error("Model Garden's records are all max_length ids long: give `max_length`")

    def check_sequence(self, at: At) -> None:
        """Per step: one id a step; not a pair, whose segment ids would be a second list of steps."""
        if self.is_pair:
            raise (at / "source").error("a pair of texts has segment ids beside its ids: declare it under "
                                        "`context:` or `features:`, not per step")
        if self.window is not None:
            raise (at / "window").error("cuts a text into records: declare it under `context:` or `features:`, "
                                        "not per step")
        if self.layout is not None:
            raise (at / "layout").error("Model Garden's layout stores a record's ids as one list: declare the text "
                                        "under `context:` or `features:`")

    @property
    def is_variable(self) -> bool:
        """A record's ids are as many as its text's (per step: one id a step; packed: `pack.length`)."""
        return not self.sequence and self.packed is None

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
        """The tokenizer (read when the spec was loaded, or learned by the build)."""
        if self.held is None and self.vocabulary is not None and self.unusable is None:
            raise SpecError(f"feature `{self.name}`: its vocabulary is learned by the build (`vocabulary:`), not "
                            "there yet")
        if self.held is None:
            raise SpecError(f"feature `{self.name}`: tokenizer {self.unusable}; put that file back to build or "
                            "decode text")
        return self.held.tokenizer

    @property
    def pad_id(self) -> int:
        return self.recorded_tokenizer.pad_id

    @property
    def recorded_tokenizer(self) -> RecordedTokenizer:
        """What the dataset records of its tokenizer; a vocabulary the build learns has none before
        the build, so nothing that reads its ids (the generated module) can be written before it."""
        if self.recorded is None:
            raise SpecError(f"feature `{self.name}`: its vocabulary is learned by the build (`vocabulary:`), so its "
                            "ids are known only then; the build writes the generated module into the dataset's "
                            "folder (`tfrecord-builder generate` needs a `tokenizer:` file)")
        return self.recorded

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
    def ids_layout(self) -> IdsLayout:
        """How its ids lie in a record (features/text_layouts.py): per step, packed, Model
        Garden's, or its own list beside its length."""
        if self.sequence:
            return StepIds(self)
        if self.packed is not None:
            return PackedText(self)
        if self.layout == model_garden.LAYOUT:
            return model_garden.ModelGardenIds(self)
        return OwnIds(self)

    @property
    def padded_length(self) -> int | None:
        return self.ids_layout.padded_length

    @property
    def companion_names(self) -> list[str]:
        return self.ids_layout.names

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
                texts.append([pieces.ids for pieces in aligned.split_once(tokenizer, column)] if self.words
                             else tokenizer.encode(column))
            except BadText as error:
                raise self.fail(context.origin, error.index, str(error)) from None
        self._check_lengths(texts, context)
        unknown = tokenizer.specials.unk.id
        with_unknown = [unknown in ids for ids in texts[0]]
        for text in texts[1:]:
            with_unknown = [seen or unknown in ids for seen, ids in zip(with_unknown, text)]
        for _ in range(sum(with_unknown)):
            context.notices.note(f"feature `{self.name}`: {{count}} text{{s}} with unknown tokens "
                                 f"({tokenizer.specials.unk.token})")
        if self.window is not None:  # the text's ids whole: fan_out cuts them into windows
            return self._whole(texts)
        if self.special_tokens:
            placed = tokenizer.assemble(texts[0], texts[1] if self.is_pair else None, self.max_length, self.truncation)
            ids, segments, truncated = placed.ids, placed.segments, placed.truncated
        else:
            ids, segments, truncated = self._cut(texts)
        if truncated:
            for _ in range(truncated):
                context.notices.note(f"feature `{self.name}`: {{count}} text{{s}} cut to max_length: "
                                     f"{self.max_length} (truncation: {self.truncation})")
        return self.ids_layout.stored(ids, segments, self._marks(texts, ids))

    # ---- windows: a text as several records (features/text_window.py) ------------------------------
    def _whole(self, texts: list[list[list[int]]]) -> dict[str, Values]:
        """The ids `fan_out` cuts: the text's (a pair's second text's), and a pair's first texts."""
        cut = texts[-1]
        lengths = np.array([len(ids) for ids in cut], dtype=np.int64)
        whole = {self.record_key: Values("int64", flat_int64(cut, int(lengths.sum())), lengths)}
        if self.is_pair:
            firsts = np.array([len(ids) for ids in texts[0]], dtype=np.int64)
            whole[FIRST] = Values("int64", flat_int64(texts[0], int(firsts.sum())), firsts)
        return whole

    @property
    def fans_out(self) -> bool:
        return self.window is not None

    def fan_out(self, encoded: dict[str, Values], context: EncodeContext
                ) -> tuple[dict[str, Values], np.ndarray] | None:
        """Each text cut into `window:`s, in order: each window's ids in the template, its length,
        a pair's segment ids, its offset (`KEY_offset`: its first id's index in the text's ids) and
        its number in the text (`KEY_window`), and the text's row."""
        if self.window is None:
            return None
        texts = _rows(encoded[self.record_key])
        firsts = _rows(encoded[FIRST]) if FIRST in encoded else None
        ids, segments, offsets, indices, rows = windows_of(
            self.tokenizer_object, self.window, texts, firsts, self.special_tokens,
            lambda row, problem: self.fail(context.origin, row, problem))
        return (window_values(self.record_key, self.is_pair, ids, segments, offsets, indices),
                np.array(rows, dtype=np.int64))

    # ---- packing: the spec's `pack:` (features/text_pack.py) --------------------------------------
    def packed_to(self, length: int, at: At) -> "TextFeature":
        """Packed into records of `length` ids: cut to `length` where it gives no max_length (counted
        as any cut is); not beside a window."""
        if self.sequence:
            raise at.error("is per step; pack: packs the texts of a format: example spec")
        if self.window is not None:
            raise (at / "window").error("a window is a record of its own; pack: packs short texts (leave one of "
                                        "them out)")
        if self.layout is not None:
            raise (at / "layout").error("Model Garden's layout is one text a record, max_length ids long; pack: "
                                        "lays out its own records (leave one of them out)")
        if self.max_length is not None and self.max_length > length:
            raise (at / "max_length").error(f"{self.max_length} is more than pack.length: {length}; a text must fit "
                                            "a pack")
        added = self.tokenizer_object.template.added(self.is_pair) if self.special_tokens and self.held else 0
        if self.max_length is None and length < added + 1:
            raise at.error(f"pack.length: {length} leaves no room for text: the template adds {added} special ids")
        return dataclasses.replace(self, max_length=self.max_length or length, packed=length)

    def packed_values(self, encoded: dict[str, Values], firsts: np.ndarray) -> dict[str, Values]:
        """Its values of a split's examples packed into the windows that start at `firsts`."""
        return PackedText(self).values(encoded, firsts)

    # ---- the parts of encode ----------------------------------------------------------------------
    def _marks(self, texts: list[list[list[int]]], ids: Sequence[Sequence[int]]) -> dict[str, np.ndarray] | None:
        """Per record, the ids max_length cut off (`truncated`, for the statistics): its texts' ids
        and the template's, less those kept."""
        if self.max_length is None:
            return None
        added = self.tokenizer_object.template.added(self.is_pair) if self.special_tokens else 0
        whole = sum(np.fromiter(map(len, text), np.int64, len(ids)) for text in texts) + added
        return {"truncated": whole - np.fromiter(map(len, ids), np.int64, len(ids))}

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

    def with_learned(self, learned: Any, file: str) -> "TextFeature":
        """With the tokenizer a build learned (`text.Learned`), whose file is `file` in the dataset's
        folder, recorded as a tokenizer file is."""
        found: "Tokenizer" = held_tokenizer(learned.data, file, learned.tokenizer.lowercase, learned.tokenizer.fingerprint
                                   ).tokenizer
        return dataclasses.replace(self, recorded=recorded_of(found, file), held=HeldTokenizer(found), unusable=None)

    @property
    def learns_from_data(self) -> bool:
        return self.vocabulary is not None

    @property
    def to_learn(self) -> bool:
        return self.vocabulary is not None and self.held is None

    def learned_in(self, folder: str) -> "TextFeature":
        """A dataset's learned vocabulary read from its `folder` (as recorded), or, its file gone or
        changed, what it recorded and why (as for a tokenizer file)."""
        if self.vocabulary is None or self.recorded is None or self.recorded.file is None:
            return self
        path = fs.join(folder, self.recorded.file)
        if not fs.exists(path):
            return self._without_file(path, None)
        with fs.open_file(path, "rb") as file:
            data = file.read()
        sha256 = hashlib.sha256(data).hexdigest()
        if sha256 != self.recorded.sha256:
            return self._without_file(path, sha256)
        lowercase = (True if self.lowercase is None else self.lowercase) if self.recorded.kind == "wordpiece" else None
        return dataclasses.replace(self, held=held_tokenizer(data, self.recorded.file, lowercase, sha256), unusable=None)

    def _without_file(self, path: str, sha256: str | None) -> "TextFeature":
        """What it recorded, all that reading needs, where its tokenizer file is gone (`sha256`
        None) or is another file than the one it recorded; `unusable` says which."""
        assert self.recorded is not None
        recorded = self.recorded.sha256[:12]
        why = (f"{path}: file not found (the dataset recorded sha256 {recorded}...)" if sha256 is None else
               f"{path}: sha256 {sha256[:12]}..., expected {recorded}... (`recorded:`): not the file the dataset "
               "was built with")
        return dataclasses.replace(self, unusable=why)

    def check_stored(self, stored: dict[str, tuple[str, list[Any]]]) -> str | None:
        return self.ids_layout.check_stored(stored, self.recorded.vocab_size if self.recorded else None)

    def statistics_values(self, encoded: dict[str, Values]) -> Values:
        """The ids: their figures (the smallest and largest id used), and the lengths of a variable
        number of values, each text's number of ids (special ids included); per step, the steps a
        record's length (and a bucketed input_fn) counts; packed, the ids before the padding."""
        return self.ids_layout.statistics_values(encoded)

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
        return self.ids_layout.parsing()

    def decoding(self, options: Any) -> list[DecodeStep]:
        return self.ids_layout.decoding()

    def reading(self, options: Any) -> dict[str, Any]:
        """Its description, with `companions`: the padding mask and a pair's segment ids (a
        window's offset and number; a pack's segments and positions)."""
        described = super().reading(options)
        companions = self.ids_layout.companions()
        return {**described, "companions": companions} if companions else described

    def tfds_features(self, options: Any) -> dict[str, dict[str, Any]]:
        """Its ids and what it stores beside them, as TensorFlow Datasets' features."""
        return self.ids_layout.tfds_features()

    def tfds_feature(self, options: Any) -> dict[str, Any]:
        return tfds.sequence(tfds.tensor([], "int64"))

    def describe(self) -> str:
        kind = self.recorded.kind if self.recorded is not None else "text"
        shape, note = self.ids_layout.described()
        return f"text {kind} int64 [{shape}] (ids{', a pair' if self.is_pair else ''}{note})"

    def text_of(self, ids: Sequence[int]) -> str:
        """The text of stored ids, special ids left out (what `tb.read(decode_text=True)` gives)."""
        return self.tokenizer_object.decode([int(number) for number in ids])

    @property
    def token_ids(self) -> TokenIds | None:
        """Its tokenizer as the masked-language-model view and batches by length need it (as recorded)."""
        if self.recorded is None:
            return None
        recorded = self.recorded
        named = self.tokenizer or recorded.file or "(learned by the build)"
        return TokenIds(self.length_key, recorded.vocab_size, recorded.mask_id, recorded.special_ids, named,
                        self.unusable)
    def tokens_of(self, ids: Sequence[int]) -> list[str]:
        """Each id's token as the tokenizer spells it (`[CLS]`, `##s`, `▁the`); SpecError where
        its file is gone or changed."""
        return self.tokenizer_object.tokens([int(number) for number in ids])

    def linked(self, features: Mapping[str, Feature], at: At) -> "TextFeature":
        """Refuses another feature stored under its length's or segment ids' record key."""
        own = self.ids_layout.keys
        if self.layout == model_garden.LAYOUT:
            for name, other in features.items():
                if other is not self and name != self.name and getattr(other, "layout", None) == model_garden.LAYOUT:
                    raise (at / "layout").error(f"feature `{name}` stores Model Garden's {', '.join(own)} too: one text "
                                                "a spec takes that layout")
        for name, other in features.items():
            if other.record_key in own:
                raise at.error(f"stores `{other.record_key}` beside its ids, already feature `{name}`'s record key; "
                               "rename one (or give it another `key:`)")
        return self

    # ---- word values on the pieces (a class_label's `align: words`, features/aligned.py) ----------
    @property
    def splits_words(self) -> bool:
        return self.words and not self.is_pair and not self.sequence

    def on_pieces(self, sentences: Sequence[Any], values: Sequence[Sequence[int]], context: EncodeContext,
                  every_piece: bool, fill: int) -> tuple[list[list[int]], int]:
        """Values given one a word placed on the pieces of the words as `encode` stores them:
        each word split by the same tokenizer, put in the same template (`fill` on the special
        ids), cut by the same `max_length` on the same side, padded as the ids are."""
        from ..text import BadText, Template
        from ..text.inputs import assemble
        tokenizer = self.tokenizer_object
        sentences = list(sentences)
        if None in sentences:
            raise self.fail(context.origin, sentences.index(None), "missing text")
        try:
            pieces = aligned.split_once(tokenizer, sentences)
        except BadText as error:
            raise self.fail(context.origin, error.index, str(error)) from None
        spread, unplaced = aligned.spread([piece.words for piece in pieces], values, every_piece, fill)
        template = aligned.filled(tokenizer.template, fill) if self.special_tokens else Template()
        placed = assemble(template, spread, None, self.max_length, self.truncation).ids
        return aligned.padded(placed, self.padded_length, fill), unplaced


register("text")(TextFeature)


def _rows(values: Values) -> list[list[int]]:
    """Each row's ids of an int64 list."""
    ends = np.cumsum(values.counts).tolist()
    flat = np.asarray(values.values).tolist()
    return [flat[end - count:end] for end, count in zip(ends, values.counts.tolist())]


def _tokens(count: int) -> str:
    return "empty text" if not count else f"{count} token{'' if count == 1 else 's'}"
