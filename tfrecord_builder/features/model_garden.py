"""A text's TF Model Garden layout: `{type: text, ..., max_length: 128, layout: model_garden}`.

What Model Garden's own loaders parse (`official.nlp.data`: `SentencePredictionDataLoader`,
`TaggingDataLoader`, as `create_finetuning_data.py` writes them): every record holds the same
number of ids, `seq_length`, under fixed names.

Stored (int64, `max_length` of each):
- `KEY` (`input_ids` when the feature is named so): the ids, padded with the tokenizer's padding id;
- `input_mask`: 1 on the ids, 0 on the padding;
- `segment_ids`: 0 for the first text and its special ids, 1 for a pair's second text's, 0 on
  the padding (zeros for one text: the loaders parse it for every task).

A class_label aligned to it (`align: words`) stores its labels padded with -1 to the same length
(Model Garden's `label_ids` for tagging). Reading ours gives what the default layout gives: `NAME`
(here already as long as `max_length`), `NAME_mask` (bool) and a pair's `NAME_segment_ids`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from . import tfds
from .base import DecodeStep, ParseSpec
from .values import Values

if TYPE_CHECKING:
    from .text import TextFeature

LAYOUT = "model_garden"
MASK_KEY = "input_mask"
SEGMENTS_KEY = "segment_ids"
KEYS = (MASK_KEY, SEGMENTS_KEY)


@dataclass(frozen=True)
class ModelGardenIds:
    """The layout of a text feature with `layout: model_garden` (features/text_layouts.py)."""

    feature: "TextFeature"

    @property
    def length(self) -> int:
        assert self.feature.max_length is not None  # (TextFeature.check: the layout needs it)
        return self.feature.max_length

    @property
    def names(self) -> list[str]:
        return [self.feature.mask_name] + ([self.feature.segments_name] if self.feature.is_pair else [])

    @property
    def keys(self) -> list[str]:
        return list(KEYS)

    @property
    def padded_length(self) -> int | None:
        return self.length

    def stored(self, ids: Sequence[Sequence[int]], segments: Sequence[Sequence[int]],
               marks: dict[str, np.ndarray] | None) -> dict[str, Values]:
        """A batch's ids (and segment ids) padded to `max_length`, with the mask (and the ids each
        record's cut lost: `marks`)."""
        length, rows = self.length, len(ids)
        padded = np.full((rows, length), self.feature.pad_id, dtype=np.int64)
        mask = np.zeros((rows, length), dtype=np.int64)
        segment = np.zeros((rows, length), dtype=np.int64)
        for row, (own, own_segments) in enumerate(zip(ids, segments)):
            padded[row, :len(own)] = own
            mask[row, :len(own)] = 1
            segment[row, :len(own_segments)] = own_segments
        counts = np.full(rows, length, dtype=np.int64)
        return {self.feature.record_key: Values("int64", padded.reshape(-1), counts, marks=marks),
                MASK_KEY: Values("int64", mask.reshape(-1), counts.copy()),
                SEGMENTS_KEY: Values("int64", segment.reshape(-1), counts.copy())}

    def check_stored(self, stored: dict[str, tuple[str, list[Any]]], vocab_size: int | None) -> str | None:
        length = self.length
        for key in (self.feature.record_key, *KEYS):
            kind, values = stored.get(key, ("", []))
            if kind != "int64" or len(values) != length:
                return f"expected {length} int64 values (max_length) under {key!r}"
        mask = stored[MASK_KEY][1]
        count = sum(mask)
        if list(mask) != [1] * count + [0] * (length - count):
            return f"expected {MASK_KEY!r} to be 1 on the ids, then 0 on the padding"
        return None

    def statistics_values(self, encoded: dict[str, Values]) -> Values:
        """The ids without their padding, each record's own number of them: what the statistics
        count (lengths in ids, as the default layout's)."""
        ids = np.asarray(encoded[self.feature.record_key].values)
        mask = np.asarray(encoded[MASK_KEY].values).astype(bool)
        counts = mask.reshape(-1, self.length).sum(axis=1).astype(np.int64) if len(mask) else \
            np.zeros(len(encoded[MASK_KEY].counts), dtype=np.int64)
        return Values("int64", ids[mask], counts, marks=encoded[self.feature.record_key].marks)

    def parsing(self) -> dict[str, ParseSpec]:
        length: list[int | None] = [self.length]
        return {self.feature.record_key: ("fixed", "int64", length), MASK_KEY: ("fixed", "int64", length),
                SEGMENTS_KEY: ("fixed", "int64", length)}

    def decoding(self) -> list[DecodeStep]:
        return []  # stored padded

    def companions(self) -> dict[str, Any]:
        """The padding mask (input_mask as booleans) and a pair's segment ids, as the default
        layout names them."""
        length = [self.length]
        found: dict[str, Any] = {self.feature.mask_name: {"parse": {MASK_KEY: ("fixed", "int64", length)},
                                                          "decode": [("cast", {"dtype": "bool"})]}}
        if self.feature.is_pair:
            found[self.feature.segments_name] = {"parse": {SEGMENTS_KEY: ("fixed", "int64", length)}, "decode": []}
        return found

    def tfds_features(self) -> dict[str, dict[str, Any]]:
        length = tfds.dimensions([self.length])
        return {key: tfds.tensor(length, "int64") for key in (self.feature.record_key, *KEYS)}

    def described(self) -> tuple[str, str]:
        return str(self.length), ", Model Garden's layout"
