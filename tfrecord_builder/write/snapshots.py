"""Which version of their data the sources read (`Builder.snapshot`): recorded in the dataset's
metadata under `source_snapshots`, `{SPLIT: snapshot}` (`"*"` where the spec splits by fraction,
from one builder), and in an unfinished build's staging folder, so that `--resume` of a build
whose source now gives another snapshot refuses rather than mix two versions of the data."""
from __future__ import annotations

import json
import os
from typing import Any, Iterable

from ..errors import UsageError
from .info import write_json

SNAPSHOTS_FILE = "source_snapshots.json"  # in the staging folder, while a build is unfinished
FRACTIONS = "*"  # the split name of a spec's one builder when it splits by fraction


def source_snapshots(builders: Iterable[tuple[str | None, Any]]) -> dict[str, Any]:
    """Each builder's snapshot by its split, asked once each (on this machine, before reading);
    builders of files, which give None, are left out."""
    found = {}
    for split, builder in builders:
        snapshot = builder.snapshot()
        if snapshot is not None:
            found[FRACTIONS if split is None else split] = snapshot
    return found


def check_unchanged(staging: str, build: str, snapshots: dict[str, Any]) -> None:
    """Raises UsageError if the unfinished build of the same spec (`build`: its fingerprint
    without the snapshots) in `staging` read other snapshots than the sources give now."""
    try:
        with open(os.path.join(staging, SNAPSHOTS_FILE), encoding="utf-8") as file:
            earlier = json.load(file)
    except (OSError, ValueError):
        return  # no unfinished build, or one of files only
    if not isinstance(earlier, dict) or earlier.get("build") != build:
        return  # another spec's: not resumed anyway
    old = earlier.get("source_snapshots") or {}
    for split in sorted(set(old) | set(snapshots)):
        if old.get(split) != snapshots.get(split):
            raise UsageError(f"--resume: the source changed since the build began ({split}: {_shown(old.get(split))}, "
                             f"now {_shown(snapshots.get(split))}); build again without --resume")


def record(staging: str, build: str, snapshots: dict[str, Any]) -> None:
    """Notes in `staging` what the build now beginning reads (nothing for sources of files)."""
    if snapshots:
        write_json(os.path.join(staging, SNAPSHOTS_FILE), {"build": build, "source_snapshots": snapshots})


def _shown(snapshot: Any) -> str:
    return json.dumps(snapshot, sort_keys=True) if snapshot is not None else "none"
