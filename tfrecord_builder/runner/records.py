"""Encodes a builder's batch into serialised `tf.train.Example`s or `SequenceExample`s.

The feature types turn raw values into storage values; the codec (`codec/example.py`,
`codec/sequence_example.py`) turns those into bytes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from ..builders.base import Batch, no_column
from ..codec.bytecolumn import ByteColumn
from ..codec.example import examples, features_entries
from ..codec.sequence_example import sequence_examples
from ..errors import DataError
from ..features import Feature
from ..features.cells import ArrowCells, missing_rows
from ..features.gathered import GatheredColumns, missing_cells
from ..features.values import Values


@dataclass
class BatchRecords:
    """A batch's serialised records and the storage values they were made from (for statistics)."""

    records: ByteColumn
    values: dict[str, dict[str, Values]]  # feature name -> record key -> values
    missing: dict[str, np.ndarray]  # feature name -> per row, whether the source had no value


def encode_batch(features: Mapping[str, Feature], batch: Batch, equal_lengths: bool = True,
                 framed: bool = False) -> BatchRecords:
    """Serialised records of every record in `batch`; raises DataError naming a bad value.

    Examples, or SequenceExamples when some features are per step (then, with `equal_lengths`,
    a record's sequence features must have the same number of steps). With `framed`, each record
    comes framed as a TFRecord.
    """
    values, missing = {}, {}
    for name, feature in features.items():
        if feature.columns is not None:
            column = _gathered(feature, batch)
            missing[name] = missing_cells(column, missing_rows)  # rows × columns
        else:
            column = batch.columns.get(feature.source_name)
            if column is None:
                column = _absent(feature, batch)
            missing[name] = missing_rows(column)
        if isinstance(column, ArrowCells) and not feature.reads_text_cells:
            column = column.cells()
        values[name] = feature.encode(column, batch.origin, batch.base_dir, batch.language)
    if not any(feature.sequence for feature in features.values()):
        by_key = {key: item for encoded in values.values() for key, item in encoded.items()}
        return BatchRecords(examples(features_entries(by_key), framed), values, missing)
    context = {key: item for name, encoded in values.items() if not features[name].sequence
               for key, item in encoded.items()}
    sequence = {key: item for name, encoded in values.items() if features[name].sequence
                for key, item in encoded.items()}
    if equal_lengths:
        _check_lengths(features, values, batch)
    return BatchRecords(sequence_examples(context, sequence, framed), values, missing)


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
    names = feature.source_names
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
