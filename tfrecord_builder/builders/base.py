"""`Builder`: the base class of every source, built-in or custom, and `Batch`, what it produces.

A builder yields `(key, record)` pairs from `generate(split)`: a unique, deterministic key and
a dict of raw values by source name. The runner asks for `batches(split)` instead, so built-in
tabular builders can hand over whole columns at once; the default groups `generate`'s records.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterable, Iterator, Mapping, Sequence

import numpy as np

from .. import fs
from ..errors import DataError, TFRecordBuilderError
from ..features.cells import ArrowCells
from ..features.notices import Notices
from ..features.shown import Language, shown


@dataclass
class Batch:
    """Records of one source, column-wise.

    `columns` maps a source name to one raw value per record (None where missing); `keys` are
    the records' keys (bytes or str); `origin(i)` names record i for error messages. When
    `content_keys` is true the keys are the records' raw content (rows of a table), so equal
    keys are equal rows, not an error.
    """

    keys: Sequence[Any]
    columns: Mapping[str, Sequence[Any]]
    origin: Callable[[int], str]
    content_keys: bool = False
    source: str = ""  # the file (or builder) the rows come from, for messages
    available: Sequence[str] | None = None  # every column the source has, when it has a header
    base_dir: str | None = None  # where relative file paths in the columns point from
    # rows the reader couldn't read (under `on_error: skip`), each {"record": where, "reason": why}
    broken: list[dict[str, str]] = field(default_factory=list)
    # how the source writes values: "text" (CSV cells), "json" (JSON, Parquet) or "python" (a
    # custom builder). Messages name values that way; a string may hold a list ("1 2 3", "[1, 2]")
    # except in JSON and Parquet, which give lists as lists
    language: Language = "python"
    # the columns whose values are groups of rows, a `features.grouped.GroupRows` a record (rows
    # grouped into one Example: `source.group_by`), which the features taking every row's value read
    grouped: frozenset[str] = frozenset()
    # the upright (height, width) of image files the source measured from their headers while
    # reading its records, by the path its column gives: what a feature of boxes or keypoints
    # would measure again (an annotation set's images, each checked against its annotations)
    image_sizes: Mapping[str, tuple[int, int]] | None = None

    def __len__(self) -> int:
        return len(self.keys)

    def without_columns(self) -> "Batch":
        """The batch's keys and origins only (what is still needed once it is encoded)."""
        return Batch(keys=self.keys, columns={}, origin=self.origin, content_keys=self.content_keys,
                     source=self.source, available=self.available, base_dir=self.base_dir,
                     language=self.language)

    def select(self, rows: Sequence[int], columns: Iterable[str] | None = None) -> "Batch":
        """The batch's records at `rows` only (for isolating bad records); with `columns`, only
        those of its columns (that it has)."""
        names = self.columns if columns is None else [name for name in columns if name in self.columns]
        return Batch(
            keys=[self.keys[row] for row in rows],
            columns={name: _taken(self.columns[name], rows) for name in names},
            origin=SelectedOrigins(self.origin, list(rows)),
            content_keys=self.content_keys,
            source=self.source,
            available=self.available,
            base_dir=self.base_dir,
            language=self.language,
            grouped=self.grouped & set(names),
        )


# Rows of an Arrow column that are selected as Python values rather than as an Arrow array: Arrow
# converts many values at once, but costs about 0.1 ms a call, more than Python takes for a few
_FEW_ROWS = 64


def _taken(values: Sequence[Any], rows: Sequence[int]) -> Sequence[Any]:
    """A column's values at `rows`; an Arrow column stays one (unless they are few), so that it
    still converts at once."""
    if isinstance(values, ArrowCells) and len(rows) > _FEW_ROWS:
        return values.taken(rows)
    return [values[row] for row in rows]


