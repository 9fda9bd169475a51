"""Word labels on sub-word pieces: a class_label's `align: words`.

    tags: {type: class_label, shape: [null], source: ner, names: [O, B-PER, I-PER], align: words}

The source column holds one label a word (a CoNLL column, a JSON list); the text feature whose
`words: true` column holds those words (the spec's only one, or `align: {words: FEATURE}`)
splits each word into pieces. Each label goes on its word's first piece, and the ignore value
(-1, what BERT's and TF Model Garden's taggers skip) on the word's other pieces, on the special
ids and, in a batch, on the padding; with `pieces: all` on every piece of its word. The text
feature places them (`Feature.on_pieces`), so they are cut by `max_length` exactly as the ids
are, on the same side: a record's labels are always as many as its ids.

A word the tokenizer gives no piece (an empty word, or one of control characters only) has no
place for its label: its label is left out, and counted in a notice of the build.

The labels' feature reads the text's words again from its column (`linked_columns`) and has the
text feature split them by the same rule: each feature encodes a batch on its own, so a record's
ids and labels come from one rule whichever feature is encoded (or retried) first. The split of
the batch's words is kept from one to the other (`split_once`), so it is done once.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Mapping, Sequence

import numpy as np

from ..spec.fields import At, Section, convert, describe, meta
from .cells import ArrowCells
from .context import EncodeContext
from .gathered import GatheredColumns
from .values import Values, flat_int64

if TYPE_CHECKING:
    from .base import Feature
    from .class_label import ClassLabelFeature
    from ..text import Template

IGNORE = -1  # the label of pieces that aren't labelled: BERT's and Model Garden's taggers skip it


@dataclass(frozen=True, kw_only=True)
class Align(Section):
    """`align: words` / `align: {words: FEATURE, pieces: first | all}`."""

    words: str | None = meta("the text feature (`words: true`) whose pieces the labels go on (default: the "
                             "spec's only one)", None)
    pieces: Literal["first", "all"] = meta(
        "first: a word's label on its first piece, -1 on its other pieces (as BERT's taggers); all: on every "
        "piece of the word", "first")


def align_option(value: Any, at: At) -> Align:
    """`align: words`, or a mapping of `words` and `pieces`."""
    if value == "words":
        return Align()
    if isinstance(value, dict):
        return convert(Align, value, at)
    raise at.error(f"expected `words` (one label a word, on its pieces) or {{words: FEATURE, pieces: first | all}}, "
                   f"received {describe(value)}")


ALIGN_SCHEMA = {"anyOf": [{"const": "words"}, {"type": "object", "additionalProperties": False, "properties": {
    "words": {"type": "string"}, "pieces": {"enum": ["first", "all"]}}}]}


def linked(feature: "ClassLabelFeature", features: Mapping[str, "Feature"], at: At) -> "ClassLabelFeature":
    """`feature` with the text feature it aligns to (named, or the spec's only one that splits
    words); raises SpecError at `at`."""
    align = feature.align
    assert align is not None
    splitting = [name for name, other in features.items() if other.splits_words]
    name = align.words
    if name is None:
        if len(splitting) != 1:
            found = ", ".join(f"`{found}`" for found in splitting) or "none"
            raise (at / "align").error(
                f"the labels go on the pieces of a text feature with `words: true` (the spec has {found}); "
                + ("name it: `align: {words: FEATURE}`" if splitting else "declare one, reading the words' column"))
        name = splitting[0]
    elif name not in splitting:
        raise (at / "align" / "words").error(f"expected a text feature with `words: true` (one column of words) of this "
                                             f"spec ({', '.join(splitting) or 'none'}), received {name!r}")
    text = features[name]
    return dataclasses.replace(feature, align=dataclasses.replace(align, words=name), aligned_to=text,
                               padded_to=text.padded_length)


def check(feature: "ClassLabelFeature", at: At) -> None:
    """What `align:` asks of the rest of its class_label."""
    if feature.shape != [None]:
        raise (at / "shape").error(f"aligned labels are one a piece, a list: shape [null], received {feature.shape}")
    if feature.first_id:
        raise (at / "first_id").error("aligned labels are class indices (-1 where ignored): drop `first_id`")
    if feature.default is not None:
        raise (at / "default").error("aligned labels take one label a word from their column: drop `default`")
    if feature.columns is not None:
        raise (at / "columns").error("aligned labels read one column of lists (one label a word)")


def encode(feature: "ClassLabelFeature", values: Sequence[Any], context: EncodeContext) -> dict[str, Values]:
    """A batch's labels, one a word, placed on the text's pieces (`values`: the labels' column
    and the words' column gathered)."""
    assert isinstance(values, GatheredColumns) and feature.aligned_to is not None
    text = feature.aligned_to
    labels, words = values.columns[0], values.columns[1]
    words = list(words.cells() if isinstance(words, ArrowCells) else words)
    given = feature.encode_values(labels, context.origin, context.language)  # class_label's own errors
    assert isinstance(given.values, np.ndarray)
    per_word, start = [], 0
    for row, count in enumerate(given.counts.tolist()):
        sentence = words[row]
        if isinstance(sentence, (list, tuple, np.ndarray)) and len(sentence) != count:
            raise feature.fail(context.origin, row, f"{_counted(len(sentence), 'word')} in `{text.source_name}` but "
                                                    f"{_counted(count, 'label')} in `{feature.source_name}`; "
                                                    "expected one label a word")
        per_word.append(given.values[start:start + count].tolist())
        start += count
    align = feature.align
    assert align is not None
    placed, unplaced = text.on_pieces(words, per_word, context, align.pieces == "all", IGNORE)
    for _ in range(unplaced):
        context.notices.note(f"feature `{feature.name}`: {{count}} label{{s}} left out: {{count}} word{{s}} of "
                             f"`{text.source_name}` without pieces (an empty word, or control characters only)")
    counts = np.fromiter(map(len, placed), dtype=np.int64, count=len(placed))
    flat = flat_int64(placed, int(counts.sum()))
    return {feature.record_key: Values("int64", flat, counts)}


def _counted(count: int, what: str) -> str:
    return f"{count} {what}{'' if count == 1 else 's'}"


def labelled(encoded: Values) -> Values:
    """The labels of a batch without the ignored ones: what the statistics count (each class's
    pieces, and a record's number of labelled pieces)."""
    values = np.asarray(encoded.values, dtype=np.int64)
    kept = values != IGNORE
    rows = np.repeat(np.arange(len(encoded.counts)), encoded.counts)
    counts = np.bincount(rows[kept], minlength=len(encoded.counts)).astype(np.int64)
    return Values("int64", values[kept], counts)


# ---- what the text feature calls (TextFeature.encode, on_pieces) -------------------------------
# The sentences last split into pieces in this process, and their pieces: a text's ids and its
# aligned labels split the same batch one after the other (in whichever order the features are
# encoded), and splitting is most of the cost of either. Keyed by the sentences' words and the
# tokenizer object, so only the same words by the same tokenizer ever find it.
_LAST_SPLIT: list[tuple[Any, tuple, Any]] = []


def split_once(tokenizer: Any, sentences: list[Any]) -> Any:
    """`tokenizer.encode_words(sentences)`, or its pieces of the same sentences just before."""
    key = tuple(tuple(sentence) if type(sentence) in (list, tuple) else None for sentence in sentences)
    if None in key:  # (not lists of words: encode_words says what is wrong)
        return tokenizer.encode_words(sentences)
    last = _LAST_SPLIT[0] if _LAST_SPLIT else None
    if last is not None and last[0] is tokenizer and last[1] == key:
        return last[2]
    pieces = tokenizer.encode_words(sentences)
    _LAST_SPLIT[:] = [(tokenizer, key, pieces)]
    return pieces


def spread(words_of_pieces: Sequence[Sequence[int]], values: Sequence[Sequence[int]], every_piece: bool,
           fill: int) -> tuple[list[list[int]], int]:
    """Each sentence's values (one a word) on its pieces (`words_of_pieces[i][p]`: the word piece p
    of sentence i came from; a word's pieces are next to each other): on a word's first piece, or
    on all with `every_piece`, `fill` on the others. With it, the words that had no piece."""
    placed, unplaced = [], 0
    for words, given in zip(words_of_pieces, values):
        row, previous = [], -1
        for word in words:
            row.append(given[word] if every_piece or word != previous else fill)
            previous = word
        unplaced += len(given) - len(set(words))
        placed.append(row)
    return placed, unplaced


def filled(template: "Template", fill: int) -> "Template":
    """`template` with `fill` in place of each of its special ids (their segments kept): the
    values placed on special ids."""
    def part(items: Any) -> Any:
        return tuple((fill, segment) for _, segment in items)
    return dataclasses.replace(template, before=part(template.before), after=part(template.after),
                               pair_before=part(template.pair_before), between=part(template.between),
                               pair_after=part(template.pair_after))


def padded(rows: list[list[int]], length: int | None, fill: int) -> list[list[int]]:
    """Each row padded with `fill` to `length` (None: as it is)."""
    if length is None:
        return rows
    return [row + [fill] * (length - len(row)) for row in rows]

