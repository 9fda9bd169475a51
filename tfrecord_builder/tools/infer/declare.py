"""One column's declaration: a tensor, a class label or an image, from what its values say.

- **class_label**: text of few distinct values (2 to `MAX_CLASSES`, each seen twice on average)
  with none missing; names sorted (by number when all are numbers), or in the file's order for a
  categorical column (Parquet dictionary). Whole numbers too, in a column named like a label.
- **image**: text naming image files (by extension) that all exist beside the table; a **mask**
  when every file sampled is a palette PNG (class indices, as VOC's masks), or a grey PNG in a
  column named like masks (`mask`, `seg`, `trimap`).
- **audio**, **video**: text naming audio or video files that all exist (media_files.py).
- **text**: free text (many distinct values, long, spaced: free_text.py's thresholds) with none
  missing, as token ids of a vocabulary the build learns from the train split.
- anything else: the dtype and shape columns.py finds, with a default where values are missing.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ...features.class_label import class_order
from ...features.shown import Language
from . import columns
from .columns import Guess, Profile
from . import free_text
from .image_files import image_guess, look, spread
from .masks import checked_masks, values_note
from .media_files import media_fields, media_kind
from .plan import LABEL_NAMES, Declaration
from .sources import is_image_name

MAX_CLASSES = 50


@dataclass
class Column:
    """A column's values and how to name its rows: what a declaration is made from."""

    name: str  # the column's name in the source
    feature: str  # the feature's name
    values: Sequence[Any]
    where: Callable[[int], str]
    language: Language
    na_applies: bool = True
    complete: bool = True  # every row of the source was read
    images_from: str | None = None  # the folder image paths are relative to (tables that may name images)
    unit: str = "rows"  # what a value is, in notes: rows, steps, sequences
    file: str = ""  # the source's name, which notes leave out of places ("line 4", not "rows.csv, line 4")
    categories: list[str] | None = None  # a categorical column's categories, in the file's order (Parquet)
    class_names: list[str] | None = None  # the classes its whole numbers index, as the frame names them (ClassLabel)


def na_spellings(profiles: Sequence[Profile]) -> set[str]:
    """The NA spellings (`NA`, `n/a`, `NaN`, ...) that stand for missing values: those of the
    columns that `spells_na`."""
    return {text for counts in profiles if spells_na(counts) for text in counts.na_texts}


def spells_na(counts: Profile) -> bool:
    """Whether a column's only text is NA spellings, among numbers, booleans or lists of numbers:
    there they can't be values, so they are missing ones. (In a text column `NA` may be a name.)"""
    texts = sum(counts.na_texts.values())
    others = {kind for kind, count in counts.kinds.items() if count} - {"text"}
    return bool(texts) and counts.kinds["text"] == texts and bool(others) and others <= _NOT_TEXT


_NOT_TEXT = {"int", "float", "bigint", "bool", "list"}


def declare(column: Column, counts: Profile, na_values: frozenset[str]) -> Declaration | str:
    """The column's feature declaration, or (a string) why it is left out."""
    if columns.list_cells(counts, column.language):  # `[...]` beside `red big`: both are lists
        counts = columns.profile(column.values, column.language, column.na_applies, words=True)
    found = columns.guess(counts, column.name, column.where, column.language, na_values, column.unit)
    if found.problem is not None:
        return _short(f"column {_named(column.name)}: left out: {found.problem}", column.file)
    declaration = _image(column, found, na_values) or _media(column, found, na_values) or \
        _class_label(column, found) or _free_text(column, found) or _tensor(column, found)
    if column.feature != column.name:
        declaration.fields["source"] = column.name
    declaration.column = column.name
    declaration.notes = [_short(note, column.file) for note in declaration.notes]
    return declaration


def _count(number: int, unit: str) -> str:
    return f"{number} {unit if number != 1 else unit.rstrip('s')}"


def _short(note: str, file: str) -> str:
    """A note names places without the file, which the spec names once (`line 4`)."""
    return note.replace(f"{file}, ", "") if file else note


