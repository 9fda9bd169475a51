"""A built dataset's split as a `torch.utils.data.Dataset`, for PyTorch's DataLoader.

Needs torch, which tfrecord_builder doesn't depend on: this module is imported only by
`Dataset.torch`. Records are `Dataset.record`s, dicts of NumPy values. The DataLoader's default
collate stacks them where every record's value has one shape; the dataset's own `collate` (give
it as `collate_fn`) also takes what differs from record to record, as `input_fn` batches it:
images (and masks) of their own sizes zero-padded at the bottom and right to the batch's largest,
with the boxes that belong to them as fractions of the padded images; any other value whose shape
differs (a variable-length list, a record's boxes) a list of tensors, one a record.
"""
from __future__ import annotations

from typing import Any, Iterator, Sequence

import numpy as np

try:
    import torch
    import torch.utils.data as torch_data
except ImportError:
    raise ImportError("Dataset.torch needs PyTorch: pip install torch (tfrecord_builder does not depend on it)") \
        from None


class Collate:
    """`collate_fn` for a DataLoader of a dataset's records: a batch as `input_fn` gives it
    (read/tfdata.py), in tensors. Built from the dataset's reading description: which features
    are images padded to the batch's largest (`padded_images`), and which boxes follow them
    (`padded_boxes`, naming their image's shape key)."""

    def __init__(self, reading: dict[str, Any]):
        features = reading["features"]
        self.padded = {name for name, feature in features.items()
                       if not feature["sequence"] and any(step == "padded_images" for step, _ in feature["decode"])}
        shape_keys = {key: name for name in self.padded for key in features[name]["parse"]}  # an image's own keys
        self.boxes_of = {name: shape_keys[arguments["shapes"]["parsed"]]
                         for name, feature in features.items() for step, arguments in feature["decode"]
                         if step == "padded_boxes"}

    def __call__(self, records: Sequence[dict[str, Any]]) -> dict[str, Any]:
        sizes = {name: np.array([record[name].shape[:2] for record in records], np.float32) for name in self.padded}
        batch: dict[str, Any] = {}
        for name in records[0]:
            values = [record[name] for record in records]
            if name in self.padded:
                batch[name] = torch.from_numpy(_padded(values))
            elif name in self.boxes_of:  # fractions of each image, as fractions of the padded ones (padded_boxes)
                own = sizes[self.boxes_of[name]]
                scale = np.tile(own / np.maximum(own.max(axis=0), np.float32(1.0)), 2)
                batch[name] = [torch.from_numpy(np.ascontiguousarray(boxes * factor)) for boxes, factor in zip(values, scale)]
            else:
                batch[name] = _stacked(values)
        return batch


def _padded(images: list[np.ndarray]) -> np.ndarray:
    """Images [height, width, channels] of their own sizes, zero-padded at the bottom and right."""
    height = max(image.shape[0] for image in images)
    width = max(image.shape[1] for image in images)
    out = np.zeros((len(images), height, width, images[0].shape[2]), images[0].dtype)
    for place, image in enumerate(images):
        out[place, : image.shape[0], : image.shape[1]] = image
    return out


def _stacked(values: list[Any]) -> Any:
    """Values of one shape stacked into a tensor; text (bytes) as a list; values whose shapes
    differ as a list of tensors (a list of arrays where they hold text)."""
    first = values[0]
    if isinstance(first, (bytes, str)):
        return list(values)
    arrays = [np.asarray(value) for value in values]
    if arrays[0].dtype == object or arrays[0].dtype.kind in "SU":
        return arrays
    if all(array.shape == arrays[0].shape for array in arrays):
        return torch.from_numpy(np.stack(arrays))
    return [torch.from_numpy(_writable(array)) for array in arrays]


def _writable(array: np.ndarray) -> np.ndarray:
    """`array`, or a copy where it is read-only (a view of a block read: torch wants to own it)."""
    return array if array.flags.writeable and array.flags.c_contiguous else np.array(array)


class IndexedRecords(torch_data.Dataset):
    """Map-style: record i of the split, through the shards' index files. A DataLoader with
    several workers and a sampler (shuffle=True, or a DistributedSampler) reads each record once
    per epoch."""

    def __init__(self, dataset: Any, split: str):
        self.dataset = dataset
        self.split = split
        self._length = dataset.num_examples(split)
        self.collate = Collate(dataset.reading)  # the DataLoader's collate_fn for records of their own sizes

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: int) -> dict[str, Any]:
        return self.dataset.record(self.split, index)


class ShardedRecords(torch_data.IterableDataset):
    """Iterable: the split's records in order, each DataLoader worker reading its own shards (for
    compressed shards, which have no index files): every record once per epoch."""

    def __init__(self, dataset: Any, split: str):
        self.dataset = dataset
        self.split = split
        self.collate = Collate(dataset.reading)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        worker = torch_data.get_worker_info()
        reader = self.dataset._reader
        shards = reader.split(self.split).shards
        mine = range(len(shards)) if worker is None else range(worker.id, len(shards), worker.num_workers)
        for number in mine:
            yield from reader.shard_records(shards[number])


def torch_dataset(dataset: Any, split: str) -> torch_data.Dataset:
    """The split as a map-style Dataset where every shard has an index file, else an iterable one."""
    shards = dataset._reader.split(split).shards
    if all(shard.get("index") for shard in shards):
        return IndexedRecords(dataset, split)
    return ShardedRecords(dataset, split)
