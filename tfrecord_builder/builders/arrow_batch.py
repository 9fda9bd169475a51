"""One Arrow record batch as a `Batch`: the values features take and the rows' keys, the same
way for every Arrow source (Parquet files, Delta and Iceberg tables, frames, SQL query results),
so the same rows give the same records whichever of them they come from.

A source whose columns need more than `unreadable`'s checks (a database's types) gives hooks:
`problem` and `described` to `check_columns`, `exact` to `arrow_batch` (a column's values turned
or refused before they become Python values)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import pyarrow as pa

from ..errors import DataError
from ..features.cells import TypedValues
from .arrow_rows import python_values, row_keys, unreadable
from .base import Batch, RowOrigins, column_list

# a column's values as the features take them (`exact(array, column, start)`), or a DataError
Exact = Callable[[Any, str, int], Any]


def _unreadable(column: str, kind: Any) -> str | None:
    return unreadable(kind)


def _named(column: str) -> str:
    return f"column `{column}`"


def check_columns(schema: Any, name: str, wanted: Sequence[str], key_column: str | None,
                  problem: Callable[[str, Any], str | None] = _unreadable, described: Callable[[str], str] = _named,
                  unique_hint: str = "") -> None:
    """Each column read (and the key column) appears once and has a type features can take, or a
    DataError names it (`name`: the file or table): `problem(column, type)` says why a type can't
    be read (None: it can), `described(column)` names a column in the message (`column `x``), and
    `unique_hint` follows the text asking for unique names."""
    columns = list(schema.names)
    if key_column is not None and key_column not in columns:
        raise DataError(f"{name}: key column `{key_column}` not found; columns: {column_list(columns)}")
    for column in sorted(set(wanted) | ({key_column} if key_column else set())):
        if columns.count(column) > 1:
            raise DataError(f"{name}: column `{column}` appears {columns.count(column)} times; "
                            f"expected unique column names{unique_hint}")
        found = problem(column, schema.field(column).type)
        if found:
            raise DataError(f"{name}: {described(column)}: {found}")


def arrow_batch(record_batch: Any, name: str, wanted: Sequence[str], key_column: str | None, start: int,
                available: Sequence[str], exact: Exact | None = None, source: str | None = None,
                at_once: bool = False) -> Batch:
    """The `wanted` columns of `record_batch` as a Batch, keyed by `key_column`'s values (as text)
    or, without one, by each row's whole content (every column of the batch: which features the
    spec reads must not move rows between splits). `start`: the rows of `name` before it, for the
    rows' origins (`name, row 17`); `available`: every column of the source; `exact`: a column's
    values as features take them, or a DataError (none: as they are); `source`: the source as
    messages name it (`name` if not given). With `at_once`, columns of whole numbers, floats and
    text (and lists of numbers) stay Arrow arrays (`TypedValues`), which the tensor features
    convert at once: the same values, no Python object per value (`at_once_column`)."""
    values = {}
    for column in wanted:
        array = record_batch.column(column) if exact is None else exact(record_batch.column(column), column, start)
        values[column] = at_once_column(array) if at_once else python_values(array)
    count = record_batch.num_rows
    if key_column is not None:
        keys = _key_texts(record_batch.column(key_column))
    else:
        keys = row_keys(record_batch, name)
    origins = RowOrigins(name, list(range(start + 1, start + count + 1)), unit="row")
    return Batch(keys=keys, columns=values, origin=origins, content_keys=key_column is None,
                 source=name if source is None else source, available=list(available), language="json")


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


def _key_texts(array: Any) -> list[Any]:
    """Each row's key as text, `str` of its value: a column of whole numbers without nulls cast by
    Arrow in one call (the same digits), any other value by value."""
    if pa.types.is_integer(array.type) and not array.null_count:
        return array.cast(pa.string()).to_pylist()
    return [str(key) for key in python_values(array)]
