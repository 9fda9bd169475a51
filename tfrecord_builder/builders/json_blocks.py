"""The fast way through a JSONL file: blocks of lines parsed by Arrow, to the types the spec asks.

`json.loads` builds a Python object per value (a sequence of 200 steps of two floats is 600 of
them) and the encoder walks them again; Arrow's parser puts each field straight into typed
columns, which the tensor features convert at once (features/cells.py: JsonValues).

It runs only where it reads exactly what `json.loads` would accept and mean: every field the
spec needs feeds tensor features of one Arrow type, the text is UTF-8, and the block has no
blank line and one object per line. The build's process only cuts such blocks into batches of
whole lines (`JsonLines`); Arrow parses each where it is encoded, in a worker. A batch Arrow
refuses (a string where a number belongs, 1.0 for an integer, a repeated key...) or can't read
the same way is read by `json.loads` instead, with its exact messages and line numbers. At the
first block with a blank line the fast way stops, and `json.loads` reads the rest.
"""
from __future__ import annotations

import codecs
import io
import os
from dataclasses import dataclass
from typing import Any, Generator, Sequence

import numpy as np

from . import json_rows
from .base import Batch, PendingBatch, RowOrigins
from .lines import BOM, FileLines, blank_lines, line_batches, line_blocks, lines_data
from .opened import Window, open_window, read_again
from ..features import grouped
from ..features.cells import JsonValues
from ..features.notices import Notices
from ..optional import imported

BLOCK_BYTES = 4 * 1024**2
_UTF8 = {"utf-8", "utf-8-sig"}

try:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pajson
except ImportError:  # optional: without it every JSONL takes json.loads
    pa = None


# pysimdjson, optional (the `fast` extra): without it numbers go through Arrow's parser
simdjson: Any = imported("simdjson")


def fast_batches(path: str, spec: Any, encoding: str, needed: Sequence[str] | None, key: str | None,
                 batch_size: int, keep_going: bool = False, na_values: frozenset[str] = frozenset(),
                 window: Window | None = None) -> Generator["JsonLines", None, int | None]:
    """Pending batches of the file's records while the fast way reads them exactly; returns None
    when it read the whole file, else the number of records it yielded (a multiple of `batch_size`)."""
    if pa is None or spec is None or needed is None or codecs.lookup(encoding).name not in _UTF8:
        return 0
    schema = _schema(spec, needed)
    if schema is None:
        return 0
    if key is not None and (key not in schema.names or schema.field(key).type not in (pa.int64(), pa.string())):
        return 0  # e.g. a float key: json.loads keeps 5 an int, Arrow makes it 5.0, and keys decide splits
    name = os.path.basename(path)
    before = window.lines_before if window is not None else 0
    with open_window(path, window, header=False) as file:
        if file.peek(len(BOM))[: len(BOM)] == BOM:
            return 0  # a byte-order mark: the plain reader drops it (json.loads would refuse it)
        return (yield from line_batches(
            line_blocks(file, BLOCK_BYTES), batch_size, _no_blank_line,
            lambda lines, count, lines_before: JsonLines(lines, count, name, before + lines_before + 1, schema,
                                                         list(needed), key, keep_going, na_values),
            read_again(path), window.start if window is not None else 0))


def _no_blank_line(data: bytes, ends: np.ndarray) -> bool:
    """A block where each line is one record: json.loads's reader skips blank lines."""
    return not blank_lines(data, ends, b" \t\n\r\x0b\x0c")  # what bytes.strip() strips


@dataclass
class JsonLines(PendingBatch):
    """`count` lines of a JSONL file, none blank, from line `line` on: Arrow parses them where they
    are encoded, into columns of the types the spec asks (`schema`). `lines` are their bytes, or
    their place in the file, read there."""

    lines: bytes | FileLines
    count: int
    name: str
    line: int
    schema: Any
    needed: list[str]
    key: str | None
    keep_going: bool = False  # on_error: skip: a line json.loads can't read is listed, not raised
    na_values: frozenset[str] = frozenset()  # string values read as missing
    data: bytes = b""  # the lines' bytes, once `load` has them

    def load(self, notices: Notices) -> Batch:  # (reading a table notes nothing)
        self.data = lines_data(self.lines)
        if not self.data.isascii() and not _utf8(self.data):
            return self._json_loads()  # Arrow's JSON parser lets bytes that aren't UTF-8 through
        lines = self.data.split(b"\n")[: self.count]
        table = numbers_table(lines, self.schema)
        if table is None:  # not numbers alone, shaped as the spec says: Arrow's parser reads them
            options = (pajson.ReadOptions(use_threads=False, block_size=len(self.data) + 1),
                       pajson.ParseOptions(explicit_schema=self.schema, unexpected_field_behavior="ignore",
                                           newlines_in_values=False))
            try:
                table = pajson.read_json(pa.py_buffer(self.data), *options)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                return self._json_loads()
            if table.num_rows != self.count:
                return self._json_loads()  # e.g. two objects on one line, which json.loads refuses
            if self.key is not None and table.column(self.key).null_count:
                return self._json_loads()  # a missing key: json.loads's reader says where
            if _blank_column(table):
                return self._json_loads()
        keys = [] if self.key is not None else [text.strip() for text in lines]
        return _batch(table, keys, self.name, self.line, self.needed, self.key, self.na_values)

    def _json_loads(self) -> Batch:
        """The lines read by json.loads's reader: the records Arrow couldn't read the same way, or
        its exact error."""
        return self.only_batch(json_rows.read_batches(io.BytesIO(self.data), self.name, "utf-8", self.needed,
                                                      self.key, self.count, first_line=self.line,
                                                      keep_going=self.keep_going, na_values=self.na_values))


