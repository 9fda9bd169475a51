"""What a report draws of images: thumbnails as RGB (a mask's classes in their colours, 16-bit
values scaled to their range, grey as RGB) and a split's grid of them, per class or in rows."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...media.images import deep
from .sample import MAX_IMAGE_CLASSES, STRIP_FRAMES, THUMBNAILS_PER_CLASS, Annotation, SampleReader
from .style import CLASS_COLOURS, rgb


@dataclass
class ImageGrid:
    """Thumbnails of one split: rows of (label, uint8 HxWxC images)."""

    split: str
    rows: list[tuple[str, list[np.ndarray]]]
    note: str  # how the images were chosen
    # per row, per image: the boxes and masks drawn over it (None: nothing); empty when none has any
    annotations: list[list[Annotation | None]] = field(default_factory=list)
    shown: str = ""  # how the values are shown when not as stored (16-bit images), a sentence


MASK_VALUES = 32  # a one-channel image whose values are all below: a mask's classes, drawn in their colours


def is_mask(pixels: np.ndarray) -> bool:
    return (pixels.ndim == 2 or pixels.shape[2] == 1) and pixels.size > 0 and int(pixels.max()) < MASK_VALUES


def shown_image(pixels: np.ndarray) -> np.ndarray:
    """A decoded value as a thumbnail's RGB: a mask in class colours, 16 bits scaled to its range, grey as RGB."""
    if is_mask(pixels):
        return mask_colours(pixels.reshape(pixels.shape[0], pixels.shape[1]))
    if pixels.dtype == np.uint16:
        pixels = shown_16bit(pixels)
    pixels = np.asarray(pixels, np.uint8)
    if pixels.ndim == 2:
        pixels = pixels[:, :, None]
    if pixels.shape[2] in (1, 2):  # grey (with alpha): grey
        pixels = np.repeat(pixels[:, :, :1], 3, axis=2)
    return pixels[:, :, :3]


def image_grid(split: str, thumbnails: dict[Any, list[np.ndarray]], annotations: dict[Any, list[Annotation | None]],
                reader: SampleReader, mask: bool = False, strips: bool = False) -> ImageGrid:
    """A split's thumbnails in rows (per class of the group, or 8 a row), with what is drawn over
    them; a mask's class indices shown in the class colours. `strips`: each thumbnail is a clip's
    frames (sample.strip), drawn as a row of its own."""
    if strips:
        names = reader.group_names or []
        rows = [("" if key is None else names[key] if key < len(names) else str(key), list(frames))
                for key in sorted(thumbnails, key=lambda key: -1 if key is None else key)
                for frames in thumbnails[key]]
        count = sum(len(clips) for clips in thumbnails.values())
        per = f" (the first of each class of {reader.group})" if reader.group is not None else ""
        return ImageGrid(split, rows, f"{count} clips{per}, one a row: up to {STRIP_FRAMES} frames each, evenly "
                                      "spaced from its first to its last")
    if mask:
        thumbnails = {key: [mask_colours(image) for image in images] for key, images in thumbnails.items()}
    deep_images = any(np.asarray(image).dtype == np.uint16 for images in thumbnails.values() for image in images)
    if deep_images:
        thumbnails = {key: [shown_16bit(image) for image in images] for key, images in thumbnails.items()}
    if reader.group is None:
        images = thumbnails.get(None, [])
        drawn = annotations.get(None, [None] * len(images))
        rows = [("", images[start:start + THUMBNAILS_PER_CLASS])
                for start in range(0, len(images), THUMBNAILS_PER_CLASS)]
        over = [drawn[start:start + THUMBNAILS_PER_CLASS] for start in range(0, len(images), THUMBNAILS_PER_CLASS)]
        grid = ImageGrid(split, rows, f"the first {len(images)} images")
    else:
        names = reader.group_names or []
        rows = [(names[index] if index < len(names) else str(index), thumbnails[index])
                for index in sorted(thumbnails)]
        over = [annotations.get(index, [None] * len(thumbnails[index])) for index in sorted(thumbnails)]
        more = len(names) > MAX_IMAGE_CLASSES
        note = (f"the first {THUMBNAILS_PER_CLASS} per class of {reader.group}"
                + (f", the first {MAX_IMAGE_CLASSES} of {len(names)} classes" if more else ""))
        grid = ImageGrid(split, rows, note)
    if deep_images:  # said on the page: these are not the stored values
        grid.shown = "16-bit values: each image is shown from its own lowest (black) to highest value (white)."
    if any(item is not None for row in over for item in row):
        grid.annotations = over
    return grid


def shown_16bit(image: np.ndarray) -> np.ndarray:
    """A uint16 image as uint8 to look at: its own lowest to highest value onto 0-255 (a 12-bit
    scan's values / 257 would be near black), by the rule `scale_16bit: min_max` stores with."""
    pixels = np.asarray(image)
    return deep.eight_bits(pixels, "min_max", int(pixels.min()), int(pixels.max()))


def mask_colours(mask: np.ndarray) -> np.ndarray:
    """A mask's class indices as RGB: class 0 black, the others in their class colours."""
    palette = np.array([(0, 0, 0)] + [rgb(CLASS_COLOURS[index % len(CLASS_COLOURS)]) for index in range(1, 256)],
                       np.uint8)
    return palette[np.asarray(mask, np.uint8).reshape(mask.shape[0], mask.shape[1])]
