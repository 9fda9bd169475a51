"""Names of a dataset's files: one place, so the writer and every reader agree."""
from __future__ import annotations

import os

from ..codec.tfrecord import SUFFIX

# What TensorFlow Datasets reads (its DatasetInfo as protobuf JSON, write/tfds.py), written last:
# the commit of a build, for every reader
INFO_FILE = "dataset_info.json"
FEATURES_FILE = "features.json"  # TensorFlow Datasets' FeaturesDict
# ours: the normalised spec, each shard's size, sha256 and index file, statistics (write/info.py).
# Datasets built before 0.3 hold it as dataset_info.json
METADATA_FILE = "tfrecord_builder.json"
INDEX_FOLDER = "index"  # the shards' index files: a folder, and names without ".tfrecord"
# marks a folder this tool made (so --overwrite may clear it); its name has no ".tfrecord" in it,
# which `*.tfrecord*` globs (tf.io.gfile.glob and Dataset.list_files match hidden files) would take
# for a shard
MARKER_FILE = ".made-by-tb"
MARKER_FILES = (MARKER_FILE, ".tfrecord-builder")  # the name before 0.3 too, for --overwrite


def is_ours(names: "list[str] | set[str]") -> bool:
    """Whether a folder holding `names` was made by this tool (it holds a marker)."""
    return any(marker in names for marker in MARKER_FILES)
SKIPPED_FILE = "skipped.jsonl"
REPORT_FILE = "report.html"  # the page `tfrecord-builder report` makes, with `output.report: true`


def dataset_dir(output: str, name: str, version: str) -> str:
    return os.path.join(output, name, version)


# How shards are named (`output.naming`): "tfds", TensorFlow Datasets' convention
# (`wine-train.tfrecord-00000-of-00004`), or "suffix", a name ending in `.tfrecord`
# (`wine-train-00000-of-00004.tfrecord`) as the Object Detection API's scripts write and tools that
# look for `*.tfrecord` files (Datumaro) find. Both match `*.tfrecord*`; nothing else in the folder does
NAMINGS = ("tfds", "suffix")
# TensorFlow Datasets' filename template of each naming (its DatasetInfo's `filepathTemplate`)
TFDS_TEMPLATES = {"tfds": "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}",
                  "suffix": "{DATASET}-{SPLIT}-{SHARD_X_OF_Y}.{FILEFORMAT}"}


def shard_name(name: str, split: str, index: int, num_shards: int, compression: str = "none",
               naming: str = "tfds") -> str:
    """`wine-train.tfrecord-00000-of-00004`, or with naming "suffix" `wine-train-00000-of-00004.tfrecord`
    (+ .gz / .deflate when compressed)."""
    numbered = f"{index:05d}-of-{num_shards:05d}"
    if naming == "suffix":
        return f"{name}-{split}-{numbered}.tfrecord{SUFFIX[compression]}"
    return f"{name}-{split}.tfrecord-{numbered}{SUFFIX[compression]}"


def index_name(shard: str) -> str:
    """A shard's index file, relative to the dataset folder: `index/wine-train-00000-of-00004.idx`
    for `wine-train.tfrecord-00000-of-00004` and for `wine-train-00000-of-00004.tfrecord` alike.
    Neither its folder nor its name is picked up by a shard glob (`*.tfrecord*`)."""
    stem = shard[: -len(".tfrecord")] if shard.endswith(".tfrecord") else shard.replace(".tfrecord-", "-", 1)
    return f"{INDEX_FOLDER}/{stem}.idx"


def labels_name(key: str) -> str:
    """The class names file TensorFlow Datasets reads for a class label stored under `key`."""
    return f"{key}.labels.txt"


def module_name(name: str) -> str:
    return f"{name}_input.py"
