"""Inputs as models take them: BERT's pairs and segment ids (run_classifier.py's
convert_single_example, written out below from the published code), one text cut at either side,
and SQuAD's windows of a long text (run_squad.py's doc_stride), on real text."""
from __future__ import annotations

import collections

import pytest
from hypothesis import given
from hypothesis import strategies as st

from support.texts import english
from tfrecord_builder import text


@pytest.fixture(scope="module")
def tokenizer() -> text.Tokenizer:
    counts = collections.Counter(word for line in english() for word in text.words(line))
    return text.learn(counts, "wordpiece", 2000).tokenizer


def _truncate_seq_pair(tokens_a: list, tokens_b: list, max_length: int) -> None:
    """BERT's run_classifier.py, as published."""
    while True:
        total_length = len(tokens_a) + len(tokens_b)
        if total_length <= max_length:
            break
        if len(tokens_a) > len(tokens_b):
            tokens_a.pop()
        else:
            tokens_b.pop()


def convert_single_example(ids_a: list[int], ids_b: list[int] | None, max_seq_length: int, cls: int, sep: int):
    """BERT's run_classifier.convert_single_example, on ids: [CLS] a [SEP] (b [SEP]), segment ids 0
    then 1 (without its padding, which the feature adds)."""
    tokens_a, tokens_b = list(ids_a), None if ids_b is None else list(ids_b)
    if tokens_b is not None:
        _truncate_seq_pair(tokens_a, tokens_b, max_seq_length - 3)
    elif len(tokens_a) > max_seq_length - 2:
        tokens_a = tokens_a[0:(max_seq_length - 2)]
    tokens, segment_ids = [cls] + tokens_a + [sep], [0] * (len(tokens_a) + 2)
    if tokens_b:
        tokens += tokens_b + [sep]
        segment_ids += [1] * (len(tokens_b) + 1)
    return tokens, segment_ids


@pytest.mark.parametrize("max_length", [8, 32, 128, 512])
def test_pairs_and_segment_ids_are_berts(tokenizer, max_length):
    lines = english()
    first, second = lines[::2], lines[1::2][:len(lines[::2])]
    first = first[:len(second)]
    got = tokenizer.inputs(first, second, max_length=max_length)
    cls, sep = tokenizer.specials.cls.id, tokenizer.specials.sep.id
    encoded_a, encoded_b = tokenizer.encode(first), tokenizer.encode(second)
    expected = [convert_single_example(a, b, max_length, cls, sep) for a, b in zip(encoded_a, encoded_b)]
    assert got.ids == [ids for ids, _ in expected]
    assert got.segments == [segments for _, segments in expected]
    assert got.truncated == sum(len(a) + len(b) > max_length - 3 for a, b in zip(encoded_a, encoded_b))
    single = tokenizer.inputs(first, max_length=max_length)
    assert single.ids == [convert_single_example(a, None, max_length, cls, sep)[0] for a in encoded_a]
    assert single.segments == [[0] * len(ids) for ids in single.ids]
    assert single.truncated == sum(len(a) > max_length - 2 for a in encoded_a) > 0


@given(st.integers(0, 300), st.integers(0, 300), st.integers(1, 400))
def test_pair_lengths_are_truncate_seq_pairs(first, second, budget):
    a, b = list(range(first)), list(range(second))
    _truncate_seq_pair(a, b, budget)
    assert text.pair_lengths(first, second, budget) == (len(a), len(b))


def test_left_truncation_keeps_the_end(tokenizer):
    line = english()[0]
    ids = tokenizer.encode([line])[0]
    right, left = (tokenizer.inputs([line], max_length=10, side=side) for side in ("right", "left"))
    assert right.ids[0][1:-1] == ids[:8] and left.ids[0][1:-1] == ids[-8:]
    assert right.truncated == left.truncated == 1
    pair = tokenizer.assemble([ids], [ids[:3]], max_length=12, side="left")
    assert pair.ids[0] == [2] + ids[-6:] + [3] + ids[:3] + [3]
    with pytest.raises(ValueError, match="truncation side 'middle'"):
        tokenizer.inputs([line], side="middle")
    with pytest.raises(ValueError, match="max_length 2 leaves no room"):
        tokenizer.inputs([line], max_length=2)


@given(st.integers(0, 200), st.integers(1, 64), st.data())
def test_windows_give_back_every_token_with_the_strides_overlap(length, tokens, data):
    stride = data.draw(st.integers(1, tokens))
    ids = [1000 + number for number in range(length)]
    windows = text.window(ids, tokens, stride)
    for window in windows:  # each is the document's ids at its offset
        assert window.ids == ids[window.offset:window.offset + len(window.ids)] and len(window.ids) <= tokens
    seen = collections.Counter(number for window in windows for number in window.ids)
    assert set(seen) == set(ids)  # every token, in at least one window
    assert windows[0].offset == 0 and windows[-1].offset + len(windows[-1].ids) == length
    for before, after in zip(windows, windows[1:]):  # each starts a stride on (the last may be nearer the end)
        assert after.offset == before.offset + stride
        assert before.offset + len(before.ids) - after.offset == tokens - stride  # the overlap
    if stride == tokens:
        assert all(count == 1 for count in seen.values())


def test_windows_of_a_real_document_as_squad_cuts_it(tokenizer):
    ids = tokenizer.encode([" ".join(english()[:20])])[0]
    windows = text.window(ids, 384, 128)
    # run_squad.py's loop, as published
    doc_spans, start_offset = [], 0
    while start_offset < len(ids):
        length = min(len(ids) - start_offset, 384)
        doc_spans.append((start_offset, length))
        if start_offset + length == len(ids):
            break
        start_offset += min(length, 128)
    assert [(window.offset, len(window.ids)) for window in windows] == doc_spans and len(doc_spans) > 3
    assert text.window([], 4, 2) == [text.Window(0, [])]
    with pytest.raises(ValueError, match="stride 5: expected from 1 to the window's 4 tokens"):
        text.window(ids, 4, 5)
