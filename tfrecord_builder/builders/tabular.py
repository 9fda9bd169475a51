"""Built-in table sources: `csv` and `jsonl`, one record per row.

Rows are handed over column-wise. A row's key is its raw content (or the `source.key` column),
so a row lands in the same split wherever it sits in the file, and duplicate rows share a split.
In a CSV an empty cell is a missing value; in JSONL a null or an absent key is.
"""
from __future__ import annotations

import codecs
import json
import os
from typing import Any, Iterator, Sequence

import numpy as np

from .. import fs
from ..errors import DataError
from .base import Batch, Builder, KeyedItems, PendingBatch, check_split, column_list, joined_batches, parsed_batch
from . import csv_blocks, csv_rows, json_blocks, json_rows
from .long_table import grouped_batches
from .opened import Window, open_source, open_window, plain_name, text_windows
from ..features.cells import na_value_set, na_values_problem


class TableBuilder(Builder):
    """A file of rows; subclasses read one format in `read_batches`.

    Shared here: a `source.split_column` that assigns rows to the spec's splits, image paths,
    which are relative to the table's own folder, and `options: {na_values: [...]}`.
    """

    OPTIONS = {"na_values": "texts read as missing values, as an empty CSV cell is: a list such as [NA] "
                            "(R's missing value), or pandas (pandas' read_csv defaults)"}
    DEFINES_CLASSES = False  # a class_label of a table lists its classes

    @classmethod
    def option_problem(cls, key: str, value: Any) -> str | None:
        return na_values_problem(value)

    @property
    def na_values(self) -> frozenset[str]:
        """The texts read as missing (CSV cells, JSON strings)."""
        return na_value_set(self.options.get("na_values"))

    def check_file(self) -> str:
        if self.path is None:
            raise DataError(f"{type(self).__name__}: the source needs a `path`")
        if not fs.exists(self.path):
            raise DataError(f"{self.path}: file not found")
        if fs.isdir(self.path):
            raise DataError(f"{self.path}: is a folder; expected a file")
        return self.path

    def generate(self, split: str | None) -> Iterator[tuple[Any, dict[str, Any]]]:
        for batch in self.batches(split, None, 1024):
            for index, key in enumerate(batch.keys):
                yield key, {name: values[index] for name, values in batch.columns.items()}

    def tasks(self, split: str | None) -> list[Any] | None:
        """Windows of a large plain file, cut at line ends (a table grouped by `group_by` is read
        whole: its groups are gathered from all of its rows)."""
        source = self.spec.source if self.spec is not None else None
        if self.path is None or (source is not None and source.group_by is not None):
            return None
        if source is not None and codecs.lookup(source.encoding).name not in ("utf-8", "utf-8-sig"):
            return None
        return self.parts()

    def parts(self) -> list[Any] | None:
        """The parts a large file is read in (None: read whole); the format decides."""
        return None

    def batches(self, split: str | None, needed: Sequence[str] | None, batch_size: int,
                task: Any = None) -> Iterator[Batch]:
        return self._batches(split, needed, batch_size, task, pending=False)

    def encoding_batches(self, split: str | None, needed: Sequence[str], batch_size: int,
                         task: Any = None) -> Iterator[Batch | PendingBatch]:
        return self._batches(split, needed, batch_size, task, pending=True)

    def _batches(self, split: str | None, needed: Sequence[str] | None, batch_size: int, task: Any,
                 pending: bool) -> Iterator[Any]:
        source = self.spec.source if self.spec is not None else None
        if source is not None and source.group_by is not None:
            # a group takes its split from its rows, all of them: they are grouped before splitting
            ordering = [column for column in (source.group_by, source.order_by) if column is not None]
            rows = self._rows(None, needed, batch_size, ordering, None, False)
            yield from grouped_batches(rows, self.spec, batch_size, split if source.split_column else None)
            return
        yield from self._rows(split, needed, batch_size, [], task, pending)

    def _rows(self, split: str | None, needed: Sequence[str] | None, batch_size: int,
              extra: list[str], task: Any, pending: bool) -> Iterator[Any]:
        """The file's batches (of `split`'s rows, with a split column); left pending (parsed where
        they are encoded) if `pending` and no split column needs their values here."""
        split_column = self.spec.source.split_column if self.spec is not None else None
        if needed is not None:
            needed = sorted(set(needed) | set(extra) | ({split_column} if split_column else set()))
        folder = self.rows_folder()
        for batch in self.read_batches(needed, batch_size, task):
            if not pending or (split_column is not None and split is not None):
                batch = parsed_batch(batch)
            if split_column is not None and split is not None:
                batch = self._only_split(batch, split, split_column)
            batch.base_dir = folder  # image paths are relative to the table
            if len(batch) or (isinstance(batch, Batch) and batch.broken):
                yield batch

    # per split: the batch size read at, every row joined, and the batches the usual path cuts
    _held: "dict[str | None, tuple[int, Batch, list[tuple[int, int, int]]]] | None" = None

    def names_files(self) -> bool:
        """Whether its rows name files a feature reads (photos, clips, sounds): a manifest. Not a
        table whose cells may hold the files' bytes (a database's, a DataFrame's, Parquet's)."""
        return False

    def _features_read_files(self) -> bool:
        return self.spec is not None and any(feature.reads_files for feature in self.spec.features.values())

    def keyed_items(self, split: str | None, batch_size: int) -> KeyedItems | None:
        """A manifest's rows (`names_files`) by key (the `key` column's, or the line as written, as
        the usual path keys them), in the batches `encoding_batches` cuts: its files are read once,
        each shard's by the worker that writes it (build/runners/keyed.py). Its rows are read
        here, in the build's process, and held by the builder, which takes them to the workers.
        None where the usual path reads them: a table of no files (read in parts by the
        workers), rows grouped into records, a row `on_error: skip` lists, rows that can't be
        joined into one batch. The files' sizes are unknown here (0): an estimate counts records."""
        if not self.names_files():
            return None
        held = self._rows_held(split, batch_size)
        if held is None:
            return None
        _, rows, batches = held
        return KeyedItems(rows.keys, np.zeros(len(rows), dtype=np.int64), batches)

    def keyed_batch(self, split: str | None, rows: Sequence[int], needed: Sequence[str]) -> Batch:
        held = (self._held or {}).get(split)
        if held is None:  # (a builder made again from the spec: read the rows as the plan did)
            held = self._rows_held(split, self.spec.batch_rows)
            assert held is not None, "the plan read these rows"
        return held[1].select(rows, needed)

    def _rows_held(self, split: str | None, batch_size: int
                   ) -> tuple[int, Batch, list[tuple[int, int, int]]] | None:
        if self._held is None:
            self._held = {}
        held = self._held.get(split)
        if held is not None and held[0] == batch_size:
            return held
        source = self.spec.source if self.spec is not None else None
        if source is None or source.group_by is not None:
            return None
        needed = self.spec.source_names  # what the usual path reads its batches with (`plan.task_batches`)
        parts: list[Batch] = []
        batches: list[tuple[int, int, int]] = []
        start = 0
        for number, task in enumerate(self.tasks(split) or [None]):
            for batch in self.batches(split, needed, batch_size, task):
                if batch.broken:
                    return None
                parts.append(batch)
                batches.append((number, start, start + len(batch)))
                start += len(batch)
        rows = joined_batches(parts) if parts else None
        if rows is None:
            return None
        self._held[split] = held = (batch_size, rows, batches)
        return held

    def rows_folder(self) -> str | None:
        """Where file paths in the rows point from: the table's own folder."""
        return fs.dirname(fs.absolute(self.path)) if self.path else None

    def read_batches(self, needed: Sequence[str] | None, batch_size: int, task: Any = None) -> Iterator[Batch]:
        """Batches of every row of the file, or of one of its `tasks` (the columns in `needed`, or all)."""
        raise NotImplementedError

    def keeps_going(self) -> bool:
        """Whether a row the reader can't read is skipped and listed (`on_error: skip`)."""
        return self.spec is not None and self.spec.on_error == "skip"

    def key_column(self) -> str | None:
        return self.spec.source.key if self.spec is not None else None

    def _only_split(self, batch: Batch, split: str, column: str) -> Batch:
        if column not in batch.columns:
            raise DataError(f"{batch.source}: no split column `{column}`"
                            + (f"; its columns: {column_list(batch.available)}" if batch.available else ""))
        names = list(self.spec.splits)
        rows = []
        for row, value in enumerate(batch.columns[column]):
            check_split(batch.origin(row), column, value, names, batch.language)
            if value == split:
                rows.append(row)
        chosen = batch if len(rows) == len(batch) else batch.select(rows)
        # each split reads the whole file: its unreadable rows are listed once, with the first split
        chosen.broken = batch.broken if split == names[0] else []
        return chosen


