"""Hashing record keys: split assignment and shuffle order follow from the key and the seed.

A key's 128-bit keyed BLAKE2b hash is a pure function of (key, seed), so a record lands in the
same split and the same place of its shard whatever the row order, the worker count or the
machine.
"""
from __future__ import annotations

import hashlib
from typing import Any, Sequence

import numpy as np


def key_bytes(key: Any) -> bytes:
    if isinstance(key, bytes):
        return key
    return str(key).encode("utf-8", "surrogatepass")


def keys_bytes(keys: Sequence[Any]) -> list[bytes]:
    """Each key's bytes (`key_bytes`), what both hashes hash: made once where a batch needs both."""
    return [key if type(key) is bytes else key.encode("utf-8", "surrogatepass") if type(key) is str
            else key_bytes(key) for key in keys]


def hash_keys(keys: Sequence[Any], seed: int) -> np.ndarray:
    """An (n, 2) uint64 array: the high and low halves of each key's hash."""
    return _halves(_digests(keys, _keyed(seed)))


def hash_keys_and_members(keys: Sequence[Any], seed: int) -> tuple[np.ndarray, np.ndarray]:
    """`hash_keys(keys, seed)` and `member_hashes(keys)`, in one pass over the keys: where a
    batch needs both (a loop of Python per key is a third of their cost)."""
    keyed, plain = _keyed(seed).copy, _PLAIN_8.copy
    digests: list[bytes] = []
    members: list[bytes] = []
    for key in keys_bytes(keys):
        state = keyed()
        state.update(key)
        digests.append(state.digest())
        state = plain()
        state.update(key)
        members.append(state.digest())
    return _halves(b"".join(digests)), _members(b"".join(members))


def assign_splits(hashes: np.ndarray, fractions: Sequence[float]) -> np.ndarray:
    """The split index of each hash: its high half, as a fraction of 2^64, falls in a split's range."""
    position = hashes[:, 0].astype(np.float64) / 2.0**64
    bounds = np.cumsum(fractions)[:-1]
    return np.searchsorted(bounds, position, side="right")


def member_hashes(keys: Sequence[Any]) -> np.ndarray:
    """A uint64 per key: its 8-byte BLAKE2b hash (`digest_size=8`, no key, no seed), read little-endian.

    Unlike `hash_keys` these don't depend on `output.seed`: they name a record across versions of
    a dataset built with any seed, in the split membership files (write/membership.py)."""
    return _members(_digests(keys, _PLAIN_8))


_PLAIN_8 = hashlib.blake2b(digest_size=8)


def _keyed(seed: int) -> Any:
    """`hash_keys`' hash before any key: 16-byte BLAKE2b keyed by the seed (the salt hashed once;
    each key's hash is a copy of it)."""
    return hashlib.blake2b(digest_size=16, key=(seed % (1 << 128)).to_bytes(16, "little"))


def _halves(digests: bytes) -> np.ndarray:
    """16-byte digests side by side as (n, 2) uint64: high and low halves, big-endian."""
    return np.frombuffer(digests, dtype=">u8").reshape(-1, 2).astype(np.uint64)


def _members(digests: bytes) -> np.ndarray:
    """8-byte digests side by side as uint64, read little-endian."""
    return np.frombuffer(digests, dtype="<u8").astype(np.uint64)


def _digests(keys: Sequence[Any], start: Any) -> bytes:
    """Each key's digest by a copy of the hash `start`, side by side: copied per key, twice as
    fast as a new hash object each time."""
    copy = start.copy
    digests: list[bytes] = []
    append = digests.append
    for key in keys_bytes(keys):
        state = copy()
        state.update(key)
        append(state.digest())
    return b"".join(digests)


def hash_hex(hashes: np.ndarray, row: int) -> str:
    """The key hash at `row` of an (n, 2) array, in hex: how a shard's first and last keys are
    recorded (and compared when a resumed build keeps a shard)."""
    return hashes[row].astype(">u8").tobytes().hex()
