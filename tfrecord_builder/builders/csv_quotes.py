"""Where the rows of a CSV end when a quoted cell may hold a newline, and which quoting Arrow's
parser reads as the csv module's reader does.

A row ends at a newline with an even number of quotes before it. That holds when every quote
opens a cell, closes one or is doubled within one (`quoting_alike`): the csv module (strict)
and Arrow then read the same cells. A quote within an unquoted cell (`5" screen`), which the csv
module keeps as text, or text after a closing quote, which it refuses, is left to it.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np

from .lines import line_ends

QUOTE = 34  # the double quote's byte: the csv module's default quote character, and Arrow's


def row_ends(data: bytes) -> np.ndarray:
    """Where each row of a block of CSV ends: after a newline with an even number of quotes before
    it (others are within a quoted cell). A block that ends within a quoted cell has no end there."""
    if b'"' not in data:
        return line_ends(data)
    codes = np.frombuffer(data, np.uint8)
    newlines = np.flatnonzero(codes == 10)
    quotes = np.flatnonzero(codes == QUOTE)
    ends = newlines[np.searchsorted(quotes, newlines) % 2 == 0] + 1
    return ends if data.endswith(b"\n") or len(quotes) % 2 else np.append(ends, len(data))


def row_blocks(blocks: Iterator[bytes]) -> Iterator[bytes]:
    """The blocks (each cut after a newline) cut where a row ends: a block that ends within a
    quoted cell hands its last row's start on to the next. Should a row not end within the next
    block either (a quote left open, or a row longer than a block), the two go on together, and a
    reader refuses them (no row ends where they do): at most two blocks are held."""
    rest = b""
    for block in blocks:
        data = rest + block if rest else block
        # an even number of quotes up to the block's last newline: a row ends there (most blocks)
        ends = row_ends(data) if data.count(b'"') % 2 else None
        if ends is None or (not len(ends) and rest):
            cut = len(data)  # (a row longer than two blocks: refused where it is read)
        else:
            cut = int(ends[-1]) if len(ends) else 0
        if cut:
            yield data[:cut]
        rest = data[cut:]
    if rest:
        yield rest


def separator(delimiter: str) -> int | None:
    """The delimiter's byte, where Arrow's parser and these rules take it (one ASCII character,
    not the quote or a line end); None: the csv module reads such a file."""
    if len(delimiter) != 1 or delimiter in '"\r\n' or not delimiter.isascii():
        return None
    return ord(delimiter)


def whole_rows_alike(data: bytes, ends: np.ndarray, delimiter: int) -> bool:
    """Whether a block is whole rows (`ends`: `row_ends`) quoted alike: no quote left open, and
    `quoting_alike` where it has quotes."""
    return bool(len(ends)) and ends[-1] == len(data) and (b'"' not in data or quoting_alike(data, delimiter))


def quoting_alike(data: bytes, delimiter: int) -> bool:
    """Whether every quote in these whole rows opens a cell, closes one or is doubled within one:
    the quoting that the csv module (strict) and Arrow read alike. A quote within an unquoted cell
    (the csv module keeps it, as text) or text after a closing quote (an error to the csv module)
    is left to the csv module's reader. Paired in order, each even quote opens a quoted stretch
    and the next closes it; a stretch that opens right after one closed is a doubled quote."""
    codes = np.frombuffer(data, np.uint8)
    quotes = np.flatnonzero(codes == QUOTE)
    if not len(quotes) or len(quotes) % 2:
        return not len(quotes)
    opens, closes = quotes[0::2], quotes[1::2]
    doubled = opens[1:] == closes[:-1] + 1
    starts = opens[np.concatenate(([True], ~doubled))]  # where quoted cells open
    stops = closes[np.concatenate((~doubled, [True]))]  # and close
    before = codes[starts[starts > 0] - 1]
    after = codes[stops[stops < len(codes) - 1] + 1]
    return bool(np.isin(before, (delimiter, 10)).all() and np.isin(after, (delimiter, 13, 10)).all())


def lines_within(data: bytes) -> np.ndarray:
    """The line (from 0) on which each row of whole rows starts, in a block where a quoted cell
    may hold a newline."""
    codes = np.frombuffer(data, np.uint8)
    ends = row_ends(data)
    return np.searchsorted(np.flatnonzero(codes == 10), np.concatenate(([0], ends[:-1])))
