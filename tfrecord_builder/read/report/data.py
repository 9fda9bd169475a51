"""What a report shows, as plain numbers and texts, before anything is drawn: `report_data`.

Exact counts come from the build's statistics (`tfrecord_builder.json`): values, min, max, mean,
std, classes, top values, lengths, missing, filled and non-finite values. Distributions come from a
sample of records (sample.py): histograms of numbers over bins that span the build's exact min
and max, lengths and steps per record, a few images per class, what binary values are. Every key
of the statistics is optional, as datasets of older versions lack some.

How a feature is shown (its card: numbers, strings, classes, images, boxes, audio, text) is its
type's to say (`Feature.card`, features/described.py), as are its classes (`Feature.classes`).

Token ids (the `text` card) are shown as their tokenizer spells them (`Feature.tokens_of`): the
build's most frequent tokens of each split and the first records read, `[CLS] good movie . [SEP]`;
where the tokenizer file is gone, as ids, and the page says why.

Bytes values that aren't text (the statistics' `binary`, or seen in the sample of a dataset
whose statistics predate it) make a feature of the kind "binary": never shown as text, but as
what they are ("PNG 64×48") and their sizes, images among them as thumbnails.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import yaml

from ... import fs
from ...errors import SpecError, UsageError
from ...features import Feature
from ...write.info import DatasetInfo
from ...write.naming import SKIPPED_FILE
from ...write.stats import MAX_VOCABULARY_VALUE
from ...progress import Progress
from .sample import THUMBNAILS_PER_CLASS, Collected, SampleReader
from .thumbnails import MASK_VALUES, ImageGrid, image_grid, is_mask, shown_image
from .wording import count, number, rate, share, span

DEFAULT_SAMPLE = 10_000  # records per split read for the distributions
# features drawn on the page (their cards: statistics, histograms); a wide table's others, and each
# column of a feature gathered from several columns, are rows of one summary table instead, so a
# table of 2,000 columns makes a page of seconds and a few MB, not minutes and 75 MB. matplotlib
# takes about 0.15 s a figure: 24 keep the page under 10 s on a busy machine
MAX_PLOTTED = 24
WHOLE_BINS = 60  # whole numbers spanning at most this many values get one bin each
MAX_CLASSES_SHOWN = 30  # class balance bars: the most frequent classes present
SKIPPED_SHOWN = 20  # entries of skipped.jsonl listed


@dataclass
class Histogram:
    """Counts per split over shared bins (`edges`, one more than the bins)."""

    edges: list[float]
    counts: dict[str, list[int]]
    whole: bool  # one bin per whole number, centred on it
    log: bool = False  # bins spaced evenly on a log scale (drawn so)

    @property
    def totals(self) -> dict[str, int]:
        return {split: sum(counts) for split, counts in self.counts.items()}


@dataclass
class ClassBalance:
    """Exact examples (or values) per class and split, by class index."""

    names: list[str]
    counts: dict[str, list[int]]
    shown: list[int]  # the classes drawn: those present, most frequent first (ties by index), at most MAX_CLASSES_SHOWN

    @property
    def present(self) -> int:
        """Classes with an example (a value) in some split."""
        return sum(1 for index in range(len(self.names)) if any(counts[index] for counts in self.counts.values()))

    @property
    def absent(self) -> int:
        """Classes without any, in every split."""
        return len(self.names) - self.present


def class_balance(names: list[str], counts: dict[str, list[int]]) -> ClassBalance:
    """The balance of `counts` (per split, by class index), its bars the classes present, most
    frequent over the splits first: 80 COCO classes with 5 present draw 5 bars, not 80 mostly
    empty ones (the page says how many have none; its table lists them all)."""
    totals = [sum(split_counts[index] for split_counts in counts.values()) for index in range(len(names))]
    present = [index for index, total in enumerate(totals) if total]
    return ClassBalance(names, counts, sorted(present, key=lambda index: (-totals[index], index))[:MAX_CLASSES_SHOWN])


@dataclass
class Contents:
    """What a split's binary values read are: (what, how many) most frequent first, over the first
    `described` of its `values` (MAX_DESCRIBED); "what" is "" for data of no known kind."""

    split: str
    kinds: list[tuple[str, int]]
    described: int
    values: int


@dataclass
class AudioClip:
    """A class's first clip of a split: its class name, samples (float32 in [-1, 1)) and rate."""

    split: str
    label: str
    samples: np.ndarray
    rate: int


