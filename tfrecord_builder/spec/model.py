"""The spec's model: one frozen dataclass per section, validated on load.

These classes are the single description of a spec: `load.py` converts YAML into them,
`schema.py` publishes their JSON Schema, and `to_dict` writes the normalised spec into
dataset_info.json, from which the reading side rebuilds them.
"""
from __future__ import annotations

import codecs
import dataclasses
import math
import os
import re
from dataclasses import dataclass
from typing import Any, Literal

from ..registry import BUILTIN, builder_names, check_name, check_source, defines_classes, source_keys
from ..features import Feature
from ..features import gathered, grouped
from ..errors import SpecError
from ..fs import place_problem, resolve
from .reading import reading_of
from .text_reading import MaskedLMInput, check_text_reading
from .fields import At, Section, convert, describe, meta, spec_fields
from .yaml_source import Document
from .urls import without_password

_FEATURES_SCHEMA = {"type": "object", "additionalProperties": {"$ref": "#/$defs/feature"}}
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z._+-]*\Z")
SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]?i?B?)\s*\Z", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1024, "m": 1000**2, "mb": 1000**2, "mib": 1024**2,
          "g": 1000**3, "gb": 1000**3, "gib": 1024**3, "t": 1000**4, "tb": 1000**4, "tib": 1024**4}