class CsvBuilder(TableBuilder):
    """`builder: csv`: a header row names the columns."""

    def names_files(self) -> bool:
        return self._features_read_files()  # a cell is text: a file's path

    def parts(self) -> list[Window] | None:
        source = self.spec.source if self.spec is not None else None
        return text_windows(self.check_file(), header=True, delimiter=source.delimiter if source else ",")

    def read_batches(self, needed: Sequence[str] | None, batch_size: int, task: Any = None) -> Iterator[Batch]:
        path = self.check_file()
        source = self.spec.source if self.spec is not None else None
        delimiter = source.delimiter if source else ","
        encoding = source.encoding if source else "utf-8"
        key = self.key_column()
        keep_going = self.keeps_going()
        done = yield from csv_blocks.fast_batches(path, delimiter, encoding, needed, key, batch_size, keep_going,
                                                  self.na_values, task)
        if done is not None:  # the csv module reads the rest, from the first row the fast way didn't
            with open_window(path, task, header=True) as file:
                yield from csv_rows.read_batches(file, os.path.basename(path), delimiter, encoding, needed, key,
                                                 batch_size, skip=done, keep_going=keep_going,
                                                 na_values=self.na_values,
                                                 line_offset=task.lines_before if task is not None else 0)

    def header(self) -> list[str] | None:
        source = self.spec.source if self.spec is not None else None
        with open_source(self.check_file()) as file:
            batches = csv_rows.read_batches(file, os.path.basename(self.path), source.delimiter if source else ",",
                                            source.encoding if source else "utf-8", None, None, 1)
            first = next(batches, None)
        return list(first.available) if first is not None else None


