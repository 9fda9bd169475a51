"""The fast way through a JSONL file: blocks of lines parsed by Arrow, to the types the spec asks.

`json.loads` builds a Python object per value (a sequence of 200 steps of two floats is 600 of
them) and the encoder walks them again; Arrow's parser puts each field straight into typed
columns, which the tensor features convert at once (text_cells.JsonValues).

It runs only where it reads exactly what `json.loads` would accept and mean: every field the
spec needs feeds tensor features of one Arrow type, the text is UTF-8, and the block has no
blank line and one object per line. Anything Arrow refuses (a string where a number belongs,
1.0 for an integer, a repeated key...) ends it at that block, and `json.loads` reads the rest
with its exact messages and line numbers.
"""
from __future__ import annotations

import codecs
import os
from typing import Any, Generator, Sequence

from .base import Batch, RowOrigins
from .csv_blocks import line_blocks
from .text_cells import JsonValues

BLOCK_BYTES = 4 * 1024**2
_UTF8 = {"utf-8", "utf-8-sig"}

try:
    import pyarrow as pa
    import pyarrow.json as pajson
except ImportError:  # optional: without it every JSONL takes json.loads
    pa = None


def fast_batches(path: str, spec: Any, encoding: str, needed: Sequence[str] | None, key: str | None,
                 batch_size: int) -> Generator[Batch, None, int | None]:
    """Batches of the file's records while the fast way reads them exactly; returns None when it
    read the whole file, else the number of records it yielded (a multiple of `batch_size`)."""
    if pa is None or spec is None or needed is None or codecs.lookup(encoding).name not in _UTF8:
        return 0
    schema = _schema(spec, needed)
    if schema is None or (key is not None and key not in schema.names):
        return 0
    name = os.path.basename(path)
    options = (pajson.ReadOptions(use_threads=True, block_size=BLOCK_BYTES // 4),
               pajson.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore",
                                   newlines_in_values=False))
    done, line, pending, pending_keys = 0, 1, None, []
    with open(path, "rb") as file:
        for index, data in enumerate(line_blocks(file, BLOCK_BYTES)):
            if index == 0 and data.startswith(b"\xef\xbb\xbf"):
                return 0  # json.loads refuses a byte-order mark: it says so
            lines = data.split(b"\n")
            if lines[-1] == b"":
                lines.pop()
            if not all(lines) or any(not text.strip() for text in lines):
                return done  # a blank line: json.loads skips it, so records and lines part ways
            try:
                table = pajson.read_json(pa.py_buffer(data), *options)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                return done
            if table.num_rows != len(lines):
                return done  # e.g. two objects on one line, which json.loads refuses
            if key is not None and table.column(key).null_count:
                return done  # a missing key: json.loads's reader says where
            pending = table if pending is None else pa.concat_tables([pending, table])
            pending_keys += [text.strip() for text in lines] if key is None else []
            while pending.num_rows >= batch_size:
                if _blank_column(pending.slice(0, batch_size)):
                    return done
                yield _batch(pending.slice(0, batch_size), pending_keys[:batch_size], name, line, needed, key)
                pending, pending_keys = pending.slice(batch_size), pending_keys[batch_size:]
                done += batch_size
                line += batch_size
    if pending is not None and pending.num_rows:
        if _blank_column(pending):
            return done
        yield _batch(pending, pending_keys, name, line, needed, key)
    return None


def _blank_column(table: Any) -> bool:
    """A field null in every record of a batch: absent (no column for json.loads's reader) or
    null in each (a column of missing values), which Arrow can't tell apart."""
    return any(column.null_count == len(column) for column in table.columns)


def _schema(spec: Any, needed: Sequence[str]) -> Any:
    """The Arrow type of every needed field, or None if some field isn't only for tensor features."""
    from ..features import TensorFeature

    types: dict[str, Any] = {}
    for feature in spec.features.values():
        if feature.source_name not in needed:
            continue
        if not isinstance(feature, TensorFeature) or feature.dtype == "bool" or len(feature.shape) > 1:
            return None
        kind = feature.dtype_info.kind
        arrow = {"int64": pa.int64(), "float": pa.float64(), "bytes": pa.string()}[kind]
        depth = (1 if feature.sequence else 0) + (1 if feature.shape else 0)
        for _ in range(depth):
            arrow = pa.list_(arrow)
        if types.setdefault(feature.source_name, arrow) != arrow:
            return None
    if set(types) != set(needed):
        return None  # a field no feature reads (a split column, an ordering column...)
    return pa.schema(list(types.items()))


def _batch(table: Any, keys: list[bytes], name: str, line: int, needed: Sequence[str], key: str | None) -> Batch:
    columns = {column: table.column(column).combine_chunks() for column in needed}
    if key is not None:
        keys = [str(value) for value in columns[key].to_pylist()]
    origins = RowOrigins(name, list(range(line, line + table.num_rows)))
    return Batch(keys=keys, columns={column: JsonValues(columns[column]) for column in needed}, origin=origins,
                 content_keys=key is None, source=name)
