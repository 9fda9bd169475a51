"""`build --dry-run [N]`: a plan of the build before it runs, from a sample through the real path.

The first N records of each split are read, encoded and split exactly as the build does it
(`build/encoding.py`), then parsed back with the generated module's own reading functions
(`read/tfdata.py`, in TensorFlow). The rest of the source is only read and divided into
splits (no encoding, no image decoding), so the record counts, and with them the shard counts,
are exact; sizes, time and memory are the sample's figures scaled up. Nothing is written. A
stratified spec's source is read twice: first each record's class (`stratify:` divides each
class by all of its records), then as above.

It also says what a full build would hide: a class label that is one class in every record
sampled, a feature the source never gives (always its default, or empty), a value that never
changes.
"""
from __future__ import annotations

import gzip
import os
import resource
import time
import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..builders.base import parsed_batch
from ..builders.sources import check_fields, check_sources, source_builders, with_source_classes, with_source_columns
from ..errors import UsageError
from .._tf import tensorflow
from .encoding import classify_for_build, encode_for_build
from .plan import read_tasks, strata_of, task_batches
from .runners.local import counted_words
from .vocabulary import learned_features, learned_spec, train_split
from ..spec.load import load_spec
from ..spec.model import Spec
from ..write.collect import SPILL_BYTES
from ..write.keys import assign_splits, hash_keys
from ..write.order import count_shards
from ..write.stats import SplitStatistics

DEFAULT_SAMPLE = 1000
_FRAME = 16  # a TFRecord's length, its CRC and the data's CRC around each record


@dataclass
class SplitPlan:
    """What the build would make of one split."""

    name: str
    num_examples: int  # exact: every record of the source was read and divided
    sampled: int
    num_bytes: int  # the sample's mean size (compressed, if the spec compresses) times the count
    num_shards: int
    record_bytes: float  # mean framed record, uncompressed

    @property
    def shard_bytes(self) -> float:
        return self.num_bytes / self.num_shards


@dataclass
class DryRun:
    """A build's plan: per split counts, sizes and shards; time and memory; what looked wrong."""

    spec: Spec
    sample: int  # records asked for per split
    splits: dict[str, SplitPlan]
    read_seconds: float  # reading and dividing the whole source
    encode_seconds_per_record: float  # reading and encoding, one process
    workers: int
    peak_bytes: int
    skipped: int = 0  # records of the sample a build would skip (on_error: skip)
    findings: list[str] = field(default_factory=list)

    @property
    def num_examples(self) -> int:
        return sum(split.num_examples for split in self.splits.values())

    @property
    def num_bytes(self) -> int:
        return sum(split.num_bytes for split in self.splits.values())

    @property
    def build_seconds(self) -> float:
        """Reading the source once, and encoding every record in `workers` processes (writing the
        shards, at disk speed, is left out)."""
        return self.read_seconds + self.encode_seconds_per_record * self.num_examples / self.workers

    @property
    def num_sampled(self) -> int:
        return sum(split.sampled for split in self.splits.values())


def dry_run(spec: Spec | str | os.PathLike, sample: int = DEFAULT_SAMPLE, workers: int | None = None) -> DryRun:
    """Plans the build of `spec` from `sample` records per split (see the module's docstring);
    writes nothing. `build --dry-run N` prints it.

    >>> plan = tb.dry_run("specs/wine.yaml", sample=50)
    >>> plan.splits["train"].num_examples, plan.splits["train"].num_shards, plan.findings
    (147, 2, [])
    """
    if isinstance(sample, bool) or not isinstance(sample, int) or sample < 1:
        raise UsageError(f"--dry-run: expected a positive number of records, received {sample!r}")
    if not isinstance(spec, Spec):
        spec = load_spec(spec)
    check_sources(spec)
    builders = source_builders(spec)
    check_fields(spec, builders)
    spec = with_source_columns(with_source_classes(spec, builders), builders)
    by_split = dict(builders)
    learned = _learned(spec, read_tasks(builders), by_split)  # a vocabulary learned from the train split, as built
    spec = learned[0]
    names = list(spec.splits)
    counts = dict.fromkeys(names, 0)
    sampled: dict[str, list[bytes]] = {name: [] for name in names}
    statistics = {name: SplitStatistics(spec.features) for name in names}
    covered = dict.fromkeys(names, 0)  # records the statistics cover: whole batches, so N or a little more
    skipped = 0
    encoding = 0.0
    encoded_rows = 0
    started = time.monotonic()
    tasks = read_tasks(builders)
    # a stratified build divides each class by all its records: their classes are read first
    classified = [classify_for_build(spec, task.split, pending, every_feature=False) for task in tasks
                  for pending in task_batches(spec, by_split[task.split], task)] if spec.stratify else []
    strata = strata_of(spec, classified) if spec.stratify else None
    number = -1  # the batch's place in the source
    for task in tasks:
        for pending in task_batches(spec, by_split[task.split], task):
            number += 1
            if all(len(records) >= sample for records in sampled.values()):
                if strata is not None:  # the first pass has the batch's classes (of the records a build keeps)
                    part = classified[number]
                    for index, count in enumerate(np.bincount(strata.assign(part.classes, part.hashes),
                                                              minlength=len(names)).tolist()):
                        counts[names[index]] += count
                    continue
                batch = parsed_batch(pending)  # the rest is only counted, split by split
                if not len(batch):
                    continue
                if task.split is None:
                    assignment = assign_splits(hash_keys(batch.keys, spec.output.seed), list(spec.splits.values()))
                    for index, count in enumerate(np.bincount(assignment, minlength=len(names)).tolist()):
                        counts[names[index]] += count
                else:
                    counts[task.split] += len(batch)
                continue
            begun = time.monotonic()
            result = encode_for_build(spec, task.split, pending, strata)
            encoding += time.monotonic() - begun
            encoded_rows += result.count + len(result.skipped)
            skipped += len(result.skipped)
            for name, part in result.parts.items():
                counts[name] += part.records.num_rows
                room = sample - len(sampled[name])
                if room > 0:
                    sampled[name].extend(part.records.rows()[:room])
                    statistics[name].merge(part.statistics)
                    covered[name] += part.records.num_rows
    read_seconds = time.monotonic() - started - encoding
    # the build's own peak is this one's so far (TensorFlow, imported below to read back, is not the build's)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    plans = {name: _split_plan(spec, name, counts[name], sampled[name]) for name in names}
    findings = learned[1] + _read_back(spec, sampled) + _suspicious(spec, statistics, sum(covered.values()))
    held = sum(min(plan.num_bytes, SPILL_BYTES) for plan in plans.values())  # records held before they spill
    return DryRun(spec, sample, plans, read_seconds, encoding / max(encoded_rows, 1), workers or os.cpu_count() or 1,
                  peak + held, skipped, findings)


