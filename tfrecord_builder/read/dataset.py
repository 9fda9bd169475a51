"""The library's reading path: `load`, `input_fn` and `read` from a built dataset's info, no
generated code.

Reading is described once, by the spec (`Spec.reading()`): read/tfdata.py's functions follow
that description in TensorFlow (the generated module carries a copy of them and the description
as a literal; this module calls the same functions), and read/records.py follows it with NumPy, for
`read` and `Dataset.record`, which never import TensorFlow.
"""
from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Iterator

from .._tf import tensorflow
from ..errors import DatasetError, UsageError
from .. import fs
from ..codec.tfrecord import open_records, read_records
from ..features import Feature
from .records import RecordReader
from ..write.info import DatasetInfo, dataset_folder, info_from_json, read_info


def _reading() -> Any:
    """The reading functions the generated module copies (importing them imports TensorFlow,
    which `tensorflow()` does first, holding back its native start-up lines)."""
    tensorflow()
    from . import tfdata as reading  # here, not at the top: it imports TensorFlow

    return reading


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
        """The split's shard paths, each checked to have the size the metadata lists (a URL's
        through TensorFlow's filesystems, which input_fn reads it with)."""
        if fs.is_url(self.path):
            with _library_errors():
                return _reading().shard_files(self.path, self._shards(split))
        return [self._reader.checked_path(shard) for shard in self._shards(split)]

    def index_files(self, split: str) -> list[str | None]:
        """The paths of the split's index files, one per shard in `files(split)`'s order (None for
        a shard without one: compressed shards have none): what DALI's `index_path` and the
        tfrecord package's `index_path` take."""
        return [fs.join(self.path, shard["index"]["file"]) if shard.get("index") else None
                for shard in self._shards(split)]

    def _shards(self, split: str) -> list[dict[str, Any]]:
        return self._reader.split(split).shards

    @cached_property
    def _reader(self) -> RecordReader:
        return RecordReader(self.info)

    def read(self, split: str = "train", decode_text: bool = False) -> Iterator[dict[str, Any]]:
        """The split's records in the order written, each a dict of NumPy values, decoded as
        `input_fn` decodes them (without TensorFlow): what `input_fn(split, batch_size=1,
        shuffle=False)` yields for each, without the batch dimension. `decode_text=True` adds each
        text feature's text back, `NAME_text`, by its tokenizer (special tokens left out).

        >>> record = next(load("build/wine/1.0.0").read("test"))
        >>> record["cultivar"], record["alcohol"].dtype
        (np.int64(1), dtype('float32'))
        """
        records = self._reader.records(split)
        return self._with_texts(records) if decode_text else records

    def _with_texts(self, records: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        texts = {name: feature for name, feature in self.features.items() if feature.holds_text}
        if not texts:
            raise UsageError(f"{self.path}: decode_text: the dataset has no text feature")
        for record in records:
            for name, feature in texts.items():
                record[f"{name}_text"] = feature.text_of(record[name])
            yield record

    def record(self, split: str, index: int) -> dict[str, Any]:
        """Record `index` of the split (in `read`'s order), read through its shard's index file.

        >>> load("build/wine/1.0.0").record("test", 30)["cultivar"]
        np.int64(2)
        """
        return self._reader.record(split, index)

    def num_examples(self, split: str) -> int:
        return self._reader.split(split).num_examples

    def torch(self, split: str = "train") -> Any:
        """The split as a `torch.utils.data.Dataset` of `record`s: map-style, record i read through
        the index files (a DataLoader with several workers and `shuffle=True` reads each record
        once per epoch); a dataset without index files (compressed shards) gives an
        IterableDataset whose workers read different shards. Its `collate` is the DataLoader's
        `collate_fn` for records of their own sizes, batched as `input_fn` batches them (images
        padded to the batch's largest, their boxes following; other variable values as lists):
        `DataLoader(data, batch_size=8, collate_fn=data.collate)`. Needs torch, which
        tfrecord_builder does not depend on."""
        from .torch_dataset import torch_dataset  # imports torch: only when asked for
        return torch_dataset(self, split)

    def report(self, output: str | os.PathLike | None = None, png: str | os.PathLike | None = None,
               sample: int | None = 10_000, progress: Any = None) -> Any:  # 10_000: report.DEFAULT_SAMPLE
        """The dataset's HTML report (`tfrecord-builder report`): statistics, histograms, class
        balance, images per class, shards and spec, from up to `sample` records per split (None:
        all). Shown inline in a Jupyter notebook; written to `output` if given, each figure to
        `png/` as a PNG file if given. Needs matplotlib (the `report` extra).

        >>> load("build/wine/1.0.0").report("wine-report.html")
        <Report at wine-report.html: ... characters, 14 figures>
        """
        from .report import render  # matplotlib and the page: only when asked for
        rendered = render(self.info, png=png, sample=sample, progress=progress)
        if output is not None:
            rendered.save(output)
        return rendered

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
                                            self.reading, split, batch_size, shuffle, repeat,
                                            self.info.statistics.get(split, {}),
                                            sum(shard["num_bytes"] for shard in shards))


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
    folder = dataset_folder(url)
    if url.startswith(("gs://", "gcs://")) and os.environ.get("STORAGE_EMULATOR_HOST"):
        # TensorFlow's gs:// filesystem ignores the variable and would ask Google's servers
        raise UsageError(f"{url}: TensorFlow {tf.__version__}'s gs:// filesystem doesn't honour "
                         f"STORAGE_EMULATOR_HOST (it asks storage.googleapis.com), so it can't read an emulator's "
                         "bucket; tb.read, `tfrecord-builder inspect` and `verify` read it through gcsfs")
    try:
        with _library_errors():  # the generated module's own reading of it
            return info_from_json(_reading().info_text(folder), folder)
    except tf.errors.UnimplementedError:
        raise UsageError(unreadable_scheme(url)) from None
    except tf.errors.OpError as error:  # refused credentials, an endpoint that doesn't answer
        raise DatasetError(f"{folder}: its metadata can't be read: {error.message.splitlines()[0]}") from None


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


def read(path: str | os.PathLike, split: str = "train", decode_text: bool = False) -> Iterator[dict[str, Any]]:
    """The records of a built dataset's split as dicts of NumPy values, without TensorFlow
    (`Dataset.read`; `decode_text=True`: each text feature's text back too, as `NAME_text`); the
    dataset may be in any store fsspec reaches.

    >>> [record["cultivar"] for record in read("build/wine/1.0.0", "test")][:3]
    [np.int64(1), np.int64(0), np.int64(1)]
    """
    return Dataset(read_info(os.fspath(path))).read(split, decode_text)


def input_fn(path: str | os.PathLike, split: str = "train", batch_size: int | None = None,
             shuffle: bool | None = None, repeat: bool = False) -> Any:
    """The input pipeline of the built dataset at `path`; the same batches as its generated module.

    >>> train, test = input_fn("build/wine/1.0.0", "train"), input_fn("build/wine/1.0.0", "test")
    >>> # model.fit(train, validation_data=test, epochs=10)
    """
    return load(path).input_fn(split, batch_size=batch_size, shuffle=shuffle, repeat=repeat)
