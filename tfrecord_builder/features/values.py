"""`Values`: what a feature type hands to the record encoder for a batch of rows."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

ListKind = Literal["int64", "float", "bytes"]


@dataclass
class Values:
    """One record key's values for a batch of rows, flattened in row order.

    `kind` is the `tf.train.Feature` list it is stored in; `values` is an int64 or float32 array
    (or a list of bytes for "bytes"); row i holds `counts[i]` of them. For a sequence feature
    the rows are steps, and record r has `steps[r]` of them.
    """

    kind: ListKind
    values: np.ndarray | list[bytes]
    counts: np.ndarray  # int64, one per row (per step, for a sequence)
    steps: np.ndarray | None = None  # int64, one per record: its number of steps (sequences only)

    @property
    def num_rows(self) -> int:
        """Records (for a sequence: steps)."""
        return len(self.counts)
