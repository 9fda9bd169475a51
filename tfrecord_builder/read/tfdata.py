"""Reading shards into batches, in TensorFlow: the one implementation of reading.

`tb.input_fn` / `tb.load` call these functions, and every generated module carries a verbatim
copy of them (codegen/helpers.py copies this file's functions), plus one literal, READING, that
describes the dataset: its compression, label and sequence options, and per feature how its
record keys are parsed and which decode steps turn them into the tensors trained on. The
library makes the same description from the spec (`Spec.reading()`), so both paths run the very
same code on the very same data.

A feature's description:
    {"sequence": False,                       # parsed per step (SequenceExample) or per record
     "parse": {KEY: (KIND, DTYPE, SHAPE)},    # KIND: fixed, var, ragged or fixed_steps
     "decode": [(STEP, {ARG: VALUE})]}        # STEP: a function below named in DECODE_STEPS
The first step gets the parsed tensor of the first key; each later step the one before's
result. An argument written {"parsed": KEY} is that parsed tensor, {"lengths": KEY} the
parser's step counts of a sequence key; any other value is passed as it is.

Keep this file self-contained: its functions may use only `tf`, `os` and each other. They raise
ValueError (bad arguments) and OSError (a dataset that can't be read); the library turns those
into its UsageError and DatasetError, with the same words.
"""
import os

import tensorflow as tf

DECODE_STEPS = ("cast", "exact_float64", "to_ragged", "to_padded", "pad_steps",
                "fixed_images", "padded_images", "resized_images", "scaled_images", "resized_masks",
                "stacked_boxes", "padded_boxes", "padded_audio", "length_mask", "step_images",
                "stacked_points", "point_rows", "padded_points", "padded_ids")
# An unshuffled pass reads two shards at a time where its batches hold at least LARGE_BATCH records
# of at most SMALL_RECORD bytes on average (`records_in_order`)
SMALL_RECORD = 1024
LARGE_BATCH = 512


def parse_spec(kind, dtype, shape):
    """A `tf.io` parse spec from its literal description."""
    dtype = tf.as_dtype(dtype)
    if kind == "fixed":
        return tf.io.FixedLenFeature(shape, dtype)
    if kind == "fixed_steps":
        return tf.io.FixedLenSequenceFeature(shape, dtype)
    if kind == "var":
        return tf.io.VarLenFeature(dtype)
    if kind == "ragged":  # a variable first dimension, then uniform ones
        partitions = [tf.io.RaggedFeature.UniformRowLength(dim) for dim in shape[1:]]
        return tf.io.RaggedFeature(dtype, partitions=partitions, row_splits_dtype=tf.int64)
    raise ValueError(f"unknown parse kind {kind!r}")


def parse_specs(reading, sequence=False):
    """The parse specs by record key of the features parsed per record (or, with `sequence`, per
    step): what `tf.io.parse_example` / `parse_sequence_example` take. A per-step feature's keys
    of kind `fixed` (a video's duration) are in its record's context."""
    return {key: parse_spec(*parse) for feature in reading["features"].values()
            for key, parse in feature["parse"].items() if (feature["sequence"] and parse[0] != "fixed") == sequence}


def companions(features, parsed):
    """The features decoded beside others from the same parsed keys (an audio feature's length
    and mask, a video's duration), by name: each feature's "companions" description, where it has one."""
    return {name: decoded(companion, parsed) for feature in features.values()
            for name, companion in feature.get("companions", {}).items()}


def decoded(feature, parsed, lengths=None):
    """One feature's batch tensor from the parser's output, by its decode steps."""
    def argument(value):
        if isinstance(value, dict):  # {"parsed": KEY} or {"lengths": KEY}
            (source, key), = value.items()
            return (parsed if source == "parsed" else lengths)[key]
        return value

    value = parsed[next(iter(feature["parse"]))]
    for step, arguments in feature["decode"]:
        if step not in DECODE_STEPS:
            raise ValueError(f"unknown decode step {step!r}")
        value = globals()[step](value, **{name: argument(item) for name, item in arguments.items()})
    return value


def parse_records(serialized, reading):
    """Parses and decodes a batch of serialised records (a 1-D string tensor) at once.

    A SequenceExample's sequence features come padded to the longest sequence of the batch (or
    cut to its max_length), with their lengths under its length_feature (and a boolean mask under
    its mask_feature)."""
    features = reading["features"]
    if reading["format"] == "example":
        parsed = tf.io.parse_example(serialized, parse_specs(reading))
        batch = {name: decoded(feature, parsed) for name, feature in features.items()}
        batch.update(companions(features, parsed))
        return batch if reading["objects"] is None else padded_objects(batch, reading["objects"])
    context, sequence, lengths = tf.io.parse_sequence_example(
        serialized, context_features=parse_specs(reading) or None, sequence_features=parse_specs(reading, True))
    length = sequence_lengths(reading, sequence, lengths)
    batch = {name: decoded(feature, sequence if feature["sequence"] else context, lengths)
             for name, feature in features.items()}
    batch.update(companions(features, context))  # (a per-step feature's companions are its context keys: a clip's)
    if reading["max_length"] is not None:
        for name, feature in features.items():
            if feature["sequence"]:
                batch[name] = batch[name][:, :reading["max_length"]]
        length = tf.minimum(length, reading["max_length"])
    if reading["length_feature"] is not None:
        batch[reading["length_feature"]] = length
    if reading["mask_feature"] is not None:
        batch[reading["mask_feature"]] = tf.sequence_mask(length)  # as wide as the padded length feature
    return batch


