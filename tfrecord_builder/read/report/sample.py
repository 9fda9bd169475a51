"""The records a report draws its distributions from: up to `limit` per split, read with the NumPy
reader (read/records.py), without TensorFlow.

A split's sample is the first records of each of its shards, each shard giving its share of the
limit: the build writes records in a shuffled order (`output.shuffle`, the default), so these
are a random sample of the split, and a shard is read from its start, never searched.

Values are read as stored, not as the spec's `input:` options would reshape them: images uint8
at their own size, sequences not cut at `max_length`. Images are decoded only for the few
thumbnails the page shows, so a split of photos reads as fast as one of numbers.

Boxes (`bbox` features) are measured in every sampled record: objects per image, each box's area
as a fraction of its image, its aspect ratio (width / height in pixels when the image's size is
known: stored with it, or fixed), and its class where a per-object class label (`shape: [null]`)
gives one per box. A thumbnail keeps the boxes and masks linked to its image (`image:`), to be
drawn over it.

Bytes values that aren't text (instance masks' PNGs, embedded files) are named by what they are,
the first `MAX_DESCRIBED` of each split ("PNG 64×48"), and the first images among them decoded
for thumbnails (binary.py).
"""
from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from ...codec.tfrecord import open_records, read_records
from ...errors import DatasetError
from ...features import Feature
from ...progress import Progress
from ..records import RecordReader
from ...write.info import DatasetInfo
from .binary import decoded, described, is_text

THUMBNAILS_PER_CLASS = 8
MAX_IMAGE_CLASSES = 12  # rows of an image grid: the first classes, in index order
UNGROUPED_THUMBNAILS = 16  # an image feature without a class label: the first images
# a per-step image feature (video): clips per class (or in all, without one), each a strip of frames
STRIPS_PER_CLASS = 2
UNGROUPED_STRIPS = 4
STRIP_FRAMES = 8  # frames of a clip shown, evenly spaced from its first to its last
SIZE_PREFIX = "\0size:"  # the sample reader's own entry for an image's stored shape (no feature is named so)
# numbers held before they are counted into their histogram's bins: memory stays bounded when
# records hold thousands of values, and NumPy still counts many at once
FLUSH_VALUES = 1 << 16
PROGRESS_EVERY = 1000  # records between progress calls
SILENCE_DB = -120.0  # the loudness a silent clip is counted at (its RMS is 0: -inf dBFS)
# binary values a split names by their header ("PNG 64×48"): Pillow takes ~10 µs an image, but
# ~150 µs to find that other data is none
MAX_DESCRIBED = 1000
EXAMPLES_SHOWN = 3  # token ids (a text card): the first records of each split, shown as their tokens


@dataclass
class Collected:
    """What one split's sample holds, by feature."""

    records: int = 0  # records read
    counts: dict[str, np.ndarray] = field(default_factory=dict)  # numbers: how many fell in each bin (NaN, inf left out)
    lengths: dict[str, list[int]] = field(default_factory=dict)  # values per record (or step) of variable length
    steps: dict[str, list[int]] = field(default_factory=dict)  # steps per record (sequence features)
    thumbnails: dict[str, dict[Any, list[np.ndarray]]] = field(default_factory=dict)  # image -> group -> images
    # image -> group -> what is drawn over each thumbnail (parallel to `thumbnails`; None: nothing)
    annotations: dict[str, dict[Any, list["Annotation | None"]]] = field(default_factory=dict)
    areas: dict[str, list[float]] = field(default_factory=dict)  # bbox -> each box's area, a fraction of the image
    aspects: dict[str, list[float]] = field(default_factory=dict)  # bbox -> each box's width / height
    object_classes: dict[str, np.ndarray] = field(default_factory=dict)  # bbox -> sampled objects per class
    durations: dict[str, list[float]] = field(default_factory=dict)  # audio -> each clip's seconds
    loudness: dict[str, list[float]] = field(default_factory=dict)  # audio -> each clip's RMS level, dBFS
    clips: dict[str, dict[Any, np.ndarray]] = field(default_factory=dict)  # audio -> group -> its first clip
    binary: dict[str, BinarySample] = field(default_factory=dict)  # bytes features -> their values that aren't text
    examples: dict[str, list[np.ndarray]] = field(default_factory=dict)  # token ids -> the first records' ids


