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
        return tf.io.decode_jpeg(encoded, channels=channels)
    return tf.io.decode_png(encoded, channels=channels)


def fixed_images(encoded, encoding, shape):
    """A batch of images that all have the declared `shape`: uint8 [batch, *shape]."""
    if encoding == "raw":
        return tf.reshape(tf.io.decode_raw(encoded, tf.uint8), [-1, *shape])
    images = tf.map_fn(
        lambda image: decode_image(image, shape, encoding, shape[-1]),
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
        lambda pair: tf.image.pad_to_bounding_box(
            decode_image(pair[0], pair[1], encoding, channels), 0, 0, height, width),
        (encoded, shapes),
        fn_output_signature=tf.TensorSpec([None, None, channels], tf.uint8),
    )


def resized_images(encoded, shapes, encoding, channels, size):
    """A batch of images of different sizes, each resized (bilinear, antialiased) to `size`."""
    def resize(pair):
        image = decode_image(pair[0], pair[1], encoding, channels)
        resized = tf.image.resize(image, size, method="bilinear", antialias=True)
        return tf.cast(tf.clip_by_value(tf.round(resized), 0, 255), tf.uint8)

    return tf.map_fn(resize, (encoded, shapes), fn_output_signature=tf.TensorSpec([*size, channels], tf.uint8))


def scaled_images(images):
    """uint8 pixels as float32 in [0, 1]."""
    return tf.cast(images, tf.float32) / 255.0


def pad_steps(values, length, pad):
    """Sets the steps past each sequence's length to `pad` (the parser pads with 0 or "")."""
    mask = tf.sequence_mask(length, tf.shape(values)[1])
    inner = tf.ones([tf.rank(values) - 2], tf.int32)
    mask = tf.reshape(mask, tf.concat([tf.shape(mask), inner], 0))
    return tf.where(mask, values, tf.cast(pad, values.dtype))


def read_shard(path, num_examples, compression):
    """The shard's `num_examples` records. TensorFlow's error for a corrupt record doesn't name the
    file, so records that can't be read (or are missing) are replaced with markers naming it, which
    `checked_records` turns into an error: a damaged shard is never skipped quietly."""
    records = tf.data.TFRecordDataset(path, compression_type=compression).ignore_errors()
    marker = tf.data.Dataset.from_tensors(tf.strings.join(["\0tfrecord-builder\0", path]))
    return records.concatenate(marker.repeat()).take(num_examples)


def checked_records(serialized):
    """`serialized` as it is, after failing if a shard's marker of an unreadable record is in it."""
    flat = tf.reshape(serialized, [-1])
    marked = tf.strings.substr(flat, 0, 18) == "\0tfrecord-builder\0"  # no valid record starts with a 0 byte
    shard = tf.strings.reduce_join(tf.strings.substr(tf.boolean_mask(flat, marked)[:1], 18, 1 << 30))
    check = tf.debugging.Assert(tf.logical_not(tf.reduce_any(marked)), [
        "a record that cannot be read (corrupt or cut) in shard", shard,
        "- run `tfrecord-builder verify` on the dataset"])
    with tf.control_dependencies([check]):
        return tf.identity(serialized)