@dataclass
class ObjectsData:
    """A bbox feature's part of the Objects section: per split, objects per image (exact
    spans, sampled histogram), box areas and aspect ratios (sampled), objects per class."""

    name: str
    image: str | None  # the image feature the boxes are on
    label: str | None  # the per-object class label giving each box its class
    rows: list[tuple[str, dict[str, str]]]  # (statistic, text per split)
    per_image: Histogram | None  # objects per image
    areas: Histogram | None  # each box's area, a fraction of its image's
    aspects: Histogram | None  # each box's width / height
    aspect_pixels: bool  # aspect ratios in pixels (the image's size known), else in fractions
    classes: ClassBalance | None  # objects per class
    classes_exact: bool  # the classes from the build's statistics (else from the sample)
    sampled: int  # records read, over the splits


@dataclass
class FeatureData:
    """One feature's part of the page."""

    name: str
    kind: str  # number, string, binary, class_label, image, bbox, audio, other
    declared: str  # the decoded value, e.g. `float32 [3]`
    description: str
    per_step: bool  # a sequence feature
    is_label: bool
    rows: list[tuple[str, dict[str, str]]] = field(default_factory=list)  # (statistic, text per split)
    values: Histogram | None = None  # numbers (sampled)
    lengths: Histogram | None = None  # values per record of a variable-length feature (sampled)
    steps: Histogram | None = None  # steps per record of a sequence feature (sampled)
    classes: ClassBalance | None = None  # exact
    top_values: dict[str, list[tuple[str, int]]] = field(default_factory=dict)  # exact, per split
    num_values: dict[str, int] = field(default_factory=dict)  # strings: values per split (the tops' shares)
    images: list[ImageGrid] = field(default_factory=list)  # sampled
    contents: list[Contents] = field(default_factory=list)  # binary values: what they are, per split (sampled)
    note: str = ""  # a sentence on what the card leaves out (a vocabulary not counted)
    durations: Histogram | None = None  # audio: seconds per clip (sampled)
    loudness: Histogram | None = None  # audio: RMS level per clip, dBFS (sampled)
    clips: list[AudioClip] = field(default_factory=list)  # audio: a clip per class (sampled)
    missing: dict[str, int] = field(default_factory=dict)  # per split: values absent in the source
    filled: dict[str, int] = field(default_factory=dict)  # per split: of those, records the default filled
    non_finite: dict[str, int] = field(default_factory=dict)  # per split: NaN and ±inf
    examples: dict[str, list[str]] = field(default_factory=dict)  # text: the first records read, as tokens


@dataclass
class SummaryRow:
    """A row of the summary table: a feature the page doesn't draw, or one column of a feature
    gathered from several (`column`), over every split together; texts ready to show."""

    feature: str
    column: str  # the source column of a gathered feature's value ("" for a whole feature)
    declared: str
    low: str
    high: str
    mean: str
    missing: str
    is_label: bool = False


@dataclass
class SplitData:
    """One split: its exact sizes and shards, and how many records the plots read."""

    name: str
    num_examples: int
    num_bytes: int
    shards: list[dict[str, Any]]
    sampled: int

    @property
    def is_sample(self) -> bool:
        return self.sampled < self.num_examples


@dataclass
class ReportData:
    """Everything the page shows."""

    name: str
    version: str
    description: str
    format: str
    compression: str
    label: str | None
    tool_version: str
    path: str
    spec_yaml: str
    sample: int | None  # the records per split asked for (None: all)
    shuffled: bool  # records were written in shuffled order (so a shard's first records are a sample)
    splits: list[SplitData]
    features: list[FeatureData]
    skipped: int
    skipped_entries: list[dict[str, Any]]
    summary: list[SummaryRow] = field(default_factory=list)  # features not drawn, and gathered columns
    summarised: int = 0  # features in the summary table only (beyond MAX_PLOTTED)
    objects: list[ObjectsData] = field(default_factory=list)  # bbox features: the Objects section

    @property
    def num_features(self) -> int:
        return len(self.features) + self.summarised

    @property
    def num_examples(self) -> int:
        return sum(split.num_examples for split in self.splits)

    @property
    def num_bytes(self) -> int:
        return sum(split.num_bytes for split in self.splits)

    @property
    def num_shards(self) -> int:
        return sum(len(split.shards) for split in self.splits)

    @property
    def is_sample(self) -> bool:
        return any(split.is_sample for split in self.splits)


