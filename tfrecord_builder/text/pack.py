"""Short examples packed into fixed windows of ids, as T5 packs them (seqio's `trim_and_pack_dataset`,
tensor2tensor's `pack_examples`): pure arithmetic on lengths and ids.

`packs` decides which examples share a window: greedily, in order, an example joins the window
being filled when every feature's ids still fit `length`, else it starts the next one; so each
window holds a run of consecutive examples, and the same examples in the same order always give
the same windows. `laid_out` writes one feature's ids into those windows: the ids side by side
from the window's start, padded to `length`, with each id's segment (1 for the window's first
example, 2 for its second, ...; 0 on padding) and its position in its own example (0, 1, ...;
0 on padding), T5's `_segment_ids` and `_positions`.
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np


class Laid(NamedTuple):
    """One feature's ids packed: `[windows, length]` arrays (int64)."""

    ids: np.ndarray
    segments: np.ndarray  # 1, 2, ... the example each id is of, in its window; 0 on padding
    positions: np.ndarray  # each id's place in its example; 0 on padding
    lengths: np.ndarray  # [windows]: the ids before the padding


def packs(lengths: Sequence[np.ndarray], length: int) -> np.ndarray:
    """The first example of each window, for examples whose ids number `lengths[f][i]` in feature
    `f` (one array per feature, of equal sizes): greedily in order, an example joins the current
    window while every feature's ids fit `length`, else starts a new one. The windows are
    `firsts[k]` to `firsts[k + 1]` (the last to the end). Raises ValueError for an example
    longer than `length` in some feature (the caller cuts or refuses those first)."""
    if length < 1:
        raise ValueError(f"pack length {length}: expected at least 1")
    columns = [np.asarray(counts, dtype=np.int64) for counts in lengths]
    if not columns or not len(columns[0]):
        return np.zeros(0, dtype=np.int64)
    if any(len(counts) != len(columns[0]) for counts in columns):
        raise ValueError("every feature needs one length per example")
    over = [int(np.flatnonzero(counts > length)[0]) for counts in columns if (counts > length).any()]
    if over:
        raise ValueError(f"example {min(over)} is longer than the pack length {length}")
    firsts = [0]
    filled = [0] * len(columns)
    rows = np.stack(columns, axis=1).tolist()  # one short list a example: a plain loop is fastest here
    for index, sizes in enumerate(rows):
        if any(used + size > length for used, size in zip(filled, sizes)):
            firsts.append(index)
            filled = list(sizes)
        else:
            filled = [used + size for used, size in zip(filled, sizes)]
    return np.array(firsts, dtype=np.int64)


def laid_out(flat: np.ndarray, counts: np.ndarray, firsts: np.ndarray, length: int, pad: int) -> Laid:
    """One feature's ids (`flat`, example i holding `counts[i]` of them, in order) in the windows
    that start at examples `firsts` (of `packs`), each padded with `pad` to `length`."""
    counts = np.asarray(counts, dtype=np.int64)
    flat = np.asarray(flat, dtype=np.int64)
    windows = len(firsts)
    window_of = np.searchsorted(firsts, np.arange(len(counts)), side="right") - 1  # each example's window
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]) if len(counts) else np.zeros(0, np.int64)
    # each example's first column: the ids of the examples before it in its window
    before = starts - starts[firsts][window_of] if len(counts) else starts
    segment = np.arange(len(counts)) - firsts[window_of] + 1
    id_window = np.repeat(window_of, counts)
    id_position = np.arange(len(flat)) - np.repeat(starts, counts)
    id_column = np.repeat(before, counts) + id_position
    if len(flat) and int(id_column.max()) >= length:
        raise ValueError(f"the examples of a window hold more than {length} ids")
    ids = np.full((windows, length), pad, dtype=np.int64)
    segments = np.zeros((windows, length), dtype=np.int64)
    positions = np.zeros((windows, length), dtype=np.int64)
    ids[id_window, id_column] = flat
    segments[id_window, id_column] = np.repeat(segment, counts)
    positions[id_window, id_column] = id_position
    lengths = np.bincount(window_of, weights=counts, minlength=windows).astype(np.int64) if len(counts) \
        else np.zeros(windows, np.int64)
    return Laid(ids, segments, positions, lengths)


def unpacked(ids: np.ndarray, segments: np.ndarray) -> list[list[int]]:
    """The examples of packed windows, in order: each window's ids by segment (padding left out)."""
    examples = []
    for row_ids, row_segments in zip(np.asarray(ids).tolist(), np.asarray(segments).tolist()):
        for number in range(1, max(row_segments, default=0) + 1):
            examples.append([value for value, segment in zip(row_ids, row_segments) if segment == number])
    return examples


__all__ = ["Laid", "laid_out", "packs", "unpacked"]
