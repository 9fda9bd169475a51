"""A built dataset's own metadata (`tfrecord_builder.json`): the normalised spec, splits, shards with
their sizes, sha256 and index files, statistics.

A build writes it just before `dataset_info.json` (what TensorFlow Datasets reads, write/tfds.py),
whose presence marks a finished build. Datasets built before 0.3 hold this metadata as their
`dataset_info.json`: every reader here takes both.
"""
from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from typing import Any

from ..errors import DatasetError, UsageError
from .. import atomic, fs
from ..spec.model import Spec
from ..spec.load import spec_from_dict
from .naming import INFO_FILE, METADATA_FILE


@dataclass
class SplitInfo:
    """One split of a built dataset."""

    name: str
    num_examples: int
    num_bytes: int
    shards: list[dict[str, Any]]

    @property
    def files(self) -> list[str]:
        return [shard["file"] for shard in self.shards]

    def to_dict(self) -> dict[str, Any]:
        return {"num_examples": self.num_examples, "num_bytes": self.num_bytes, "num_shards": len(self.shards),
                "shards": self.shards}


@dataclass
class DatasetInfo:
    """A built dataset: its folder, normalised spec, splits, statistics and provenance.

    >>> info = tb.build("specs/wine.yaml", overwrite=True)
    >>> info.path, info.splits["train"].num_examples, info.statistics["train"]["alcohol"]["mean"]
    ('.../build/wine/1.0.0', 147, 13.04115...)
    """

    path: str
    spec: Spec
    splits: dict[str, SplitInfo]
    statistics: dict[str, Any] = field(default_factory=dict)
    tool_version: str = ""
    skipped: int = 0
    warnings: list[str] = field(default_factory=list)  # what the build found worth saying (not stored)
    metadata_file: str = METADATA_FILE  # the file it was read from (dataset_info.json before 0.3)
    # the split membership files (write/membership.py) and, with --keep-splits, what was kept
    membership: dict[str, Any] | None = None
    # what data each split's source read (`Builder.snapshot`: a table's version, a query result's
    # fingerprint), by split name ("*" when the spec splits by fraction); None: every source is files
    source_snapshots: dict[str, Any] | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def version(self) -> str:
        return self.spec.version

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.spec.name,
            "version": self.spec.version,
            "description": self.spec.description,
            "format": self.spec.format,
            "compression": self.spec.output.compression,
            "tool": {"name": "tfrecord_builder", "version": self.tool_version},
            "splits": {name: split.to_dict() for name, split in self.splits.items()},
            "num_skipped": self.skipped,
            "statistics": self.statistics,
            "spec": self.spec.to_dict(),
            "spec_file": self.spec.file,
            **({"membership": self.membership} if self.membership is not None else {}),
            **({"source_snapshots": self.source_snapshots} if self.source_snapshots else {}),
        }

    def write(self, folder: str | None = None) -> str:
        """Writes tfrecord_builder.json into `folder` (default: the dataset's own), atomically."""
        return write_json(os.path.join(folder or self.path, METADATA_FILE), self.to_dict())


def write_json(path: str, value: Any) -> str:
    """Writes `value` as indented JSON at `path`, whole or not at all."""
    return write_file(path, (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))


def write_file(path: str, data: bytes) -> str:
    """Writes `data` at `path` (its folder made if needed), whole or not at all."""
    return atomic.write_bytes(path, data)


def dataset_folder(path: str) -> str:
    """The dataset folder `path` names: the folder itself, or one of its metadata files."""
    return fs.dirname(path) if fs.basename(path) in (INFO_FILE, METADATA_FILE) else path.rstrip("/")


def read_info(path: str) -> DatasetInfo:
    """Opens a built dataset's info; refuses a folder without `dataset_info.json` (an unfinished
    build) or one that isn't ours."""
    problem = fs.place_problem(path)
    if problem:
        raise UsageError(problem)
    folder = dataset_folder(path)
    # a store has no folders (a prefix without objects is no error of its own): there the missing info says it
    if not fs.is_url(folder) and not os.path.isdir(folder):
        raise DatasetError(f"{folder}: no such dataset folder")
    if not fs.exists(fs.join(folder, INFO_FILE)):  # in an object store, what a build writes last: the commit
        raise DatasetError(f"{folder}: not a finished dataset (no {INFO_FILE}); build it, or finish it with --resume")
    name = METADATA_FILE if fs.exists(fs.join(folder, METADATA_FILE)) else INFO_FILE  # INFO_FILE: before 0.3
    with fs.open_file(fs.join(folder, name), "rb") as file:
        return info_from_json(file.read(), folder, name)


def info_from_json(text: bytes, folder: str, name: str = METADATA_FILE) -> DatasetInfo:
    """A dataset's info from the text of its metadata file `name` in `folder`: tfrecord_builder.json,
    or the dataset_info.json of a dataset built before 0.3."""
    info_path = fs.join(folder, name)
    try:
        data = json.loads(text.decode("utf-8"))
    except ValueError as error:
        raise DatasetError(f"{info_path}: unreadable dataset info: {error}") from None
    if not isinstance(data, dict) or "spec" not in data:
        raise DatasetError(f"{folder}: not a dataset built by tfrecord-builder (no {METADATA_FILE}; a TensorFlow "
                           "Datasets folder? open it with tfds.builder_from_directory)")
    try:
        spec = spec_from_dict(data["spec"], data.get("spec_file") or info_path)
        if any(feature.learns_from_data for feature in spec.features.values()):  # their files are here
            spec = dataclasses.replace(spec, features={name: feature.learned_in(folder)
                                                       for name, feature in spec.features.items()})
        splits = {
            name: SplitInfo(name, split["num_examples"], split["num_bytes"], split["shards"])
            for name, split in data["splits"].items()
        }
    except (ValueError, KeyError, TypeError) as error:
        raise DatasetError(f"{info_path}: unreadable dataset info: {error}") from None
    return DatasetInfo(fs.absolute(folder), spec, splits, data.get("statistics", {}),
                       data.get("tool", {}).get("version", ""), data.get("num_skipped", 0), metadata_file=name,
                       membership=data.get("membership"), source_snapshots=data.get("source_snapshots"))
