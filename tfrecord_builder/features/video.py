"""`video`: a clip (a video file, or a folder of frame images) stored as one encoded image per step.

A per-step feature of a sequence_example: each record's value is one path (relative to the
table's folder), so a plain table of clips makes one SequenceExample per row.

Writing: a `.mp4`, `.webm`, `.avi`, `.mov` (any container FFmpeg reads) is decoded with PyAV
frame by frame, in order; `fps:` keeps the first frame at or after each 1/fps seconds from the
first frame's time (never a frame twice: a source slower than `fps` keeps every frame); after
`max_frames` kept frames decoding stops (a clip cut so is counted, and the build says how many
were); each kept frame goes through the image feature's pipeline (channels, `shape` with
`resize:`, `encoding:` JPEG by default). A folder holds a clip's frames as image files, ordered
by the numbers in their names (`frame_2` before `frame_10`), each stored as an image feature
stores a file (passed through when it already is what the spec asks for); `fps` is an error for
a folder (it has no times), `max_frames` applies.

A file FFmpeg can't open is an error; so is one that ends before the number of frames its
container lists (FFmpeg ends a cut MP4 whose index is up front in silence), and a Matroska or
WebM file (which counts no frames) whose frames end over half a frame before the duration it
lists for its video.

Stored: per step, KEY (the encoded frame) and, for frames kept at their own size, KEY/shape; in
the record's context, KEY/duration (float seconds the video stream lasts, not the file, whose
sound may run longer; 0 for a folder), KEY/frame_rate (the source's frames per second; 0 for a folder) and
KEY/original_size (int64 [height, width] of the source's frames, before any resize). Read back
as [batch, steps, height, width, channels], as per-step images are (features/image.py).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Iterator, Literal, Mapping, Sequence

import numpy as np
from PIL import Image

from .. import fs
from ..images import BadImage
from ..spec.fields import At, meta
from . import notices
from .base import Feature, Origin, ParseSpec, register
from .image import ImageFeature, mixed_sizes
from .shown import Language
from .tensor import StepOrigins
from .values import Values

VIDEO_SUFFIXES = (".mp4", ".webm", ".avi", ".mov", ".mkv", ".m4v")
FRAME_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".tif", ".tiff", ".webp")


@dataclass(frozen=True, kw_only=True)
class VideoFeature(ImageFeature):
    """A clip: `{type: video, fps: 5, max_frames: 32, shape: [112, 112, 3]}` under `sequence:`."""

    batch_rows = 2  # type: ignore[assignment]  # clips to a batch: each holds up to max_frames frames

    encoding: Literal["jpeg", "png", "raw"] = meta("how each frame is stored: jpeg, png or raw uint8", "jpeg")
    fps: float | None = meta("frames per second kept (the first frame at or after each 1/fps seconds); "
                             "default: every frame", None)
    max_frames: int | None = meta("keep at most this many frames of a clip (decoding stops there; counted)", None)
    clip_features: bool = meta("also yield each clip's duration and frame rate (float32) and original size (int64 "
                               "[height, width]) as <name>_duration, <name>_frame_rate, <name>_original_size", False)

    def check(self, at: At) -> None:
        super().check(at)
        if self.fps is not None and not self.fps > 0:
            raise (at / "fps").error(f"expected a positive number of frames per second, received {self.fps}")
        if self.max_frames is not None and self.max_frames < 1:
            raise (at / "max_frames").error(f"expected a positive number of frames, received {self.max_frames}")

    def linked(self, features: Mapping[str, Feature], at: At) -> Feature:
        if not self.sequence:  # (convert_features has set `sequence` by now)
            raise at.error("a video is one frame per step: declare it under `sequence:` of a "
                           "format: sequence_example spec")
        return self  # (what clip_features yields is checked against every feature's name by the spec)

    @property
    def companion_names(self) -> list[str]:
        return list(self.clip_names) if self.clip_features else []

    @property
    def clip_names(self) -> dict[str, str]:
        """What `clip_features: true` yields, by the context key it reads."""
        return {f"{self.name}_{what}": f"{self.record_key}/{what}" for what in ("duration", "frame_rate", "original_size")}

    @property
    def context_keys(self) -> dict[str, ParseSpec]:
        """The clip's own figures, stored in the record's context."""
        key = self.record_key
        return {f"{key}/duration": ("fixed", "float32", []), f"{key}/frame_rate": ("fixed", "float32", []),
                f"{key}/original_size": ("fixed", "int64", [2])}

    # ---- writing side ----------------------------------------------------------------------------
    def encode(self, values: Sequence[Any], origin: Origin, base_dir: str | None = None,
               language: Language = "python") -> dict[str, Values]:
        stored: list[bytes] = []
        shapes: list[tuple[int, int, int]] = []
        lengths = np.zeros(len(values), dtype=np.int64)
        durations: list[float] = []
        rates: list[float] = []
        sizes: list[int] = []
        for row, value in enumerate(values):
            if value is None:
                raise self.fail(origin, row, "missing video")
            if not isinstance(value, (str, os.PathLike)):
                raise self.fail(origin, row, f"expected a path to a video file or a folder of frames, received "
                                             f"{type(value).__name__}")
            path = fs.resolve(os.fspath(value), base_dir) if base_dir is not None else os.fspath(value)
            clip = Clip(path, self.fps, self.max_frames)
            first: tuple[int, int, int] | None = None
            try:
                for step, frame in enumerate(clip.frames()):
                    try:
                        data, shape = self.prepare(frame)
                    except BadImage as error:
                        raise self.fail(StepOrigins(origin, [row], [step]), 0, f"{_named(frame, path)}: {error}") from None
                    if first is None:
                        first = shape
                    elif shape != first:
                        raise self.fail(StepOrigins(origin, [row], [step]), 0, f"{path}: {mixed_sizes(shape, first)}")
                    stored.append(data)
                    shapes.append(shape)
                    lengths[row] += 1
            except BadVideo as error:
                raise self.fail(origin, row, f"{path}: {error}") from None
            if lengths[row] == 0:
                raise self.fail(origin, row, f"{path}: no frames")
            if clip.cut:
                notices.note(f"feature `{self.name}`: {{count}} clip{{s}} cut at max_frames ({self.max_frames} "
                             "frames kept)")
            durations.append(clip.duration)
            rates.append(clip.frame_rate)
            sizes.extend(clip.original_size)
        steps = np.ones(len(stored), dtype=np.int64)
        encoded = {self.record_key: Values("bytes", stored, steps, lengths)}
        if self.stores_shape:
            encoded[self.shape_key] = Values("int64", np.array(shapes, np.int64).reshape(-1), steps * 3, lengths)
        ones = np.ones(len(values), dtype=np.int64)
        key = self.record_key
        encoded[f"{key}/duration"] = Values("float", np.array(durations, np.float32), ones)
        encoded[f"{key}/frame_rate"] = Values("float", np.array(rates, np.float32), ones)
        encoded[f"{key}/original_size"] = Values("int64", np.array(sizes, np.int64), ones * 2)
        return encoded

    def stored_kinds(self) -> None:  # type: ignore[override]
        """Checked record by record (its context keys beside its feature lists)."""
        return None

    # ---- reading side ----------------------------------------------------------------------------
    def parsing(self) -> dict[str, ParseSpec]:
        # the clip's figures are parsed only where they are yielded: three context keys more
        # cost a batch's parse about 5% (bench/video.py)
        return {**super().parsing(), **(self.context_keys if self.clip_features else {})}

    def reading(self, options: Any) -> dict[str, Any]:
        """Its description, with `companions` (`clip_features: true`): the clip's context figures."""
        described = super().reading(options)
        if self.clip_features:
            keys = self.context_keys
            described["companions"] = {name: {"parse": {key: keys[key]}, "decode": []}
                                       for name, key in self.clip_names.items()}
        return described

    def describe(self) -> str:
        return "video " + super().describe()[len("image "):]


