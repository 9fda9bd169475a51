"""`builder: dataframe`: the rows of a DataFrame given from Python (`tb.build(spec, source=frame)`).

The frame's rows are written once, as Arrow, to an Arrow IPC file in a folder beside the build's
staging folder (`staged`), and every read of them is a memory-mapped slice of that file:

- the worker processes that encode the batches get a batch as its file, first row and row count
  (a pending batch, parsed where it is encoded), never the frame pickled; they map the same file,
  so its pages are shared through the page cache, and its values become Python values in the
  workers, side by side, rather than in the build's process;
- a RecordBatchReader, read once, and a Dataset or a Hugging Face dataset, read batch by batch, are
  held on disk, not in memory, and every pass of the build (a stratified build's first pass, a
  learned vocabulary's, one per split of a split column) reads the same rows;
- it works the same with fork and spawn.

From there the rows are a Parquet file's: the same conversions (arrow_rows.py), keys, missing
values and categories, so the same rows give the same shards, byte for byte.
"""
from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import pyarrow as pa

from ..errors import DataError
from ..features.notices import Notices
from ..spec.model import Spec
from .arrow_batch import arrow_batch, check_columns
from .arrow_rows import categories
from .base import Batch, Builder, PendingBatch, no_column
from .sources import wanted_columns
from .frame_kinds import FrameRows, frame_rows
from .opened import task_bytes
from .tabular import TableBuilder

FRAME_FILE = "rows.arrow"


