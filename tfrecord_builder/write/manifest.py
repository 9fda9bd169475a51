"""The manifest of an unfinished build: every finished shard, so `--resume` can keep it.

`manifest.jsonl` in the staging folder starts with the build's fingerprint (the normalised spec
and the tool version) and gets a line per shard as soon as the shard is renamed into place: its
file, sha256, example count and the range of key hashes it holds. A resumed build keeps a shard
only if the fingerprint is the same, the file still has its sha256, and the records that would go
into it have the same count and key range.
"""
from __future__ import annotations

import hashlib
import json
import os
from typing import Any

MANIFEST_FILE = "manifest.jsonl"


def fingerprint(spec_dict: dict[str, Any], tool_version: str) -> str:
    text = json.dumps({"spec": spec_dict, "tool": tool_version}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class Manifest:
    """Appends finished shards to the staging folder's manifest, fsynced line by line."""

    def __init__(self, folder: str, build: str):
        self.path = os.path.join(folder, MANIFEST_FILE)
        self.build = build
        if not os.path.exists(self.path):
            self._append({"build": build})

    def add(self, split: str, shard: dict[str, Any], first: str, last: str) -> None:
        self._append({"split": split, **shard, "first_key_hash": first, "last_key_hash": last})

    def _append(self, entry: dict[str, Any]) -> None:
        with open(self.path, "a", encoding="utf-8") as file:
            file.write(json.dumps(entry) + "\n")
            file.flush()
            os.fsync(file.fileno())


def finished_shards(folder: str, build: str) -> dict[str, dict[str, Any]]:
    """The shards of an earlier, unfinished run of the same build that are still intact, by file."""
    path = os.path.join(folder, MANIFEST_FILE)
    try:
        with open(path, encoding="utf-8") as file:
            entries = [json.loads(line) for line in file if line.strip()]
    except (OSError, ValueError):
        return {}
    if not entries or entries[0].get("build") != build:
        return {}
    kept = {}
    for entry in entries[1:]:
        shard = os.path.join(folder, entry["file"])
        if os.path.exists(shard) and _sha256(shard) == entry["sha256"]:
            kept[entry["file"]] = entry
    return kept


def has_shards(folder: str) -> bool:
    """Whether the staging folder's manifest lists a finished shard."""
    try:
        with open(os.path.join(folder, MANIFEST_FILE), encoding="utf-8") as file:
            return sum(1 for line in file if line.strip()) > 1
    except OSError:
        return False


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
