"""text/pack.py: which examples share a window (greedy, in order) and how their ids are laid out
(T5's segment ids and positions), against a plain loop over random lengths."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tfrecord_builder.text.pack import laid_out, packs, unpacked


def greedy(lengths: list[list[int]], length: int) -> list[list[int]]:
    """The windows as a plain loop fills them: each a list of example indices."""
    windows: list[list[int]] = []
    used: list[int] = []
    for index, sizes in enumerate(zip(*lengths)):
        if windows and all(a + b <= length for a, b in zip(used, sizes)):
            windows[-1].append(index)
            used = [a + b for a, b in zip(used, sizes)]
        else:
            windows.append([index])
            used = list(sizes)
    return windows


@settings(max_examples=300, deadline=None)
@given(data=st.data(), length=st.integers(1, 40), features=st.integers(1, 3), count=st.integers(0, 60))
def test_packs_are_greedy_in_order_and_lay_out_every_id_once(data, length, features, count):
    lengths = [data.draw(st.lists(st.integers(0, length), min_size=count, max_size=count)) for _ in range(features)]
    firsts = packs([np.array(column) for column in lengths], length)
    windows = greedy(lengths, length)
    assert firsts.tolist() == [window[0] for window in windows]
    rng = np.random.default_rng(count)
    for column in lengths:
        examples = [rng.integers(1, 1000, size).tolist() for size in column]
        flat = np.array([i for ids in examples for i in ids], dtype=np.int64)
        laid = laid_out(flat, np.array(column, dtype=np.int64), firsts, length, pad=0)
        assert laid.ids.shape == laid.segments.shape == laid.positions.shape == (len(firsts), length)
        for row, window in enumerate(windows):
            expected_ids = [i for index in window for i in examples[index]]
            used = len(expected_ids)
            assert laid.ids[row].tolist() == expected_ids + [0] * (length - used)
            assert laid.segments[row].tolist() == [number + 1 for number, index in enumerate(window)
                                                   for _ in examples[index]] + [0] * (length - used)
            assert laid.positions[row].tolist() == [p for index in window for p in range(len(examples[index]))] + \
                [0] * (length - used)
            assert int(laid.lengths[row]) == used
        if all(examples):  # every example once, in order (an empty one has no id to hold its segment)
            assert unpacked(laid.ids, laid.segments) == examples


def test_an_example_longer_than_the_window_is_refused():
    with pytest.raises(ValueError, match="example 1 is longer than the pack length 4"):
        packs([np.array([2, 5, 1])], 4)
