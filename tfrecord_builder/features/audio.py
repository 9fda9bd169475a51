"""`audio`: a waveform read from a WAV, FLAC, OGG (Vorbis, Opus), MP3 or M4A (AAC) file, stored as PCM.

Writing (media/audio/: libsndfile through soundfile, which carries it in its wheel; FFmpeg through PyAV
for what libsndfile doesn't read, such as AAC): the file at a path (relative to the table's
folder, as image paths are) is decoded, checked to hold every sample its header promises (a cut
WAV, Ogg, FLAC or MP3 is an error), mixed down to one channel by the mean of its channels when
`channels: 1` asks for it (a file with fewer channels than declared is refused), resampled to
`sample_rate:` with scipy's polyphase filter (`scipy.signal.resample_poly`, its default Kaiser
window: an anti-aliasing low-pass) when the file has another rate, or refused when
`resample: false`, and cut to `max_seconds:` (each cut counted in a notice of the build).

Stored form (`encoding:`): `pcm16` (the default) keeps little-endian int16 samples, interleaved,
in one bytes value: 2 bytes a sample, half of float32, and what a 16-bit WAV or FLAC holds, so
those round-trip bit for bit (soundfile's `dtype="int16"` read). Every other file (24-bit, 32-bit,
float, Vorbis, MP3, AAC) is rounded to 16 bits by one rule, whether at the declared rate,
resampled or mixed: x * 32768 to the nearest integer, ties to even, clipped to [-32768, 32767]
(x: the float64 samples in [-1, 1) as libsndfile scales them), counted in a notice. `float32`
keeps 4-byte floats (soundfile's `dtype="float32"` read) for those. Beside the samples,
`KEY_num_samples` holds the number of samples per channel (int64).

Reading: `read/tfdata.py`'s `padded_audio` decodes a whole batch with one `decode_raw` (zero-padded
to the batch's longest): `[batch, samples]` for one channel, `[batch, samples, channels]` for
more; float32 in [-1, 1) (int16 / 32768, as soundfile scales) or, with `dtype: int16`, the
stored integers. Each record's length comes under `length_feature` (int32) and a boolean
`[batch, samples]` mask under `mask_feature` when named.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Literal, Mapping, Sequence

import numpy as np

from .. import fs
from ..media.audio import BadAudio
from ..media.audio.waveform import read_waveform
from ..spec.fields import At, Section, meta
from . import tfds
from .base import DecodeStep, EncodeContext, Feature, ParseSpec, register
from .described import Card, Counted
from .notices import Notices
from .values import Values

ITEM_BYTES = {"pcm16": 2, "float32": 4}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")  # a name input_fn yields: a Keras input's too


@dataclass(frozen=True, kw_only=True)
class AudioWindow(Section):
    """`window: {seconds: 1, hop: 0.5}`: each recording cut into windows, one record each."""

    seconds: float = meta("each window's length in seconds")
    hop: float | None = meta("seconds from one window's start to the next (default: `seconds`, side by side; "
                             "less overlaps them)", None)
    last: Literal["keep", "drop"] = meta(
        "a recording's last window when shorter than `seconds`: keep (at its own length) or drop (counted)", "keep")

    def check(self, at: At) -> None:
        for key in ("seconds", "hop"):
            value = getattr(self, key)
            if value is not None and value <= 0:
                raise (at / key).error(f"expected a positive number of seconds, received {value}")

    def starts(self, samples: int, size: int, hop: int) -> tuple[list[int], bool]:
        """The first sample of each window of a recording of `samples`, and whether a last, short
        one was dropped. Windows start every `hop` samples; a window that would run past the end
        is the last (later ones would be parts of it), kept short or dropped."""
        starts = list(range(0, max(samples - size, -1) + 1, hop))
        following = starts[-1] + hop if starts else 0
        short = following < samples and (not starts or starts[-1] + size < samples)
        if short and self.last == "keep":
            starts.append(following)
        return starts, short and self.last == "drop"


@dataclass(frozen=True, kw_only=True)
class AudioFeature(Feature):
    """A waveform: `{type: audio, sample_rate: 16000, channels: 1, max_seconds: 10}`."""

    reads_files = True

    sample_rate: int = meta("samples per second stored; a file at another rate is resampled (or refused with "
                            "`resample: false`)")
    channels: int = meta("1 (mixed down by the mean of the file's channels) or the file's number, kept", 1)
    max_seconds: float | None = meta("cut each waveform after this many seconds (each cut is counted in a notice)",
                                     None)
    resample: bool = meta("resample a file at another rate with scipy.signal.resample_poly; false: refuse it", True)
    encoding: Literal["pcm16", "float32"] = meta(
        "how samples are stored: pcm16 (int16, 2 bytes a sample) or float32 (4 bytes a sample)", "pcm16")
    dtype: Literal["float32", "int16"] = meta(
        "what input_fn yields: float32 in [-1, 1) or the stored int16 (encoding: pcm16 only)", "float32")
    length_feature: str | None = meta("the name input_fn gives each record's number of samples (null: none); "
                                      "default `<name>_length`", "")
    mask_feature: str | None = meta("also yield a boolean [batch, samples] mask under this name", None)
    window: AudioWindow | None = meta("cut each recording into fixed windows, one record each, its start kept "
                                      "(`{seconds: 1, hop: 0.5, last: keep}`)", None)
    offset_feature: str | None = meta("with `window:`, the name input_fn gives each window's first sample in its "
                                      "recording (int64); default `<name>_offset`, null for none", "")

    def check(self, at: At) -> None:
        if self.sample_rate < 1:
            raise (at / "sample_rate").error(f"expected a positive number of samples per second, received "
                                             f"{self.sample_rate}")
        if self.channels < 1:
            raise (at / "channels").error(f"expected a positive number of channels, received {self.channels}")
        if self.max_seconds is not None and self.max_seconds <= 0:
            raise (at / "max_seconds").error(f"expected a positive number of seconds, received {self.max_seconds}")
        if self.window is not None:
            for key in ("seconds", "hop"):
                value = getattr(self.window, key)
                if value is not None and round(value * self.sample_rate) < 1:
                    raise (at / "window" / key).error(f"{value:g} s is less than one sample at {self.sample_rate} Hz")
        elif self.offset_feature:
            raise (at / "offset_feature").error("names the start of a window: it needs `window:`")
        for key in ("length_feature", "mask_feature", "offset_feature"):
            name = getattr(self, key)
            if name and not _IDENTIFIER.match(name):
                raise (at / key).error(f"expected an identifier, received {name!r}")
        if self.dtype == "int16" and self.encoding != "pcm16":
            raise (at / "dtype").error("int16 samples need `encoding: pcm16` (float32 samples aren't integers)")

    def linked(self, features: Mapping[str, Feature], at: At) -> "AudioFeature":
        named = (("length_feature", self.length_name), ("mask_feature", self.mask_feature),
                 ("offset_feature", self.offset_name))
        for index, (key, name) in enumerate(named):
            if name is not None and name in features:
                raise (at / key).error(f"`{name}` is already a feature's name; choose another (or null)")
            for other, taken in named[:index]:
                if name is not None and name == taken:
                    raise (at / key).error(f"`{name}` is already the {other}'s name")
        return self

    @property
    def batch_rows(self) -> int:  # type: ignore[override]
        """Clips to a batch: about 4 MiB of stored samples where `max_seconds` bounds a clip (16 to
        256 clips), else 128 (clips of a few seconds: a batch of some MiB). Not fewer: each batch
        costs its hand-off to a worker and back and its records' assembly, and 64 short clips a
        batch were 20% slower with 2 workers than 128 or 256 (bench/audio.py). Windowed recordings
        without `max_seconds` go 4 to a batch: they are long (minutes, hours), and each is held whole
        with its windows while its batch is encoded."""
        if self.max_samples is None:
            return 4 if self.window is not None else 128
        stored = self.max_samples * self.channels * ITEM_BYTES[self.encoding]
        return max(16, min(256, 4 * 1024**2 // max(1, stored)))

    @property
    def length_name(self) -> str | None:
        return f"{self.name}_length" if self.length_feature == "" else self.length_feature

    @property
    def companion_names(self) -> list[str]:
        return [name for name in (self.length_name, self.mask_feature, self.offset_name) if name is not None]

    @property
    def offset_name(self) -> str | None:
        if self.window is None:
            return None
        return f"{self.name}_offset" if self.offset_feature == "" else self.offset_feature

    @property
    def offset_key(self) -> str:
        return f"{self.record_key}_offset"

    @property
    def length_key(self) -> str:
        return f"{self.record_key}_num_samples"  # not KEY/...: TFDS would nest it inside KEY

    @property
    def max_samples(self) -> int | None:
        return None if self.max_seconds is None else int(round(self.max_seconds * self.sample_rate))

    # ---- writing side ----------------------------------------------------------------------------
    def encode(self, values: Sequence[Any], context: EncodeContext) -> dict[str, Values]:
        origin, base_dir = context.origin, context.base_dir
        stored: list[bytes] = []
        lengths: list[int] = []
        for row, value in enumerate(values):
            if value is None:
                raise self.fail(origin, row, "missing audio file")
            path = fs.resolve(value, base_dir) if base_dir is not None and isinstance(value, str) else value
            try:
                samples = self.waveform(path, context.notices)
            except BadAudio as error:
                raise self.fail(origin, row, f"{_describe(path)}: {error}") from None
            stored.append(samples.astype("<i2" if self.encoding == "pcm16" else "<f4").tobytes())
            lengths.append(len(samples))
        ones = np.ones(len(stored), dtype=np.int64)
        return {self.record_key: Values("bytes", stored, ones),
                self.length_key: Values("int64", np.array(lengths, dtype=np.int64), ones)}

    @property
    def fans_out(self) -> bool:
        return self.window is not None

    def fan_out(self, encoded: dict[str, Values], context: EncodeContext
                ) -> tuple[dict[str, Values], np.ndarray] | None:
        """Each recording cut into `window:`s, in order: a window's samples, its number of samples
        and its first sample in the recording (`KEY_offset`), and the recording's row."""
        if self.window is None:
            return None
        size = int(round(self.window.seconds * self.sample_rate))
        hop = size if self.window.hop is None else int(round(self.window.hop * self.sample_rate))
        width = self.channels * ITEM_BYTES[self.encoding]  # bytes a sample (of every channel)
        stored, rows, offsets, lengths = [], [], [], []
        recordings = encoded[self.record_key].values
        for row, (data, samples) in enumerate(zip(recordings, encoded[self.length_key].values.tolist())):
            starts, dropped = self.window.starts(samples, size, hop)
            if dropped:
                context.notices.note(f"feature `{self.name}`: {{count}} last window{{s}} shorter than "
                             f"{self.window.seconds:g} s dropped (window.last: drop)")
            if not starts:
                context.notices.note(f"feature `{self.name}`: {{count}} recording{{s}} shorter than one window: no records")
            view = memoryview(data)
            for start in starts:
                stop = min(start + size, samples)
                stored.append(bytes(view[start * width: stop * width]))
                rows.append(row)
                offsets.append(start)
                lengths.append(stop - start)
        ones = np.ones(len(stored), dtype=np.int64)
        return ({self.record_key: Values("bytes", stored, ones),
                 self.length_key: Values("int64", np.array(lengths, dtype=np.int64), ones),
                 self.offset_key: Values("int64", np.array(offsets, dtype=np.int64), ones)},
                np.array(rows, dtype=np.int64))

    def waveform(self, value: Any, notices: Notices | None = None) -> np.ndarray:
        """One file's samples as stored: [samples, channels] int16 (pcm16) or float32; what the spec
        didn't ask for in so many words (a cut, a rounding) is counted in `notices` (None: nowhere)."""
        notices = Notices() if notices is None else notices
        read = read_waveform(value, self.sample_rate, self.channels, self.max_samples, self.resample,
                             self.encoding == "float32")
        if read.cut:
            notices.note(f"feature `{self.name}`: {{count}} waveform{{s}} cut at max_seconds: {self.max_seconds:g}")
        if self.encoding == "pcm16" and not read.exact_int16:
            notices.note(f"feature `{self.name}`: {{count}} {read.subtype} file{{s}} rounded to 16-bit samples (x * "
                         "32768 to the nearest integer, ties to even; encoding: float32 keeps them)")
        return self._stored(read.samples, notices)

    def _stored(self, samples: np.ndarray, notices: Notices) -> np.ndarray:
        """Samples as the encoding keeps them: int16 read as such, float32 as it is, and any other
        float to 16 bits by one rule, x * 32768 rounded to the nearest integer, ties to even
        (np.rint), clipped to [-32768, 32767] (the top half step, 32767.5 and over, to 32767)."""
        if self.encoding == "float32":
            return samples.astype(np.float32)
        if samples.dtype == np.int16:
            return samples
        scaled = samples * 32768.0
        if scaled.max(initial=0.0) >= 32768.0 or scaled.min(initial=0.0) < -32768.0:
            notices.note(f"feature `{self.name}`: {{count}} waveform{{s}} with samples outside [-1, 1) (a float "
                         "file's, or a resampling or mixing overshoot) clipped to 16 bits")
        np.rint(scaled, out=scaled)
        return np.clip(scaled, -32768, 32767, out=scaled).astype(np.int16)

    def check_stored(self, stored: dict[str, tuple[str, list[Any]]]) -> str | None:
        kind, values = stored.get(self.record_key, ("bytes", []))
        if self.record_key not in stored or kind != "bytes" or len(values) != 1:
            return f"expected one waveform under {self.record_key!r}"
        kind, length = stored.get(self.length_key, ("int64", []))
        if kind != "int64" or len(length) != 1 or length[0] < 0:
            return f"expected the number of samples under {self.length_key!r}"
        if self.window is not None:
            kind, offset = stored.get(self.offset_key, ("int64", []))
            if self.offset_key not in stored or kind != "int64" or len(offset) != 1 or offset[0] < 0:
                return f"expected the window's first sample under {self.offset_key!r}"
        expected = length[0] * self.channels * ITEM_BYTES[self.encoding]
        if len(values[0]) != expected:
            return f"{len(values[0])} bytes of samples, expected {expected} ({length[0]} × {self.channels} channels)"
        return None

    def statistics_values(self, encoded: dict[str, Values]) -> Values:
        """The lengths (in samples): the waveforms' bytes make no vocabulary."""
        return encoded[self.length_key]

    # ---- reading side ----------------------------------------------------------------------------
    def parsing(self) -> dict[str, ParseSpec]:
        parsed: dict[str, ParseSpec] = {self.record_key: ("fixed", "string", []), self.length_key: ("fixed", "int64", [])}
        if self.window is not None:
            parsed[self.offset_key] = ("fixed", "int64", [])
        return parsed

    def decoding(self, options: Any) -> list[DecodeStep]:
        return [("padded_audio", {"lengths": {"parsed": self.length_key}, "encoding": self.encoding,
                                  "channels": self.channels, "dtype": self.dtype})]

    def reading(self, options: Any) -> dict[str, Any]:
        """Its description, with `companions`: the length and mask features decoded beside it."""
        companions: dict[str, Any] = {}
        parse: dict[str, ParseSpec] = {self.length_key: ("fixed", "int64", [])}
        if self.length_name is not None:
            companions[self.length_name] = {"parse": parse, "decode": [("cast", {"dtype": "int32"})]}
        if self.mask_feature is not None:
            companions[self.mask_feature] = {"parse": parse, "decode": [("length_mask", {})]}
        if self.offset_name is not None:
            companions[self.offset_name] = {"parse": {self.offset_key: ("fixed", "int64", [])}, "decode": []}
        return {**super().reading(options), "companions": companions}

    @property
    def counted(self) -> Counted:
        """Its clips' lengths in samples (statistics_values): a measure of the clips, not their values."""
        return Counted(measured=True)

    @property
    def card(self) -> Card:
        return Card("audio", sample_rate=self.sample_rate)

    def tfds_features(self, options: Any) -> dict[str, dict[str, Any]]:
        """TFDS's Audio, with its length (and a window's offset) beside it as plain numbers."""
        numbers = [self.length_key] + ([self.offset_key] if self.window is not None else [])
        return {self.record_key: self.tfds_feature(options), **{key: tfds.tensor([], "int64") for key in numbers}}

    def tfds_feature(self, options: Any) -> dict[str, Any]:
        """TFDS's Audio, which reads our samples' bytes (decode_raw, little-endian)."""
        shape = ["-1"] if self.channels == 1 else ["-1", str(self.channels)]
        return {"pythonClassName": tfds.AUDIO, "audio": {
            "shape": {"dimensions": shape}, "dtype": "int16" if self.encoding == "pcm16" else "float32",
            "sampleRate": str(self.sample_rate), "encoding": "bytes"}}

    def describe(self) -> str:
        shape = "[samples]" if self.channels == 1 else f"[samples, {self.channels}]"
        return f"audio {self.encoding} {self.sample_rate} Hz {shape} {self.dtype}"


register("audio")(AudioFeature)


def _describe(value: Any) -> str:
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"{len(value)} bytes"
    return type(value).__name__