@dataclass
class BinarySample:
    """A bytes feature's values read that aren't text: how many, what the first MAX_DESCRIBED are
    (by `described`, "" for data of no known kind), and the first images among them, decoded."""

    values: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    images: list[np.ndarray] = field(default_factory=list)

    @property
    def described(self) -> int:
        return sum(self.kinds.values())


@dataclass
class Annotation:
    """What is drawn over one thumbnail: its boxes (fractions [ymin, xmin, ymax, xmax]), each
    box's class index (None: no class) and name, and its masks' class indices ([h, w] each)."""

    boxes: np.ndarray
    classes: list[int | None]
    names: list[str]
    masks: list[np.ndarray]


def quotas(counts: list[int], limit: int | None) -> list[int]:
    """How many records to read from each shard: all of them, or `limit` shared out in proportion
    to the shards' sizes (largest remainders first), so the sample spans every shard."""
    total = sum(counts)
    if limit is None or limit >= total:
        return list(counts)
    exact = [limit * count / total for count in counts]
    shares = [int(value) for value in exact]
    by_remainder = sorted(range(len(counts)), key=lambda index: (shares[index] - exact[index], index))
    for index in by_remainder[: limit - sum(shares)]:
        shares[index] += 1
    return shares


def object_label(spec: Any) -> str | None:
    """The per-object class label (a class label of `shape: [null]`, not per step) that names a
    record's boxes, one class per box: the first such in the spec, the label first; None without one."""
    found = [name for name, feature in spec.features.items()
             if feature.card.kind == "class_label" and feature.is_variable and not feature.sequence]
    return spec.label if spec.label in found else (found[0] if found else None)


def thumbnail_group(info: DatasetInfo) -> str | None:
    """The class label the image grids are grouped by: the label if it is one class per record,
    else the first such class label; None when there is none."""
    features = info.spec.features
    scalar = [name for name, feature in features.items()
              if feature.card.kind == "class_label" and not feature.sequence and not feature.is_variable]
    if info.spec.label in scalar:
        return info.spec.label
    return scalar[0] if scalar else None


