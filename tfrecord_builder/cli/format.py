"""Small text helpers for the command line: tables and sizes, and counts given as arguments."""
from __future__ import annotations

import argparse
from typing import Sequence

from ..sizes import size_text as size  # (the name the commands use)

__all__ = ["positive_int", "size", "table"]


def positive_int(text: str) -> int:
    """An argparse type: a positive integer (`--workers N`)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, received {text!r}")
    return value


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain aligned table; numbers right-aligned."""
    cells = [list(map(str, header))] + [[str(cell) for cell in row] for row in rows]
    widths = [max(len(row[column]) for row in cells) for column in range(len(header))]
    numeric = [all(_is_number(row[column]) for row in cells[1:]) and rows for column in range(len(header))]
    lines = []
    for row in cells:
        parts = [cell.rjust(width) if numeric[index] else cell.ljust(width)
                 for index, (cell, width) in enumerate(zip(row, widths))]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def _is_number(text: str) -> bool:
    return text.replace(",", "").replace(".", "").replace(" ", "").rstrip("KiMGB").isdigit()
