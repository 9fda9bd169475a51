"""A built dataset's split as a `torch.utils.data.Dataset`, for PyTorch's DataLoader.

Needs torch, which tfrecord_builder doesn't depend on: this module is imported only by
`Dataset.torch`. Records are `Dataset.record`s, dicts of NumPy values, which the DataLoader's
default collate stacks into tensors (features of a fixed shape; give a `collate_fn` for
variable-length ones, whose arrays differ in length).
"""
from __future__ import annotations

from typing import Any, Iterator

try:
    import torch.utils.data as torch_data
except ImportError:
    raise ImportError("Dataset.torch needs PyTorch: pip install torch (tfrecord_builder does not depend on it)") \
        from None


class IndexedRecords(torch_data.Dataset):
    """Map-style: record i of the split, through the shards' index files. A DataLoader with
    several workers and a sampler (shuffle=True, or a DistributedSampler) reads each record once
    per epoch."""

    def __init__(self, dataset: Any, split: str):
        self.dataset = dataset
        self.split = split
        self._length = dataset.num_examples(split)

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
