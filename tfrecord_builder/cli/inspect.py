"""`inspect PATH [--show N]`: a summary of a built dataset or of one TFRecord file."""
from __future__ import annotations

import argparse
import json
import os
from itertools import islice
from typing import Any

import numpy as np

from ..codec.arrays import NO_KIND
from ..codec.example_reader import parse_record
from ..codec.tfrecord import open_records, read_records
from ..errors import UsageError
from ..features.shown import shortest_floats
from ..read.dataset import Dataset
from ..read.report.binary import shown
from .. import fs
from ..write.info import DatasetInfo, read_info
from ..write.naming import INFO_FILE, METADATA_FILE
from ..write.stats import MAX_VOCABULARY_VALUE
from .format import size, table

NAME = "inspect"
HELP = "summarise a built dataset (its folder) or one TFRecord file; --show N prints N examples"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="a dataset folder (NAME/VERSION) or a .tfrecord file")
    parser.add_argument("--show", type=int, default=0, metavar="N", help="print the first N examples, decoded")
    parser.add_argument("--split", help="the split --show reads (default: the first)")


def run(args: argparse.Namespace) -> int:
    if args.show < 0:
        raise UsageError(f"--show: expected a number of examples (0 or more), received {args.show}")
    # a missing local path is an error here; a URL is taken as it comes (read_info says what is missing there)
    if not fs.is_url(args.path) and not os.path.exists(args.path):
        raise UsageError(f"{args.path}: no such file or folder")
    # in an object store a folder is a prefix: what isn't a file is taken for a dataset's folder
    if fs.basename(args.path) in (INFO_FILE, METADATA_FILE) or (os.path.isdir(args.path) if not fs.is_url(args.path)
                                                 else not _is_file(args.path)):
        _dataset(read_info(args.path), args.show, args.split)
    else:
        _file(args.path, args.show)
    return 0


def _dataset(info: DatasetInfo, show: int, split: str | None) -> None:
    spec = info.spec
    if split is not None and split not in info.splits:
        raise UsageError(f"--split: unknown split {split!r}; expected one of: {', '.join(info.splits)}")
    print(f"{spec.name} {spec.version}: {spec.description}".rstrip(": "))
    print(f"folder: {info.path}")
    print(f"format: {spec.format}, compression: {spec.output.compression}, label: {spec.label or '(none)'}")
    print()
    rows = []
    for name, feature in spec.features.items():
        parse = "; ".join(f"{key}: {parse_spec_text(*spec)}" for key, spec in feature.parsing().items())
        rows.append((name, feature.describe(), parse))
    print(table(["feature", "decoded", "parse spec (key: spec)"], rows))
    print()
    rows = [(name, f"{split.num_examples:,}", len(split.shards), size(split.num_bytes))
            for name, split in info.splits.items()]
    print(table(["split", "examples", "shards", "size"], rows))
    if info.skipped:
        print(f"skipped while building: {info.skipped} records (see skipped.jsonl)")
    shown_split = split or next(iter(info.statistics), None)
    statistics = info.statistics.get(shown_split, {}) if shown_split else {}
    if statistics:
        print()
        others = "" if split or len(info.statistics) < 2 else " (--split S for another)"
        print(f"statistics ({shown_split}){others}:")
        for name, stats in statistics.items():
            print(f"  {name}: {_summary(stats)}")
    if show:
        # the records through our own reader and decoder, no TensorFlow (a damaged one is named)
        records = list(islice(Dataset(info).read(split or next(iter(info.splits))), show))
        print()
        _show_records(records, spec.label, _class_names(spec))


def _class_names(spec: Any) -> dict[str, list[str]]:
    """The names of each class label feature's classes (by feature name), where it has names."""
    return {name: feature.class_names for name, feature in spec.features.items() if feature.class_names is not None}


