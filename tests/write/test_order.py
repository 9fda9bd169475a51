"""The build's order and layout (write/order.py) against plain Python: a sort over tuples, a set
of keys met, a list of shards; and the local runner's run merge against the in-memory order."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tfrecord_builder.codec.bytecolumn import ByteColumn
from tfrecord_builder.errors import DataError
from tfrecord_builder.write import collect, merge, runs as run_files
from tfrecord_builder.write.order import (SeenKeys, distinct_keys, duplicate_key, edge_ranks, first_duplicate,
                                          key_label, key_order, records_through, repeats, shard_of, shard_starts,
                                          write_order)

# hashes drawn from few values (many ties), with high words past 2^63 (uint64, not int64)
WORDS = st.sampled_from([0, 1, 7, 2**63, 2**64 - 1])
HASHES = st.lists(st.tuples(WORDS, WORDS), max_size=60)


def _array(pairs) -> np.ndarray:
    return np.array(pairs, dtype=np.uint64).reshape(-1, 2)


def _places(count: int, data) -> list[tuple[int, int]]:
    """Distinct (task, row) places in a drawn order: records come in any order, as Beam's."""
    places = data.draw(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 50)), min_size=count, max_size=count,
                                unique=True))
    return places


def _plain_duplicate(keys: list, written: list[int]) -> tuple[int, int] | None:
    """The first record, in the order `written`, whose key was met before, and the key's first record."""
    first: dict = {}
    for index in written:
        if keys[index] in first:
            return first[keys[index]], index
        first[keys[index]] = index
    return None


@given(HASHES, st.booleans(), st.data())
def test_the_write_order_is_a_plain_sort_of_hash_then_place(pairs, shuffle, data):
    places = _places(len(pairs), data)
    hashes, where = _array(pairs), _array(places)
    if shuffle:
        expected = sorted(range(len(pairs)), key=lambda i: (pairs[i], places[i]))
    else:
        expected = sorted(range(len(pairs)), key=lambda i: places[i])
    assert write_order(hashes, shuffle, where).tolist() == expected
    # records in the source's order: their position is their place
    expected = sorted(range(len(pairs)), key=lambda i: (pairs[i], i)) if shuffle else list(range(len(pairs)))
    assert write_order(hashes, shuffle).tolist() == expected
    assert key_order(hashes).tolist() == sorted(range(len(pairs)), key=lambda i: (pairs[i], i))


@given(HASHES, st.booleans(), st.booleans(), st.data())
def test_the_first_duplicate_is_the_first_written_whose_key_was_met(pairs, shuffle, placed, data):
    places = _places(len(pairs), data) if placed else [(0, i) for i in range(len(pairs))]
    written = sorted(range(len(pairs)), key=lambda i: (pairs[i], places[i]) if shuffle else places[i])
    expected = _plain_duplicate(pairs, written)
    assert first_duplicate(_array(pairs), shuffle, _array(places) if placed else None) == expected


@given(st.lists(HASHES, max_size=6))
def test_keys_met_batch_by_batch_find_the_unshuffled_first_duplicate(batches):
    """The local runner's streaming check (records in the source's order) and the in-memory rule
    (Beam's) name the same two records, in the same message."""
    every = [pair for batch in batches for pair in batch]
    labels = [key_label(f"f.csv, line {i}", f"k{pair[0]}-{pair[1]}") for i, pair in enumerate(every)]
    found = first_duplicate(_array(every), False)
    seen, offset = SeenKeys(), 0
    try:
        for batch in batches:
            start = offset
            seen.add(_array(batch), lambda row: f"f.csv, line {start + row}", lambda row: labels[start + row])
            offset += len(batch)
    except DataError as error:
        assert found is not None
        assert str(error) == str(duplicate_key(labels[found[0]], labels[found[1]]))
    else:
        assert found is None


def test_a_duplicate_is_reported_with_both_labels():
    first, second = key_label("a.jsonl, line 3", "k7"), key_label("b.jsonl, line 9", "k7")
    assert str(duplicate_key(first, second)) == ("b.jsonl, line 9: duplicate key 'k7' (also yielded at "
                                                 "a.jsonl, line 3); expected unique keys")


@given(HASHES, st.integers(1, 7))
def test_distinct_keys_and_repeats_count_a_set_in_any_cut_of_the_key_order(pairs, cut):
    """Counted a block at a time, each after the last record of the block before (as the merge does)."""
    hashes = _array(pairs)[key_order(_array(pairs))]
    assert distinct_keys(hashes) == len(set(pairs))
    sorted_pairs = sorted(pairs)
    assert repeats(hashes).tolist() == [i for i in range(1, len(pairs)) if sorted_pairs[i] == sorted_pairs[i - 1]]
    total, previous = 0, None
    for low in range(0, len(hashes), cut):
        total += distinct_keys(hashes[low : low + cut], previous)
        previous = hashes[low + cut - 1] if low + cut <= len(hashes) else hashes[-1]
    assert total == len(set(pairs))


