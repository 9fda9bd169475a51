"""One Arrow record batch as a `Batch`: the values features take and the rows' keys, the same
way for every Arrow source (Parquet files, Delta and Iceberg tables), so the same rows give the
same records whichever of them they come from."""
from __future__ import annotations

from typing import Any, Sequence

from ..errors import DataError
from ..features.cells import TypedValues
from .arrow_rows import python_values, row_keys, unreadable
from .base import Batch, RowOrigins, column_list


def check_columns(schema: Any, name: str, wanted: Sequence[str], key_column: str | None) -> None:
    """Each column read (and the key column) appears once and has a type features can take, or a
    DataError names it (`name`: the file or table)."""
    columns = list(schema.names)
    if key_column is not None and key_column not in columns:
        raise DataError(f"{name}: key column `{key_column}` not found; columns: {column_list(columns)}")
    for column in sorted(set(wanted) | ({key_column} if key_column else set())):
        if columns.count(column) > 1:
            raise DataError(f"{name}: column `{column}` appears {columns.count(column)} times; "
                            "expected unique column names")
        problem = unreadable(schema.field(column).type)
        if problem:
            raise DataError(f"{name}: column `{column}`: {problem}")


def arrow_batch(record_batch: Any, name: str, wanted: Sequence[str], key_column: str | None, start: int,
                available: Sequence[str], at_once: bool = False) -> Batch:
    """The `wanted` columns of `record_batch` as a Batch, keyed by `key_column`'s values (as text)
    or, without one, by each row's whole content (every column of the batch: which features the
    spec reads must not move rows between splits). `start`: the rows of `name` before it, for the
    rows' origins (`name, row 17`); `available`: every column of the source. With `at_once`,
    columns of whole numbers, floats and text (and lists of numbers) stay Arrow arrays
    (`TypedValues`), which the tensor features convert at once: the same values, no Python object
    per value (`at_once_column`)."""
    values = {column: at_once_column(record_batch.column(column)) if at_once
              else python_values(record_batch.column(column)) for column in wanted}
    count = record_batch.num_rows
    if key_column is not None:
        keys: list[Any] = [str(key) for key in python_values(record_batch.column(key_column))]
    else:
        keys = row_keys(record_batch, name)
    origins = RowOrigins(name, list(range(start + 1, start + count + 1)), unit="row")
    return Batch(keys=keys, columns=values, origin=origins, content_keys=key_column is None, source=name,
                 available=list(available), language="json")


def at_once_column(array: Any) -> Any:
    """The column as `TypedValues` where its Python values are `to_pylist()`'s (whole numbers,
    widened to int64, floats to float64, text; lists of them), else as `python_values`: the same
    values either way (dates and times, dictionaries and structs take `python_values`)."""
    import pyarrow as pa

    kind = array.type
    leaf = kind.value_type if pa.types.is_list(kind) else kind
    if pa.types.is_string(kind):
        return TypedValues(array)
    if pa.types.is_integer(leaf) and not pa.types.is_uint64(leaf):
        return TypedValues(array.cast(pa.list_(pa.int64()) if pa.types.is_list(kind) else pa.int64()))
    if pa.types.is_float32(leaf) or pa.types.is_float64(leaf):
        return TypedValues(array.cast(pa.list_(pa.float64()) if pa.types.is_list(kind) else pa.float64()))
    return python_values(array)
