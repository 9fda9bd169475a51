"""What data a build's sources read (`Builder.snapshot`), and `--resume` refusing a changed one.

The build asks each builder once, on the driver, before reading: a table's version, a query
result's fingerprint, or None (files). The snapshots are part of the build's fingerprint and are
recorded in the staging folder, so a resumed build whose source now gives another snapshot is
refused in one line instead of mixing the shards of two versions of the rows. They end in the
dataset's metadata (`source_snapshots` of tfrecord_builder.json).
"""
from __future__ import annotations

import json
import os
from typing import Any

from ..builders.base import Builder
from ..errors import UsageError
from ..write.info import write_json

SNAPSHOTS_FILE = "source_snapshots.json"  # in the staging folder, until the dataset is whole
ALL_ROWS = "*"  # the split name of the one builder of a spec that splits by fraction


def source_snapshots(builders: list[tuple[str | None, Builder]]) -> dict[str, Any]:
    """Each split's snapshot (SPLIT, or "*" for a spec that splits by fraction), where its
    source gives one."""
    found = {}
    for split, builder in builders:
        snapshot = builder.snapshot()
        if snapshot is not None:
            found[ALL_ROWS if split is None else split] = snapshot
    return found


def check_resumed(staging: str, spec_build: str, snapshots: dict[str, Any]) -> None:
    """Raises UsageError where the interrupted build of the same spec in `staging` read other
    data than the sources give now."""
    try:
        with open(os.path.join(staging, SNAPSHOTS_FILE), encoding="utf-8") as file:
            recorded = json.load(file)
    except (OSError, ValueError):
        return  # nothing recorded: no build of a source with snapshots was interrupted here
    if not isinstance(recorded, dict) or recorded.get("build") != spec_build:
        return  # another spec's build: it is not resumed anyway
    old = recorded.get("snapshots") or {}
    for split in sorted(set(old) | set(snapshots)):
        if old.get(split) != snapshots.get(split):
            raise UsageError(f"--resume: the source changed since the build began ({split}: "
                             f"{_shown(old.get(split))}, now {_shown(snapshots.get(split))}); "
                             "build again without --resume")


def record(staging: str, spec_build: str, snapshots: dict[str, Any]) -> None:
    """Notes the sources' snapshots in the staging folder, for a resumed build to compare."""
    if snapshots:
        write_json(os.path.join(staging, SNAPSHOTS_FILE), {"build": spec_build, "snapshots": snapshots})


def _shown(snapshot: Any) -> str:
    return json.dumps(snapshot, sort_keys=True) if snapshot is not None else "none"
