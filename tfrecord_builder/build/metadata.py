"""A dataset's files besides its shards, written once they are: the skipped records, the split
membership, the generated module, the label map (per-object labels), the report, the TFDS metadata
and, last, `dataset_info.json` (only then is the staging folder a whole dataset). The same whatever
runner wrote the shards."""
from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from ..codegen.module_file import write_module
from ..codegen.render import render_module
from ..read.report import write_report
from ..spec.model import Spec
from ..version import __version__
from ..write.info import DatasetInfo, SplitInfo
from ..write.label_map import write_label_map
from ..write.membership import write_membership
from ..write.naming import SKIPPED_FILE, module_name
from ..write.tfds import write_metadata


def write_metadata_files(spec: Spec, folder: str, staging: str, splits: dict[str, SplitInfo],
                         statistics: dict[str, Any], skipped: list[dict[str, str]], warnings: list[str],
                         members: dict[str, np.ndarray], kept_from: dict[str, Any] | None = None,
                         snapshots: dict[str, Any] | None = None) -> DatasetInfo:
    """Writes the skipped records, the split membership, the module, the metadata and, last,
    `dataset_info.json` into the staging folder. `kept_from`: the earlier version whose splits
    were kept, and how many records kept theirs (recorded in the metadata)."""
    membership = write_membership(staging, spec.name, members)
    if kept_from is not None:
        membership["kept_splits"] = kept_from
    if skipped:
        with open(os.path.join(staging, SKIPPED_FILE), "w", encoding="utf-8") as file:
            for entry in skipped:
                file.write(json.dumps(entry, ensure_ascii=False) + "\n")
    info = DatasetInfo(folder, spec, splits, statistics, __version__, len(skipped), warnings, membership=membership,
                       source_snapshots=snapshots or None)
    write_module(render_module(spec, data_dir=folder), os.path.join(staging, module_name(spec.name)), spec.name)
    write_label_map(info.spec, staging)  # the Object Detection API's label map, for per-object labels
    if spec.output.report:  # read from the shards just written, before the dataset is whole
        write_report(info, files_at=staging)
    write_metadata(info, staging)  # dataset_info.json last: only now is the staging folder a whole dataset
    return info
