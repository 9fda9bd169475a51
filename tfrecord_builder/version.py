"""The tool's version, recorded in dataset_info.json and in generated modules."""

__version__ = "0.2.0"  # 0.2: a keyless Parquet row's key is its values' bytes (its split may change)
