"""A `text` feature's records under the spec's `pack: {length: N}`: several short examples side by
side in one window of N ids, laid out as T5 packs them (text/pack.py decides and writes the
windows; build/packing.py packs each split's examples of a batch, in source order).

Stored form (a packed record), every list N long:
- `KEY`: the examples' ids side by side from the start, then the tokenizer's padding id;
- `KEY_packed_segment_ids`: 1 on the first example's ids, 2 on the second's, ..., 0 on padding
  (T5's `inputs_segment_ids`; named apart from a pair's `KEY_segment_ids`, which a packed pair
  keeps: 0 and 1 within each example, 0 on padding);
- `KEY_packed_positions`: each id's place in its own example (0, 1, ...; 0 on padding);
- `KEY_length`: the ids before the padding (one int64).

Reading: fixed `[batch, N]` tensors, parsed as they are stored (no padding step), and `NAME_mask`
(true on the examples' ids: the segment ids cast to bool).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from . import tfds
from .base import DecodeStep, ParseSpec
from .text_layouts import OwnIds
from .values import Values

if TYPE_CHECKING:
    from .text import TextFeature


@dataclass(frozen=True)
class PackedText:
    """The packed layout of a text feature (features/text_layouts.py): its records are packs of
    `pack.length` ids."""

    feature: "TextFeature"

    @property
    def length(self) -> int:
        assert self.feature.packed is not None
        return self.feature.packed

    @property
    def lists(self) -> list[str]:
        """The record keys of its N-long lists: ids, a pair's segment ids, the packed segments and positions."""
        key = self.feature.record_key
        return [key] + ([f"{key}_segment_ids"] if self.feature.is_pair else []) + \
            [f"{key}_packed_segment_ids", f"{key}_packed_positions"]

    @property
    def keys(self) -> list[str]:
        """What it stores beside the ids: the lists, and the number of ids before the padding."""
        return self.lists[1:] + [f"{self.feature.record_key}_length"]

    @property
    def names(self) -> list[str]:
        """What reading gives beside its ids: mask, a pair's segment ids, segments and positions."""
        name = self.feature.name
        return [f"{name}_mask"] + ([f"{name}_segment_ids"] if self.feature.is_pair else []) + \
            [f"{name}_packed_segment_ids", f"{name}_packed_positions"]

    @property
    def padded_length(self) -> int | None:
        return None

    def stored(self, ids: Sequence[Sequence[int]], segments: Sequence[Sequence[int]],
               marks: dict[str, np.ndarray] | None) -> dict[str, Values]:
        """Each example's own ids, as the default layout stores them: build/packing.py packs a
        split's examples (`values`) once they are all encoded."""
        return OwnIds(self.feature).stored(ids, segments, marks)

    def parsing(self) -> dict[str, ParseSpec]:
        parsed: dict[str, ParseSpec] = {key: ("fixed", "int64", [self.length]) for key in self.lists}
        parsed[f"{self.feature.record_key}_length"] = ("fixed", "int64", [])
        return parsed

    def companions(self) -> dict[str, Any]:
        segments = f"{self.feature.record_key}_packed_segment_ids"
        found: dict[str, Any] = {f"{self.feature.name}_mask": {"parse": {segments: ("fixed", "int64", [self.length])},
                                                       "decode": [("cast", {"dtype": "bool"})]}}
        for key, name in zip(self.lists[1:], self.names[1:]):
            found[name] = {"parse": {key: ("fixed", "int64", [self.length])}, "decode": []}
        return found

    def values(self, encoded: dict[str, Values], firsts: np.ndarray) -> dict[str, Values]:
        """A split's examples (`encoded`: their ids, lengths, a pair's segment ids) packed into the
        windows that start at the examples `firsts`."""
        from ..text.pack import laid_out
        key = self.feature.record_key
        ids = encoded[key]
        laid = laid_out(np.asarray(ids.values), ids.counts, firsts, self.length, self.feature.pad_id)
        windows = len(firsts)
        full = np.full(windows, self.length, dtype=np.int64)
        # a pack's ids cut off (`truncated`, for the statistics): its examples' together
        marks = None if ids.marks is None or not windows else \
            {name: np.add.reduceat(counts, firsts) for name, counts in ids.marks.items()}
        packed = {key: Values("int64", laid.ids.reshape(-1), full, marks=marks)}
        if self.feature.is_pair:
            segments = encoded[f"{key}_segment_ids"]
            packed[f"{key}_segment_ids"] = Values(
                "int64", laid_out(np.asarray(segments.values), segments.counts, firsts, self.length, 0).ids.reshape(-1), full)
        packed[f"{key}_packed_segment_ids"] = Values("int64", laid.segments.reshape(-1), full)
        packed[f"{key}_packed_positions"] = Values("int64", laid.positions.reshape(-1), full)
        packed[f"{key}_length"] = Values("int64", laid.lengths, np.ones(windows, dtype=np.int64))
        return packed

    def statistics_values(self, encoded: dict[str, Values]) -> Values:
        """The ids before each record's padding (what the lengths and figures describe)."""
        ids, lengths = encoded[self.feature.record_key], encoded[f"{self.feature.record_key}_length"].values
        assert isinstance(ids.values, np.ndarray) and isinstance(lengths, np.ndarray)
        kept = np.arange(self.length)[None, :] < lengths[:, None]
        return Values("int64", ids.values.reshape(-1, self.length)[kept], lengths, marks=ids.marks)

    def check_stored(self, stored: dict[str, tuple[str, list[Any]]], vocab_size: int | None) -> str | None:
        for key in self.lists + [f"{self.feature.record_key}_length"]:
            kind, values = stored.get(key, ("", []))
            wanted = 1 if key.endswith("_length") else self.length
            if kind != "int64" or len(values) != wanted:
                return f"expected {wanted} int64 under {key!r} (pack.length: {self.length})"
        ids = stored[self.feature.record_key][1]
        length = stored[f"{self.feature.record_key}_length"][1][0]
        segments = stored[f"{self.feature.record_key}_packed_segment_ids"][1]
        if sum(1 for segment in segments if segment) != length or any(segments[length:]):
            return f"expected {length} ids before the padding (segment ids 0 after them)"
        if vocab_size is not None and any(not 0 <= number < vocab_size for number in ids):
            return f"an id outside the tokenizer's {vocab_size} ids"
        return None

    def decoding(self) -> list[DecodeStep]:
        return []  # stored padded to pack.length

    def tfds_features(self) -> dict[str, dict[str, Any]]:
        return {key: tfds.parsed_tensor(*parsed) for key, parsed in self.parsing().items()}

    def described(self) -> tuple[str, str]:
        return str(self.length), ", packed"
