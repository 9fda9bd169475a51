"""Arrays from a NumPy `.npz` file: one record per index of the arrays' first dimension.

Every array in the file must have the same length; a record holds each array's row under the
array's name, so arrays of any rank become features of that rank minus one:

    source: {builder: "builders.npz_arrays:NpzArrays", path: ../data/digits.npz}
    features:
      images: {dtype: uint8, shape: [8, 8]}    # images.shape == (N, 8, 8)
      target: {type: class_label, num_classes: 10}

Keys are the row indices, so fraction splits and shuffling are stable as long as the file is.
`options: {splits: {train: train_, test: test_}}` reads per-split arrays by name prefix instead
(`train_images`, `test_images`, ...).
"""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np

import tfrecord_builder as tb


class NpzArrays(tb.Builder):
    """Records from the rows of the arrays in an `.npz` file."""

    def generate(self, split: str | None) -> Iterator[tuple[int, dict[str, Any]]]:
        arrays = self._arrays(split)
        lengths = {name: len(array) for name, array in arrays.items()}
        if len(set(lengths.values())) > 1:
            raise tb.DataError(f"{self.path}: the arrays differ in length: "
                               + ", ".join(f"{name} {length}" for name, length in lengths.items()))
        for index in range(next(iter(lengths.values()), 0)):
            yield index, {name: array[index] for name, array in arrays.items()}

    def splits(self) -> list[str] | None:
        prefixes = self.options.get("splits")
        return list(prefixes) if prefixes else None

    def num_records(self, split: str | None) -> int | None:
        arrays = self._arrays(split)
        return len(next(iter(arrays.values()))) if arrays else 0

    def _arrays(self, split: str | None) -> dict[str, np.ndarray]:
        try:
            with np.load(self.path, allow_pickle=False) as data:  # no pickles: an .npz can't run code
                arrays = {name: data[name] for name in data.files}
        except (OSError, ValueError) as error:
            raise tb.DataError(f"{self.path}: not a readable .npz file ({error})") from None
        prefix = (self.options.get("splits") or {}).get(split) if split else None
        if prefix:
            arrays = {name[len(prefix):]: array for name, array in arrays.items() if name.startswith(prefix)}
        return arrays