def joined_batches(batches: Sequence[Batch]) -> Batch | None:
    """The batches' records one after another, as one batch whose columns are of the kinds theirs
    are (an Arrow column stays one, so its values convert as they would have); None where they
    can't be joined so: a column Arrow in one batch and not in another, or of another Arrow type,
    or batches of other sources or kinds."""
    first = batches[0]
    if len(batches) == 1:
        return first
    same = (first.content_keys, first.source, first.base_dir, first.language, first.grouped)
    if any((batch.content_keys, batch.source, batch.base_dir, batch.language, batch.grouped) != same
           or batch.image_sizes is not None or set(batch.columns) != set(first.columns) for batch in batches):
        return None
    columns: dict[str, Sequence[Any]] = {}
    for name in first.columns:
        column = _joined_column([batch.columns[name] for batch in batches])
        if column is None:
            return None
        columns[name] = column
    starts = np.cumsum([0] + [len(batch) for batch in batches[:-1]]).tolist()
    return Batch(keys=[key for batch in batches for key in batch.keys], columns=columns,
                 origin=JoinedOrigins([batch.origin for batch in batches], starts), content_keys=first.content_keys,
                 source=first.source, available=first.available, base_dir=first.base_dir, language=first.language,
                 grouped=first.grouped)


def _joined_column(parts: list[Any]) -> Any:
    if all(isinstance(part, ArrowCells) for part in parts):
        import pyarrow as pa

        kind = type(parts[0])
        arrays = [part.array.combine_chunks() if isinstance(part.array, pa.ChunkedArray) else part.array
                  for part in parts]
        if any(type(part) is not kind for part in parts) or len({array.type for array in arrays}) > 1:
            return None
        return kind(pa.concat_arrays(arrays))
    if all(isinstance(part, list) for part in parts):
        return [value for part in parts for value in part]
    return None


class PendingBatch:
    """A batch not parsed yet: its raw rows, parsed by `load()` where the batch is encoded (in a
    worker process), so the process that cuts the source into batches only cuts.

    Its length is known up front; `load(notices)` gives the Batch the source's plain reader
    would, or raises that reader's DataError; what reading the rows notes (an annotation format's
    images without objects) goes to `notices`, the collector of the batch's encoding.
    """

    count: int  # rows (set by each kind)
    name: str  # the file, for messages
    line: int  # the line of the first row
    base_dir: str | None = None

    def __len__(self) -> int:
        return self.count

    def load(self, notices: Notices) -> Batch:
        raise NotImplementedError

    def only_batch(self, batches: Iterable[Batch]) -> Batch:
        """The one batch a plain reader made of these lines: they are whole rows, so it holds
        every one of them (anything else is a bug of the fast reader, said as such)."""
        batches = list(batches)
        if len(batches) != 1 or len(batches[0]) + len(batches[0].broken) != self.count:
            raise DataError(f"{self.name}, line {self.line}: {self.count} lines read as "
                            f"{sum(map(len, batches))} records (internal error: please report it)")
        return batches[0]


def check_split(origin: str, column: str, value: Any, splits: Sequence[str], language: Language) -> None:
    """A split column's value names one of the spec's splits, or a DataError says where it doesn't."""
    if value not in splits:
        raise DataError(f"{origin}: split column `{column}`: expected one of {', '.join(splits)}, "
                        f"received {shown(value, language)}")


def no_column(source: str, user: str, column: str, available: Sequence[str] | None) -> DataError:
    """The error for a column the source lacks, named for what reads it (`feature \`x\``)."""
    columns = f"; its columns: {column_list(available)}" if available is not None else ""
    unnamed = (available is not None and "" in available and column not in available)
    hint = ("; the column without a name (R's and pandas' row names) is read with `source: \"\"`"
            if unnamed else "")
    return DataError(f"{source}: {user}: no column `{column}` in the source{columns}{hint}")


def column_list(columns: Sequence[str]) -> str:
    """Column names for a message: a column without a name shows as "" (R and pandas write one)."""
    return ", ".join(name if name else '""' for name in columns)


def parsed_batch(batch: "Batch | PendingBatch", notices: Notices | None = None) -> Batch:
    """The batch, parsed if it is still pending; what parsing it notes goes to `notices` (None:
    nowhere, where the batch's records aren't the build's: a first pass, a count, a check)."""
    if isinstance(batch, PendingBatch):
        parsed = batch.load(Notices() if notices is None else notices)
        parsed.base_dir = batch.base_dir
        return parsed
    return batch