def report_data(info: DatasetInfo, sample: int | None = DEFAULT_SAMPLE, progress: Progress | None = None) -> ReportData:
    """The page's numbers: the statistics of `info`, and distributions over up to `sample` records
    per split (None: every record)."""
    if sample is not None and (isinstance(sample, bool) or not isinstance(sample, int) or sample < 1):
        raise UsageError(f"sample: expected a positive number of records per split (or None for all), received {sample!r}")
    spec = info.spec
    statistics = {split: info.statistics.get(split, {}) for split in info.splits}
    shown, summarised = drawn_features(spec)
    edges = {name: edges for name in shown for feature in [spec.features[name]] if kind_of(feature) == "number"
             for edges in [_value_edges(feature, name, info, statistics, sample)] if edges is not None}
    texts = [name for name in shown if any(BYTES_KEYS & item.get(name, {}).keys() for item in statistics.values())]
    reader = SampleReader(info, sample, edges, progress, shown if summarised else None, texts)
    collected = {split: reader.read(split) for split in info.splits}
    features = [_feature(name, spec.features[name], info, statistics, collected, edges, reader) for name in shown]
    summary = summary_rows(spec, statistics, summarised)
    splits = [SplitData(name, split.num_examples, split.num_bytes, split.shards, collected[name].records)
              for name, split in info.splits.items()]
    objects = [_objects(name, spec.features[name], statistics, collected, reader) for name in reader.boxes]
    return ReportData(
        name=spec.name, version=spec.version, description=spec.description, format=spec.format,
        compression=spec.output.compression, label=spec.label, tool_version=info.tool_version, path=info.path,
        spec_yaml=yaml.safe_dump(spec.to_dict(), sort_keys=False, allow_unicode=True, width=100),
        sample=sample, shuffled=spec.output.shuffle, splits=splits, features=features, skipped=info.skipped,
        skipped_entries=_skipped_entries(info) if info.skipped else [], summary=summary, summarised=len(summarised),
        objects=objects)


# the statistics of bytes values (write/stats.py): a vocabulary, or sizes instead
BYTES_KEYS = {"vocabulary_size", "vocabulary_size_at_least", "top_values", "value_bytes", "binary"}


def drawn_features(spec: Any) -> tuple[list[str], list[str]]:
    """The features the page draws, and those it only summarises: all are drawn up to
    MAX_PLOTTED; beyond, the label and the first others (in the spec's order) are, the label first."""
    names = list(spec.features)
    if len(names) <= MAX_PLOTTED:
        return names, []
    if spec.label in spec.features:
        names = [spec.label] + [name for name in names if name != spec.label]
    return names[:MAX_PLOTTED], names[MAX_PLOTTED:]


def summary_rows(spec: Any, statistics: dict[str, dict[str, Any]], summarised: list[str]) -> list[SummaryRow]:
    """The summary table: a row per feature not drawn (min, max, mean, missing over every split
    together, from the build's exact statistics), then a row per column of each feature gathered
    from several columns (`per_column`); the label first."""
    rows = []
    for name in summarised:
        feature = spec.features[name]
        merged = _merged([statistics[split].get(name, {}) for split in statistics])
        rows.append(SummaryRow(name, "", feature.describe(), *merged, is_label=name == spec.label))
    for name, feature in spec.features.items():
        columns = feature.columns if isinstance(feature.columns, list) else None
        per_split = [statistics[split].get(name, {}).get("per_column") for split in statistics]
        per_split = [item for item in per_split if isinstance(item, dict)]
        if columns is None or not per_split:
            continue
        for index, column in enumerate(columns):
            parts = [{"min": _at(item.get("min"), index), "max": _at(item.get("max"), index),
                      "mean": _at(item.get("mean"), index), "num_values": _at(item.get("num_values"), index),
                      "num_missing": _at(item.get("num_missing"), index)} for item in per_split]
            rows.append(SummaryRow(name, column, feature.card.column or feature.describe(),
                                   *_merged(parts), is_label=name == spec.label))
    rows.sort(key=lambda row: not row.is_label)  # (stable: otherwise in the order above)
    return rows


