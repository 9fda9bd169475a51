"""Checkpoints of a long build's encoding, so `--resume` encodes only what is left.

At most every `INTERVAL` seconds while a build encodes (and once more when encoding ends, if it
took that long), every buffered record is written to its split's sorted runs in the staging
folder, then `checkpoint.json` records: how many source batches are done, a digest of their
keys, each split's runs and counts, the statistics so far and the skipped records. A resumed
build of the same spec restores that state and reads the source again up to that point without
encoding it; if the keys read differ from the digest, the checkpoint is dropped and the build
starts over. A quick build never checkpoints: losing it costs less than writing one.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from typing import Any

from ..atomic import AtomicFile

INTERVAL = 60.0  # seconds of encoding between checkpoints
CHECKPOINT_FILE = "checkpoint.json"
RUNS_FOLDER = "runs"


@dataclass
class EncodingState:
    """How far encoding got: enough to carry on from there with the same result."""

    build: str  # the spec-and-tool fingerprint the state belongs to
    batches: int = 0  # source batches encoded
    records: int = 0  # records read from them (skipped ones included)
    keys_digest: str = ""  # a chained digest of every batch's key hashes
    splits: dict[str, dict[str, Any]] = field(default_factory=dict)  # runs (file names), num_examples, num_bytes
    statistics: dict[str, Any] = field(default_factory=dict)  # the statistics tree so far (build/plan.py)
    skipped: list[dict[str, str]] = field(default_factory=list)
    strata: dict[str, Any] | None = None  # a stratified build's division of each class (write/strata.py)
    notices: dict[str, int] = field(default_factory=dict)  # features/notices.py: by text, their counts so far
    members: dict[str, str] = field(default_factory=dict)  # split -> its key hashes so far (a file in runs/)
    kept: int = 0  # records whose split an earlier version decided (--keep-splits)


def chain(digest: str, batch_keys: bytes) -> str:
    """The keys digest after one more batch (`batch_keys`: the batch's key hashes, as bytes)."""
    return hashlib.blake2b(bytes.fromhex(digest) + batch_keys, digest_size=16).hexdigest()


def save(folder: str, state: EncodingState) -> None:
    """Writes the checkpoint whole or not at all, after the runs it lists are on disk."""
    for split in state.splits.values():
        for run in split["runs"]:
            with open(os.path.join(folder, RUNS_FOLDER, run), "rb") as file:
                os.fsync(file.fileno())
    path = os.path.join(folder, CHECKPOINT_FILE)
    with AtomicFile(path, "w", encoding="utf-8") as file:
        json.dump(asdict(state), file)


def load(folder: str, build: str) -> EncodingState | None:
    """The checkpoint of an interrupted build of the same fingerprint whose runs are all there."""
    try:
        with open(os.path.join(folder, CHECKPOINT_FILE), encoding="utf-8") as file:
            state = EncodingState(**json.load(file))
    except (OSError, ValueError, TypeError):
        return None
    if state.build != build:
        return None
    for split in state.splits.values():
        if not all(os.path.isfile(os.path.join(folder, RUNS_FOLDER, run)) for run in split["runs"]):
            return None
    if not all(os.path.isfile(os.path.join(folder, RUNS_FOLDER, name)) for name in state.members.values()):
        return None
    return state


def drop_unlisted_runs(folder: str, state: EncodingState | None) -> None:
    """Removes the runs in the staging `folder` that the checkpoint `state` (None: none) doesn't
    list: those a killed build's workers wrote after its last checkpoint, or merged from others,
    which a resumed build would otherwise leave on disk until it ends."""
    listed = {run for split in (state.splits.values() if state is not None else ()) for run in split["runs"]}
    listed |= set(state.members.values()) if state is not None else set()
    runs = os.path.join(folder, RUNS_FOLDER)
    for name in os.listdir(runs) if os.path.isdir(runs) else []:
        if name not in listed:
            os.remove(os.path.join(runs, name))


def discard(folder: str) -> None:
    path = os.path.join(folder, CHECKPOINT_FILE)
    if os.path.exists(path):
        os.remove(path)