@dataclass(frozen=True)
class KeyedItems:
    """A source split's records known by key before their bytes are read (`Builder.keyed_items`):
    what lets the build order them, cut shards and hand each shard to one worker, which reads
    that shard's files and writes it once (build/runners/keyed.py).

    Attributes:
        keys: each record's key, in the source's order (the order `encoding_batches` gives them,
            task after task); a record's position here is how `Builder.keyed_batch` names it.
        sizes: int64, each record's file bytes (0 where unknown): an estimate of its size.
        batches: the batches the build's usual path encodes, in the source's order, each as
            (its task's position in `tasks(split)`, 0 without tasks; its first record; the one
            after its last): a split's statistics are merged in those groups, so they come out
            the same, float sums and all.
    """

    keys: Sequence[Any]
    sizes: np.ndarray
    batches: Sequence[tuple[int, int, int]]


class Builder:
    """Base class of a data source.

    Subclass it and implement `generate(split)`:

    >>> class Squares(Builder):
    ...     def generate(self, split):
    ...         for number in range(10):
    ...             yield number, {"x": number, "y": number * number}

    `self.path` is the source's path from the spec (resolved against the spec's folder, or None),
    `self.options` the source's `options:` mapping and `self.spec` the whole spec.
    """

    def __init__(self, spec: Any, path: str | None = None, options: dict[str, Any] | None = None):
        self.spec = spec
        self.path = path
        self.options = dict(options or {})

    # a custom builder's record may hold only the spec's fields; built-in ones offer more
    strict_fields = True
    # the `options:` keys the builder reads, each with what it is for; a spec giving another is an
    # error (None: any key, unchecked; a custom builder may set it to have its options checked)
    OPTIONS: ClassVar[dict[str, str] | None] = None
    # What a built-in builder says of its source, asked when a spec is loaded (registry.py): the
    # `source:` keys besides `path` it reads (`images`, `names_file`: a spec giving one to another
    # builder is refused, naming those that read it), whether `path` is a folder (else a file),
    # and whether the source may define class names itself (`class_names`: where it never does, a
    # class_label needs its names in the spec), and whether `path` may be a glob pattern of files
    # (`ud/*.conllu`). A custom builder takes `options:` instead.
    SOURCE_KEYS: ClassVar[frozenset[str]] = frozenset()
    READS_FOLDER: ClassVar[bool] = False
    READS_PATH: ClassVar[bool] = True  # False: the source is not a file (a database's query, an Iceberg table by name)
    READS_PATTERN: ClassVar[bool] = False
    DEFINES_CLASSES: ClassVar[bool] = True
    # whether its rows are given from Python (`tb.build(spec, source=frame)`), not read from a path
    FROM_PYTHON: ClassVar[bool] = False
    # the one runner that reads its rows where they are (a Spark table's: "spark"); None: any
    READ_BY: ClassVar[str | None] = None
    # whether the local runner's worker processes may each read whole tasks themselves (a database
    # query's range, over a connection of the worker's own), rather than the build's process reading
    # every task and handing its batches out: a builder that pickles without what it has opened
    TASKS_READ_IN_WORKERS: ClassVar[bool] = False

    @classmethod
    def check_source(cls, source: Any, at: Any) -> None:
        """Refuses, at its key (`at`: the spec's `source:`), a value of the `source:` keys it reads
        (SOURCE_KEYS) that it can't take; called when the spec is loaded, before the builder is made."""

    @classmethod
    def option_problem(cls, key: str, value: Any) -> str | None:
        """What is wrong with an option's value (None: nothing), said before the builder is made."""
        return None

    def generate(self, split: str | None) -> Iterator[tuple[Any, dict[str, Any]]]:
        """Yields `(key, record)` for `split` (None when the spec splits by fractions)."""
        raise NotImplementedError(f"{type(self).__name__} must implement generate(split)")

    def class_names(self, field: str) -> list[str] | None:
        """The class names the source itself defines for `field`, if any, in index order (e.g. its
        sub-folders, a Parquet column's categories)."""
        return None

    def fields(self) -> list[str] | None:
        """The fields its records offer, where the builder knows them before reading the rows (an
        annotation format's: image, bbox, label, ...); None where it doesn't. A spec reading
        another field is refused (`validate`, `build`) naming these: never built as empty lists."""
        return None

    def splits(self) -> list[str] | None:
        """The splits this source provides, if it knows them; a spec naming another is an error."""
        return None

    def place(self) -> str:
        """How messages name the source: its file's name (the builder's class without a path)."""
        return fs.basename(self.path) if self.path else type(self).__name__

    def header(self) -> list[str] | None:
        """The source's column names, where it has a header (a CSV, a Parquet file), read without
        the rows; None otherwise."""
        return None

    def column_names(self) -> list[str] | None:
        """The columns a `columns:` pattern is matched against, in the source's order: the header
        (the default), or what else the source can say without reading its rows; None if nothing."""
        return self.header()

    def tasks(self, split: str | None) -> Sequence[Any] | None:
        """Optional: the parts of `split` that can be read on their own, in order, for builds that
        run in parallel (`--runner beam` reads each part on a worker of its own).

        Each part is a small value that pickles (a file name, a range of ids), never the data;
        `generate_task(split, part)` yields its records. Keys must be unique across all parts, as
        across `generate(split)`. The default, None, reads the whole split with `generate(split)`
        as one part.
        """
        return None

    def generate_task(self, split: str | None, task: Any) -> Iterator[tuple[Any, dict[str, Any]]]:
        """Yields `(key, record)` for one part of `split`, as `tasks(split)` listed it."""
        raise NotImplementedError(f"{type(self).__name__}.tasks() lists parts: it must implement "
                                  "generate_task(split, task)")

    def snapshot(self) -> dict[str, Any] | None:
        """What data the source read: a table's version, a query result's fingerprint; recorded in
        the dataset's metadata; None: files.

        The build asks once per builder, on the driver, before reading. The snapshot is part of
        the build's fingerprint: `--resume` of a build whose source now gives another is refused.
        """
        return None

    def num_records(self, split: str | None) -> int | None:
        """How many records `generate(split)` yields, if cheap to know: the build shows progress in %."""
        return None

    def batches(self, split: str | None, needed: Sequence[str], batch_size: int, task: Any = None) -> Iterator[Batch]:
        """Groups `generate(split)` (or `generate_task(split, task)`) into batches of the `needed`
        source names."""
        allowed = set(needed)
        name = type(self).__name__
        keys: list[Any] = []
        records: list[dict[str, Any]] = []
        if task is None:
            generated, call = self.generate(split), f"{name}.generate({split!r})"
        else:
            generated, call = self.generate_task(split, task), f"{name}.generate_task({split!r}, {task!r})"
        for key, record in _pairs(generated, call):
            if not _stable(key):
                raise DataError(f"{name}, key {key!r}: expected a key of str, bytes or numbers (or a tuple of them), "
                                f"received {type(key).__name__}: keys decide splits, so they must read the same "
                                "in every run")
            if not isinstance(record, dict):
                raise DataError(f"{name}, key {key!r}: expected a dict of values, received {type(record).__name__}")
            unknown = [field for field in record if field not in allowed] if self.strict_fields else []
            if unknown:
                raise DataError(
                    f"{name}, key {key!r}: field `{unknown[0]}` is not in the spec; "
                    f"expected only: {', '.join(sorted(allowed))}"
                )
            keys.append(key)
            records.append(record)
            if len(keys) == batch_size:
                yield self._record_batch(keys, records, needed)
                keys, records = [], []
        if keys:
            yield self._record_batch(keys, records, needed)

    def encoding_batches(self, split: str | None, needed: Sequence[str], batch_size: int,
                         task: Any = None) -> Iterator["Batch | PendingBatch"]:
        """What the build encodes of one task (None: the whole split): `batches`, or (built-in
        readers) batches left pending for the encoding workers to parse."""
        return self.batches(split, needed, batch_size, task)

    def keyed_items(self, split: str | None, batch_size: int) -> KeyedItems | None:
        """Optional: the split's records by key, known before their payloads are read (a folder's
        image files), and the batches of `batch_size` records at most that `encoding_batches`
        cuts; None (the default): the source can't say them without reading its records. A
        builder that gives them gives `keyed_batch` too. Keys that are rows' content are the
        usual path's keys as long as no two are equal; the plan leaves equal ones to it."""
        return None

    def keyed_batch(self, split: str | None, rows: Sequence[int], needed: Sequence[str]) -> "Batch | PendingBatch":
        """The records at positions `rows` of `keyed_items(split, ...).keys`, in that order, as
        one batch of the `needed` source names: what `encoding_batches` gives for them."""
        raise NotImplementedError(f"{type(self).__name__} gives keyed_items: it must implement keyed_batch")

    def origins(self, keys: list[Any]) -> Callable[[int], str]:
        """Names record i of a batch with these keys in messages (must pickle, for workers)."""
        return KeyOrigins(type(self).__name__, keys)

    def _record_batch(self, keys: list[Any], records: list[dict[str, Any]], needed: Sequence[str]) -> Batch:
        return self._column_batch(keys, {source: [record.get(source) for record in records] for source in needed})

    def _column_batch(self, keys: list[Any], columns: dict[str, list[Any]]) -> Batch:
        """A batch of this builder's records with these keys, from their columns by source name."""
        return Batch(keys=keys, columns=columns, origin=self.origins(keys), source=type(self).__name__)