def _tensor(column: Column, found: Guess) -> Declaration:
    fields: dict[str, Any] = {"dtype": found.dtype}
    if found.shape:
        fields["shape"] = found.shape
    if found.default is not None:
        fields["default"] = found.default
    if found.allow_nan:
        fields["allow_nan"] = True
    notes = list(found.notes)
    if found.missing and _is_class_like(found) and (found.dtype == "string" or _named_like_label(column)):
        notes.append(f"not a class label: {_count(found.missing, column.unit)} without a value")
    if found.dtype == "string" and found.distinct and not (found.mixed or found.times) \
            and _looks_like_dates(found.distinct):
        notes.append("dates? kept as text (a `format:` reads them into int64, see docs/dates-and-times.md)")
    return Declaration(column.feature, fields, notes)


def _class_label(column: Column, found: Guess) -> Declaration | None:
    """Few distinct texts (or whole numbers, in a column named like a label) with none missing."""
    if found.missing:
        return None
    if column.categories is not None and found.dtype == "string" and not found.shape \
            and 2 <= len(column.categories) <= MAX_CLASSES:
        # the file's own order (pandas' categories, a polars Enum): a record holds `.cat.codes`
        note = (f"guessed: a categorical column; its {len(column.categories)} categories in the file's order "
                "(a record holds the category's code)")
        return Declaration(column.feature, {"type": "class_label", "names": list(column.categories)}, [note])
    if column.class_names is not None and found.dtype == "int64" and not found.shape:
        note = f"the frame's ClassLabel: its {len(column.class_names)} names, which its values index"
        return Declaration(column.feature, {"type": "class_label", "names": list(column.class_names)}, [note])
    if not _is_class_like(found):
        return None
    sample = "" if column.complete else " (of the rows read: a class seen only later stops the build)"
    if found.dtype == "string":
        names = class_order(found.distinct)
        ordered = ", numbers in numeric order" if names != sorted(names) else ""
        note = f"guessed: {len(names)} distinct values in {found.present:,} {column.unit}{sample}{ordered}"
        return Declaration(column.feature, {"type": "class_label", "names": names}, [note])
    if found.dtype != "int64" or not _named_like_label(column):
        return None
    numbers = sorted(int(value) for value in found.distinct)
    if numbers[0] == 0 and numbers[-1] < MAX_CLASSES:  # indices already: stored as they are
        note = f"guessed: whole numbers 0-{numbers[-1]} in a label column, taken as class indices{sample}"
        return Declaration(column.feature, {"type": "class_label", "num_classes": numbers[-1] + 1}, [note])
    note = (f"guessed: {len(numbers)} distinct numbers in a label column, taken as class names; "
            f"a record holds the name's index ({numbers[0]} -> 0){sample}")
    return Declaration(column.feature, {"type": "class_label", "names": [str(number) for number in numbers]}, [note])


def _free_text(column: Column, found: Guess) -> Declaration | None:
    """Free text, none missing: token ids of a WordPiece vocabulary learned in the build (with the
    text extra installed; else a comment saying so)."""
    if found.dtype != "string" or found.shape or found.mixed or found.times or column.unit != "rows":
        return None
    free, measured = free_text.is_free_text(column.values, None if found.distinct is None else len(found.distinct))
    if not free:
        return None
    if found.missing:
        found.notes.append(f"free text ({measured}), but {_count(found.missing, column.unit)} without a value: "
                           "`type: text` needs one in every row")
        return None
    if not free_text.text_extra():
        found.notes.append(free_text.NO_EXTRA)
        return None
    fields, note = free_text.text_fields([free_text.words_of(value) for value in column.values
                                          if isinstance(value, str)])
    return Declaration(column.feature, {"type": "text", **fields}, [f"guessed: free text ({measured}): token ids of "
                                                                    f"{note}"])