# What a line's skeleton leaves out: the characters of JSON's numbers, and whitespace
_NUMBER_OR_SPACE = b"0123456789+-.eE \t\r"
_INT64 = (-(2**63), 2**63 - 1)


def numbers_table(lines: list[bytes], schema: Any) -> Any:
    """The lines' records as Arrow columns of the `schema`'s types, parsed by simdjson, where every
    field is a number or a list (or a list of lists of one length) of numbers; None where any line
    is anything else (a string, a null, a missing, repeated or other field, lists of other
    shapes, an integer past int64, a number simdjson refuses such as NaN or 1e400), or simdjson isn't
    installed: Arrow's parser then reads the batch, which json.loads backs.

    simdjson parses a line into its own memory and copies a list of numbers out in one call
    (`as_buffer`, which flattens lists of lists), with no Python object per value: 2.2x Arrow's
    parse of bench/sequences.py's lines. What the flattening can't show, the lists' shapes, the
    line's skeleton does: the line less its numbers and whitespace must be exactly the skeleton of
    the records the lengths describe (`{"id":,"tokns":[,,],"valus":[[,],[,]]}`), so the values
    are those json.loads would read, in the same places."""
    if simdjson is None:
        return None
    fields = _number_fields(schema)
    if fields is None:
        return None
    parser = _parser()
    values: dict[str, list[Any]] = {name: [] for name in fields}
    lengths: dict[str, list[int]] = {name: [] for name, (_, depth) in fields.items() if depth}
    inner: dict[str, int] = {}  # a list of lists' inner length, the same in every record of the batch
    prefixes: dict[tuple[str, ...], list[bytes] | None] = {}  # each order of the keys: their skeletons
    for line in lines:
        try:
            parts = _line_parts(parser.parse(line), fields, values, lengths, inner, prefixes)
        except (ValueError, TypeError, RuntimeError):  # simdjson's refusals (UnicodeDecodeError is a ValueError)
            return None
        if parts is None or line.translate(None, _NUMBER_OR_SPACE) != b"{" + b",".join(parts) + b"}":
            return None
    columns = {}
    for name, (kind, depth) in fields.items():
        if not depth:
            columns[name] = pa.array(values[name], pa.int64() if kind == "int64" else pa.float64())
            continue
        flat = np.frombuffer(b"".join(values[name]), np.int64 if kind == "int64" else np.float64)
        if len(flat) >= 2**31:
            return None  # (Arrow's lists count their values in int32)
        array = pa.array(flat)
        if depth == 2:  # the inner lists, all of one size
            size = inner.get(name, 0)
            starts = (np.arange(0, len(flat) + 1, size, dtype=np.int32) if size
                      else np.zeros(sum(lengths[name]) + 1, np.int32))
            array = pa.ListArray.from_arrays(pa.array(starts), array)
        offsets = np.zeros(len(lines) + 1, np.int32)
        np.cumsum(lengths[name], out=offsets[1:])
        columns[name] = pa.ListArray.from_arrays(pa.array(offsets), array)
    return pa.table(columns, schema=schema)