def _at(values: Any, index: int) -> Any:
    return values[index] if isinstance(values, list) and index < len(values) else None


def _merged(parts: list[dict[str, Any]]) -> tuple[str, str, str, str]:
    """min, max, mean (weighted by each split's values) and missing of the splits' statistics, as texts."""
    lows = [part["min"] for part in parts if part.get("min") is not None]
    highs = [part["max"] for part in parts if part.get("max") is not None]
    weighted = [(part["mean"], part["num_values"]) for part in parts
                if part.get("mean") is not None and part.get("num_values")]
    values = sum(count for _, count in weighted)
    mean = sum(value * count for value, count in weighted) / values if values else None
    missing = sum(int(part.get("num_missing") or 0) for part in parts)
    return (number(min(lows)) if lows else "–", number(max(highs)) if highs else "–",
            number(mean) if mean is not None else "–", f"{missing:,}")


def kind_of(feature: Feature) -> str:
    """How the page shows a feature: number, string, class_label, image, bbox, audio or other (its
    type's `Feature.card`)."""
    return feature.card.kind


def _feature(name: str, feature: Feature, info: DatasetInfo, statistics: dict[str, dict[str, Any]],
             collected: dict[str, Collected], edges: dict[str, np.ndarray], reader: SampleReader) -> FeatureData:
    kind = kind_of(feature)
    stats = {split: statistics[split].get(name, {}) for split in statistics}
    seen = {split: part.binary[name] for split, part in collected.items() if name in part.binary}
    if any(item.get("binary") for item in stats.values()) or any(found.values for found in seen.values()):
        kind = "binary"  # (a dataset whose statistics predate `binary` kept its values as top values: not shown)
    data = FeatureData(name, kind, feature.describe(), feature.description or "", feature.sequence,
                       name == info.spec.label)
    data.missing = {split: int(item["num_missing"]) for split, item in stats.items() if item.get("num_missing")}
    data.filled = {split: int(item["num_filled"]) for split, item in stats.items() if item.get("num_filled")}
    data.non_finite = {split: int(item["num_non_finite"]) for split, item in stats.items()
                       if item.get("num_non_finite")}
    if name in edges:
        counts = {split: part.counts[name].tolist() for split, part in collected.items()}
        _without_filled(counts, feature, edges[name], data.filled, info, collected)
        data.values = Histogram([float(edge) for edge in edges[name]], counts, _is_whole(edges[name]))
    if kind != "bbox" and any(part.lengths.get(name) for part in collected.values()):  # (boxes: in Objects)
        data.lengths = _count_histogram({split: part.lengths[name] for split, part in collected.items()})
    if any(part.steps.get(name) for part in collected.values()):
        data.steps = _count_histogram({split: part.steps[name] for split, part in collected.items()})
    if kind == "class_label":
        data.classes = _class_balance(feature, stats)
    if kind == "string":
        data.top_values = {split: [(str(top["value"]), int(top["count"])) for top in item.get("top_values", [])]
                           for split, item in stats.items() if item.get("top_values")}
        data.num_values = {split: int(item["num_values"]) for split, item in stats.items() if "num_values" in item}
        if any("value_bytes" in item for item in stats.values()):
            data.note = (f"No vocabulary or most frequent values: the build counts them only while every value "
                         f"is text of at most {MAX_VOCABULARY_VALUE} bytes (memory stays bounded); the values' "
                         "sizes instead.")
    if kind == "binary":
        _binary(data, seen)
    if kind == "image":
        data.images = [image_grid(split, part.thumbnails.get(name, {}), part.annotations.get(name, {}), reader,
                                   feature.card.mask, feature.sequence)
                       for split, part in collected.items()]
        data.images = [grid for grid in data.images if grid.rows]
    if kind == "audio":
        _audio(data, name, feature, collected, reader)
    if kind == "text":
        _text(data, feature, stats, collected)
    data.rows = _rows(kind, stats, data)
    return data


