"""The tool's version, recorded in dataset_info.json and in generated modules."""

__version__ = "0.1.0"
