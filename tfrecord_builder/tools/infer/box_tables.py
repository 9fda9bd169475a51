"""The plan of a table of one box a row: the TensorFlow Object Detection tutorials' CSV and
Roboflow's "Tensorflow CSV" (`filename, width, height, class, xmin, ymin, xmax, ymax`), in one
file or one a split folder.

Recognised by four columns named like a box's corners (xmin, ymin, xmax, ymax; `x_min` too)
beside a column naming image files. A record is an image: `source.group_by` the image column,
so its rows' boxes are one record's (`columns:` the corners, `shape: [null]` labels) and, the
record's key being the image, all of an image's boxes land in one split. A row with its four
corners empty is an image without boxes. Columns holding one value in every row of an image are
one value per record (`width`, `height`); those holding one value in every row of the table
are left out, said in a comment (a feature that never changes stores nothing).
"""
from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from ...errors import DataError
from ...features.class_label import class_order
from ...media.images import BadImage, pillow
from .annotations import box_checks
from .columns import profile
from .declare import Column, declare, na_spellings
from .image_files import image_guess, look, spread
from .layouts import split_word
from .names import dataset_name, identifier
from .parts import count
from .plan import LABEL_NAMES, Declaration, Plan
from .sources import Table, is_image_name
from .spec_text import flow
from .tables import add_source_options, add_split_column, declared, header_lines

CORNERS = ("xmin", "ymin", "xmax", "ymax")
# tables whose file name says nothing of the data (Roboflow's `_annotations.csv`): named by their folder
_GENERIC_STEMS = ("annotations", "labels", "boxes", "data")


def box_table_plan(tables: list[Table], splits: list[str] | None = None) -> Plan | None:
    """The grouped plan of one table (or one a split, `splits` their names) of one box a row;
    None when the table has no box corners beside an image column."""
    table = tables[0]
    corners = corner_columns(table.columns)
    if corners is None:
        return None
    values = {column: [value for part in tables for value in part.values.get(column, [])] for column in table.columns}
    folders = [os.path.dirname(os.path.abspath(part.path)) for part in tables for _ in range(part.rows)]
    places = [part.where(row) for part in tables for row in range(part.rows)]
    image_column = next((column for column in table.columns if column not in corners and _names_images(values[column])),
                        None)
    if image_column is None:
        return None
    for part in tables[1:]:
        if part.columns != table.columns:
            raise DataError(f"{part.name}: columns {', '.join(part.columns)}; the other splits' tables have "
                            f"{', '.join(table.columns)}: expected the same columns in each")
    rows = len(places)
    groups: dict[str, list[int]] = {}  # each image's rows, by its path (a name in two splits' tables: two images)
    for row, name in enumerate(values[image_column]):
        if name is not None:
            groups.setdefault(os.path.join(folders[row], name), []).append(row)
    exists = all(os.path.isfile(path) for path in groups)
    plan = Plan(name=_name(table.path), source={"builder": "image_manifest" if exists else table.kind,
                                                "group_by": image_column})
    plan.source_notes["group_by"] = (f"one record an image: its rows' boxes together ({count(len(groups), 'image')}, "
                                     f"{count(rows, 'row')}); each image is in one split")
    if splits is None:
        add_split_column(plan, table)
    else:
        plan.splits = {split: {"path": part.path} for split, part in zip(splits, tables)}
        plan.splits_note = "the split folders, a table each (images: " + ", ".join(
            f"{split} {len({name for name in part.values[image_column] if name is not None}):,}"
            for split, part in zip(splits, tables)) + ")"
    language = table.language
    counts = {column: profile(values[column], language) for column in table.columns}
    na_values = frozenset(na_spellings(list(counts.values())))
    firsts = [rows_of[0] for rows_of in groups.values()]
    if exists:
        pictures = [look(path, os.path.basename(path)) for path in spread(list(groups))]
        image = image_guess(pictures, len(groups))
        plan.features.append(Declaration("image", {**image.fields(), "source": image_column},
                                         [f"guessed: names image files; {image.note}"], column=image_column))
    plan.features.append(Declaration("filename", {"dtype": "string", **({"source": image_column}
                                                                        if image_column != "filename" else {})},
                                     ["the image's file name: the group's"], column=image_column))
    plan.features.append(_boxes(corners, values, groups, places, exists))
    label = _label_column(table.columns, corners + [image_column], values)
    if label is not None:
        plan.features.append(_labels(label, values[label], rows))
    used = {image_column, label, *corners, plan.source.get("split_column")}
    for column in table.columns:
        if column in used:
            continue
        _other(plan, column, values[column], groups, firsts, places, language, na_values, table)
    add_source_options(plan, table, counts, na_values)
    tables_read = ", ".join(os.path.join(split, part.name) for split, part in zip(splits or [], tables))
    plan.header = header_lines(table) if len(tables) == 1 else [
        f"Written by `tfrecord-builder infer` from {tables_read}: all {rows:,} rows read."]
    plan.header.append("A table of one box a row (as the Object Detection API's tutorials and Roboflow's "
                       "\"Tensorflow CSV\" write them): grouped into one record an image.")
    return plan


def corner_columns(columns: Sequence[str]) -> list[str] | None:
    """The table's xmin, ymin, xmax, ymax columns (by name, `x_min` too), in that order; else None."""
    by_name = {identifier(column).lower().replace("_", ""): column for column in columns}
    found = [by_name.get(corner) for corner in CORNERS]
    return None if None in found else found  # type: ignore[return-value]


