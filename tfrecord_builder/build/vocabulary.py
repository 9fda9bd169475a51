"""Learned vocabularies (`type: text` with `vocabulary:`): a pass over the train split's texts
before the records are encoded, and the tokenizer it learns, written beside the shards.

    Steps.count_words(task) per task -> every one -> words_from -> learned_spec -> the build

The pass reads every task (as a stratified build's first pass does, and after it: a record's
split may need the strata), keeps the rows whose split is the train split (`train_split`: the one
named `train`, else the first the spec declares) and counts the words of their texts as
`text.words` splits them (BERT's basic tokenization, which every learned tokenizer applies before
its vocabulary). No other split's text is counted. The counts are a Counter a task, summed: the
sum depends on no order, so the vocabulary is the same whatever the runner, the worker count or the
order the tasks finish in; `text.learn` makes the same bytes from the same counts.

A row whose split is decided as the build decides it: by the source (a path per split), by its
key's hash (fractions), by an earlier version (`--keep-splits`) or by its class and hash
(`stratify:`). Under `on_error: skip` a row another feature's value would skip is not counted (its
record is not in the train split); a text that is not text (missing, not UTF-8) is not counted
either, and the encoding pass that follows reports it (or skips it) as it would any text.
"""
from __future__ import annotations

import collections
import dataclasses
import hashlib
import os
from typing import Iterable, Mapping

import numpy as np

from ..atomic import AtomicFile
from ..builders.base import Batch, Builder, PendingBatch, parsed_batch
from ..errors import DataError
from ..features import Feature
from ..features.text import TextFeature
from ..spec.model import Spec
from ..write.keys import assign_splits, hash_keys, member_hashes
from ..write.membership import KeptSplits
from ..write.strata import Strata
from .encoding import _encoded, record_classes
from .plan import ReadTask, task_batches

# the words of one task's (or batch's) train texts, by feature: Counter(word -> times seen)
WordCounts = dict[str, collections.Counter]
# one task's pass: (its index, its counts, the error that stopped it or None)
TaskWords = tuple[int, WordCounts, "str | None"]


def learned_features(spec: Spec) -> dict[str, TextFeature]:
    """The spec's texts whose vocabulary the build learns (and hasn't yet)."""
    return {name: feature for name, feature in spec.features.items() if feature.to_learn}  # type: ignore[misc]


def train_split(spec: Spec) -> str:
    """The split a vocabulary is learned from: the one named `train`, else the first declared."""
    return "train" if "train" in spec.splits else next(iter(spec.splits))


def _other_features(spec: Spec) -> dict[str, Feature]:
    return {name: feature for name, feature in spec.features.items() if not feature.to_learn}


def count_for_build(spec: Spec, split: str | None, batch: Batch | PendingBatch, strata: Strata | None = None,
                    keep: KeptSplits | None = None) -> tuple[WordCounts, int]:
    """The words of the batch's train-split texts, by feature, and the rows read (the pass's
    stage over one batch, in any process)."""
    batch = parsed_batch(batch)
    read = len(batch) + len(batch.broken)
    features = learned_features(spec)
    counts: WordCounts = {name: collections.Counter() for name in features}
    train = train_split(spec)
    names = list(spec.splits)
    if not len(batch) or (split is not None and split != train):
        return counts, read
    rows = np.arange(len(batch))
    hashes = hash_keys(batch.keys, spec.output.seed)
    if spec.on_error == "skip" or (split is None and spec.stratify is not None):
        # the rows a build keeps (skipped for another feature's value: no record), with the label's classes
        others = (_other_features(spec) if spec.on_error == "skip" or spec.stratify is None
                  else {spec.stratify: spec.features[spec.stratify]})
        if others:
            _, encoded, good, _ = _encoded(spec, others, batch, framed=False)
            if encoded is None:
                return counts, read
            if good is not None:
                rows, hashes = np.asarray(good, np.int64), hashes[good]
            if split is None and spec.stratify is not None:
                assert strata is not None, "a stratified spec's splits need the strata of its first pass"
                rows = rows[strata.assign(record_classes(spec, encoded), hashes) == names.index(train)]
    if split is None and spec.stratify is None:
        assignment = assign_splits(hashes, list(spec.splits.values()))
        if keep is not None:  # --keep-splits: a key an earlier version holds keeps its split there
            before = keep.splits_of(member_hashes([batch.keys[row] for row in rows.tolist()]))
            assignment = np.where(before >= 0, before, assignment)
        rows = rows[assignment == names.index(train)]
    chosen = rows.tolist()
    for name, feature in features.items():
        lowercase = True if feature.lowercase is None else feature.lowercase
        for column in feature.source_names:
            values = batch.columns.get(column, [])
            for row in chosen:
                _count(counts[name], values[row] if row < len(values) else None, feature.words, lowercase)
    return counts, read


