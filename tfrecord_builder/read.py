"""The library's reading path: `input_fn` and `load` from a built dataset's info, no generated code.

It builds the same pipeline as the generated module (a test holds the two together), from the
feature types' parse specs and decoders.
"""
from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import Any

from ._tf import tensorflow
from .errors import DatasetError, UsageError
from .fs import url_problem
from .codegen.render import length_source
from .features import Feature
from .write.info import DatasetInfo, read_info

_COMPRESSION = {"none": None, "gzip": "GZIP", "zlib": "ZLIB"}


def _reading() -> Any:
    """The reading helpers the generated module copies (importing them imports TensorFlow)."""
    return importlib.import_module(f"{__package__}.features.reading")


@dataclass
class Dataset:
    """A built dataset opened for reading: its info, features and input pipeline.

    >>> dataset = load("build/wine/1.0.0")
    >>> batch, label = next(iter(dataset.input_fn("train", batch_size=8)))
    """

    info: DatasetInfo

    @property
    def path(self) -> str:
        return self.info.path

    @property
    def features(self) -> dict[str, Feature]:
        return self.info.spec.features

    def parse_specs(self, sequence: bool = False) -> dict[str, Any]:
        """The `tf.io` parse specs by record key: the generated module's FEATURES (or, for a
        SequenceExample dataset, its CONTEXT_FEATURES, or with `sequence` its SEQUENCE_FEATURES)."""
        return {key: spec for feature in self.features.values() if feature.sequence == sequence
                for key, spec in feature.parse_specs().items()}

    def parse_batch(self, serialized: Any) -> dict[str, Any]:
        """Parses and decodes a batch of serialised records at once."""
        tf = tensorflow()
        options = self.info.spec.input
        if not self.info.spec.is_sequence:
            parsed = tf.io.parse_example(serialized, self.parse_specs())
            return {name: feature.decode(parsed, options) for name, feature in self.features.items()}
        context, sequence, lengths = tf.io.parse_sequence_example(
            serialized, context_features=self.parse_specs() or None, sequence_features=self.parse_specs(True))
        length = self._lengths(sequence, lengths)
        features = {name: feature.decode(sequence if feature.sequence else context, options, lengths)
                    for name, feature in self.features.items()}
        names = [name for name, feature in self.features.items() if feature.sequence]
        if options.max_length is not None:
            for name in names:
                features[name] = features[name][:, :options.max_length]
            length = tf.minimum(length, options.max_length)
        if options.length_feature is not None:
            features[options.length_feature] = length
        if options.mask_feature is not None:
            features[options.mask_feature] = tf.sequence_mask(length)  # as wide as the padded length feature
        return features

    def _length_feature(self) -> Feature:
        return length_source([feature for feature in self.features.values() if feature.sequence],
                             self.info.spec.label)

    def _lengths(self, sequence: dict[str, Any], lengths: dict[str, Any]) -> Any:
        feature = self._length_feature()
        if feature.is_variable:
            return sequence[feature.record_key].row_lengths()
        return lengths[feature.record_key]

    def _record_length(self, serialized: Any) -> Any:
        tf = tensorflow()
        feature = self._length_feature()
        _, sequence, lengths = tf.io.parse_sequence_example(
            serialized[tf.newaxis], sequence_features=feature.parse_specs())
        return tf.cast(self._lengths(sequence, lengths)[0], tf.int32)  # bucketing wants int32

    def files(self, split: str) -> list[str]:
        if split not in self.info.splits:
            raise UsageError(f"unknown split {split!r}; expected one of: {', '.join(self.info.splits)}")
        paths = []
        for shard in self.info.splits[split].shards:
            path = os.path.join(self.path, shard["file"])
            # a missing or cut shard fails here, by name, not as an anonymous error mid-epoch
            size = os.path.getsize(path) if os.path.exists(path) else None
            if size != shard["num_bytes"]:
                found = "missing" if size is None else f"{size} bytes"
                raise DatasetError(f"{path}: shard is {found}, expected {shard['num_bytes']} bytes "
                                   "(run `tfrecord-builder verify`)")
            paths.append(path)
        return paths

    def input_fn(self, split: str = "train", batch_size: int | None = None, shuffle: bool | None = None,
                 repeat: bool = False) -> Any:
        """A `tf.data.Dataset` of batches, exactly as the generated module's `input_fn` gives them."""
        tf = tensorflow()
        spec = self.info.spec
        try:  # the generated module's own check, said as a UsageError
            batch_size = _reading().positive_batch_size(spec.input.batch_size if batch_size is None else batch_size)
        except ValueError as error:
            raise UsageError(str(error)) from None
        shuffle = split == "train" if shuffle is None else shuffle
        files = self.files(split)
        counts = [shard["num_examples"] for shard in self.info.splits[split].shards]
        boundaries = spec.input.bucket_boundaries if spec.is_sequence else None
        bucketing = None
        if boundaries is not None:
            bucketing = (tf.autograph.experimental.do_not_convert(self._record_length), boundaries)
        dataset = _reading().batched_records(files, counts, _COMPRESSION[spec.output.compression],
                                             batch_size, shuffle, spec.input.shuffle_buffer, repeat, bucketing)
        # parse_batch is plain graph code: autograph has nothing to convert in it
        parse = tf.autograph.experimental.do_not_convert(self.parse_batch)
        dataset = dataset.map(parse, num_parallel_calls=tf.data.AUTOTUNE)
        label = spec.label
        if label is not None:
            dataset = dataset.map(tf.autograph.experimental.do_not_convert(lambda features: (features, features.pop(label))))
        return dataset.prefetch(tf.data.AUTOTUNE)


def load(path: str | os.PathLike) -> Dataset:
    """Opens a built dataset folder (`DIR/NAME/VERSION`).

    >>> dataset = load("build/wine/1.0.0")
    >>> dataset.info.splits["test"].num_examples
    31
    """
    problem = url_problem(os.fspath(path))  # reading from object stores: not yet
    if problem:
        raise UsageError(problem)
    return Dataset(read_info(os.fspath(path)))


def input_fn(path: str | os.PathLike, split: str = "train", batch_size: int | None = None,
             shuffle: bool | None = None, repeat: bool = False) -> Any:
    """The input pipeline of the built dataset at `path`; the same batches as its generated module.

    >>> model.fit(input_fn("build/wine/1.0.0", "train"), validation_data=input_fn("build/wine/1.0.0", "test"))
    """
    return load(path).input_fn(split, batch_size=batch_size, shuffle=shuffle, repeat=repeat)