def _names_images(values: Sequence[Any]) -> bool:
    named = [value for value in values if value is not None]
    return bool(named) and all(isinstance(value, str) and is_image_name(value) for value in named)


def _name(path: str) -> str:
    """The dataset's name: the table's, or its folder's (above a split folder) when the table's
    name says nothing (`train/_annotations.csv`)."""
    stem = dataset_name(path).strip("_").lower()
    if stem not in _GENERIC_STEMS:
        return dataset_name(path)
    folder = os.path.dirname(os.path.abspath(path))
    if split_word(os.path.basename(folder)) is not None:
        folder = os.path.dirname(folder)
    return dataset_name(folder)


def _boxes(corners: list[str], values: dict[str, list[Any]], groups: dict[str, list[int]], places: list[str],
           exists: bool) -> Declaration:
    numbers = []
    for column in corners:
        try:
            numbers.append(np.array([np.nan if value in (None, "") else float(value) for value in values[column]]))
        except (TypeError, ValueError):
            raise DataError(f"column `{column}`: expected a box's corner (a number) in every row") from None
    corners_of = np.stack(numbers, axis=1)
    present = ~np.isnan(corners_of).all(axis=1)
    partial = np.flatnonzero(np.isnan(corners_of).any(axis=1) & present)
    if len(partial):
        raise DataError(f"{places[int(partial[0])]}: a box with some of its corners empty ({', '.join(corners)}); "
                        "expected all four, or none for an image without boxes")
    fraction = bool(present.any()) and float(np.abs(corners_of[present]).max()) <= 1.0 and \
        not np.all(corners_of[present] == np.round(corners_of[present]))
    units = "fraction" if fraction else "pixels"
    if not exists and units == "pixels":
        return Declaration("objects", {"dtype": "float32", "shape": [None, 4], "columns": corners},
                           ["[xmin, ymin, xmax, ymax] pixels as written: kept as numbers (a bbox feature measures "
                            "pixels by its image, and the table's images aren't beside it)"], column=corners[0])
    fields: dict[str, Any] = {"type": "bbox", "columns": corners, "format": "xyxy", "units": units}
    if exists:
        fields["image"] = "image"
    notes = [f"xyxy {'fractions' if fraction else 'pixels'}, one box a row; stored [ymin, xmin, ymax, xmax] fractions"]
    if exists:
        images = []
        for path, rows_of in groups.items():
            kept = [row for row in rows_of if present[row]]
            size = (1, 1)
            if units == "pixels":
                try:
                    size = pillow.oriented_size(path)
                except BadImage as error:
                    raise DataError(f"{places[rows_of[0]]}: image {path}: {error}") from None
            images.append((os.path.basename(path), corners_of[kept], size))
        notes += box_checks(fields, images, int(present.sum()))
    return Declaration("objects", fields, notes, column=corners[0])


def _label_column(columns: Sequence[str], taken: list[str], values: dict[str, list[Any]]) -> str | None:
    """The class of each box: a column named like one (class, label, ...), else the first of text."""
    others = [column for column in columns if column not in taken]
    named = [column for column in others if identifier(column).lower().rstrip("_") in LABEL_NAMES]
    texts = [column for column in others if any(isinstance(value, str) and value.strip() for value in values[column])
             and not all(_number(value) for value in values[column] if value is not None)]
    found = named or texts
    return found[0] if found else None


def _number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _labels(column: str, values: list[Any], rows: int) -> Declaration:
    fields: dict[str, Any] = {"type": "class_label", "shape": [None], "source": column}
    present = [value for value in values if value is not None]
    if all(_number(value) and float(value).is_integer() for value in present):
        top = max((int(float(value)) for value in present), default=0)
        fields["num_classes"] = top + 1
        return Declaration("labels", fields, [f"one a box: class indices 0-{top}, as written"], column=column)
    names = class_order({str(value).strip() for value in present})
    fields["names"] = names
    return Declaration("labels", fields, [f"one a box; {count(len(names), 'class')}, sorted"], column=column)


def _other(plan: Plan, column: str, values: list[Any], groups: dict[str, list[int]], firsts: list[int],
           places: list[str], language: Any, na_values: frozenset[str], table: Table) -> None:
    """A column besides the boxes: left out when it never changes, one value a record when each
    image's rows share it (width, height), else one a box (`shape: [null]`)."""
    name = identifier(column)
    distinct = {str(value) for value in values}
    per_group = all(len({str(values[row]) for row in rows_of}) == 1 for rows_of in groups.values())
    if len(distinct) == 1 and len(groups) > 1:
        if values[0] is None:
            plan.left_out.append(f"column `{column}`: left out: empty in every row")
            return
        written: dict[str, Any] = {"dtype": "string" if not _number(values[0]) else
                                   ("int64" if float(values[0]).is_integer() else "float32")}
        if name != column:
            written["source"] = column
        plan.left_out.append(f"{name}: left out: {values[0]} in every row (add `{name}: {flow(written)}` to keep it)")
        return
    cells = [values[row] for row in firsts] if per_group else values
    where = (lambda index: places[firsts[index]]) if per_group else places.__getitem__
    found = declare(Column(column, name, cells, where, language, complete=table.complete, file=table.name,
                           unit="images" if per_group else "rows"), profile(cells, language), na_values)
    if isinstance(found, Declaration) and not per_group:
        found.fields["shape"] = [None, *found.fields.get("shape", [])]
        found.fields.pop("default", None)
        found.notes.append("one a box")
    declared(plan, found, plan.features)
