"""A path as the written spec names it: from the spec's folder, where the build resolves it."""
from __future__ import annotations

import os


def path_from(data: str, folder: str) -> str:
    """`data` (absolute) as the spec in `folder` names it: relative to the folder when they share
    more than the root (a project's spec and data move together), else absolute."""
    if os.path.commonpath([data, folder]) == os.path.dirname(os.path.commonpath([data, folder])) \
            or os.path.splitdrive(data)[0] != os.path.splitdrive(folder)[0]:
        return data.replace(os.sep, "/")  # only the root in common: /tmp/x/spec.yaml and /work/data.csv
    return os.path.relpath(data, folder).replace(os.sep, "/")