class JsonlBuilder(TableBuilder):
    """`builder: jsonl`: one JSON object per line."""

    def names_files(self) -> bool:
        return self._features_read_files()  # a string: a file's path


    def column_names(self) -> list[str] | None:
        """The keys of the file's first object, in their order (what a `columns:` pattern matches)."""
        path = self.check_file()
        encoding = self.spec.source.encoding if self.spec is not None else "utf-8"
        with open_source(path) as file:
            lines, encoding = json_rows.lines_of(file, os.path.basename(path), encoding)
            first = next((line for line in lines if line.strip()), None)
        try:
            record = json.loads(first.decode(encoding)) if first is not None else None
        except ValueError:
            return None  # reading the rows says what is wrong, and where
        return list(record) if isinstance(record, dict) else None

    def parts(self) -> list[Window] | None:
        return text_windows(self.check_file(), header=False, delimiter=None)

    def read_batches(self, needed: Sequence[str] | None, batch_size: int, task: Any = None) -> Iterator[Batch]:
        path = self.check_file()
        name = os.path.basename(path)
        encoding = self.spec.source.encoding if self.spec is not None else "utf-8"
        key_column = self.key_column()
        keep_going = self.keeps_going()
        skip = yield from json_blocks.fast_batches(path, self.spec, encoding, needed, key_column, batch_size,
                                                   keep_going, self.na_values, task)
        if skip is None:
            return  # the fast way read it all
        with open_window(path, task, header=False) as file:
            if not file.peek(1):
                raise DataError(f"{path}: the file is empty; expected one JSON object per line")
            lines, encoding = json_rows.lines_of(file, name, encoding)
            yield from json_rows.read_batches(lines, name, encoding, needed, key_column, batch_size, skip=skip,
                                              first_line=1 + (task.lines_before if task is not None else 0),
                                              keep_going=keep_going, na_values=self.na_values)


class ManifestBuilder(TableBuilder):
    """`builder: image_manifest`: a CSV or JSONL (by its extension) whose rows name image files,
    relative to the manifest, beside any other columns.

    Its records are known by key before their images are read: a build writes each shard once
    (`TableBuilder.keyed_items`).
    """

    def names_files(self) -> bool:
        return True

    def parts(self) -> list[Window] | None:
        return self._reader().parts()

    def read_batches(self, needed: Sequence[str] | None, batch_size: int, task: Any = None) -> Iterator[Batch]:
        yield from self._reader().read_batches(needed, batch_size, task)

    def header(self) -> list[str] | None:
        return self._reader().header()

    def column_names(self) -> list[str] | None:
        return self._reader().column_names()

    def _reader(self) -> TableBuilder:
        path = self.check_file()
        reader = JsonlBuilder if plain_name(path).lower().endswith((".jsonl", ".json", ".ndjson")) else CsvBuilder
        return reader(self.spec, self.path, self.options)
