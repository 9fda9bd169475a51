"""audio/whole.py: a cut audio file is refused, whichever format and wherever it is cut, and a
whole one never is. Each file is written by soundfile (libsndfile) in the test and cut with
bytes[:N]; each message is what the build says of it, one line."""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

import tfrecord_builder as tb
from tfrecord_builder.media.audio import BadAudio, files

from conftest import write_spec
from support.cli import assert_error, run_cli

soundfile = pytest.importorskip("soundfile")


def recording(seconds: float, rate: int = 44100, channels: int = 2) -> np.ndarray:
    """A tone in noise (noise, so a lossy encoder spends bytes on it), float64 [samples, channels]."""
    times = np.arange(int(seconds * rate)) / rate
    noise = np.random.default_rng(0).standard_normal((len(times), channels))
    return 0.3 * np.sin(2 * np.pi * 440 * times)[:, None] + 0.1 * noise


def written(format: str, subtype: str | None = None, seconds: float = 13.0, rate: int = 44100) -> bytes:
    data = io.BytesIO()
    soundfile.write(data, recording(seconds, rate), rate, format=format, subtype=subtype)
    return data.getvalue()


def decoded(data: bytes) -> np.ndarray:
    with files.opened(data) as sound:
        samples, more = sound.read(-1, "float64")
    assert not more
    return samples


def ogg_pages(data: bytes) -> list[int]:
    """Where each Ogg page starts (walked from the first by the pages' own lengths)."""
    starts, at = [], 0
    while at < len(data):
        assert data[at:at + 4] == b"OggS"
        segments = data[at + 26]
        starts.append(at)
        at += 27 + segments + sum(data[at + 27:at + 27 + segments])
    return starts


def test_the_issues_cut_ogg_vorbis_fails_the_build_in_one_line_or_is_skipped(tmp_path):
    """The first 100 KB of a 13 s Ogg Vorbis file. Before: built with exit 0, storing the 6 s
    libsndfile decodes of it (its last page lacks the end-of-stream flag)."""
    whole = written("OGG", "VORBIS")
    assert len(whole) > 150_000
    (tmp_path / "whole.ogg").write_bytes(whole)
    (tmp_path / "cut.ogg").write_bytes(whole[:100_000])
    assert 5 < soundfile.info(tmp_path / "cut.ogg").duration < 9  # what libsndfile reads of it, in silence
    spec = {"name": "sounds", "source": {"builder": "csv", "path": "table.csv"},
            "features": {"audio": {"type": "audio", "source": "path", "sample_rate": 16000},
                         "name": {"dtype": "string"}}}
    write_spec(tmp_path, spec, {"table.csv": "path,name\nwhole.ogg,w\ncut.ogg,c\n"})
    result = run_cli("build", "spec.yaml", "--output", "out", cwd=tmp_path)
    assert_error(result, 1, [f"error: table.csv, line 3: feature `audio`: {tmp_path / 'cut.ogg'}: truncated: its "
                             "last Ogg page is cut short"])
    skipping = write_spec(tmp_path / "skipping", {**spec, "source": {"builder": "csv", "path": "../table.csv"},
                                                  "on_error": "skip"})
    with pytest.warns(tb.BuildWarning, match="1 VORBIS file rounded to 16-bit samples"):
        info = tb.build(skipping, output=tmp_path / "skipping" / "out")
    assert info.skipped == 1 and info.splits["train"].num_examples == 1
    (skipped,) = [json.loads(line) for line in (Path(info.path) / "skipped.jsonl").read_text().splitlines()]
    assert skipped == {"record": "table.csv, line 3", "reason": (
        f"table.csv, line 3: feature `audio`: {tmp_path / 'cut.ogg'}: truncated: its last Ogg page is cut short")}
    (record,) = tb.read(info.path, "train")
    assert record["name"] == b"w" and record["audio_length"] == 13 * 16000


@pytest.mark.parametrize("subtype, rate", [("VORBIS", 44100), ("OPUS", 48000)])
def test_an_ogg_cut_at_a_page_boundary_or_inside_a_page_is_refused(subtype, rate):
    whole = written("OGG", subtype, seconds=4, rate=rate)
    assert len(decoded(whole)) == 4 * rate
    pages = ogg_pages(whole)
    assert whole[pages[-1] + 5] & 0x04  # the stream's last page says so
    for cut in pages[-3:]:  # whole pages, the last of them not the stream's last
        with pytest.raises(BadAudio, match=r"^truncated: its last Ogg page \(at byte \d+\) doesn't end the stream$"):
            decoded(whole[:cut])
    for cut in (pages[-1] + 10, pages[len(pages) // 2] + 100, len(whole) - 1):
        with pytest.raises(BadAudio, match=r"^truncated: its last Ogg page is cut short$"):
            decoded(whole[:cut])


def test_a_cut_mp3_with_a_frame_count_is_refused():
    """libsndfile's MP3 writer (LAME) puts a Xing frame count up front: a cut file decodes fewer
    samples than it declares. Before: its first half built in silence."""
    whole = written("MP3", seconds=4)
    assert len(decoded(whole)) == 4 * 44100
    with pytest.raises(BadAudio, match=r"^truncated: \d+ samples decoded of the 176400 its header declares$"):
        decoded(whole[:len(whole) // 2])


@pytest.mark.parametrize("fraction", [0.3, 0.7, 0.999])
def test_a_cut_flac_or_wav_is_refused_as_libsndfile_and_its_log_say(fraction):
    """These were refused already: FLAC by libsndfile itself, WAV by the log of its short data chunk."""
    flac, wav = written("FLAC", "PCM_16", seconds=2), written("WAV", "PCM_24", seconds=2)
    with pytest.raises(BadAudio, match=r"^can't be decoded, corrupt or truncated \("):
        decoded(flac[:int(len(flac) * fraction)])
    with pytest.raises(BadAudio, match=r"^truncated: its header declares 529200 bytes of samples, the file holds"):
        decoded(wav[:int(len(wav) * fraction)])


@pytest.mark.parametrize("format, subtype, rate", [
    ("WAV", "PCM_16", 44100), ("WAV", "PCM_24", 44100), ("FLAC", "PCM_24", 44100), ("OGG", "VORBIS", 44100),
    ("OGG", "OPUS", 48000), ("MP3", None, 44100), ("AIFF", "PCM_16", 44100)])
def test_a_whole_file_of_any_format_is_read_whole(format, subtype, rate):
    data = written(format, subtype, seconds=3, rate=rate)
    samples = decoded(data)
    np.testing.assert_array_equal(samples, soundfile.read(io.BytesIO(data), dtype="float64", always_2d=True)[0])
    assert len(samples) == 3 * rate
