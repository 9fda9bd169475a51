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
from . import fs
from .codec.tfrecord import open_records, read_records
from .features import Feature
from .write.info import DatasetInfo, info_from_json, read_info
from .write.naming import INFO_FILE



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
        feature = self.info.spec.length_source
        assert feature is not None  # only SequenceExample datasets ask
        return feature

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
            path = fs.join(self.path, shard["file"])
            # a missing or cut shard fails here, by name, not as an anonymous error mid-epoch
            _check_size(path, _size(path), shard["num_bytes"])
            paths.append(path)
        return paths

    def first(self, split: str, count: int) -> Any:
        """The split's first `count` examples, in the order written, as one batch (like
        `input_fn(split, count, shuffle=False)`'s first), or None if it has none. The records are
        read through the package's own reader, so from any store fsspec reaches."""
        if split not in self.info.splits:
            raise UsageError(f"unknown split {split!r}; expected one of: {', '.join(self.info.splits)}")
        records: list[bytes] = []
        for shard in self.info.splits[split].shards:
            path = fs.join(self.path, shard["file"])
            _check_size(path, fs.size(path) if fs.exists(path) else None, shard["num_bytes"])
            try:
                with open_records(path, self.info.spec.output.compression) as stream:
                    for record in read_records(stream, shard["file"]):
                        records.append(record)
                        if len(records) == count:
                            break
            except DatasetError:
                raise DatasetError(f"{path}: a record that cannot be read (corrupt or cut); "
                                   "`tfrecord-builder verify` lists every fault") from None
            if len(records) == count:
                break
        if not records:
            return None
        features = self.parse_batch(tensorflow().constant(records))
        label = self.info.spec.label
        return (features, features.pop(label)) if label is not None else features

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
        dataset = _reading().batched_records(files, counts, spec.output.reader_compression,
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
    path = os.fspath(path)
    return Dataset(_tensorflow_info(path) if fs.is_url(path) else read_info(path))


def _tensorflow_info(url: str) -> DatasetInfo:
    """A dataset's info read through TensorFlow's filesystems, which its shards are read with
    (gs:// is built in; s3:// is not, in TensorFlow 2.21)."""
    tf = tensorflow()
    folder = fs.dirname(url) if fs.basename(url) == INFO_FILE else url.rstrip("/")
    info_path = fs.join(folder, INFO_FILE)
    try:
        if not tf.io.gfile.exists(info_path):  # in an object store, what a build writes last: the commit
            raise DatasetError(f"{folder}: not a finished dataset (no {INFO_FILE}); build it, or finish it "
                               "with --resume")
        with tf.io.gfile.GFile(info_path, "rb") as file:
            return info_from_json(file.read(), folder)
    except tf.errors.UnimplementedError:
        raise UsageError(unreadable_scheme(url)) from None
    except tf.errors.OpError as error:  # refused credentials, an endpoint that doesn't answer
        raise DatasetError(f"{info_path}: can't be read: {error.message.splitlines()[0]}") from None


def unreadable_scheme(url: str) -> str:
    """Why TensorFlow can't read `url`, and the ways around it."""
    tf = tensorflow()
    scheme = url.split("://", 1)[0]
    return (f"{url}: TensorFlow {tf.__version__} has no filesystem for {scheme}:// (it reads local paths and gs://); "
            f"copy the dataset to one of those, mount the bucket as a folder, or load a TensorFlow filesystem plugin "
            f"for {scheme}:// first "
            "(`tfrecord-builder inspect` and `verify` read it as it is)")


def _check_size(path: str, size: int | None, expected: int) -> None:
    if size != expected:
        found = "missing" if size is None else f"{size} bytes"
        raise DatasetError(f"{path}: shard is {found}, expected {expected} bytes (run `tfrecord-builder verify`)")


def _size(path: str) -> int | None:
    """A shard's size, through TensorFlow's filesystems for a URL (None: missing)."""
    if not fs.is_url(path):
        return os.path.getsize(path) if os.path.exists(path) else None
    tf = tensorflow()
    try:
        return tf.io.gfile.stat(path).length
    except tf.errors.NotFoundError:
        return None


def input_fn(path: str | os.PathLike, split: str = "train", batch_size: int | None = None,
             shuffle: bool | None = None, repeat: bool = False) -> Any:
    """The input pipeline of the built dataset at `path`; the same batches as its generated module.

    >>> train, test = input_fn("build/wine/1.0.0", "train"), input_fn("build/wine/1.0.0", "test")
    >>> # model.fit(train, validation_data=test, epochs=10)
    """
    return load(path).input_fn(split, batch_size=batch_size, shuffle=shuffle, repeat=repeat)
