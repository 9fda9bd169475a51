"""`infer`: a commented spec from raw data, which validates and builds as it is written.

    sources.py      reads a sample of a table (CSV, JSONL, Parquet) or lists a folder's images
    conll.py        recognises CoNLL files (CoNLL-2003 columns, CoNLL-U): a record per sentence
    layouts.py      recognises annotated images as tools export them: COCO, Pascal VOC, labelme,
                    segmentation masks (yolo_layouts.py: YOLO, darknet), in split folders too (parts.py)
    annotations.py  the plan of annotated images with boxes: boxes, classes, per-object fields
    masks.py        the plan of masks beside their images; a table's mask column checked
    columns.py      what a column's values say: dtype, list shapes, missing values, distinct values
    declare.py      a column's feature: tensor, class label or image (image_files.py looks at the files)
    tables.py, sequences.py, folders.py   the plan of each kind of source (plan.py: what a plan holds)
    box_tables.py   a table of one box a row, grouped by image
    names.py        feature names from column names, the dataset's name
    spec_text.py    the plan as YAML text with its comments

>>> text = infer("data/wine.csv", "specs/wine_guess.yaml")   # the spec's text; paths relative to specs/
>>> for line in text.splitlines()[5:10]:
...     print(line)
source:
  builder: csv
  path: ../data/wine.csv
splits: {train: 0.8, test: 0.2}  # change as you need: fractions that sum to 1
features:
>>> write_spec(text, "specs/wine_guess.yaml")
'specs/wine_guess.yaml'
"""
from __future__ import annotations

import os
from typing import Any

from ... import fs
from ...builders.sources import check_sources
from ...errors import DataError, TFRecordBuilderError, UsageError
from ...spec.load import spec_from_document
from ...spec.yaml_source import load_yaml
from ...write.info import write_file
from .annotations import annotation_plan
from .box_tables import box_table_plan
from .conll import conll_plan
from .folders import folder_plan
from .layouts import recognise
from .masks import segmentation_plan
from .names import dataset_name
from .places import path_from
from .plan import Plan
from .sequences import jsonl_plan, long_table_plan, step_columns
from .sources import Table, read_frame, read_rows, read_table, table_kind
from .spec_text import spec_text
from .stored import is_stored, stored
from .tables import table_plan

__all__ = ["infer", "spec_path", "write_spec"]


def infer(data: str | os.PathLike | Any = None, spec: str | os.PathLike | None = None, *, group_by: str | None = None,
          order_by: str | None = None, sequence: bool | None = None, table: str | None = None,
          query: str | None = None, catalog: str | None = None) -> str:
    """The commented spec text for `data`: a CSV, JSONL or Parquet file, a folder of images (or of
    split folders), or an annotated image set as the tools export it (COCO, Pascal VOC, YOLO,
    darknet, labelme, segmentation masks; layouts.py). Or a frame in memory (a pandas or polars
    DataFrame, a pyarrow Table, Dataset or RecordBatchReader, a Hugging Face dataset), guessed
    as the same rows in a Parquet file are, for `tb.build(spec, source=frame)`: its spec reads
    `source: {builder: dataframe}` (and its name is `frame`).

    Or a table where it lives (stored.py), guessed as the same rows in a Parquet file are: a Delta
    table's folder; a DuckDB or SQLite file or a connection URL (`duckdb:///x.duckdb`,
    `sqlite:///x.db`) with its one table, or `table` (a name) or `query` (SQL) of it; no `data`
    and a `query` of DuckDB over files (`FROM 'rows.parquet'`, named from the spec's folder); no
    `data`, an Iceberg `catalog` (a SQL catalog's URI, or a catalog's name in pyiceberg's
    configuration) and its `table` (`namespace.name`).

    `spec` is where the spec will be written (default: a file in the working directory): paths in
    it are relative to its folder. `group_by` and `order_by` read a long table (one row per
    step) as sequences; `sequence` True reads a JSONL's list fields as steps, False never, None
    guesses. Raises UsageError (a missing file, a wrong option) or DataError (data no spec reads).

    >>> tb.infer("data/wine.csv").splitlines()[3]
    'name: wine'
    """
    if (group_by is None) != (order_by is None):
        raise UsageError("--group-by and --order-by go together: the column naming each row's sequence, and the "
                         "column ordering its steps")
    spec_file = os.path.abspath(spec if spec is not None else "spec.yaml")
    if data is None or isinstance(data, (str, os.PathLike)) and \
            is_stored(os.fspath(data), table, query, catalog):
        return _stored_text(None if data is None else os.fspath(data), spec_file, table, query, catalog,
                            (group_by, order_by, sequence))
    if not isinstance(data, (str, os.PathLike)):
        text = spec_text(_rows_plan(read_frame(data), group_by, order_by, sequence))
        spec_from_document(load_yaml(text, os.path.abspath(spec if spec is not None else "spec.yaml")))
        return text
    data = os.fspath(data)
    if fs.is_url(data):
        raise UsageError(f"{data}: infer reads local files; copy it here first")
    if not os.path.exists(data):
        raise UsageError(f"{data}: not found; expected a CSV, JSONL or Parquet file, a folder of images, a Delta "
                         "table's folder, or a DuckDB or SQLite file")
    plan = _plan(data, group_by, order_by, sequence)
    _relative(plan, os.path.abspath(data), os.path.dirname(spec_file))
    text = spec_text(plan)
    _check(text, spec_file)
    return text


