"""Imported by TensorFlow Datasets, never by tfrecord_builder: the feature that the features.json of
a dataset TFDS can't read (SequenceExample records, compressed shards) named in datasets built by
earlier 0.3 versions, which refuses with the reason in one line instead of giving examples whose
sequence features are empty.

TFDS imports the module a features.json names and looks the class up by its full name; this one
raises the reason write/tfds.py recorded. Without tfrecord_builder installed TFDS could only say it
can't import this module, so datasets are now refused through dataset_info.json's `isBlocked`
instead (write/tfds.py), which TFDS raises itself; this class stays for the datasets already built.
"""
from __future__ import annotations

from typing import Any

try:
    from tensorflow_datasets.core.features.feature import FeatureConnector
except ImportError:  # imported without TFDS: nothing to define
    FeatureConnector = None

if FeatureConnector is not None:

    class Unreadable(FeatureConnector):  # registered by its module and name when defined
        """A dataset TensorFlow Datasets can't read."""

        @classmethod
        def from_json_content(cls, value: Any, doc: Any = None) -> "Unreadable":
            raise ValueError(value["reason"])

        def get_tensor_info(self) -> Any:
            raise NotImplementedError

        def encode_example(self, example_data: Any) -> Any:
            raise NotImplementedError
