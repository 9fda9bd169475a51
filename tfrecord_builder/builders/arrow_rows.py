"""Rows of Arrow record batches (Parquet files, DataFrames) as keys and as the values features take.

A row's key is its raw content, so it must be the same bytes wherever the file is read: Python's
view of Arrow values depends on what is installed (with pandas, a `timestamp[ns]` becomes a
pandas Timestamp with another repr; without it, the conversion fails). Keys are therefore made
of the values' own bytes as Arrow holds them, column by column with NumPy, never through Python
objects. Dates and times reach the features as NumPy datetime64 values, which are the same in
every environment.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..codec.bytecolumn import ByteColumn, join
from ..errors import DataError

_NULL = b"\x00"
_VALID = b"\x01"
# string and binary views (Arrow 16 on) hold their bytes out of line: read as large binary
_VIEWS = [getattr(pa.types, name) for name in ("is_string_view", "is_binary_view") if hasattr(pa.types, name)]


def row_keys(batch: Any, source: str) -> list[bytes]:
    """Each row's key: every column's value bytes, each marked valid or null and length-prefixed
    (so no two different rows share a key), in column order."""
    if not batch.num_columns:
        return [b""] * batch.num_rows
    columns = []
    for name, array in zip(batch.schema.names, batch.columns):
        try:
            columns.extend(_encoded(array))
        except _Unsupported as error:
            raise DataError(f"{source}: column `{name}` of Arrow type {error} can't be part of a row's key; "
                            "give `source.key` (a column that identifies each row)") from None
    return join(columns).rows()


def python_values(array: Any) -> list[Any]:
    """The column's values as Python objects, missing ones None; dates and timestamps (also in
    lists) as NumPy datetime64 (timestamps with a time zone in UTC), whatever is installed."""
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    kind = array.type
    if _is_time(kind):
        values = _datetimes(array)
        valid = array.is_valid().to_numpy(zero_copy_only=False)
        return [value if ok else None for value, ok in zip(values, valid.tolist())]
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        if _holds_time(kind.value_type):
            inner = python_values(array.values)
            offsets = array.offsets.to_numpy() if not pa.types.is_fixed_size_list(kind) else \
                (np.arange(len(array) + 1) + array.offset) * kind.list_size
            valid = array.is_valid().to_numpy(zero_copy_only=False).tolist()
            return [inner[start:end] if ok else None
                    for start, end, ok in zip(offsets[:-1].tolist(), offsets[1:].tolist(), valid)]
    elif pa.types.is_struct(kind) and any(_holds_time(field.type) for field in kind):
        children = {kind.field(index).name: python_values(child) for index, child in enumerate(array.flatten())}
        valid = array.is_valid().to_numpy(zero_copy_only=False).tolist()
        return [{name: values[row] for name, values in children.items()} if ok else None
                for row, ok in enumerate(valid)]
    return array.to_pylist()


def categories(array: Any) -> list[str] | None:
    """A dictionary-encoded column's categories as text, in the file's order (pandas writes a
    categorical so, and its `.cat.codes` index this list); None for any other column."""
    if not pa.types.is_dictionary(array.type) or not (pa.types.is_string(array.type.value_type)
                                                      or pa.types.is_large_string(array.type.value_type)):
        return None
    return [str(value) for value in array.dictionary.to_pylist()]


def unreadable(kind: Any) -> str | None:
    """Why a column of this Arrow type can't reach a feature (times of day and durations, which
    Python gives only with pandas), or None."""
    if pa.types.is_dictionary(kind):
        return unreadable(kind.value_type)
    if pa.types.is_time(kind) or pa.types.is_duration(kind):
        return (f"a {kind} column can't be read yet (only dates and timestamps are); cast it to int64 "
                "before writing the file")
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return unreadable(kind.value_type)
    if pa.types.is_struct(kind):
        return next((problem for problem in (unreadable(field.type) for field in kind) if problem), None)
    return None


def _is_time(kind: Any) -> bool:
    return pa.types.is_timestamp(kind) or pa.types.is_date(kind)


def _holds_time(kind: Any) -> bool:
    if _is_time(kind):
        return True
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return _holds_time(kind.value_type)
    return pa.types.is_struct(kind) and any(_holds_time(field.type) for field in kind)


def _datetimes(array: Any) -> list[np.datetime64]:
    if pa.types.is_date64(array.type):
        array = array.cast(pa.date32())  # milliseconds of whole days: a date, not a time
    return list(array.to_numpy(zero_copy_only=False))


class _Unsupported(Exception):
    """A column type the key encoder doesn't know (its message is the type)."""