@dataclass
class RowOrigins:
    """Names rows of a file for error messages: `wine.csv, line 17`."""

    file: str
    lines: list[int] = field(default_factory=list)
    unit: str = "line"

    def __call__(self, index: int) -> str:
        return f"{self.file}, {self.unit} {self.lines[index]}"


@dataclass
class KeyOrigins:
    """Names records by their builder and key: `FramesBuilder, key 'clip-7'`."""

    builder: str
    keys: list[Any]

    def __call__(self, index: int) -> str:
        return f"{self.builder}, key {self.keys[index]!r}"


@dataclass
class SelectedOrigins:
    """The origins of a selection of another batch's rows."""

    origin: Callable[[int], str]
    rows: list[int]

    def __call__(self, index: int) -> str:
        return self.origin(self.rows[index])


@dataclass
class JoinedOrigins:
    """The origins of batches joined one after another (`joined_batches`): each part's own."""

    origins: list[Callable[[int], str]]
    starts: list[int]  # each part's first record

    def __call__(self, index: int) -> str:
        part = bisect.bisect_right(self.starts, index) - 1
        return self.origins[part](index - self.starts[part])


@dataclass
class PathOrigins:
    """Names records whose keys are file paths below a folder by their full path."""

    folder: str
    keys: list[Any]

    def __call__(self, index: int) -> str:
        return fs.join(self.folder, str(self.keys[index]))


