"""Video clips written with PyAV from frames (RGB arrays), to a file or as the bytes of an MP4."""
from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import av
import numpy as np


def _encode(target: Any, frames: list[np.ndarray], rate: int, codec: str, options: dict | None,
            container: str | None = None) -> None:
    with av.open(target, "w", format=container, options=options or {}) as out:
        stream = out.add_stream(codec, rate=rate)
        stream.height, stream.width = frames[0].shape[:2]
        stream.pix_fmt = "yuv420p"
        for pixels in frames:
            out.mux(stream.encode(av.VideoFrame.from_ndarray(pixels, format="rgb24")))
        out.mux(stream.encode())


def write_clip(path: Path, frames: list[np.ndarray], rate: int = 10, codec: str = "mpeg4",
               options: dict | None = None) -> Path:
    """`frames` as a clip at `path` (the container its suffix names), `rate` frames a second."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _encode(str(path), frames, rate, codec, options)
    return path


def mp4_bytes(frames: list[np.ndarray], rate: int = 10) -> bytes:
    """`frames` as the bytes of an MP4 clip (MPEG-4 Part 2), `rate` frames a second."""
    buffer = io.BytesIO()
    _encode(buffer, frames, rate, "mpeg4", None, "mp4")
    return buffer.getvalue()
