"""`dataset_info.json`: what a built dataset is, written last; its presence marks a finished build."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from ..errors import DatasetError, UsageError
from .. import fs
from ..spec.model import Spec
from ..spec.load import spec_from_dict
from .naming import INFO_FILE, temporary


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
        }

    def write(self, folder: str | None = None) -> str:
        """Writes dataset_info.json into `folder` (default: the dataset's own), atomically."""
        path = os.path.join(folder or self.path, INFO_FILE)
        aside = temporary(path)
        with open(aside, "w", encoding="utf-8") as file:
            json.dump(self.to_dict(), file, indent=2, ensure_ascii=False)
            file.write("\n")
            file.flush()
            os.fsync(file.fileno())
        os.replace(aside, path)
        return path


def read_info(path: str) -> DatasetInfo:
    """Opens a built dataset's info; refuses a folder without it (an unfinished build)."""
    problem = fs.place_problem(path)
    if problem:
        raise UsageError(problem)
    folder = fs.dirname(path) if fs.basename(path) == INFO_FILE else path
    info_path = fs.join(folder, INFO_FILE)
    if not fs.is_url(folder) and not os.path.isdir(folder):
        raise DatasetError(f"{folder}: no such dataset folder")
    if not fs.exists(info_path):  # in an object store, what a build writes last: the commit
        raise DatasetError(f"{folder}: not a finished dataset (no {INFO_FILE}); build it, or finish it with --resume")
    with fs.open_file(info_path, "rb") as file:
        return info_from_json(file.read(), folder)


def info_from_json(text: bytes, folder: str) -> DatasetInfo:
    """A dataset's info from the text of its dataset_info.json (in `folder`)."""
    info_path = fs.join(folder, INFO_FILE)
    try:
        data = json.loads(text.decode("utf-8"))
        spec = spec_from_dict(data["spec"], data.get("spec_file") or info_path)
        splits = {
            name: SplitInfo(name, split["num_examples"], split["num_bytes"], split["shards"])
            for name, split in data["splits"].items()
        }
    except (ValueError, KeyError, TypeError) as error:
        raise DatasetError(f"{info_path}: unreadable dataset info: {error}") from None
    return DatasetInfo(fs.absolute(folder), spec, splits, data.get("statistics", {}),
                       data.get("tool", {}).get("version", ""), data.get("num_skipped", 0))
