"""The base of every feature type, and the registry that names them.

A feature type owns three things for its values: encoding (raw Python/NumPy values of a batch of
rows to `Values` per record key), its parse spec and its decoding. The last two are a literal
description (`Feature.parsing`, `Feature.decoding`) that the reading functions of
read/tfdata.py follow, in `tb.input_fn` and in the generated module alike.
"""
from __future__ import annotations

import dataclasses
import importlib.metadata
import os
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping, NamedTuple, Sequence

import numpy as np

from ..errors import DataError, SpecError
from ..registry import is_reference, load_class
from ..spec.fields import At, Section, describe, meta
from . import tfds
from .context import EncodeContext, Origin, taking_context
from .described import Card, Counted
from .dtypes import Invalid
from .values import ListKind, Values

ParseSpec = tuple[str, str, list[int | None]]  # (kind, dtype, shape): see Feature.parsing
DecodeStep = tuple[str, dict[str, Any]]  # (function, arguments): see Feature.decoding

FEATURE_TYPES: dict[str, type["Feature"]] = {}
# the name each feature type is known by: what `type:` gives in a spec and dataset_info.json records
# (kept here, not set on the class: the same class may be named by a reference in another spec)
TYPE_NAMES: dict[type, str] = {}
ENTRY_POINT_GROUP = "tfrecord_builder.features"  # installed packages' feature types

_INSTALLED: list[bool] = []  # whether the installed packages' feature types are loaded


def _load_installed() -> None:
    if _INSTALLED:
        return
    _INSTALLED.append(True)
    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if entry.name in FEATURE_TYPES:
            continue
        try:
            cls = entry.load()
        except Exception as error:  # the package's own code failed while it was imported
            raise SpecError(f"feature type {entry.name} ({entry.value}, an installed entry point): can't be "
                            f"loaded: {type(error).__name__}: {error}") from None
        if not (isinstance(cls, type) and issubclass(cls, Feature)):
            raise SpecError(f"feature type {entry.name} ({entry.value}, an installed entry point): not a "
                            "tfrecord_builder.Feature subclass")
        register(entry.name)(cls)


def register(name: str) -> Callable[[type], type]:
    """Class decorator: makes a feature type available to specs as `type: name` (in the process
    that imported it; an installed package declares it in the entry-point group
    `tfrecord_builder.features` instead, so every process finds it).

    >>> @tb.register_feature("percent")
    ... class Percent(tb.TensorFeature):
    ...     pass  # e.g. a float32 share in [0, 100], checked in encode_values
    >>> tb.load_spec("specs/wine.yaml").features["alcohol"].type_name
    'tensor'
    """

    def add(cls: type) -> type:
        FEATURE_TYPES[name] = cls
        TYPE_NAMES[cls] = name
        return cls

    return add


class TokenIds(NamedTuple):
    """What reading needs of a text's tokenizer beyond padding its ids (`Feature.token_ids`): the
    masked-language-model view (`input.mlm`) and batches by length (`input.bucket_boundaries`)."""

    length_key: str  # the record key of a record's number of ids
    vocab_size: int
    mask_id: int | None  # None: the tokenizer has no mask token
    special_ids: list[int] | None  # the ids never masked; None: not recorded (a dataset built before)
    tokenizer: str  # the tokenizer file, as the spec names it (a learned one: its file beside the shards)
    unusable: str | None  # why the tokenizer file can't be read, where it can't


class _TypeName:
    """`type_name` of a feature type and of its instances: the name the type was registered or
    referenced by (TYPE_NAMES), or that of the nearest registered class it extends; "" if none.
    A class may still state its own `type_name = "..."`."""

    def __get__(self, instance: object, owner: type) -> str:
        return next((TYPE_NAMES[cls] for cls in owner.__mro__ if cls in TYPE_NAMES), "")


