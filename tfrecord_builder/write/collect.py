"""Gathers a split's encoded records and puts them in their final order.

With shuffling on, records are ordered by their keys' hashes: a seeded permutation that doesn't
depend on the order rows were read in. With shuffling off they keep the source's order.
"""
from __future__ import annotations

import numpy as np

from ..codec.bytecolumn import ByteColumn, concat


class SplitRecords:
    """One split's records as they arrive, batch by batch."""

    def __init__(self) -> None:
        self._hashes: list[np.ndarray] = []
        self._records: list[ByteColumn] = []
        self.num_examples = 0
        self.num_bytes = 0

    def add(self, hashes: np.ndarray, records: ByteColumn) -> None:
        if not records.num_rows:
            return
        self._hashes.append(hashes)
        self._records.append(records)
        self.num_examples += records.num_rows
        self.num_bytes += int(records.offsets[-1] - records.offsets[0])

    def ordered(self, shuffle: bool) -> ByteColumn:
        """Every record, in the order they are written."""
        if not self._records:
            return ByteColumn(np.zeros(0, np.uint8), np.zeros(1, np.int64))
        records = concat(self._records)
        if not shuffle:
            return records
        hashes = np.concatenate(self._hashes)
        # lexsort's last key is the primary one; the record bytes break exact ties deterministically
        order = np.lexsort((hashes[:, 1], hashes[:, 0]))
        return records.take(order)
