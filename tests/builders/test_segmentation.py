"""`builder: segmentation`: masks beside their images by name (Pascal VOC's SegmentationClass/ and
JPEGImages/), on scikit-image's real photographs: every mask stored as the indices its palette
PNG holds, beside its own image; an image set reads what it lists, in its order; what is missing
is one line naming it.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import tfrecord_builder as tb
from tfrecord_builder.errors import DataError

from conftest import write_spec

skimage_data = pytest.importorskip("skimage.data")

PHOTOS = {"b_coffee": skimage_data.coffee, "a_chelsea": skimage_data.chelsea, "c_rocket": skimage_data.rocket}
SPEC = {"name": "seg", "source": {"builder": "segmentation", "path": "VOC/SegmentationClass"},
        "splits": {"train": {"options": {"image_set": "VOC/ImageSets/Segmentation/train.txt"}}},
        "output": {"shuffle": False},
        "features": {"image": {"type": "image", "encoding": "jpeg"}, "mask": {"type": "mask", "image": "image"},
                     "image_id": {"dtype": "string"}, "filename": {"dtype": "string"}}}


def write(root: Path) -> dict[str, np.ndarray]:
    """Each photo in JPEGImages/, its mask (the brighter half: class 1 to 3) in SegmentationClass/."""
    masks = {}
    for folder in ("JPEGImages", "SegmentationClass", "ImageSets/Segmentation"):
        (root / folder).mkdir(parents=True)
    for index, (stem, make) in enumerate(PHOTOS.items()):
        pixels = make()
        Image.fromarray(pixels).save(root / "JPEGImages" / f"{stem}.jpg", quality=90)
        grey = pixels.mean(axis=2) if pixels.ndim == 3 else pixels
        masks[stem] = np.where(grey > np.median(grey), index + 1, 0).astype(np.uint8)
        image = Image.fromarray(masks[stem], "P")
        image.putpalette([0, 0, 0, 128, 0, 0, 0, 128, 0, 128, 128, 0])
        image.save(root / "SegmentationClass" / f"{stem}.png")
    (root / "ImageSets" / "Segmentation" / "train.txt").write_text("c_rocket\nb_coffee\n")
    return masks


def test_an_image_set_reads_its_masks_in_its_order_each_beside_its_image(tmp_path):
    masks = write(tmp_path / "VOC")
    info = tb.build(write_spec(tmp_path, SPEC), workers=1)
    records = list(tb.read(info.path, "train"))
    assert [record["image_id"].decode() for record in records] == ["c_rocket", "b_coffee"]  # the list's order
    for record in records:
        stem = record["image_id"].decode()
        assert record["filename"].decode() == f"{stem}.jpg"
        np.testing.assert_array_equal(record["mask"][:, :, 0], masks[stem])
        assert record["image"].shape[:2] == masks[stem].shape


@pytest.mark.parametrize("case", ["listed without a mask", "listed twice", "a mask without its image"])
def test_what_is_missing_is_one_line(tmp_path, case):
    write(tmp_path / "VOC")
    listing = tmp_path / "VOC" / "ImageSets" / "Segmentation" / "train.txt"
    if case == "listed without a mask":
        listing.write_text("c_rocket\nz_astronaut\n")
        expected = (f"{listing}, line 2: image 'z_astronaut' has no mask in "
                    f"{tmp_path / 'VOC' / 'SegmentationClass'}")
    elif case == "listed twice":
        listing.write_text("c_rocket 1\nc_rocket -1\n")
        expected = f"{listing}, line 2: image 'c_rocket' is listed twice"
    else:
        (tmp_path / "VOC" / "JPEGImages" / "b_coffee.jpg").unlink()
        expected = (f"{tmp_path / 'VOC' / 'SegmentationClass' / 'b_coffee.png'}: no image b_coffee.* in "
                    f"{tmp_path / 'VOC' / 'JPEGImages'}; expected each mask beside its image by name")
    with pytest.raises(DataError) as error:
        tb.build(write_spec(tmp_path, SPEC), workers=1)
    assert str(error.value) == expected
