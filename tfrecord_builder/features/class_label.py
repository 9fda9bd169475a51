"""`class_label`: a category stored as its int64 index.

The raw data may give the class name or the index. A value that is one of the names maps to that
name's index first; otherwise an integer in [0, number of classes) is taken as the index, unless
the names are spelled as numbers (`names: ["1", "2", "3"]`, months, years): then only a name is
accepted (2.0 is the name "2"), since a stray 0 taken as an index would silently be class "1".

`first_id: 1` stores index + 1 (what the Object Detection API reads under
`image/object/class/label`, its label map's ids: 0 is its background); read back as stored.
Only per-object labels (`shape: [null]`) take it: a scalar label's index feeds `stratify:` and
the report's per-class samples.

`align: words` (features/aligned.py): one label a word of a text feature's words, stored on
the text's pieces, -1 where ignored.
"""
from __future__ import annotations

import dataclasses
import functools
import io
import os
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .. import fs
from ..errors import SpecError, UsageError
from ..spec.fields import At, meta
from . import aligned, tfds
from .base import DecodeStep, EncodeContext, Feature, ParseSpec, register
from .described import Card, Counted
from .dtypes import Invalid
from .tensor import TensorFeature
from .values import StoredColumn, Values



@dataclass(frozen=True, kw_only=True)
class ClassLabelFeature(TensorFeature):
    """A class index: `{type: class_label, names: [cat, dog]}`."""

    dtype: str = meta("always int64 for a class label", "int64", internal=True)
    names: list[str | int] | None = meta("the class names, in index order", None)
    names_file: str | None = meta("a text file with one class name per line (relative to the spec)", None)
    num_classes: int | None = meta("the number of classes, when the data gives indices and no names", None)
    first_id: int = meta("the id stored for the first class: 0 stores the index, 1 the index + 1 (the Object "
                         "Detection API's label ids; per-object labels, shape [null], only)", 0)
    align: aligned.Align | None = meta(
        "`words`: one label a word of a text feature's `words: true` column, stored on its pieces (the first "
        "piece of each word; -1 on the others and on special ids); or {words: FEATURE, pieces: first | all}",
        None, convert=aligned.align_option, schema=aligned.ALIGN_SCHEMA)
    # the text feature the labels are aligned to (once linked), and the length it pads its ids to
    aligned_to: Feature | None = dataclasses.field(default=None, compare=False, repr=False,
                                                   metadata={"internal": True})
    padded_to: int | None = meta("the aligned text's fixed length (its Model Garden layout)", None, internal=True)

    def normalised(self, at: At) -> "ClassLabelFeature":
        """The names as text, those of a `names_file` read in (the built dataset needs no file)."""
        given = [key for key in ("names", "names_file", "num_classes") if getattr(self, key) is not None]
        if len(given) > 1:
            raise at.error(f"give one of `names`, `names_file` or `num_classes`, not {' and '.join(given)}")
        names = self.names
        if self.names_file is not None:
            path = fs.resolve(self.names_file, os.path.dirname(os.path.abspath(at.document.file)))
            try:
                with io.TextIOWrapper(fs.open_file(path), encoding="utf-8") as file:
                    names = [line.strip() for line in file if line.strip()]
            except OSError as error:
                raise (at / "names_file").error(f"can't read {path}: {error.strerror or error}") from None
            except UsageError as error:  # a URL no filesystem serves, or a store that refuses us
                raise (at / "names_file").error(str(error)) from None
        if names is None:
            return self
        return dataclasses.replace(self, names=[str(name) for name in names], names_file=None)

    def check(self, at: At) -> None:
        for key in ("format", "time_unit"):
            if getattr(self, key) is not None:
                raise (at / key).error("a class_label reads names or indices, not dates and times")
        if self.names is not None:
            if not self.names:
                raise (at / "names").error("expected at least one class name")
            duplicates = sorted({name for name in self.names if self.names.count(name) > 1})
            if duplicates:
                raise (at / "names").error(f"duplicate class names: {', '.join(duplicates)}")
        elif self.num_classes is not None and self.num_classes < 1:
            raise (at / "num_classes").error(f"expected a positive number, received {self.num_classes}")
        if self.first_id not in (0, 1):
            raise (at / "first_id").error(f"expected 0 (store the class index) or 1 (the index + 1), "
                                          f"received {self.first_id!r}")
        if self.first_id and self.shape != [None]:
            raise (at / "first_id").error("`first_id: 1` is for per-object labels (shape [null]), "
                                          f"not shape {self.shape}")
        if self.align is not None:
            aligned.check(self, at)
        if self.has_classes:
            super().check(at)  # checks a default against the classes

    @property
    def has_classes(self) -> bool:
        """False until names or a count are known (a source such as image_folder may supply them)."""
        return self.names is not None or self.num_classes is not None

    @property
    def wants_source_names(self) -> bool:
        return not self.has_classes

    def check_without_source_names(self, at: At) -> None:
        if not self.has_classes:
            raise at.error("a class_label needs one of `names`, `names_file` or `num_classes` "
                           "(only image_folder sources and Parquet categorical columns define classes themselves)")

    @property
    def holds_classes(self) -> bool:
        return True

    def check_sequence(self, at: At) -> None:
        if self.align is not None:
            raise (at / "align").error("aligned labels are a list beside their text's ids: declare them under "
                                       "`context:` or `features:`, not per step")
        super().check_sequence(at)

    def check_stratify(self, at: At) -> None:
        if self.shape or self.sequence:
            raise at.error(f"expected a class_label of one class per record (shape []), received `{self.name}` "
                           f"{'per step' if self.sequence else 'of shape ' + str(self.shape)}")

    def with_source_names(self, found: list[list[str]]) -> "ClassLabelFeature":
        """The names a source gives (a Parquet file's categories, a folder's sub-folders): in the
        source's order; where splits' sources disagree (train/ and test/ folders), every name, sorted."""
        if not found:
            raise ValueError("the class_label needs `names`, `names_file` or `num_classes` (this source doesn't "
                             "define classes)")
        same = all(names == found[0] for names in found)
        return dataclasses.replace(self, names=list(found[0]) if same else class_order(
            name for names in found for name in names))

    @property
    def num_labels(self) -> int:
        if not self.has_classes:
            raise SpecError(f"class_label `{self.name}`: its classes come from the source and are known once "
                            "it is built (use the built dataset's info.spec)")
        return len(self.names) if self.names is not None else int(self.num_classes)

    @property
    def class_names(self) -> list[Any] | None:
        return self.names

    @property
    def classes(self) -> list[Any]:
        """Its names, else its indices as text; raises SpecError while the source has yet to give them."""
        return list(self.names) if self.names else [str(index) for index in range(self.num_labels)]

    @property
    def first_class_id(self) -> int:
        return self.first_id

    @property
    def classes_per_object(self) -> bool:
        return self.shape == [None] and not self.sequence and self.align is None

    @property
    def counted(self) -> Counted:
        return dataclasses.replace(super().counted, kind="classes")

    @property
    def card(self) -> Card:
        return Card("class_label", column=self.dtype)

    def tfds_feature(self, options: Any) -> dict[str, Any]:
        """TFDS's ClassLabel (a Sequence of them for a list), which reads our indices as its own;
        plain int64 numbers for ids from 1 (TFDS's indices are from 0) or more than one dimension."""
        kind, _, shape = next(iter(self.parsing().values()))
        dimensions = tfds.parsed_dimensions(kind, shape)
        if self.first_id:
            return tfds.tensor(dimensions, "int64")
        count = len(self.names) if self.names is not None else self.num_classes
        label = {"pythonClassName": tfds.CLASS_LABEL, "classLabel": {"numClasses": str(count)} if count else {}}
        if not dimensions:
            return label
        if len(dimensions) > 1:  # TFDS's Sequence of labels is one-dimensional
            return tfds.tensor(dimensions, "int64")
        return tfds.sequence(label, dimensions[0])

    def tfds_labels(self) -> dict[str, list[Any]]:
        """Its names, which TFDS's ClassLabel reads (none where ids from 1 are stored as plain numbers)."""
        return {self.record_key: self.names} if self.names is not None and not self.first_id else {}

    def convert(self, flat: Sequence[Any]) -> np.ndarray:
        return self.indices(flat) + self.first_id

    @functools.cached_property
    def _lookups(self) -> tuple[dict[str | int, int], dict[str | None, int]]:
        """Each name's index, and each name spelled as a whole number's (by that number's text): made
        once, not for each batch (a thousand names: 1 ms of each batch of 4,096 labels)."""
        lookup = {name: index for index, name in enumerate(self.names or [])}
        numbers = {_whole_number_text(name): index for index, name in reversed(list(enumerate(self.names or [])))}
        numbers.pop(None, None)  # names that aren't numbers
        return lookup, numbers

    def indices(self, items: Sequence[Any]) -> np.ndarray:
        """Maps names or indices to indices; raises Invalid for a value that is neither."""
        lookup, numbers = self._lookups
        out = np.empty(len(items), dtype=np.int64)
        for position, item in enumerate(items):
            if isinstance(item, bytes):
                item = item.decode("utf-8", "replace")
            key = item if isinstance(item, str) else str(item)
            index = lookup.get(key.strip() if isinstance(item, str) else key)
            if index is None and numbers:  # 3, 3.0 or "03" for the name "3" (or "03")
                index = numbers.get(_whole_number_text(item))
            elif index is None:
                index = self._as_index(item)
            if index is None:
                raise Invalid(position, self._expected(), item, self._unless_numbers())
            out[position] = index
        return out

    @property
    def names_are_numbers(self) -> bool:
        """Whether some class name is spelled as a number: then values are names, never indices."""
        return any(_whole_number_text(name) is not None for name in self.names or [])

    def _as_index(self, item: Any) -> int | None:
        if isinstance(item, (bool, np.bool_)):
            return None
        try:
            index = int(item.strip()) if isinstance(item, str) else int(item)
        except (TypeError, ValueError, OverflowError):
            return None
        if isinstance(item, float) and not item.is_integer():
            return None
        return index if 0 <= index < self.num_labels else None

    def _expected(self) -> str:
        if self.names is not None:
            shown = ", ".join(self.names[:8]) + (", ..." if len(self.names) > 8 else "")
            if self.names_are_numbers:
                return f"expected a class name ({shown}), received "
            return f"expected a class name ({shown}) or an index in [0, {self.num_labels}), received "
        return f"expected a class index in [0, {self.num_labels}), received "

    def _unless_numbers(self) -> str:
        return (" (the class names are numbers, so a value is a name, never an index)"
                if self.names_are_numbers else "")

    def check_stored(self, stored: dict[str, tuple[str, list[Any]]]) -> str | None:
        problem = super().check_stored(stored)
        low, high = self.first_id, self.first_id + self.num_labels
        if self.align is not None:
            low = aligned.IGNORE
            if problem is None and self.padded_to is not None and len(stored[self.record_key][1]) != self.padded_to:
                return f"expected {self.padded_to} labels (the text's max_length), found {len(stored[self.record_key][1])}"
        if problem is None and not all(low <= value < high for value in stored[self.record_key][1]):
            return f"a class {'id' if self.first_id else 'index'} is outside [{low}, {high})"
        return problem

    def check_columns(self, columns: dict[str, StoredColumn]) -> np.ndarray:
        wrong = super().check_columns(columns)
        column = columns[self.record_key]
        if column.kind == "int64" and len(column.values):
            low = aligned.IGNORE if self.align is not None else self.first_id
            if self.padded_to is not None:
                wrong |= column.counts != self.padded_to
            wrong |= column.rows_where((column.values < low) | (column.values >= low + self.num_labels))
        return wrong

    def describe(self) -> str:
        if self.align is not None:
            return (f"class_label ({self.num_labels} classes) int64 [{self.padded_to or 'null'}] (on the pieces of "
                    f"`{self.align.words}`, -1 ignored)")
        return f"class_label ({self.num_labels} classes) {super().describe().split(' ', 1)[1]}"

    # ---- `align: words` (features/aligned.py) ------------------------------------------------------
    @property
    def holds_objects(self) -> bool:
        return self.align is None and super().holds_objects

    @property
    def ids_per_object(self) -> bool:
        return self.align is None and super().ids_per_object

    def linked(self, features: Mapping[str, Feature], at: At) -> "ClassLabelFeature":
        """Aligned labels with the text feature whose pieces they go on."""
        return self if self.align is None else aligned.linked(self, features, at)

    @property
    def linked_columns(self) -> list[str]:
        """Aligned labels read their text's words too, to place each label on its word's pieces."""
        return [self.aligned_to.source_name] if self.align is not None and self.aligned_to is not None else []

    def encode(self, values: Sequence[Any], context: EncodeContext) -> dict[str, Values]:
        if self.align is not None:
            return aligned.encode(self, values, context)
        return super().encode(values, context)

    def statistics_values(self, encoded: dict[str, Values]) -> Values:
        """Aligned labels: the labelled pieces' (not the ignored ones')."""
        values = encoded[self.record_key]
        return values if self.align is None else aligned.labelled(values)

    def parsing(self) -> dict[str, ParseSpec]:
        if self.padded_to is not None:  # as long as its text's ids, padded
            return {self.record_key: ("fixed", "int64", [self.padded_to])}
        return super().parsing()

    def decoding(self, options: Any = None) -> list[DecodeStep]:
        """Aligned labels: padded with -1 (ignored) to the batch's longest, as their text's ids are."""
        if self.align is None:
            return super().decoding(options)
        return [] if self.padded_to is not None else [("padded_ids", {"pad": aligned.IGNORE})]


register("class_label")(ClassLabelFeature)


def class_order(names: Iterable[Any]) -> list[str]:
    """Class names found in data (values, sub-folders), in index order: by number when every name
    is one (`0, 1, 2, ..., 10`: "10" is index 10, not 2 as text would sort it), else as text."""
    texts = sorted({str(name) for name in names})
    numbers = [_number(text) for text in texts]
    if texts and all(number is not None for number in numbers):
        return [text for _, text in sorted(zip(numbers, texts))]
    return texts


def _number(text: str) -> float | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return number if np.isfinite(number) and text.strip() == text else None


def _whole_number_text(value: Any) -> str | None:
    """`"3"`, `3`, `3.0` and `"3.0"` as "3"; None for anything that isn't a whole number."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return str(int(value)) if np.isfinite(value) and float(value).is_integer() else None
    if isinstance(value, str):
        match = _WHOLE_NUMBER.match(value)
        return str(int(match.group(1))) if match else None
    return None


_WHOLE_NUMBER = re.compile(r"\s*([+-]?[0-9]+)(?:\.0*)?\s*\Z")
