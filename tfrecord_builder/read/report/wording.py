"""How a report writes numbers: counts with thousands separators, statistics as values are
written, shares in percent, spans of lengths and sizes."""
from __future__ import annotations

import math
from typing import Any


def count(value: Any) -> str | None:
    """A count with thousands separators."""
    return None if value is None else f"{int(value):,}"


def number(value: Any) -> str | None:
    """A statistic of a feature's values (min, max, mean, std), written as a value is: without the
    thousands separators of counts (a year is 2007 beside a mean of 2008, never 2,007), a whole
    number in full, another to 4 significant digits but to the unit from 1000 on (a mean of
    123456.7 is 123457, not 1.235e+05); beyond 10^15, or NaN and infinities, as `.4g` has them."""
    if value is None:
        return None
    value = float(value)
    if not math.isfinite(value) or abs(value) >= 1e15:
        return f"{value:.4g}"
    return f"{value:.0f}" if value.is_integer() or abs(value) >= 1000 else f"{value:.4g}"


def share(part: int, total: int) -> str:
    return f"{100 * part / total:.1f}%" if total else "-"


def rate(value: float) -> str:
    """A share in percent, to one decimal, or two significant digits below 0.1% so a rare event
    isn't shown as none (0.016%), and 0% or 100% only when exact."""
    percent = 100 * float(value)
    if percent == 0 or percent == 100:
        return f"{percent:.0f}%"
    if percent < 0.1:
        return f"{percent:.2g}%"
    if percent > 99.9:
        return f"{min(percent, 99.99):.2f}%"
    return f"{percent:.1f}%"


def span(moments: Any) -> str | None:
    """`min-max, mean m ± std` of lengths or sizes (`min`, `max`, `mean`, optional `std`)."""
    if not isinstance(moments, dict) or moments.get("min") is None:
        return None
    low, high = moments["min"], moments.get("max", moments["min"])
    text = f"{low:,}" if low == high else f"{low:,}–{high:,}"
    if low != high and moments.get("mean") is not None:
        text += f", mean {moments['mean']:.1f}"
        if moments.get("std") is not None:
            text += f" ± {moments['std']:.1f}"
    return text