def parse_size(value: Any, at: At) -> int:
    """`128MiB`, `1.5GB`, `4096` -> bytes."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    match = SIZE.match(value) if isinstance(value, str) else None
    unit = match.group(2).lower() if match else None
    if not match or unit not in _UNITS or float(match.group(1)) <= 0:
        raise at.error(f"expected a positive size such as 128MiB or 64MB, received {describe(value)}")
    return int(float(match.group(1)) * _UNITS[unit])


@dataclass(frozen=True, kw_only=True)
class SourceSpec(Section):
    """Where the raw data is and which builder reads it."""

    builder: str = meta(f"{' | '.join(builder_names())} | module:Class (a custom builder)")
    path: str | None = meta("the file or folder to read; relative to the spec file's folder", None)
    key: str | None = meta("a column that gives each row a stable, unique key (default: the row's content)", None)
    split_column: str | None = meta("a column naming each row's split (the spec then lists `splits: {train: {}, ...}`)",
                                    None)
    group_by: str | None = meta("rows grouped into one record: the column that names each row's group (a long "
                                "table's sequence, one row per step; or one Example's rows)", None)
    order_by: str | None = meta("the column that orders a group's rows (numbers or text): a long table's steps "
                                "(required there); an Example's rows (default: source order)", None)
    delimiter: str = meta("the CSV field delimiter", ",")
    encoding: str = meta("the text encoding of CSV and JSONL files", "utf-8")
    images: str | None = meta("coco, voc, segmentation: the folder of the images the annotations name (voc: default "
                              "beside the XML files, or their folder's `JPEGImages` sibling; segmentation: the mask "
                              "folder's `JPEGImages` or `images` sibling)", None)
    names_file: str | None = meta("yolo: the class names, classes.txt (one a line) or data.yaml (`names`); "
                                  "voc, labelme: one a line instead of the sorted names found", None)
    columns: list[str] | None = meta("conll: the names of a file's columns, in order (CoNLL-2003: required, e.g. "
                                     "[word, pos, chunk, ner]; CoNLL-U: default id, form, lemma, upos, xpos, feats, "
                                     "head, deprel, deps, misc)", None)
    format: Literal["conll2003", "conllu"] | None = meta("conll: the files' format (default: conllu for a .conllu "
                                                          "file, else conll2003)", None)
    query: str | None = meta("sql: the query whose rows are read (SQL of the connection's database; without a "
                             "connection, DuckDB's, over files named relative to the spec's folder)", None)
    table: str | None = meta("sql: a table whose rows are all read, instead of a query; iceberg: the table, "
                             "`namespace.name`, as its catalog names it; spark_table: a table of the Spark "
                             "session's catalog, `database.name`", None)
    connection: str | None = meta("sql: the database, duckdb:///path.duckdb or sqlite:///path.db (relative to the "
                                  "spec's folder; default: DuckDB in memory), or a PostgreSQL server, "
                                  "postgresql://user@host:port/db (the password from PGPASSWORD or ~/.pgpass; "
                                  "never recorded)", None)
    partition_by: str | None = meta("sql: an integer column cutting the query into ranges read as separate tasks",
                                    None)
    partitions: int | None = meta("sql: how many ranges of `partition_by` (default 8)", None)
    decimals: Literal["float", "text"] | None = meta("sql, spark_table: how DECIMAL/NUMERIC columns are read: float "
                                                     "(the nearest "
                                                     "float64) or text (their digits); default: refused", None)
    version: int | None = meta("delta: the table version to read (default: the latest, which the dataset's "
                               "metadata records)", None)
    snapshot: int | None = meta("iceberg: the snapshot ID to read (default: the current snapshot, which the "
                                "dataset's metadata records)", None)
    catalog: dict[str, str] | None = meta("iceberg: pyiceberg's catalog: `name` (default: default), `uri` (a SQL "
                                          "catalog: sqlite:///catalog.db, relative to the spec's folder), "
                                          "`warehouse` (a folder or URI); without `uri`, the catalog `name` as "
                                          "~/.pyiceberg.yaml or PYICEBERG_CATALOG__* variables define it", None)
    options: dict[str, Any] = meta("options passed to a custom builder", {})

    def check(self, at: At) -> None:
        problem = check_name(self.builder)
        if problem:
            raise (at / "builder").error(problem)
        _check_place(self.path, at / "path")
        # read by some built-in builders, each saying which (SOURCE_KEYS)
        for key in ("images", "names_file", "columns", "format", "query", "table", "connection", "partition_by",
                    "partitions", "decimals", "version", "snapshot", "catalog"):
            if getattr(self, key) is not None and key not in source_keys(self.builder):
                names = sorted(name for name in BUILTIN if key in source_keys(name))
                readers = f"the {', '.join(names[:-1])} and {names[-1]} builders" if len(names) > 1 else \
                    f"the {names[0]} builder"
                raise (at / key).error(f"`{key}` is read by {readers}, not by {self.builder}")
            if key in ("images", "names_file"):
                _check_place(getattr(self, key), at / key)
        check_source(self.builder, self, at)  # the builder's own checks of its keys' values
        try:
            codecs.lookup(self.encoding)
        except LookupError:
            raise (at / "encoding").error(f"unknown text encoding {self.encoding!r}; expected e.g. utf-8 or latin-1") from None
        if self.order_by is not None and self.group_by is None:
            raise at.error("a long table needs both `group_by` and `order_by`")
        if len(self.delimiter) != 1 or self.delimiter in '"\r\n':
            raise (at / "delimiter").error(f"expected one character other than a quote or a line break, "
                                           f"received {describe(self.delimiter)}")


@dataclass(frozen=True, kw_only=True)
class SplitSource(Section):
    """A split with a source of its own."""

    path: str | None = meta("the split's file or folder", None)
    options: dict[str, Any] = meta("options passed to a custom builder for this split", {})

    def check(self, at: At) -> None:
        _check_place(self.path, at / "path")


def convert_splits(value: Any, at: At) -> dict[str, float | SplitSource]:
    """`{train: 0.8, test: 0.2}` (fractions summing to 1) or `{train: {path: ...}, ...}`."""
    if not isinstance(value, dict) or not value:
        raise at.error(f"expected a mapping of split names to fractions or sources, received {describe(value)}")
    splits: dict[str, float | SplitSource] = {}
    for name, item in value.items():
        if not IDENTIFIER.match(name):
            raise (at / name).error("a split name must be an identifier ([A-Za-z_][A-Za-z0-9_]*)")
        if isinstance(item, dict):
            splits[name] = convert(SplitSource, item, at / name)
        elif isinstance(item, (int, float)) and not isinstance(item, bool) and 0 < item <= 1:
            splits[name] = float(item)
        else:
            raise (at / name).error(f"expected a fraction in (0, 1] or a mapping with `path`, received {describe(item)}")
    fractions = [item for item in splits.values() if isinstance(item, float)]
    if fractions and len(fractions) != len(splits):
        raise at.error("give every split a fraction, or every split a source; not a mix")
    if fractions and not math.isclose(sum(fractions), 1.0, abs_tol=1e-6):
        raise at.error(f"split fractions must sum to 1, received {sum(fractions):g}")
    return splits


def convert_features(value: Any, at: At, sequence: bool = False, allow_empty: bool = False) -> dict[str, Feature]:
    if not isinstance(value, dict):
        raise at.error(f"expected a mapping of feature names to declarations, received {describe(value)}")
    if not value and not allow_empty:
        raise at.error("expected at least one feature, e.g. `x: {dtype: float32}`; received none")
    features = {}
    for name, item in value.items():
        if not IDENTIFIER.match(name):
            raise (at / name).error(
                f"a feature name must be a Python identifier ([A-Za-z_][A-Za-z0-9_]*), received {name!r};"
                f" to read a column of that name write e.g. `{_identifier(name)}: {{source: {name}}}`"
                " (and `key:` sets another key inside the record)"
            )
        feature = convert(Feature, item, at / name)
        features[name] = dataclasses.replace(feature, name=name, sequence=sequence)
        if feature.columns is not None:
            features[name] = gathered.checked(features[name], at / name)
        if sequence:
            features[name].check_sequence(at / name)
        else:
            features[name].check_record(at / name)
    for name, feature in features.items():
        features[name] = feature.linked(features, at / name)
    keys: dict[str, str] = {}
    for name, feature in features.items():
        if feature.record_key in keys:
            raise (at / name).error(
                f"record key {feature.record_key!r} is already used by feature `{keys[feature.record_key]}`"
            )
        keys[feature.record_key] = name
    return features


@dataclass(frozen=True, kw_only=True)
class OutputSpec(Section):
    """Where and how the shards are written."""

    dir: str = meta("the output folder, relative to the spec file unless --output is given", "build")
    shards: int | None = meta("the number of shards per split", None)
    shard_size: int | str | None = meta("a target shard size instead of a count, e.g. 128MiB (with --runner beam a "
                                        "worker writes a shard a piece at a time: it needn't fit in memory)", None, convert=parse_size,
                                        schema={"anyOf": [{"type": "integer"}, {"type": "string"}]})
    compression: Literal["none", "gzip", "zlib"] = meta("the shards' compression", "none")
    naming: Literal["tfds", "suffix"] = meta(
        "the shards' names: tfds, TensorFlow Datasets' NAME-SPLIT.tfrecord-00000-of-00004; or suffix, "
        "NAME-SPLIT-00000-of-00004.tfrecord, which tools that look for *.tfrecord files find (Datumaro, the Object "
        "Detection API's scripts); every reader of ours follows either", "tfds")
    shuffle: bool = meta("shuffle each split's records (seeded) when writing", True)
    seed: int = meta("the seed of split assignment and shuffling", 42)
    module: str | None = meta("a second copy of the generated input module, e.g. beside a training script", None)
    index: bool | None = meta("an index file per shard (index/SHARD.idx: `offset length` per record, what NVIDIA DALI "
                              "and the tfrecord package read); default: for uncompressed shards", None)
    report: bool | None = meta("also write report.html into the dataset's folder: the page `tfrecord-builder report` "
                               "makes (needs matplotlib: the `report` extra)", None)

    def check(self, at: At) -> None:
        if self.index and self.compression != "none":
            raise (at / "index").error(f"index files locate records in uncompressed shards; with compression: "
                                       f"{self.compression} there are none (drop `index`, or compression: none)")
        problem = place_problem(self.dir)  # a dataset may be written to a URL (an object store)
        if problem:
            raise (at / "dir").error(problem)
        _check_place(self.module, at / "module")
        if self.shards is not None and self.shard_size is not None:
            raise at.error("give `shards` or `shard_size`, not both")
        if self.shards is not None and not 1 <= self.shards <= 99999:
            raise (at / "shards").error(f"expected a number of shards in [1, 99999], received {self.shards}")

    @property
    def target_shard_bytes(self) -> int:
        return self.shard_size if self.shard_size is not None else 128 * 1024**2

    @property
    def writes_index(self) -> bool:
        """Whether each shard gets an index file: by default, when shards are uncompressed."""
        return self.compression == "none" if self.index is None else self.index

    @property
    def reader_compression(self) -> str | None:
        """The shards' compression as `tf.data.TFRecordDataset` names it (None, "GZIP", "ZLIB")."""
        return {"none": None, "gzip": "GZIP", "zlib": "ZLIB"}[self.compression]


