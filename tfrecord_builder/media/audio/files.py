"""Audio files opened and decoded: by libsndfile (soundfile, whose wheel carries it: WAV, FLAC,
OGG Vorbis and Opus, MP3, AIFF, ...), and, for a file libsndfile doesn't recognise, by FFmpeg
(PyAV, the video feature's decoder) when FFmpeg reads it as a format of its own: AAC or ALAC in an
MP4/M4A, WMA, AC-3, Matroska audio. A file libsndfile reads is never handed to FFmpeg, whose
demuxers read damaged files leniently; its error stands.

`opened(value)` gives a `Sound`: the file's rate, channels, subtype (libsndfile's, such as PCM_24
or VORBIS; FFmpeg's codec, such as AAC) and whether int16 holds its samples exactly, and `read`,
which decodes up to a number of samples in the dtype asked and says whether more follow. A file
read to its end is checked to be whole (whole.py); one that can't be is a BadAudio.
"""
from __future__ import annotations

import contextlib
from typing import Any, BinaryIO, Iterator, Protocol

import numpy as np

from .. import source
from . import BadAudio, whole

EXACT_SUBTYPES = {"PCM_16", "PCM_S8", "PCM_U8", "ULAW", "ALAW"}  # what int16 holds exactly
# FFmpeg's demuxers of the formats libsndfile reads: such a file libsndfile refused is damaged
_LIBSNDFILE_FORMATS = {"wav", "w64", "aiff", "flac", "ogg", "mp3", "au", "caf", "voc"}
_EXACT_FFMPEG = {"s16", "s16p", "u8", "u8p"}  # FFmpeg sample formats int16 holds exactly


class Sound(Protocol):
    """An opened audio file."""

    rate: int  # samples per second
    channels: int
    subtype: str  # libsndfile's subtype (PCM_16, PCM_24, FLOAT, VORBIS, ...) or FFmpeg's codec (AAC, ...)
    exact_int16: bool  # whether int16 holds every sample exactly (a 16-bit or smaller integer format)

    def read(self, frames: int, dtype: str) -> tuple[np.ndarray, bool]:
        """Up to `frames` samples a channel from the start (-1: all) as [samples, channels] of
        `dtype` ("int16" only where exact_int16; "float32" or "float64" in [-1, 1) as libsndfile
        scales), and whether more follow. Read to its end, the file is checked to be whole."""
        ...


@contextlib.contextmanager
def opened(value: Any) -> Iterator[Sound]:
    """The audio file at a path (local or a URL) or in bytes, opened (closed after)."""
    import soundfile  # here: only builds with audio need libsndfile

    with source.for_decoder(value, "an audio file", BadAudio) as place:
        with _as_file(place) as file:
            if file.read(4) == b"OggS":
                whole.check_ogg(file)
        try:
            sound, refusal = soundfile.SoundFile(place), None
        except (RuntimeError, soundfile.LibsndfileError, EOFError) as error:
            sound, refusal = None, BadAudio(f"can't be decoded, corrupt or truncated ({_first_line(error)})")
            if "Format not recognised" not in str(error):
                raise refusal from None
        if sound is None:
            with _as_file(place) as file, _ffmpeg(file, refusal) as other:
                yield other
            return
        with sound:
            yield _Libsndfile(sound)


class _Libsndfile:
    def __init__(self, sound: Any):
        self.sound = sound
        self.rate, self.channels, self.subtype = sound.samplerate, sound.channels, sound.subtype
        self.exact_int16 = sound.subtype in EXACT_SUBTYPES
        whole.check_log(sound.extra_info)

    def read(self, frames: int, dtype: str) -> tuple[np.ndarray, bool]:
        import soundfile

        sound = self.sound
        try:
            if sound.seekable():  # as soundfile.read does: an MP3 decoded after a seek differs in its last bits
                sound.seek(0)
            samples = sound.read(frames=frames, dtype=dtype, always_2d=True)
        except (RuntimeError, soundfile.LibsndfileError, EOFError) as error:
            raise BadAudio(f"can't be decoded, corrupt or truncated ({_first_line(error)})") from None
        declared = sound.frames if 0 < sound.frames < 1 << 62 else None  # (a stream of unknown length: huge)
        if declared is not None and (frames < 0 or len(samples) < frames):  # read to its end
            whole.check_count(len(samples), declared)
        return samples, declared is not None and sound.tell() < declared


