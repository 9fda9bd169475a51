"""The audio feature's fast paths give the stored bytes the plain ones gave: the resampler's
filter designed once per rate pair (`lowpass`, passed to resample_poly as `window=`), and files
of at most 16 bits read as int16 and scaled once, against soundfile's float64 read and
resample_poly's own filter design, byte for byte."""
from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrecord_builder as tb
from tfrecord_builder.media.audio.files import EXACT_SUBTYPES
from tfrecord_builder.media.audio.resampling import lowpass, resampled
from tfrecord_builder.features.audio import AudioFeature, AudioWindow

soundfile = pytest.importorskip("soundfile")
from scipy.signal import firwin, resample_poly  # noqa: E402

RATES = [8000, 11025, 16000, 22050, 44100, 48000]
# (container, subtype) for each subtype read as int16, and two that aren't (24 bits, float)
FILES = [("WAV", "PCM_16"), ("FLAC", "PCM_16"), ("WAV", "PCM_U8"), ("AIFF", "PCM_S8"), ("WAV", "ULAW"),
         ("WAV", "ALAW"), ("WAV", "PCM_24"), ("WAV", "FLOAT")]


def plain(data: bytes, feature: AudioFeature) -> bytes:
    """What the feature stores, the plain way: a file as it is (rate and channels kept) in
    soundfile's read of the stored dtype where that is exact (a file of at most 16 bits into
    pcm16; float32); else soundfile's float64 read, the mean of the channels, resample_poly with
    its own filter design, x * 32768 rounded (ties to even) and clipped."""
    stored = "<i2" if feature.encoding == "pcm16" else "<f4"
    info = soundfile.info(io.BytesIO(data))
    as_it_is = info.samplerate == feature.sample_rate and info.channels == feature.channels
    if as_it_is and (feature.encoding == "float32" or info.subtype in EXACT_SUBTYPES):
        return soundfile.read(io.BytesIO(data), dtype=np.dtype(stored).name, always_2d=True)[0].astype(stored).tobytes()
    samples, rate = soundfile.read(io.BytesIO(data), dtype="float64", always_2d=True)
    if feature.channels == 1:
        samples = samples.mean(axis=1, keepdims=True)
    if rate != feature.sample_rate:
        common = np.gcd(rate, feature.sample_rate)
        samples = resample_poly(samples, feature.sample_rate // common, rate // common, axis=0)
    if feature.encoding == "float32":
        return samples.astype("<f4").tobytes()
    return np.clip(np.rint(samples * 32768.0), -32768, 32767).astype("<i2").tobytes()


def test_the_filter_is_resample_polys_own_designed_once_per_rate_pair():
    taps = lowpass(160, 441)
    np.testing.assert_array_equal(taps, firwin(2 * 10 * 441 + 1, 1 / 441, window=("kaiser", 5.0)))
    assert taps.dtype == np.float64 and not taps.flags.writeable
    assert lowpass(160, 441) is taps  # cached, not designed again
    assert lowpass(441, 160) is not taps and np.array_equal(lowpass(441, 160), taps)  # same filter, own entry


def test_every_subtype_read_as_int16_scales_to_soundfiles_float64_read_exactly():
    assert {subtype for _, subtype in FILES} >= EXACT_SUBTYPES
    every = np.arange(-32768, 32768, dtype=np.int16).reshape(-1, 1)
    for container, subtype in FILES[:-2]:
        data = io.BytesIO()
        soundfile.write(data, every, 8000, format=container, subtype=subtype)
        as_int16 = soundfile.read(io.BytesIO(data.getvalue()), dtype="int16")[0]
        as_float64 = soundfile.read(io.BytesIO(data.getvalue()), dtype="float64")[0]
        np.testing.assert_array_equal(as_int16 / 32768.0, as_float64, err_msg=f"{container} {subtype}")


@settings(max_examples=40, deadline=None)
@given(length=st.integers(1, 3000), rate=st.sampled_from(RATES), target=st.sampled_from(RATES),
       channels=st.integers(1, 3), kept=st.booleans(), file=st.sampled_from(FILES),
       encoding=st.sampled_from(["pcm16", "float32"]), seed=st.integers(0, 2**32 - 1))
def test_stored_bytes_are_the_plain_paths_byte_for_byte(length, rate, target, channels, kept, file, encoding,
                                                        seed):
    container, subtype = file
    waveform = np.random.default_rng(seed).uniform(-1, 1, (length, channels))
    data = io.BytesIO()
    soundfile.write(data, waveform, rate, format=container, subtype=subtype)
    feature = AudioFeature(name="audio", sample_rate=target, channels=channels if kept else 1, encoding=encoding)
    stored = feature.encode([data.getvalue()], tb.EncodeContext(lambda row: f"row {row}"))["audio"].values[0]
    assert stored == plain(data.getvalue(), feature)


@pytest.mark.parametrize("rate,target", [(22050, 8000), (44100, 16000), (48000, 16000), (8000, 44100)])
def test_resampled_is_resample_poly_with_its_default_filter_bit_for_bit(rate, target):
    samples = np.random.default_rng(rate).uniform(-1, 1, (2 * rate // 3, 2))
    common = np.gcd(rate, target)
    np.testing.assert_array_equal(resampled(samples, rate, target),
                                  resample_poly(samples, target // common, rate // common, axis=0))


@pytest.mark.parametrize("audio,rows", [
    ({}, 128),  # no bound on a clip's length: clips of a few seconds
    ({"max_seconds": 1.5}, 174),  # the demo's: 1.5 s at 8 kHz, 24,000 bytes a clip: 4 MiB of them
    ({"max_seconds": 0.1}, 256),  # short clips: at most 256
    ({"max_seconds": 600, "sample_rate": 48000, "channels": 2, "encoding": "float32"}, 16),  # at least 16
    ({"window": AudioWindow(seconds=1)}, 4),  # long recordings cut into windows, each held whole
])
def test_a_batch_holds_about_4_mib_of_clips_as_max_seconds_bounds_them(audio, rows):
    assert AudioFeature(name="audio", **{"sample_rate": 8000, **audio}).batch_rows == rows
