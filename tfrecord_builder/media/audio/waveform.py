"""One audio file's waveform at the rate and channels a feature asks for: decoded (files.py), mixed
down to one channel by the mean of its channels, resampled (resampling.py) and cut, read only as
far as the cut needs. The samples come back as the file holds them where that is exact (int16 of a
16-bit file, float32 where asked and neither resampled nor mixed), else as float64 in [-1, 1);
how they are stored (and the notices that say what changed them) is the feature's rule."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import BadAudio, files
from .resampling import resampled


@dataclass(frozen=True)
class Waveform:
    """A file's samples, [samples, channels], and what reading them did."""

    samples: np.ndarray
    subtype: str  # libsndfile's subtype (PCM_16, PCM_24, FLOAT, VORBIS, ...) or FFmpeg's codec (AAC, ...)
    exact_int16: bool  # whether int16 holds every sample of the file exactly
    cut: bool  # longer than `max_samples`: cut there


def read_waveform(value: Any, sample_rate: int, channels: int, max_samples: int | None, resample: bool,
                  float32: bool) -> Waveform:
    """The file at a path (local or a URL) or in bytes at `sample_rate` Hz with `channels` (1 mixes
    any number down; another number must be the file's), at most `max_samples` long. `resample`:
    whether a file at another rate is resampled (else refused); `float32`: a file neither
    resampled nor mixed is read as float32 (else as int16 where exact, float64 otherwise)."""
    with files.opened(value) as sound:
        rate, subtype, kept = sound.rate, sound.subtype, channels
        if kept not in (1, sound.channels):
            raise BadAudio(f"{sound.channels} channel{'s' if sound.channels > 1 else ''}, expected "
                           f"{kept} (channels: 1 mixes any number down)")
        if rate != sample_rate and not resample:
            raise BadAudio(f"sample rate {rate} Hz, expected {sample_rate} Hz (resample: false)")
        limit = max_samples
        # a long file cut by max_seconds is read only as far as the cut, plus the resampling
        # filter's reach past it (resample_poly's: 10 input samples per rate/target, at least 10)
        reach = 10 * math.ceil(rate / sample_rate) + 64
        wanted = -1 if limit is None else math.ceil(limit * rate / sample_rate) + reach
        # as it is (neither resampled nor mixed), or not
        exact = rate == sample_rate and kept == sound.channels
        # a file int16 holds exactly is read as int16 (its own integers; scaled once here where
        # resampled or mixed: the same float64 values as libsndfile's float64 read, x / 32768, at
        # half its cost); any other as float64, rounded to 16 bits by the feature's one rule
        if exact and float32:
            read = "float32"
        else:
            read = "int16" if sound.exact_int16 else "float64"
        samples, more = sound.read(wanted, read)
        more = more and limit is not None
    if not len(samples) and not more:
        raise BadAudio("no samples (an empty or truncated file)")
    if not exact and samples.dtype == np.int16:
        samples = samples / 32768.0
    if kept == 1 and samples.shape[1] > 1:
        samples = samples.mean(axis=1, keepdims=True)
    if rate != sample_rate:
        samples = resampled(samples, rate, sample_rate)
    cut = limit is not None and (len(samples) > limit or more)
    return Waveform(samples[:limit] if cut else samples, subtype, sound.exact_int16, cut)