def _line_parts(record: Any, fields: dict[str, tuple[str, int]], values: dict[str, list[Any]],
                lengths: dict[str, list[int]], inner: dict[str, int],
                prefixes: dict[tuple[str, ...], list[bytes] | None]) -> list[bytes] | None:
    """A parsed line's values added to the columns (`values`, the lists' `lengths`, each list of
    lists' `inner` size); its skeleton's parts, key by key, or None if it isn't numbers alone in
    the fields' shapes (then the columns are dropped with the batch). Raises simdjson's errors
    (a list holding a value that isn't a number of its kind)."""
    if not isinstance(record, simdjson.Object):
        return None
    names = tuple(record.keys())
    if names not in prefixes:
        prefixes[names] = _key_skeletons(names, fields)
    prefix = prefixes[names]
    if prefix is None:
        return None  # a field missing, repeated or not the spec's
    parts = []
    for name, key in zip(names, prefix):
        kind, depth = fields[name]
        value = record[name]
        if not depth:
            if type(value) is not int and (kind == "int64" or type(value) is not float):
                return None
            if type(value) is int and not _INT64[0] <= value <= _INT64[1]:
                return None
            values[name].append(value)
            parts.append(key)
            continue
        if not isinstance(value, simdjson.Array):
            return None
        flat = value.as_buffer(of_type="i" if kind == "int64" else "d")  # (a copy)
        count, outer = memoryview(flat).nbytes // 8, len(value)
        if depth == 1:
            parts.append(key + b"[" + b"," * (count - 1) + b"]" if count else key + b"[]")
        else:
            size = inner.setdefault(name, count // outer) if outer else 0
            if count != outer * size:
                return None
            step = b"[" + b"," * (size - 1) + b"]," if size else b"[],"
            parts.append(key + b"[" + (step * outer)[:-1] + b"]")
        values[name].append(flat)
        lengths[name].append(outer)
    return parts  # (nothing of the line is held: the parser is reused)


def _number_fields(schema: Any) -> dict[str, tuple[str, int]] | None:
    """Each field's kind of number ("int64", "float") and depth of lists (0-2), or None if some
    field isn't numbers."""
    fields = {}
    for field in schema:
        type_, depth = field.type, 0
        while pa.types.is_list(type_) and depth < 3:
            type_, depth = type_.value_type, depth + 1
        if depth > 2 or not (pa.types.is_int64(type_) or pa.types.is_float64(type_)):
            return None
        fields[field.name] = ("int64" if pa.types.is_int64(type_) else "float", depth)
    return fields


def _key_skeletons(names: tuple[str, ...], fields: dict[str, Any]) -> list[bytes] | None:
    """`"key":` of each of a record's keys as its line's skeleton holds it; None unless they are
    the fields, each once."""
    if len(names) != len(fields) or set(names) != set(fields):
        return None
    return [b'"' + name.encode("utf-8").translate(None, _NUMBER_OR_SPACE) + b'":' for name in names]


_PARSERS: list[Any] = []


def _parser() -> Any:
    """This process's simdjson parser (made once: it keeps its buffers between lines)."""
    if not _PARSERS:
        _PARSERS.append(simdjson.Parser())
    return _PARSERS[0]


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _blank_column(table: Any) -> bool:
    """A field null in every record of a batch: absent (no column for json.loads's reader) or
    null in each (a column of missing values), which Arrow can't tell apart."""
    return any(column.null_count == len(column) for column in table.columns)


def _schema(spec: Any, needed: Sequence[str]) -> Any:
    """The Arrow type of every needed field, or None if some field isn't only for features that take
    Arrow's typed JSON values (`Feature.json_kind`: tensors)."""
    types: dict[str, Any] = {}
    for feature in spec.features.values():
        if not set(feature.source_names) <= set(needed):
            continue
        if spec.source.group_by is not None and not spec.is_sequence and grouped.takes_rows(feature):
            feature = grouped.row_feature(feature)  # rows grouped into one Example: a row holds one [k] value
        typed = feature.json_kind()
        if typed is None:
            return None
        kind, depth = typed
        arrow = {"int64": pa.int64(), "float": pa.float64(), "bytes": pa.string()}[kind]
        for _ in range(depth):
            arrow = pa.list_(arrow)
        for column in feature.source_names:  # (gathered columns hold one value each)
            if types.setdefault(column, arrow) != arrow:
                return None
    if set(types) != set(needed):
        return None  # a field no feature reads (a split column, an ordering column...)
    if types.get(spec.source.group_by, pa.string()) not in (pa.int64(), pa.string()):
        return None  # a group's key as json.loads reads it (5, not Arrow's 5.0): keys decide splits
    return pa.schema(list(types.items()))


def _batch(table: Any, keys: list[bytes], name: str, line: int, needed: Sequence[str], key: str | None,
           na_values: frozenset[str]) -> Batch:
    columns = {column: table.column(column).combine_chunks() for column in needed}
    if key is not None:
        keys = [str(value) for value in columns[key].to_pylist()]
    if na_values:  # (after the keys, as the plain reader takes them)
        missing = pa.array(sorted(na_values), pa.string())
        columns = {column: pc.if_else(pc.is_in(values, value_set=missing), pa.scalar(None, pa.string()), values)
                   if pa.types.is_string(values.type) else values for column, values in columns.items()}
    origins = RowOrigins(name, list(range(line, line + table.num_rows)))
    return Batch(keys=keys, columns={column: JsonValues(columns[column]) for column in needed}, origin=origins,
                 content_keys=key is None, source=name, language="json")
