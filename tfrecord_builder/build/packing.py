"""The spec's `pack: {length: N}`: a batch's records, once divided among the splits, packed split by
split into records of N ids (text/pack.py decides the windows, features/text_pack.py lays out each
text feature).

Which examples share a record depends only on the batch: its examples of one split, in source
order, greedily (an example joins the record being filled while every text feature's ids fit N).
A build's batches are the same on every runner and for any number of workers (each read task's
rows, `batch_rows` at a time), so the same data give the same packs, byte for byte; a pack never
crosses a batch (at most one part-filled record per split a batch) or a split.

A packed record's key is its first example's (its place in its shard, its split membership); an
example of no ids at all (an empty text without special tokens) has nothing to pack and is left
out, counted.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ..builders.base import Batch
from ..codec.example import examples, features_entries
from ..features import Feature
from ..features.notices import Notices
from .encode_batch import BatchRecords


def packed(features: Mapping[str, Feature], length: int, batch: Batch, encoded: BatchRecords, hashes: np.ndarray,
           members: np.ndarray, assignment: np.ndarray, splits: int, notices: Notices
           ) -> tuple[Batch, BatchRecords, np.ndarray, np.ndarray, np.ndarray]:
    """The batch's packed records, split by split in split order: the batch of their keys (each
    its first example's), their encoding, key hashes, membership hashes and split of each."""
    from ..text.pack import packs
    chosen: list[np.ndarray] = []
    firsts_of: list[np.ndarray] = []
    split_of: list[np.ndarray] = []
    for index in range(splits):
        rows = np.flatnonzero(assignment == index)
        lengths = [encoded.values[name][feature.record_key].counts[rows] for name, feature in features.items()]
        empty = np.all(np.stack(lengths) == 0, axis=0) if len(rows) else np.zeros(0, dtype=bool)
        for _ in range(int(empty.sum())):
            notices.note("pack: {count} example{s} of no ids (an empty text without special tokens) left out")
        rows = rows[~empty]
        if not len(rows):
            continue
        firsts = packs([counts[~empty] for counts in lengths], length)
        firsts_of.append(firsts + len(np.concatenate(chosen)) if chosen else firsts)
        chosen.append(rows)
        split_of.append(np.full(len(firsts), index, dtype=np.int64))
    rows = np.concatenate(chosen) if chosen else np.zeros(0, dtype=np.int64)
    firsts = np.concatenate(firsts_of) if firsts_of else np.zeros(0, dtype=np.int64)
    # each split's examples, one after the other: a split's packs start at its own first example
    values = {}
    for name, feature in features.items():
        taken = {key: item.repeated(rows) for key, item in encoded.values[name].items()}  # (in this order)
        values[name] = feature.packed_values(taken, firsts)
    leaders = rows[firsts]  # each pack's first example, as a row of the batch
    by_key = {key: item for by_feature in values.values() for key, item in by_feature.items()}
    records = examples(features_entries(by_key), True)
    missing = {name: np.zeros(len(firsts), dtype=bool) for name in features}
    packed_batch = batch.without_columns().select(leaders.tolist())
    return (packed_batch, BatchRecords(records, values, missing, None, encoded.notices), hashes[leaders],
            members[leaders], np.concatenate(split_of) if split_of else np.zeros(0, dtype=np.int64))
