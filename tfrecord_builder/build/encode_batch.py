"""Encodes a builder's batch into serialised `tf.train.Example`s or `SequenceExample`s.

The feature types turn raw values into storage values; the codec (`codec/example.py`,
`codec/sequence_example.py`) turns those into bytes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..builders.base import Batch, no_column
from ..codec.bytecolumn import ByteColumn
from ..codec.example import examples, features_entries
from ..codec.sequence_example import sequence_examples
from ..errors import DataError
from ..features import Feature, grouped, objects
from ..features.cells import ArrowCells, missing_rows
from ..features.context import EncodeContext
from ..features.gathered import GatheredColumns, missing_cells
from ..features.notices import Notices, added
from ..features.values import Values


@dataclass
class BatchRecords:
    """A batch's serialised records and the storage values they were made from (for statistics)."""

    records: ByteColumn
    values: dict[str, dict[str, Values]]  # feature name -> record key -> values
    missing: dict[str, np.ndarray]  # feature name -> per record, whether the source had no value
    # the batch's row each record comes from, where a feature fans rows out (an audio recording cut
    # into windows: Feature.fan_out); None: one record a row
    rows: np.ndarray | None = None
    # what encoding these records noted (features/notices.py), by text: their counts
    notices: dict[str, int] = field(default_factory=dict)


def encode_batch(features: Mapping[str, Feature], batch: Batch, equal_lengths: bool = True,
                 framed: bool = False) -> BatchRecords:
    """Serialised records of every record in `batch`; raises DataError naming a bad value.

    Examples, or SequenceExamples when some features are per step (then, with `equal_lengths`,
    a record's sequence features must have the same number of steps). With `framed`, each record
    comes framed as a TFRecord. What encoding notes comes back with them (`BatchRecords.notices`).
    """
    context = _context(batch)
    values, missing = {}, {}
    for name, feature in features.items():
        column = _column(feature, batch)
        missing[name] = _missing(feature, column)
        values[name] = _encoded(feature, column, batch, context)
    return _records(features, values, missing, batch, equal_lengths, framed, context)


def _context(batch: Batch, notices: Notices | None = None) -> EncodeContext:
    """What the features are told of `batch` as they encode it; what they note goes to `notices`
    (a collector of its own where none is given: a trial's notes are dropped with it)."""
    return EncodeContext(batch.origin, batch.base_dir, batch.language, Notices() if notices is None else notices,
                         batch.image_sizes)


def encode_good_rows(features: Mapping[str, Feature], batch: Batch, equal_lengths: bool = True,
                     framed: bool = False) -> tuple[list[int], BatchRecords | None, dict[int, str]]:
    """The rows of `batch` that encode, their records (None if none do), and each other row's
    error as encoding it alone gives it (`on_error: skip`).

    Feature by feature over the whole batch, as `encode_batch`: where a feature's column fails,
    its bad rows are searched for in that column alone (`_failing`), dropped from the batch, and
    the features before it keep their values for the rows left; so a bad row costs about an
    encoding of one column from that row on, not a batch's (once per row, that was 140 times
    the build for 7 bad rows in 50,000). Where that doesn't account for the failure (a row that
    fails only beside others, sequence features of unequal lengths), whole rows are halved until
    the bad ones are alone (`_encodable`), and the good ones encoded once. Only the encodings of
    the records returned count their notices, each once; the tries' are dropped.
    """
    found = _good_rows_by_column(features, batch, equal_lengths, framed)
    if found is not None:
        return found
    reasons: dict[int, str] = {}
    half = len(batch) // 2
    good = _encodable(features, batch, list(range(half)), equal_lengths, reasons) + \
        _encodable(features, batch, list(range(half, len(batch))), equal_lengths, reasons)
    # (the tries' notices went with them: the good rows are encoded again here)
    return good, encode_batch(features, batch.select(good), equal_lengths, framed=framed) if good else None, reasons


def _good_rows_by_column(features: Mapping[str, Feature], batch: Batch, equal_lengths: bool, framed: bool
                         ) -> tuple[list[int], BatchRecords | None, dict[int, str]] | None:
    """`encode_good_rows` column by column; None where that doesn't account for the failure."""
    rows = list(range(len(batch)))  # the rows kept, as rows of `batch`
    part = batch
    values: dict[str, dict[str, Values]] = {}
    missing: dict[str, np.ndarray] = {}
    reasons: dict[int, str] = {}
    noted = Notices()  # what the columns kept noted (a failed column's, and its trials', are dropped)
    try:
        for name, feature in features.items():
            column = _column(feature, part)
            context = _context(part)
            try:
                encoded = _encoded(feature, column, part, context)
            except DataError:
                bad = _failing(feature, part, list(range(len(part))))
                if not bad:
                    return None
                reasons.update((rows[index], reason) for index, reason in bad.items())
                kept = [index for index in range(len(part)) if index not in bad]
                rows = [rows[index] for index in kept]
                if not rows:
                    return [], None, reasons
                part = batch.select(rows)
                values = {other: {key: item.taken(kept) for key, item in by_key.items()}
                          for other, by_key in values.items()}
                missing = {other: flags[kept] for other, flags in missing.items()}
                column = _column(feature, part)
                context = _context(part)  # its rows encoded again: what they note from here
                encoded = _encoded(feature, column, part, context)
            added(noted.counts, context.notices.counts)
            missing[name] = _missing(feature, column)
            values[name] = encoded
        return rows, _records(features, values, missing, part, equal_lengths, framed, _context(part, noted)), reasons
    except DataError:
        return None


