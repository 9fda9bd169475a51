"""Per-split, per-feature statistics gathered while encoding, for dataset_info.json.

Numbers: count, min, max, mean, std (merged batch by batch with Chan's parallel formula).
Strings: vocabulary size and the most frequent values (exact up to `MAX_VOCABULARY` distinct
values, then marked as a lower bound), while every value is text (`is_text`) of at most
`MAX_VOCABULARY_VALUE` bytes; from the first that isn't (an instance mask's PNG, an essay),
none, so memory stays bounded: the values' sizes in bytes instead (`value_bytes`: min, max,
mean, std), and `binary` when some value isn't text. Variable-length features: min/max/mean of the lengths.
Values a feature tallies (`Counted.tallied`: a text's unknown token): how many, in how many records.
What a feature's values mark per record (`Counted.marked`, `Values.marks`: a text's ids cut by
max_length): how many in all, in how many records, and those records' share (`marked`). Ids of a
vocabulary (`Counted.ids`: a text's token ids): every id counted exactly, as sorted (id, count)
pairs summed in any order, so the figures are the same however the batches are merged; written
as the tokens (ids but the template's special ones), the unknown ones and their share, the ids
used and their share of the vocabulary (`coverage`), and the `TOP_TOKENS` most frequent (ties by
id), never the whole table (a 30,000-id vocabulary would be 30,000 numbers a split).
Class labels: examples per class. Images: height and width. (What a feature's values are counted
as is its type's to say: `Feature.statistics_values` and `Feature.counted`.) Sequence features: min/max/mean of
the steps per record, and how many records have each number of steps (`steps.counts`, up to
`MAX_STEP_COUNTS` different numbers: what a bucketed `input_fn` counts its batches from). Every
feature: how many records had no value in the source (`num_missing`, filled by the `default:` or
left empty), when any had, and of those how many the `default:` filled (`num_filled`): the other
figures describe only the values the source gave, so a default of 0 or NaN doesn't move the mean
or draw a bar at 0. (Statistics of earlier builds lack `num_filled` and counted filled values in.)
Features gathered from several columns (`columns:`): also per column (`per_column`: min, max,
mean and number of its finite values, and its missing cells), what the report lists for a wide table.
"""
from __future__ import annotations

import heapq
import operator
import re
from collections import Counter
from typing import Any

import numpy as np

from ..features import Feature
from ..features.described import Counted, CountedIds
from ..features.values import Values, any_per_group

MAX_VOCABULARY = 100_000
# bytes: a longer value (or one that isn't text) ends the feature's vocabulary. Such values are
# rarely repeated, can't be shown as a top value, and 100,000 of them would hold 100,000 copies
# (an instance mask's PNG is kilobytes): at most 256 bytes each, a full vocabulary is ~40 MB
MAX_VOCABULARY_VALUE = 256
TOP_VALUES = 10
# what makes bytes binary rather than text, besides not being UTF-8: a C0 control character other
# than tab, line feed and carriage return (a PNG's header has NUL, ^Z; no text has them)
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")
MAX_STEP_COUNTS = 10_000  # different numbers of steps listed; beyond them, none are
TOP_TOKENS = 20  # a vocabulary's ids listed, the most frequent first


def add_counts(counts: Counter[Any], more: Counter[Any]) -> None:
    """`counts.update(more)`, the same counts in the same order, without a step of Python per
    value: `Counter.update` loops in Python over a mapping's values (a table's vocabularies of
    5,000 values, merged from each batch of two workers: 30-50 ms of the build's process; a
    sequence's counts of steps, up to MAX_STEP_COUNTS of them)."""
    if not counts:
        dict.update(counts, more)
        return
    common = list(more.keys() & counts.keys())
    sums = list(zip(common, map(operator.add, map(counts.__getitem__, common), map(more.__getitem__, common))))
    dict.update(counts, more)  # new values at the end, in their order; the common ones keep their places
    dict.update(counts, sums)


