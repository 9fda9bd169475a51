"""What a table's column of audio or video file paths says of the feature that stores them.

- **audio** (`.wav`, `.flac`, `.ogg`, `.opus`, `.mp3`, `.m4a`): `{type: audio, sample_rate: R}`,
  R the rate most of the files sampled have (the others are resampled to it, as the comment says);
  one channel (a file of more is mixed down by their mean, said too). Each file's rate and
  channels come from its header (soundfile; PyAV for what libsndfile doesn't read, such as AAC).
- **video** (`.mp4`, `.webm`, `.avi`, `.mov`, `.mkv`, `.m4v`): `{type: video}` under `sequence:`
  (a clip is one frame a step: the spec becomes a `format: sequence_example`, the other columns
  its context), every frame kept, `shape` the frames' size when every clip sampled has one size;
  the comment gives the clips' frame rates and durations, for `fps:` and `max_frames:`.

Up to `PROBE_LIMIT` files are opened, spread over the column; a file neither library opens is
an error naming it, as the build would stop at it.
"""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

from ...errors import DataError
from ...media.video import VIDEO_SUFFIXES
from .image_files import spread

AUDIO_SUFFIXES = (".wav", ".flac", ".ogg", ".oga", ".opus", ".mp3", ".m4a", ".aac")
PROBE_LIMIT = 100


@dataclass(frozen=True)
class Clip:
    """What a media file's header says."""

    rate: float  # samples (audio) or frames (video) a second
    channels: int = 1
    seconds: float = 0.0
    height: int = 0
    width: int = 0


def media_kind(values: Sequence[Any]) -> str | None:
    """audio or video when every value is a path ending like one (a file's extension); else None."""
    named = [value for value in values if value is not None]
    if not named or not all(isinstance(value, str) for value in named):
        return None
    extensions = {os.path.splitext(value.strip())[1].lower() for value in named}
    if extensions <= set(AUDIO_SUFFIXES):
        return "audio"
    if extensions <= set(VIDEO_SUFFIXES):
        return "video"
    return None


def media_fields(kind: str, paths: Sequence[str], total: int) -> tuple[dict[str, Any], str]:
    """The feature's declaration and its comment, from the files (`total`: how many the column names)."""
    sampled = spread(list(paths), PROBE_LIMIT)
    unit = "file" if kind == "audio" else "clip"
    clips = [_probe(kind, path) for path in sampled]
    which = f"the one {unit}" if total == 1 else f"all {total} {unit}s" if len(sampled) == total \
        else f"{len(sampled)} {unit}s sampled of {total}"
    seconds = sorted(clip.seconds for clip in clips)
    length = f"{seconds[0]:.1f}-{seconds[-1]:.1f} s" if seconds[0] != seconds[-1] else f"{seconds[0]:.1f} s"
    if kind == "audio":
        rates = Counter(round(clip.rate) for clip in clips)
        rate = max(rates, key=lambda value: (rates[value], value))
        note = f"guessed: {which}: {_rates(rates, 'Hz')}, {length}"
        if len(rates) > 1:
            note += f"; the others resampled to {rate} Hz"
        channels = Counter(clip.channels for clip in clips)
        if max(channels) > 1:
            note += (f"; {_listed(channels, 'channel')}: mixed down to one by their mean (`channels: "
                     f"{max(channels)}` keeps them, when every file has as many)")
        return {"type": "audio", "sample_rate": rate}, note
    sizes = {(clip.height, clip.width) for clip in clips}
    shape: list[int | None] = [*sizes.pop(), 3] if len(sizes) == 1 else [None, None, 3]
    frame_rates = Counter(round(clip.rate, 2) for clip in clips)
    size = f"{shape[0]}x{shape[1]}" if shape[0] else "of several sizes (each keeps its own)"
    note = (f"guessed: {which} {'is' if total == 1 else 'are'} {size}, {_rates(frame_rates, 'frames a second')}, "
            f"{length}: every frame kept (`fps:`, `max_frames:` keep fewer); a clip is one frame a step")
    return {"type": "video", "shape": shape}, note


def _rates(rates: Counter, unit: str) -> str:
    ordered = sorted(rates)
    shown = f"{ordered[0]:g}" if len(ordered) == 1 else f"{ordered[0]:g}-{ordered[-1]:g}"
    return f"{shown} {unit}"


def _listed(counts: Counter, unit: str) -> str:
    return ", ".join(f"{count} with {value} {unit}{'s' if value > 1 else ''}" for value, count in sorted(counts.items()))


def _probe(kind: str, path: str) -> Clip:
    """The file's rate, channels, length (and a video's frame size): soundfile reads an audio
    file's header where libsndfile knows its format; PyAV reads the rest (AAC, every video)."""
    if kind == "audio":
        found = _sound_file(path)
        if found is not None:
            return found
    try:
        import av  # (PyAV: the video feature's decoder, installed with it)
    except ImportError:
        raise DataError(f"{path}: can't read the {kind} file's header: soundfile doesn't read it and PyAV isn't "
                        "installed (pip install av)") from None
    try:
        with av.open(path) as container:
            streams = container.streams.audio if kind == "audio" else container.streams.video
            if not streams:
                raise DataError(f"{path}: no {kind} stream in the file")
            stream = streams[0]
            seconds = float(stream.duration * stream.time_base) if stream.duration is not None and stream.time_base \
                else float(container.duration or 0) / 1e6
            if kind == "audio":
                return Clip(float(stream.rate), int(stream.channels), seconds)
            rate = float(stream.average_rate or 0)
            return Clip(rate, 3, seconds, int(stream.codec_context.height), int(stream.codec_context.width))
    except DataError:
        raise
    except Exception as error:  # PyAV's own (FFmpeg's) errors: a damaged or unknown file
        raise DataError(f"{path}: can't read the {kind} file ({type(error).__name__}: {error})") from None


def _sound_file(path: str) -> Clip | None:
    """An audio file's header as soundfile reads it; None where it can't (PyAV may)."""
    try:
        import soundfile  # (the audio feature's reader: installed with the audio extra)

        info = soundfile.info(path)
    except Exception:  # not installed, or a format libsndfile doesn't read (its own error kinds)
        return None
    return Clip(float(info.samplerate), int(info.channels), float(info.duration))
