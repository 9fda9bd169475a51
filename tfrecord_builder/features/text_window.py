"""`window:` on a `text` feature: a long text cut into windows of ids, one record each, through
the fan-out that audio windows use (`Feature.fans_out` / `fan_out`: build/encode_batch.py
repeats the row's other features into each window's record, and keys each record by its row's
key and its number, so all of a text's windows go to the row's split).

`tokens` counts what a record holds, special ids included, as `max_seq_length` does in BERT's
SQuAD code (run_squad.py): a window of one text holds at most `tokens - specials` of the text's
ids (`[CLS] ... [SEP]`: tokens - 2); a pair (a question and a passage) keeps its first text
whole in every window and cuts the second, as SQuAD cuts the passage, into at most
`tokens - specials - len(first)` ids. `stride` is how far each window's start moves along the
text's ids (SQuAD's `doc_stride`): less than a window's ids overlaps neighbours; the default,
a window's ids, lays them side by side. The last window ends at the text's end (text/inputs.py's
`window`), so every id is in a window; a text shorter than a window is one record.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..spec.fields import At, Section, meta
from .values import Values, flat_int64

if TYPE_CHECKING:
    from ..text import Tokenizer

# the key under which `encode` hands a pair's first texts to `fan_out` (never stored: fan_out
# returns the record's own keys)
FIRST = "\0first"


@dataclass(frozen=True, kw_only=True)
class TextWindow(Section):
    """`window: {tokens: 512, stride: 128}`: a long text as several records."""

    tokens: int = meta("the ids a record holds at most, special ids included (BERT's max_seq_length)")
    stride: int | None = meta("ids from one window's start to the next (SQuAD's doc_stride); default: a "
                              "window's text ids (side by side); less overlaps them", None)

    def check(self, at: At) -> None:
        if self.tokens < 1:
            raise (at / "tokens").error(f"expected a positive number of ids, received {self.tokens}")
        if self.stride is not None and self.stride < 1:
            raise (at / "stride").error(f"expected a positive number of ids, received {self.stride}")


def check_window(window: TextWindow, added: int, pair: bool, at: At) -> None:
    """A window leaves room for text (a pair's first text is checked row by row) and a stride
    no longer than a window's text ids (a longer one would skip ids)."""
    room = window.tokens - added
    if room < 1:
        raise (at / "tokens").error(f"{window.tokens} leaves no room for text: the template adds {added} special ids")
    if window.stride is not None and window.stride > room and not pair:
        raise (at / "stride").error(f"{window.stride} is more than a window's {room} text ids ({window.tokens} "
                                    f"tokens less {added} special ids): ids would be skipped")


def windows_of(tokenizer: "Tokenizer", window: TextWindow, texts: list[list[int]], firsts: list[list[int]] | None,
               special_tokens: bool, problem: Any) -> tuple[list[list[int]], list[list[int]], list[int], list[int],
                                                            list[int]]:
    """Each text cut into windows, placed in the template (with the pair's first text when given):
    each window's ids, segment ids, offset (its first id's index in the text's ids), index (0, 1, ...
    within its text) and row. `problem(row, message)` is the error for a row whose first text leaves
    the second no room for `stride` ids."""
    from ..text import Template
    from ..text.inputs import assemble, window as cut
    template = tokenizer.template if special_tokens else Template()
    added = template.added(firsts is not None)
    ids, segments, offsets, indices, rows = [], [], [], [], []
    for row, text in enumerate(texts):
        first = firsts[row] if firsts is not None else None
        room = window.tokens - added - (len(first) if first is not None else 0)
        stride = window.stride if window.stride is not None else room
        if room < 1 or stride > room:
            raise problem(row, f"the first text's {len(first or [])} ids leave {max(room, 0)} of the window's "
                               f"{window.tokens} tokens for the second, fewer than "
                               f"{'one' if room < 1 else f'window.stride: {stride}'}; expected a shorter first text")
        pieces = cut(text, room, stride)
        cuts = [piece.ids for piece in pieces]
        placed = assemble(template, cuts) if first is None else assemble(template, [first] * len(pieces), cuts)
        ids += placed.ids
        segments += placed.segments
        offsets += [piece.offset for piece in pieces]
        indices += list(range(len(pieces)))
        rows += [row] * len(pieces)
    return ids, segments, offsets, indices, rows


def window_values(record_key: str, pair: bool, ids: list[list[int]], segments: list[list[int]],
                  offsets: list[int], indices: list[int]) -> dict[str, Values]:
    """The records' values of windows: `KEY` the ids, `KEY_length`, a pair's `KEY_segment_ids`,
    `KEY_offset` and `KEY_window`."""
    lengths = np.array([len(row) for row in ids], dtype=np.int64)
    ones = np.ones(len(ids), dtype=np.int64)
    flat = flat_int64(ids, int(lengths.sum()))
    values = {record_key: Values("int64", flat, lengths), f"{record_key}_length": Values("int64", lengths, ones)}
    if pair:
        values[f"{record_key}_segment_ids"] = Values("int64", flat_int64(segments, len(flat)), lengths)
    values[f"{record_key}_offset"] = Values("int64", np.array(offsets, dtype=np.int64), ones)
    values[f"{record_key}_window"] = Values("int64", np.array(indices, dtype=np.int64), ones)
    return values