def _learned(spec: Spec, tasks: list, builders: dict) -> tuple[Spec, list[str]]:
    """The spec with its vocabularies learned from every record of the train split the source
    holds (the build's pass, in this process), and a finding that says so."""
    if not learned_features(spec):
        return spec, []
    spec, files = learned_spec(spec, counted_words(spec, tasks, builders, 1, None))
    said = []
    for file in files:
        said.append(f"feature `{file.feature}`: vocabulary learned from the {train_split(spec)} split's texts, "
                    f"{file.vocab_size:,} tokens (sha256 {file.sha256[:12]}...), as the build learns it; "
                    f"it writes it beside the shards as {file.name}")
    return spec, said


def _split_plan(spec: Spec, name: str, count: int, framed: list[bytes]) -> SplitPlan:
    record_bytes = float(np.mean([len(record) for record in framed])) if framed else 0.0
    stored = record_bytes
    if framed and spec.output.compression != "none":
        data = b"".join(framed)
        packed = gzip.compress(data) if spec.output.compression == "gzip" else zlib.compress(data)
        stored = len(packed) / len(framed)
    num_bytes = round(stored * count)
    # as the build counts them: by the records' uncompressed size
    shards = count_shards(count, round(record_bytes * count), spec.output.shards, spec.output.target_shard_bytes)
    return SplitPlan(name, count, len(framed), num_bytes, shards, record_bytes)


def _read_back(spec: Spec, sampled: dict[str, list[bytes]]) -> list[str]:
    """Parses the sample with the generated module's reading functions; what failed, as findings."""
    tf = tensorflow()  # first: it holds back TensorFlow's start-up lines
    from ..read import tfdata as reading  # here, not at the top: it imports TensorFlow

    description = spec.reading()
    findings = []
    for split, framed in sampled.items():
        if not framed:
            continue
        payloads = [record[12:-4] for record in framed]  # unframed: what TFRecordDataset hands on
        try:
            parsed = reading.parse_records(tf.constant(payloads), description)
        except (tf.errors.OpError, ValueError) as error:
            findings.append(f"split {split}: the generated module cannot read the records back: "
                            f"{str(error).splitlines()[0]}")
            continue
        for name in spec.features:
            value = parsed.get(name)
            if value is not None and int(_rows(value)) != len(payloads):
                findings.append(f"feature `{name}`: read back {int(_rows(value))} values for {len(payloads)} records")
    return findings


def _rows(value: Any) -> int:
    return value.nrows() if hasattr(value, "nrows") else (value.dense_shape[0] if hasattr(value, "dense_shape")
                                                          else value.shape[0])


def _suspicious(spec: Spec, statistics: dict[str, SplitStatistics], total: int) -> list[str]:
    """Features whose sample (`total` records) says the spec reads the wrong thing: one class
    only, always missing, one value only."""
    findings: list[str] = []
    if not total:
        return findings
    merged = SplitStatistics(spec.features)  # the sample of every split as one
    for split in statistics.values():
        merged.merge(split)
    for name, feature in spec.features.items():
        stats = merged.features[name]
        where = f"in all {total:,} records sampled"
        if stats.missing >= total:
            filled = "its default" if feature.default_value is not None else "empty"
            findings.append(f"feature `{name}`: the source has no value for it {where}, so it is always "
                            f"{filled}: is `source: {feature.source_name}` the column meant?" if feature.columns is None
                            else f"{filled}: a value is missing in one of its columns in every record")
        elif stats.counted.kind == "classes":
            present: np.ndarray | list[int] = np.flatnonzero(stats.classes) if stats.classes is not None else []
            if len(present) == 1 and total > 1 and len(names := feature.classes or []) > 1:  # (one class only)
                label = names[present[0]] if present[0] < len(names) else str(present[0])
                findings.append(f"feature `{name}`: one class ({label!r}) {where}; expected several "
                                f"(a sorted source? sample more with --dry-run N)")
        elif stats.counted.kind != "values" or stats.counted.measured:
            continue  # (images' sizes; lengths all equal: clips of one second, windows)
        elif stats.low is not None and stats.low == stats.high and total > 1 and not stats.non_finite:
            findings.append(f"feature `{name}`: the same value ({stats.low:g}) {where}")
        elif stats.kind == "bytes" and len(stats.vocabulary) == 1 and stats.num_values >= total > 1:
            value = next(iter(stats.vocabulary)).decode("utf-8", "backslashreplace")
            findings.append(f"feature `{name}`: the same value ({value!r:.40}) {where}")
    return findings