def _count(counter: collections.Counter, value: object, words: bool, lowercase: bool) -> None:
    """Adds the words of one value: a text (str, or UTF-8 bytes), or with `words` a list of words;
    anything else is left to the encoding pass to report."""
    from .. import text
    if isinstance(value, (bytes, bytearray, memoryview)):
        try:
            value = bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return
    pieces = value if words and isinstance(value, (list, tuple)) else [value] if not words else []
    for piece in pieces:
        if not isinstance(piece, str):
            continue
        try:
            counter.update(text.words(piece, lowercase))
        except (TypeError, UnicodeEncodeError):  # a lone surrogate: the encoding pass says which row
            continue


def count_task(spec: Spec, builder: Builder, task: ReadTask, strata: Strata | None = None,
               keep: KeptSplits | None = None) -> TaskWords:
    """The pass over one task: its train texts' words, and the error that stopped it (None)."""
    counts: WordCounts = {name: collections.Counter() for name in learned_features(spec)}
    try:
        for batch in task_batches(spec, builder, task):
            summed_into(counts, count_for_build(spec, task.split, batch, strata, keep)[0])
    except DataError as error:
        return task.index, counts, str(error)
    return task.index, counts, None


def summed_into(total: WordCounts, counts: Mapping[str, collections.Counter]) -> WordCounts:
    """Adds `counts` into `total` (a sum: the order counts are added in changes nothing)."""
    for name, counter in counts.items():
        total.setdefault(name, collections.Counter()).update(counter)
    return total


def words_from(tasks: Iterable[TaskWords]) -> WordCounts:
    """Every task's counts summed; raises the first error in task order (the one the local runner,
    reading in that order, stops at)."""
    tasks = sorted(tasks, key=lambda task: task[0])
    error = next((failed for _, _, failed in tasks if failed is not None), None)
    if error is not None:
        raise DataError(error)
    total: WordCounts = {}
    for _, counts, _ in tasks:
        summed_into(total, counts)
    return total


@dataclasses.dataclass(frozen=True)
class LearnedFile:
    """A learned vocabulary's file, for the dataset's folder."""

    feature: str
    name: str  # its file name there: FEATURE.vocab.txt or FEATURE.tokenizer.json
    data: bytes
    vocab_size: int = 0  # how many ids its tokenizer has

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def learned_spec(spec: Spec, counts: Mapping[str, collections.Counter]) -> tuple[Spec, list[LearnedFile]]:
    """The spec with each vocabulary learned from `counts` (a learned text then holds its tokenizer
    and records it, as a text with a tokenizer file does), and the files to write. Raises DataError
    where the train split gave a text no word to learn from, or a learned vocabulary differs from
    the one the spec's `recorded:` pins."""
    from .. import text
    train = train_split(spec)
    features = dict(spec.features)
    files: list[LearnedFile] = []
    for name, feature in learned_features(spec).items():
        vocabulary = feature.vocabulary
        assert vocabulary is not None
        counted = counts.get(name, collections.Counter())
        kept = sum(1 for count in counted.values() if count >= vocabulary.min_count)
        if not kept:
            seen = (f"no word seen at least {vocabulary.min_count} times (min_count) among its {len(counted):,}"
                    if counted else "no text")
            raise DataError(f"feature `{name}`: the {train} split has {seen} to learn a vocabulary from "
                            f"(vocabulary: kind {vocabulary.kind}, size {vocabulary.size}); expected text in "
                            f"`{'`, `'.join(feature.source_names)}` of its records")
        lowercase = True if feature.lowercase is None else feature.lowercase
        learned = text.learn(counted, vocabulary.kind, vocabulary.size, vocabulary.min_count, lowercase)
        file = f"{name}.{learned.file_name}"  # FEATURE.vocab.txt or FEATURE.tokenizer.json
        sha256 = hashlib.sha256(learned.data).hexdigest()
        if feature.recorded is not None and feature.recorded.sha256 != sha256:
            raise DataError(f"feature `{name}`: the vocabulary learned from the {train} split has sha256 "
                            f"{sha256[:12]}..., not the {feature.recorded.sha256[:12]}... its `recorded:` pins: the "
                            "train split's texts changed")
        features[name] = feature.with_learned(learned, file)
        files.append(LearnedFile(name, file, learned.data, learned.tokenizer.vocab_size))
    return spec.with_features(features), files


def write_learned(folder: str, files: Iterable[LearnedFile]) -> None:
    """Writes each learned file into the (staging) `folder`, whole or not at all; a file already
    there with the same bytes (a resumed build's) is kept as it is."""
    for learned in files:
        path = os.path.join(folder, learned.name)
        if os.path.exists(path):
            with open(path, "rb") as file:
                if hashlib.sha256(file.read()).digest() == hashlib.sha256(learned.data).digest():
                    continue
        with AtomicFile(path) as file:
            file.write(learned.data)


__all__ = ["LearnedFile", "TaskWords", "WordCounts", "count_for_build", "count_task", "learned_features",
           "learned_spec", "summed_into", "train_split", "words_from", "write_learned"]