def padded_objects(batch, objects):
    """`input.objects: padded`: the per-object features (the ragged ones: bbox, shape [null, ...]) as
    dense tensors padded to the batch's most objects (with `object_pad`), and each record's number of
    boxes under objects["count_feature"] (int32)."""
    batch = dict(batch)
    if objects["count_feature"] is not None:
        batch[objects["count_feature"]] = tf.cast(batch[objects["count_of"]].row_lengths(), tf.int32)
    for name, value in list(batch.items()):
        if isinstance(value, tf.RaggedTensor):
            batch[name] = value.to_tensor(default_value=object_pad(value.dtype))
    return batch


def object_pad(dtype):
    """What pads a per-object value: -1, never a class id, an index or a side of a box (Keras' and
    KerasHub's convention); "" for text, False for booleans, 0 for unsigned integers (no -1)."""
    if dtype == tf.string:
        return ""
    if dtype == tf.bool:
        return False
    return tf.constant(0 if dtype.is_unsigned else -1, dtype)


def detection_pair(features, detection):
    """`(images, {"boxes": ..., "labels": ...})` for KerasHub's object detectors in `model.fit`: the
    boxes in detection["format"] (`box_format`) and the labels as int32, both padded with -1 to the
    batch's most objects."""
    images, boxes, labels = (features[detection[key]] for key in ("images", "boxes", "labels"))
    if isinstance(boxes, tf.RaggedTensor):
        boxes = boxes.to_tensor(default_value=-1.0)
    if isinstance(labels, tf.RaggedTensor):
        labels = labels.to_tensor(default_value=-1)
    real = tf.reduce_all(boxes >= 0.0, axis=-1, keepdims=True)  # stored fractions are >= 0; a pad is -1
    shape = tf.shape(images)
    boxes = tf.where(real, box_format(boxes, detection["format"], shape[1], shape[2]), -1.0)
    return images, {"boxes": boxes, "labels": tf.cast(labels, tf.int32)}


def box_format(boxes, format, height, width):
    """Boxes [..., 4] of fractions [ymin, xmin, ymax, xmax] in a format of Keras' bounding-box
    utilities (`keras.utils.bounding_boxes`): rel_* in fractions, the others in pixels of an image
    of `height` x `width`."""
    ymin, xmin, ymax, xmax = tf.unstack(boxes, axis=-1)
    name = format[len("rel_"):] if format.startswith("rel_") else format
    if name == format:
        height, width = tf.cast(height, boxes.dtype), tf.cast(width, boxes.dtype)
        ymin, xmin, ymax, xmax = ymin * height, xmin * width, ymax * height, xmax * width
    sides = {"yxyx": (ymin, xmin, ymax, xmax), "xyxy": (xmin, ymin, xmax, ymax),
             "xywh": (xmin, ymin, xmax - xmin, ymax - ymin),
             "center_xywh": ((xmin + xmax) / 2, (ymin + ymax) / 2, xmax - xmin, ymax - ymin),
             "center_yxhw": ((ymin + ymax) / 2, (xmin + xmax) / 2, ymax - ymin, xmax - xmin)}
    if name not in sides or (format.startswith("rel_") and name == "center_yxhw"):
        raise ValueError(f"unknown box format {format!r}")
    return tf.stack(sides[name], axis=-1)


def sequence_lengths(reading, sequence, lengths):
    """Each record's number of steps: the parser's count of the length key's steps, or the row
    lengths of a ragged one."""
    key, ragged = reading["length_key"], reading["length_is_ragged"]
    return sequence[key].row_lengths() if ragged else lengths[key]


def record_length(serialized, reading):
    """One serialised SequenceExample's number of steps (for bucketing by length)."""
    key = reading["length_key"]
    spec = next(feature["parse"][key] for feature in reading["features"].values()
                if feature["sequence"] and key in feature["parse"])
    _, sequence, lengths = tf.io.parse_sequence_example(serialized[tf.newaxis],
                                                        sequence_features={key: parse_spec(*spec)})
    return tf.cast(sequence_lengths(reading, sequence, lengths)[0], tf.int32)  # bucketing wants int32


# ---- decode steps ------------------------------------------------------------------------------
def cast(values, dtype):
    """Stored values in the declared dtype (uint8, int32, bool, float16 are stored wider)."""
    return tf.cast(values, tf.as_dtype(dtype))


def to_ragged(values):
    """A VarLenFeature's sparse batch as a RaggedTensor.

    What `RaggedTensor.from_sparse` does, less its check that the indices are sorted by row,
    which the parser's always are: the check cost 10% of a whole batch's parsing."""
    return tf.RaggedTensor.from_value_rowids(values.values, values.indices[:, 0], nrows=values.dense_shape[0],
                                             validate=False)


def to_padded(values, pad):
    """Variable-length steps as a dense batch, padded with `pad` to the longest sequence."""
    return values.to_tensor(default_value=pad_value(pad))


