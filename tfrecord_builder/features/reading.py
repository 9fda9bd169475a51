"""Reading-side helpers for shards, images and sequences, in TensorFlow.

`tb.input_fn` calls these functions, and the generated module carries a verbatim copy of them
(codegen/helpers.py copies their source), so both reading paths decode images with the same code.
Keep them self-contained: they may use only `tf` and each other.
"""
import tensorflow as tf


def decode_image(encoded, shape, encoding, channels):
    """One stored image as uint8 [height, width, channels]."""
    if encoding == "raw":
        return tf.reshape(tf.io.decode_raw(encoded, tf.uint8), shape)
    if encoding == "jpeg":
        # the accurate inverse DCT, as Pillow decodes: the pixels trained on are those the build saw
        return tf.io.decode_jpeg(encoded, channels=channels, dct_method="INTEGER_ACCURATE")
    return tf.io.decode_png(encoded, channels=channels)


def fixed_images(encoded, encoding, shape):
    """A batch of images that all have the declared `shape`: uint8 [batch, *shape]."""
    if encoding == "raw":
        return tf.reshape(tf.io.decode_raw(encoded, tf.uint8), [-1, *shape])
    # map_fn runs its function through AutoGraph, which can't read the source of a module loaded
    # from its path (it warned on every batch): plain graph code has nothing to convert
    images = tf.map_fn(
        tf.autograph.experimental.do_not_convert(lambda image: decode_image(image, shape, encoding, shape[-1])),
        encoded,
        fn_output_signature=tf.TensorSpec(shape, tf.uint8),
    )
    return tf.ensure_shape(images, [None, *shape])


def padded_images(encoded, shapes, encoding, channels):
    """A batch of images of different sizes, zero-padded at the bottom and right to the largest."""
    shapes = tf.cast(shapes, tf.int32)
    height = tf.reduce_max(shapes[:, 0])
    width = tf.reduce_max(shapes[:, 1])
    return tf.map_fn(
        tf.autograph.experimental.do_not_convert(lambda pair: tf.image.pad_to_bounding_box(
            decode_image(pair[0], pair[1], encoding, channels), 0, 0, height, width)),
        (encoded, shapes),
        fn_output_signature=tf.TensorSpec([None, None, channels], tf.uint8),
    )


def resized_images(encoded, shapes, encoding, channels, size):
    """A batch of images of different sizes, each resized (bilinear, antialiased) to `size`."""
    def resize(pair):
        image = decode_image(pair[0], pair[1], encoding, channels)
        resized = tf.image.resize(image, size, method="bilinear", antialias=True)
        return tf.cast(tf.clip_by_value(tf.round(resized), 0, 255), tf.uint8)

    return tf.map_fn(tf.autograph.experimental.do_not_convert(resize), (encoded, shapes),
                     fn_output_signature=tf.TensorSpec([*size, channels], tf.uint8))


def scaled_images(images):
    """uint8 pixels as float32 in [0, 1]."""
    return tf.cast(images, tf.float32) / 255.0


def pad_steps(values, length, pad):
    """Sets the steps past each sequence's length to `pad` (the parser pads with 0 or "")."""
    mask = tf.sequence_mask(length, tf.shape(values)[1])
    inner = tf.ones([tf.rank(values) - 2], tf.int32)
    mask = tf.reshape(mask, tf.concat([tf.shape(mask), inner], 0))
    return tf.where(mask, values, tf.cast(pad, values.dtype))


def exact_float64(values):
    """Stored float32 values as float64, subnormal ones included: TensorFlow's CPU cast flushes
    those to zero, so they are rebuilt from their bits (mantissa * 2^-149, exact in float64)."""
    if isinstance(values, tf.RaggedTensor):
        return tf.ragged.map_flat_values(exact_float64, values)
    bits = tf.bitcast(values, tf.int32)
    subnormal = tf.equal(tf.bitwise.bitwise_and(bits, 0x7F800000), 0)
    magnitude = tf.cast(tf.bitwise.bitwise_and(bits, 0x007FFFFF), tf.float64) * 2.0**-149
    return tf.where(subnormal, tf.where(bits < 0, -magnitude, magnitude), tf.cast(values, tf.float64))


