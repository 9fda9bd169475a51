"""Waveforms resampled with scipy's polyphase resampler, its filter designed once per rate pair."""
from __future__ import annotations

import functools
import math

import numpy as np


def resampled(samples: np.ndarray, rate: int, target: int) -> np.ndarray:
    """[samples, channels] float64 from `rate` to `target` Hz: scipy's polyphase resampler (up by
    target/g, low-pass with its default Kaiser window, down by rate/g; g = gcd of the two)."""
    from scipy.signal import resample_poly  # (SciPy: only builds that resample audio need it)

    if samples.dtype == np.int16:
        samples = samples / 32768.0
    common = math.gcd(rate, target)
    up, down = target // common, rate // common
    return resample_poly(samples, up, down, axis=0, window=lowpass(up, down))


@functools.lru_cache(maxsize=16)
def lowpass(up: int, down: int) -> np.ndarray:
    """The low-pass filter `resample_poly(x, up, down)` designs by default, designed once per
    pair: its `firwin(2 * 10 * m + 1, 1 / m, window=("kaiser", 5.0))`, m = max(up, down).

    resample_poly designs it anew on every call (most of its time on a clip of a second: a
    Kaiser window of thousands of taps); given as `window=`, the same float64 coefficients are
    used as they are, so the output is bit for bit the default's (tests/features/test_audio_resampling.py)."""
    from scipy.signal import firwin

    largest = max(up, down)
    taps = firwin(2 * 10 * largest + 1, 1.0 / largest, window=("kaiser", 5.0))
    taps.setflags(write=False)  # shared by every call: resample_poly copies it before scaling
    return taps
