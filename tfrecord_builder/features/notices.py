"""Notices: what encoding did that the spec didn't ask for in so many words (a JPEG encoded a
second time to turn it upright), counted where it happens and said once for the whole build.

The counts live in the process that encodes; the runner takes them after each batch
(`taken`), adds them up with the batch's other results, and the build turns each into one
warning line (`said`). A notice's text holds `{count}` and `{s}` (the plural's s).
"""
from __future__ import annotations

from collections import Counter

_counts: Counter[str] = Counter()


def note(text: str) -> None:
    """One more of what `text` says (with `{count}` and `{s}` in it)."""
    _counts[text] += 1


def taken() -> dict[str, int]:
    """The notices counted since the last call, by text; the count starts again at zero."""
    counts = dict(_counts)
    _counts.clear()
    return counts


def counted() -> dict[str, int]:
    """The notices counted so far, left as they are: what `restore` goes back to."""
    return dict(_counts)


def restore(counts: dict[str, int]) -> None:
    """The counts as `counted` gave them: what encodings since noted is dropped (values encoded
    again, whose second encoding counts them)."""
    _counts.clear()
    _counts.update(counts)


def added(total: dict[str, int], more: dict[str, int]) -> dict[str, int]:
    """`total` with `more` counted in (in place; returned)."""
    for text, count in more.items():
        total[text] = total.get(text, 0) + count
    return total


def said(counts: dict[str, int]) -> list[str]:
    """One line for each notice, in the order of their texts."""
    return [text.replace("{count}", f"{count:,}").replace("{s}", "" if count == 1 else "s")
            for text, count in sorted(counts.items())]