def _binary(data: FeatureData, seen: dict[str, Any]) -> None:
    """A binary feature's values read: what they are, per split, and the images among them as thumbnails."""
    for split, found in seen.items():
        if found.values:
            kinds = sorted(found.kinds.items(), key=lambda item: (-item[1], item[0]))
            data.contents.append(Contents(split, kinds, found.described, found.values))
        if found.images:
            images = [shown_image(pixels) for pixels in found.images]
            grid = ImageGrid(split, [("", images[start:start + THUMBNAILS_PER_CLASS])
                                     for start in range(0, len(images), THUMBNAILS_PER_CLASS)],
                             f"the first {len(images)} values that are images, decoded")
            shown = []
            if any(is_mask(pixels) for pixels in found.images):
                shown.append("Images of one channel whose values are all under "
                             f"{MASK_VALUES} (masks) are shown in class colours, 0 black.")
            if any(pixels.dtype == np.uint16 for pixels in found.images):
                shown.append("16-bit images are shown from their own lowest (black) to highest value (white).")
            grid.shown = " ".join(shown)
            data.images.append(grid)


def _audio(data: FeatureData, name: str, feature: Any, collected: dict[str, Collected], reader: SampleReader) -> None:
    """An audio feature's durations and loudness (sampled), and a clip per class of each split."""
    durations = {split: part.durations[name] for split, part in collected.items()}
    if any(durations.values()):
        data.durations = _float_histogram(durations)
        data.loudness = _float_histogram({split: part.loudness[name] for split, part in collected.items()})
    names = reader.group_names or []
    for split, part in collected.items():
        for key, samples in sorted(part.clips[name].items(), key=lambda item: (item[0] is None, item[0] or 0)):
            label = names[key] if key is not None and key < len(names) else "" if key is None else str(key)
            data.clips.append(AudioClip(split, label, samples, feature.card.sample_rate))


def _text(data: FeatureData, feature: Feature, stats: dict[str, dict[str, Any]],
          collected: dict[str, Collected]) -> None:
    """Token ids: each split's most frequent tokens (the build's exact counts) and first records
    read, as the tokenizer spells them; as ids where its file is gone (the note says why)."""
    tops = {split: item["tokens"]["top"] for split, item in stats.items()
            if isinstance(item.get("tokens"), dict) and item["tokens"].get("top")}
    read = {split: part.examples.get(data.name, []) for split, part in collected.items()}
    spelled = _spelling(feature, [top["id"] for found in tops.values() for top in found]
                        + [int(number) for found in read.values() for ids in found for number in ids])
    if isinstance(spelled, str):
        data.note = f"Tokens shown as their ids (#id): {spelled}."
        spelled = {}
    data.top_values = {split: [(spelled.get(top["id"], f"#{top['id']}"), int(top["count"])) for top in found]
                       for split, found in tops.items()}
    data.num_values = {split: int(item["tokens"]["count"]) for split, item in stats.items() if split in tops}
    data.examples = {split: [" ".join(spelled.get(int(number), f"#{int(number)}") for number in ids) for ids in found]
                     for split, found in read.items() if found}


def _spelling(feature: Feature, ids: list[int]) -> dict[int, str] | str:
    """Each id's token (`Feature.tokens_of`), or why there are none (its tokenizer file gone)."""
    distinct = sorted(set(ids))
    try:
        return dict(zip(distinct, feature.tokens_of(distinct)))
    except SpecError as error:
        return str(error)


def _float_histogram(values: dict[str, list[float]], bins: int = 30) -> Histogram:
    """Measures per record over `bins` bins between their lowest and highest."""
    every = [value for items in values.values() for value in items]
    low, high = min(every), max(every)
    edges = np.linspace(low, high, bins + 1) if high > low else np.array([low - 0.5, high + 0.5])
    counts = {split: np.histogram(np.asarray(items, dtype=np.float64), bins=edges)[0].tolist()
              for split, items in values.items()}
    return Histogram([float(edge) for edge in edges], counts, False)


