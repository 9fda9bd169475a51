"""Small Keras models trained from a dataset's input_fn: the demo's and the tests' shared helper."""
from __future__ import annotations

import warnings
from typing import Any

from tfrecord_builder._tf import tensorflow  # noqa: E402

tensorflow()  # imported quietly, before Keras imports it loudly
import keras  # noqa: E402
import numpy as np  # noqa: E402

# input_fn shuffles the training split itself; Keras warns that its own `shuffle` doesn't apply
warnings.filterwarnings("ignore", message=".*`shuffle=True` was passed")
# input_fn yields every feature; a model that uses some of them gets a warning about the others
warnings.filterwarnings("ignore", message="The structure of `inputs` doesn't match")


def tabular_classifier(statistics: dict[str, Any], features: list[str], num_classes: int) -> keras.Model:
    """Scalar numeric features -> standardised vector (from the dataset's statistics) -> MLP -> softmax."""
    inputs = {name: keras.Input(shape=(), name=name, dtype="float32") for name in features}
    mean = np.array([statistics[name]["mean"] for name in features], dtype="float32")
    std = np.array([statistics[name]["std"] or 1.0 for name in features], dtype="float32")
    stacked = keras.layers.Concatenate()([keras.ops.expand_dims(inputs[name], -1) for name in features])
    x = keras.layers.Normalization(mean=mean, variance=std**2)(stacked)
    x = keras.layers.Dense(32, activation="relu")(x)
    outputs = keras.layers.Dense(num_classes, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def train_tabular(input_fn: Any, info: Any, epochs: int = 30, seed: int = 0) -> float:
    """Trains on the "train" split and returns the accuracy on the other split."""
    keras.utils.set_random_seed(seed)
    spec = info.spec
    label = spec.features[spec.label]
    features = [name for name in spec.features if name != spec.label]
    model = tabular_classifier(info.statistics["train"], features, label.num_labels)
    return fit_and_score(model, input_fn, info, epochs)


def image_classifier(shape: list[int | None], num_classes: int, image: str = "image") -> keras.Model:
    """A small CNN: two convolutions, global pooling, softmax. Works for fixed or padded sizes."""
    inputs = {image: keras.Input(shape=tuple(shape), name=image, dtype="float32")}
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(inputs[image])
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling2D(2)(x)
    x = keras.layers.Conv2D(64, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    outputs = keras.layers.Dense(num_classes, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.Adam(0.003), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def train_images(input_fn: Any, info: Any, epochs: int = 15, seed: int = 0) -> float:
    """Trains the CNN on the "train" split (images as float32) and returns the other split's accuracy."""
    keras.utils.set_random_seed(seed)
    spec = info.spec
    image = next(name for name, feature in spec.features.items() if feature.type_name == "image")
    model = image_classifier(spec.features[image].shape, spec.features[spec.label].num_labels, image)
    return fit_and_score(model, input_fn, info, epochs)


def sequence_classifier(steps_shape: list[int], num_classes: int, sequence: str, mask: str,
                        mean: float, std: float) -> keras.Model:
    """A GRU over the steps, told which steps are padding by the input_fn's mask."""
    frames = keras.Input(shape=(None, *steps_shape), name=sequence, dtype="float32")
    valid = keras.Input(shape=(None,), name=mask, dtype="bool")
    x = keras.layers.Normalization(mean=mean, variance=std**2)(frames)
    x = keras.layers.GRU(64)(x, mask=valid)
    outputs = keras.layers.Dense(num_classes, activation="softmax")(x)
    model = keras.Model({sequence: frames, mask: valid}, outputs)
    model.compile(optimizer=keras.optimizers.Adam(0.005), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def train_sequences(input_fn: Any, info: Any, epochs: int = 20, seed: int = 0) -> float:
    """Trains the GRU on the "train" split and returns the other split's accuracy."""
    keras.utils.set_random_seed(seed)
    spec = info.spec
    sequence = next(name for name, feature in spec.features.items() if feature.sequence and name != spec.label)
    stats = info.statistics["train"][sequence]
    model = sequence_classifier(spec.features[sequence].shape, spec.features[spec.label].num_labels, sequence,
                                spec.input.mask_feature, stats["mean"], stats["std"])
    return fit_and_score(model, input_fn, info, epochs)


class LogSpectrogram(keras.layers.Layer):
    """Waveforms [batch, samples] to log STFT magnitudes [batch, frames, bins] (32 ms frames, 16 ms
    hop at 8 kHz), the padding's frames zeroed by the waveform's mask."""

    def call(self, waveforms, valid):
        import tensorflow as tf

        frames = tf.signal.stft(waveforms, frame_length=256, frame_step=128, pad_end=True)
        magnitudes = tf.math.log1p(tf.abs(frames) * 10.0)
        real = tf.cast(valid[:, ::128], magnitudes.dtype)[:, : tf.shape(magnitudes)[1], tf.newaxis]
        return magnitudes * real


def audio_classifier(num_classes: int, audio: str, mask: str) -> keras.Model:
    """A small 1-D CNN over the clip's log spectrogram, max-pooled over time: any length."""
    waveform = keras.Input(shape=(None,), name=audio, dtype="float32")
    valid = keras.Input(shape=(None,), name=mask, dtype="bool")
    x = LogSpectrogram()(waveform, valid)
    x = keras.layers.Conv1D(64, 5, padding="same", activation="relu")(x)
    x = keras.layers.MaxPooling1D(2)(x)
    x = keras.layers.Conv1D(96, 5, padding="same", activation="relu")(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dropout(0.3)(x)
    outputs = keras.layers.Dense(num_classes, activation="softmax")(x)
    model = keras.Model({audio: waveform, mask: valid}, outputs)
    model.compile(optimizer=keras.optimizers.Adam(0.002), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def train_audio(input_fn: Any, info: Any, epochs: int = 20, seed: int = 0) -> float:
    """Trains the spectrogram CNN on the "train" split and returns the other split's accuracy."""
    keras.utils.set_random_seed(seed)
    spec = info.spec
    name, audio = next((name, feature) for name, feature in spec.features.items() if feature.type_name == "audio")
    model = audio_classifier(spec.features[spec.label].num_labels, name, audio.mask_feature)
    return fit_on_inputs(model, input_fn, info, (name, audio.mask_feature), epochs)


def fit_on_inputs(model: keras.Model, input_fn: Any, info: Any, kept: tuple[str, ...], epochs: int) -> float:
    """`fit_and_score` with only the batch's features named in `kept`: Keras matches a dict of more
    inputs than the model's by position, not by name."""
    def inputs(split: str) -> Any:
        return input_fn(split).map(lambda features, label: ({key: features[key] for key in kept}, label))

    return fit_and_score(model, inputs, info, epochs)


class MaskedTimeMean(keras.layers.Layer):
    """[batch, steps, ...] to [batch, ...]: the mean over the clip's own steps (the padding's left out)."""

    def call(self, x, valid):
        # x has fewer steps than the frames (a step's change, convolutions without padding in time):
        # its step t is made of frames up to t + the difference, and counts while the last is the clip's
        valid = valid[:, keras.ops.shape(valid)[1] - keras.ops.shape(x)[1]:]
        weights = keras.ops.cast(valid, x.dtype)
        weights = keras.ops.reshape(weights, (*keras.ops.shape(weights), *([1] * (len(x.shape) - 2))))
        return keras.ops.sum(x * weights, axis=1) / keras.ops.maximum(keras.ops.sum(weights, axis=1), 1.0)


class StepChanges(keras.layers.Layer):
    """Frames [batch, steps, h, w, c] to [batch, steps - 1, h, w, 2c]: each frame beside its change
    from the one before (where a pan or a zoom shows itself; the 48 clips of the demo are too few
    for the convolutions to find that alone)."""

    def call(self, x):
        return keras.ops.concatenate([x[:, 1:], x[:, 1:] - x[:, :-1]], axis=-1)


def video_classifier(shape: list[int], num_classes: int, frames: str, mask: str) -> keras.Model:
    """A small 3-D CNN over the frames and their changes (3 steps by 5x5 pixels: it sees motion),
    averaged over the clip's steps but not over the picture: a 2x2 grid of places is kept, since a
    zoom moves each side of the picture its own way (in, they part; out, they meet)."""
    clip = keras.Input(shape=(None, *shape), name=frames, dtype="float32")
    valid = keras.Input(shape=(None,), name=mask, dtype="bool")
    x = keras.layers.Rescaling(1 / 255)(clip)
    x = keras.layers.AveragePooling3D((1, 2, 2))(x)
    x = StepChanges()(x)
    # no padding: a step never sees the zero frames that pad a short clip, nor the ones before a clip
    x = keras.layers.Conv3D(16, (3, 5, 5), strides=(1, 2, 2), activation="relu")(x)
    x = keras.layers.Conv3D(32, (3, 3, 3), strides=(1, 2, 2), activation="relu")(x)
    x = MaskedTimeMean()(x, valid)
    x = keras.layers.AveragePooling2D(x.shape[1] // 2)(x)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dropout(0.3)(x)
    outputs = keras.layers.Dense(num_classes, activation="softmax")(x)
    model = keras.Model({frames: clip, mask: valid}, outputs)
    model.compile(optimizer=keras.optimizers.Adam(0.003), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def train_video(input_fn: Any, info: Any, epochs: int = 40, seed: int = 0) -> float:
    """Trains the 3-D CNN on the "train" split and returns the other split's accuracy."""
    keras.utils.set_random_seed(seed)
    spec = info.spec
    name, video = next((name, feature) for name, feature in spec.features.items() if feature.type_name == "video")
    mask = spec.input.mask_feature
    model = video_classifier(video.shape, spec.features[spec.label].num_labels, name, mask)
    return fit_on_inputs(model, input_fn, info, (name, mask), epochs)


def detector(num_classes: int) -> keras.Model:
    """A small KerasHub RetinaNet (boxes as yxyx pixels) with random weights, made from its
    configuration: a three-stage ResNet whose last two stages feed a feature pyramid of two levels
    (strides 8 and 16), anchors sized for small objects. Small enough to train on a CPU in seconds."""
    import keras_hub  # only the detection demo needs it

    encoder = keras_hub.models.ResNetBackbone(
        input_conv_filters=[64], input_conv_kernel_sizes=[3], stackwise_num_filters=[64, 64, 64],
        stackwise_num_blocks=[1, 1, 1], stackwise_num_strides=[1, 2, 2], block_type="basic_block",
        use_pre_activation=False, image_shape=(None, None, 3))
    backbone = keras_hub.models.RetinaNetBackbone(image_encoder=encoder, min_level=3, max_level=4, use_p5=False)
    anchors = keras_hub.layers.AnchorGenerator(bounding_box_format="yxyx", min_level=3, max_level=4, num_scales=2,
                                               aspect_ratios=[1.0], anchor_size=4)
    model = keras_hub.models.RetinaNetObjectDetector(backbone=backbone, anchor_generator=anchors,
                                                     num_classes=num_classes, bounding_box_format="yxyx",
                                                     preprocessor=None)
    model.compile(optimizer=keras.optimizers.Adam(1e-3))
    return model


def train_detection(input_fn: Any, info: Any, epochs: int = 8, seed: int = 0) -> tuple[float, float]:
    """Trains the detector on the "train" split (its input_fn yields KerasHub's (images, {"boxes",
    "labels"})) and returns the loss of its first and last epoch."""
    keras.utils.set_random_seed(seed)
    spec = info.spec
    labels = spec.input.detection.labels or spec.label
    model = detector(spec.features[labels].num_labels)
    losses = model.fit(input_fn("train", batch_size=4), epochs=epochs, verbose=0).history["loss"]
    return float(losses[0]), float(losses[-1])


def fit_and_score(model: keras.Model, input_fn: Any, info: Any, epochs: int) -> float:
    """Fits on the "train" split (validating on the other) and returns the other split's accuracy."""
    evaluation = next(split for split in info.splits if split != "train")
    model.fit(input_fn("train"), validation_data=input_fn(evaluation), epochs=epochs, verbose=0)
    _, accuracy = model.evaluate(input_fn(evaluation), verbose=0)
    return float(accuracy)


def _text_feature(spec: Any) -> tuple[str, Any]:
    """The spec's first `type: text` feature (its name and the feature)."""
    return next((name, feature) for name, feature in spec.features.items() if feature.type_name == "text")


class MaskedMean(keras.layers.Layer):
    """[batch, steps, width] to [batch, width]: the mean over each text's own tokens (padding left out)."""

    def call(self, x, valid):
        weights = keras.ops.expand_dims(keras.ops.cast(valid, x.dtype), -1)
        return keras.ops.sum(x * weights, axis=1) / keras.ops.maximum(keras.ops.sum(weights, axis=1), 1.0)


def text_classifier(vocab_size: int, num_classes: int, text: str, mask: str) -> keras.Model:
    """Token ids -> embeddings, averaged over the text's tokens -> a hidden layer -> softmax: the
    bag-of-pieces baseline (fastText's), which trains in seconds on a CPU."""
    ids = keras.Input(shape=(None,), name=text, dtype="int64")
    valid = keras.Input(shape=(None,), name=mask, dtype="bool")
    x = keras.layers.Embedding(vocab_size, 64)(ids)
    x = keras.layers.Dropout(0.3)(x)
    x = MaskedMean()(x, valid)
    x = keras.layers.Dense(64, activation="relu")(x)
    x = keras.layers.Dropout(0.3)(x)
    outputs = keras.layers.Dense(num_classes, activation="softmax")(x)
    model = keras.Model({text: ids, mask: valid}, outputs)
    model.compile(optimizer=keras.optimizers.Adam(0.002), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model


def train_text(input_fn: Any, info: Any, epochs: int = 5, seed: int = 0) -> float:
    """Trains the text classifier on the "train" split and returns the other split's accuracy."""
    keras.utils.set_random_seed(seed)
    spec = info.spec
    name, text = _text_feature(spec)
    model = text_classifier(text.recorded.vocab_size, spec.features[spec.label].num_labels, name, text.mask_name)
    return fit_on_inputs(model, input_fn, info, (name, text.mask_name), epochs)


def tagger(vocab_size: int, num_tags: int, text: str, mask: str) -> keras.Model:
    """Word ids -> embeddings -> a bidirectional GRU that skips the padding -> a tag's softmax at
    every step."""
    ids = keras.Input(shape=(None,), name=text, dtype="int64")
    valid = keras.Input(shape=(None,), name=mask, dtype="bool")
    x = keras.layers.Embedding(vocab_size, 64)(ids)
    x = keras.layers.Dropout(0.25)(x)
    x = keras.layers.Bidirectional(keras.layers.GRU(64, return_sequences=True))(x, mask=valid)
    outputs = keras.layers.Dense(num_tags, activation="softmax")(x)
    model = keras.Model({text: ids, mask: valid}, outputs)
    model.compile(optimizer=keras.optimizers.Adam(0.005), loss="sparse_categorical_crossentropy",
                  weighted_metrics=["accuracy"])
    return model


def tagged_batches(input_fn: Any, split: str, text: str, mask: str) -> Any:
    """The split's batches as (ids and mask, tags, weights): the tags padded with -1 to the ids'
    length (a ragged class_label's rows are the ids' rows), and a weight of 1 on each tag that
    counts: a real token whose tag isn't the ignore value (-1, on pieces that aren't a word's first)."""
    import tensorflow as tf

    def split_out(features, tags):
        valid = features[mask]
        if isinstance(tags, tf.RaggedTensor):
            tags = tags.to_tensor(-1, shape=tf.shape(valid))
        tags = tf.cast(tags, tf.int64)
        counts = tf.logical_and(valid, tags >= 0)
        return {text: features[text], mask: valid}, tf.maximum(tags, 0), tf.cast(counts, tf.float32)

    return input_fn(split).map(split_out)


def train_tagger(input_fn: Any, info: Any, epochs: int = 2, seed: int = 0) -> float:
    """Trains the tagger on the "train" split and returns its accuracy on the other split's tags
    (each word's, the padding and ignored pieces left out). Two epochs reach 0.93 on the Turkish
    treebank (seeds 0-2: 0.931-0.932; three epochs 0.934): more only take longer."""
    keras.utils.set_random_seed(seed)
    spec = info.spec
    name, text = _text_feature(spec)
    model = tagger(text.recorded.vocab_size, spec.features[spec.label].num_labels, name, text.mask_name)
    evaluation = next(split for split in info.splits if split != "train")
    model.fit(tagged_batches(input_fn, "train", name, text.mask_name), epochs=epochs, verbose=0)
    right = total = 0.0
    for features, tags, counts in tagged_batches(input_fn, evaluation, name, text.mask_name):
        predicted = np.argmax(model.predict_on_batch(features), axis=-1)
        right += float(np.sum((predicted == tags.numpy()) * counts.numpy()))
        total += float(np.sum(counts.numpy()))
    return right / total
