"""The manifest of finished shards on a disk that fills up: a line cut short by it is cut off again,
so `--resume` still keeps every shard recorded before."""
from __future__ import annotations

import errno
import json
import os

import pytest

from tfrecord_builder.write.manifest import MANIFEST_FILE, Manifest, recorded_shards

from support.small_disk import fill

SHARD = {"file": "rows-train.tfrecord-00000-of-00001", "num_examples": 3, "num_bytes": 120, "sha256": "0" * 64}


def test_a_line_the_full_disk_cut_short_is_cut_off(small_disk):
    manifest = Manifest(str(small_disk), "build-1")
    line = len(json.dumps({"split": "train", **SHARD, "first_key_hash": "a" * 32, "last_key_hash": "b" * 32})) + 1
    path = small_disk / MANIFEST_FILE
    while path.stat().st_size + line <= 4096:  # the next line crosses into a page the full disk can't give
        manifest.add("train", SHARD, "a" * 32, "b" * 32)
    before = path.read_bytes()
    fill(small_disk)
    with pytest.raises(OSError) as raised:
        manifest.add("train", SHARD, "a" * 32, "b" * 32)
    assert (raised.value.errno, raised.value.filename) == (errno.ENOSPC, str(path))  # for the build's one line
    assert path.read_bytes() == before
    assert list(recorded_shards(str(small_disk), "build-1")) == [SHARD["file"]]
    os.remove(small_disk / "ballast")
    manifest.add("train", {**SHARD, "file": "rows-train.tfrecord-00000-of-00002"}, "a" * 32, "b" * 32)
    assert len(recorded_shards(str(small_disk), "build-1")) == 2
