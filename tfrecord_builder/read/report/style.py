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

# a colour per object class (boxes, their labels, mask overlays), by class index, cycling: strong
# hues that stand out on photos; the first is also the colour of boxes without a class
CLASS_COLOURS = ["#E6194B", "#3CB44B", "#FFE119", "#4363D8", "#F58231", "#911EB4", "#46F0F0", "#F032E6",
                 "#BCF60C", "#FABEBE", "#008080", "#9A6324"]


def class_colour(index: int | None) -> str:
    """The colour of a class index (None: an object without a class)."""
    return CLASS_COLOURS[(index or 0) % len(CLASS_COLOURS)]


def rgb(colour: str) -> tuple[int, int, int]:
    """`#RRGGBB` as (red, green, blue) 0-255."""
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)
