"""How a `text` feature's ids lie in a record: one layout object a feature, so that writing,
checking, the statistics, parsing, decoding and TensorFlow Datasets' description of a layout are
said in one place each, not in an `if` of every method of `TextFeature`.

- `OwnIds` (the default): `KEY` the ids (a list as long as the text's), `KEY_length` their number,
  a pair's `KEY_segment_ids`, a window's `KEY_offset` and `KEY_window`;
- `StepIds` (`sequence:`): one id a step, the record's length its number of steps;
- `ModelGardenIds` (`layout: model_garden`, features/model_garden.py): padded to `max_length`
  beside `input_mask` and `segment_ids`;
- `PackedText` (the spec's `pack:`, features/text_pack.py): packs of `pack.length` ids.

Each is a view of its feature (the feature's padding id is read only where a layout needs it: a
vocabulary the build learns has none before the build).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Sequence

import numpy as np

from . import tfds
from .base import DecodeStep, ParseSpec
from .values import Values, flat_int64

if TYPE_CHECKING:
    from .text import TextFeature


class IdsLayout(Protocol):
    """What a text's layout says of its records."""

    @property
    def names(self) -> list[str]:
        """What reading gives beside the ids (a mask, segment ids, ...)."""

    @property
    def keys(self) -> list[str]:
        """The record keys it stores beside the ids (no other feature may store them)."""

    @property
    def padded_length(self) -> int | None:
        """The length its records' ids are stored padded to (None: each its own)."""

    def stored(self, ids: Sequence[Sequence[int]], segments: Sequence[Sequence[int]],
               marks: dict[str, np.ndarray] | None) -> dict[str, Values]:
        """A batch's ids (in the template, cut) as stored."""

    def check_stored(self, stored: dict[str, tuple[str, list[Any]]], vocab_size: int | None) -> str | None:
        """What is wrong with a stored record (None: nothing)."""

    def statistics_values(self, encoded: dict[str, Values]) -> Values:
        """The ids the statistics describe (without padding), each record's own number of them."""

    def parsing(self) -> dict[str, ParseSpec]: ...

    def decoding(self) -> list[DecodeStep]: ...

    def companions(self) -> dict[str, Any]:
        """What reading gives beside the ids: each name's parse spec and decode steps."""

    def tfds_features(self) -> dict[str, dict[str, Any]]: ...

    def described(self) -> tuple[str, str]:
        """Its records' ids as `describe` says them: the shape (`null`, `128`, ...) and a note."""


def _in_vocabulary(ids: Sequence[int], vocab_size: int | None) -> str | None:
    if vocab_size is not None and any(not 0 <= number < vocab_size for number in ids):
        return f"an id outside the tokenizer's {vocab_size} ids"
    return None


