"""The look shared by the figures and the page: a colour per split, the same in both."""
from __future__ import annotations

# colour-blind-safe hues (Okabe & Ito's, darkened for text on white): train blue, test orange, ...
SPLIT_COLOURS = ["#2F6DB5", "#D9822B", "#2E9A6A", "#A15DB2", "#C8463D", "#6B7785", "#B38B00", "#1B9AAA"]
INK = "#1F2430"  # text
MUTED = "#5B6472"  # secondary text, axes
RULE = "#E3E6EA"  # grid lines, borders


def split_colours(splits: list[str]) -> dict[str, str]:
    """A colour per split, by the order the dataset lists them (cycling after eight)."""
    return {split: SPLIT_COLOURS[index % len(SPLIT_COLOURS)] for index, split in enumerate(splits)}