class FeatureStatistics:
    """Accumulates one feature's statistics over batches, as the feature says they are counted
    (`Feature.counted`: its values, its classes or its images' sizes)."""

    def __init__(self, feature: Feature):
        self.feature = feature
        self._counted = feature.counted  # asked once: a feature may make it anew each time
        self.num_values = 0
        self.non_finite = 0  # NaN and ±inf (allow_nan): counted apart from the moments
        self.missing = 0  # records whose source had no value (the runner counts them, before defaults)
        self.filled = 0  # of those, records the default filled (their values left out of the rest)
        self.mean = 0.0
        self.m2 = 0.0
        self.low: float | None = None
        self.high: float | None = None
        self.vocabulary: Counter[bytes] = Counter()
        self.vocabulary_capped = False
        self.value_bytes = _Moments()  # bytes values: each one's size in bytes
        self.binary = False  # some bytes value isn't text: no vocabulary
        self.long = False  # some bytes value is over MAX_VOCABULARY_VALUE bytes: no vocabulary
        self.lengths = _Moments()
        self.classes: np.ndarray | None = None
        self.kind: str | None = None
        self.image_sizes = [_Moments(), _Moments()]  # heights, widths
        self.steps = _Moments()  # sequence lengths
        columns = self._counted.columns
        self.per_column = _PerColumn(len(columns)) if columns is not None else None
        # records by number of steps; None past MAX_STEP_COUNTS numbers, or restored from an older checkpoint
        self.step_counts: Counter[int] | None = Counter()
        # Counted.tallied: by name, [values equal to its value, records holding one]
        self.tallies = {name: [0, 0] for name, _ in self._counted.tallied}
        # Counted.marked: by name, [the marks' sum, records marked, records seen] (seen: a packed
        # text's records are no variable number of values, whose lengths would count them)
        self.marked = {name: [0, 0, 0] for name in self._counted.marked}
        self.ids = _IdCounts() if self._counted.ids is not None else None

    @property
    def counted(self) -> Counted:
        return self._counted

    def add(self, values: Values) -> None:
        feature, counted = self.feature, self.counted.kind
        self.kind = values.kind
        if counted == "image_sizes":
            shapes = np.asarray(values.values, np.int64).reshape(-1, 3)
            self.image_sizes[0].add(shapes[:, 0])
            self.image_sizes[1].add(shapes[:, 1])
            return
        if values.steps is not None:
            self.steps.add(values.steps)
            if self.step_counts is not None:
                numbers, counts = np.unique(np.asarray(values.steps, np.int64), return_counts=True)
                self._count_steps(Counter(dict(zip(numbers.tolist(), counts.tolist()))))
        if self.per_column is not None and values.kind != "bytes" and counted == "values":
            self.per_column.add(np.asarray(values.values, dtype=np.float64))
        if feature.is_variable:
            inner = feature.inner_size
            self.lengths.add(values.counts // inner)
        if self.tallies and values.kind != "bytes":
            self._tally(values)
        for name, marks in (values.marks or {}).items():
            if name in self.marked:
                self.marked[name][0] += int(marks.sum())
                self.marked[name][1] += int(np.count_nonzero(marks))
                self.marked[name][2] += len(marks)
        if self.ids is not None:
            self.ids.add(np.asarray(values.values, np.int64))
        if counted == "classes":
            # counted by index: `first_id: 1` stores index + 1
            indices = np.asarray(values.values, np.int64) - feature.first_class_id
            counts = np.bincount(indices, minlength=len(feature.classes or ()))
            self.classes = counts if self.classes is None else self.classes + counts
        elif values.kind == "bytes":
            self._add_bytes(values.values)
        else:
            self._add_numbers(np.asarray(values.values, dtype=np.float64))

    def _tally(self, values: Values) -> None:
        numbers = np.asarray(values.values)
        for name, value in self.counted.tallied:
            hits = numbers == value
            records = any_per_group(hits, values.counts)  # per row (per step, for a sequence)
            if values.steps is not None:
                records = any_per_group(records, values.steps)
            self.tallies[name][0] += int(hits.sum())
            self.tallies[name][1] += int(records.sum())

    def _add_bytes(self, values: list[bytes] | np.ndarray) -> None:
        sizes = np.fromiter(map(len, values), np.int64, len(values))
        self.value_bytes.add(sizes)
        self.num_values += len(values)
        self.long = self.long or bool(len(sizes) and int(sizes.max()) > MAX_VOCABULARY_VALUE)
        self.binary = self.binary or not is_text(values)
        if self.binary or self.long:
            self.vocabulary.clear()
        elif not self.vocabulary_capped:
            self.vocabulary.update(values)
            if len(self.vocabulary) > MAX_VOCABULARY:
                self.vocabulary_capped = True

    @property
    def has_vocabulary(self) -> bool:
        """Whether the bytes values are counted in a vocabulary (all text, none long)."""
        return not (self.binary or self.long)

    def add_missing(self, missing: np.ndarray) -> None:
        """Counts the records whose source had no value (per row; for gathered columns rows ×
        columns: a record missing any, and each column's missing cells)."""
        if missing.ndim == 2:
            if self.per_column is not None:
                self.per_column.missing += missing.sum(axis=0)
            missing = missing.any(axis=1)
        self.missing += int(missing.sum())

    def _add_numbers(self, numbers: np.ndarray) -> None:
        finite = np.isfinite(numbers)
        self.non_finite += len(numbers) - int(finite.sum())
        numbers = numbers[finite]
        if len(numbers):
            mean = float(numbers.mean())
            self._merge_moments(len(numbers), mean, float(((numbers - mean) ** 2).sum()),
                                float(numbers.min()), float(numbers.max()))

    def _merge_moments(self, count: int, mean: float, m2: float, low: float, high: float) -> None:
        """Chan et al.'s pairwise update of count, mean and the sum of squared deviations."""
        total = self.num_values + count
        delta = mean - self.mean
        self.mean += delta * count / total
        self.m2 += m2 + delta * delta * self.num_values * count / total
        self.num_values = total
        self.low = low if self.low is None else min(self.low, low)
        self.high = high if self.high is None else max(self.high, high)

    def merge(self, other: "FeatureStatistics") -> None:
        """Adds another accumulator's values (e.g. a batch's, from a worker process)."""
        self.kind = self.kind or other.kind
        if other.classes is not None:
            self.classes = other.classes if self.classes is None else self.classes + other.classes
        if other.kind == "bytes":
            self.value_bytes.merge(other.value_bytes)
            self.binary, self.long = self.binary or other.binary, self.long or other.long
            if not self.has_vocabulary:  # (whichever part met the value: the same figures in any order)
                self.vocabulary.clear()
            elif not self.vocabulary_capped:
                add_counts(self.vocabulary, other.vocabulary)
                self.vocabulary_capped = other.vocabulary_capped or len(self.vocabulary) > MAX_VOCABULARY
            self.num_values += other.num_values
        elif other.low is not None:
            self._merge_moments(other.num_values, other.mean, other.m2, other.low, other.high)
        self.non_finite += other.non_finite
        self.missing += other.missing
        self.filled += other.filled
        self.lengths.merge(other.lengths)
        self.steps.merge(other.steps)
        if self.per_column is not None and other.per_column is not None:
            self.per_column.merge(other.per_column)
        if other.step_counts is None:
            self.step_counts = None if other.steps.count else self.step_counts
        elif self.step_counts is not None:
            self._count_steps(other.step_counts)
        for mine, theirs in zip(self.image_sizes, other.image_sizes):
            mine.merge(theirs)
        for name, (found, records) in other.tallies.items():
            self.tallies[name][0] += found
            self.tallies[name][1] += records
        for name, counts in other.marked.items():
            self.marked[name] = [mine + theirs for mine, theirs in zip(self.marked[name], counts)]
        if self.ids is not None and other.ids is not None:
            self.ids.merge(other.ids)

    def _count_steps(self, counts: Counter[int]) -> None:
        assert self.step_counts is not None
        add_counts(self.step_counts, counts)
        if len(self.step_counts) > MAX_STEP_COUNTS:
            self.step_counts = None

    def state(self) -> dict[str, Any]:
        """Everything accumulated, as JSON (for a build's checkpoint); `restore` reads it back exactly."""
        return {
            "num_values": self.num_values, "non_finite": self.non_finite, "missing": self.missing, "filled": self.filled, "mean": self.mean, "m2": self.m2, "low": self.low, "high": self.high,
            # latin-1 maps every byte to one character: any bytes survive JSON; the order is kept for ties
            "vocabulary": [[value.decode("latin-1"), count] for value, count in self.vocabulary.items()],
            "vocabulary_capped": self.vocabulary_capped, "lengths": self.lengths.state(),
            "value_bytes": self.value_bytes.state(), "binary": self.binary, "long": self.long,
            "classes": None if self.classes is None else self.classes.tolist(), "kind": self.kind,
            "image_sizes": [moments.state() for moments in self.image_sizes], "steps": self.steps.state(),
            "per_column": None if self.per_column is None else self.per_column.state(),
            "step_counts": None if self.step_counts is None else sorted(self.step_counts.items()),
            "tallies": self.tallies, "marked": self.marked,
            "ids": None if self.ids is None else self.ids.state(),
        }

    def restore(self, state: dict[str, Any]) -> None:
        self.num_values, self.mean, self.m2 = state["num_values"], state["mean"], state["m2"]
        self.non_finite = state.get("non_finite", 0)
        self.missing = state.get("missing", 0)
        self.filled = state.get("filled", 0)
        self.low, self.high, self.kind = state["low"], state["high"], state["kind"]
        self.vocabulary = Counter({value.encode("latin-1"): count for value, count in state["vocabulary"]})
        self.vocabulary_capped = state["vocabulary_capped"]
        self.lengths.restore(state["lengths"])
        if "value_bytes" in state:  # (absent from an older checkpoint, which a build of this version never resumes)
            self.value_bytes.restore(state["value_bytes"])
            self.binary, self.long = state["binary"], state["long"]
        self.classes = None if state["classes"] is None else np.array(state["classes"], dtype=np.int64)
        for moments, saved in zip(self.image_sizes, state["image_sizes"]):
            moments.restore(saved)
        self.steps.restore(state["steps"])
        if self.per_column is not None and state.get("per_column") is not None:
            self.per_column.restore(state["per_column"])
        for name, counts in state.get("tallies", {}).items():
            if name in self.tallies:
                self.tallies[name] = list(counts)
        for name, counts in state.get("marked", {}).items():
            if name in self.marked:
                self.marked[name] = list(counts) + [0] * (3 - len(counts))  # (an older checkpoint: 2)
        if self.ids is not None and state.get("ids") is not None:
            self.ids.restore(state["ids"])
        saved = state.get("step_counts")  # (none in a checkpoint of an earlier version: then unknown)
        self.step_counts = None if saved is None else Counter({steps: count for steps, count in saved})

    def to_dict(self) -> dict[str, Any]:
        out = self._summary()
        if self.missing:
            out["num_missing"] = self.missing
        if self.filled:
            out["num_filled"] = self.filled
        if self.per_column is not None:
            out["per_column"] = self.per_column.to_dict()
        return out

    def _summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.counted.kind == "image_sizes":
            heights, widths = self.image_sizes
            if heights.count:
                out.update(num_images=heights.count, height=heights.to_dict(), width=widths.to_dict(),
                           channels=self.counted.channels)
            return out
        if self.counted.kind == "classes":
            counts = self.classes.tolist() if self.classes is not None else []
            out["classes"] = {name: count for name, count in zip(self.feature.classes or (), counts)}
        elif self.kind == "bytes" and not self.has_vocabulary:
            out["num_values"] = self.num_values
            if self.binary:
                out["binary"] = True
            if self.value_bytes.count:
                out["value_bytes"] = self.value_bytes.to_dict()
        elif self.kind == "bytes":
            out["num_values"] = self.num_values
            out["vocabulary_size"] = len(self.vocabulary)
            if self.vocabulary_capped:
                out["vocabulary_size_at_least"] = out.pop("vocabulary_size")
            # ties by value, so the order the records came in doesn't show
            top = heapq.nsmallest(TOP_VALUES, self.vocabulary.items(), key=lambda item: (-item[1], item[0]))
            out["top_values"] = [{"value": value.decode("utf-8", "backslashreplace"), "count": count}
                                 for value, count in top]
        elif self.low is not None or self.non_finite:
            if self.low is not None:  # over the finite values
                out.update(num_values=self.num_values, min=self.low, max=self.high, mean=self.mean,
                           std=float(np.sqrt(self.m2 / self.num_values)))
            if self.non_finite:
                out["num_non_finite"] = self.non_finite
        if self.tallies:
            out["tallies"] = {name: {"values": found, "records": records}
                              for name, (found, records) in self.tallies.items()}
        records = self.steps.count or self.lengths.count  # (a variable number of values, or steps)
        if self.marked:
            out["marked"] = {name: {"values": total, "records": marked,
                                    "rate": marked / (seen or records) if seen or records else 0.0}
                             for name, (total, marked, seen) in self.marked.items()}
        if self.ids is not None and self.counted.ids is not None:
            out["tokens"] = self.ids.to_dict(self.counted.ids)
        if self.lengths.count:
            out["length"] = self.lengths.to_dict()
        if self.steps.count:
            out["steps"] = self.steps.to_dict()
            if self.step_counts is not None:  # by number of steps, in order (JSON's keys are text)
                out["steps"]["counts"] = {str(steps): count for steps, count in sorted(self.step_counts.items())}
        return out


def is_text(values: list[bytes] | np.ndarray) -> bool:
    """Whether every value is text: UTF-8 without a control character other than tab, line feed
    and carriage return. (Joined by line feeds, checked in one pass: a value cut inside a UTF-8
    character stays invalid beside its neighbour.)"""
    joined = b"\n".join(values)
    if _CONTROL.search(joined):
        return False
    try:
        joined.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class _PerColumn:
    """Per column of a gathered feature (values come as rows of `n`): its finite values' count,
    sum, min and max, and its missing cells; vectorised over the columns."""

    def __init__(self, n: int):
        self.count = np.zeros(n, np.int64)
        self.total = np.zeros(n, np.float64)
        self.low = np.full(n, np.inf)
        self.high = np.full(n, -np.inf)
        self.missing = np.zeros(n, np.int64)

    def add(self, flat: np.ndarray) -> None:
        n = len(self.count)
        if not n or not len(flat):
            return
        table = flat.reshape(-1, n)
        finite = np.isfinite(table)
        self.count += finite.sum(axis=0)
        self.total += np.where(finite, table, 0.0).sum(axis=0)
        self.low = np.minimum(self.low, np.where(finite, table, np.inf).min(axis=0))
        self.high = np.maximum(self.high, np.where(finite, table, -np.inf).max(axis=0))

    def merge(self, other: "_PerColumn") -> None:
        self.count += other.count
        self.total += other.total
        self.low = np.minimum(self.low, other.low)
        self.high = np.maximum(self.high, other.high)
        self.missing += other.missing

    def to_dict(self) -> dict[str, Any]:
        seen = self.count > 0
        mean = np.divide(self.total, self.count, out=np.zeros_like(self.total), where=seen)
        out: dict[str, Any] = {}
        if seen.any():
            out.update({key: [float(value) if known else None for value, known in zip(values.tolist(), seen.tolist())]
                        for key, values in (("min", self.low), ("max", self.high), ("mean", mean))})
        out["num_values"] = self.count.tolist()
        out["num_missing"] = self.missing.tolist()
        return out

    def state(self) -> dict[str, Any]:
        seen = self.count > 0  # (±inf where no value yet: JSON has no infinity)
        return {"count": self.count.tolist(), "total": self.total.tolist(), "missing": self.missing.tolist(),
                "low": np.where(seen, self.low, 0.0).tolist(), "high": np.where(seen, self.high, 0.0).tolist()}

    def restore(self, state: dict[str, Any]) -> None:
        self.count = np.array(state["count"], np.int64)
        self.total = np.array(state["total"], np.float64)
        self.missing = np.array(state["missing"], np.int64)
        seen = self.count > 0
        self.low = np.where(seen, np.array(state["low"], np.float64), np.inf)
        self.high = np.where(seen, np.array(state["high"], np.float64), -np.inf)


class _IdCounts:
    """Exact counts of a vocabulary's ids: the ids met (ascending) and each one's count, so what a
    batch sends back from a worker holds only the ids it met (at most the vocabulary's size), and
    sums of the same counts in any order are the same."""

    def __init__(self) -> None:
        self.ids = np.zeros(0, np.int64)
        self.counts = np.zeros(0, np.int64)

    def add(self, values: np.ndarray) -> None:
        if len(values):
            ids, counts = np.unique(values, return_counts=True)
            self._add(ids, counts.astype(np.int64))

    def merge(self, other: "_IdCounts") -> None:
        self._add(other.ids, other.counts)

    def _add(self, ids: np.ndarray, counts: np.ndarray) -> None:
        if not len(self.ids):
            self.ids, self.counts = ids.astype(np.int64), counts.astype(np.int64)
            return
        self.ids, where = np.unique(np.concatenate([self.ids, ids]), return_inverse=True)
        summed = np.zeros(len(self.ids), np.int64)
        np.add.at(summed, where, np.concatenate([self.counts, counts]))
        self.counts = summed

    def to_dict(self, described: CountedIds) -> dict[str, Any]:
        """The tokens (ids but `described.special`), the unknown ones and their share, the ids used
        of the vocabulary's `described.size` and the TOP_TOKENS most frequent tokens."""
        text = ~np.isin(self.ids, np.asarray(described.special, np.int64))
        tokens = int(self.counts[text].sum())
        out: dict[str, Any] = {"count": tokens}
        if described.unknown is not None:
            unknown = int(self.counts[self.ids == described.unknown].sum())
            out.update(unknown=unknown, unknown_rate=unknown / tokens if tokens else 0.0)
        used = int(np.count_nonzero((self.ids >= 0) & (self.ids < described.size)))
        out.update(vocab_size=described.size, ids_used=used, coverage=used / described.size if described.size else 0.0)
        ids, counts = self.ids[text], self.counts[text]
        order = np.lexsort((ids, -counts))[:TOP_TOKENS]  # by count, ties by id
        out["top"] = [{"id": int(ids[index]), "count": int(counts[index])} for index in order.tolist()]
        return out

    def state(self) -> list[list[int]]:
        return [self.ids.tolist(), self.counts.tolist()]

    def restore(self, state: list[list[int]]) -> None:
        self.ids, self.counts = np.array(state[0], np.int64), np.array(state[1], np.int64)


class _Moments:
    """Count, sum, sum of squares, min and max of whole numbers (lengths, sizes): exact, so any
    order of merging gives the same figures."""

    def __init__(self) -> None:
        self.count = 0
        self.total = 0
        self.squares: int | None = 0  # None after restoring a checkpoint of before 0.3
        self.low: int | None = None
        self.high: int | None = None

    def add(self, lengths: np.ndarray) -> None:
        if not len(lengths):
            return
        self.count += len(lengths)
        self.total += int(lengths.sum())
        if self.squares is not None:
            self.squares += _sum_of_squares(lengths)
        low, high = int(lengths.min()), int(lengths.max())
        self.low = low if self.low is None else min(self.low, low)
        self.high = high if self.high is None else max(self.high, high)

    def merge(self, other: "_Moments") -> None:
        if other.count:
            self.count += other.count
            self.total += other.total
            self.squares = None if self.squares is None or other.squares is None else self.squares + other.squares
            self.low = other.low if self.low is None else min(self.low, other.low)
            self.high = other.high if self.high is None else max(self.high, other.high)

    def to_dict(self) -> dict[str, Any]:
        out = {"min": self.low, "max": self.high, "mean": self.total / self.count}
        if self.squares is not None:
            # from exact integers, (n·Σx² - (Σx)²) / n², so no cancellation and any merge order agrees
            variance = (self.count * self.squares - self.total * self.total) / (self.count * self.count)
            out["std"] = float(np.sqrt(variance))
        return out

    def state(self) -> list[Any]:
        return [self.count, self.total, self.low, self.high, self.squares]

    def restore(self, state: list[Any]) -> None:
        self.count, self.total, self.low, self.high = state[:4]
        self.squares = state[4] if len(state) > 4 else None


def _sum_of_squares(numbers: np.ndarray) -> int:
    """Σx² of whole numbers, exactly: in int64 while it cannot overflow, else in Python's ints."""
    if len(numbers) < 2**20 and int(np.abs(numbers).max()) < 2**21:
        return int(np.square(numbers.astype(np.int64)).sum())
    return int(np.square(numbers.astype(object)).sum())


class SplitStatistics:
    """Statistics of every feature of one split."""

    def __init__(self, features: dict[str, Feature]):
        self.features = {name: FeatureStatistics(feature) for name, feature in features.items()}

    def add(self, name: str, values: Values) -> None:
        self.features[name].add(values)

    def merge(self, other: "SplitStatistics") -> None:
        for name, stats in other.features.items():
            self.features[name].merge(stats)

    def to_dict(self) -> dict[str, Any]:
        return {name: stats.to_dict() for name, stats in self.features.items()}

    def state(self) -> dict[str, Any]:
        return {name: stats.state() for name, stats in self.features.items()}

    def restore(self, state: dict[str, Any]) -> None:
        for name, saved in state.items():
            self.features[name].restore(saved)