@dataclass(frozen=True)
class OwnIds:
    """The default layout: each record's ids as many as its text's (features/text.py says it)."""

    feature: "TextFeature"

    @property
    def window_keys(self) -> list[str]:
        """What a window's record holds beside its ids: its offset and number."""
        key = self.feature.record_key
        return [f"{key}_offset", f"{key}_window"] if self.feature.window is not None else []

    @property
    def window_names(self) -> list[str]:
        name = self.feature.name
        return [f"{name}_offset", f"{name}_window"] if self.feature.window is not None else []

    @property
    def names(self) -> list[str]:
        feature = self.feature
        return [feature.mask_name] + ([feature.segments_name] if feature.is_pair else []) + self.window_names

    @property
    def keys(self) -> list[str]:
        feature = self.feature
        return [feature.length_key] + ([feature.segments_key] if feature.is_pair else []) + self.window_keys

    @property
    def padded_length(self) -> int | None:
        return None

    def stored(self, ids: Sequence[Sequence[int]], segments: Sequence[Sequence[int]],
               marks: dict[str, np.ndarray] | None) -> dict[str, Values]:
        feature = self.feature
        lengths = np.array([len(row) for row in ids], dtype=np.int64)
        flat = flat_int64(ids, int(lengths.sum()))
        encoded = {feature.record_key: Values("int64", flat, lengths, marks=marks),
                   feature.length_key: Values("int64", lengths, np.ones(len(ids), dtype=np.int64))}
        if feature.is_pair:
            encoded[feature.segments_key] = Values("int64", flat_int64(segments, len(flat)), lengths)
        return encoded

    def check_stored(self, stored: dict[str, tuple[str, list[Any]]], vocab_size: int | None) -> str | None:
        feature = self.feature
        kind, ids = stored.get(feature.record_key, ("", []))
        if kind != "int64":
            return f"expected token ids (int64) under {feature.record_key!r}"
        for key in self.window_keys:
            kind, value = stored.get(key, ("", []))
            if kind != "int64" or len(value) != 1:
                return f"expected one int64 under {key!r}"
        kind, length = stored.get(feature.length_key, ("", []))
        if kind != "int64" or len(length) != 1 or length[0] != len(ids):
            return f"expected the number of ids ({len(ids)}) under {feature.length_key!r}"
        if feature.is_pair:
            kind, segments = stored.get(feature.segments_key, ("", []))
            if kind != "int64" or len(segments) != len(ids):
                return f"expected {len(ids)} segment ids under {feature.segments_key!r}"
        return _in_vocabulary(ids, vocab_size)

    def statistics_values(self, encoded: dict[str, Values]) -> Values:
        return encoded[self.feature.record_key]

    def parsing(self) -> dict[str, ParseSpec]:
        feature = self.feature
        parsed: dict[str, ParseSpec] = {feature.record_key: ("var", "int64", [None]),
                                        feature.length_key: ("fixed", "int64", [])}
        if feature.is_pair:
            parsed[feature.segments_key] = ("var", "int64", [None])
        parsed.update((key, ("fixed", "int64", [])) for key in self.window_keys)
        return parsed

    def decoding(self) -> list[DecodeStep]:
        return [("padded_ids", {"pad": self.feature.pad_id})]

    def companions(self) -> dict[str, Any]:
        feature = self.feature
        companions: dict[str, Any] = {
            feature.mask_name: {"parse": {feature.length_key: ("fixed", "int64", [])}, "decode": [("length_mask", {})]}}
        if feature.is_pair:
            companions[feature.segments_name] = {"parse": {feature.segments_key: ("var", "int64", [None])},
                                                 "decode": [("padded_ids", {"pad": 0})]}
        for key, name in zip(self.window_keys, self.window_names):
            companions[name] = {"parse": {key: ("fixed", "int64", [])}, "decode": []}
        return companions

    def tfds_features(self) -> dict[str, dict[str, Any]]:
        """The ids as TFDS's Sequence of int64 (its length and segment ids beside them)."""
        feature = self.feature
        entries = {feature.record_key: tfds.sequence(tfds.tensor([], "int64")),
                   feature.length_key: tfds.tensor([], "int64")}
        if feature.is_pair:
            entries[feature.segments_key] = tfds.sequence(tfds.tensor([], "int64"))
        entries.update((key, tfds.tensor([], "int64")) for key in self.window_keys)
        return entries

    def described(self) -> tuple[str, str]:
        window = self.feature.window
        return "null", f", windows of {window.tokens}" if window is not None else ""


@dataclass(frozen=True)
class StepIds:
    """Per step (`sequence:`): one id a step; the record's length is its number of steps."""

    feature: "TextFeature"

    @property
    def names(self) -> list[str]:
        return []  # nothing beside the ids

    @property
    def keys(self) -> list[str]:
        return []

    @property
    def padded_length(self) -> int | None:
        return None

    def stored(self, ids: Sequence[Sequence[int]], segments: Sequence[Sequence[int]],
               marks: dict[str, np.ndarray] | None) -> dict[str, Values]:
        lengths = np.array([len(row) for row in ids], dtype=np.int64)
        flat = flat_int64(ids, int(lengths.sum()))
        return {self.feature.record_key: Values("int64", flat, np.ones(len(flat), dtype=np.int64), steps=lengths,
                                                marks=marks)}

    def check_stored(self, stored: dict[str, tuple[str, list[Any]]], vocab_size: int | None) -> str | None:
        kind, _ = stored.get(self.feature.record_key, ("", []))
        return None if kind == "int64" else f"expected token ids (int64) under {self.feature.record_key!r}"

    def statistics_values(self, encoded: dict[str, Values]) -> Values:
        return encoded[self.feature.record_key]

    def parsing(self) -> dict[str, ParseSpec]:
        return {self.feature.record_key: ("fixed_steps", "int64", [])}

    def decoding(self) -> list[DecodeStep]:
        return [("pad_steps", {"length": {"lengths": self.feature.record_key}, "pad": self.feature.pad_id})]

    def companions(self) -> dict[str, Any]:
        return {}

    def tfds_features(self) -> dict[str, dict[str, Any]]:
        return {self.feature.record_key: tfds.sequence(tfds.tensor([], "int64"))}

    def described(self) -> tuple[str, str]:
        return "steps", ""