def _value_edges(feature: Feature, name: str, info: DatasetInfo, statistics: dict[str, dict[str, Any]],
                 sample: int | None) -> np.ndarray | None:
    """A number feature's histogram bins, over the exact min and max of all splits (None: the
    statistics know no finite value)."""
    found = [item for item in (statistics[split].get(name, {}) for split in statistics)
             if item.get("min") is not None and item.get("max") is not None]
    if not found:
        return None
    low, high = min(item["min"] for item in found), max(item["max"] for item in found)
    if not (math.isfinite(low) and math.isfinite(high)):
        return None
    whole = feature.card.whole
    if whole and high - low <= WHOLE_BINS:
        return np.arange(low - 0.5, high + 1.0, 1.0)
    if low == high:
        return np.array([low - 0.5, high + 0.5])
    # the values the sample will hold, for the number of bins (Rice's rule: 2·n^(1/3), kept in 10-50)
    expected = 0.0
    for split, item in statistics.items():
        examples = info.splits[split].num_examples
        if examples and item.get(name, {}).get("num_values"):
            share = 1.0 if sample is None else min(1.0, sample / examples)
            expected += item[name]["num_values"] * share
    bins = int(min(50, max(10, round(2 * expected ** (1 / 3)))))
    return np.linspace(low, high, bins + 1)


def _without_filled(counts: dict[str, list[int]], feature: Feature, edges: np.ndarray, filled: dict[str, int],
                    info: DatasetInfo, collected: dict[str, Collected]) -> None:
    """Takes the default's values out of the histogram, as the statistics leave them out: a
    record can't tell a filled value from a given one, but the build counted the filled records,
    each holding the default (a NaN default is never drawn). Exact when the whole split was
    read; for a sample, its share of them. (The bins span the source's values: a default beyond
    them, e.g. -1, sits in the end bin the sample reader clips it into.)"""
    default = feature.default_value
    if not filled or not isinstance(default, (int, float)) or isinstance(default, bool) or not math.isfinite(default):
        return
    per_record = feature.inner_size
    where = int(np.histogram([min(max(float(default), edges[0]), edges[-1])], bins=edges)[0].argmax())
    for split, filled_records in filled.items():
        examples = info.splits[split].num_examples
        if split not in counts or not examples:
            continue
        read_share = min(1.0, collected[split].records / examples)
        counts[split][where] -= min(counts[split][where], round(filled_records * per_record * read_share))


def _is_whole(edges: np.ndarray) -> bool:
    return len(edges) > 1 and bool(np.all(np.diff(edges) == 1.0)) and float(edges[0]) % 1 == 0.5


def _count_histogram(values: dict[str, list[int]]) -> Histogram:
    """Lengths or steps per record: a bin per whole number when they span few, else 40 bins."""
    every = [value for items in values.values() for value in items]
    low, high = min(every), max(every)
    if high - low <= WHOLE_BINS:
        edges = np.arange(low - 0.5, high + 1.0, 1.0)
    else:
        edges = np.linspace(low, high, 41)
    counts = {split: np.histogram(np.asarray(items, dtype=np.float64), bins=edges)[0].tolist()
              for split, items in values.items()}
    return Histogram([float(edge) for edge in edges], counts, high - low <= WHOLE_BINS)


def _class_balance(feature: Feature, stats: dict[str, dict[str, Any]]) -> ClassBalance | None:
    given = {split: item["classes"] for split, item in stats.items() if isinstance(item.get("classes"), dict)}
    if not given:
        return None
    names = [str(name) for name in feature.class_names] if feature.class_names else \
        list(next(iter(given.values())))
    return class_balance(names, {split: [int(classes.get(name, 0)) for name in names] for split, classes in given.items()})


# ---- objects (bbox features) ------------------------------------------------------------------
AREA_BINS = 20  # box areas: bins of 5% of the image
ASPECT_BINS = 24  # aspect ratios: bins even on a log scale, between the sample's extremes