def _stored_text(data: str | None, spec_file: str, table: str | None, query: str | None, catalog: str | None,
                 rows_options: tuple[str | None, str | None, bool | None]) -> str:
    """The spec of a database's or a lakehouse's table: its rows' plan as a Parquet file's, with
    the source that names the table."""
    if data is not None and "://" not in data and not os.path.exists(data):
        raise UsageError(f"{data}: not found; expected a Delta table's folder, a DuckDB or SQLite file, or a "
                         "connection URL")
    found = stored(data, os.path.dirname(spec_file), table, query, catalog)
    plan = _rows_plan(read_rows(found.rows, found.source["builder"], found.name, found.problem), *rows_options)
    plan.name = found.name
    plan.source = {**found.source, **{key: value for key, value in plan.source.items() if key != "builder"}}
    plan.source_notes.update(found.notes)
    text = spec_text(plan)
    _check(text, spec_file)
    return text


def _relative(plan: Plan, data: str, folder: str) -> None:
    """The plan's paths as the spec names them (`path_from`): the source's `path` (the data, unless
    the plan names another file or each split its own), `images` and `names_file`, and each split's."""
    splits = [split for split in (plan.splits or {}).values() if isinstance(split, dict) and "path" in split]
    if "path" not in plan.source and not splits:
        plan.source["path"] = data
    for place in [plan.source] + splits + [split["options"] for split in splits if "options" in split]:
        for key in ("path", "images", "names_file", "image_set"):
            if key in place:
                place[key] = path_from(os.path.abspath(place[key]), folder)


def spec_path(data: str | os.PathLike, output: str | os.PathLike) -> str:
    """Where `-o OUTPUT` writes the spec: OUTPUT, or NAME.yaml inside it when it is a folder."""
    output = os.fspath(output)
    if os.path.isdir(output) or output.endswith(("/", os.sep)):
        return os.path.join(output, f"{dataset_name(os.fspath(data))}.yaml")
    return output


def write_spec(text: str, path: str | os.PathLike, overwrite: bool = False) -> str:
    """Writes the spec text to `path`, whole or not at all; an existing file only with `overwrite`
    (a spec is edited by hand afterwards: replacing it by accident would lose the edits)."""
    path = os.fspath(path)
    if os.path.exists(path) and not overwrite:
        raise UsageError(f"{path} already exists; pass --overwrite to replace it")
    write_file(os.path.abspath(path), text.encode("utf-8"))
    return path


def _plan(data: str, group_by: str | None, order_by: str | None, sequence: bool | None) -> Plan:
    found = recognise(data) if group_by is None and not sequence else None
    if found is not None:
        return segmentation_plan(data, found) if found.kind == "segmentation" else annotation_plan(data, found)
    if os.path.isdir(data):
        if group_by is not None or sequence:
            raise UsageError(f"{data}: a folder of images has no rows to group; --group-by, --order-by and "
                             "--sequence read tables")
        return folder_plan(data)
    conll = conll_plan(data) if group_by is None and not sequence else None
    if conll is not None:
        return conll
    kind = table_kind(data)
    if sequence and (group_by is not None or kind != "jsonl"):
        raise UsageError(f"{data}: --sequence reads a JSONL file's list fields as steps; a long table takes "
                         "--group-by and --order-by instead")
    return _rows_plan(read_table(data), group_by, order_by, sequence)


def _rows_plan(table: Table, group_by: str | None, order_by: str | None, sequence: bool | None) -> Plan:
    """The plan of a table's rows (a frame's: `source: {builder: dataframe}`)."""
    if sequence and (group_by is not None or table.kind != "jsonl"):
        raise UsageError(f"{table.name}: --sequence reads a JSONL file's list fields as steps; a long table takes "
                         "--group-by and --order-by instead")
    if group_by is not None:
        return long_table_plan(table, group_by, order_by or "")
    boxes = box_table_plan([table]) if not sequence else None
    if boxes is not None:
        return boxes
    steps = step_columns(table, sequence)
    if steps is not None:
        return jsonl_plan(table, *steps)
    return table_plan(table)


def _check(text: str, spec_file: str) -> None:
    """The text loads as a valid spec whose source paths exist: anything else is a fault of ours,
    said as such rather than left for the user to find. (The builder isn't loaded: its columns
    are those just read.)"""
    try:
        check_sources(spec_from_document(load_yaml(text, spec_file)))
    except TFRecordBuilderError as error:
        raise DataError(f"internal error: the inferred spec does not validate ({error}); please report it "
                        "with the data's first lines") from None