class SampleReader:
    """Reads a dataset's splits into `Collected` samples."""

    def __init__(self, info: DatasetInfo, limit: int | None, edges: dict[str, np.ndarray],
                 progress: Progress | None = None, shown: list[str] | None = None, texts: list[str] | None = None):
        """`edges`: the histogram bins of each number feature to count (features without are not read).
        `shown`: the features the page draws (None: all); the others are not even parsed.
        `texts`: the features whose values are bytes, looked at for values that aren't text."""
        self.info = info
        self.limit = limit
        self.edges = edges
        self.progress = progress
        spec = info.spec
        if shown is not None and not spec.is_sequence:  # a wide table: records are parsed for the features drawn only
            spec = dataclasses.replace(spec, features={name: spec.features[name] for name in shown})
        # stored values: no read-time resizing, scaling or cutting
        plain = dataclasses.replace(spec, input=dataclasses.replace(
            spec.input, image_dtype="uint8", image_size=None, max_length=None, mask_feature=None))
        reading = plain.reading()
        # a sequence feature with a variable number of values per step: its steps as stored (a list
        # of arrays), not padded to the record's longest step, whose pads would count as values
        self.ragged_steps = {name for name, feature in spec.features.items() if feature.sequence and feature.is_variable}
        for name in self.ragged_steps:
            reading["features"][name] = {**reading["features"][name], "decode": []}
        cards = {name: feature.card for name, feature in spec.features.items()}  # how each is shown
        self.images = [name for name, card in cards.items() if card.kind == "image"]
        self.group = thumbnail_group(dataclasses.replace(info, spec=spec))
        self.group_names = _class_names(spec.features[self.group]) if self.group else None
        # two readers over the same records: every feature but the images, and the images alone
        self.reader = RecordReader(dataclasses.replace(info, spec=plain))
        # per-step images stay (their steps count), as stored bytes: decoded only for the strips
        self.strips = [name for name in self.images if spec.features[name].sequence]
        self.reader.reading = {**reading, "features": {
            name: {**value, "decode": []} if name in self.strips else value
            for name, value in reading["features"].items() if name not in self.images or name in self.strips}}
        if shown is not None and not spec.is_sequence:  # the others' keys are skipped unread
            self.reader.keys = frozenset(key for name, feature in self.reader.reading["features"].items()
                                         for key in feature["parse"])
        self.image_reader = RecordReader(dataclasses.replace(info, spec=plain))
        self.image_reader.reading = {"format": "example",
                                     "features": {name: reading["features"][name] for name in self.images}}
        self.numbers = [name for name in spec.features if name in edges]
        self.audio = [name for name, card in cards.items() if card.kind == "audio"]
        self.sample_rates = {name: cards[name].sample_rate for name in self.audio}
        self.texts = [name for name in texts or [] if name in spec.features]
        self.token_ids = [name for name, card in cards.items() if card.kind == "text"]
        # values per record, or per step for a sequence feature with a variable number per step
        self.variable = [name for name, feature in spec.features.items()
                         if cards[name].kind != "image" and feature.is_variable]
        self.sequence = [name for name, feature in spec.features.items() if feature.sequence]
        # boxes: measured in every record; with their classes from the per-object class label
        self.boxes = [name for name, card in cards.items() if card.kind == "bbox"]
        self.object_label = object_label(spec) if self.boxes else None
        self.object_names = _class_names(spec.features[self.object_label]) if self.object_label else None
        self.linked_boxes = {image: [name for name in self.boxes if cards[name].over == image] for image in self.images}
        self.linked_masks = {image: [name for name in self.images if cards[name].mask and cards[name].over == image]
                             for image in self.images}
        # the (height, width) of the image a bbox feature is measured by: fixed, or its stored shape,
        # parsed as a feature of its own (the boxes' aspect ratios in pixels)
        self.image_sizes: dict[str, tuple[int, int] | str] = {}
        for name in self.boxes:
            image = cards.get(cards[name].over or "")
            size = image.size if image is not None and image.kind == "image" else None
            if isinstance(size, tuple):
                self.image_sizes[name] = size
            elif size is not None:
                key = f"{SIZE_PREFIX}{cards[name].over}"
                self.reader.reading["features"][key] = {"parse": {size: ("fixed", "int64", [3])},
                                                        "decode": [], "sequence": False}
                self.image_sizes[name] = key
        if self.boxes and shown is not None and not spec.is_sequence:
            self.reader.keys = frozenset(key for feature in self.reader.reading["features"].values()
                                         for key in feature["parse"])

    def read(self, split: str) -> Collected:
        """The split's sample."""
        shards = self.info.splits[split].shards
        shares = quotas([shard["num_examples"] for shard in shards], self.limit)
        total = sum(shares)
        collected = Collected(counts={name: np.zeros(len(self.edges[name]) - 1, np.int64) for name in self.numbers},
                              lengths={name: [] for name in self.variable},
                              steps={name: [] for name in self.sequence},
                              thumbnails={name: {} for name in self.images},
                              annotations={name: {} for name in self.images},
                              areas={name: [] for name in self.boxes}, aspects={name: [] for name in self.boxes},
                              object_classes={name: np.zeros(len(self.object_names or ()), np.int64)
                                              for name in self.boxes},
                              durations={name: [] for name in self.audio}, loudness={name: [] for name in self.audio},
                              clips={name: {} for name in self.audio},
                              binary={name: BinarySample() for name in self.texts},
                              examples={name: [] for name in self.token_ids})
        phase = f"reading {split}"
        self._progress(phase, 0, total)
        pending: dict[str, list[np.ndarray]] = {name: [] for name in self.numbers}
        pending_size = 0
        for shard, share in zip(shards, shares):
            for data, path, number in self._raw(shard, share):
                record = self.reader.record_values(data, path, number)
                for name in self.numbers:
                    value = record[name]
                    if name in self.ragged_steps:
                        value = np.concatenate([np.ravel(step) for step in value]) if value else []
                    values = np.asarray(value, dtype=np.float64).ravel()
                    pending[name].append(values)
                    pending_size += values.size
                for name in self.variable:
                    if name in self.ragged_steps:
                        collected.lengths[name].extend(len(step) for step in record[name])
                    else:
                        collected.lengths[name].append(len(record[name]))
                for name in self.sequence:
                    collected.steps[name].append(len(record[name]))
                for name in self.boxes:
                    self._measure(collected, name, record)
                if self.images:
                    self._thumbnails(collected, record, data, path, number)
                for name in self.audio:
                    self._listen(collected, name, record)
                for name in self.texts:
                    _look(collected.binary[name], record[name])
                for name in self.token_ids:
                    if len(collected.examples[name]) < EXAMPLES_SHOWN:
                        collected.examples[name].append(np.asarray(record[name]).reshape(-1))
                collected.records += 1
                if pending_size >= FLUSH_VALUES:
                    self._count(pending, collected)
                    pending_size = 0
                if collected.records % PROGRESS_EVERY == 0:
                    self._progress(phase, collected.records, total)
        self._count(pending, collected)
        self._progress(phase, collected.records, total)
        return collected

    def _raw(self, shard: dict[str, Any], count: int) -> Iterator[tuple[bytes, str, int]]:
        """The serialised records of a shard's first `count` records, with their place."""
        if not count:
            return
        path = self.reader.checked_path(shard)
        with open_records(path, self.info.spec.output.compression) as stream:
            records = read_records(stream, path)
            for number in range(count):
                try:
                    data = next(records)
                except StopIteration:
                    return
                except DatasetError as error:  # a broken frame: name it, as tb.read does
                    raise DatasetError(f"{error}; `tfrecord-builder verify` lists every fault") from None
                yield data, path, number

    def _thumbnails(self, collected: Collected, record: dict[str, Any], data: bytes, path: str, number: int) -> None:
        """Keeps the record's images where its group still wants thumbnails."""
        if self.group is not None:
            index = int(record[self.group])
            if index >= MAX_IMAGE_CLASSES:
                return
            key: Any = index
            wanted, strips = THUMBNAILS_PER_CLASS, STRIPS_PER_CLASS
        else:
            key, wanted, strips = None, UNGROUPED_THUMBNAILS, UNGROUPED_STRIPS
        needy = [name for name in self.images
                 if len(collected.thumbnails[name].get(key, ())) < (strips if name in self.strips else wanted)]
        if not needy:
            return
        images = self.image_reader.record_values(data, path, number)  # parsed again: only for these few records
        for name in needy:
            if name in self.strips:  # a clip: its strip of frames (none for a clip without steps)
                frames = images[name]
                if not len(frames):
                    continue
                images = {**images, name: strip(frames)}
            collected.thumbnails[name].setdefault(key, []).append(images[name])
            collected.annotations[name].setdefault(key, []).append(self._annotation(name, record, images))

    def _annotation(self, image: str, record: dict[str, Any], images: dict[str, Any]) -> Annotation | None:
        """The boxes and masks linked to a record's image, to draw over its thumbnail (None: none)."""
        if not self.linked_boxes[image] and not self.linked_masks[image]:
            return None
        boxes, classes = [], []
        for name in self.linked_boxes[image]:
            found = np.asarray(record[name], np.float64).reshape(-1, 4)
            boxes.append(found)
            classes.extend(self._classes(record, len(found)))
        names = [self.object_names[index] if index is not None and index < len(self.object_names or ()) else ""
                 for index in classes]
        masks = [np.asarray(images[name])[:, :, 0] for name in self.linked_masks[image]]
        return Annotation(np.concatenate(boxes) if boxes else np.zeros((0, 4)), classes, names, masks)

    def _classes(self, record: dict[str, Any], count: int) -> list[int | None]:
        """The class of each of a record's `count` boxes: the per-object label's values when it
        has one per box, else none."""
        if self.object_label is not None:
            labels = np.asarray(record[self.object_label]).reshape(-1)
            if len(labels) == count:
                return [int(value) for value in labels]
        return [None] * count

    def _measure(self, collected: Collected, name: str, record: dict[str, Any]) -> None:
        """A record's boxes: their areas, aspect ratios and classes."""
        boxes = np.asarray(record[name], np.float64).reshape(-1, 4)
        if not len(boxes):
            return
        heights, widths = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
        collected.areas[name].extend((heights * widths).tolist())
        size = self.image_sizes.get(name)
        if isinstance(size, str):
            shape = np.asarray(record[size]).reshape(-1)
            size = (int(shape[0]), int(shape[1]))
        scale = size[1] / size[0] if size else 1.0  # fractions of the width over fractions of the height
        kept = heights > 0
        collected.aspects[name].extend((widths[kept] * scale / heights[kept]).tolist())
        classes = [index for index in self._classes(record, len(boxes)) if index is not None]
        counts = collected.object_classes[name]
        if classes and len(counts):
            collected.object_classes[name] += np.bincount(np.clip(classes, 0, len(counts) - 1), minlength=len(counts))

    def _listen(self, collected: Collected, name: str, record: dict[str, Any]) -> None:
        """A record's clip: its duration and loudness, and itself if it is its class's first."""
        wave = np.asarray(record[name])
        if wave.dtype == np.int16:
            wave = wave.astype(np.float32) / np.float32(32768)
        rate = self.sample_rates[name]
        collected.durations[name].append(len(wave) / rate)
        rms = float(np.sqrt(np.mean(np.square(wave, dtype=np.float64)))) if wave.size else 0.0
        collected.loudness[name].append(max(SILENCE_DB, 20 * np.log10(rms)) if rms > 0 else SILENCE_DB)
        key = int(record[self.group]) if self.group is not None else None
        clips = collected.clips[name]
        if (key is None or key < MAX_IMAGE_CLASSES) and key not in clips and (key is not None or not clips):
            clips[key] = wave

    def _count(self, pending: dict[str, list[np.ndarray]], collected: Collected) -> None:
        """Counts the numbers read since the last time into their bins."""
        for name, arrays in pending.items():
            if not arrays:
                continue
            values = np.concatenate(arrays)
            arrays.clear()
            values = values[np.isfinite(values)]  # the statistics count NaN and ±inf apart
            edges = self.edges[name]
            # the bins span the build's exact min and max; a float16 read back may round a hair past them
            counts, _ = np.histogram(np.clip(values, edges[0], edges[-1]), bins=edges)
            collected.counts[name] += counts

    def _progress(self, phase: str, count: int, total: int | None) -> None:
        if self.progress is not None:
            self.progress(phase, count, total)