def _objects(name: str, feature: Feature, statistics: dict[str, dict[str, Any]],
             collected: dict[str, Collected], reader: SampleReader) -> ObjectsData:
    """A bbox feature's objects: exact counts from the statistics, distributions from the sample."""
    stats = {split: statistics[split].get(name, {}) for split in statistics}
    rows: list[tuple[str, dict[str, str]]] = []

    def add(label: str, texts: dict[str, str | None]) -> None:
        kept = {split: text for split, text in texts.items() if text is not None}
        if kept:
            rows.append((label, kept))

    add("objects", {split: count(item["num_values"] // 4) if "num_values" in item else
                    ("0" if item.get("length") else None) for split, item in stats.items()})
    add("objects per image", {split: span(item.get("length")) for split, item in stats.items()})
    read = {split: part.records for split, part in collected.items()}
    add("images read", {split: count(records) for split, records in read.items()})
    add("of those without objects", {split: count(sum(1 for value in part.lengths.get(name, []) if not value))
                                     for split, part in collected.items() if part.records})
    per_image = (_count_histogram({split: part.lengths[name] for split, part in collected.items()})
                 if any(part.lengths.get(name) for part in collected.values()) else None)
    areas = {split: part.areas[name] for split, part in collected.items()}
    area_histogram = (Histogram([float(edge) for edge in np.linspace(0, 1, AREA_BINS + 1)],
                                {split: np.histogram(np.clip(values, 0, 1), bins=AREA_BINS, range=(0, 1))[0].tolist()
                                 for split, values in areas.items()}, False)
                      if any(areas.values()) else None)
    aspects = {split: part.aspects[name] for split, part in collected.items()}
    every = [value for values in aspects.values() for value in values if value > 0 and math.isfinite(value)]
    aspect_histogram = None
    if every:
        low, high = min(every), max(every)
        if high / low < 1.1:  # (all alike: a bin around them)
            low, high = low / 1.05, high * 1.05
        edges = np.geomspace(low, high, ASPECT_BINS + 1)
        aspect_histogram = Histogram([float(edge) for edge in edges],
                                     {split: np.histogram(np.clip(values, low, high), bins=edges)[0].tolist()
                                      for split, values in aspects.items()}, False, log=True)
    label = reader.object_label
    classes, exact = None, True
    if label is not None:
        label_stats = {split: statistics[split].get(label, {}) for split in statistics}
        classes = _class_balance(reader.info.spec.features[label], label_stats)
        if classes is None and reader.object_names:  # statistics without classes: the sample's objects
            exact = False
            classes = class_balance(list(reader.object_names),
                                    {split: part.object_classes[name].tolist() for split, part in collected.items()})
    return ObjectsData(name, feature.card.over, label, rows, per_image, area_histogram, aspect_histogram,
                       name in reader.image_sizes, classes, exact, sum(read.values()))


# ---- the statistics table ---------------------------------------------------------------------
def _rows(kind: str, stats: dict[str, dict[str, Any]], data: FeatureData) -> list[tuple[str, dict[str, str]]]:
    """The statistics table of a feature: (row label, text per split); a row only where a split has it."""
    rows: list[tuple[str, dict[str, str]]] = []

    def add(label: str, texts: dict[str, str | None]) -> None:
        kept = {split: text for split, text in texts.items() if text is not None}
        if kept:
            rows.append((label, kept))

    def each(function: Any) -> dict[str, str | None]:
        return {split: function(item) for split, item in stats.items()}

    if kind == "audio":  # the build's statistics of the clips' lengths, in samples
        add("clips", each(lambda item: count(item.get("num_values"))))
        for key in ("min", "max", "mean"):
            add(f"{key} samples", each(lambda item, key=key: number(item.get(key))))
        return rows
    if kind == "image":
        add("images", each(lambda item: count(item.get("num_images"))))
        add("height", each(lambda item: span(item.get("height"))))
        add("width", each(lambda item: span(item.get("width"))))
        add("channels", each(lambda item: count(item.get("channels"))))
    elif kind == "class_label" and data.classes is not None:
        balance = data.classes
        add("values" if data.lengths or data.per_step else "records",
            {split: count(sum(counts)) for split, counts in balance.counts.items()})
        add("classes present", {split: f"{sum(1 for value in counts if value)} of {len(counts)}"
                                for split, counts in balance.counts.items()})
        add("largest class", {split: _extreme(balance, split, max) for split in balance.counts})
        add("smallest class present", {split: _extreme(balance, split, min) for split in balance.counts})
    elif kind == "bbox":  # (its values are 4 fractions a box: counted as boxes)
        add("objects", each(lambda item: count(item["num_values"] // 4) if "num_values" in item else None))
        add("min (a fraction)", each(lambda item: number(item.get("min"))))
        add("max (a fraction)", each(lambda item: number(item.get("max"))))
    elif kind == "text":
        _text_rows(add, each)
    elif kind in ("string", "binary"):
        add("values", each(lambda item: count(item.get("num_values"))))
        if kind == "string":
            add("distinct values", each(lambda item: count(item.get("vocabulary_size")) if "vocabulary_size" in item
                                        else (f"≥ {count(item['vocabulary_size_at_least'])}"
                                              if "vocabulary_size_at_least" in item else None)))
        add("bytes a value", each(lambda item: span(item.get("value_bytes"))))
    else:
        add("values", each(lambda item: count(item.get("num_values"))))
        for key in ("min", "max", "mean", "std"):
            add(key, each(lambda item, key=key: number(item.get(key))))
    if any("num_non_finite" in item for item in stats.values()):
        add("NaN or ±inf", each(lambda item: count(item.get("num_non_finite", 0))))
    if any("num_missing" in item for item in stats.values()):
        add("missing in the source", each(lambda item: count(item.get("num_missing", 0))))
    if any("num_filled" in item for item in stats.values()):
        add("filled (default, not counted above)", each(lambda item: count(item.get("num_filled", 0))))
    values = "ids" if kind == "text" else "values"
    add("objects per image" if kind == "bbox" else f"length ({values} per step)" if data.per_step
        else f"length ({values} per record)", each(lambda item: span(item.get("length"))))
    add("steps per sequence", each(lambda item: span(item.get("steps"))))
    return rows


def _text_rows(add: Any, each: Any) -> None:
    """Token ids: how many, the tokens (special ids left out), unknown ones, texts cut to
    max_length, and the vocabulary's ids used (the build's exact counts)."""
    def tokens(item: dict[str, Any]) -> dict[str, Any]:
        found = item.get("tokens")
        return found if isinstance(found, dict) else {}

    def marked(item: dict[str, Any]) -> dict[str, Any]:
        found = item.get("marked", {}).get("truncated")
        return found if isinstance(found, dict) else {}

    add("ids", each(lambda item: count(item.get("num_values"))))
    add("tokens (special ids left out)", each(lambda item: count(tokens(item).get("count"))))
    add("unknown tokens", each(lambda item: f"{tokens(item)['unknown']:,} ({rate(tokens(item)['unknown_rate'])})"
                               if "unknown" in tokens(item) else None))
    add("texts with unknown tokens", each(lambda item: count(item.get("tallies", {}).get("unknown_tokens", {})
                                                             .get("records"))))
    add("texts cut to max_length", each(lambda item: f"{marked(item)['records']:,} ({rate(marked(item)['rate'])})"
                                        if marked(item) else None))
    add("ids cut off", each(lambda item: count(marked(item).get("values"))))
    add("vocabulary ids used", each(lambda item: f"{tokens(item)['ids_used']:,} of {tokens(item)['vocab_size']:,} "
                                    f"({rate(tokens(item)['coverage'])})" if "ids_used" in tokens(item) else None))
    add("tokens known (not unknown)", each(lambda item: rate(1 - tokens(item)["unknown_rate"])
                                           if "unknown_rate" in tokens(item) else None))


def _extreme(balance: ClassBalance, split: str, which: Any) -> str | None:
    """The largest (`max`) or smallest (`min`) class present in a split, with its share (the
    classes without any are the row above's)."""
    counts = balance.counts[split]
    total = sum(counts)
    if not total:
        return None
    index = which((item for item in range(len(counts)) if counts[item]), key=lambda item: counts[item])
    return f"{balance.names[index]} ({share(counts[index], total)})"


def _skipped_entries(info: DatasetInfo) -> list[dict[str, Any]]:
    """The first entries of skipped.jsonl (`record`, `reason`), or none if it can't be read."""
    path = fs.join(info.path, SKIPPED_FILE)
    entries: list[dict[str, Any]] = []
    try:
        with fs.open_file(path, "rb") as file:
            for line in file:
                if len(entries) == SKIPPED_SHOWN:
                    break
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if isinstance(entry, dict):
                    entries.append(entry)
    except OSError:  # listed in the count all the same
        return []
    return entries