def read_shard(path, index, compression, chunk):
    """Shard number `index`'s records in batches of `chunk`, each with the shard's index, then an
    empty batch that marks the shard's end. Records that can't be read are skipped:
    `counted_batches` counts the rest."""
    batches = tf.data.TFRecordDataset(path, compression_type=compression).ignore_errors().batch(chunk)
    tagged = tf.data.Dataset.zip((batches, tf.data.Dataset.from_tensors(index).repeat()))
    return tagged.concatenate(tf.data.Dataset.from_tensors((tf.zeros([0], tf.string), index)))


def counted_batches(dataset, paths, counts):
    """The batches of `read_shard`s of the shards `paths` (a string tensor), after failing the
    epoch if a shard ended with more or fewer records than `counts` lists. TensorFlow's error for a
    corrupt record doesn't name the file; this one does, so a damaged shard is never skipped
    quietly."""
    counts = tf.constant(counts, tf.int64)

    def count(seen, element):
        batch, index = element
        size = tf.size(batch, out_type=tf.int64)
        total = seen[index] + size
        ended = tf.equal(size, 0)  # a shard's end: the whole shard was read
        check = tf.debugging.Assert(tf.logical_or(tf.logical_not(ended), tf.equal(total, counts[index])), [
            "a record that cannot be read (corrupt or cut) in shard", paths[index],
            "- run `tfrecord-builder verify` on the dataset"])
        with tf.control_dependencies([check]):
            seen = tf.tensor_scatter_nd_update(seen, [[index]], [tf.where(ended, tf.constant(0, tf.int64), total)])
        return seen, batch

    return dataset.scan(tf.zeros([len(counts)], tf.int64), tf.autograph.experimental.do_not_convert(count))


def positive_batch_size(batch_size):
    """`batch_size` as an int, or ValueError: tf.data would crash the process on rebatch(-1), and
    batch(0) fails only when iterated."""
    if isinstance(batch_size, bool) or not hasattr(batch_size, "__index__") or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, received {batch_size!r}")
    return batch_size.__index__()


def batched_records(files, counts, compression, batch_size, shuffle, shuffle_buffer, repeat, bucketing=None):
    """Batches of serialised records from the shards `files` (holding `counts` records).

    Without shuffling, the shards are read one after another, each in batches, and the batches
    re-cut to `batch_size` across shards: one pass yields ceil(n / batch_size) batches. Shuffling
    reads 4 shards at a time (not in parallel: on 2 cores a parallel interleave measured 1.5-3x
    slower) through a shuffle buffer. `bucketing` = (record_length, boundaries) batches records
    of similar length together.
    """
    batch_size = positive_batch_size(batch_size)
    num_examples = sum(counts)
    by_record = shuffle or bucketing is not None
    dataset = tf.data.Dataset.range(len(files))
    if shuffle:
        dataset = dataset.shuffle(len(files))
    paths = tf.constant(files)
    dataset = dataset.interleave(
        # plain graph code: autograph has nothing to convert (and can't read the source of a
        # module loaded from a path, which it warns about)
        tf.autograph.experimental.do_not_convert(
            lambda index: read_shard(paths[index], index, compression, 64 if by_record else batch_size)),
        cycle_length=max(1, min(len(files), 4)) if shuffle else 1,
    )
    dataset = counted_batches(dataset, paths, counts)
    if by_record:
        dataset = dataset.unbatch()
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer)
    if repeat:
        dataset = dataset.repeat()
    if bucketing is not None:
        if not repeat:
            dataset = dataset.apply(tf.data.experimental.assert_cardinality(num_examples))
        record_length, boundaries = bucketing
        # records of similar length share a batch: less padding
        return dataset.bucket_by_sequence_length(record_length, boundaries, [batch_size] * (len(boundaries) + 1))
    dataset = dataset.batch(batch_size) if by_record else dataset.rebatch(batch_size)
    if not repeat:
        # a known length lets Keras show progress and end epochs without a "ran out of data"
        # warning; reading a different number of records than the info lists is then an error
        dataset = dataset.apply(tf.data.experimental.assert_cardinality(-(-num_examples // batch_size)))
    return dataset
