"""Key hashes: each key's bytes hashed the same whatever its type, as a plain hashlib gives them."""
from __future__ import annotations

import hashlib

import numpy as np

from tfrecord_builder.build.encoding import key_labels
from tfrecord_builder.builders.base import Batch, KeyOrigins, RowOrigins
from tfrecord_builder.write.keys import hash_keys, hash_keys_and_members, keys_bytes, member_hashes
from tfrecord_builder.write.order import key_label


class Text(str):
    pass


KEYS = ["row 1", b"row 1", 7, -3, 2.5, ("a", 1), "é \udcff", Text("sub"), b"", ""]
BYTES = [b"row 1", b"row 1", b"7", b"-3", b"2.5", b"('a', 1)", "é \udcff".encode("utf-8", "surrogatepass"),
         b"sub", b"", b""]


def test_each_key_hashed_as_its_bytes_with_and_without_the_seed():
    assert keys_bytes(KEYS) == BYTES
    seed = 2**130 + 41
    salt = (seed % (1 << 128)).to_bytes(16, "little")
    keyed = b"".join(hashlib.blake2b(data, digest_size=16, key=salt).digest() for data in BYTES)
    expected = np.frombuffer(keyed, dtype=">u8").reshape(-1, 2).astype(np.uint64)
    assert np.array_equal(hash_keys(KEYS, seed), expected)
    assert np.array_equal(hash_keys(BYTES, seed), expected)  # bytes already: the same
    plain = b"".join(hashlib.blake2b(data, digest_size=8).digest() for data in BYTES)
    assert np.array_equal(member_hashes(KEYS), np.frombuffer(plain, dtype="<u8").astype(np.uint64))
    assert hash_keys([], 1).shape == (0, 2) and member_hashes([]).shape == (0,)
    both = hash_keys_and_members(KEYS, seed)  # one pass: the same two hashes
    assert np.array_equal(both[0], expected) and np.array_equal(both[1], member_hashes(KEYS))
    assert both[0].dtype == both[1].dtype == np.uint64
    empty = hash_keys_and_members([], 1)
    assert empty[0].shape == (0, 2) and empty[1].shape == (0,)


def test_labels_of_a_file_s_rows_are_the_key_labels():
    keys = ["a", "b'c", "d"]
    for origin in (RowOrigins("t.csv", [3, 5, 9], unit="row"), KeyOrigins("Mine", keys)):
        batch = Batch(keys=keys, columns={}, origin=origin)
        assert key_labels(batch, [2, 0]) == [key_label(origin(2), "d"), key_label(origin(0), "a")]
