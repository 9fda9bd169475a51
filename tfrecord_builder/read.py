"""The library's reading path: `input_fn` and `load` from a built dataset's info, no generated code.

Reading is implemented once, in features/reading.py: the generated module carries a copy of its
functions and the spec's reading description as a literal; this module calls the same
functions with the same description (`Spec.reading()`).
"""
from __future__ import annotations

import contextlib
import importlib
import os
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Iterator

from ._tf import tensorflow
from .errors import DatasetError, UsageError
from . import fs
from .codec.tfrecord import open_records, read_records
from .features import Feature
from .write.info import DatasetInfo, info_from_json, read_info
from .write.naming import INFO_FILE


def _reading() -> Any:
    """The reading functions the generated module copies (importing them imports TensorFlow,
    which `tensorflow()` does first, holding back its native start-up lines)."""
    tensorflow()
    return importlib.import_module(f"{__package__}.features.reading")


@contextlib.contextmanager
def _library_errors() -> Iterator[None]:
    """The reading functions' ValueError and OSError (what the generated module raises) as the
    library's UsageError and DatasetError, with the same words."""
    try:
        yield
    except (UsageError, DatasetError):
        raise
    except ValueError as error:
        raise UsageError(str(error)) from None
    except OSError as error:
        raise DatasetError(str(error)) from None


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

    @cached_property
    def reading(self) -> dict[str, Any]:
        """How the dataset is read, as literals: the generated module's READING."""
        return self.info.spec.reading()

    def parse_specs(self, sequence: bool = False) -> dict[str, Any]:
        """The `tf.io` parse specs by record key: the generated module's FEATURES (or, for a
        SequenceExample dataset, its CONTEXT_FEATURES, or with `sequence` its SEQUENCE_FEATURES)."""
        return _reading().parse_specs(self.reading, sequence)

    def parse_batch(self, serialized: Any) -> dict[str, Any]:
        """Parses and decodes a batch of serialised records at once (the module's parse_batch)."""
        return _reading().parse_records(serialized, self.reading)

    def files(self, split: str) -> list[str]:
        """The split's shard paths, each checked to have the size dataset_info.json lists."""
        with _library_errors():
            return _reading().shard_files(self.path, self._shards(split))

    def _shards(self, split: str) -> list[dict[str, Any]]:
        with _library_errors():
            return self.info.splits[_reading().known_split(split, list(self.info.splits))].shards

    def first(self, split: str, count: int) -> Any:
        """The split's first `count` examples, in the order written, as one batch (like
        `input_fn(split, count, shuffle=False)`'s first), or None if it has none. The records are
        read through the package's own reader, so from any store fsspec reaches."""
        records: list[bytes] = []
        for shard in self._shards(split):
            with _library_errors():  # checked as input_fn checks, through fsspec
                path, = _reading().shard_files(self.path, [shard], _fs_size)
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
        shards = self._shards(split)
        with _library_errors():
            return _reading().input_batches(self.files(split), [shard["num_examples"] for shard in shards],
                                            self.reading, split, batch_size, shuffle, repeat)


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
    try:
        with _library_errors():  # the generated module's own reading of it
            return info_from_json(_reading().info_text(folder), folder)
    except tf.errors.UnimplementedError:
        raise UsageError(unreadable_scheme(url)) from None
    except tf.errors.OpError as error:  # refused credentials, an endpoint that doesn't answer
        raise DatasetError(f"{fs.join(folder, INFO_FILE)}: can't be read: {error.message.splitlines()[0]}") from None


def unreadable_scheme(url: str) -> str:
    """Why TensorFlow can't read `url`, and the ways around it."""
    tf = tensorflow()
    scheme = url.split("://", 1)[0]
    return (f"{url}: TensorFlow {tf.__version__} has no filesystem for {scheme}:// (it reads local paths and gs://); "
            f"copy the dataset to one of those, mount the bucket as a folder, or load a TensorFlow filesystem plugin "
            f"for {scheme}:// first "
            "(`tfrecord-builder inspect` and `verify` read it as it is)")


def _fs_size(path: str) -> int | None:
    """A shard's size through fsspec (None: missing), for reading beside TensorFlow."""
    return fs.size(path) if fs.exists(path) else None


def input_fn(path: str | os.PathLike, split: str = "train", batch_size: int | None = None,
             shuffle: bool | None = None, repeat: bool = False) -> Any:
    """The input pipeline of the built dataset at `path`; the same batches as its generated module.

    >>> train, test = input_fn("build/wine/1.0.0", "train"), input_fn("build/wine/1.0.0", "test")
    >>> # model.fit(train, validation_data=test, epochs=10)
    """
    return load(path).input_fn(split, batch_size=batch_size, shuffle=shuffle, repeat=repeat)