def _encoded(array: Any) -> list[ByteColumn]:
    """Per row: 0x00 for a null, else 0x01, the payload's length (8 bytes) and the payload (as
    parts, joined once for the whole row)."""
    kind = array.type
    if pa.types.is_dictionary(kind):
        return _encoded(array.dictionary_decode())
    if isinstance(kind, pa.ExtensionType):
        return _encoded(array.storage)
    if pa.types.is_null(kind):
        return [ByteColumn.constant(_NULL, len(array))]
    if pa.types.is_boolean(kind):
        return _encoded(pc.cast(array, pa.uint8()))
    if any(check(kind) for check in _VIEWS):
        return _encoded(array.cast(pa.large_binary()))
    valid = array.is_valid().to_numpy(zero_copy_only=False).astype(bool)
    if pa.types.is_string(kind) or pa.types.is_binary(kind) or pa.types.is_large_string(kind) \
            or pa.types.is_large_binary(kind):
        buffers = array.buffers()
        wide = pa.types.is_large_string(kind) or pa.types.is_large_binary(kind)
        offsets = np.frombuffer(buffers[1], np.int64 if wide else np.int32)[array.offset : array.offset + len(array) + 1]
        data = np.frombuffer(buffers[2], np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
        return _framed(valid, ByteColumn(data, offsets.astype(np.int64)))
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_map(kind):
        # a list's payload is its items' encodings, which lie side by side in its child's column;
        # only this slice's items (`values` is the whole child of a sliced array: a frame's batch)
        offsets = np.asarray(array.offsets.to_numpy(), dtype=np.int64)
        child = join(_encoded(array.values.slice(offsets[0], offsets[-1] - offsets[0])))
        return _framed(valid, ByteColumn(child.data, child.offsets[offsets - offsets[0]]))
    if pa.types.is_fixed_size_list(kind):
        size = kind.list_size
        child = join(_encoded(array.values.slice(array.offset * size, len(array) * size)))
        return _framed(valid, ByteColumn(child.data, child.offsets[np.arange(len(array) + 1) * size]))
    if pa.types.is_struct(kind):
        fields = [part for child in array.flatten() for part in _encoded(child)]
        return _framed(valid, join(fields) if fields else ByteColumn.constant(b"", len(array)))
    width = _byte_width(kind)
    if width is None:
        raise _Unsupported(str(kind))
    raw = np.frombuffer(array.buffers()[1], np.uint8)[array.offset * width : (array.offset + len(array)) * width]
    return _framed(valid, ByteColumn(raw, np.arange(len(array) + 1, dtype=np.int64) * width))


def _byte_width(kind: Any) -> int | None:
    try:
        width = kind.byte_width  # fixed-width types: numbers, dates, times, decimals, fixed-size binary
    except (ValueError, AttributeError):
        return None
    return width if width and width > 0 else None


def _framed(valid: np.ndarray, payload: ByteColumn) -> list[ByteColumn]:
    """`payload`'s rows behind a valid flag and their length; a null row is its flag alone (what
    lies under a null in Arrow's buffers is undefined)."""
    count = len(valid)
    width = payload.width
    if width is not None and valid.all():  # the common case: one header for every row
        return [ByteColumn.constant(_VALID + width.to_bytes(8, "little"), count), payload]
    lengths = np.where(valid, payload.lengths, 0)
    if not valid.all():
        keep = np.repeat(valid, payload.lengths)
        data = payload.data[payload.offsets[0] : payload.offsets[-1]][keep]
        payload = ByteColumn.from_lengths(data, lengths)
    flags = np.where(valid, 1, 0).astype(np.uint8)
    sizes = lengths.astype("<u8").view(np.uint8).reshape(count, 8)
    heads = np.concatenate([flags[:, None], sizes], axis=1)
    head_lengths = np.where(valid, 9, 1)
    header = ByteColumn.from_lengths(heads[np.arange(9) < head_lengths[:, None]], head_lengths)
    return [header, payload]
