"""How a dataset is read, as literals only: the description read/tfdata.py's functions follow in
`tb.input_fn` and that the generated module holds as READING (its NumPy twin, numpy_decoding.py,
too). Each feature describes its own part (`Feature.reading`); this adds the dataset's: its format,
compression, label, batching, a sequence's lengths, the padded objects and detection batches."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .text_reading import mlm_reading, text_buckets_reading

if TYPE_CHECKING:
    from .model import Spec


def reading_of(spec: Spec) -> dict[str, Any]:
    """How `spec`'s dataset is read, as literals only (`Spec.reading()`)."""
    options = spec.input
    reading: dict[str, Any] = {
        "format": spec.format, "compression": spec.output.reader_compression, "label": spec.label,
        "batch_size": options.batch_size, "shuffle_buffer": options.shuffle_buffer,
    }
    if spec.is_sequence:
        length = spec.length_source
        assert length is not None  # a SequenceExample spec has sequence features
        reading.update({
            "length_key": length.record_key, "length_is_ragged": length.is_variable,
            "max_length": options.max_length, "bucket_boundaries": options.bucket_boundaries,
            "length_feature": options.length_feature, "mask_feature": options.mask_feature,
        })
    else:
        reading.update({"objects": _objects_reading(spec), "detection": _detection_reading(spec)})
    reading["features"] = {name: feature.reading(options) for name, feature in spec.features.items()}
    if options.text == "keras_hub":
        reading["text"] = _text_reading(spec)
    # (keys of their own, only where asked: other datasets' READING stays as it was)
    mlm, buckets = mlm_reading(spec), text_buckets_reading(spec)
    if mlm is not None:
        reading["mlm"] = mlm
    if buckets is not None:
        reading["text_buckets"] = buckets
    return reading


def _text_reading(spec: Spec) -> dict[str, Any]:
    """`input.text: keras_hub` as READING holds it: the names of the text's ids, padding mask and
    segment ids (None for one text), read off its companions (checked by `Spec._check_text`)."""
    name, feature = next((name, feature) for name, feature in spec.features.items() if feature.holds_text)
    names = feature.companion_names
    return {"ids": name, "mask": names[0], "segments": names[1] if len(names) > 1 else None}


def _objects_reading(spec: Spec) -> dict[str, Any] | None:
    """`input.objects: padded` as READING holds it: the count's name and the feature it counts."""
    if spec.input.objects == "ragged":
        return None
    boxes = [name for name, feature in spec.features.items() if feature.holds_boxes]
    count = spec.input.count_feature
    return {"count_feature": count, "count_of": boxes[0] if count is not None else None}


def _detection_reading(spec: Spec) -> dict[str, Any] | None:
    """`input.detection` as READING holds it: the features of the images, boxes and labels, and the
    boxes' format (checked by `Spec._check_objects`)."""
    detection = spec.input.detection
    if detection is None:
        return None
    boxes = detection.boxes or next(name for name, feature in spec.features.items() if feature.holds_boxes)
    return {"images": spec.features[boxes].image_name, "boxes": boxes, "labels": detection.labels or spec.label,
            "format": detection.bounding_box_format}
