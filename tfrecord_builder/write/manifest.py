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

from .. import fs
from ..atomic import naming

MANIFEST_FILE = "manifest.jsonl"
SHARDS_FOLDER = "manifest"  # one file per shard, where shards are written by many workers at once


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
        """Appends the entry's line whole or not at all: a line a full disk cut short is cut off
        again (a manifest that doesn't parse would keep no shard for `--resume`). Unbuffered, so
        nothing of the line is left to be written when the file closes."""
        data = (json.dumps(entry) + "\n").encode("utf-8")
        with open(self.path, "ab", buffering=0) as file:
            size = os.fstat(file.fileno()).st_size
            try:
                while data:
                    data = data[file.write(data):]
                os.fsync(file.fileno())
            except OSError as error:
                os.ftruncate(file.fileno(), size)
                named = naming(error, self.path)
                if named is None:
                    raise
                raise named from error


def record_shard(folder: str, build: str, split: str, shard: dict[str, Any], first: str, last: str) -> None:
    """Records a finished shard in a file of its own (`manifest/FILE.json`), whole or not at all:
    what a worker of a parallel build does once the shard is in place (`folder` may be a URL)."""
    entry = json.dumps({"build": build, "split": split, **shard, "first_key_hash": first, "last_key_hash": last})
    path = fs.join(folder, SHARDS_FOLDER, shard["file"] + ".json")
    fs.write_whole(path, entry.encode("utf-8"))


def finished_shards(folder: str, build: str) -> dict[str, dict[str, Any]]:
    """The shards of an earlier, unfinished run of the same build that are still intact, by file."""
    return {file: entry for file, entry in recorded_shards(folder, build).items()
            if _intact(fs.join(folder, file), entry["sha256"])
            and (entry.get("index") is None or _intact(fs.join(folder, entry["index"]["file"]), entry["index"]["sha256"]))}


def _intact(path: str, sha256: str) -> bool:
    return fs.exists(path) and _sha256(path) == sha256


def recorded_shards(folder: str, build: str) -> dict[str, dict[str, Any]]:
    """Every shard the manifest lists for this build, by file, as recorded (files not re-read)."""
    entries = []
    try:
        with open(os.path.join(folder, MANIFEST_FILE), encoding="utf-8") as file:
            lines = [json.loads(line) for line in file if line.strip()]
        if lines and lines[0].get("build") == build:
            entries += lines[1:]
    except (OSError, ValueError):
        pass
    entries += [entry for entry in _shard_entries(folder) if entry.get("build") == build]
    return {entry["file"]: entry for entry in entries}


def _shard_entries(folder: str) -> list[dict[str, Any]]:
    entries = fs.join(folder, SHARDS_FOLDER)
    found = []
    for name in sorted(fs.listdir(entries)) if fs.isdir(entries) else []:
        if name.endswith(".json"):
            try:
                with fs.open_file(fs.join(entries, name)) as file:
                    found.append(json.loads(file.read().decode("utf-8")))
            except (OSError, ValueError):
                continue
    return found


def has_shards(folder: str) -> bool:
    """Whether the staging folder's manifest lists a finished shard."""
    if _shard_entries(folder):
        return True
    try:
        with open(os.path.join(folder, MANIFEST_FILE), encoding="utf-8") as file:
            return sum(1 for line in file if line.strip()) > 1
    except OSError:
        return False


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with fs.open_file(path) as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