@given(HASHES, st.tuples(WORDS, WORDS), st.booleans())
def test_records_through_a_bound_are_those_a_plain_comparison_takes(pairs, bound, inclusive):
    sorted_pairs = sorted(pairs)
    expected = sum(1 for pair in sorted_pairs if pair < bound or (inclusive and pair == bound))
    assert records_through(_array(sorted_pairs), bound, inclusive) == expected


@given(st.integers(0, 300), st.integers(1, 40))
def test_shards_take_near_equal_runs_of_ranks(total, num_shards):
    starts = shard_starts(total, num_shards)
    plain = [shard for shard in range(num_shards) for _ in range(total * (shard + 1) // num_shards
                                                                  - total * shard // num_shards)]
    assert shard_of(starts, np.arange(total)).tolist() == plain
    counts = np.diff(starts)
    assert counts.sum() == total and counts.max() - counts.min() <= 1
    assert edge_ranks(starts) == {rank for shard in set(plain) for rank in
                                  (plain.index(shard), len(plain) - 1 - plain[::-1].index(shard))}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(WORDS, st.integers(0, 2)), min_size=1, max_size=200), st.integers(1, 9),
       st.integers(1, 6), st.integers(1, 5), st.booleans(), st.sampled_from([2, 3, 128]))
def test_the_run_merge_writes_the_in_memory_order(tmp_path_factory, pairs, batches, window, shards, shuffle, max_runs):
    """Records spilled to runs (a batch a run), merged into fewer past `max_runs`, and merged
    shard by shard through windows of a few records: record for record the order a sort in
    memory gives, ties in arrival order (each record's bytes here are its arrival number, though
    equal content keys always carry equal bytes), and the same count of distinct keys."""
    folder = tmp_path_factory.mktemp("runs")
    hashes = _array(pairs)
    rows = [str(i).encode() for i in range(len(pairs))]
    saved = collect.SPILL_BYTES, merge.CHUNK_BYTES, run_files.CHUNK_RECORDS, collect.MAX_RUNS
    collect.SPILL_BYTES, merge.CHUNK_BYTES, run_files.CHUNK_RECORDS, collect.MAX_RUNS = 0, 1, window, max_runs
    try:
        records = collect.SplitRecords(str(folder), shuffle=shuffle)
        size = -(-len(pairs) // batches)
        for low in range(0, len(pairs), size):
            records.add(hashes[low : low + size], ByteColumn.from_rows(rows[low : low + size]))
        records.combine()
        plan, distinct = records.slices(shard_starts(len(pairs), shards))
        merged = [row for shard in plan for _, chunk in merge.read_slices(shard.slices, shuffle) for row in chunk.rows()]
    finally:
        collect.SPILL_BYTES, merge.CHUNK_BYTES, run_files.CHUNK_RECORDS, collect.MAX_RUNS = saved
    assert merged == [rows[i] for i in write_order(hashes, shuffle).tolist()]
    assert distinct == (len(set(pairs)) if shuffle else None)


@pytest.mark.parametrize("window", [1, 2, 3])
def test_the_merge_names_the_first_duplicate_of_the_in_memory_order(tmp_path, monkeypatch, window):
    """A key three times, its first two in one run whose window ends between them: the twins
    named are the key's first two records in the source's order, as a sort in memory names them."""
    monkeypatch.setattr(collect, "SPILL_BYTES", 0)
    monkeypatch.setattr(merge, "CHUNK_BYTES", 1)
    monkeypatch.setattr(run_files, "CHUNK_RECORDS", window)
    batches = [[(1, 0), (5, 0), (5, 0)], [(5, 0), (9, 0)]]
    every = [pair for batch in batches for pair in batch]
    labels = [key_label(f"f.csv, line {i}", "k") for i in range(len(every))]
    records, low = collect.SplitRecords(str(tmp_path), shuffle=True), 0
    for batch in batches:
        records.add(_array(batch), ByteColumn.from_rows([b"x"] * len(batch)), labels[low : low + len(batch)])
        low += len(batch)
    first, second = first_duplicate(_array(every), True)
    assert (first, second) == (1, 2)
    with pytest.raises(DataError) as raised:
        records.slices(shard_starts(len(every), 1))
    assert str(raised.value) == str(duplicate_key(labels[first], labels[second]))
