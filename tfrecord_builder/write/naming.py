"""Names of a dataset's files: one place, so the writer and every reader agree."""
from __future__ import annotations

import os

from ..codec.tfrecord import SUFFIX

INFO_FILE = "dataset_info.json"
# marks a folder this tool made (so --overwrite may clear it); its name has no ".tfrecord" in it,
# which `*.tfrecord*` globs (tf.io.gfile.glob and Dataset.list_files match hidden files) would take
# for a shard
MARKER_FILE = ".made-by-tb"
MARKER_FILES = (MARKER_FILE, ".tfrecord-builder")  # the name before 0.3 too, for --overwrite


def is_ours(names: "list[str] | set[str]") -> bool:
    """Whether a folder holding `names` was made by this tool (it holds a marker)."""
    return any(marker in names for marker in MARKER_FILES)
SKIPPED_FILE = "skipped.jsonl"


def dataset_dir(output: str, name: str, version: str) -> str:
    return os.path.join(output, name, version)


def shard_name(name: str, split: str, index: int, num_shards: int, compression: str = "none") -> str:
    """`wine-train.tfrecord-00000-of-00004` (+ .gz / .zz when compressed)."""
    return f"{name}-{split}.tfrecord-{index:05d}-of-{num_shards:05d}{SUFFIX[compression]}"


def module_name(name: str) -> str:
    return f"{name}_input.py"


def temporary(path: str) -> str:
    """Where a file is written before it is moved into place when whole."""
    folder, base = os.path.split(path)
    return os.path.join(folder, f".{base}.tmp-{os.getpid()}")
