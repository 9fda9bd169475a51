"""What geometry a feature measured on a record's image takes from it (boxes, keypoints).

A feature whose values are points of the record's image (pixel boxes, keypoints) names that image
feature with `image:`, or belongs to the spec's only image feature without naming it. From it
it takes: the column the image is read from (its upright size, from the file's header, divides
pixel coordinates), the fixed shape it is stored at with `resize: pad` or `crop` (the points move
as the picture does), and, for images of their own sizes, the record key of their shapes (a
batch pads them, and the fractions follow: read/tfdata.py's `padded_boxes`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Mapping

from .. import fs
from ..media.images import BadImage, pillow
from ..spec.fields import At


@dataclass(frozen=True)
class ImageLink:
    """A feature's image: its name, source column, fixed (height, width, resize) if padded or
    cropped, and the record key of its own shapes if it keeps each image's size."""

    name: str
    source: str
    fit: tuple[int, int, str] | None
    shapes: str | None


def image_link(features: Mapping[str, Any], named: str | None, at: At, *, needed: bool, what: str
               ) -> ImageLink | None:
    """The image feature a feature's values are measured on: `named` (its `image:`), or the spec's
    only image feature; None where there is none to take and none is `needed` (fractions of an
    image stretched or kept as it is). Raises SpecError at `at` otherwise."""
    images = [name for name, other in features.items() if other.type_name == "image"]
    name = named if named is not None else images[0] if len(images) == 1 else None
    if name is None:
        if needed:
            raise (at / "units").error(f"{what} need `image:`, the image feature whose size they are in "
                                       f"({', '.join(images) or 'the spec has none'})")
        fitted = [image for image in images if getattr(features[image], "size", None) is not None
                  and getattr(features[image], "resize", "stretch") != "stretch"]
        if fitted:
            raise at.error(f"image `{fitted[0]}` is resized with `resize: {features[fitted[0]].resize}`, which "
                           f"moves what it shows: name it with `image: {fitted[0]}` so the {what} follow")
        return None
    image = features.get(name)
    if image is None or image.type_name != "image":
        raise (at / "image").error(f"expected the name of an image feature of this spec "
                                   f"({', '.join(images) or 'none'}), received {name!r}")
    size = getattr(image, "size", None)
    fit = (size[0], size[1], image.resize) if size is not None and image.resize != "stretch" else None
    shapes = image.shape_key if size is None else None  # images of their own sizes, padded in a batch
    return ImageLink(name, image.source_name, fit, shapes)


def image_size(image: Any, base_dir: str | None, known: Mapping[str, tuple[int, int]] | None = None
               ) -> tuple[tuple[int, int], str]:
    """A record's image's (height, width) as shown (after its EXIF orientation), from its header
    (or from `known`, where its source measured it so already: `Batch.image_sizes`), and how to
    name it; raises BadImage."""
    given = image
    if base_dir is not None and isinstance(image, str):
        image = fs.resolve(image, base_dir)
    shown = os.fspath(image) if isinstance(image, (str, os.PathLike)) else type(image).__name__
    if known is not None and isinstance(given, str) and given in known:
        return known[given], shown
    try:
        return pillow.oriented_size(image), shown
    except BadImage as error:
        raise BadImage(f"image {shown}: {error}") from None


def record_image_size(feature: Any, image: Any, origin: Any, row: int, context: Any, what: str
                      ) -> tuple[tuple[int, int], str]:
    """`image_size` of a record's image for `feature` (boxes, keypoints: `what`) as `context` (an
    EncodeContext) places and knows it, whose problems are the feature's errors naming the row."""
    if image is None:
        raise feature.fail(origin, row, f"no image in `{feature.image_source}` to measure the {what} by "
                                        f"(`image: {feature.image}`)")
    try:
        return image_size(image, context.base_dir, context.image_sizes)
    except BadImage as error:
        raise feature.fail(origin, row, str(error)) from None
