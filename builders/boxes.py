"""A feature type of its own: bounding boxes, `type: boxes.py:Boxes` in a spec beside this file.

Each record holds any number of boxes, each `[ymin, xmin, ymax, xmax]` as fractions of the
image's height and width, the layout `tf.image.draw_bounding_boxes` and the TensorFlow Object
Detection API take. They are stored as a float32 list (4 values a box) and read back as a ragged
`[batch, None, 4]` tensor: all of that is `tb.TensorFeature`'s. What this type adds is its own
check, so a box outside the image or upside down stops the build at its line, not the training:

    boxes: {type: boxes.py:Boxes, min_size: 0.01}

An installed package offers it as `type: boxes` through the entry-point group
`tfrecord_builder.features` (`boxes = mypackage.boxes:Boxes`).

This is an example of a feature type of one's own. For real boxes use the built-in `type: bbox`
(docs/detection.md), which makes these checks and more: any box format, pixel boxes by their
image's size, `clip`, and the Object Detection API's layout.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import numpy as np

import tfrecord_builder as tb


@dataclasses.dataclass(frozen=True, kw_only=True)
class Boxes(tb.TensorFeature):
    """Bounding boxes: float32 [None, 4], each box inside the image and at least `min_size`."""

    dtype: str = tb.spec_field("always float32 (fractions of the image's height and width)", "float32")
    shape: list[int | None] = tb.spec_field("always [null, 4]: any number of boxes of 4 values", [None, 4])
    min_size: float = tb.spec_field("the smallest height and width a box may have, as a fraction", 0.0)

    def check(self, at: Any) -> None:
        if self.dtype != "float32" or self.shape != [None, 4]:
            raise at.error("boxes are float32 with shape [null, 4]; leave `dtype` and `shape` out")
        if not 0 <= self.min_size < 1:
            raise (at / "min_size").error(f"expected a fraction in [0, 1), received {self.min_size}")
        super().check(at)

    def encode_values(self, values: Sequence[Any], origin: Any, language: Any = "python") -> Any:
        encoded = super().encode_values(values, origin, language)
        boxes = np.asarray(encoded.values, dtype=np.float32).reshape(-1, 4)
        heights, widths = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
        wrong = ~((boxes >= 0) & (boxes <= 1)).all(axis=1) | (heights < self.min_size) | (widths < self.min_size)
        if wrong.any():
            box = int(np.flatnonzero(wrong)[0])
            ends = np.cumsum(np.asarray(encoded.counts) // 4)
            row = int(np.searchsorted(ends, box, side="right"))
            first = int(ends[row - 1]) if row else 0
            raise self.fail(origin, row, f"box {box - first} {boxes[box].tolist()}: expected [ymin, xmin, ymax, xmax] "
                                         f"in [0, 1] with ymin + {self.min_size:g} <= ymax and xmin + "
                                         f"{self.min_size:g} <= xmax")
        return encoded
