"""Clips decoded for the video feature, one frame at a time: a video file (any container FFmpeg
reads: MP4, WebM, AVI, MOV, ...) with PyAV, or a folder of frame images in the order of the
numbers in their names. A file is opened as every media file is (`source.py`: a local path, or an
object in a store through `fs`), a folder listed through `fs`, so a clip in a bucket is read as a
local one is. A cut file is refused where FFmpeg would end it in silence. What goes wrong with
one clip is a BadVideo, in words for a user.
"""
from __future__ import annotations

import re
from typing import Any, BinaryIO, Iterator

from PIL import Image

from .. import fs
from . import source
from .images import BadImage
from .images.pillow import stored_size

VIDEO_SUFFIXES = (".mp4", ".webm", ".avi", ".mov", ".mkv", ".m4v")
FRAME_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".tif", ".tiff", ".webp")


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
        if fs.isdir(self.path):
            if self.fps is not None:  # refused, not ignored: its frames would all be kept
                raise BadVideo("a folder of frames has no times: `fps` applies to video files only")
            yield from self._folder()
        else:
            with source.for_decoder(self.path, "a video file", BadVideo) as file:
                yield from self._video(file)

    def _folder(self) -> Iterator[str]:
        names = sorted((name for name in fs.listdir(self.path) if name.lower().endswith(FRAME_SUFFIXES)),
                       key=natural_key)
        if self.max_frames is not None and len(names) > self.max_frames:
            names, self.cut = names[:self.max_frames], True
        for number, name in enumerate(names):
            path = fs.join(self.path, name)
            if number == 0:
                try:
                    self.original_size = stored_size(path)[:2]  # its header's: the frame as stored
                except BadImage:
                    pass  # the image feature says what is wrong with it
            yield path

    def _video(self, file: str | BinaryIO) -> Iterator[Image.Image]:
        import av  # (PyAV: only builds that read videos need it)
        from av.video.reformatter import VideoReformatter

        try:
            container = av.open(file)
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
