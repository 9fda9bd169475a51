"""audio/files.py's second decoder: a file libsndfile doesn't read, an M4A of AAC (written here by
PyAV's own encoder), is decoded by FFmpeg through PyAV, and stored by the same rules as any other
(mixing by the mean, resample_poly, x * 32768 rounded ties to even), compared with PyAV's own
decode of it. Without PyAV it is one line naming the format and what to install."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tfrecord_builder as tb
from tfrecord_builder.media.audio import BadAudio
from tfrecord_builder.features.audio import AudioFeature

from conftest import write_spec

av = pytest.importorskip("av")
soundfile = pytest.importorskip("soundfile")
from scipy.signal import resample_poly  # noqa: E402

RATE = 44100


def m4a(path: Path, seconds: float = 1.5, faststart: bool = False) -> Path:
    """Two tones, left and right, encoded as AAC in an M4A by PyAV (FFmpeg's native AAC encoder)."""
    times = np.arange(int(seconds * RATE)) / RATE
    tones = np.stack([0.4 * np.sin(2 * np.pi * 440 * times), 0.3 * np.sin(2 * np.pi * 660 * times)])
    with av.open(str(path), "w", format="ipod", options={"movflags": "faststart"} if faststart else {}) as out:
        stream = out.add_stream("aac", rate=RATE, layout="stereo")
        frame = av.AudioFrame.from_ndarray(tones.astype(np.float32), format="fltp", layout="stereo")
        frame.sample_rate = RATE
        for packet in [*stream.encode(frame), *stream.encode(None)]:
            out.mux(packet)
    return path


def pyav_decode(path: Path) -> np.ndarray:
    """PyAV's own decode of the file: float32 [samples, channels], as its decoder gives them."""
    with av.open(str(path)) as container:
        frames = [frame.to_ndarray() for frame in container.decode(audio=0)]
    return np.concatenate(frames, axis=1).T


def build(folder: Path, audio: dict) -> dict:
    spec = {"name": "sounds", "source": {"builder": "csv", "path": "table.csv"},
            "features": {"audio": {"type": "audio", "source": "path", **audio}}}
    with pytest.warns(tb.BuildWarning) as warned:
        info = tb.build(write_spec(folder, spec, {"table.csv": "path\na.m4a\n"}), output=folder / "out")
    (record,) = tb.read(info.path, "train")
    return {"audio": record["audio"], "warnings": [str(warning.message) for warning in warned]}


def test_an_m4a_is_decoded_by_ffmpeg_to_pyavs_own_samples_by_the_same_rules(tmp_path):
    """Before: "can't be decoded, corrupt or truncated (... Format not recognised.)"."""
    path = m4a(tmp_path / "a.m4a")
    with pytest.raises(soundfile.LibsndfileError, match="Format not recognised"):
        soundfile.info(path)
    decoded = pyav_decode(path)
    assert decoded.dtype == np.float32 and decoded.shape[1] == 2 and len(decoded) >= 1.5 * RATE
    x = decoded.astype(np.float64)
    rounded = lambda values: np.clip(np.rint(values * 32768), -32768, 32767).astype(np.int16)  # noqa: E731

    kept = build(tmp_path, {"sample_rate": RATE, "channels": 2, "dtype": "int16"})
    np.testing.assert_array_equal(kept["audio"], rounded(x))
    assert kept["warnings"] == ["feature `audio`: 1 AAC file rounded to 16-bit samples (x * 32768 to the nearest "
                                "integer, ties to even; encoding: float32 keeps them)"]
    floats = AudioFeature(name="audio", sample_rate=RATE, channels=2, encoding="float32").waveform(str(path))
    np.testing.assert_array_equal(floats, decoded)  # float32: PyAV's decode as it is
    mono = AudioFeature(name="audio", sample_rate=16000, dtype="int16").waveform(str(path))
    np.testing.assert_array_equal(mono[:, 0], rounded(resample_poly(x.mean(axis=1), 160, 441)))
    cut = AudioFeature(name="audio", sample_rate=RATE, channels=2, max_seconds=0.5).waveform(str(path))
    np.testing.assert_array_equal(cut, rounded(x)[:RATE // 2])


def test_a_cut_m4a_is_refused(tmp_path):
    """With its index up front (faststart), FFmpeg reads a cut file's first frames in silence:
    fewer frames decode than the file lists. With its index at the end, FFmpeg can't open it."""
    whole = m4a(tmp_path / "whole.m4a", faststart=True).read_bytes()
    (tmp_path / "cut.m4a").write_bytes(whole[:len(whole) * 2 // 3])
    feature = AudioFeature(name="audio", sample_rate=RATE, channels=2)
    with pytest.raises(BadAudio, match=r"^(truncated: \d+ frames decoded of the \d+ the file lists|corrupt or "
                                       r"truncated after \d+ frames \(.+\))$"):
        feature.waveform(str(tmp_path / "cut.m4a"))
    late = m4a(tmp_path / "late.m4a").read_bytes()
    (tmp_path / "late_cut.m4a").write_bytes(late[:len(late) // 2])
    with pytest.raises(BadAudio, match=r"^can't be decoded, corrupt or truncated \(FFmpeg: .+\)$"):
        feature.waveform(str(tmp_path / "late_cut.m4a"))


def test_without_pyav_an_m4a_is_one_line_naming_the_format_and_what_to_install(tmp_path, monkeypatch):
    path = m4a(tmp_path / "a.m4a")
    monkeypatch.setitem(sys.modules, "av", None)  # `import av` raises ImportError: PyAV not installed
    with pytest.raises(BadAudio) as caught:
        AudioFeature(name="audio", sample_rate=RATE).waveform(str(path))
    assert str(caught.value) == ("an MP4/M4A file (AAC or ALAC audio), which libsndfile doesn't read: install PyAV "
                                 "(`pip install av`, the `video` extra) to decode it with FFmpeg")


def test_a_file_libsndfile_reads_is_never_handed_to_ffmpeg(tmp_path):
    """A WAV of PCM samples whose format tag was damaged (0x2000, AC-3): FFmpeg's demuxer opens it
    and would decode its samples as AC-3; libsndfile's refusal stands."""
    soundfile.write(tmp_path / "a.wav", np.zeros(800), 8000, subtype="PCM_16")
    data = bytearray((tmp_path / "a.wav").read_bytes())
    data[20:22] = (0x2000).to_bytes(2, "little")
    (tmp_path / "b.wav").write_bytes(bytes(data))
    with av.open(str(tmp_path / "b.wav")) as container:
        assert container.streams.audio[0].codec_context.name == "ac3"
    with pytest.raises(BadAudio, match=r"^can't be decoded, corrupt or truncated \(.*Malformed 'fmt ' chunk\.\)$"):
        AudioFeature(name="audio", sample_rate=8000).waveform(str(tmp_path / "b.wav"))
