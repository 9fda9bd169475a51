"""Writes data/clips/: short MP4 clips of camera moves over scikit-image's real photographs, in
four classes, `pan_left`, `pan_right`, `zoom_in` and `zoom_out`, with clips.csv (path, motion,
photo, split: the clips of two photographs, TEST_PHOTOS, are the test split, never seen in
training). Run once: `python data/make_clips.py [FOLDER]` (seeded: the same files every time).

Each clip is a window moved over one photograph, each frame the window's pixels resized to 64x64
(Pillow's bilinear filter over the window's exact, fractional box: a smooth move, no jumps of a
whole pixel): a pan moves a square window sideways across the photograph (`pan_right`: the view
moves right, so the picture slides left), a zoom shrinks it (`zoom_in`) or grows it (`zoom_out`)
around one point. Window size, start, speed, zoom factor, frame rate (10, 12 or 15 frames a
second) and length (1.0-1.6 s) are drawn from `random.Random(30)`. Written with PyAV as MPEG-4
Part 2 (`mpeg4`, which PyAV's own FFmpeg encodes), yuv420p, one encoder thread (the same bytes
on every machine with the same PyAV).
"""
from __future__ import annotations

import csv
import random
import sys
from pathlib import Path

import av
import numpy as np
from PIL import Image
from skimage import data

OUT = Path(__file__).resolve().parent / "clips"
SIZE = 64  # frames are SIZE x SIZE pixels
MOTIONS = ["pan_left", "pan_right", "zoom_in", "zoom_out"]
CLIPS_PER_PHOTO = 2  # of each motion
RATES = [10, 12, 15]  # frames per second
SECONDS = (1.0, 1.6)
TEST_PHOTOS = {"chelsea", "coffee"}  # a cat and a cup: the test split's photographs


def photographs() -> dict[str, Image.Image]:
    """scikit-image's real photographs (the ones it ships, no download), as RGB.
    Each has no known copyright restrictions, as its loader's docstring says."""
    return {"astronaut": data.astronaut(), "coffee": data.coffee(), "chelsea": data.chelsea(),
            "rocket": data.rocket(), "coins": data.coins(), "camera": data.camera(),
            "immunohistochemistry": data.immunohistochemistry(), "hubble_deep_field": data.hubble_deep_field()}


def boxes(motion: str, width: int, height: int, count: int, draw: random.Random) -> list[tuple[float, ...]]:
    """The window (left, top, right, bottom) over the photograph in each of `count` frames."""
    short = min(width, height)
    if motion.startswith("pan"):
        side = draw.uniform(0.4, 0.6) * short
        travel = draw.uniform(0.5, 0.9) * (width - side)  # of what the window can cross
        start = draw.uniform(0, width - side - travel)
        top = draw.uniform(0, height - side)
        lefts = [start + travel * i / (count - 1) for i in range(count)]
        if motion == "pan_left":
            lefts.reverse()
        return [(left, top, left + side, top + side) for left in lefts]
    large = draw.uniform(0.6, 0.9) * short
    small = large * draw.uniform(0.4, 0.6)
    centre_x = draw.uniform(large / 2, width - large / 2)
    centre_y = draw.uniform(large / 2, height - large / 2)
    # the side changes by one factor a frame: a steady zoom (a linear change would slow down)
    sides = [large * (small / large) ** (i / (count - 1)) for i in range(count)]
    if motion == "zoom_out":
        sides.reverse()
    return [(centre_x - side / 2, centre_y - side / 2, centre_x + side / 2, centre_y + side / 2) for side in sides]


def write_clip(path: Path, frames: list[np.ndarray], rate: int) -> None:
    with av.open(str(path), "w") as out:
        stream = out.add_stream("mpeg4", rate=rate)
        stream.width = stream.height = SIZE
        stream.pix_fmt = "yuv420p"
        stream.bit_rate = 150_000
        stream.codec_context.thread_count = 1
        for pixels in frames:
            out.mux(stream.encode(av.VideoFrame.from_ndarray(pixels, format="rgb24")))
        out.mux(stream.encode())


def main(out: Path = OUT) -> int:
    draw = random.Random(30)
    (out / "clips").mkdir(parents=True, exist_ok=True)
    rows = []
    for photo, pixels in photographs().items():
        image = Image.fromarray(pixels).convert("RGB")
        for motion in MOTIONS:
            for number in range(CLIPS_PER_PHOTO):
                rate = draw.choice(RATES)
                count = round(draw.uniform(*SECONDS) * rate)
                frames = [np.asarray(image.resize((SIZE, SIZE), Image.BILINEAR, box=box))
                          for box in boxes(motion, image.width, image.height, count, draw)]
                name = f"clips/{motion}_{photo}_{number}.mp4"
                write_clip(out / name, frames, rate)
                rows.append({"path": name, "motion": motion, "photo": photo,
                             "split": "test" if photo in TEST_PHOTOS else "train"})
    with open(out / "clips.csv", "w", newline="") as file:
        writer = csv.DictWriter(file, ["path", "motion", "photo", "split"])
        writer.writeheader()
        writer.writerows(rows)
    print(f"{len(rows)} clips in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*map(Path, sys.argv[1:2])))
