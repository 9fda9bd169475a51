"""A griffe extension for the API reference: the docstrings' doctests (`>>>` lines and the output
after them) shown as Python console blocks, not as Markdown text, where `x["a"][:3]` would read as
a link."""
from __future__ import annotations

from typing import Any

import griffe


def fenced(text: str) -> str:
    """`text` with each run of doctest lines (a `>>>` line up to the next blank line) fenced."""
    out: list[str] = []
    inside = False
    for line in text.split("\n"):
        if not inside and line.lstrip().startswith(">>>"):
            out.append("```pycon")
            inside = True
        elif inside and not line.strip():
            out.append("```")
            inside = False
        out.append(line)
    if inside:
        out.append("```")
    return "\n".join(out)


class DoctestBlocks(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = fenced(obj.docstring.value)
