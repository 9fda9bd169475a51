"""The generated module written as a file: where asked (a file, a folder, a URL), whole or not at
all. A build writes it beside the shards; `generate` and `tb.generate_module` where a user asks."""
from __future__ import annotations

import os

from .. import fs
from ..errors import UsageError
from ..write.naming import module_name


def write_module(text: str, path: str, name: str) -> str:
    """Writes module text to `path`, or into it as NAME_input.py when `path` is a folder."""
    problem = fs.place_problem(path)
    if problem:
        raise UsageError(problem)
    if path.endswith(("/", os.sep)) or fs.isdir(path):
        path = fs.join(path, module_name(name))
    return fs.write_whole(path, text.encode("utf-8"))
