"""Token ids as models take them: a text (or a pair) inside its tokenizer's template, cut to a
length by BERT's rule, and a long text as overlapping windows.

Pure list arithmetic on ids: the tokenizers (text/tokenizer.py) encode, this places.
"""
from __future__ import annotations

import dataclasses
from typing import NamedTuple, Sequence

SIDES = ("right", "left")


# the special ids of one part of a template, each with its segment id
Part = tuple[tuple[int, int], ...]


@dataclasses.dataclass(frozen=True)
class Template:
    """The special ids a tokenizer puts around its text, with their segment ids.

    One text: `before + a + after`. A pair: `pair_before + a + between + b + pair_after`. BERT's:
    `[CLS] a [SEP]` and `[CLS] a [SEP] b [SEP]`, segment 0 up to the first [SEP], 1 after it.

    Attributes:
        before, after, pair_before, between, pair_after: each special id with its segment id.
        segment_a: the segment id of one text's ids; pair_segment_a, pair_segment_b: of a
            pair's first and second text's ids.
    """

    before: Part = ()
    after: Part = ()
    pair_before: Part = ()
    between: Part = ()
    pair_after: Part = ()
    segment_a: int = 0
    pair_segment_a: int = 0
    pair_segment_b: int = 1

    def added(self, pair: bool) -> int:
        """How many ids the template adds to one text (`pair=False`) or to a pair."""
        if pair:
            return len(self.pair_before) + len(self.between) + len(self.pair_after)
        return len(self.before) + len(self.after)


def _ids(part: Part) -> list[int]:
    return [number for number, _ in part]


def _segments(part: Part) -> list[int]:
    return [segment for _, segment in part]


class Inputs(NamedTuple):
    """A batch placed in its template.

    Attributes:
        ids: each example's ids, special ids included.
        segments: each example's segment ids (0 for the first text, 1 for the second), as long as
            its ids.
        truncated: how many examples lost ids to `max_length`.
    """

    ids: list[list[int]]
    segments: list[list[int]]
    truncated: int


class Window(NamedTuple):
    """A piece of a long text: `ids[offset:offset + len(ids)]` of the whole text's ids."""

    offset: int
    ids: list[int]


def pair_lengths(first: int, second: int, budget: int) -> tuple[int, int]:
    """The lengths two texts of `first` and `second` ids are cut to so that together they fit
    `budget`, by BERT's `_truncate_seq_pair` (run_classifier.py): one id at a time from the longer
    text (from the second when they are equally long) until they fit; written out in closed form
    so a long passage costs no loop."""
    excess = first + second - budget
    if excess <= 0:
        return first, second
    if first > second:
        cut = min(excess, first - second)
        first, excess = first - cut, excess - cut
    else:
        cut = min(excess, second - first)
        second, excess = second - cut, excess - cut
    # now equally long (or done): the second loses an id first, then they take turns
    return first - excess // 2, second - (excess + 1) // 2


def _cut(ids: Sequence[int], length: int, side: str) -> list[int]:
    if length >= len(ids):
        return list(ids)
    return list(ids[:length]) if side == "right" else list(ids[len(ids) - length:])


def assemble(template: Template, first: Sequence[Sequence[int]], second: Sequence[Sequence[int]] | None = None,
             max_length: int | None = None, side: str = "right") -> Inputs:
    """Each text's ids (or each pair's: `first[i]` with `second[i]`) placed in `template`, cut to
    `max_length` ids in all (special ids included): one text loses ids at its end (`side="right"`)
    or its start (`"left"`); a pair loses them from the longer text first (`pair_lengths`)."""
    if side not in SIDES:
        raise ValueError(f"truncation side {side!r}: expected one of {', '.join(SIDES)}")
    if second is not None and len(second) != len(first):
        raise ValueError(f"{len(first)} first texts but {len(second)} second texts")
    pair = second is not None
    budget = None if max_length is None else max_length - template.added(pair)
    if budget is not None and budget < 1:
        raise ValueError(f"max_length {max_length} leaves no room for text: the template adds "
                         f"{template.added(pair)} special ids")
    ids, segments, truncated = [], [], 0
    if second is None:
        before, after = _ids(template.before), _ids(template.after)
        before_segments, after_segments = _segments(template.before), _segments(template.after)
        for a in first:
            kept = list(a) if budget is None else _cut(a, budget, side)
            truncated += len(kept) < len(a)
            ids.append(before + kept + after)
            segments.append(before_segments + [template.segment_a] * len(kept) + after_segments)
        return Inputs(ids, segments, truncated)
    parts = [template.pair_before, template.between, template.pair_after]
    part_ids, part_segments = [_ids(part) for part in parts], [_segments(part) for part in parts]
    for a, b in zip(first, second):
        if budget is None:
            kept_a, kept_b = list(a), list(b)
        else:
            length_a, length_b = pair_lengths(len(a), len(b), budget)
            kept_a, kept_b = _cut(a, length_a, side), _cut(b, length_b, side)
        truncated += len(kept_a) + len(kept_b) < len(a) + len(b)
        ids.append(part_ids[0] + kept_a + part_ids[1] + kept_b + part_ids[2])
        segments.append(part_segments[0] + [template.pair_segment_a] * len(kept_a) + part_segments[1]
                        + [template.pair_segment_b] * len(kept_b) + part_segments[2])
    return Inputs(ids, segments, truncated)


def window(ids: Sequence[int], tokens: int, stride: int) -> list[Window]:
    """A long text's ids as windows of at most `tokens` ids, each starting `stride` ids after the
    one before, as BERT's SQuAD code cuts a document (`doc_stride`, run_squad.py): the last window
    ends at the text's end, so every id is in at least one window (in `tokens - stride` ids of
    overlap between neighbours). A text of no ids is one empty window, so it is not lost."""
    if tokens < 1:
        raise ValueError(f"window of {tokens} tokens: expected at least 1")
    if not 1 <= stride <= tokens:
        raise ValueError(f"window stride {stride}: expected from 1 to the window's {tokens} tokens "
                         "(a longer stride would skip tokens)")
    windows, start = [], 0
    while True:
        length = min(tokens, len(ids) - start)
        windows.append(Window(start, list(ids[start:start + length])))
        if start + length >= len(ids):
            return windows
        start += min(length, stride)