@dataclass(frozen=True, kw_only=True)
class Feature(Section):
    """A declared feature. Subclasses add their own spec keys (`tb.spec_field`) and own their
    values' encoding, parse spec and decoding; `tb.TensorFeature` is the one to extend.

    >>> spec = tb.load_spec("specs/wine.yaml")
    >>> feature = spec.features["alcohol"]
    >>> feature.type_name, feature.record_key, feature.is_variable
    ('tensor', 'alcohol', False)
    """

    discriminator: ClassVar[str] = "type"
    default_variant: ClassVar[str] = "tensor"
    type_name: ClassVar[str] = _TypeName()  # type: ignore[assignment]  # a str, on the class and its instances
    batch_rows: ClassVar[int] = 4096  # records encoded per batch (a memory bound for large values)
    reads_text_cells: ClassVar[bool] = False  # takes features.cells.ArrowCells columns as they are
    # reads the file its column names (a photo, a clip, a sound): a table of such rows is a
    # manifest, whose records are known by key before their files are read (one copy)
    reads_files: ClassVar[bool] = False
    # takes `columns:` (several columns gathered into one value, features/gathered.py): encode()
    # is then handed a GatheredColumns
    gathers_columns: ClassVar[bool] = False
    # In rows grouped into one record (`source.group_by` on a format: example spec), whether a
    # feature of the type whose `shape` begins with null (`[null]`, `[null, k]`) takes every row's
    # value (features/grouped.py): each row is encoded by the feature with that first dimension
    # taken off (`dataclasses.replace(feature, shape=shape[1:])`), so a type that sets it has a
    # `shape` field. Otherwise (an image, whose [null, null, 3] is one image's size) a feature
    # takes one value a group, which its rows must agree on.
    takes_group_rows: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "encode" in cls.__dict__:  # called as encode(values, context), whichever form it was written in
            cls.encode = taking_context(cls.__dict__["encode"])  # type: ignore[method-assign]

    name: str = meta("the feature's name (the key under `features:`)", "", internal=True)
    source: str | None = meta("the column or key in the raw data (default: the feature's name)", None)
    columns: list[str] | str | None = meta(
        "several columns gathered into one feature of shape [n], in this order: a list [a, b, c], or a pattern "
        "such as \"gene_*\" (fnmatch-style, matched against the source's header, in the file's order)", None,
        convert=lambda value, at: _column_names(value, at),
        schema={"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]})
    key: str | None = meta("the feature's key inside the record (default: the feature's name)", None)
    description: str | None = meta("what the feature is, for people", None)
    sequence: bool = meta("a per-step feature of a sequence_example (set by where it is declared)", False,
                          internal=True)

    @staticmethod
    def variants() -> dict[str, type["Feature"]]:
        """The feature types specs may name: the registered ones, and those installed packages
        declare in the entry-point group `tfrecord_builder.features` (loaded once, when first asked)."""
        _load_installed()
        return FEATURE_TYPES

    @staticmethod
    def variant(name: str, at: At) -> type["Feature"] | None:
        """The feature type a spec names as a class, `module:Class` or `path/to/file.py:Class`
        (relative to the spec's folder); None for a name that isn't such a reference."""
        if not is_reference(name):
            return None
        folder = os.path.dirname(os.path.abspath(at.document.file)) if at.document is not None else os.getcwd()
        try:
            cls = load_class(name, [folder, os.getcwd()], "")
        except SpecError as error:
            raise (at / "type").error(str(error)) from None
        if not (isinstance(cls, type) and issubclass(cls, Feature)):
            raise (at / "type").error(f"{name} is not a tfrecord_builder.Feature subclass")
        TYPE_NAMES[cls] = name  # what dataset_info.json calls it: a reader finds the class again by it
        return cls

    def named(self, name: str) -> "Feature":
        return dataclasses.replace(self, name=name)

    @property
    def is_variable(self) -> bool:
        """Whether records hold different numbers of values (parsed as a ragged or sparse list)."""
        return False

    @property
    def holds_objects(self) -> bool:
        """Whether the feature may hold one value (or one row of values) per object of its record,
        a list whose first dimension is variable (labels, flags, masks, keypoints): what a bbox
        feature's `per_object:` may name, so a dropped box takes its values with it."""
        return False

    @property
    def objects_with(self) -> list[str]:
        """The features holding a value per object of this one's (a bbox feature's `per_object:`):
        where its values say which objects it kept (`Values.kept_objects`), theirs keep the same."""
        return []

    @property
    def fills_absent(self) -> bool:
        """Whether a record may lack a value (a default fills it, or its length may be 0)."""
        return False

    @property
    def fills_missing(self) -> bool:
        """Whether a record whose source has no value holds the `default:` instead: statistics
        count it as filled and leave its values out of the figures of the source's values."""
        return False

    @property
    def record_key(self) -> str:
        return self.key or self.name

    @property
    def source_name(self) -> str:
        return self.source if self.source is not None else self.name  # "" names an unnamed column

    @property
    def source_names(self) -> list[str]:
        """Every column the feature reads: its `columns:` once they are known, else its one source."""
        if isinstance(self.columns, list):
            return list(self.columns)
        return [self.source_name]

    def constant_values(self, count: int) -> list[Any] | None:
        """The raw values of `count` records where the feature reads no column (a tensor's
        `value:`, the same in every record); None (the default): it reads `source_names`."""
        return None

    @property
    def linked_columns(self) -> list[str]:
        """Columns the feature reads beside its values (a bbox's image, for its size): handed to
        `encode` after them, as GatheredColumns."""
        return []

    def check(self, at: At) -> None:
        """Rules across this feature's keys; raises SpecError at `at`."""

    def linked(self, features: Mapping[str, "Feature"], at: At) -> "Feature":
        """This feature with what it takes from the other features of its section (a bbox's or a
        mask's `image:`), once they are all loaded; raises SpecError at `at`. By default itself."""
        return self

    @property
    def wants_source_names(self) -> bool:
        """Whether the feature takes names its source defines (a class label without `names:`
        from an image folder's sub-folders; keypoints from a COCO category's points)."""
        return False

    def with_source_names(self, found: list[list[str]]) -> "Feature":
        """This feature with the names each split's builder defines for its source (`found`, one
        list a builder that defines some). Raises ValueError saying what the spec must give
        instead, where there are none (or they disagree)."""
        return self

    def check_sequence(self, at: At) -> None:
        """Raises SpecError at `at` if this feature can't be a per-step feature."""
        raise at.error(f"a {self.type_name} feature can't be per step; declare it under `context:`")

    # --- what the spec asks of a feature beside its own keys -----------------------------------
    # spec/model.py checks the spec's sections against each other through these, never by which
    # type a feature is: a type of one's own keeps the defaults or overrides them.
    def check_record(self, at: At) -> None:
        """Raises SpecError at `at` if this feature can't be one of the record's (under
        `features:` or a sequence_example's `context:`), as `check_sequence` does for steps."""

    def check_ungrouped(self, at: At) -> None:
        """Raises SpecError at `at` if this feature needs rows grouped into one record
        (`source.group_by`), in a format: example spec without them."""

    def check_without_source_names(self, at: At) -> None:
        """Raises SpecError at `at` if this feature can't do without names its source defines
        (`wants_source_names`), for a source that defines none (a CSV or JSON lines table)."""

    @property
    def date_format(self) -> str | None:
        """The format it reads dates and times written as text with (a tensor's `format:`), which
        also orders a long table's steps when it reads the `order_by` column; None: it reads none."""
        return None

    @property
    def holds_boxes(self) -> bool:
        """Whether its values are the boxes of its record's objects (a bbox feature): what
        `input.objects: padded` counts and `input.detection` takes as the boxes."""
        return False

    @property
    def image_name(self) -> str | None:
        """The image feature its values are measured on (`image:`, once linked); None if none."""
        return None

    @property
    def ids_per_object(self) -> bool:
        """Whether it holds one integer id per object of its record (shape [null], an integer
        dtype: a class_label of each object's class): what `input.detection` takes as labels."""
        return False

    @property
    def holds_text(self) -> bool:
        """Whether its values are a text's token ids, with a padding mask (and a pair's segment ids)
        as its first companions: what `input.text: keras_hub` reads. False by default."""
        return False

    def text_of(self, ids: Sequence[int]) -> str:
        """The text a record's ids say (a `holds_text` feature's; `tb.read(decode_text=True)`)."""
        raise NotImplementedError(f"feature `{self.name}` holds no text")

    # --- values that follow another feature's pieces (a class_label's `align: words`) -----------
    @property
    def splits_words(self) -> bool:
        """Whether it stores pieces of a column of words, one list of words a record (a text with
        `words: true`), on which `on_pieces` places values given per word. False by default."""
        return False

    @property
    def padded_length(self) -> int | None:
        """The number of values every record stores, padded (a text's Model Garden layout): what
        values placed `on_pieces` are padded to as well; None (the default): each its own."""
        return None

    def on_pieces(self, sentences: Sequence[Any], values: Sequence[Sequence[int]], context: EncodeContext,
                  every_piece: bool, fill: int) -> tuple[list[list[int]], int]:
        """Values given one a word (`values[i][w]`: word w of `sentences[i]`, a batch of its
        column) placed as this feature stores the words' pieces, exactly as long: on each word's
        first piece (on all of them with `every_piece`) and `fill` elsewhere (its other pieces,
        special ids, padding); cut as the pieces are. With it, how many words had no piece (so no
        place for their value). Only a feature that `splits_words` has it."""
        raise NotImplementedError(f"feature `{self.name}` doesn't split words into pieces")

    @property
    def token_ids(self) -> TokenIds | None:
        """A `holds_text` feature's tokenizer as reading needs it beyond padding its ids (the
        masked-language-model view, batches by length); None by default."""
        return None

    def tokens_of(self, ids: Sequence[int]) -> list[str]:
        """Each of a record's ids as its token, the tokenizer's own spelling (`##s`, `▁the`): what
        the report shows of a `holds_text` feature's most frequent ids and records. Raises
        SpecError saying why where the tokenizer file is gone."""
        raise NotImplementedError(f"feature `{self.name}` holds no text")

    @property
    def holds_classes(self) -> bool:
        """Whether its values are indices of classes (a class_label): what `stratify:` may name."""
        return False

    def check_stratify(self, at: At) -> None:
        """Raises SpecError at `at` (the spec's `stratify:`, naming this feature, which
        `holds_classes`) unless it holds one class a record, by which splits can be divided."""

    # --- writing side -------------------------------------------------------------------------
    def encode(self, values: Sequence[Any], context: EncodeContext) -> dict[str, Values]:
        """Converts a batch of raw values (None = missing) to storage values per record key.

        `context` (features/context.py) names the rows in errors (`context.origin`, as
        `self.fail` takes it), says where relative file paths in the values point from
        (`base_dir`: a manifest's folder) and how the source writes values (`language`), and
        counts what encoding did that the spec didn't ask for in so many words (`notices`).
        An `encode` written as `encode(self, values, origin, base_dir=None, language="python")`,
        the earlier signature, is called with the context's parts.
        """
        raise NotImplementedError

    @property
    def companion_names(self) -> list[str]:
        """The names `input_fn` gives what it yields beside this feature (its reading's
        "companions": an audio feature's length), which no feature may take."""
        return []

    @property
    def fans_out(self) -> bool:
        """Whether a source row may become several records (`fan_out`): at most one feature a spec."""
        return False

    def fan_out(self, encoded: dict[str, Values], context: EncodeContext
                ) -> tuple[dict[str, Values], np.ndarray] | None:
        """The records a batch's rows become, from this feature's values of them (`context`: the
        batch's, as `encode` had it): None (one each, the default), or its values per new record
        and the source row of each (ascending; a row may give several records or none). The other
        features' values are repeated to match (`Values.repeated`): an audio recording cut into
        windows (features/audio.py)."""
        return None

    @property
    def learns_from_data(self) -> bool:
        """Whether a build learns part of this feature from the train split's values before it
        encodes any (a text's `vocabulary:`, build/vocabulary.py), learned yet or not."""
        return False

    @property
    def to_learn(self) -> bool:
        """Whether it `learns_from_data` and hasn't yet (a spec as written, not a build's)."""
        return False

    def learned_in(self, folder: str) -> "Feature":
        """This feature with what its build learned read back from the dataset's `folder` (a
        learned vocabulary's file); itself when it learns nothing."""
        return self

    def packed_to(self, length: int, at: At) -> "Feature":
        """This feature under the spec's `pack: {length: N}` (short examples side by side in
        records of N ids): refused, as a value per record can't hold one per packed example; a
        text feature packs (features/text.py)."""
        raise at.error("is not a text, and pack: packs text features only (it would need one value per packed "
                       "example); leave it out, or leave pack: out")

    def packed_values(self, encoded: dict[str, Values], firsts: np.ndarray) -> dict[str, Values]:
        """Its values of a split's examples (in order) packed into the records that start at the
        examples `firsts` (build/packing.py): for the features `packed_to` keeps."""
        raise NotImplementedError

    def fail(self, origin: Origin, row: int, problem: str) -> DataError:
        """The one-line error for a bad value in row `row` (its `problem` alone, too)."""
        return DataError(f"{origin(row)}: feature `{self.name}`: {problem}", problem=problem)

    def check_stored(self, stored: dict[str, tuple[str, list[Any]]]) -> str | None:
        """What is wrong with this feature's values as read back from a record (None: nothing).

        `stored` maps record keys to (list kind, values), as `codec.example_reader` parses them.
        """
        return None

    def stored_kinds(self) -> dict[str, ListKind] | None:
        """The list kind each of the feature's record keys is stored in, for `verify`'s column-wise
        reading (codec/columns.py); None (the default): its records are checked one at a time."""
        return None

    def check_columns(self, columns: Mapping[str, Any]) -> np.ndarray:
        """`check_stored` on whole columns (codec/columns.py' StoredColumn by record key): per row,
        whether check_stored may find something wrong there; it must never miss one. Needed only
        where `stored_kinds` is given."""
        raise NotImplementedError

    # --- reading side -------------------------------------------------------------------------
    # A feature describes its reading as literal data that read/tfdata.py's functions follow,
    # in the library and in the generated module alike (which holds it as a `repr`).
    def parsing(self) -> dict[str, ParseSpec]:
        """How each record key is parsed: (kind, stored dtype, shape), kind one of `fixed`,
        `var`, `ragged` or `fixed_steps` (reading.parse_spec makes the `tf.io` spec)."""
        raise NotImplementedError

    def decoding(self, options: Any) -> list[DecodeStep]:
        """The decode steps from the first key's parsed tensor to the feature's tensor: (function
        of reading.DECODE_STEPS, its arguments as literals; {"parsed": KEY} / {"lengths": KEY}
        name a parsed tensor / a sequence key's step counts). `options` is the spec's `input:`
        section (reading-side choices such as the images' dtype)."""
        return []

    def reading(self, options: Any) -> dict[str, Any]:
        """The feature's whole reading description, as literals."""
        return {"sequence": self.sequence, "parse": self.parsing(), "decode": self.decoding(options)}

    def statistics_values(self, encoded: dict[str, Values]) -> Values:
        """The values statistics are gathered over (by default the first record key's)."""
        return next(iter(encoded.values()))

    def describe(self) -> str:
        """A short human description of the decoded value, e.g. `float32 [3]`."""
        raise NotImplementedError

    # --- what describes a dataset: its statistics, TFDS's files, the label map, the report -----
    # The parts that write and show them (write/stats.py, write/tfds.py, write/label_map.py,
    # read/report, inspect, the generated module) ask these, never which type a feature is: a
    # type of one's own keeps the defaults or overrides them in its own module.
    @property
    def inner_size(self) -> int:
        """Values an element of its first dimension holds: what the lengths of a variable number
        of values are counted in (a box's 4); 1 by default."""
        return 1

    @property
    def default_value(self) -> Any:
        """What a record holds where its source has no value (a tensor's `default:`); None: none."""
        return None

    @property
    def class_names(self) -> list[Any] | None:
        """The names of the classes its values are, as the spec (or the source) gives them; None
        (the default) where it has none: values that aren't classes, or classes only counted."""
        return None

    @property
    def classes(self) -> list[Any] | None:
        """Its values' classes by index, as tables and charts name them: `class_names`, else the
        indices as text ("0", "1", ...); None (the default): its values aren't classes."""
        return None

    @property
    def first_class_id(self) -> int:
        """What its first class is stored as: 0 (the default) stores a class index, 1 the index + 1."""
        return 0

    @property
    def classes_per_object(self) -> bool:
        """Whether it holds the class of each object of its record, one value an object (a class
        label of shape [null]): what the Object Detection API's label map names
        (write/label_map.py). False by default."""
        return False

    @property
    def counted(self) -> Counted:
        """What the build's statistics count of its `statistics_values` (features/described.py):
        by default the values, and each of its `columns:` on its own."""
        return Counted(columns=self.columns if isinstance(self.columns, list) else None)

    @property
    def card(self) -> Card:
        """How the report shows it (features/described.py): by default the `other` card, its
        statistics' figures."""
        return Card()

    def json_kind(self) -> tuple[ListKind, int] | None:
        """What the fast JSON lines reader (builders/json_blocks.py) may have Arrow parse each of its
        source fields as: values of one kind (int64, float; bytes: text) inside `depth` lists,
        which `encode` takes as Arrow columns (`reads_text_cells`). None (the default): its fields
        are read by `json.loads`, as the source writes them."""
        return None

    def tfds_features(self, options: Any) -> dict[str, dict[str, Any]]:
        """The TensorFlow Datasets features (features/tfds.py's plain dicts) of what it stores,
        by record key (a key with "/" nests in features.json): by default `tfds_feature` under its
        record key and a Tensor for each companion its reading yields beside it, or, for a
        feature stored only under keys inside its own ("KEY/x"), a Tensor for each of those."""
        parsed = self.parsing()
        if self.record_key not in parsed:  # stored under keys of its own (the Object Detection API's keypoint lists)
            return {key: tfds.parsed_tensor(*spec) for key, spec in parsed.items()
                    if key.startswith(self.record_key + "/")}
        entries = {self.record_key: self.tfds_feature(options)}
        for companion in self.reading(options).get("companions", {}).values():  # keypoints' visibilities
            key, spec = next(iter(companion["parse"].items()))
            entries.setdefault(key, tfds.parsed_tensor(*spec))
        return entries

    def tfds_feature(self, options: Any) -> dict[str, Any]:
        """The TFDS feature that parses and decodes what it stores under its record key: by
        default a Tensor of the dtype its decode steps end in (`options`: the spec's `input:`)."""
        kind, stored, shape = next(iter(self.parsing().values()))
        return tfds.tensor(tfds.parsed_dimensions(kind, shape), tfds.decoded_dtype(self.decoding(options), stored))

    def tfds_labels(self) -> dict[str, list[Any]]:
        """The class names TFDS reads beside features.json, by record key (its ClassLabel's
        `KEY.labels.txt`); none by default."""
        return {}


def _column_names(value: Any, at: At) -> list[str] | str:
    if isinstance(value, str) or (isinstance(value, list) and all(isinstance(item, str) for item in value)):
        return value
    raise at.error(f"expected a list of column names, e.g. [xmin, ymin, xmax, ymax], or a pattern such as "
                   f"\"gene_*\", received {describe(value)}")


def locate(invalid: Invalid, counts: Sequence[int]) -> tuple[int, int]:
    """Maps the index of a bad element in a flattened batch to (row, element within the row)."""
    position = invalid.index
    for row, count in enumerate(counts):
        if position < count:
            return row, position
        position -= count
    return len(counts) - 1, 0