# the box formats of Keras' bounding-box utilities (keras.utils.bounding_boxes), which KerasHub's
# detectors name in their `bounding_box_format`: rel_* in fractions of the image, the others in pixels
BoxFormat = Literal["yxyx", "xyxy", "xywh", "center_xywh", "center_yxhw", "rel_yxyx", "rel_xyxy", "rel_xywh",
                    "rel_center_xywh"]


@dataclass(frozen=True, kw_only=True)
class DetectionInput(Section):
    """`input.detection`: batches of (images, {"boxes", "labels"}), what KerasHub's object detectors
    take in `model.fit`."""

    bounding_box_format: BoxFormat = meta(
        "the boxes' format, as the detector's `bounding_box_format` names it (rel_* in fractions, the "
        "others in pixels of the batch's images)", "yxyx")
    boxes: str | None = meta("the bbox feature (default: the spec's one bbox feature)", None)
    labels: str | None = meta("the per-object class ids, shape [null] (default: the spec's `label`)", None)


@dataclass(frozen=True, kw_only=True)
class InputSpec(Section):
    """Defaults baked into the generated input_fn."""

    batch_size: int = meta("examples per batch", 32)
    shuffle_buffer: int = meta("the shuffle buffer of the training split, in examples", 10000)
    image_dtype: Literal["uint8", "float32"] = meta("images as uint8 pixels, or float32 scaled to [0, 1]", "uint8")
    image_size: list[int] | None = meta(
        "[height, width] that images of varying size are resized to; without it they are zero-padded "
        "to the largest in each batch", None)

    max_length: int | None = meta("sequences: keep at most this many steps per record", None)
    bucket_boundaries: list[int] | None = meta(
        "sequences, or the text of a format: example spec: batch records of similar length together (tf.data "
        "bucket_by_sequence_length), each batch padded to its own longest", None)
    length_feature: str | None = meta("sequences: the name input_fn gives each record's number of steps",
                                      "sequence_length")
    mask_feature: str | None = meta("sequences: also yield a boolean [batch, steps] mask under this name", None)
    objects: Literal["ragged", "padded"] = meta(
        "per-object features (bbox, shape [null, ...]) as ragged tensors, or dense, padded with -1 to the "
        "batch's most objects", "ragged")
    count_feature: str | None = meta("objects: padded: the name input_fn gives each record's number of boxes",
                                     "num_objects")
    detection: DetectionInput | None = meta(
        "batches of (images, {boxes, labels}) for KerasHub's object detectors", None)
    text: Literal["padded", "keras_hub"] | None = meta(
        "a text feature's ids: padded (the default: NAME, NAME_mask, NAME_segment_ids) or keras_hub (exactly "
        "token_ids, padding_mask, segment_ids and the label, as KerasHub's text models take them)", None)
    mlm: MaskedLMInput | None = meta(
        "the text's tokens masked at read time for masked-language-model pretraining (keras_hub: the inputs, "
        "targets and weights of KerasHub's MaskedLM models; padded: BERT's masked_lm_* keys beside the ids)", None)

    def check(self, at: At) -> None:
        if self.max_length is not None and self.max_length < 1:
            raise (at / "max_length").error(f"expected a positive integer, received {self.max_length}")
        if self.bucket_boundaries is not None and (
                not self.bucket_boundaries or self.bucket_boundaries != sorted(set(self.bucket_boundaries))
                or self.bucket_boundaries[0] < 1):
            raise (at / "bucket_boundaries").error(
                f"expected increasing positive lengths, e.g. [10, 20, 50], received {self.bucket_boundaries}")
        for key in ("length_feature", "mask_feature", "count_feature"):
            name = getattr(self, key)
            if name is not None and not IDENTIFIER.match(name):
                raise (at / key).error(f"expected an identifier, received {name!r}")
        for key in ("batch_size", "shuffle_buffer"):
            if getattr(self, key) < 1:
                raise (at / key).error(f"expected a positive integer, received {getattr(self, key)}")
        if self.image_size is not None and (len(self.image_size) != 2 or min(self.image_size) < 1):
            raise (at / "image_size").error(f"expected [height, width], received {self.image_size}")