def stacked_boxes(ymin, xmin, ymax, xmax):
    """Boxes stored as four lists (the Object Detection API's layout) as one ragged
    [batch, None, 4] of [ymin, xmin, ymax, xmax]; a record whose lists differ in length fails."""
    sides = [to_ragged(side) for side in (ymin, xmin, ymax, xmax)]
    splits = sides[0].row_splits
    checks = [tf.debugging.assert_equal(side.row_splits, splits, message="a record's four box lists differ in length")
              for side in sides[1:]]
    with tf.control_dependencies(checks):
        flat = tf.stack([side.flat_values for side in sides], axis=1)
    return tf.RaggedTensor.from_row_splits(flat, splits, validate=False)


def padded_boxes(boxes, shapes):
    """Boxes (fractions of their own image) as fractions of the batch's images padded at the bottom
    and right to the largest (padded_images): each image's share of the padded height and width."""
    sizes = tf.cast(shapes[:, :2], tf.float32)
    scale = tf.tile(sizes / tf.maximum(tf.reduce_max(sizes, axis=0), 1.0), [1, 2])  # [batch, (y, x, y, x)]
    return boxes * scale[:, tf.newaxis, :]


def point_rows(values, size):
    """A VarLenFeature of `size` values an object (the Object Detection API's keypoint lists) as a
    ragged [batch, None, size]: an object's values a row."""
    values = to_ragged(values)
    return tf.RaggedTensor.from_row_splits(tf.reshape(values.flat_values, [-1, size]), values.row_splits // size,
                                           validate=False)


