"""Stratified split assignment: every class divided among the splits by rank of key hash."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings, strategies as st

from tfrecord_builder.write.keys import hash_keys
from tfrecord_builder.write.strata import stratified


@st.composite
def _tables(draw):
    """Records of a few classes (some large, some of one record) with unique keys, and fractions."""
    counts = draw(st.lists(st.integers(1, 300), min_size=1, max_size=5))
    weights = draw(st.lists(st.integers(1, 20), min_size=1, max_size=4))
    fractions = [weight / sum(weights) for weight in weights]
    classes = np.repeat(np.arange(len(counts)), counts)
    hashes = hash_keys([f"record-{i}" for i in range(len(classes))], draw(st.integers(0, 2**32)))
    return classes, hashes, fractions, draw(st.randoms(use_true_random=False))


def _reference(classes, hashes, fractions):
    """The contract, plainly: within a class, records ranked by key hash; split s takes ranks
    [round(c[s-1] * n), round(c[s] * n)), halves rounded up."""
    splits = np.zeros(len(classes), np.int64)
    cumulative = [0.0] + list(np.cumsum(fractions))
    for label in set(classes.tolist()):
        members = sorted(np.flatnonzero(classes == label).tolist(), key=lambda row: tuple(hashes[row].tolist()))
        n = len(members)
        for rank, row in enumerate(members):
            splits[row] = next(s for s in range(len(fractions))
                               if rank < min(n, math.floor(cumulative[s + 1] * n + 0.5)) or s == len(fractions) - 1)
    return splits


@settings(max_examples=60, deadline=None)
@given(_tables())
def test_each_split_holds_its_fraction_of_every_class_within_one_record(table):
    classes, hashes, fractions, _ = table
    splits = stratified(classes, hashes, fractions).assign(classes, hashes)
    for label in set(classes.tolist()):
        n = int((classes == label).sum())
        for index, fraction in enumerate(fractions):
            made = int(((classes == label) & (splits == index)).sum())
            assert abs(made - n * fraction) <= 1, (label, index, made, n * fraction)


@settings(max_examples=60, deadline=None)
@given(_tables())
def test_the_assignment_is_the_reference_and_independent_of_record_order(table):
    classes, hashes, fractions, random = table
    expected = _reference(classes, hashes, fractions)
    order = list(range(len(classes)))
    random.shuffle(order)
    order = np.array(order)
    strata = stratified(classes[order], hashes[order], fractions)  # read in another order
    assert strata == stratified(classes, hashes, fractions)
    # assigned batch by batch, as the encoding stage does, in that other order
    cut = random.randint(0, len(order))
    assigned = np.empty(len(classes), np.int64)
    for rows in (order[:cut], order[cut:]):
        assigned[rows] = strata.assign(classes[rows], hashes[rows])
    assert assigned.tolist() == expected.tolist()


def test_equal_hashes_share_a_split():
    """Equal rows (the row its own key) have equal hashes: a cut between them would move to after both."""
    hashes = hash_keys(["a", "b", "b", "c"], 0)
    classes = np.zeros(4, np.int64)
    splits = stratified(classes, hashes, [0.5, 0.5]).assign(classes, hashes)
    assert splits[1] == splits[2]


def test_strata_state_is_json_text():
    classes = np.array([0, 0, 2], np.int64)
    hashes = np.array([[1, 2], [3, 4], [5, 6]], np.uint64)
    strata = stratified(classes, hashes, [0.5, 0.5])
    assert strata.state() == {"0": [f"{3:016x}{4:016x}"], "2": [None]}