@dataclass(frozen=True, kw_only=True)
class PackSpec(Section):
    """`pack: {length: N}`: short texts packed into records of N ids (features/text_pack.py)."""

    length: int = meta("the ids of a packed record: each split's examples of a batch are packed side by side, in "
                       "source order, with segment and position ids")

    def check(self, at: At) -> None:
        if self.length < 1:
            raise (at / "length").error(f"expected a positive number of ids, received {self.length}")


@dataclass(frozen=True, kw_only=True)
class Spec(Section):
    """A dataset spec: what the records hold, where the raw data is, how it is split and written.

    >>> spec = tb.load_spec("specs/wine.yaml")
    >>> spec.features["cultivar"].names, spec.output.shards
    (['barolo', 'grignolino', 'barbera'], 2)
    >>> spec = dataclasses.replace(spec, output=dataclasses.replace(spec.output, shards=8))
    """

    name: str = meta("the dataset's identifier: [A-Za-z_][A-Za-z0-9_]*")
    source: SourceSpec = meta("where the raw data is (left out: a frame given from Python, "
                              "tb.build(spec, source=frame))", SourceSpec(builder="dataframe"))
    features: dict[str, Feature] = meta("the record's features, by name (format: example)", {},
                                         convert=convert_features, schema=_FEATURES_SCHEMA)
    context: dict[str, Feature] = meta("per-record features of a sequence_example", {},
                                        convert=lambda value, at: convert_features(value, at, allow_empty=True),
                                        schema=_FEATURES_SCHEMA)
    sequence: dict[str, Feature] = meta("per-step features of a sequence_example; shapes are per step", {},
                                         convert=lambda value, at: convert_features(value, at, sequence=True),
                                         schema=_FEATURES_SCHEMA)
    sequence_lengths: Literal["equal", "free"] = meta(
        "whether a record's sequence features must have equal numbers of steps", "equal")
    version: str = meta("the dataset's version, e.g. 1.0.0 (a folder name)", "1.0.0",
                        convert=lambda value, at: _version(value, at))
    description: str = meta("what the dataset is", "")
    format: Literal["example", "sequence_example"] = meta("tf.train.Example or tf.train.SequenceExample", "example")
    splits: dict[str, Any] = meta("fractions summing to 1, or one source per split", {"train": 1.0},
                                  convert=convert_splits,
                                  schema={"type": "object", "additionalProperties": {
                                      "anyOf": [{"type": "number", "exclusiveMinimum": 0, "maximum": 1},
                                                {"$ref": "#/$defs/split_source"}]}})
    stratify: str | None = meta("a class_label feature: each split's share of every class of it is kept within one "
                                "record of the fractions (splits by fraction only)", None)
    label: str | None = meta("the feature input_fn yields as the label; omit for features only", None)
    output: OutputSpec = meta("where and how shards are written", OutputSpec())
    input: InputSpec = meta("defaults of the generated input_fn", InputSpec())
    on_error: Literal["fail", "skip"] = meta("stop at the first bad record, or skip and list it", "fail")
    pack: PackSpec | None = meta("pack short texts into records of `length` ids with segment and position ids, as "
                                 "T5 does (text features only)", None)
    file: str = meta("the spec file this was loaded from", "", internal=True)
    document: Any = dataclasses.field(default=None, compare=False, repr=False, metadata={"internal": True})

    def check(self, at: At) -> None:
        if not IDENTIFIER.match(self.name):
            raise (at / "name").error(f"expected an identifier ([A-Za-z_][A-Za-z0-9_]*), received {self.name!r}")
        if self.source.split_column is not None and self.fraction_splits:
            raise (at / "splits").error(f"with source.split_column the rows choose their split: list the splits "
                                        f"without fractions, e.g. {{{', '.join(f'{name}: {{}}' for name in self.splits)}}}")
        if self.source.split_column is not None and not self.fraction_splits:
            for name, source in self.splits.items():
                if source.path is not None:  # each file's rows of the other splits would vanish
                    raise (at / "splits" / name / "path").error(
                        "with source.split_column the rows choose their split from one source: give "
                        "source.path, not a path per split")
        if self.source.group_by is not None and self.is_sequence and self.source.order_by is None:
            raise (at / "source").error("a long table needs both `group_by` and `order_by`")
        self._check_row_groups(at)
        if self.source.group_by is not None and self.is_sequence:
            for key in ("context", "sequence"):
                for name, feature in getattr(self, key).items():
                    if feature.columns is not None:
                        raise (at / key / name / "columns").error(
                            "a long table (group_by) gives each feature one column; `columns:` gathers "
                            "several columns of one row, in a table of one row per record")
        if self.source.group_by is not None:
            formats = {name: feature.date_format for name, feature in self.features.items()
                       if feature.source_name == self.source.order_by and feature.date_format}
            if len(set(formats.values())) > 1:  # the steps are ordered by the dates it reads: one way
                first, *others = formats
                other = next(name for name in others if formats[name] != formats[first])
                section = (("sequence" if self.features[other].sequence else "context") if self.is_sequence
                           else "features")
                raise (at / section / other / "format").error(
                    f"features `{first}` and `{other}` read the order_by column `{self.source.order_by}` with "
                    f"different formats ({formats[first]!r}, {formats[other]!r}); expected one format for the "
                    f"dates that order the {'steps' if self.is_sequence else 'rows'}")
        if self.source.group_by is not None and self.is_sequence:
            context = {feature.source_name: name for name, feature in self.context.items()}
            for name, feature in self.sequence.items():
                if feature.source_name in context:  # one value per sequence, or one per step: not both
                    raise (at / "sequence" / name).error(
                        f"column `{feature.source_name}` already feeds context feature `{context[feature.source_name]}`; "
                        "in a long table a column feeds context or sequence features, not both")
        if not defines_classes(self.source.builder):  # (a Parquet categorical has its categories)
            for name, feature in self.features.items():
                feature.check_without_source_names(at / "features" / name)
        for name, feature in self.features.items():  # what a feature yields beside it (its length, a clip's rate)
            for companion in feature.companion_names:
                if companion in self.features:
                    section = "sequence" if feature.sequence else ("context" if self.is_sequence else "features")
                    raise (at / section / name).error(f"yields `{companion}` beside it, already a feature's name; "
                                                      "rename one")
        fanning = [name for name, feature in self.features.items() if feature.fans_out]
        if len(fanning) > 1:
            raise (at / "features" / fanning[1]).error(
                f"cuts each row into several records, as `{fanning[0]}` does; a spec may cut rows by one feature only")
        if self.stratify is not None:
            self._check_stratify(at / "stratify")
            if fanning:  # the strata count rows; a cut row's records would be counted as one
                raise (at / "stratify").error(f"can't divide records that feature `{fanning[0]}` cuts from rows "
                                              "(window:); divide them by key (drop stratify:)")
        if self.label is not None and self.label not in self.features:
            raise (at / "label").error(f"expected the name of a feature ({', '.join(self.features)}), "
                                       f"received {self.label!r}")
        self._check_objects(at / "input")
        self._check_text(at / "input" / "text")
        check_text_reading(self, at / "input")

    def _check_text(self, at: At) -> None:
        """`input.text: keras_hub` reads the one text feature of an Example spec."""
        if self.input.text != "keras_hub":
            return
        texts = [name for name, feature in self.features.items() if feature.holds_text]
        if self.is_sequence or len(texts) != 1:
            found = "none" if not texts else ", ".join(f"`{name}`" for name in texts)
            raise at.error(f"keras_hub gives one text feature of a format: example spec as token_ids, padding_mask "
                           f"and segment_ids; the spec has {found}")

    def _check_objects(self, at: At) -> None:
        """`input.objects: padded` counts the boxes of the spec's one bbox feature; `input.detection`
        pairs a bbox feature that has an `image:` with per-object class ids."""
        options = self.input
        if options.objects == "ragged" and options.detection is None:
            return
        key = "objects" if options.objects == "padded" else "detection"
        if self.is_sequence:
            raise (at / key).error("is for records of objects (format: example); a sequence_example's steps "
                                   "are padded already")
        boxes = [name for name, feature in self.features.items() if feature.holds_boxes]
        if options.objects == "padded" and options.count_feature is not None:
            if len(boxes) != 1:
                which = f"has {len(boxes)}: {', '.join(boxes)}" if boxes else "has none"
                raise (at / "count_feature").error(
                    f"counts the boxes of the spec's bbox feature, and the spec {which}; set `count_feature: null` "
                    "to pad without a count")
            if options.count_feature in self.features:
                raise (at / "count_feature").error(
                    f"`{options.count_feature}` is already a feature's name; choose another (or null)")
        detection = options.detection
        if detection is None:
            return
        at = at / "detection"
        if detection.boxes is None and len(boxes) != 1:
            which = f"has {len(boxes)}: {', '.join(boxes)}" if boxes else "has none"
            raise at.error(f"needs a bbox feature, and the spec {which}; name it in `boxes:`")
        name = detection.boxes or boxes[0]
        feature = self.features.get(name)
        if feature is None or not feature.holds_boxes:
            raise (at / "boxes").error(f"expected the name of a bbox feature ({', '.join(boxes) or 'the spec has none'}), "
                                       f"received {name!r}")
        if feature.image_name is None:
            raise (at / "boxes").error(f"feature `{name}` has no `image:`; the detector's images are the boxes' "
                                       "image feature: name it in the bbox feature's `image:`")
        labels = detection.labels or self.label
        if labels is None:
            raise at.error("needs the objects' class ids: name their feature in `labels:` (or set the spec's `label`)")
        feature = self.features.get(labels)
        if feature is None or not feature.ids_per_object:
            what = f"`{labels}`, {feature.describe()}" if feature is not None else repr(labels)
            expected = "one integer class id per object (a class_label of shape [null])"
            if detection.labels is not None:
                raise (at / "labels").error(f"expected a feature of {expected}, received {what}")
            raise at.error(f"the spec's label {what} is not {expected}; name the objects' class ids in `labels:`")

    def _check_row_groups(self, at: At) -> None:
        """Rows grouped into one Example (`group_by` on a `format: example` spec): a column feeds
        features that take every row's value (shape [null, ...]) or features of one value per
        group, not both; `columns:` with shape [null, k] (k columns a row) needs such groups."""
        if self.is_sequence:
            return
        grouping = self.source.group_by is not None
        one_each: dict[str, str] = {}
        for name, feature in self.features.items():
            if not grouping:
                feature.check_ungrouped(at / "features" / name)
            if grouping and not grouped.takes_rows(feature):
                one_each.update((column, name) for column in feature.source_names)
        for name, feature in self.features.items():
            for column in feature.source_names if grouping and grouped.takes_rows(feature) else []:
                if column in one_each:  # one value per group, or one per row: not both
                    raise (at / "features" / name).error(
                        f"column `{column}` already feeds feature `{one_each[column]}`, one value per group; "
                        "in grouped rows a column feeds features of one value per group or of every row's "
                        "(shape [null, ...]), not both")

    def _check_stratify(self, at: At) -> None:
        """`stratify:` names a scalar class_label and needs splits by fraction, which it then divides class by class."""
        labels = [name for name, feature in self.features.items() if feature.holds_classes]
        feature = self.features.get(self.stratify)
        if feature is None or not feature.holds_classes:
            expected = f"the name of a class_label feature ({', '.join(labels)})" if labels else \
                "the name of a class_label feature (the spec has none)"
            what = f"{self.stratify!r}, a {feature.type_name} feature" if feature is not None else repr(self.stratify)
            raise at.error(f"expected {expected}, received {what}")
        feature.check_stratify(at)
        if self.source.split_column is not None or not self.fraction_splits:
            chosen = "source.split_column names each row's split" if self.source.split_column is not None else \
                "each split has a source of its own"
            raise at.error(f"stratify divides splits given by fraction (e.g. {{train: 0.8, test: 0.2}}); here {chosen}")

    def normalised(self, at: At) -> "Spec":
        """Example specs declare `features`; SequenceExample specs `context` and `sequence`, which
        are merged into `features` here (each feature knows whether it is per step)."""
        if self.format == "example":
            for key in ("context", "sequence"):
                if getattr(self, key):
                    raise (at / key).error(f"`{key}` belongs to format: sequence_example; "
                                           "an example spec lists `features`")
            if not self.features:
                raise at.error("missing required key `features` (the record's features, by name)")
            return packed_spec(self, at) if self.pack is not None else self
        if self.features:
            raise (at / "features").error("a sequence_example spec lists `context` and `sequence`, not `features`")
        if self.pack is not None:
            raise (at / "pack").error("packs the texts of a format: example spec (records of fixed windows of ids)")
        if not self.sequence:
            raise at.error("missing required key `sequence` (the per-step features of a sequence_example)")
        for name in self.sequence:
            if name in self.context:
                raise (at / "sequence" / name).error(f"`{name}` is also a context feature; names must be unique")
        features = {**self.context, **self.sequence}
        if self.input.length_feature in features:
            raise (at / "input" / "length_feature").error(
                f"`{self.input.length_feature}` is already a feature's name; choose another (or null)")
        mask = self.input.mask_feature
        if mask is not None and (mask in features or mask == self.input.length_feature):
            taken = "a feature's name" if mask in features else "the length_feature's name"
            raise (at / "input" / "mask_feature").error(f"`{mask}` is already {taken}; choose another (or null)")
        return dataclasses.replace(self, features=features)

    @property
    def is_sequence(self) -> bool:
        return self.format == "sequence_example"

    @property
    def base_dir(self) -> str:
        """The folder relative paths in the spec resolve against."""
        return os.path.dirname(os.path.abspath(self.file)) if self.file else os.getcwd()

    def with_features(self, features: dict[str, Feature]) -> "Spec":
        """This spec with `features` in place of its own (a vocabulary the build learned), each
        linked to the others again: a feature that holds another (labels aligned to a text's
        pieces) holds the new one."""
        at = self.at("features") or At(Document({}, self.file or "spec"), ("features",))
        return dataclasses.replace(self, features={name: feature.linked(features, at / name)
                                                   for name, feature in features.items()})

    def at(self, *path: str | int) -> At | None:
        """The place of a key path in the spec file, for errors found after loading."""
        return At(self.document, tuple(path)) if self.document is not None else None

    def error(self, path: tuple, message: str) -> Exception:
        """A SpecError at a key path (with its line when the spec came from a file)."""
        at = self.at(*path)
        if at is not None:
            return at.error(message)
        return SpecError(f"{self.file}: {'.'.join(map(str, path))}: {message}")

    def resolve(self, path: str) -> str:
        """A path of the spec, relative to its folder; a URL as it is."""
        return resolve(os.path.expanduser(path), self.base_dir)

    @property
    def length_source(self) -> Feature | None:
        """The sequence feature whose lengths are the records' lengths (and the mask's): the label if
        it is a sequence feature (with `sequence_lengths: free` the mask must cover the label), else
        a fixed per-step shape if any (the parser reports their lengths), else a variable one (its
        ragged row lengths). None for an Example dataset."""
        sequence = [feature for feature in self.features.values() if feature.sequence]
        if not sequence:
            return None
        labelled = [feature for feature in sequence if feature.name == self.label]
        return next(iter(labelled), None) or next((feature for feature in sequence if not feature.is_variable),
                                                  sequence[0])

    def reading(self) -> dict[str, Any]:
        """How the dataset is read, as literals only: what read/tfdata.py's functions follow
        in `tb.input_fn` and, held as READING, in the generated module (spec/reading.py).

        >>> reading = tb.load_spec("specs/wine.yaml").reading()
        >>> reading["compression"], reading["label"], reading["features"]["cultivar"]
        (None, 'cultivar', {'sequence': False, 'parse': {'cultivar': ('fixed', 'int64', [])}, 'decode': []})
        """
        return reading_of(self)

    @property
    def source_names(self) -> list[str]:
        """The source names (columns, keys) its features read, sorted: what a batch is read with."""
        return sorted({column for feature in self.features.values() for column in feature.source_names})

    @property
    def batch_rows(self) -> int:
        """Records encoded per batch: the fewest any of its features takes (`Feature.batch_rows`)."""
        return min(feature.batch_rows for feature in self.features.values())

    @property
    def fraction_splits(self) -> bool:
        return all(isinstance(item, float) for item in self.splits.values())

    def to_dict(self) -> dict[str, Any]:
        """The normalised spec: every key with its value or default (what dataset_info.json holds)."""
        plain = _plain(self)
        _without_passwords(plain)
        if self.is_sequence:
            plain.pop("features")
        else:
            plain.pop("context")
            plain.pop("sequence")
            plain.pop("sequence_lengths")
        return plain


