"""One rule brings every file that int16 doesn't hold exactly to `encoding: pcm16`, whether it is
kept at its rate, resampled or mixed: x * 32768 to the nearest integer, ties to even, clipped to
[-32768, 32767] (x: soundfile's float64 read). Tested on 24-bit samples whose low bytes make
flooring, rounding half up and rounding half to even differ, and on a 32-bit float file."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tfrecord_builder as tb

from conftest import write_spec

soundfile = pytest.importorskip("soundfile")
from scipy.signal import resample_poly  # noqa: E402

# 24-bit samples: high parts even and odd, positive and negative, with low bytes 0x00 (exact),
# 0x40 (down), 0x7F, 0x80 (a tie: to even), 0x81, 0xC0 (up: a floor would go down), 0xFF
LOW_BYTES = [0x00, 0x40, 0x7F, 0x80, 0x81, 0xC0, 0xFF]
HIGH_PARTS = [0, 1, 2, 3, 1000, 1001, -1, -2, -1001, 32766, 32767, -32768]
TWENTY_FOUR = np.array([high * 256 + low for high in HIGH_PARTS for low in LOW_BYTES], np.int64)


def rule(x: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(x * 32768.0), -32768, 32767).astype(np.int16)


def built(tmp_path: Path, name: str, samples: np.ndarray, rate: int, subtype: str, audio: dict) -> tuple:
    folder = tmp_path / name
    folder.mkdir()
    soundfile.write(folder / "a.wav", samples, rate, subtype=subtype)
    spec = {"name": "sounds", "source": {"builder": "csv", "path": "table.csv"},
            "features": {"audio": {"type": "audio", "source": "path", "dtype": "int16", **audio}}}
    with pytest.warns(tb.BuildWarning) as warned:
        info = tb.build(write_spec(folder, spec, {"table.csv": "path\na.wav\n"}), output=folder / "out")
    (record,) = tb.read(info.path, "train")
    return record["audio"], [str(warning.message) for warning in warned], folder / "a.wav"


def test_24_bit_samples_are_rounded_ties_to_even_at_the_target_rate_resampled_and_mixed(tmp_path):
    """Before: at the target rate libsndfile's int16 read floored them (v >> 8), while resampled
    or mixed ones were rounded: 0x0001C0 was 1 as it is and 2 once mixed."""
    x = TWENTY_FOUR / 2.0**23  # exactly what soundfile's float64 read gives
    expected = np.clip(np.rint(TWENTY_FOUR / 256), -32768, 32767).astype(np.int16)
    spots = {0x0001C0: 2, 0x000180: 2, 0x000280: 2, 0x00037F: 3, 0x000381: 4, -0x000140: -1, -0x000180: -2,
             -0x000080: 0, 0x7FFF80: 32767}  # 1.75, 1.5, 2.5, 3.496, 3.504, -1.25, -1.5, -0.5, 32767.5 (clipped)
    for value, want in spots.items():
        assert expected[list(TWENTY_FOUR).index(value)] == want, hex(value)
    assert (expected != TWENTY_FOUR >> 8).sum() > len(TWENTY_FOUR) / 3  # a floor differs in a third and more
    kept, warnings, path = built(tmp_path, "kept", (TWENTY_FOUR << 8).astype(np.int32), 8000, "PCM_24",
                                 {"sample_rate": 8000})
    np.testing.assert_array_equal(soundfile.read(path, dtype="float64")[0], x)
    np.testing.assert_array_equal(kept, expected)
    assert warnings == ["feature `audio`: 1 PCM_24 file rounded to 16-bit samples (x * 32768 to the nearest "
                        "integer, ties to even; encoding: float32 keeps them)"]

    resampled, _, _ = built(tmp_path, "resampled", (TWENTY_FOUR << 8).astype(np.int32), 16000, "PCM_24",
                            {"sample_rate": 8000})
    np.testing.assert_array_equal(resampled, rule(resample_poly(x, 1, 2)))

    stereo = np.stack([TWENTY_FOUR, TWENTY_FOUR[::-1]], 1)
    mixed, _, _ = built(tmp_path, "mixed", (stereo << 8).astype(np.int32), 8000, "PCM_24", {"sample_rate": 8000})
    np.testing.assert_array_equal(mixed, rule((stereo / 2.0**23).mean(axis=1)))
    both = built(tmp_path, "both", (np.stack([TWENTY_FOUR, TWENTY_FOUR], 1) << 8).astype(np.int32), 8000, "PCM_24",
                 {"sample_rate": 8000})[0]  # two equal channels mixed: the kept file's samples again
    np.testing.assert_array_equal(both, expected)


def test_a_float_file_at_the_target_rate_is_scaled_by_the_same_rule(tmp_path):
    """Before: libsndfile's int16 read of a float file doesn't scale it (0.8 -> 1): a FLOAT WAV at
    the declared rate was stored as -1, 0 and 1. Samples past [-1, 1) are clipped and counted."""
    x = np.array([0.0, 0.5, -0.5, 0.8, 1 / 65536, 3 / 65536, -3 / 65536, 0.99999, 1.5, -1.0, -2.0], np.float32)
    stored, warnings, _ = built(tmp_path, "float", x, 8000, "FLOAT", {"sample_rate": 8000})
    np.testing.assert_array_equal(stored, [0, 16384, -16384, 26214, 0, 2, -2, 32767, 32767, -32768, -32768])
    assert sorted(warnings) == [
        "feature `audio`: 1 FLOAT file rounded to 16-bit samples (x * 32768 to the nearest integer, ties to even; "
        "encoding: float32 keeps them)",
        "feature `audio`: 1 waveform with samples outside [-1, 1) (a float file's, or a resampling or mixing "
        "overshoot) clipped to 16 bits"]