def stacked_points(y, x, size):
    """Keypoints stored as two lists, y and x (the Object Detection API's), as one ragged
    [batch, None, size, 2] of [y, x]; a record whose lists differ in length fails."""
    sides = [to_ragged(side) for side in (y, x)]
    check = tf.debugging.assert_equal(sides[0].row_splits, sides[1].row_splits,
                                      message="a record's keypoint lists differ in length")
    with tf.control_dependencies([check]):
        flat = tf.reshape(tf.stack([side.flat_values for side in sides], axis=1), [-1, size, 2])
    return tf.RaggedTensor.from_row_splits(flat, sides[0].row_splits // size, validate=False)


def padded_points(points, shapes):
    """Keypoints (fractions of their own image) as fractions of the batch's images padded at the
    bottom and right to the largest, as padded_boxes moves boxes."""
    sizes = tf.cast(shapes[:, :2], tf.float32)
    scale = sizes / tf.maximum(tf.reduce_max(sizes, axis=0), 1.0)  # [batch, (y, x)]
    return points * scale[:, tf.newaxis, tf.newaxis, :]


def pad_value(pad):
    """A pad as a description holds it: a NaN or infinite float is written as text ("nan",
    "inf", "-inf"), since those have no literal."""
    return float(pad) if isinstance(pad, str) else pad



def decode_image(encoded, shape, encoding, channels, dtype="uint8"):
    """One stored image as uint8 (or, for `dtype: uint16`, uint16) [height, width, channels]."""
    if encoding == "raw":
        return tf.reshape(tf.io.decode_raw(encoded, tf.uint8), shape)
    if encoding == "jpeg":
        # the accurate inverse DCT, as Pillow decodes: the pixels trained on are those the build saw
        return tf.io.decode_jpeg(encoded, channels=channels, dct_method="INTEGER_ACCURATE")
    return tf.io.decode_png(encoded, channels=channels, dtype=tf.as_dtype(dtype))


def fixed_images(encoded, encoding, shape, dtype="uint8"):
    """A batch of images that all have the declared `shape`: uint8 (or uint16) [batch, *shape]."""
    if encoding == "raw":
        return tf.reshape(tf.io.decode_raw(encoded, tf.uint8), [-1, *shape])
    # map_fn runs its function through AutoGraph, which can't read the source of a module loaded
    # from its path (it warned on every batch): plain graph code has nothing to convert
    images = tf.map_fn(
        tf.autograph.experimental.do_not_convert(lambda image: decode_image(image, shape, encoding, shape[-1], dtype)),
        encoded,
        fn_output_signature=tf.TensorSpec(shape, tf.as_dtype(dtype)),
    )
    return tf.ensure_shape(images, [None, *shape])


def padded_images(encoded, shapes, encoding, channels, dtype="uint8"):
    """A batch of images of different sizes, zero-padded at the bottom and right to the largest."""
    shapes = tf.cast(shapes, tf.int32)
    height = tf.reduce_max(shapes[:, 0])
    width = tf.reduce_max(shapes[:, 1])
    return tf.map_fn(
        tf.autograph.experimental.do_not_convert(lambda pair: tf.image.pad_to_bounding_box(
            decode_image(pair[0], pair[1], encoding, channels, dtype), 0, 0, height, width)),
        (encoded, shapes),
        fn_output_signature=tf.TensorSpec([None, None, channels], tf.as_dtype(dtype)),
    )


def resized_images(encoded, shapes, encoding, channels, size, dtype="uint8"):
    """A batch of images of different sizes, each resized (bilinear, antialiased) to `size`."""
    top = tf.as_dtype(dtype).max

    def resize(pair):
        image = decode_image(pair[0], pair[1], encoding, channels, dtype)
        resized = tf.image.resize(image, size, method="bilinear", antialias=True)
        return tf.cast(tf.clip_by_value(tf.round(resized), 0, top), dtype)

    return tf.map_fn(tf.autograph.experimental.do_not_convert(resize), (encoded, shapes),
                     fn_output_signature=tf.TensorSpec([*size, channels], tf.as_dtype(dtype)))


def step_images(encoded, length, steps, shapes=None):
    """A batch of sequences of images (one encoded image per step, padded with "" past each
    record's `length`) as [batch, steps, height, width, channels], zero past the length: the
    real steps' images are decoded by the image decode `steps` (their `shapes` argument: the
    real steps' shapes), then padded again."""
    ragged = tf.RaggedTensor.from_tensor(encoded, lengths=length)
    flat_shapes = None if shapes is None else tf.RaggedTensor.from_tensor(shapes, lengths=length).flat_values
    images = ragged.flat_values
    for step, arguments in steps:
        if step not in DECODE_STEPS:
            raise ValueError(f"unknown decode step {step!r}")
        arguments = {name: flat_shapes if isinstance(item, dict) else item for name, item in arguments.items()}
        if step == "padded_images":  # map_fn can't stack no images of unknown size: a batch of empty sequences
            images = tf.cond(tf.size(images) > 0,
                             lambda: padded_images(images, **arguments),
                             lambda: tf.zeros([0, 0, 0, arguments["channels"]], tf.as_dtype(arguments.get("dtype", "uint8"))))
        else:
            images = globals()[step](images, **arguments)
    return ragged.with_flat_values(images).to_tensor()


def resized_masks(encoded, shapes, size):
    """A batch of masks (one-channel PNGs of class indices) of different sizes, each resized to
    `size` by nearest neighbour: every value stays a class the mask holds."""
    def resize(pair):
        return tf.image.resize(decode_image(pair[0], pair[1], "png", 1), size, method="nearest")

    return tf.map_fn(tf.autograph.experimental.do_not_convert(resize), (encoded, shapes),
                     fn_output_signature=tf.TensorSpec([*size, 1], tf.uint8))


def scaled_images(images):
    """uint8 (or uint16) pixels as float32 in [0, 1]: divided by 255 (or 65535)."""
    return tf.cast(images, tf.float32) / float(images.dtype.max)


def padded_ids(values, pad):
    """A VarLenFeature's sparse batch of token ids as a dense [batch, longest] one, padded with the
    tokenizer's `pad` id: the token ids of a `text` feature."""
    return tf.sparse.to_dense(values, default_value=tf.cast(pad, values.dtype))


def padded_audio(encoded, lengths, encoding, channels, dtype):
    """A batch of waveforms (little-endian int16 or float32 samples, interleaved) as
    [batch, samples] (one channel) or [batch, samples, channels], zero-padded to the longest: one
    decode_raw for the whole batch. float32 from int16 is int16 / 32768 (soundfile's scale)."""
    stored = tf.int16 if encoding == "pcm16" else tf.float32
    longest = tf.reduce_max(tf.concat([tf.cast(lengths, tf.int32), [0]], 0))
    width = longest * channels
    item = 2 if encoding == "pcm16" else 4
    # decode_raw pads each record with zero bytes to fixed_length (at least one sample: it refuses 0)
    samples = tf.io.decode_raw(encoded, stored, little_endian=True, fixed_length=tf.maximum(width, 1) * item)
    samples = tf.reshape(samples[:, :width], [-1, longest, channels] if channels > 1 else [-1, longest])
    if dtype == "float32" and encoding == "pcm16":
        return tf.cast(samples, tf.float32) / 32768.0
    return samples


def length_mask(lengths):
    """Each record's length as a boolean mask as wide as the batch's longest (its padded width)."""
    return tf.sequence_mask(lengths)


def pad_steps(values, length, pad):
    """Sets the steps past each sequence's `length` to `pad` (the parser pads with 0 or "")."""
    mask = tf.sequence_mask(length, tf.shape(values)[1])
    inner = tf.ones([tf.rank(values) - 2], tf.int32)
    mask = tf.reshape(mask, tf.concat([tf.shape(mask), inner], 0))
    return tf.where(mask, values, tf.cast(pad_value(pad), values.dtype))


def exact_float64(values):
    """Stored float32 values as float64, subnormal ones included: TensorFlow's CPU cast flushes
    those to zero, so they are rebuilt from their bits (mantissa * 2^-149, exact in float64)."""
    if isinstance(values, tf.RaggedTensor):
        return tf.ragged.map_flat_values(exact_float64, values)
    bits = tf.bitcast(values, tf.int32)
    subnormal = tf.equal(tf.bitwise.bitwise_and(bits, 0x7F800000), 0)
    magnitude = tf.cast(tf.bitwise.bitwise_and(bits, 0x007FFFFF), tf.float64) * 2.0**-149
    return tf.where(subnormal, tf.where(bits < 0, -magnitude, magnitude), tf.cast(values, tf.float64))


def read_shard(path, count, compression, chunk):
    """The `count` records of the shard at `path` in batches of `chunk`; the epoch fails, naming
    the shard, if it holds fewer.

    TensorFlow's error for a corrupt or cut record doesn't name the file, and it ends the file:
    so a batch that can't be read is dropped (`ignore_errors`), which leaves the shard short of
    its ceil(count / chunk) batches, and the one after the last it still has is a failure that
    names it. Every step here works on whole batches, never per record: nothing is added to the
    cost of reading a record, and the failure's function runs only in a damaged shard. The
    prefetch of a batch lets the shard be read while the batch before it is taken: without it
    the concatenation held reading up (10% slower on the tabular benchmark)."""
    batches = tf.data.TFRecordDataset(path, compression_type=compression).batch(chunk).ignore_errors()
    return batches.concatenate(unreadable(path)).take((count + chunk - 1) // chunk).prefetch(1)


def unreadable(path):
    """A dataset whose one element fails the epoch with the words of a damaged shard at `path`."""
    def fail(empty):
        check = tf.debugging.Assert(False, ["a record that cannot be read (corrupt or cut) in shard", path,
                                            "- run `tfrecord-builder verify` on the dataset"])
        with tf.control_dependencies([check]):
            return tf.identity(empty)

    return tf.data.Dataset.from_tensors(tf.zeros([0], tf.string)).map(tf.autograph.experimental.do_not_convert(fail))


def positive_batch_size(batch_size):
    """`batch_size` as an int, or ValueError: tf.data would crash the process on rebatch(-1), and
    batch(0) fails only when iterated."""
    if isinstance(batch_size, bool) or not hasattr(batch_size, "__index__") or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, received {batch_size!r}")
    return batch_size.__index__()


def batched_records(files, counts, compression, batch_size, shuffle, shuffle_buffer, repeat, bucketing=None,
                    two_shards=False):
    """Batches of serialised records from the shards `files` (holding `counts` records).

    Without shuffling, the shards' records come in order (as `tb.read` and `record(i)` give
    them), in batches of `batch_size` cut across shards (`records_in_order`, with `two_shards`
    read two at a time): one pass yields ceil(n / batch_size) batches. Shuffling reads 4 shards
    at a time in parallel, each in small batches (`read_shard`) taken apart into a shuffle buffer.
    The order is the same on every run (under the same `tf.random` seed). `bucketing` =
    (record_length, boundaries, steps) batches records of similar length together; `steps`
    ({number of steps: records}, or None) gives the number of batches that makes.
    """
    batch_size = positive_batch_size(batch_size)
    num_examples = sum(counts)
    if not shuffle and bucketing is None:
        dataset = records_in_order(files, counts, compression, batch_size, two_shards)
        if not repeat:
            # a known length lets Keras show progress and end epochs without a "ran out of data" warning
            return dataset.apply(tf.data.experimental.assert_cardinality(-(-num_examples // batch_size)))
        # the batches span passes as they span shards
        return dataset.repeat() if num_examples % batch_size == 0 else dataset.repeat().rebatch(batch_size)
    dataset = tf.data.Dataset.from_tensor_slices((tf.constant(files, tf.string), tf.constant(counts, tf.int64)))
    # plain graph code: autograph has nothing to convert (and can't read the source of a module
    # loaded from a path, which it warns about)
    shard = tf.autograph.experimental.do_not_convert(lambda path, count: read_shard(path, count, compression, 64))
    if shuffle:
        dataset = dataset.shuffle(len(files)).interleave(
            shard, cycle_length=max(1, min(len(files), 4)), num_parallel_calls=tf.data.AUTOTUNE)
    else:
        dataset = dataset.flat_map(shard)
    dataset = dataset.unbatch()
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer)
    if repeat:
        dataset = dataset.repeat()
    if bucketing is not None:
        if not repeat:
            dataset = dataset.apply(tf.data.experimental.assert_cardinality(num_examples))
        record_length, boundaries, steps = bucketing
        # records of similar length share a batch: less padding
        dataset = dataset.bucket_by_sequence_length(record_length, boundaries, [batch_size] * (len(boundaries) + 1))
        if not repeat and steps is not None:  # a known length, as below (unknown, Keras warns every fit)
            dataset = dataset.apply(tf.data.experimental.assert_cardinality(
                bucketed_batches(steps, boundaries, batch_size)))
        return dataset
    dataset = dataset.batch(batch_size)
    if not repeat:
        # a known length; reading a different number of records than the info lists is then an error
        dataset = dataset.apply(tf.data.experimental.assert_cardinality(-(-num_examples // batch_size)))
    return dataset


def records_in_order(files, counts, compression, batch_size, two_shards=False):
    """One pass over the shards `files` (holding `counts` records), one after another, in
    batches of `batch_size` cut across shards, read as a hand-written pipeline reads them: one
    `TFRecordDataset` of all the files, nothing per shard or per record.

    With `two_shards`, the next shard is read while one is taken, as a hand-written pipeline that
    interleaves its files reads them, but in the same order: each shard is taken whole before the
    next (a block longer than any shard). `input_batches` asks for it where batches are large and
    records small (LARGE_BATCH, SMALL_RECORD): there framing the records is the cost of reading,
    and a second thread halves it (a table of 320-byte records in batches of 1,024: an epoch
    1.1-1.2x as fast on 2 cores). Where records are larger, decoding them is the cost (photos of
    3.4 KiB: 0.9x), and where batches are small, handing each batch between threads (the table in
    batches of 64: 0.83-0.97x): there the thread only competes with the parsing.

    TensorFlow's error for a corrupt or cut record doesn't name the file, and it ends the file,
    so naming the shard is a fallback, made only when a pass comes short. A batch that can't be
    read is dropped (`ignore_errors`, which leaves the pass short of records), and the batches
    are cut again to the pass's sizes, batch_size and then the last batch's, dropping a last one
    that comes short (`rebatch`: where the sizes agree, as in a whole pass, it passes the batches
    on as they are). A short pass thus ends short of its ceil(n / batch_size) batches, and the
    one after its last fails the epoch (`failed_pass`)."""
    total = sum(counts)
    number = -(-total // batch_size)
    sizes = [batch_size] * (number - 1) + [total - (number - 1) * batch_size] if total % batch_size else [batch_size]
    if two_shards and len(files) > 1:
        block = max(-(-count // batch_size) for count in counts) + 1
        shard = tf.autograph.experimental.do_not_convert(
            lambda path: tf.data.TFRecordDataset(path, compression_type=compression).batch(batch_size).ignore_errors())
        batches = tf.data.Dataset.from_tensor_slices(tf.constant(files, tf.string)).interleave(
            shard, cycle_length=2, block_length=block, num_parallel_calls=2, deterministic=True)
    else:
        batches = tf.data.TFRecordDataset(files, compression_type=compression).batch(batch_size).ignore_errors()
    failure = failed_pass(tf.constant(files, tf.string), tf.constant(counts, tf.int64), compression or "")
    return batches.rebatch(tf.constant(sizes, tf.int64), drop_remainder=True).concatenate(failure).take(number)


@tf.function(input_signature=(tf.TensorSpec([None], tf.string), tf.TensorSpec([None], tf.int64),
                              tf.TensorSpec([], tf.string)), autograph=False)
def failed_pass(files, counts, compression):
    """A dataset of one (empty) batch of records that fails the epoch when read, after a pass of
    `records_in_order` over the shards `files` came short: the shards are read again one by one
    (`read_shard`), which fails naming the first that holds fewer records than its count in
    `counts`; should they all read whole this time, it fails all the same. `compression` is ""
    for none. A `tf.function` of a fixed signature, so made once in a process rather than for
    every pipeline: its graph, a dataset per shard, costs more to make than the rest of one."""
    def fail(empty):
        shards = tf.data.Dataset.from_tensor_slices((files, counts)).flat_map(
            tf.autograph.experimental.do_not_convert(lambda path, count: read_shard(path, count, compression, 1024)))
        read = shards.reduce(tf.constant(0, tf.int64), tf.autograph.experimental.do_not_convert(
            lambda found, batch: found + tf.size(batch, tf.int64)))
        with tf.control_dependencies([read]):
            # (an assertion of strings only: one of other values is made under a tf.cond)
            check = tf.debugging.Assert(False, ["a pass over the shards came short of records, though they read whole"
                                                " again - run `tfrecord-builder verify` on the dataset"])
        with tf.control_dependencies([check]):
            return tf.identity(empty)

    # plain graph code: nothing for autograph to convert
    return tf.data.Dataset.from_tensors(tf.zeros([0], tf.string)).map(tf.autograph.experimental.do_not_convert(fail))


def bucketed_batches(steps, boundaries, batch_size):
    """How many batches `bucket_by_sequence_length` makes of records with these numbers of steps
    ({steps: records}): a record of n steps goes to the bucket of the boundaries <= n, and each
    bucket's records into batches of `batch_size`, its last one short, whatever their order."""
    buckets = [0] * (len(boundaries) + 1)
    for number, records in steps.items():
        buckets[sum(1 for boundary in boundaries if boundary <= int(number))] += records
    return sum(-(-records // batch_size) for records in buckets)


def length_steps(statistics, reading):
    """The split's records by their number of steps of the length key ({steps: records}), from the
    build's statistics of the split; None where they don't list them (earlier versions)."""
    key = reading["length_key"]
    name = next(name for name, feature in reading["features"].items()
                if feature["sequence"] and key in feature["parse"])
    counts = (statistics or {}).get(name, {}).get("steps", {}).get("counts")
    return None if counts is None else {int(number): records for number, records in counts.items()}


def input_batches(files, counts, reading, split, batch_size=None, shuffle=None, repeat=False, statistics=None,
                  num_bytes=None):
    """A `tf.data.Dataset` of batches of the split's decoded features, or of `(features, label)`
    pairs for Keras, from its shards `files` (holding `counts` records and `num_bytes` bytes,
    if known): what `input_fn` returns.

    `batch_size` defaults to the spec's; `shuffle` to True for the "train" split only. The split's
    `statistics` (tfrecord_builder.json's) give a bucketed pass its number of batches."""
    batch_size = positive_batch_size(reading["batch_size"] if batch_size is None else batch_size)
    shuffle = split == "train" if shuffle is None else shuffle
    bucketing = None
    if reading["format"] == "sequence_example" and reading["bucket_boundaries"] is not None:
        # records of similar length share a batch: less padding
        bucketing = (tf.autograph.experimental.do_not_convert(lambda record: record_length(record, reading)),
                     reading["bucket_boundaries"], length_steps(statistics, reading))
    elif reading.get("text_buckets") is not None:  # (a key of Example datasets batched by their text's length)
        buckets = reading["text_buckets"]
        bucketing = (tf.autograph.experimental.do_not_convert(lambda record: text_length(record, buckets["key"])),
                     buckets["boundaries"], None)
    two_shards = batch_size >= LARGE_BATCH and num_bytes is not None and num_bytes <= SMALL_RECORD * sum(counts)
    dataset = batched_records(files, counts, reading["compression"], batch_size, shuffle, reading["shuffle_buffer"],
                              repeat, bucketing, two_shards)
    # plain graph code: nothing for autograph to convert. What follows the parse is done in its map
    # (but after `input.mlm`'s masking): each stage of a pipeline costs something per batch
    mlm = reading.get("mlm")  # (a key of datasets read for masked-language-model pretraining only)
    dataset = dataset.map(tf.autograph.experimental.do_not_convert(
        lambda records: parse_records(records, reading) if mlm else finished(parse_records(records, reading), reading)),
        num_parallel_calls=tf.data.AUTOTUNE)
    if mlm is not None:
        dataset = masked_batches(dataset, mlm)
        if reading.get("text") is not None:
            dataset = dataset.map(tf.autograph.experimental.do_not_convert(
                lambda features: keras_hub_masked_lm(features, reading["text"])), num_parallel_calls=tf.data.AUTOTUNE)
        else:
            dataset = dataset.map(tf.autograph.experimental.do_not_convert(lambda features: finished(features, reading)),
                                  num_parallel_calls=tf.data.AUTOTUNE)
    return dataset.prefetch(tf.data.AUTOTUNE).with_options(without_rewrites())


def without_rewrites():
    """`tf.data.Options` that turn tf.data's default graph rewrites off. They are made when a
    dataset is first iterated, in time that grows with the pipeline's graph (15-20 ms of a table's
    first epoch here, as much as the rest of making its iterator), and do nothing for a pipeline
    whose maps already run in parallel and end in a prefetch. A user's own `map` after `input_fn`
    then runs as written (give it `num_parallel_calls`); `with_options` can turn them on again."""
    options = tf.data.Options()
    options.experimental_optimization.apply_default_optimizations = False
    return options


def finished(features, reading):
    """A batch of decoded features as `input_fn` yields it: as KerasHub's text models take it
    (`input.text`), as `(images, {"boxes": ..., "labels": ...})` for its detectors
    (`input.detection`), or as `(features, label)`; the features alone without a label."""
    if reading.get("text") is not None:  # (a key of datasets with a text feature read for KerasHub only)
        features = keras_hub_text(features, reading["text"], reading["label"])
    if reading["format"] == "example" and reading["detection"] is not None:
        return detection_pair(features, reading["detection"])
    if reading["label"] is not None:
        return split_label(features, reading["label"])
    return features


def keras_hub_text(features, text, label):
    """`input.text: keras_hub`: the batch as KerasHub's text models take it with
    `preprocessor=None`, exactly `token_ids`, `padding_mask` and `segment_ids` (zeros for one
    text), and the label."""
    ids = features[text["ids"]]
    inputs = {"token_ids": ids, "padding_mask": features[text["mask"]],
              "segment_ids": tf.zeros_like(ids) if text["segments"] is None else features[text["segments"]]}
    if label is not None:
        inputs[label] = features[label]
    return inputs


def masked_batches(dataset, mlm):
    """`input.mlm`: each batch's text with tokens masked (`masked_lm`), its ids replaced by the
    masked ones and BERT's `masked_lm_positions`, `masked_lm_ids` and `masked_lm_weights` beside
    them. Each batch's masks are drawn from a key of its own: `tf.data.Dataset.random` of the
    seed gives every batch one, and another sequence each time the dataset is iterated (each
    epoch), the same sequence for the same seed (and TensorFlow's global seed, when a program
    sets one, as it does the shuffle order)."""
    keys = tf.data.Dataset.random(seed=mlm["seed"], rerandomize_each_iteration=True)

    def masked(features, key):
        features = dict(features)
        ids, positions, targets, weights = masked_lm(features[mlm["ids"]], features[mlm["mask"]],
                                                     tf.stack([tf.constant(mlm["seed"], tf.int64), key]), mlm)
        features[mlm["ids"]] = ids
        features.update(masked_lm_positions=positions, masked_lm_ids=targets, masked_lm_weights=weights)
        return features

    return tf.data.Dataset.zip(dataset, keys).map(tf.autograph.experimental.do_not_convert(masked),
                                                  num_parallel_calls=tf.data.AUTOTUNE)


def masked_lm(ids, mask, seed, mlm):
    """A batch of ids [batch, width] (`mask`: true on ids, false on padding) with tokens masked:
    `(masked ids, positions, targets, weights)`, the last three [batch, max_predictions].

    Each id that is neither padding nor one of `special_ids` is picked with probability `rate`
    (at most `max_predictions` a text: the picked ones of the smallest draws, a uniform choice
    among them); a picked id becomes the mask id with probability `mask_token_rate`, an id drawn
    uniformly from the ids that are not special with probability `random_token_rate`, and stays
    as it is otherwise. `positions` are the picked ids' places in ascending order, `targets` the
    ids that were there, `weights` 1.0 for each; all three padded with 0 (0.0) to
    `max_predictions`. Every draw is a stateless one of `seed` ([2] int64): the same seed, the
    same masks."""
    shape = tf.shape(ids)
    width, most = shape[1], mlm["max_predictions"]
    special = tf.constant(mlm["special_ids"], ids.dtype)
    eligible = mask & tf.reduce_all(ids[:, :, tf.newaxis] != special, axis=-1)
    picking, acting, drawing = tf.unstack(tf.random.experimental.stateless_split(seed, 3))
    draws = tf.random.stateless_uniform(shape, picking)
    picked = eligible & (draws < mlm["rate"])
    order = tf.argsort(tf.where(picked, draws, 2.0), axis=1, stable=True)  # the picked, smallest draws first
    chosen = picked & (tf.argsort(order, axis=1, stable=True) < most)
    columns = tf.where(chosen, tf.range(width)[tf.newaxis, :], width)
    positions = tf.sort(tf.concat([columns, tf.fill([shape[0], most], width)], axis=1), axis=1)[:, :most]
    found = positions < width
    positions = tf.where(found, positions, 0)
    targets = tf.where(found, tf.gather(tf.pad(ids, [[0, 0], [0, 1]]), positions, batch_dims=1), 0)
    action = tf.random.stateless_uniform(shape, acting)
    others = mlm["vocab_size"] - len(mlm["special_ids"])
    drawn = tf.random.stateless_uniform(shape, drawing, minval=0, maxval=others, dtype=tf.int64)
    for number in sorted(mlm["special_ids"]):  # the drawn-th id that is not special
        drawn += tf.cast(drawn >= number, tf.int64)
    masked = tf.where(chosen & (action < mlm["mask_token_rate"]), tf.cast(mlm["mask_id"], ids.dtype),
                      tf.where(chosen & (action < mlm["mask_token_rate"] + mlm["random_token_rate"]),
                               tf.cast(drawn, ids.dtype), ids))
    return masked, tf.cast(positions, ids.dtype), targets, tf.cast(found, tf.float32)


def keras_hub_masked_lm(features, text):
    """`input: {text: keras_hub, mlm: ...}`: `(inputs, mask_ids, mask_weights)`, what KerasHub's
    MaskedLM models (`BertMaskedLM(backbone, preprocessor=None)`) fit on, as its
    MaskedLMPreprocessor gives them: inputs `token_ids` (masked), `padding_mask`, `segment_ids`
    and `mask_positions`."""
    inputs = keras_hub_text(features, text, None)
    inputs["mask_positions"] = features["masked_lm_positions"]
    return inputs, features["masked_lm_ids"], features["masked_lm_weights"]


def text_length(serialized, key):
    """One serialised Example's text length, its number of ids under `key` (for bucketing by length)."""
    parsed = tf.io.parse_single_example(serialized, {key: tf.io.FixedLenFeature([], tf.int64)})
    return tf.cast(parsed[key], tf.int32)  # bucketing wants int32


def split_label(features, label):
    """`(features, label)` from a batch of features, for Keras."""
    features = dict(features)
    return features, features.pop(label)


def known_split(split, names):
    """`split`, or ValueError if the dataset has no such split."""
    if split not in names:
        raise ValueError(f"unknown split {split!r}; expected one of: {', '.join(names)}")
    return split


def shard_files(folder, shards, size=None):
    """The paths of the shards listed in dataset_info.json, each checked to have its listed size:
    a missing or cut shard fails here, by name, not as an anonymous error mid-epoch. `size(path)`
    (None: missing) reads through TensorFlow's filesystems unless given."""
    paths = []
    for shard in shards:
        path = os.path.join(folder, shard["file"])
        found = (size or stored_size)(path)
        if found != shard["num_bytes"]:
            described = "missing" if found is None else f"{found} bytes"
            raise OSError(f"{path}: shard is {described}, expected {shard['num_bytes']} bytes "
                          "(run `tfrecord-builder verify`)")
        paths.append(path)
    return paths


def stored_size(path):
    """A file's size through TensorFlow's filesystems (local, gs://, ...), or None if missing."""
    return tf.io.gfile.stat(path).length if tf.io.gfile.exists(path) else None


def info_text(folder, name=None):
    """The bytes of the metadata of the dataset in `folder` (`name`, if known), read through
    TensorFlow's filesystems: its tfrecord_builder.json, or the dataset_info.json of a dataset built
    before 0.3. A folder without dataset_info.json, which a build writes last, is unfinished."""
    commit = os.path.join(folder, "dataset_info.json")
    if not tf.io.gfile.exists(commit):  # in an object store, what a build writes last: the commit
        raise FileNotFoundError(f"{folder}: not a finished {name + ' ' if name else ''}dataset (no dataset_info.json); "
                                "build it, or finish it with --resume")
    path = os.path.join(folder, "tfrecord_builder.json")
    with tf.io.gfile.GFile(path if tf.io.gfile.exists(path) else commit, "rb") as file:
        return file.read()
