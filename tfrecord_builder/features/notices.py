"""Notices: what encoding did that the spec didn't ask for in so many words (a JPEG encoded a
second time to turn it upright), counted where it happens and said once for the whole build.

Whoever encodes owns the collector (`Notices`): build/encode_batch.py makes one per batch, hands
it to each feature's `encode` in its `EncodeContext` (features/context.py) and to the loading of
a pending batch, and returns its counts with the batch's records. The runner adds them up with
the batch's other results (`added`), and the build turns each into one warning line (`said`). A
notice's text holds `{count}` and `{s}` (the plural's s).
"""
from __future__ import annotations


class Notices:
    """The notices one piece of work noted: their counts, by text. Nothing outside it counts."""

    __slots__ = ("counts",)

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def note(self, text: str) -> None:
        """One more of what `text` says (with `{count}` and `{s}` in it)."""
        self.counts[text] = self.counts.get(text, 0) + 1

    def __repr__(self) -> str:
        return f"Notices({self.counts!r})"


def added(total: dict[str, int], more: dict[str, int]) -> dict[str, int]:
    """`total` with `more` counted in (in place; returned)."""
    for text, count in more.items():
        total[text] = total.get(text, 0) + count
    return total


def said(counts: dict[str, int]) -> list[str]:
    """One line for each notice, in the order of their texts."""
    return [text.replace("{count}", f"{count:,}").replace("{s}", "" if count == 1 else "s")
            for text, count in sorted(counts.items())]