def _show_records(records: list[dict[str, Any]], label: str | None, class_names: dict[str, list[str]]) -> None:
    if not records:
        print("(no examples)")
        return
    for index, record in enumerate(records):
        if label:  # the label last, as input_fn's (features, label) pairs put it
            record = {**{name: value for name, value in record.items() if name != label}, label: record[label]}
        values = {name: _named(_plain(value), class_names.get(name)) for name, value in record.items()}
        print(f"example {index}: {json.dumps(values, ensure_ascii=False)}")


def _named(value: Any, names: list[str] | None) -> Any:
    """A class index shown with its name, `"2 (barbera)"` (lists too, as sequences have them)."""
    if names is None:
        return value
    if isinstance(value, list):
        return [_named(item, names) for item in value]
    return f"{value} ({names[value]})" if isinstance(value, int) and 0 <= value < len(names) else value


def _plain(value: Any) -> Any:
    """A decoded value as JSON shows it: an image as its summary, floats as their shortest text."""
    if isinstance(value, np.ndarray) and value.ndim == 3:  # an image: its summary, not its pixels
        return f"<image {value.dtype} {list(value.shape)}, min {value.min():.3g}, max {value.max():.3g}>"
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind == "f":
        return shortest_floats(value)  # what reads back as the same float32, not its float64 expansion
    value = value.tolist() if hasattr(value, "tolist") else value
    return _text(value)


def _text(value: Any) -> Any:
    """Bytes as text, or, binary (an instance mask's PNG), as what they are: `<PNG 64×48, 1,276 bytes>`."""
    if isinstance(value, bytes):
        return shown(value)
    if isinstance(value, list):
        return [_text(item) for item in value]
    return value


def _stored(kind: str, values: list[Any]) -> list[Any]:
    """A feature's stored list as JSON shows it: a float list's values are float32s."""
    return shortest_floats(np.asarray(values, dtype=np.float32)) if kind == "float" else _text(values)


def _summary(stats: dict[str, Any]) -> str:
    if "classes" in stats:
        return "; ".join([_classes(stats["classes"])] + _gaps(stats))
    parts = []
    if "min" in stats:
        parts.append(f"min {stats['min']:.4g}, max {stats['max']:.4g}, mean {stats['mean']:.4g}, std {stats['std']:.4g}")
    if stats.get("num_non_finite"):
        parts.append(f"{stats['num_non_finite']} NaN or inf")
    if "vocabulary_size" in stats or "vocabulary_size_at_least" in stats:
        vocabulary = stats.get("vocabulary_size", stats.get("vocabulary_size_at_least"))
        top = ", ".join(repr(item["value"]) for item in stats["top_values"][:3])
        parts.append(f"vocabulary {vocabulary}, top {top}")
    if "value_bytes" in stats:  # bytes values counted by their sizes, without a vocabulary
        sizes = stats["value_bytes"]
        what = "binary values" if stats.get("binary") else f"values (no vocabulary: some over {MAX_VOCABULARY_VALUE} bytes)"
        parts.append(f"{stats['num_values']:,} {what}, {sizes['min']:,}-{sizes['max']:,} bytes (mean {sizes['mean']:,.1f})")
    if "num_images" in stats:
        height, width = stats["height"], stats["width"]
        parts.append(f"{stats['num_images']} images, height {height['min']}-{height['max']}, "
                     f"width {width['min']}-{width['max']}, {stats['channels']} channel{'s' if stats['channels'] > 1 else ''}")
    if "steps" in stats:
        steps = stats["steps"]
        parts.append(f"steps {steps['min']}-{steps['max']} (mean {steps['mean']:.1f})")
    if "length" in stats:
        length = stats["length"]
        parts.append(f"length {length['min']}-{length['max']} (mean {length['mean']:.1f})")
    return "; ".join(parts + _gaps(stats)) or "-"


def _classes(classes: dict[str, int]) -> str:
    """`classes cat 18, dog 7`: those present, most frequent first (ties in the classes' order),
    and how many have none (of COCO's 80, most may)."""
    present = sorted((item for item in classes.items() if item[1]), key=lambda item: -item[1])
    text = "classes " + (", ".join(f"{name} {count}" for name, count in present) or "none present")
    absent = len(classes) - len(present)
    return text + (f" ({absent} of {len(classes)} classes have none)" if absent and present else "")