register("video")(VideoFeature)


class BadVideo(ValueError):
    """A clip that can't be read; the message says why."""


class Clip:
    """One clip's frames, decoded one at a time (a video file with PyAV, or a folder's images),
    and what is known of it once they are: duration, frame rate, original size, whether
    max_frames cut it."""

    def __init__(self, path: str, fps: float | None, max_frames: int | None):
        self.path, self.fps, self.max_frames = path, fps, max_frames
        self.duration = 0.0
        self.frame_rate = 0.0
        self.original_size = (0, 0)
        self.cut = False

    def frames(self) -> Iterator[Any]:
        if os.path.isdir(self.path):
            if self.fps is not None:  # refused, not ignored: its frames would all be kept
                raise BadVideo("a folder of frames has no times: `fps` applies to video files only")
            yield from self._folder()
        elif not os.path.exists(self.path):
            raise BadVideo("file not found")
        else:
            yield from self._video()

    def _folder(self) -> Iterator[str]:
        names = sorted((name for name in os.listdir(self.path) if name.lower().endswith(FRAME_SUFFIXES)),
                       key=natural_key)
        if self.max_frames is not None and len(names) > self.max_frames:
            names, self.cut = names[:self.max_frames], True
        for number, name in enumerate(names):
            path = os.path.join(self.path, name)
            if number == 0:
                try:
                    with Image.open(path) as image:
                        self.original_size = (image.height, image.width)
                except OSError:
                    pass  # the image feature says what is wrong with it
            yield path

    def _video(self) -> Iterator[Image.Image]:
        import av  # (PyAV: only builds that read videos need it)
        from av.video.reformatter import VideoReformatter

        try:
            container = av.open(self.path)
        except (av.FFmpegError, OSError) as error:
            raise BadVideo(f"not a video FFmpeg can read ({_why(error)})") from None
        with container:
            if not container.streams.video:  # (an MP4 cut inside its index may list no stream, or a data one)
                raise BadVideo("no video stream" if container.streams.audio else
                               "no video stream, nor sound (a cut or corrupt file?)")
            stream = container.streams.video[0]
            if stream.codec_context is None:  # (an MP4 cut inside its index keeps the stream, not its codec)
                raise BadVideo("no decoder for its video stream (a codec FFmpeg doesn't know, or a cut or "
                               "corrupt file)")
            # no FFmpeg frame threads (thread_type "AUTO"): they decode ahead of a max_frames cut and
            # start per clip, which cost short clips up to half their frames/s on 2 cores (bench/video.py);
            # a build runs a worker a core instead
            rate = stream.average_rate or stream.guessed_rate
            self.frame_rate = float(rate) if rate else 0.0
            self.duration = video_seconds(container, stream)
            self.original_size = (stream.codec_context.height, stream.codec_context.width)
            listed = stream.frames  # the container's own count (0 where it keeps none, as WebM)
            kept = decoded = 0
            converter = VideoReformatter()
            start: float | None = None
            end = 0.0  # where the frames decoded so far end, in seconds
            try:
                for index, frame in enumerate(container.decode(stream)):
                    decoded += 1
                    time = frame.time if frame.time is not None else index / (self.frame_rate or 1.0)
                    start = time if start is None else start
                    length = float(frame.duration * frame.time_base) if frame.duration and frame.time_base else 0.0
                    end = max(end, time + (length or 1 / (self.frame_rate or 1.0)))
                    # the first frame at or after each 1/fps seconds (a microsecond's slack for rounding)
                    if self.fps is not None and time - start < kept / self.fps - 1e-6:
                        continue
                    if self.max_frames is not None and kept == self.max_frames:
                        self.cut = True  # one more frame would have been kept: stop decoding here
                        return
                    kept += 1
                    # the same pixels as frame.to_image(), through one converter for the clip: a
                    # converter made per frame (to_image, to_ndarray) took 3-5x as long (bench/video.py)
                    yield Image.fromarray(converter.reformat(frame, format="rgb24").to_ndarray())
            except av.FFmpegError as error:
                raise BadVideo(f"corrupt or truncated video after {decoded} frames ({_why(error)})") from None
            if listed and decoded < listed:  # FFmpeg ends a cut file's stream in silence
                raise BadVideo(f"truncated: {decoded} frames decoded of the {listed} the file lists")
            # a file that counts no frames (Matroska, WebM) may still say how long its video is: frames
            # ending over half a frame short of that were cut off (FFmpeg ends the stream in silence)
            seconds = listed_seconds(container, stream)
            if seconds is not None and decoded == 0:
                raise BadVideo(f"truncated: no frames decoded of the {seconds:.2f} s the file lists")
            if seconds is not None and end < seconds - 0.5 / (self.frame_rate or 1.0):
                raise BadVideo(f"truncated: {decoded} frames decoded, ending at {end:.2f} s of the {seconds:.2f} s "
                               "the file lists")
            if decoded == 0:  # (a MOV or MP4 cut inside its index may list no frames, and hold none)
                raise BadVideo("no frames decoded (an empty, cut or corrupt file)")


