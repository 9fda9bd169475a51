"""Serialised `tf.train.Example`s as plain Python values: the one wire decoder's arrays
(codec/arrays.py) as lists, for `inspect` (what keys and list kinds a file holds) and for checking
records against a spec (`verify`, `Feature.check_stored`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DatasetError
from .arrays import kind_of, parse_arrays, refused

Stored = dict[str, tuple[str, list[Any]]]  # key -> (list kind, values); an empty Feature's kind is arrays.NO_KIND


def parse_record(data: bytes, where: str = "") -> tuple[Stored, dict[str, list[tuple[str, list[Any]]]] | None]:
    """An Example's features, or a SequenceExample's context and its feature lists (each a list of
    steps); the feature lists are None for an Example (the two share field 1). A malformed record
    raises DatasetError, prefixed with `where` (the shard and record) if given."""
    try:
        features, lists = parse_arrays(data)
    except ValueError as error:
        if where:
            raise refused(where, error) from None
        raise DatasetError(f"not a valid tf.train.Example or SequenceExample: {error}") from None
    stored = {key: _stored(values) for key, values in features.items()}
    if lists is None:
        return stored, None
    return stored, {key: [_stored(step) for step in steps] for key, steps in lists.items()}


def _stored(values: np.ndarray) -> tuple[str, list[Any]]:
    return kind_of(values), values.tolist()