def packed_spec(spec: Spec, at: At) -> Spec:
    """`pack:`: every feature a text (per record, no window), each marked packed and cut to the
    pack's length where it gives no max_length (counted as any cut is)."""
    assert spec.pack is not None
    features = {name: feature.packed_to(spec.pack.length, at / "features" / name)
                for name, feature in spec.features.items()}
    keys = {feature.record_key: name for name, feature in features.items()}
    for name, feature in features.items():
        for key in feature.parsing():  # what a packed record holds beside its ids
            if key in keys and keys[key] != name:
                raise (at / "features" / keys[key]).error(f"`{key}` is where packing stores `{name}`'s ids' layout; "
                                                          "rename one (or give it another `key:`)")
    if spec.input.text == "keras_hub":
        raise (at / "input" / "text").error("KerasHub's text models take no packed segment ids (their attention would "
                                            "cross packed examples); read the padded layout or leave pack: out")
    return dataclasses.replace(spec, features=features)


def _check_place(path: str | None, at: At) -> None:
    """A path may be a URL whose scheme an installed filesystem serves (`s3://...`)."""
    problem = place_problem(path)
    if problem:
        raise at.error(problem)


def _version(value: Any, at: At) -> str:
    text = str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value
    if not isinstance(text, str) or not VERSION.match(text) or ".." in text:
        raise at.error(f"expected a version such as 1.0.0 (letters, digits, . _ + -), received {describe(value)}")
    return text


def _without_passwords(plain: Any) -> None:
    """A source's `connection` (and each split's) as the dataset records it: no password."""
    if isinstance(plain, dict):
        for key, value in plain.items():
            if key == "connection" and isinstance(value, str):
                plain[key] = without_password(value)
            else:
                _without_passwords(value)
    elif isinstance(plain, list):
        for item in plain:
            _without_passwords(item)


def _plain(value: Any) -> Any:
    if isinstance(value, Feature):
        out = {"type": value.type_name}
        out.update(_plain_fields(value))
        return out
    if dataclasses.is_dataclass(value):
        return _plain_fields(value)
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _plain_fields(value: Any) -> dict[str, Any]:
    # None is written only where it isn't the default (e.g. `length_feature: null`)
    return {
        f.name: _plain(getattr(value, f.name))
        for f in spec_fields(type(value))
        if getattr(value, f.name) is not None or f.default is not None
    }


def _identifier(name: str) -> str:
    """A feature name like `name`: `temp.max` -> `temp_max`."""
    text = re.sub(r"\W", "_", name)
    return text if text and not text[0].isdigit() else f"_{text}"
