"""Encodes a batch of raw records into serialised `tf.train.Example`s.

The feature types turn raw values into storage values; `example.py` turns those into bytes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ..builders.base import Batch
from ..errors import DataError
from ..features import Feature
from ..features.values import Values
from .bytecolumn import ByteColumn
from .example import examples, features_entries


@dataclass
class EncodedBatch:
    """A batch's records and the storage values they were made from (for statistics)."""

    records: ByteColumn
    values: dict[str, dict[str, Values]]  # feature name -> record key -> values


def encode_batch(features: Mapping[str, Feature], batch: Batch) -> EncodedBatch:
    """Serialised Examples of every record in `batch`; raises DataError naming a bad value."""
    values = {}
    for name, feature in features.items():
        column = batch.columns.get(feature.source_name)
        if column is None:
            column = _absent(feature, batch)
        values[name] = feature.encode(column, batch.origin)
    by_key = {key: item for encoded in values.values() for key, item in encoded.items()}
    return EncodedBatch(examples(features_entries(by_key)), values)


def _absent(feature: Feature, batch: Batch) -> list[None]:
    """A column the source lacks is all missing values: fine with a default, else an error."""
    if getattr(feature, "default", None) is None and not getattr(feature, "is_variable", False):
        columns = f"; its columns: {', '.join(batch.available)}" if batch.available is not None else ""
        raise DataError(f"{batch.source or batch.origin(0)}: feature `{feature.name}`: "
                        f"no column `{feature.source_name}` in the source{columns}")
    return [None] * len(batch)
