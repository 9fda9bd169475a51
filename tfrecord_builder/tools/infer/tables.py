"""The plan of a table of rows (CSV, JSONL, Parquet; an image manifest when a column names
images): one feature per column, the source's options, a key column and a label.

Also what the other table plans share: the header comment, the source's options (delimiter,
`na_values`) and the key column.
"""
from __future__ import annotations

import os
from typing import Any, Sequence

from ...errors import DataError
from .columns import Profile, profile
from .declare import Column, declare, na_spellings, spells_na
from .gathered import gather_runs
from .image_files import spread
from .keys import add_key
from .masks import checked_masks
from .names import dataset_name, feature_names, snake_case
from .plan import SPLIT_WORDS, Declaration, Plan, guess_label
from .sources import Table


def table_plan(table: Table) -> Plan:
    """One feature per column; an image column makes the source an image manifest, a mask column
    is linked to its image column, and a video column makes each row a SequenceExample."""
    names = feature_names(table.columns)
    counts = {column: profile(table.values[column], table.language) for column in table.columns}
    na_values = frozenset(na_spellings(list(counts.values())))
    images_from = os.path.dirname(os.path.abspath(table.path)) if table.kind in ("csv", "jsonl") else None
    plan = Plan(name=dataset_name(table.path), source={"builder": table.kind})
    split = add_split_column(plan, table)
    for column in table.columns:
        if column == split:
            continue
        found = declare(Column(column, names[column], table.values[column], table.where, table.language,
                               complete=table.complete, file=table.name, images_from=images_from,
                               categories=table.categories.get(column),
                               class_names=table.class_names.get(column)),
                        counts[column], na_values)
        declared(plan, found, plan.features)
    plan.left_out += [f"column `{column}`: left out: {problem}" for column, problem in table.unreadable.items()]
    if images_from is not None:
        link_masks(plan, table, images_from)
    if any(declaration.fields.get("type") == "image" for declaration in plan.features):
        plan.source["builder"] = "image_manifest"
        plan.source_notes["builder"] = "guessed: a column names image files (relative to the table)"
    add_source_options(plan, table, counts, na_values)
    columns = [column for column in table.columns if column != split]
    add_key(plan, table, columns)
    gather_runs(plan, columns, list(table.unreadable))  # many number columns in a row: one feature
    guess_label(plan, columns)
    plan.header = header_lines(table)
    as_sequence(plan)
    return plan


def link_masks(plan: Plan, table: Table, folder: str) -> None:
    """Each mask column linked to the image column whose files have its masks' sizes, row by
    row (the rows sampled); with one image column, another size is an error naming the row."""
    images = [declaration for declaration in plan.features if declaration.fields.get("type") == "image"]
    for mask in [declaration for declaration in plan.features if declaration.fields.get("type") == "mask"]:
        problem: DataError | None = None
        for image in images:
            rows = [row for row in spread(list(range(table.rows)))
                    if table.values[mask.column][row] is not None and table.values[image.column][row] is not None]
            try:
                checked_masks([(os.path.join(folder, table.values[mask.column][row]),
                                os.path.join(folder, table.values[image.column][row]), table.where(row))
                               for row in rows])
            except DataError as error:
                problem = problem or error
                continue
            mask.fields["image"] = image.name
            rows_checked = "every row" if len(rows) == table.rows else "the rows sampled"
            mask.notes.append(f"linked to `{image.name}`: each mask its image's size in {rows_checked}")
            break
        else:
            if len(images) == 1 and problem is not None:
                raise problem
            if images:
                mask.notes.append("no image column has its sizes: not linked to one (`image:`)")


def as_sequence(plan: Plan) -> None:
    """A video column makes each row a SequenceExample: the clip's frames a step each, the other
    columns the context."""
    videos = [declaration for declaration in plan.features if declaration.fields.get("type") == "video"]
    if not videos:
        return
    plan.is_sequence = True
    plan.sequence = videos
    plan.context = [declaration for declaration in plan.features if declaration not in videos]
    plan.features = []
    named = ", ".join(f"`{declaration.column}`" for declaration in videos)
    plan.sequence_note = f"{named} names video files: each row's clip is a sequence of frames, the other columns its context"


def add_split_column(plan: Plan, table: Table) -> str | None:
    """`source.split_column`: a column named like one (split, subset, partition) whose values, none
    missing, are two or more split names (train, validation, val, dev, test, ...): the data's own
    split, which a person keeps (the splits listed train first, test last). Returns the column."""
    for column in table.columns:
        if snake_case(column) not in _SPLIT_COLUMNS:
            continue
        values = table.values[column]
        named = {value.strip() for value in values if isinstance(value, str)}
        if len(named) < 2 or any(not isinstance(value, str) for value in values) \
                or not all(value.lower() in SPLIT_WORDS for value in named) or any(value != value.strip()
                                                                                  for value in values):
            continue
        ordered = sorted(named, key=lambda value: (SPLIT_WORDS.index(value.lower()), value))
        plan.source["split_column"] = column
        counts = ", ".join(f"{name} {values.count(name):,}" for name in ordered)
        sample = "" if table.complete else " in the rows read"
        plan.source_notes["split_column"] = f"guessed: the data's own split ({counts}{sample})"
        plan.splits = {name: {} for name in ordered}
        plan.splits_note = f"the values of `{column}`; a row's value chooses its split"
        return column
    return None


_SPLIT_COLUMNS = ("split", "subset", "partition", "data_split")


def add_source_options(plan: Plan, table: Table, counts: dict[str, Profile], na_values: frozenset[str]) -> None:
    """`delimiter` when it isn't a comma; `options: {na_values: [...]}` for the NA spellings found."""
    if table.delimiter != ",":
        plan.source["delimiter"] = table.delimiter
        plan.source_notes["delimiter"] = "guessed from the header line"
    if na_values:
        where = [f"`{column}`" for column, found in counts.items() if spells_na(found)]
        plan.source["options"] = {"na_values": sorted(na_values)}
        spelled = ", ".join(sorted(na_values))
        plan.source_notes["options"] = (f"guessed: {spelled} among numbers in {_listed(where)}: read as missing "
                                        "in every column")


def header_lines(table: Table) -> list[str]:
    read = (f"all {table.rows:,} rows read" if table.complete else
            f"only the first {table.rows:,} rows read (a sample: the file has more; check classes, "
            "ranges and missing values against the rest)")
    return [f"Written by `tfrecord-builder infer` from {table.name}: {read}."]


def declared(plan: Plan, found: Declaration | str, into: list[Declaration]) -> None:
    """Adds a declaration to `into`, or its reason for being left out to the plan."""
    if isinstance(found, str):
        plan.left_out.append(found)
    else:
        into.append(found)


def _listed(items: Sequence[Any]) -> str:
    items = list(items)
    if len(items) > 4:
        return f"{', '.join(items[:3])} and {len(items) - 3} more"
    return ", ".join(items)
