"""`video`: a clip (a video file, or a folder of frame images) stored as one encoded image per step.

A per-step feature of a sequence_example: each record's value is one path (relative to the
table's folder), so a plain table of clips makes one SequenceExample per row.

Writing (media/video.py): a `.mp4`, `.webm`, `.avi`, `.mov` (any container FFmpeg reads; a local
path or a URL) is decoded with PyAV frame by frame, in order; `fps:` keeps the first frame at or
after each 1/fps seconds from the first frame's time (never a frame twice: a source slower than
`fps` keeps every frame); after `max_frames` kept frames decoding stops (a clip cut so is counted,
and the build says how many were); each kept frame goes through the image feature's pipeline
(channels, `shape` with `resize:`, `encoding:` JPEG by default). A folder holds a clip's frames as
image files, ordered by the numbers in their names (`frame_2` before `frame_10`), each stored as an
image feature stores a file (passed through when it already is what the spec asks for); `fps` is an
error for a folder (it has no times), `max_frames` applies.

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
from dataclasses import dataclass
from typing import Any, Literal, Mapping, Sequence

import numpy as np

from .. import fs
from ..media.images import BadImage
from ..media.video import BadVideo, Clip
from ..spec.fields import At, meta
from .base import EncodeContext, Feature, ParseSpec, register
from .image import ImageFeature, mixed_sizes
from .tensor import StepOrigins
from .values import Values


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
    def encode(self, values: Sequence[Any], context: EncodeContext) -> dict[str, Values]:
        origin, base_dir = context.origin, context.base_dir
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
                        data, shape = self.prepare(frame, context.notices)
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
                context.notices.note(f"feature `{self.name}`: {{count}} clip{{s}} cut at max_frames ({self.max_frames} "
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


def _named(frame: Any, path: str) -> str:
    return os.fspath(frame) if isinstance(frame, (str, os.PathLike)) else path