def _is_class_like(found: Guess) -> bool:
    """Scalars of few distinct values, each seen twice on average (an id or free text isn't)."""
    if found.dtype not in ("string", "int64") or found.shape or found.mixed or found.times or found.distinct is None:
        return False
    count = len(found.distinct)
    return 2 <= count <= MAX_CLASSES and 2 * count <= found.present


def _named_like_label(column: Column) -> bool:
    return column.feature.lower().rstrip("_") in LABEL_NAMES or column.name.strip().lower() in LABEL_NAMES


def _image(column: Column, found: Guess, na_values: frozenset[str]) -> Declaration | None:
    """Text naming image files beside the table: an image feature, if every one exists."""
    if column.images_from is None or found.dtype != "string" or found.shape or found.mixed:
        return None
    named = [(row, value) for row, value in enumerate(column.values)
             if isinstance(value, str) and value not in na_values]
    if not named or not all(is_image_name(value) for _, value in named):
        return None
    absent = [(row, value) for row, value in named if not os.path.isfile(os.path.join(column.images_from, value))]
    if absent or found.missing:
        if absent:
            row, value = absent[0]
            why = (f"{len(absent)} of {len(named)} image files named are missing ({column.where(row)}: {value}), "
                   "so kept as text")
        else:
            why = (f"names image files, but {_count(found.missing, column.unit)} have none (an image feature "
                   "needs one in every row)")
        found.notes.insert(0, why)
        return None
    files = sorted({value for _, value in named})
    sampled = spread(files)
    pictures = [look(os.path.join(column.images_from, value), value) for value in sampled]
    if all(picture.format == "PNG" and (picture.mode == "P" or (picture.mode in ("L", "1") and _named_like_mask(column)))
           for picture in pictures):
        values = checked_masks([(os.path.join(column.images_from, value), None, value) for value in sampled])
        kind = "palette PNGs" if all(picture.mode == "P" for picture in pictures) else \
            "grey PNGs in a column named like masks"
        return Declaration(column.feature, {"type": "mask"},
                           [f"guessed: {kind}: a mask of class indices; {values_note(values, len(sampled), len(files))}"])
    image = image_guess(pictures, len(files))
    return Declaration(column.feature, image.fields(),
                       [f"guessed: names image files; {image.note}"])


def _named_like_mask(column: Column) -> bool:
    words = set(column.feature.lower().split("_"))
    return bool(words & {"mask", "masks", "seg", "segmentation", "trimap", "trimaps"})


def _media(column: Column, found: Guess, na_values: frozenset[str]) -> Declaration | None:
    """Text naming audio or video files beside the table: an audio or video feature, if every one
    exists (a video is one frame a step: the table's plan turns into a sequence's)."""
    if column.images_from is None or found.dtype != "string" or found.shape or found.mixed:
        return None
    named = [(row, value) for row, value in enumerate(column.values)
             if isinstance(value, str) and value not in na_values]
    kind = media_kind([value for _, value in named])
    if kind is None:
        return None
    absent = [(row, value) for row, value in named if not os.path.isfile(os.path.join(column.images_from, value))]
    if absent or found.missing:
        if absent:
            row, value = absent[0]
            why = (f"{len(absent)} of {len(named)} {kind} files named are missing ({column.where(row)}: {value}), "
                   "so kept as text")
        else:
            why = (f"names {kind} files, but {_count(found.missing, column.unit)} have none (a {kind} feature needs "
                   "one in every row)")
        found.notes.insert(0, why)
        return None
    files = sorted({value for _, value in named})
    fields, note = media_fields(kind, [os.path.join(column.images_from, value) for value in files], len(files))
    return Declaration(column.feature, fields, [note])


_DATE = re.compile(r"\s*[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9:.]+)?")


def _looks_like_dates(distinct: dict[Any, int]) -> bool:
    return all(isinstance(value, str) and _DATE.match(value) for value in list(distinct)[:50])


def _named(column: str) -> str:
    return f"`{column}`" if column else '"" (no name)'
