"""The build's order and layout, stated once: both runners (the local one's in-memory sort and
run merge, Beam's buckets) call these functions, so they write the same bytes.

- **Order.** Shuffled: by key hash, its high word then its low word (`write/keys.py`); records
  with equal hashes (equal rows under content keys) by their place in the source, (task, row).
  Unshuffled: by place in the source. The local runner's records arrive in the source's order,
  so their arrival is their place; Beam's carry it (`build/plan.py` `source_order_keys`).
- **Duplicates.** Where keys must be unique (a builder's own keys), the first duplicate is the
  first record, in the order records are written, whose key an earlier record has; it is
  reported with the first record that has that key (`duplicate_key`, each record's label made by
  `key_label`). Sorted by key, a repeated key sits next to its twin (`repeats`).
- **Shards.** A split of n records in k shards (`count_shards`): shard i holds the records of
  ranks `i*n//k` to `(i+1)*n//k` in that order (`shard_starts`).
- **Distinct keys.** The different key hashes among records in key order (`distinct_keys`):
  the count the split warnings (build/run.py) compare with the number of records. Each runner
  counts where it has the records in key order: a shuffled build's whole split (Beam: bucket by
  bucket, each a range of hashes; locally in memory, or during the merge of the runs' hashes);
  an unshuffled build's records held in memory (locally: not counted once spilled to runs, as
  runs in the source's order can't be merged by key; Beam: each task's keys gathered by range
  of hashes, then counted range by range).
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ..errors import DataError


def write_order(hashes: np.ndarray, shuffle: bool, places: np.ndarray | None = None) -> np.ndarray:
    """The order records are written in, as indices into them: by key hash (ties by place) when
    `shuffle`, else by place. `hashes`: (n, 2) uint64; `places`: each record's place in the
    source, (n, 2) as (task, row), or None where the records come in the source's order."""
    if places is None:  # their position is their place: lexsort is stable
        return _by_hash(hashes) if shuffle else np.arange(len(hashes))
    # lexsort's last key is the primary one
    keys = (places[:, 1], places[:, 0]) + ((hashes[:, 1], hashes[:, 0]) if shuffle else ())
    return np.lexsort(keys)


def _by_hash(hashes: np.ndarray) -> np.ndarray:
    """The records by key hash, ties by position (`np.lexsort` of the low and high words). Sorted
    by the high words alone when no two of those are equal, which is then the same order: one
    sort instead of two (equal high words are equal keys, nearly always). That sort needn't be
    stable, as no two of its keys are equal: NumPy's quicksort (its SIMD sort) takes a fifth of the
    stable sort's time."""
    high = np.ascontiguousarray(hashes[:, 0])
    order = np.argsort(high)
    ordered = high[order]
    if len(ordered) > 1 and (ordered[1:] == ordered[:-1]).any():
        return np.lexsort((hashes[:, 1], high))
    return order


def key_order(hashes: np.ndarray, places: np.ndarray | None = None) -> np.ndarray:
    """The records by key hash, ties by place: the shuffled order, which duplicate checks and
    distinct counts of an unshuffled build use too."""
    return write_order(hashes, True, places)


def records_through(hashes: np.ndarray, bound: tuple[int, int], inclusive: bool) -> int:
    """How many records of `hashes`, in key order, sort before the hash `bound` (high, low
    words), and with `inclusive` the ones equal to it as well: what a merge may hand on from a
    window of a run while records that sort after `bound` are still on disk."""
    high, low = hashes[:, 0], hashes[:, 1]
    after = (high > bound[0]) | ((high == bound[0]) & ((low >= bound[1]) if not inclusive else (low > bound[1])))
    return int(np.argmax(after)) if after.any() else len(hashes)


def repeats(hashes: np.ndarray, previous: np.ndarray | None = None) -> np.ndarray:
    """The positions, in records in key order, of those whose key is the one before's (before
    the first comes `previous`, the hash of a record already handed on, if any)."""
    same = (hashes[1:, 0] == hashes[:-1, 0]) & (hashes[1:, 1] == hashes[:-1, 1])
    if previous is not None and len(hashes):
        same = np.concatenate([[bool((hashes[0] == previous).all())], same])
        return np.flatnonzero(same)
    return np.flatnonzero(same) + 1


