"""Writing a dataset: key hashing and splits, ordering, shards, statistics and dataset_info.json."""
