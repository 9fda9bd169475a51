"""The report of an audio feature: durations and loudness over the clips read, and a clip per class
with its waveform and an inline player whose WAV holds the clip's own samples."""
from __future__ import annotations

import base64
import io
import re
import wave

import numpy as np
import pytest

import tfrecord_builder as tb
from tfrecord_builder.read.report import report, report_data
from tfrecord_builder.write.info import read_info

from conftest import write_spec

soundfile = pytest.importorskip("soundfile")
RATE = 8000


def sine(seconds: float, amplitude: float) -> np.ndarray:
    return (amplitude * np.sin(2 * np.pi * 440 * np.arange(int(seconds * RATE)) / RATE) * 32767).astype(np.int16)


@pytest.fixture
def sounds(tmp_path):
    """Three clips of known length and level in two classes: low (0.5 s and 1 s at -12 dB peak)
    and high (0.25 s at full scale)."""
    clips = {"a.wav": sine(0.5, 0.25), "b.wav": sine(1.0, 0.25), "c.wav": sine(0.25, 1.0)}
    for name, samples in clips.items():
        soundfile.write(tmp_path / name, samples, RATE, subtype="PCM_16")
    spec = {"name": "sounds", "source": {"builder": "csv", "path": "table.csv"}, "output": {"shuffle": False},
            "features": {"audio": {"type": "audio", "source": "path", "sample_rate": RATE},
                         "kind": {"type": "class_label", "names": ["low", "high"]}}, "label": "kind"}
    path = write_spec(tmp_path, spec, {"table.csv": "path,kind\na.wav,low\nb.wav,low\nc.wav,high\n"})
    return tb.build(path, output=tmp_path / "out").path, clips


def test_durations_loudness_and_a_clip_per_class(sounds):
    path, clips = sounds
    data = report_data(read_info(path), sample=None)
    audio, = [feature for feature in data.features if feature.name == "audio"]
    assert audio.kind == "audio"
    assert audio.durations.totals == {"train": 3} and audio.durations.edges[0] == 0.25
    assert audio.durations.edges[-1] == 1.0
    levels = sorted(edge for edge in (audio.loudness.edges[0], audio.loudness.edges[-1]))
    # a sine's RMS is its amplitude / sqrt(2): -15.05 dBFS at 0.25, -3.01 at full scale
    assert levels[0] == pytest.approx(-15.05, abs=0.01) and levels[1] == pytest.approx(-3.01, abs=0.01)
    assert [(clip.split, clip.label, clip.rate) for clip in audio.clips] == [("train", "low", RATE),
                                                                            ("train", "high", RATE)]
    np.testing.assert_array_equal(audio.clips[0].samples, clips["a.wav"] / np.float32(32768))
    assert dict(audio.rows)["clips"] == {"train": "3"}


def test_the_page_plays_each_clip_from_its_own_bytes_and_fetches_nothing(sounds, tmp_path):
    path, clips = sounds
    page = report(path, sample=None, png=tmp_path / "png")
    players = re.findall(r'<audio controls preload="none" src="data:audio/wav;base64,([^"]+)"', page)
    assert len(players) == 2
    with wave.open(io.BytesIO(base64.b64decode(players[1]))) as file:
        assert (file.getframerate(), file.getnchannels(), file.getsampwidth()) == (RATE, 1, 2)
        played = np.frombuffer(file.readframes(file.getnframes()), "<i2")
    np.testing.assert_array_equal(played, clips["c.wav"])
    assert not re.search(r'src="(?!data:)', page)  # every source inline
    assert sorted(file.name for file in (tmp_path / "png").iterdir() if file.name.startswith("audio")) == [
        "audio-durations.png", "audio-loudness.png", "audio-waveform-0.png", "audio-waveform-1.png"]