def _gaps(stats: dict[str, Any]) -> list[str]:
    """`filled 59` (records the default filled, left out of the other figures), and `missing N`
    for records left without a value (an empty list); a dataset of an earlier version, whose
    figures count the filled values in, says `missing` only."""
    filled, missing = stats.get("num_filled", 0), stats.get("num_missing", 0)
    parts = [f"filled {filled}"] if filled else []
    if missing > filled:
        parts.append(f"missing {missing - filled}" if filled else f"missing {missing}")
    return parts


def _file(path: str, show: int) -> None:
    compression = _compression(path)
    keys: dict[str, tuple[str, int, int]] = {}
    count = 0
    shown: list[dict[str, Any]] = []
    kinds = {"Example": 0, "SequenceExample": 0}
    with open_records(path, compression) as stream:
        for index, record in enumerate(read_records(stream, fs.basename(path))):
            features, lists = parse_record(record, f"{fs.basename(path)}: record {index}")
            kinds["SequenceExample" if lists is not None else "Example"] += 1
            flat = {key: (kind, values) for key, (kind, values) in features.items()}
            for key, steps in (lists or {}).items():
                kinds_set = [kind for kind, _ in steps if kind != NO_KIND]
                flat[f"{key} (steps)"] = (kinds_set[0] if kinds_set else NO_KIND,
                                          [value for _, values in steps for value in values])
                flat[f"{key} (number of steps)"] = (NO_KIND, steps)
            for key, (kind, values) in flat.items():
                known, low, high = keys.get(key, (kind, len(values), len(values)))
                keys[key] = (known if kind == NO_KIND else kind, min(low, len(values)), max(high, len(values)))
            if len(shown) < show:
                example = {key: _stored(kind, values) for key, (kind, values) in features.items()}
                example.update({key: [_stored(kind, values) for kind, values in steps]
                                for key, steps in (lists or {}).items()})
                shown.append(example)
            count += 1
    kind = " and ".join(f"{name}s" for name, number in kinds.items() if number) or "records"
    print(f"{path}: {count:,} records ({kind}), {size(fs.size(path))}, compression: {compression}")
    rows = [(key, kind, f"{low}" if low == high else f"{low}-{high}") for key, (kind, low, high) in sorted(keys.items())
            if not key.endswith("(number of steps)")]
    rows += [(key, "", f"{low}" if low == high else f"{low}-{high}") for key, (_, low, high) in sorted(keys.items())
             if key.endswith("(number of steps)")]
    print(table(["key", "list", "values per record"], rows))
    for index, example in enumerate(shown):
        print(f"record {index}: {json.dumps(example, ensure_ascii=False, default=str)}")


def _is_file(url: str) -> bool:
    return fs.exists(url) and not fs.isdir(url)


def _compression(path: str) -> str:
    with fs.open_file(path) as file:
        head = file.read(2)
    if head == b"\x1f\x8b":
        return "gzip"
    if path.endswith((".deflate", ".zz")) or (len(head) == 2 and head[0] == 0x78 and (head[0] * 256 + head[1]) % 31 == 0):
        return "zlib"
    return "none"


def parse_spec_text(kind: str, dtype: str, shape: list[int | None]) -> str:
    """The `tf.io` parse spec that read/tfdata.py's parse_spec makes of a description, as text."""
    if kind == "var":
        return f"tf.io.VarLenFeature(tf.{dtype})"
    if kind == "ragged":
        partitions = ", ".join(f"tf.io.RaggedFeature.UniformRowLength({dim})" for dim in shape[1:])
        return f"tf.io.RaggedFeature(tf.{dtype}, {f'partitions=[{partitions}], ' if partitions else ''}" \
               "row_splits_dtype=tf.int64)"
    name = "FixedLenSequenceFeature" if kind == "fixed_steps" else "FixedLenFeature"
    return f"tf.io.{name}({shape}, tf.{dtype})"