def video_seconds(container: Any, stream: Any) -> float:
    """How long a file's video stream lasts, as the file says: the stream's own duration (MP4,
    MOV, AVI), a Matroska or WebM track's DURATION tag, else the container's (which is its longest
    stream's: a sound track that runs past the pictures lengthens it), else 0."""
    import av

    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    seconds = listed_seconds(container, stream)
    if seconds is not None:
        return seconds
    return container.duration / av.time_base if container.duration is not None else 0.0


def listed_seconds(container: Any, stream: Any) -> float | None:
    """How long a Matroska or WebM file says its video stream lasts: the track's DURATION tag (which
    FFmpeg's and mkvmerge's muxers write), else the segment's duration when the video is the file's
    only stream. None for other containers (MP4, MOV and AVI count their frames instead) and where
    the file says nothing: never a duration FFmpeg estimated (from the bit rate, say)."""
    import av

    if "matroska" not in container.format.name:
        return None
    tag = re.fullmatch(r"(\d+):(\d+):(\d+(?:\.\d*)?)", stream.metadata.get("DURATION", "").strip())
    if tag:
        return int(tag[1]) * 3600 + int(tag[2]) * 60 + float(tag[3])
    if len(container.streams) == 1 and container.duration is not None:
        return container.duration / av.time_base
    return None


def natural_key(name: str) -> list[Any]:
    """Orders names by the numbers in them as numbers: frame_2 before frame_10."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name) if part]


def _why(error: Exception) -> str:
    text = getattr(error, "strerror", None) or str(error)
    return re.sub(r"\s*:\s*'[^']*'$", "", text)  # FFmpeg's words, without the path the message names


def _named(frame: Any, path: str) -> str:
    return os.fspath(frame) if isinstance(frame, (str, os.PathLike)) else path