def _encodable(features: Mapping[str, Feature], batch: Batch, rows: list[int], equal_lengths: bool,
               reasons: dict[int, str]) -> list[int]:
    """The `rows` of `batch` that encode, in order, halving a group that fails until its bad rows
    are alone; each bad row's error (encoded alone) goes into `reasons`."""
    if not rows:
        return []
    try:
        encode_batch(features, batch.select(rows), equal_lengths)
        return rows
    except DataError as error:
        if len(rows) == 1:
            reasons[rows[0]] = str(error)
            return []
    half = len(rows) // 2
    return _encodable(features, batch, rows[:half], equal_lengths, reasons) + \
        _encodable(features, batch, rows[half:], equal_lengths, reasons)


def _failing(feature: Feature, batch: Batch, rows: list[int]) -> dict[int, str]:
    """The `rows` of `batch` whose values of `feature` don't encode, with the error each gives
    alone.

    A part of the rows that fails names its bad row (the row its error names, `_NamedRow`): that
    row is tried alone, and the rows before and after it are tried on, so each bad row costs
    about one encoding of the part after it. Where the named row encodes alone, or it is so near
    the start that the rest hardly shrinks (bad rows one after another), the part is halved
    instead, which bounds the work to about rows·log2(rows).
    """
    found: dict[int, str] = {}
    parts = [rows]
    while parts:
        part = parts.pop()
        if not part:
            continue
        error, named = _trial(feature, batch, part)
        if error is None:
            continue
        if len(part) == 1:
            found[part[0]] = error
            continue
        if named is not None and 0 <= named < len(part):
            alone, _ = _trial(feature, batch, [part[named]])
            if alone is not None:
                found[part[named]] = alone
                before, after = part[:named], part[named + 1:]
                if named >= len(part) // 8:
                    parts += [before, after]
                else:
                    parts += [before, after[: len(after) // 2], after[len(after) // 2:]]
                continue
        half = len(part) // 2
        parts += [part[:half], part[half:]]
    return found


def _trial(feature: Feature, batch: Batch, rows: list[int]) -> tuple[str | None, int | None]:
    """Encodes `feature` for the `rows` of `batch` alone: its error (None: they encode) and the
    position in `rows` of the row the error names (None if it names none)."""
    part = batch.select(rows, feature.source_names + feature.linked_columns)
    part.origin = named = _NamedRow(part.origin)
    try:
        _encoded(feature, _column(feature, part), part, _context(part))
        return None, None
    except DataError as error:
        return str(error), named.last


class _NamedRow:
    """A batch's origins, remembering the last row named: a feature names the row of a bad value
    as it raises its error, so that is the row the error is about."""

    def __init__(self, origin: Callable[[int], str]) -> None:
        self.origin, self.last = origin, None

    def __call__(self, row: int) -> str:
        self.last = row
        return self.origin(row)


def _records(features: Mapping[str, Feature], values: dict[str, dict[str, Values]], missing: dict[str, np.ndarray],
             batch: Batch, equal_lengths: bool, framed: bool, context: EncodeContext) -> BatchRecords:
    """The batch's records from its features' values (`context`: the batch's, which counted their
    notices)."""
    values = objects.dropped_whole(features, values, batch.origin)
    values, missing, rows = _fanned_out(features, values, missing, context)
    if rows is not None:
        batch = batch.without_columns().select(rows.tolist())  # origins by record, for the length check
    records = _serialised(features, values, batch, equal_lengths, framed)
    return BatchRecords(records, values, missing, rows, context.notices.counts)


def _fanned_out(features: Mapping[str, Feature], values: dict[str, dict[str, Values]],
                missing: dict[str, np.ndarray], context: EncodeContext) -> tuple[dict, dict, np.ndarray | None]:
    """The values and missing flags by record where a feature makes several records of a row (at
    most one does: the spec checks), and each record's source row; else as they are, and None."""
    for name, feature in features.items():
        fanned = feature.fan_out(values[name], context) if feature.fans_out else None
        if fanned is None:
            continue
        own, rows = fanned
        values = {other: own if other == name else {key: item.repeated(rows) for key, item in by_key.items()}
                  for other, by_key in values.items()}
        return values, {other: flags[rows] for other, flags in missing.items()}, rows
    return values, missing, None


def _serialised(features: Mapping[str, Feature], values: dict[str, dict[str, Values]], batch: Batch,
                equal_lengths: bool, framed: bool) -> ByteColumn:
    """The serialised records (Examples, or SequenceExamples when some features are per step)."""
    if not any(feature.sequence for feature in features.values()):
        by_key = {key: item for encoded in values.values() for key, item in encoded.items()}
        return examples(features_entries(by_key), framed)
    # a per-step feature's keys without steps (a video's duration) are its record's context
    context = {key: item for name, encoded in values.items() for key, item in encoded.items()
               if not features[name].sequence or item.steps is None}
    sequence = {key: item for name, encoded in values.items() if features[name].sequence
                for key, item in encoded.items() if item.steps is not None}
    if equal_lengths:
        _check_lengths(features, values, batch)
    return sequence_examples(context, sequence, framed)


def _column(feature: Feature, batch: Batch) -> Sequence[Any]:
    """The batch's column that `feature` reads (as the source holds it; a `columns:` feature's
    columns gathered; a constant's value for each row)."""
    constant = feature.constant_values(len(batch))
    if constant is not None:
        return constant
    if feature.columns is not None or feature.linked_columns:
        return _gathered(feature, batch)
    column = batch.columns.get(feature.source_name)
    return _absent(feature, batch) if column is None else column


def _missing(feature: Feature, column: Sequence[Any]) -> np.ndarray:
    """Per row, whether the source had no value (rows × columns for a `columns:` feature)."""
    if not isinstance(column, GatheredColumns):
        return missing_rows(column)
    if feature.columns is None:  # its own column beside a linked one (an image, read for its size)
        return missing_rows(column.columns[0])
    return missing_cells(column, missing_rows)


def _encoded(feature: Feature, column: Sequence[Any], batch: Batch, context: EncodeContext) -> dict[str, Values]:
    """`feature`'s values of `column` (as `_column` took it from `batch`)."""
    in_groups = _in_groups(feature, column, batch)
    if in_groups is not None:  # rows grouped into one Example: a value per row (features/grouped.py)
        return grouped.encode(feature, column, context, in_groups)
    if isinstance(column, ArrowCells) and not feature.reads_text_cells:
        column = column.cells()
    return feature.encode(column, context)


def _in_groups(feature: Feature, column: Sequence[Any], batch: Batch) -> list[bool] | None:
    """Where the batch's columns that `feature` reads hold groups of rows (`Batch.grouped`): for
    each column of `column`, whether it does (the feature's own do; a linked one, such as a
    bbox's image, may not). None where its own column doesn't: a value a record."""
    own = feature.source_names
    if not batch.grouped or not own or own[0] not in batch.grouped:
        return None
    names = column.names if isinstance(column, GatheredColumns) else own[:1]
    return [name in batch.grouped for name in names]


def _check_lengths(features: Mapping[str, Feature], values: dict[str, dict[str, Values]], batch: Batch) -> None:
    """A record's sequence features have equal numbers of steps."""
    names = [name for name, feature in features.items() if feature.sequence]
    first = next(iter(values[names[0]].values())).steps
    for name in names[1:]:
        steps = next(iter(values[name].values())).steps
        if not np.array_equal(steps, first):
            row = int(np.flatnonzero(steps != first)[0])
            raise DataError(f"{batch.origin(row)}: sequence features `{names[0]}` and `{name}` have "
                            f"{first[row]} and {steps[row]} steps; expected equal lengths "
                            "(or set `sequence_lengths: free` in the spec)")


def _gathered(feature: Feature, batch: Batch) -> GatheredColumns:
    """A `columns:` feature's columns of the batch, in its order (the spec's list, or the one its
    pattern matched): a column the source lacks is refused or all missing, as for one column."""
    names = feature.source_names + feature.linked_columns
    columns = []
    for column_name in names:
        column = batch.columns.get(column_name)
        if column is None:
            column = _absent(feature, batch, column_name)
        if isinstance(column, ArrowCells) and not feature.reads_text_cells:
            column = column.cells()
        columns.append(column)
    return GatheredColumns(names, columns)


def _absent(feature: Feature, batch: Batch, column: str | None = None) -> list[None]:
    """A column the source lacks: an error where the source has a header (a CSV, a Parquet file:
    most likely a misspelt name, which a default would hide); elsewhere (JSON records, which may
    leave a field out) all missing values, fine with a default or a variable length."""
    if batch.available is not None or not feature.fills_absent:
        raise no_column(batch.source or batch.origin(0), f"feature `{feature.name}`", column or feature.source_name,
                        batch.available)
    return [None] * len(batch)