class FrameBuilder(TableBuilder):
    """A frame's rows, one record per row, read as a Parquet file's are (see the module's docstring)."""

    OPTIONS = {}
    DEFINES_CLASSES = True  # a categorical column's categories
    FROM_PYTHON = True
    # a worker maps the staged file and reads a whole run of rows itself, writing its records as one
    # sorted run: nothing but the task (two numbers) passes between processes
    TASKS_READ_IN_WORKERS = True

    def __init__(self, spec: Any, path: str | None = None, options: dict[str, Any] | None = None,
                 rows: FrameRows | None = None):
        super().__init__(spec, None, options)
        self.rows = rows
        self.file: str | None = None  # the Arrow IPC file the rows are written to (`stage`)

    def __getstate__(self) -> dict[str, Any]:
        """Sent to a Beam worker on this machine once staged: the file, not the frame."""
        rows = self.rows
        if rows is not None:
            rows = FrameRows(rows.label, rows.schema, _written_out, rows.num_rows)
        return {**self.__dict__, "rows": rows}

    @property
    def label(self) -> str:
        return self.rows.label if self.rows is not None else "the DataFrame"

    def header(self) -> list[str] | None:
        return list(self.rows.schema.names) if self.rows is not None else None

    def stage(self, folder: str) -> None:
        """Writes the frame's rows to an Arrow IPC file in `folder`."""
        if self.rows is None:
            raise DataError("the dataframe builder reads a frame given from Python: tb.build(spec, source=frame)")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, FRAME_FILE)
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, self.rows.schema) as writer:
            for batch in self.rows.batches():
                if batch.num_rows:
                    writer.write_batch(batch)
        self.file = path

    def table(self) -> Any:
        if self.file is None:
            raise DataError(f"{self.label}: its rows were not written out before being read "
                            "(internal error: please report it)")
        return mapped(self.file)

    def class_names(self, field: str) -> list[str] | None:
        """A categorical (dictionary) column's categories, in the frame's order: its first chunk's
        dictionary, as a Parquet file written from the frame holds them; a Hugging Face dataset's
        ClassLabel's names."""
        if self.rows is not None and field in self.rows.class_names:
            return list(self.rows.class_names[field])
        table = self.table()
        if field not in table.column_names or not table.column(field).num_chunks:
            return None
        return categories(table.column(field).chunk(0))

    def num_records(self, split: str | None) -> int | None:
        return self.table().num_rows if split is None else None

    def tasks(self, split: str | None) -> list[Any] | None:
        """Runs of rows of about `task_bytes()` each (None: one)."""
        source = self.spec.source if self.spec is not None else None
        if source is not None and source.group_by is not None:
            return None
        table = self.table()
        rows, size = table.num_rows, table.nbytes
        per_task = max(1, rows * task_bytes() // size) if size else rows
        if rows <= per_task:
            return None
        return [RowRange(first, min(first + per_task, rows)) for first in range(0, rows, per_task)]

    def read_batches(self, needed: Sequence[str] | None, batch_size: int, task: Any = None) -> Iterator[Any]:
        table = self.table()
        columns = table.column_names
        key_column = self.key_column()
        wanted = [column for column in (needed if needed is not None else columns) if column in columns]
        check_columns(table.schema, self.label, wanted, key_column)
        check_exact(table.schema, self.label, wanted)
        first, stop = (task.first, task.stop) if task is not None else (0, table.num_rows)
        path = self.file or ""  # (set: the table was just read from it)
        for start in range(first, stop, batch_size):
            yield FrameBatch(path, start, min(batch_size, stop - start), self.label, wanted, key_column)


def _written_out() -> Iterator[Any]:
    raise DataError("a frame's rows are read from the file they were written to (internal error: please report it)")


@dataclass(frozen=True)
class RowRange:
    """Rows `first` to `stop` (not included) of a frame: a read task."""

    first: int
    stop: int


class FrameBatch(PendingBatch):
    """Rows of a frame's Arrow file, read where they are encoded: what a worker is sent is this
    (a path and numbers), not the rows."""

    def __init__(self, path: str, first: int, count: int, name: str, wanted: list[str], key_column: str | None):
        self.path, self.first, self.count, self.name = path, first, count, name
        self.wanted, self.key_column = wanted, key_column
        self.line = first + 1

    def load(self, notices: Notices) -> Batch:
        table = mapped(self.path)
        # without a key column a row's key is the whole row: every column is read
        read = sorted(set(self.wanted) | {self.key_column}) if self.key_column else table.column_names
        part = table.select(read).slice(self.first, self.count).combine_chunks()
        batches = part.to_batches()
        record_batch = batches[0] if batches else pa.RecordBatch.from_pylist([], schema=part.schema)
        return arrow_batch(record_batch, self.name, self.wanted, self.key_column, self.first, table.column_names)


# the frames' files this process has mapped, by path (a worker maps each once)
_MAPPED: dict[str, Any] = {}


def mapped(path: str) -> Any:
    """The Arrow IPC file at `path` as a table whose buffers are the file's pages (no copy)."""
    if path not in _MAPPED:
        try:
            _MAPPED[path] = pa.ipc.open_file(pa.memory_map(path, "r")).read_all()
        except (OSError, pa.ArrowException) as error:
            raise DataError(f"{path}: the frame's rows written out for the build can't be read: {error}") from None
    return _MAPPED[path]


def check_exact(schema: Any, label: str, wanted: Sequence[str]) -> None:
    """A column the build reads is of a type whose values map exactly to a feature's, else a
    DataError naming it and its type (an extension type, a pandas Period or Interval: its storage
    would be read as another thing)."""
    for column in wanted:
        kind = schema.field(column).type
        if isinstance(kind, pa.ExtensionType):
            raise DataError(f"{label}: column `{column}` of type {kind}: no exact mapping to a feature's values; "
                            "convert it first (e.g. to text, or a period to its start date)")


def frame_builders(spec: Spec, frame: Any) -> list[tuple[str | None, Builder]]:
    """The builder of the frame `frame` for a spec whose source is the frame: `source:` left out
    or `{builder: dataframe}` (with its keys: key, split_column, group_by, order_by), split by
    fraction or by a split column. Raises SpecError for a spec whose source names files, DataError
    for a column it reads that the frame lacks."""
    if spec.source.builder != "dataframe" or spec.source.path is not None:
        named = f"builder: {spec.source.builder}" + (f", path: {spec.source.path}" if spec.source.path else "")
        raise spec.error(("source",), f"source= gives the rows, and the spec's source names files ({named}); "
                                      "leave `source:` out or write `source: {builder: dataframe}`, or build "
                                      "without source=")
    check_given_splits(spec)
    rows = frame_rows(frame)
    builders = given_builders(spec, FrameBuilder(spec, None, spec.source.options, rows), rows.label,
                              list(rows.schema.names))
    _check_class_names(spec, rows)
    return builders


def check_given_splits(spec: Spec) -> None:
    """Rows given from Python (`source=`) are split by fractions or by a split column: a
    SpecError where the spec gives a path per split."""
    if not spec.fraction_splits and spec.source.split_column is None:
        raise spec.error(("splits",), "a frame's rows are split by fractions ({train: 0.8, test: 0.2}) or by "
                                      "source.split_column; a path per split names files")


def given_builders(spec: Spec, builder: Builder, label: str, header: list[str]) -> list[tuple[str | None, Builder]]:
    """`builder`, reading rows given from Python whose columns are `header`, as the builder of
    each split (one, None, where the spec splits by fraction); a DataError naming the rows
    (`label`) for a column the spec reads that they lack."""
    for column, user in wanted_columns(spec).items():
        if column not in header:
            raise no_column(label, user, column, header)
    if spec.fraction_splits:
        return [(None, builder)]
    return [(split, builder) for split in spec.splits]


def _check_class_names(spec: Spec, rows: FrameRows) -> None:
    """A feature giving class names for a column whose frame names its classes (a ClassLabel)
    gives the same, in the same order (else a record's index would mean another class)."""
    section = "context" if spec.is_sequence else "features"
    for name, feature in {**spec.features, **(spec.context if spec.is_sequence else {})}.items():
        given = rows.class_names.get(feature.source_name)
        names = feature.class_names if given is not None and not feature.wants_source_names else None
        if names is not None and given is not None and list(names) != given:
            raise spec.error((section, name), f"names {_listed(names)} disagree with the ClassLabel of column "
                                              f"`{feature.source_name}` of {rows.label}: {_listed(given)}; leave "
                                              "`names` out to take the ClassLabel's, or give the same in its order")


def _listed(names: Sequence[Any]) -> str:
    return "[" + ", ".join(map(str, names)) + "]"


@contextlib.contextmanager
def staged(builders: list[tuple[str | None, Builder]], folder: str) -> Iterator[None]:
    """The frames among `builders` written to Arrow IPC files in `folder` while the block runs;
    the folder removed afterwards, whatever happens (a killed build's is removed by the next one,
    `write/publish.py`)."""
    frames = list({id(builder): builder for _, builder in builders if isinstance(builder, FrameBuilder)}.values())
    if not frames:
        yield
        return
    try:
        for index, builder in enumerate(frames):  # (one frame, read by every split)
            builder.stage(os.path.join(folder, str(index)))
        yield
    finally:
        for builder in frames:
            if builder.file is not None:
                _MAPPED.pop(builder.file, None)
        shutil.rmtree(folder, ignore_errors=True)
