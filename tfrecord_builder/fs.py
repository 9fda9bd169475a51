"""Where files may be: local paths only, for now.

A URL (`s3://bucket/x`, `gs://...`) would otherwise be taken as a relative local path: a build
wrote into a folder named `s3:` and said it was done. Until object stores are supported, every
path a user gives is checked here and a URL refused by name.
"""
from __future__ import annotations

import re

URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def url_problem(path: object) -> str | None:
    """What is wrong with `path` as a local path (a URL), or None."""
    if isinstance(path, str) and URL.match(path):
        scheme = path.split("://", 1)[0]
        return (f"{path}: {scheme}:// URLs are not supported yet; expected a local path "
                "(copy the data to a local folder, or mount the bucket)")
    return None