_KEY_TYPES = (str, bytes, int, float, np.integer, np.floating)


def _stable(key: Any) -> bool:
    """A key whose text is the same in every run (an object's default repr or a set's order isn't)."""
    if isinstance(key, tuple):
        return all(_stable(part) for part in key)
    return isinstance(key, _KEY_TYPES)


def _pairs(generated: Any, call: str) -> Iterator[tuple[Any, Any]]:
    """A builder's `(key, record)` pairs; a builder's own error names the call and the last key."""
    if generated is None:
        raise DataError(f"{call} returned None; expected it to yield (key, record) pairs")
    try:
        iterator = iter(generated)
    except TypeError:
        raise DataError(f"{call} returned {type(generated).__name__}; expected it to yield (key, record) pairs") from None
    last = None
    while True:
        try:
            item = next(iterator)
        except StopIteration:
            return
        except TFRecordBuilderError:
            raise
        except Exception as error:  # the builder's own code failed: say where, keep the cause for --debug
            where = f"after key {last!r}" if last is not None else "before its first record"
            raise DataError(f"{call} failed {where}: {type(error).__name__}: {error}") from error
        if not (isinstance(item, tuple) and len(item) == 2):
            where = f" (after key {last!r})" if last is not None else ""
            raise DataError(f"{call}{where}: expected (key, record) pairs, received {type(item).__name__}"
                            + (f" of {len(item)}" if isinstance(item, tuple) else ""))
        last = item[0]
        yield item
