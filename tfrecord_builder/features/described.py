"""What a feature type tells the parts that describe a dataset, beyond its values' encoding and
reading: how the build's statistics count its values (`Counted`, for write/stats.py) and how
the report shows it (`Card`, for read/report). A feature type returns them from `Feature.counted`
and `Feature.card`; the parts that use them never ask which type a feature is, so a type of
one's own is counted and shown as the type says.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

CountedKind = Literal["values", "classes", "image_sizes"]
CardKind = Literal["number", "string", "class_label", "image", "bbox", "audio", "text", "other"]


@dataclass(frozen=True)
class CountedIds:
    """Values that are ids of a vocabulary of `size` ids (a text's token ids), each id counted
    exactly (summed over batches in any order), for the most frequent and how many are used.
    `special`: the ids a template adds around every text ([CLS], [SEP]), left out of the tokens
    counted and of the most frequent; `unknown`: the unknown token's id, whose share of the
    tokens the statistics give (None: none)."""

    size: int
    special: tuple[int, ...] = ()
    unknown: int | None = None


@dataclass(frozen=True)
class Counted:
    """What the build's statistics (write/stats.py) count of a feature's `statistics_values`.

    `kind`: `values` (numbers: count, min, max, mean, std and the non-finite; bytes: a vocabulary and
    the most frequent values while they are short text, else their sizes; and, where a record holds
    a variable number, the lengths in `Feature.inner_size` units), `classes` (class indices, counted
    per class of `Feature.classes`, stored from `Feature.first_class_id`) or `image_sizes`
    ([height, width, channels] per image: heights and widths, and `channels`).
    `columns`: the source columns gathered into the feature, each counted on its own too (min,
    max, mean, missing cells); None: none. `measured`: the values are a measure of the feature's
    (an audio clip's length in samples), so one value throughout is no sign of a wrong column
    (`build --dry-run`'s findings). `tallied`: (name, value) pairs, each the count of values equal
    to `value` and of records holding one, under `tallies` by name (a text's unknown token).
    `marked`: names of the per-record counts its values note (`Values.marks`: a text's ids cut by
    max_length), each summed under `marked` by name with the records holding one and their
    share. `ids`: its values are a vocabulary's ids, counted each (`CountedIds`: under `tokens`).
    """

    kind: CountedKind = "values"
    columns: list[str] | None = None
    channels: int = 0
    measured: bool = False
    tallied: tuple[tuple[str, int], ...] = ()
    marked: tuple[str, ...] = ()
    ids: CountedIds | None = None


@dataclass(frozen=True)
class Card:
    """How a dataset's report (read/report) shows a feature.

    `kind`, the card: `number` (a histogram of its values; `whole`: whole numbers, a bin each where
    they span few), `string` (its most frequent values), `class_label` (examples per class, named by
    `Feature.classes`), `image` (thumbnails; `size`: the images' fixed (height, width), or the
    record key of each one's stored [height, width, channels]; `mask`: each pixel a class index,
    drawn in the class colours), `bbox` (the Objects section: [ymin, xmin, ymax, xmax] fractions,
    4 values a box), `audio` (durations and loudness, a clip per class: `sample_rate`), `text`
    (token ids: lengths, truncation and unknown tokens, the most frequent tokens, the vocabulary's
    coverage, a few records as their tokens, by `Feature.tokens_of`) or `other` (its statistics'
    figures). `over`: the image feature whose thumbnails it is drawn over (boxes,
    a mask). `column`: what one of its gathered columns holds, in the summary table (None: `describe()`).
    """

    kind: CardKind = "other"
    whole: bool = False
    size: tuple[int, int] | str | None = None
    mask: bool = False
    over: str | None = None
    sample_rate: int = 0
    column: str | None = None
