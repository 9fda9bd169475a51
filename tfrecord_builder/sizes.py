"""Byte counts as people read them, for the command line's tables and the report's pages."""
from __future__ import annotations


def size_text(num_bytes: float) -> str:
    """`873 B`, `51.7 KiB`, `9.1 MiB`, ... up to TiB."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if num_bytes < 1024:
            return f"{num_bytes:.0f} {unit}" if unit == "B" else f"{num_bytes:.1f} {unit}"
        num_bytes /= 1024
    return f"{num_bytes:.1f} TiB"
