"""`tensor`: numbers, booleans or strings of a fixed or variable shape.

Shapes: `[]` a scalar, `[k, ...]` fixed (FixedLenFeature), `[null]` variable length
(VarLenFeature, decoded to a tf.RaggedTensor), `[null, k, ...]` a variable number of fixed-size
rows (RaggedFeature with uniform inner dimensions). Values are stored flattened.

A list in a CSV cell is written as whitespace-separated values (`0.5 1 2.5`, or tokens
`the cat sat`) or as a JSON array (`[0.5, 1, 2.5]`, `[["a b", "c"]]`, `[[1, 2], [3, 4]]`).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Literal, Sequence

import numpy as np

from ..errors import DataError, SpecError
from ..spec.fields import At, meta
from .cells import ArrowCells
from .base import DecodeStep, EncodeContext, Feature, Origin, ParseSpec, locate, register
from .described import Card
from . import times
from .digest import digests
from .dtypes import DTYPES, DType, Invalid
from .gathered import GatheredColumns, is_pattern
from . import grouped, rows
from .rows import BadRow, Rows, format_shape
from .shown import Language
from .values import ListKind, StoredColumn, Values


DTypeName = Literal["int64", "float32", "string", "bytes", "bool", "uint8", "int32", "float16", "float64"]


@dataclass(frozen=True, kw_only=True)
class TensorFeature(Feature):
    """A tensor of a dtype and shape: `{dtype: float32, shape: [3]}`.

    >>> alcohol = tb.load_spec("specs/wine.yaml").features["alcohol"]
    >>> alcohol.parsing(), alcohol.decoding()
    ({'alcohol': ('fixed', 'float32', [])}, [])
    """

    dtype: DTypeName = meta("the values' dtype")
    shape: list[int | None] = meta("dimensions; [] scalar, [k] fixed, [null] variable, [null, k] ragged", [])
    default: Any = meta("the value used where the raw data has none (empty cell, null, absent key)", None)
    allow_nan: bool = meta("keep NaN and infinite floats instead of rejecting them", False)
    pad: Any = meta("sequence features: the value that pads shorter sequences in a batch (default 0 or \"\")", None)
    format: str | None = meta(
        "dates and times written as text: a strptime format such as %d/%m/%Y, or iso8601; the feature (dtype "
        "string or int64) then stores ISO 8601 text or a count since 1970-01-01", None)
    time_unit: Literal["days", "s", "ms", "us", "ns"] | None = meta(
        "what an int64 feature counts dates and times in, since 1970-01-01T00:00:00 (default s)", None)
    value: Any = meta("the same value in every record, read from no column: a constant such as "
                      "`{dtype: string, value: jpeg, key: image/format}`", None)
    digest: Literal["sha256"] | None = meta(
        "store the hex digest of the file each value names (a path, relative to the source as an image's is; "
        "or bytes, as they are) instead of the value: the Object Detection API's image/key/sha256 is "
        "`{dtype: string, source: image, digest: sha256}`", None)

    reads_text_cells: ClassVar[bool] = True  # converts a CSV column with Arrow at once (encode_values)
    gathers_columns: ClassVar[bool] = True  # `columns: [a, b, c]`: a [n] tensor, one value per column
    takes_group_rows: ClassVar[bool] = True  # grouped rows: shape [null, ...] lists a record's values, a row's each

    @property
    def batch_rows(self) -> int:  # type: ignore[override]
        """Small values go 16,384 rows to a batch (NumPy's cost per call spreads over more rows);
        sequences and large tensors 4,096, to bound the memory of the batches in flight."""
        if self.sequence or (self.shape and (len(self.shape) > 1 or self.inner_size > 64)):
            return 4096
        return 16384

    # ---- spec ----------------------------------------------------------------------------------
    def check(self, at: At) -> None:
        check_shape(self.shape, at / "shape")
        if self.allow_nan and self.dtype_info.kind != "float":
            raise (at / "allow_nan").error(f"only float dtypes can hold NaN, not {self.dtype}")
        if self.format is not None and self.dtype not in ("string", "int64"):
            raise (at / "format").error(f"dates and times go into dtype string (ISO 8601 text) or int64 (a count "
                                        f"since 1970), not {self.dtype}")
        if self.time_unit is not None and self.dtype != "int64":
            raise (at / "time_unit").error(f"a time unit applies to dtype int64 (a count since 1970), not {self.dtype}")
        if self.default is not None:
            try:
                # a missing value takes the default (of gathered columns: a missing cell)
                (self.cell if self.columns is not None else self).encode([None], EncodeContext(lambda row: ""))
            except DataError as error:
                raise (at / "default").error(f"invalid default: {error.problem or error}") from None
        if self.value is not None:
            self._check_value(at)
        if self.digest is not None:
            self._check_digest(at)

    def _check_value(self, at: At) -> None:
        """A constant reads no column, so nothing else about a column applies; it encodes."""
        for key in ("source", "columns", "default", "digest", "format"):
            if getattr(self, key) is not None:
                raise (at / key).error(f"a feature with `value:` stores that value in every record and reads no "
                                       f"column: drop `{key}`")
        try:
            self.encode([self.value], EncodeContext(lambda row: ""))
        except DataError as error:
            raise (at / "value").error(f"invalid value: {error.problem or error}") from None

    def _check_digest(self, at: At) -> None:
        if self.dtype != "string" or self.shape:
            raise (at / "digest").error(f"a digest is stored as hex text, one per record: dtype string, shape []; "
                                        f"received dtype {self.dtype}, shape {format_shape(self.shape)}")
        for key in ("columns", "format"):
            if getattr(self, key) is not None:
                raise (at / key).error(f"`digest:` takes one column of file paths; drop `{key}`")

    def check_sequence(self, at: At) -> None:
        for key in ("value", "digest"):
            if getattr(self, key) is not None:
                raise (at / key).error(f"`{key}:` is for features of the record; declare it under `context:`")
        if self.is_variable and len(self.shape) > 1:
            raise (at / "shape").error("a per-step shape may be [], [k, ...] or [null], not "
                                       f"{format_shape(self.shape)}")
        if self.pad is not None:  # (the default pad, 0 or "", is a stored value: always valid)
            try:
                self._stored_pad()
            except Invalid as invalid:
                raise (at / "pad").error(f"invalid pad value: {invalid.message}") from None

    def check_record(self, at: At) -> None:
        if self.pad is not None:
            raise (at / "pad").error("`pad` applies to sequence features only")

    def check_ungrouped(self, at: At) -> None:
        if self.columns is not None and grouped.takes_rows(self):
            raise (at / "shape").error(
                f"shape {format_shape(self.shape)} with `columns:` takes the columns of every row of a "
                "group (source.group_by); without one, omit `shape` (it becomes [n])")

    @property
    def date_format(self) -> str | None:
        return self.format

    @property
    def ids_per_object(self) -> bool:
        return self.shape == [None] and self.dtype.startswith(("int", "uint"))

    @property
    def pad_value(self) -> Any:
        """What pads this sequence feature: the spec's `pad`, else 0 or the empty string."""
        if self.pad is not None:
            return self.pad
        return "" if self.dtype_info.kind == "bytes" else 0

    @property
    def _pads_specially(self) -> bool:
        """The parser pads steps with 0 or "": another pad value (-0.0 too) is set after parsing."""
        pad = self._pad_storage
        return pad not in (0, b"") or (isinstance(pad, float) and math.copysign(1.0, pad) < 0)

    def _stored_pad(self) -> np.ndarray | list[bytes]:
        """The pad as stored: the spec's `pad` converted as the feature's values are (text read
        through `format:` for dates), the default 0 or "" as it is (no date format reads "")."""
        if self.pad is None:
            return self.dtype_info.convert([self.pad_value], self.allow_nan)
        return self.convert([self.pad])

    @property
    def _pad_storage(self) -> Any:
        value = self._stored_pad()[0]
        return value if isinstance(value, bytes) else value.item()

    @property
    def cell(self) -> "TensorFeature":
        """What one cell of a gathered feature's columns is: a scalar of the same dtype and rules."""
        return dataclasses.replace(self, columns=None, shape=[])

    @property
    def rows(self) -> Rows:
        """How a batch of raw values is checked against the shape and flattened (features/rows.py)."""
        return Rows(self.shape, self.dtype, self.dtype_info.kind, self.default)

    @property
    def dtype_info(self) -> DType:
        return DTYPES[self.dtype]

    @property
    def source_names(self) -> list[str]:
        """The columns read: none for a constant (`value:`)."""
        return [] if self.value is not None else super().source_names

    def constant_values(self, count: int) -> list[Any] | None:
        """`value:` for each of `count` records, or None: the feature reads a column."""
        return None if self.value is None else [self.value] * count

    @property
    def is_variable(self) -> bool:
        return self.rows.is_variable

    @property
    def fills_absent(self) -> bool:
        return self.default is not None or self.is_variable

    @property
    def holds_objects(self) -> bool:
        return bool(self.shape) and self.shape[0] is None and not self.sequence

    @property
    def fills_missing(self) -> bool:
        return self.default is not None and not self.sequence  # (a step's null isn't counted per step)

    @property
    def inner_size(self) -> int:
        """Values per element of the outermost dimension (per row, for a fixed shape)."""
        return self.rows.inner_size

    @property
    def default_value(self) -> Any:
        return self.default

    @property
    def card(self) -> Card:
        """A number's histogram (whole numbers for integer dtypes), or a string's top values."""
        kind = self.dtype_info.kind
        return Card("string" if kind == "bytes" else "number", whole=kind == "int64", column=self.dtype)

    def json_kind(self) -> tuple[ListKind, int] | None:
        """Its dtype's kind, in a list for a shape [k] or [null] and one more for steps; None for
        booleans (JSON's true isn't Arrow's 1), shapes of more dimensions and dates written as text
        (read value by value)."""
        if self.dtype == "bool" or len(self.shape) > 1 or self.format is not None:
            return None
        return self.dtype_info.kind, (1 if self.sequence else 0) + (1 if self.shape and self.columns is None else 0)

    # ---- writing side ----------------------------------------------------------------------------
    def encode(self, values: Sequence[Any], context: EncodeContext) -> dict[str, Values]:
        origin, language = context.origin, context.language
        if self.sequence:
            return {self.record_key: self.encode_steps(values, origin, language)}
        if self.digest is not None:  # the files' digests in place of their paths
            values = digests(values.cells() if isinstance(values, ArrowCells) else values, self.digest,
                             context.base_dir, lambda row, problem: self.fail(origin, row, problem))
        if isinstance(values, GatheredColumns):
            return {self.record_key: self.encode_gathered(values, origin, language)}
        return {self.record_key: self.encode_values(values, origin, language)}

    def encode_gathered(self, gathered: GatheredColumns, origin: Origin, language: Language = "python") -> Values:
        """A batch of `columns:` (one value per column and row) as [n] tensors: each column is
        converted at once as a scalar feature would convert it (Arrow's columns at Arrow's
        speed), then the columns are interleaved into rows with one NumPy copy."""
        cell = self.cell
        converted = []
        for name, column in zip(gathered.names, gathered.columns):
            try:
                converted.append(cell.encode_values(column, origin, language).values)
            except DataError as error:  # the same words, naming the column
                raise DataError(str(error).replace(f"feature `{self.name}`: ", f"feature `{self.name}`, column "
                                                   f"`{name}`: ", 1), problem=error.problem) from None
        rows = len(gathered)
        counts = np.full(rows, len(converted), dtype=np.int64)
        if self.dtype_info.kind == "bytes":
            flat: Any = [value for row in zip(*converted) for value in row]
        else:
            flat = np.stack(converted, axis=1).reshape(-1) if converted else np.zeros(0)
        return Values(self.dtype_info.kind, flat, counts)

    def encode_steps(self, values: Sequence[Any], origin: Origin, language: Language = "python") -> Values:
        """A batch of sequences (each a list of per-step values; None is an empty sequence)."""
        if isinstance(values, ArrowCells) and values.cells_kind == "json":
            fast = self._json_steps_at_once(values)
            if fast is not None:
                return fast
            values = values.cells()
        flat, lengths = self._per_row(values, origin, lambda value: rows.steps(value, language))
        records = np.repeat(np.arange(len(lengths)), lengths)
        positions = np.arange(len(records)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        encoded = self.encode_values(flat, StepOrigins(origin, records.tolist(), positions.tolist()), language)
        encoded.steps = lengths
        return encoded

    def _per_row(self, values: Sequence[Any], origin: Origin,
                 items: Callable[[Any], list[Any]]) -> tuple[list[Any], np.ndarray]:
        """Each row's `items` laid end to end, and their counts; a BadRow as the row's error."""
        flat: list[Any] = []
        counts = np.zeros(len(values), dtype=np.int64)
        for row, value in enumerate(values):
            try:
                found = items(value)
            except BadRow as error:
                raise self.fail(origin, row, str(error)) from None
            flat.extend(found)
            counts[row] = len(found)
        return flat, counts

    def encode_values(self, values: Sequence[Any], origin: Origin, language: Language = "python") -> Values:
        """Converts a batch of raw values to flat storage values with per-row counts."""
        if isinstance(values, ArrowCells):  # an Arrow column (features/cells.py)
            fast = self._cells_at_once(values)
            if fast is not None:
                return fast
            values = values.cells()
        if not self.shape:
            flat = self._fill_missing(values, origin)
            counts = np.ones(len(values), dtype=np.int64)
        else:
            shaped = self.rows
            fast = shaped.at_once(values)
            if fast is not None:
                flat, counts = fast
            else:
                flat, counts = self._per_row(values, origin, lambda value: shaped.items(value, language))
            if self.default is not None and np.ndim(self.default) == 0 and any(item is None for item in flat):
                # a null inside a list (an object without one of its attributes) is a missing value too
                flat = [self.default if item is None else item for item in flat]
        try:
            converted = self.convert(flat)
        except Invalid as invalid:
            row, element = locate(invalid, counts)
            at = f"element {element}: " if self.shape else ""
            raise self.fail(origin, row, at + invalid.text(language)) from None
        return Values(self.dtype_info.kind, converted, counts)

    def convert(self, flat: Sequence[Any]) -> np.ndarray | list[bytes]:
        """Converts flattened raw values to storage values; raises Invalid naming a bad one."""
        if self.format is not None or times.holds_times(flat, self.default if np.ndim(self.default) == 0 else None):
            flat = times.converted(flat, self.dtype, self.format, self.time_unit)
        return self.dtype_info.convert(flat, self.allow_nan)

    def _cells_at_once(self, cells: Any) -> Values | None:
        """A column of CSV cells or JSON values held by Arrow (features/cells.py), converted
        at once; None when any needs the careful path, which then converts them all (or says what
        is wrong)."""
        dtype = self.dtype_info
        if dtype.name == "bool" or self.format is not None:
            return None  # (text with a format is read as dates and times, value by value)
        counts = np.ones(len(cells), dtype=np.int64)
        if dtype.kind == "bytes":
            flat = cells.strings() if not self.shape else None
            return None if flat is None else Values("bytes", flat, counts)  # Arrow checked the UTF-8
        if not self.shape:
            return self._converted(cells.scalars(dtype.kind), counts)
        lists = cells.lists(dtype.kind, 1, self.is_variable and self.default is None)
        if lists is None:
            return None
        flat, (counts,) = lists
        wrong = counts % self.inner_size if self.is_variable else counts != self.inner_size
        return None if wrong.any() else self._converted(flat, counts)

    def _json_steps_at_once(self, column: Any) -> Values | None:
        """A column of JSON sequences parsed by Arrow: steps of scalars, or of [k] / [null] lists."""
        dtype = self.dtype_info
        if dtype.name == "bool" or dtype.kind == "bytes" or len(self.shape) > 1:
            return None
        lists = column.lists(dtype.kind, 1 + len(self.shape))
        if lists is None:
            return None
        flat, lengths = lists
        counts = lengths[1] if self.shape else np.ones(len(flat), dtype=np.int64)
        if self.shape and not self.is_variable and (counts != self.shape[0]).any():
            return None
        values = self._converted(flat, counts)
        if values is not None:
            values.steps = lengths[0]
        return values

    def _converted(self, flat: np.ndarray | None, counts: np.ndarray) -> Values | None:
        if flat is None:
            return None
        try:
            return Values(self.dtype_info.kind, self.convert(flat), counts)
        except Invalid:
            return None  # out of range, NaN...: the careful path names the value as it was given

    def _fill_missing(self, values: Sequence[Any], origin: Origin) -> Sequence[Any]:
        if isinstance(values, np.ndarray) and values.dtype != object:
            return values
        if None not in values:
            return values
        if self.default is None:
            row = list(values).index(None)
            raise self.fail(origin, row, "missing value (the spec gives no `default`)")
        return [self.default if value is None else value for value in values]

    def check_stored(self, stored: dict[str, tuple[str, list[Any]]]) -> str | None:
        if self.record_key not in stored:
            return f"key {self.record_key!r} is missing"
        kind, values = stored[self.record_key]
        dtype = self.dtype_info
        if kind != dtype.kind and values:
            return f"expected a {dtype.kind} list, found a {kind} list"
        count, inner = len(values), self.inner_size
        if not self.is_variable and count != inner:
            return f"expected {inner} values (shape {format_shape(self.shape)}), found {count}"
        if self.is_variable and count % inner:
            return f"expected a multiple of {inner} values (shape {format_shape(self.shape)}), found {count}"
        if dtype.low is not None and values and not all(dtype.low <= value <= dtype.high for value in values):
            return f"a value is out of range for {self.dtype}"
        return None

    def stored_kinds(self) -> dict[str, ListKind]:
        """The list kind each of the feature's record keys is stored in (what `verify` reads as columns)."""
        return {self.record_key: self.dtype_info.kind}

    def check_columns(self, columns: dict[str, StoredColumn]) -> np.ndarray:
        """`check_stored` on whole columns (codec/columns.py): per row (a record, or a step of a
        sequence feature), whether check_stored finds something wrong there. It never misses
        one; `verify` then asks check_stored for the words."""
        column = columns[self.record_key]
        dtype = self.dtype_info
        if column.kind != dtype.kind:  # (verify's columns hold the declared kind only)
            return np.ones(len(column.counts), dtype=bool)
        inner = self.inner_size
        wrong = column.counts % inner != 0 if self.is_variable else column.counts != inner
        if dtype.low is not None and len(column.values):
            wrong |= column.rows_where((column.values < dtype.low) | (column.values > dtype.high))
        return wrong

    # ---- reading side -----------------------------------------------------------------------------
    def parsing(self) -> dict[str, ParseSpec]:
        if is_pattern(self.columns):
            raise SpecError(f"feature `{self.name}`: `columns: {self.columns!r}` is a pattern, matched against the "
                            "source's header when the source is read (build, validate, generate); its shape isn't "
                            "known before")
        storage = self.dtype_info.storage_tf
        if self.sequence:  # a per-step shape is fixed, or [null] (check_sequence)
            return {self.record_key: ("ragged" if self.is_variable else "fixed_steps", storage, list(self.shape))}
        if not self.is_variable:
            return {self.record_key: ("fixed", storage, list(self.shape))}
        return {self.record_key: ("var" if len(self.shape) == 1 else "ragged", storage, list(self.shape))}

    def decoding(self, options: Any = None) -> list[DecodeStep]:
        steps: list[DecodeStep] = []
        pad = self._pad_storage if self.sequence else None
        if isinstance(pad, float) and not math.isfinite(pad):
            pad = repr(pad)  # "nan", "inf", "-inf": no literal spells them (reading.pad_value)
        if self.sequence and self.is_variable:
            steps.append(("to_padded", {"pad": pad}))
        elif self.sequence and self._pads_specially:
            steps.append(("pad_steps", {"length": {"lengths": self.record_key}, "pad": pad}))
        elif self.is_variable and len(self.shape) == 1:
            steps.append(("to_ragged", {}))
        if self.dtype == "float64":
            steps.append(("exact_float64", {}))
        elif self.dtype_info.is_cast:
            steps.append(("cast", {"dtype": self.dtype_info.tf}))
        return steps

    def describe(self) -> str:
        if self.sequence:
            return f"{self.dtype} {format_shape([None, *self.shape])} (steps, padded)"
        kind = " (ragged)" if self.is_variable else ""
        return f"{self.dtype} {format_shape(self.shape)}{kind}"


register("tensor")(TensorFeature)


@dataclass
class StepOrigins:
    """Names step k of a record for error messages: `tagging.jsonl, line 3, step 7`."""

    origin: Origin
    records: list[int]
    positions: list[int]

    def __call__(self, index: int) -> str:
        return f"{self.origin(self.records[index])}, step {self.positions[index]}"


def check_shape(shape: list[int | None], at: At) -> None:
    """A shape's dimensions are positive, and only the first may be variable (null)."""
    for index, dim in enumerate(shape):
        if dim is None and index > 0:
            raise (at / index).error("only the first dimension may be variable (null); expected an integer here")
        if dim is not None and dim < 1:
            raise (at / index).error(f"expected a positive dimension, received {dim}")
