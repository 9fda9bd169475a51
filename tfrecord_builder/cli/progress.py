"""A one-line progress display on a terminal (nothing when stderr is not a terminal)."""
from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Call it with (phase, count, total or None); it redraws at most ten times a second."""

    def __init__(self, stream: TextIO = sys.stderr):
        self.stream = stream
        self.enabled = stream.isatty()
        self.start = time.monotonic()
        self.last = 0.0

    def __call__(self, phase: str, count: int, total: int | None = None) -> None:
        now = time.monotonic()
        if not self.enabled or now - self.last < 0.1:
            return
        self.last = now
        rate = count / max(now - self.start, 1e-9)
        share = f" of {total:,} ({100 * count / total:.0f}%)" if total else ""
        self.stream.write(f"\r{phase} {count:,}{share} records ({rate:,.0f}/s)\033[K")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r\033[K")
            self.stream.flush()