def _look(found: BinarySample, value: Any) -> None:
    """Counts a record's values that aren't text, names the first MAX_DESCRIBED, keeps the first images."""
    values = _flat_bytes(value)
    if not values or is_text(values):  # (text, the common case: one check for the record)
        return
    for item in values:
        if is_text([item]):
            continue
        found.values += 1
        if found.described < MAX_DESCRIBED:
            found.kinds[described(item)] += 1
        if len(found.images) < UNGROUPED_THUMBNAILS:
            pixels = decoded(item)
            if pixels is not None:
                found.images.append(pixels)


def _flat_bytes(value: Any) -> list[bytes]:
    """A record's bytes values, whatever their shape (a scalar, a list, per-step lists)."""
    if isinstance(value, bytes):
        return [value]
    if isinstance(value, np.ndarray):
        return [item for item in value.ravel().tolist() if isinstance(item, bytes)]
    if isinstance(value, (list, tuple)):
        return [item for part in value for item in _flat_bytes(part)]
    return []


def strip(frames: np.ndarray) -> np.ndarray:
    """Up to STRIP_FRAMES of a clip's frames ([steps, h, w, c]), evenly spaced from its first to its last."""
    count = min(len(frames), STRIP_FRAMES)
    return frames[np.round(np.linspace(0, len(frames) - 1, count)).astype(int)]


def _class_names(feature: Feature) -> list[str]:
    return [str(name) for name in feature.classes or ()]
