"""Frames of every kind a build takes (`tb.build(spec, source=frame)`), made from one Arrow table
of every column type, each with the same rows written to Parquet by pyarrow beside it."""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, Callable

import datasets
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.dataset as arrow_datasets
import pyarrow.parquet as pq

COLORS = ["red", "green", "blue"]
ROWS = 40


def canonical(rows: int = ROWS) -> pa.Table:
    """Every column type a frame brings: integers, floats, booleans, text, bytes, lists, dates,
    timestamps with a zone, a categorical, and nulls in most of them."""
    ids = list(range(rows))
    oslo = dt.timezone(dt.timedelta(hours=1))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "i8": pa.array([(-1) ** i * (i % 120) for i in ids], pa.int8()),
        "u8": pa.array([(i * 7) % 256 for i in ids], pa.uint8()),
        "f32": pa.array([i / 4 for i in ids], pa.float32()),
        "f64": pa.array([i / 3 if i % 5 else None for i in ids], pa.float64()),
        "flag": pa.array([None if i % 7 == 3 else i % 2 == 0 for i in ids], pa.bool_()),
        "text": pa.array([None if i % 6 == 1 else f"r{i}é" for i in ids], pa.string()),
        "raw": pa.array([bytes([i % 256, 0, 255]) for i in ids], pa.binary()),
        "ints": pa.array([None if i % 9 == 2 else list(range(i % 4)) for i in ids], pa.list_(pa.int64())),
        "words": pa.array([["a", f"w{i}"] for i in ids], pa.list_(pa.string())),
        "day": pa.array([None if i % 8 == 5 else dt.date(2020, 1, 1) + dt.timedelta(days=37 * i) for i in ids],
                        pa.date32()),
        "when": pa.array([dt.datetime(2024, 3, 1, 12, 0, 0, tzinfo=oslo) + dt.timedelta(hours=5 * i) for i in ids],
                         pa.timestamp("us", tz="Europe/Oslo")),
        "color": pa.array([COLORS[i % 3] for i in ids]).dictionary_encode(),
    })


def expected_rows(rows: int = ROWS) -> dict[int, dict[str, list]]:
    """What each record must hold, by id, worked out from the rows' definition (not read back)."""
    out = {}
    for i in range(rows):
        day = dt.date(2020, 1, 1) + dt.timedelta(days=37 * i)
        when = dt.datetime(2024, 3, 1, 11, 0, 0) + dt.timedelta(hours=5 * i)  # in UTC
        out[i] = {
            "id": [i], "i8": [(-1) ** i * (i % 120)], "u8": [(i * 7) % 256], "f32": [np.float32(i / 4)],
            "f64": [float(np.float32(i / 3))] if i % 5 else [-1.0],
            "flag": [0] if i % 7 == 3 else [int(i % 2 == 0)],
            "text": [""] if i % 6 == 1 else [f"r{i}é"], "raw": [bytes([i % 256, 0, 255])],
            "ints": [] if i % 9 == 2 else list(range(i % 4)), "words": ["a", f"w{i}"],
            "day": [""] if i % 8 == 5 else [day.isoformat()], "when": [when.strftime("%Y-%m-%dT%H:%M:%S")],
            "color": [i % 3],
        }
    return out


def _pandas(table: pa.Table, parquet: Path) -> Any:
    frame = table.to_pandas()
    frame.to_parquet(parquet)  # pandas' own export (pyarrow)
    return frame


def _polars(table: pa.Table, parquet: Path) -> Any:
    frame = pl.from_arrow(table)
    frame.write_parquet(parquet, use_pyarrow=True)
    return frame


def _table(table: pa.Table, parquet: Path) -> Any:
    pq.write_table(table, parquet)
    return table


def _reader(table: pa.Table, parquet: Path) -> Any:
    pq.write_table(table, parquet)
    return pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=7))


def _dataset(table: pa.Table, parquet: Path) -> Any:
    parts = parquet.parent / "parts"
    parts.mkdir()
    pq.write_table(table.slice(0, 25), parts / "part-0.parquet")
    pq.write_table(table.slice(25), parts / "part-1.parquet")
    dataset = arrow_datasets.dataset(parts)
    pq.write_table(dataset.to_table(), parquet)
    return dataset


def _hugging_face(table: pa.Table, parquet: Path) -> Any:
    dataset = datasets.Dataset(table)
    dataset.to_parquet(str(parquet))
    return dataset


KINDS: dict[str, Callable[[pa.Table, Path], Any]] = {
    "pandas": _pandas, "polars": _polars, "table": _table, "reader": _reader, "dataset": _dataset,
    "hugging_face": _hugging_face,
}


