"""What a DataFrame given from Python holds, as Arrow: its schema and its record batches.

Each kind is read the way its library hands over Arrow data, never row by row through Python
objects: a pandas DataFrame through `pyarrow.Table.from_pandas` (what `DataFrame.to_parquet`
does, so its index is kept or not as there), a polars DataFrame through `to_arrow()` (zero-copy),
a pyarrow Table or RecordBatch as it is, a pyarrow Dataset or RecordBatchReader batch by batch (a
reader can be read only once), and a Hugging Face `datasets.Dataset` through its Arrow table, batch
by batch in its rows' order (a shuffled or selected one's too).

Which kind a value is comes from the module of its class, so a library the caller didn't use is
never imported. A Spark DataFrame isn't one of these: the Spark runner reads it where it lives
(builders/spark_table.py).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import pyarrow as pa

from ..errors import DataError, UsageError

KINDS = ("a pandas or polars DataFrame, a pyarrow Table, Dataset or RecordBatchReader, or a Hugging Face "
         "datasets.Dataset")
# rows a Hugging Face dataset is read in (its own table's batches are cut to this size)
_HF_BATCH = 65536


@dataclass(frozen=True)
class FrameRows:
    """A frame's rows as Arrow.

    Attributes:
        label: what messages call it (`the pandas DataFrame`).
        schema: its columns and their Arrow types, known without reading its rows.
        batches: its record batches in order; a RecordBatchReader's only once.
        num_rows: how many rows it has, or None where that is unknown before they are read.
        class_names: the class names a column's values index, where the frame says them (a Hugging
            Face `ClassLabel`'s names), by column.
    """

    label: str
    schema: Any
    batches: Callable[[], Iterator[Any]]
    num_rows: int | None
    class_names: dict[str, list[str]] = field(default_factory=dict)


def frame_rows(frame: Any) -> FrameRows:
    """The rows of `frame`, or a UsageError naming what it is and what is taken instead."""
    module = type(frame).__module__.split(".", 1)[0]
    if module == "pandas" and isinstance(frame, sys.modules["pandas"].DataFrame):
        return _table_rows("the pandas DataFrame", _from_pandas(frame))
    if module == "polars" and isinstance(frame, sys.modules["polars"].DataFrame):
        return _table_rows("the polars DataFrame", _checked(frame.to_arrow, "the polars DataFrame"))
    if module == "polars" and isinstance(frame, sys.modules["polars"].LazyFrame):
        raise UsageError("source=: a polars LazyFrame; collect it first (frame.collect()), or write it to Parquet "
                         "with sink_parquet and build from the file")
    if isinstance(frame, pa.Table):
        return _table_rows("the pyarrow Table", frame)
    if isinstance(frame, pa.RecordBatch):
        return _table_rows("the pyarrow RecordBatch", pa.Table.from_batches([frame]))
    if isinstance(frame, pa.RecordBatchReader):
        return FrameRows("the pyarrow RecordBatchReader", frame.schema, lambda: iter(frame), None)
    arrow_datasets = sys.modules.get("pyarrow.dataset")
    if arrow_datasets is not None and isinstance(frame, arrow_datasets.Dataset):
        return FrameRows("the pyarrow Dataset", frame.schema, lambda: iter(frame.to_batches()), None)
    if module == "datasets":
        return _hugging_face(frame)
    if module == "pyspark":
        raise UsageError("source=: a Spark DataFrame is read by the Spark runner, on the executors where its "
                         "partitions are (never collected to this process): runner=\"spark\"")
    raise UsageError(f"source=: expected {KINDS}; received {type(frame).__module__}.{type(frame).__qualname__}")


def _table_rows(label: str, table: Any) -> FrameRows:
    return FrameRows(label, table.schema, lambda: iter(table.to_batches()), table.num_rows)


def _from_pandas(frame: Any) -> Any:
    """The frame as `to_parquet` converts it; a column Arrow can't convert (an object column of
    mixed types) is named with its dtype."""
    try:
        return pa.Table.from_pandas(frame)
    except (pa.ArrowException, ValueError, TypeError) as error:
        for name in frame.columns:
            column = frame[name]
            if getattr(column, "ndim", 1) != 1:
                raise DataError(f"the pandas DataFrame: column `{name}` appears {column.shape[1]} times; "
                                "expected unique column names") from None
            try:
                pa.array(column, from_pandas=True)
            except (pa.ArrowException, ValueError, TypeError) as problem:
                raise DataError(f"the pandas DataFrame: column `{name}` of dtype {column.dtype}: Arrow can't "
                                f"convert it ({_first_line(problem)}); expected values of one type") from None
        raise DataError(f"the pandas DataFrame: Arrow can't convert it: {_first_line(error)}") from None


def _checked(convert: Callable[[], Any], label: str) -> Any:
    try:
        return convert()
    except (pa.ArrowException, ValueError, TypeError) as error:
        raise DataError(f"{label}: Arrow can't convert it: {_first_line(error)}") from None
    except Exception as error:  # polars' own kinds (an Object column)
        raise DataError(f"{label}: Arrow can't convert it: {type(error).__name__}: {_first_line(error)}") from None


def _hugging_face(frame: Any) -> FrameRows:
    datasets = sys.modules["datasets"]
    if isinstance(frame, datasets.DatasetDict):
        raise UsageError(f"source=: a DatasetDict of splits {', '.join(frame)}; give one of them "
                         "(dataset[\"train\"]), or build each with a spec of its own")
    if isinstance(frame, datasets.IterableDataset):
        raise UsageError("source=: an IterableDataset (streaming=True) has no Arrow table to read; load it "
                         "without streaming, or write it to Parquet (to_parquet) and build from the file")
    if not isinstance(frame, datasets.Dataset):
        raise UsageError(f"source=: expected {KINDS}; received datasets.{type(frame).__qualname__}")
    as_arrow = frame.with_format("arrow")

    def batches() -> Iterator[Any]:  # its rows' order (a shuffle's indices applied), as Arrow
        for table in as_arrow.iter(batch_size=_HF_BATCH):
            yield from table.to_batches()
    names = {column: list(kind.names) for column, kind in frame.features.items()
             if isinstance(kind, datasets.ClassLabel)}
    return FrameRows("the Hugging Face dataset", frame.data.schema, batches, frame.num_rows, names)


def _first_line(error: BaseException) -> str:
    text = str(error.args[0]) if len(error.args) == 1 else str(error)
    return text.splitlines()[0] if text else type(error).__name__
