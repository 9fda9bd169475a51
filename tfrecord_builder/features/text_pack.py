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
from typing import Any

import numpy as np

from .values import Values


@dataclass(frozen=True)
class PackedText:
    """The packed layout of one text feature (its name, record key, `pack.length`, padding id and
    whether it is a pair)."""

    name: str
    record_key: str
    length: int
    pad_id: int
    pair: bool

    @property
    def keys(self) -> list[str]:
        """The record keys of its N-long lists: ids, a pair's segment ids, the packed segments and positions."""
        return [self.record_key] + ([f"{self.record_key}_segment_ids"] if self.pair else []) + \
            [f"{self.record_key}_packed_segment_ids", f"{self.record_key}_packed_positions"]

    @property
    def names(self) -> list[str]:
        """What reading gives beside its ids: mask, a pair's segment ids, segments and positions."""
        return [f"{self.name}_mask"] + ([f"{self.name}_segment_ids"] if self.pair else []) + \
            [f"{self.name}_packed_segment_ids", f"{self.name}_packed_positions"]

    def parsing(self) -> dict[str, Any]:
        parsed = {key: ("fixed", "int64", [self.length]) for key in self.keys}
        parsed[f"{self.record_key}_length"] = ("fixed", "int64", [])
        return parsed

    def companions(self) -> dict[str, Any]:
        segments = f"{self.record_key}_packed_segment_ids"
        found: dict[str, Any] = {f"{self.name}_mask": {"parse": {segments: ("fixed", "int64", [self.length])},
                                                       "decode": [("cast", {"dtype": "bool"})]}}
        for key, name in zip(self.keys[1:], self.names[1:]):
            found[name] = {"parse": {key: ("fixed", "int64", [self.length])}, "decode": []}
        return found

    def values(self, encoded: dict[str, Values], firsts: np.ndarray) -> dict[str, Values]:
        """A split's examples (`encoded`: their ids, lengths, a pair's segment ids) packed into the
        windows that start at the examples `firsts`."""
        from ..text.pack import laid_out
        ids = encoded[self.record_key]
        laid = laid_out(np.asarray(ids.values), ids.counts, firsts, self.length, self.pad_id)
        windows = len(firsts)
        full = np.full(windows, self.length, dtype=np.int64)
        packed = {self.record_key: Values("int64", laid.ids.reshape(-1), full)}
        if self.pair:
            segments = encoded[f"{self.record_key}_segment_ids"]
            packed[f"{self.record_key}_segment_ids"] = Values(
                "int64", laid_out(np.asarray(segments.values), segments.counts, firsts, self.length, 0).ids.reshape(-1), full)
        packed[f"{self.record_key}_packed_segment_ids"] = Values("int64", laid.segments.reshape(-1), full)
        packed[f"{self.record_key}_packed_positions"] = Values("int64", laid.positions.reshape(-1), full)
        packed[f"{self.record_key}_length"] = Values("int64", laid.lengths, np.ones(windows, dtype=np.int64))
        return packed

    def statistics_values(self, encoded: dict[str, Values]) -> Values:
        """The ids before each record's padding (what the lengths and figures describe)."""
        ids, lengths = encoded[self.record_key], encoded[f"{self.record_key}_length"].values
        assert isinstance(ids.values, np.ndarray) and isinstance(lengths, np.ndarray)
        kept = np.arange(self.length)[None, :] < lengths[:, None]
        return Values("int64", ids.values.reshape(-1, self.length)[kept], lengths)

    def check_stored(self, stored: dict[str, tuple[str, list[Any]]], vocab_size: int | None) -> str | None:
        for key in self.keys + [f"{self.record_key}_length"]:
            kind, values = stored.get(key, ("", []))
            wanted = 1 if key.endswith("_length") else self.length
            if kind != "int64" or len(values) != wanted:
                return f"expected {wanted} int64 under {key!r} (pack.length: {self.length})"
        ids = stored[self.record_key][1]
        length = stored[f"{self.record_key}_length"][1][0]
        segments = stored[f"{self.record_key}_packed_segment_ids"][1]
        if sum(1 for segment in segments if segment) != length or any(segments[length:]):
            return f"expected {length} ids before the padding (segment ids 0 after them)"
        if vocab_size is not None and any(not 0 <= number < vocab_size for number in ids):
            return f"an id outside the tokenizer's {vocab_size} ids"
        return None