def distinct_keys(hashes: np.ndarray, previous: np.ndarray | None = None) -> int:
    """How many different keys records in key order have (after `previous`, as `repeats`)."""
    return len(hashes) - len(repeats(hashes, previous))


def first_duplicate(hashes: np.ndarray, shuffle: bool, places: np.ndarray | None = None) -> tuple[int, int] | None:
    """The first duplicate among records (as for `write_order`): the index of the first record
    with the key and of the first record, in the write order, whose key an earlier one has; None
    when every key differs."""
    by_key = key_order(hashes, places)
    again = repeats(hashes[by_key])
    if not len(again):
        return None
    written = write_order(hashes, shuffle, places)
    rank = np.empty(len(written), np.int64)
    rank[written] = np.arange(len(written))
    # by key, a record's twin before it is the key's first record: the earliest-written second one
    # has the key's first before it (any earlier one would be written before it)
    position = int(again[np.argmin(rank[by_key[again]])])
    return int(by_key[position - 1]), int(by_key[position])


class SeenKeys:
    """Keys met so far, record after record in the source's order: how a runner finds the first
    duplicate (as `first_duplicate` unshuffled) before it has every record, without sorting."""

    def __init__(self) -> None:
        self._origins: dict[bytes, str] = {}

    def add(self, hashes: np.ndarray, origin: Callable[[int], str], label: Callable[[int], str]) -> None:
        """Adds records (`origin(row)`, `label(row)`: a record's origin and its `key_label`);
        raises DataError at the first whose key was met before."""
        raw = hashes.astype(np.uint64).tobytes()
        origins = self._origins
        for row in range(len(hashes)):
            digest = raw[16 * row : 16 * row + 16]
            if digest in origins:
                raise duplicate_key(origins[digest], label(row))
            origins[digest] = origin(row)


def key_label(origin: str, key: object) -> str:
    """What a record with a key that must be unique carries, for `duplicate_key`'s message."""
    return f"{origin}\0{key!r}"


def duplicate_key(first: str, second: str) -> DataError:
    """The error for a key yielded twice: the labels of both records (or the first one's origin)."""
    origin, _, key = second.partition("\0")
    return DataError(f"{origin}: duplicate key {key} (also yielded at {first.partition(chr(0))[0]}); "
                     "expected unique keys")


# The fewest records a shard holds, where its split has as many: the `tfrecord` package's reader
# fails on the index file of a one-record shard (NumPy reads its one line as a 1-D array)
MIN_SHARD_RECORDS = 2


def count_shards(num_examples: int, num_bytes: int, shards: int | None, target_bytes: int) -> int:
    """Shards for a split: the spec's count, or enough to keep each under the target size; but no
    more than leave every shard MIN_SHARD_RECORDS records (one shard for a split of one record)."""
    wanted = asked_shards(num_examples, num_bytes, shards, target_bytes)
    if not num_examples:
        return wanted
    return max(1, min(wanted, num_examples // MIN_SHARD_RECORDS))


def asked_shards(num_examples: int, num_bytes: int, shards: int | None, target_bytes: int) -> int:
    """The shards the spec asks for a split: its count, or enough to keep each under the target size."""
    if shards is not None:
        return shards
    return max(1, math.ceil(num_bytes / target_bytes)) if num_examples else 1


def shard_starts(total: int, num_shards: int) -> np.ndarray:
    """The rank of each shard's first record (and `total` at the end): near-equal counts."""
    return np.array([index * total // num_shards for index in range(num_shards + 1)], dtype=np.int64)


def shard_of(starts: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """The shard of the records at `ranks` of the write order, for shards that start at `starts`."""
    return np.searchsorted(starts, ranks, side="right") - 1


def edge_ranks(starts: np.ndarray) -> set[int]:
    """The ranks of every non-empty shard's first and last record (whose key hashes a resumed
    build compares to keep a shard)."""
    return {rank for low, high in zip(starts[:-1].tolist(), starts[1:].tolist()) if high > low
            for rank in (low, high - 1)}
