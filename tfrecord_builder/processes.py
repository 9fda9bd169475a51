"""How the build starts its worker processes (encoding, and writing shards in parallel)."""
from __future__ import annotations

import multiprocessing
import sys
from typing import Any


def can_fork() -> bool:
    """fork where there is one: it starts in milliseconds and, unlike spawn and forkserver, doesn't
    re-import the caller's main module (a script calling `tb.build` without a __main__ guard would
    otherwise run again in every worker), and a child sees its parent's memory without copying it.
    The workers run only NumPy, Arrow, Pillow and this package, not TensorFlow, so a caller's
    TensorFlow threads don't matter to them. (macOS offers fork, but its system libraries don't
    support it.)"""
    return "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin"


def context() -> Any:
    """The multiprocessing context the build's workers start in."""
    return multiprocessing.get_context("fork" if can_fork() else "spawn")
