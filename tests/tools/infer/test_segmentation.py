"""`infer` on Pascal VOC's segmentation folders (`SegmentationClass/*.png` palette masks beside
`JPEGImages/`, `ImageSets/Segmentation/*.txt` the splits; CVAT's "Segmentation mask" export is
laid out so too): on 850d6ac an image folder whose classes were JPEGImages and SegmentationClass.
Now `builder: segmentation`, every mask stored as the class indices the palette PNG holds, VOC's
255 border included, each beside its image, in its split.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

import tfrecord_builder as tb
from tfrecord_builder.errors import DataError

from .exports import infer_build
from .helpers import comment

skimage_data = pytest.importorskip("skimage.data")
ndimage = pytest.importorskip("scipy.ndimage")

PHOTOS = {"2008_000001": skimage_data.coffee, "2008_000002": skimage_data.chelsea,
          "2008_000003": skimage_data.astronaut, "2008_000004": skimage_data.rocket}
CLASSES = {"2008_000001": 11, "2008_000002": 8, "2008_000003": 15, "2008_000004": 4}  # VOC's indices
LISTS = {"train": ["2008_000001", "2008_000003", "2008_000004"], "val": ["2008_000002"]}
VOC_PALETTE = [value for index in range(256) for value in ((index * 37) % 256, (index * 91) % 256, (index * 53) % 256)]


def write_segmentation(root: Path, annotations: bool = False) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """JPEGImages/, SegmentationClass/ and SegmentationObject/ (palette PNGs), ImageSets/Segmentation/;
    each image's (class mask, object mask) as written."""
    for name in ("JPEGImages", "SegmentationClass", "SegmentationObject", "ImageSets/Segmentation"):
        (root / name).mkdir(parents=True)
    written = {}
    for stem, make in PHOTOS.items():
        pixels = make()
        Image.fromarray(pixels).save(root / "JPEGImages" / f"{stem}.jpg", quality=90)
        grey = pixels.mean(axis=2) if pixels.ndim == 3 else pixels
        region = grey > np.median(grey)
        border = region & ~ndimage.binary_erosion(region, iterations=2)  # VOC's 255 around each object
        classes = np.where(region, CLASSES[stem], 0).astype(np.uint8)
        classes[border] = 255
        labelled, _ = ndimage.label(region)
        objects = np.where(region, np.minimum(labelled, 3), 0).astype(np.uint8)
        objects[border] = 255
        for folder, mask in (("SegmentationClass", classes), ("SegmentationObject", objects)):
            image = Image.fromarray(mask, "P")
            image.putpalette(VOC_PALETTE)
            image.save(root / folder / f"{stem}.png")
        written[stem] = (classes, objects)
        if annotations:
            (root / "Annotations").mkdir(exist_ok=True)
            height, width = pixels.shape[:2]
            (root / "Annotations" / f"{stem}.xml").write_text(
                f"<annotation><filename>{stem}.jpg</filename><size><width>{width}</width><height>{height}</height>"
                "</size><object><name>thing</name><bndbox><xmin>1</xmin><ymin>1</ymin><xmax>20</xmax><ymax>20</ymax>"
                "</bndbox></object></annotation>")
    for split, stems in LISTS.items():
        (root / "ImageSets" / "Segmentation" / f"{split}.txt").write_text("".join(f"{stem}\n" for stem in stems))
    return written


def test_voc_segmentation_folders_give_a_mask_each_in_its_split(tmp_path):
    written = write_segmentation(tmp_path / "VOC")

    text, spec, splits, path = infer_build(tmp_path, tmp_path / "VOC")

    assert spec["source"] == {"builder": "segmentation"}
    assert spec["splits"] == {split: {"path": "../VOC/SegmentationClass", "options": {
        "images": "../VOC/JPEGImages", "image_set": f"../VOC/ImageSets/Segmentation/{split}.txt"}} for split in LISTS}
    assert spec["features"] == {
        "image": {"type": "image", "encoding": "jpeg", "shape": [None, None, 3]},
        "mask": {"type": "mask", "image": "image"}, "object_mask": {"type": "mask", "image": "image"},
        "filename": {"dtype": "string"}}
    assert comment(text, "mask:") == ("class indices (palette PNGs); indices 0, 4, 8, 11, 15 and 255 (the void border "
                                      "VOC draws: a class a loss ignores) in all 4 masks")
    assert {split: sorted(records) for split, records in splits.items()} == \
        {split: sorted(f"{stem}.jpg" for stem in stems) for split, stems in LISTS.items()}
    for records in splits.values():
        for name, record in records.items():
            classes, objects = written[name.removesuffix(".jpg")]
            np.testing.assert_array_equal(record["mask"][:, :, 0], classes)  # indices, never the palette's colours
            np.testing.assert_array_equal(record["object_mask"][:, :, 0], objects)
            assert record["image"].shape[:2] == classes.shape
    assert tb.dry_run(path, workers=1).findings == []


def test_voc_with_boxes_and_masks_reads_the_boxes_and_names_the_masks(tmp_path):
    """VOC2012 holds both: `infer VOC/` reads the boxes (and says where the masks are);
    `infer VOC/SegmentationClass` the masks."""
    write_segmentation(tmp_path / "VOC", annotations=True)
    text = tb.infer(tmp_path / "VOC", tmp_path / "det.yaml")
    assert yaml.safe_load(text)["source"]["builder"] == "voc"
    masks = tmp_path / "VOC" / "SegmentationClass"
    assert f"# (SegmentationClass/ holds 4 masks: `tfrecord-builder infer {masks}` writes a spec for them.)" \
        in text.splitlines()
    spec = yaml.safe_load(tb.infer(masks, tmp_path / "seg.yaml"))
    assert spec["source"] == {"builder": "segmentation"} and spec["name"] == "VOC"


def test_a_mask_without_its_image_is_one_line(tmp_path):
    write_segmentation(tmp_path / "VOC")
    (tmp_path / "VOC" / "JPEGImages" / "2008_000004.jpg").unlink()
    with pytest.raises(DataError) as error:
        tb.infer(tmp_path / "VOC", tmp_path / "seg.yaml")
    assert str(error.value) == (f"{tmp_path / 'VOC' / 'SegmentationClass' / '2008_000004.png'}: no image 2008_000004.* "
                                f"in {tmp_path / 'VOC' / 'JPEGImages'}; expected each mask beside its image by name")