@contextlib.contextmanager
def _ffmpeg(file: BinaryIO, refusal: BadAudio) -> Iterator[Sound]:
    """A file libsndfile doesn't recognise, opened by FFmpeg; `refusal` (libsndfile's words) when
    FFmpeg doesn't read it either, or reads it as a format libsndfile reads (so it is damaged)."""
    try:
        import av
    except ImportError:
        named = _named(file)
        if named is None:
            raise refusal from None
        raise BadAudio(f"{named}, which libsndfile doesn't read: install PyAV (`pip install av`, the `video` "
                       "extra) to decode it with FFmpeg") from None
    try:
        container = av.open(file)
    except (av.FFmpegError, OSError, ValueError) as error:
        if _named(file) is None:  # (not a format of FFmpeg's own: libsndfile's words)
            raise refusal from None
        raise BadAudio(f"can't be decoded, corrupt or truncated (FFmpeg: {_ffmpeg_words(error)})") from None
    with container:
        if set(container.format.name.split(",")) & _LIBSNDFILE_FORMATS:
            raise refusal
        if not container.streams.audio:
            raise BadAudio(f"no audio stream in its {container.format.long_name or container.format.name}")
        yield _FFmpeg(container, container.streams.audio[0])


class _FFmpeg:
    """A file's first audio stream decoded by FFmpeg, frame by frame (decoding stops once
    `frames` samples are read), each frame's samples as FFmpeg's decoder gives them."""

    def __init__(self, container: Any, stream: Any):
        self.container, self.stream = container, stream
        codec = stream.codec_context
        self.rate, self.channels, self.subtype = codec.sample_rate, codec.channels, codec.name.upper()
        self.exact_int16 = codec.format is not None and codec.format.name in _EXACT_FFMPEG

    def read(self, frames: int, dtype: str) -> tuple[np.ndarray, bool]:
        import av

        parts, total, decoded = [], 0, 0
        try:
            for frame in self.container.decode(self.stream):
                decoded += 1
                parts.append(_samples(frame, self.channels, dtype))
                total += len(parts[-1])
                if 0 <= frames < total:  # one sample past the ones asked: more follow
                    break
        except av.FFmpegError as error:
            raise BadAudio(f"corrupt or truncated after {decoded} frames ({_ffmpeg_words(error)})") from None
        more = 0 <= frames < total
        listed = self.stream.frames  # the container's own count of the stream's frames (0: none kept)
        if not more and listed and decoded < listed:  # FFmpeg ends a cut file's stream in silence
            raise BadAudio(f"truncated: {decoded} frames decoded of the {listed} the file lists")
        samples = np.concatenate(parts) if parts else np.zeros((0, self.channels), dtype)
        return (samples[:frames] if frames >= 0 else samples), more


def _samples(frame: Any, channels: int, dtype: str) -> np.ndarray:
    """One decoded frame's samples as [samples, channels] of `dtype`: integers scaled to [-1, 1)
    as libsndfile scales them (by 2^(bits - 1); unsigned 8-bit centred first), floats as they are."""
    values = frame.to_ndarray()
    values = values.T if frame.format.is_planar else values.reshape(-1, channels)
    kind = frame.format.name.rstrip("p")
    if dtype == "int16" and kind == "s16":
        return values.astype(np.int16)
    if kind == "u8":
        values = values.astype(np.int16) - 128
        return values.astype(np.int16) * 256 if dtype == "int16" else (values / 128.0).astype(dtype)
    scale = {"s16": 2.0**15, "s32": 2.0**31, "s64": 2.0**63}.get(kind, 1.0)
    return (values / scale).astype(dtype) if scale != 1.0 else values.astype(dtype)


def _named(file: BinaryIO) -> str | None:
    """The format of a file libsndfile doesn't recognise, from its first bytes, where it is one
    FFmpeg reads; None for any other."""
    file.seek(0)
    head = file.read(16)
    file.seek(0)
    if head[4:8] == b"ftyp":
        return "an MP4/M4A file (AAC or ALAC audio)"
    if len(head) > 1 and head[0] == 0xFF and head[1] & 0xF6 == 0xF0:
        return "an AAC file (ADTS)"
    if head.startswith(bytes.fromhex("3026b2758e66cf11")):
        return "a WMA file (ASF)"
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return "a Matroska/WebM file"
    if head.startswith(b"\x0b\x77"):
        return "an AC-3 file"
    if head.startswith(b"#!AMR"):
        return "an AMR file"
    return None


@contextlib.contextmanager
def _as_file(source: str | BinaryIO) -> Iterator[BinaryIO]:
    """`source` as a binary file at its start: a path opened (closed after), a file rewound."""
    if isinstance(source, str):
        with open(source, "rb") as file:
            yield file
        return
    source.seek(0)
    yield source
    source.seek(0)


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def _ffmpeg_words(error: Exception) -> str:
    return getattr(error, "strerror", None) or _first_line(error)
