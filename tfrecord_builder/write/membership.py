"""Which records each split holds, recorded beside the shards so that two versions of a dataset
can be compared row by row (`diff`: rows that changed split) and a build can keep an earlier
version's splits (`build --keep-splits`).

`splits/NAME-SPLIT.keys`, one file per split: the key hash of each of the split's records
(`keys.member_hashes`: the 8-byte BLAKE2b of the key's bytes, without the seed, so versions built
with different seeds compare), as little-endian uint64, sorted ascending; records with equal keys
repeat their hash, so a file holds 8 bytes per example. The same on every runner, for any worker
count. `tfrecord_builder.json`'s `membership` names the files; a dataset built by an earlier
version (0.3.0.dev0 before issue 27) has none.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import fs
from ..errors import DatasetError, UsageError
from .info import DatasetInfo, write_file

MEMBERSHIP_FOLDER = "splits"  # no ".tfrecord" in the folder's or the files' names: shard globs skip them
HASH = "blake2b-64 of the key bytes, little-endian uint64, sorted"


def membership_name(name: str, split: str) -> str:
    """`splits/wine-train.keys`, relative to the dataset folder."""
    return f"{MEMBERSHIP_FOLDER}/{name}-{split}.keys"


def write_membership(folder: str, name: str, members: dict[str, np.ndarray]) -> dict[str, Any]:
    """Writes each split's key hashes, sorted, into `folder`; returns the metadata entry naming them."""
    files = {}
    for split, hashes in members.items():
        files[split] = membership_name(name, split)
        write_file(os.path.join(folder, files[split]), np.sort(hashes.astype(np.uint64)).astype("<u8").tobytes())
    return {"hash": HASH, "files": files}


def read_membership(info: DatasetInfo) -> dict[str, np.ndarray] | None:
    """Each split's sorted key hashes, or None for a dataset built without them. Raises DatasetError
    for a file that is missing or doesn't hold one hash per example."""
    if info.membership is None:
        return None
    found = {}
    for split, name in info.membership["files"].items():
        path = fs.join(info.path, name)
        try:
            with fs.open_file(path, "rb") as file:
                data = file.read()
        except FileNotFoundError:
            raise DatasetError(f"{path}: missing (the split membership tfrecord_builder.json lists)") from None
        expected = info.splits[split].num_examples if split in info.splits else None
        if len(data) % 8 or (expected is not None and len(data) // 8 != expected):
            raise DatasetError(f"{path}: {len(data)} bytes; expected 8 per example of split {split} "
                               f"({expected} examples)")
        found[split] = np.frombuffer(data, dtype="<u8").astype(np.uint64)
    return found


@dataclass(frozen=True)
class KeptSplits:
    """An earlier version's split of each key it holds, for a build that keeps them
    (`--keep-splits`): `hashes` sorted, `splits` the index of each one's split among the new spec's."""

    source: str  # the earlier dataset's folder
    hashes: np.ndarray  # uint64, sorted
    splits: np.ndarray  # int64, per hash

    @classmethod
    def of(cls, info: DatasetInfo, names: list[str]) -> "KeptSplits":
        """The splits of the dataset `info` for a spec whose splits are `names`. Raises UsageError
        for a dataset without membership files, or with a split the spec lacks."""
        members = read_membership(info)
        if members is None:
            raise UsageError(f"--keep-splits {info.path}: the dataset records no split membership (built before "
                             "tfrecord-builder wrote splits/); rebuild that version first, or build without it")
        missing = [split for split, hashes in members.items() if len(hashes) and split not in names]
        if missing:
            raise UsageError(f"--keep-splits {info.path}: its split {', '.join(missing)} is not among the spec's "
                             f"({', '.join(names)}); its rows would have nowhere to stay")
        hashes = np.concatenate([members[split] for split in members] or [np.empty(0, np.uint64)])
        splits = np.concatenate([np.full(len(members[split]), names.index(split) if split in names else -1, np.int64)
                                 for split in members] or [np.empty(0, np.int64)])
        order = np.argsort(hashes, kind="stable")
        return cls(info.path, hashes[order], splits[order])

    def splits_of(self, members: np.ndarray) -> np.ndarray:
        """The earlier split (an index among the spec's) of each of `members`, -1 where it had none."""
        places = np.searchsorted(self.hashes, members)
        inside = places < len(self.hashes)
        found = np.zeros(len(members), dtype=bool)
        found[inside] = self.hashes[places[inside]] == members[inside]
        return np.where(found, self.splits[np.minimum(places, len(self.hashes) - 1)] if len(self.hashes) else -1, -1)

    def digest(self) -> str:
        """What a resumed build checks: the same keys kept in the same splits."""
        return hashlib.blake2b(self.hashes.tobytes() + self.splits.tobytes(), digest_size=16).hexdigest()
