"""Annotations as the tools people use write them: sizes that disagree with the files, VOC as
labelme2voc and Datumaro write it, and VOC's 1-based pixels beside COCO's and YOLO's corners.

The photo is scikit-image's coffee (a real photo, 400 x 600) shrunk to 48 x 64 (height x width).
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import tfrecord_builder as tb
from tfrecord_builder.errors import DataError

from conftest import write_spec

skimage_data = pytest.importorskip("skimage.data")

HEIGHT, WIDTH = 48, 64


def coffee(path: Path, size: tuple[int, int] = (HEIGHT, WIDTH), exif_orientation: int | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    image = Image.fromarray(skimage_data.coffee()).resize((size[1], size[0]), Image.BILINEAR)
    if exif_orientation is None:
        image.save(path, quality=92)
    else:
        exif = Image.Exif()
        exif[0x0112] = exif_orientation
        image.save(path, quality=92, exif=exif.tobytes())
    return path


def voc_xml(folder: Path, stem: str, objects: list[tuple[str, list[float]]], size: tuple[int, int] | None,
            flags: str = "0", filename: str | None = None) -> Path:
    """An XML file as labelImg and labelme2voc write it: `size` (height, width) or none; `flags`
    the text of <difficult> and <truncated> ("" for the empty element labelme2voc writes)."""
    folder.mkdir(parents=True, exist_ok=True)
    root = ElementTree.Element("annotation")
    ElementTree.SubElement(root, "filename").text = filename or f"{stem}.jpg"
    if size is not None:
        element = ElementTree.SubElement(root, "size")
        for key, value in (("width", size[1]), ("height", size[0]), ("depth", 3)):
            ElementTree.SubElement(element, key).text = str(value)
    for name, box in objects:
        element = ElementTree.SubElement(root, "object")
        ElementTree.SubElement(element, "name").text = name
        ElementTree.SubElement(element, "pose")
        for flag in ("truncated", "difficult"):
            ElementTree.SubElement(element, flag).text = flags or None
        corners = ElementTree.SubElement(element, "bndbox")
        for key, value in zip(("xmin", "ymin", "xmax", "ymax"), box):
            ElementTree.SubElement(corners, key).text = f"{value:g}"
    path = folder / f"{stem}.xml"
    ElementTree.ElementTree(root).write(path)
    return path


BOXES = [("cup", [9.0, 5.0, 40.0, 30.0]), ("spoon", [41.0, 20.0, 60.0, 44.0])]  # VOC xmin ymin xmax ymax
FEATURES = {"image": {"type": "image"},
            "objects": {"type": "bbox", "source": "bbox", "format": "xyxy", "units": "pixels"},
            "labels": {"dtype": "string", "shape": [None], "source": "label"},
            "difficult": {"dtype": "int64", "shape": [None]}, "truncated": {"dtype": "int64", "shape": [None]},
            "height": {"dtype": "int64"}, "width": {"dtype": "int64"}}


def build_voc(tmp_path: Path, options: dict | None = None, features: dict | None = None, **source) -> tb.DatasetInfo:
    spec = {"name": "voc", "source": {"builder": "voc", "path": "VOC/Annotations", **source,
                                      **({"options": options} if options else {})},
            "features": features or FEATURES, "output": {"shuffle": False}}
    return tb.build(write_spec(tmp_path, spec), workers=1)


def read(info) -> list[dict]:
    return list(tb.read(info.path, "train"))


def fractions(box: list[float]) -> list[float]:
    xmin, ymin, xmax, ymax = box
    return [ymin / HEIGHT, xmin / WIDTH, ymax / HEIGHT, xmax / WIDTH]


# ---- the annotations' size against the file's ------------------------------------------------------
def test_a_voc_size_that_isnt_the_files_stops_the_build_naming_both(tmp_path):
    coffee(tmp_path / "VOC" / "JPEGImages" / "coffee.jpg")
    xml = voc_xml(tmp_path / "VOC" / "Annotations", "coffee", BOXES, size=(96, 128))
    with pytest.raises(DataError) as error:
        build_voc(tmp_path)
    assert str(error.value) == (
        f"{xml}: the annotations give the image's size as 128×96, but {tmp_path / 'VOC' / 'JPEGImages' / 'coffee.jpg'} "
        "is 64×48 (width×height, upright); for images shrunk after labelling set the source's `size_mismatch: scale` "
        "(pixel coordinates scaled to the file), or `warn` (kept as written)")
    assert not list(tmp_path.glob("build/voc/*/dataset_info.json"))


def test_images_shrunk_after_labelling_have_their_boxes_scaled_to_the_file(tmp_path):
    coffee(tmp_path / "VOC" / "JPEGImages" / "coffee.jpg")
    doubled = [(name, [value * 2 for value in box]) for name, box in BOXES]  # drawn on the 96 x 128 original
    voc_xml(tmp_path / "VOC" / "Annotations", "coffee", doubled, size=(96, 128))
    with pytest.warns(tb.BuildWarning) as caught:
        info = build_voc(tmp_path, {"size_mismatch": "scale"})
    (record,) = read(info)
    np.testing.assert_allclose(record["objects"], [fractions(box) for _, box in BOXES], atol=1e-6)
    assert (record["height"], record["width"]) == (HEIGHT, WIDTH)
    assert [str(item.message) for item in caught] == [
        "source: 1 image labelled at another size than the file's: pixel coordinates scaled to the file "
        "(`size_mismatch: scale`)"]


def test_a_size_mismatch_may_be_only_warned_about(tmp_path):
    coffee(tmp_path / "VOC" / "JPEGImages" / "coffee.jpg")
    voc_xml(tmp_path / "VOC" / "Annotations", "coffee", BOXES, size=(96, 128))
    with pytest.warns(tb.BuildWarning, match=r"source: 1 image whose annotated size differs from the file's: the "
                                              r"file's size kept, the pixel coordinates as written"):
        info = build_voc(tmp_path, {"size_mismatch": "warn"})
    (record,) = read(info)
    np.testing.assert_allclose(record["objects"], [fractions(box) for _, box in BOXES], atol=1e-6)
    assert (record["height"], record["width"]) == (HEIGHT, WIDTH)  # the file's, not the XML's


def test_a_coco_size_is_checked_against_the_upright_file_naming_the_exif_turn(tmp_path):
    # stored 64 x 48 and turned a quarter by EXIF orientation 6: shown 48 x 64; COCO says 64 x 48
    coffee(tmp_path / "images" / "coffee.jpg", size=(HEIGHT, WIDTH), exif_orientation=6)
    document = {"images": [{"id": 1, "file_name": "coffee.jpg", "height": HEIGHT, "width": WIDTH}],
                "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [2, 2, 10, 10]}],
                "categories": [{"id": 1, "name": "cup"}]}
    spec = {"name": "coco", "source": {"builder": "coco", "path": "coco.json", "images": "images"},
            "features": {"image": {"type": "image"},
                         "objects": {"type": "bbox", "source": "bbox", "format": "xywh", "units": "pixels"}}}
    with pytest.raises(DataError) as error:
        tb.build(write_spec(tmp_path, spec, {"coco.json": json.dumps(document)}), workers=1)
    assert str(error.value) == (
        f"coco.json, image 1 (coffee.jpg): the annotations give the image's size as 64×48, but "
        f"{tmp_path / 'images' / 'coffee.jpg'} is 48×64 (width×height, upright; stored 64×48, its EXIF orientation 6 "
        "turns it); for images shrunk after labelling set the source's `size_mismatch: scale` (pixel coordinates "
        "scaled to the file), or `warn` (kept as written)")


def test_a_coco_image_without_a_size_takes_the_files(tmp_path):
    coffee(tmp_path / "images" / "coffee.jpg")
    document = {"images": [{"id": 1, "file_name": "coffee.jpg"}],
                "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [8, 4, 32, 24]}],
                "categories": [{"id": 1, "name": "cup"}]}
    spec = {"name": "coco", "source": {"builder": "coco", "path": "coco.json", "images": "images"},
            "features": {"image": {"type": "image"}, "height": {"dtype": "int64"}, "width": {"dtype": "int64"},
                         "objects": {"type": "bbox", "source": "bbox", "format": "xywh", "units": "pixels"}}}
    with pytest.warns(tb.BuildWarning, match="source: 1 image without a size in the annotations: the size read "
                                             "from the image file"):
        info = tb.build(write_spec(tmp_path, spec, {"coco.json": json.dumps(document)}), workers=1)
    (record,) = read(info)
    assert (record["height"], record["width"]) == (HEIGHT, WIDTH)
    np.testing.assert_allclose(record["objects"], [[4 / 48, 8 / 64, 28 / 48, 40 / 64]], atol=1e-6)


# ---- VOC as tools write it -------------------------------------------------------------------------
def test_labelme2voc_s_empty_flags_read_as_0_and_its_missing_size_from_the_file(tmp_path):
    coffee(tmp_path / "VOC" / "JPEGImages" / "coffee.jpg")
    voc_xml(tmp_path / "VOC" / "Annotations", "coffee", BOXES, size=None, flags="")
    with pytest.warns(tb.BuildWarning, match="1 image without a size in the annotations"):
        info = build_voc(tmp_path)
    (record,) = read(info)
    assert record["difficult"].tolist() == [0, 0] and record["truncated"].tolist() == [0, 0]
    assert (record["height"], record["width"]) == (HEIGHT, WIDTH)
    np.testing.assert_allclose(record["objects"], [fractions(box) for _, box in BOXES], atol=1e-6)


def test_an_image_a_set_lists_without_an_xml_is_kept_without_objects(tmp_path):
    """Datumaro's VOC export of an image without annotations: in JPEGImages and the image set, no XML."""
    coffee(tmp_path / "VOC" / "JPEGImages" / "coffee.jpg")
    coffee(tmp_path / "VOC" / "JPEGImages" / "empty.jpg")
    voc_xml(tmp_path / "VOC" / "Annotations", "coffee", BOXES, size=(HEIGHT, WIDTH))
    (tmp_path / "VOC" / "ImageSets" / "Main").mkdir(parents=True)
    (tmp_path / "VOC" / "ImageSets" / "Main" / "default.txt").write_text("coffee\nempty\n")
    with pytest.warns(tb.BuildWarning) as caught:
        info = build_voc(tmp_path, {"image_set": "VOC/ImageSets/Main/default.txt"})
    records = read(info)
    assert [len(record["objects"]) for record in records] == [2, 0]
    assert (records[1]["height"], records[1]["width"]) == (HEIGHT, WIDTH)
    assert "source: 1 image listed without an XML file, kept as records with no boxes" in \
        [str(item.message) for item in caught]


def test_an_image_set_id_with_neither_xml_nor_image_is_one_line(tmp_path):
    coffee(tmp_path / "VOC" / "JPEGImages" / "coffee.jpg")
    voc_xml(tmp_path / "VOC" / "Annotations", "coffee", BOXES, size=(HEIGHT, WIDTH))
    (tmp_path / "sets").mkdir()
    (tmp_path / "sets" / "train.txt").write_text("coffee\nghost\n")
    with pytest.raises(DataError) as error:
        build_voc(tmp_path, {"image_set": "sets/train.txt"})
    assert str(error.value) == (
        f"{tmp_path / 'sets' / 'train.txt'}, line 2: image 'ghost' has neither ghost.xml in "
        f"{tmp_path / 'VOC' / 'Annotations'} nor an image file in {tmp_path / 'VOC' / 'JPEGImages'}")


def test_one_based_voc_pixels_give_the_corners_coco_and_yolo_give(tmp_path):
    """One set of boxes written as converters write each format: COCO [x, y, w, h] from 0, YOLO
    centre and size as fractions, VOC from 1 (xmin = x + 1, xmax = x + w, the devkit's last pixel
    inside). Read as written, VOC's xmin and ymin are a pixel off the others; `coordinates:
    one_based` reads them as the same corners."""
    boxes = [(8, 4, 32, 25), (40, 19, 20, 25)]  # COCO x, y, w, h (whole pixels)
    coffee(tmp_path / "VOC" / "JPEGImages" / "coffee.jpg")
    voc_xml(tmp_path / "VOC" / "Annotations", "coffee",
            [("cup", [x + 1, y + 1, x + w, y + h]) for x, y, w, h in boxes], size=(HEIGHT, WIDTH))
    coffee(tmp_path / "coco" / "coffee.jpg")
    document = {"images": [{"id": 1, "file_name": "coffee.jpg", "height": HEIGHT, "width": WIDTH}],
                "annotations": [{"id": n, "image_id": 1, "category_id": 1, "bbox": list(box)}
                                for n, box in enumerate(boxes)], "categories": [{"id": 1, "name": "cup"}]}
    (tmp_path / "coco" / "coco.json").write_text(json.dumps(document))
    coffee(tmp_path / "yolo" / "images" / "coffee.jpg")
    (tmp_path / "yolo" / "labels").mkdir(parents=True)
    (tmp_path / "yolo" / "labels" / "coffee.txt").write_text("".join(
        f"0 {(x + w / 2) / WIDTH:.8f} {(y + h / 2) / HEIGHT:.8f} {w / WIDTH:.8f} {h / HEIGHT:.8f}\n"
        for x, y, w, h in boxes))
    (tmp_path / "yolo" / "classes.txt").write_text("cup\n")

    def built(name, source, box_format, units):
        features = {"image": {"type": "image"},
                    "objects": {"type": "bbox", "source": "bbox", "format": box_format, "units": units}}
        spec = {"name": name, "source": source, "features": features}
        (record,) = read(tb.build(write_spec(tmp_path, spec, name=f"{name}.yaml"), workers=1))
        return record["objects"]

    coco = built("coco", {"builder": "coco", "path": "coco/coco.json"}, "xywh", "pixels")
    yolo = built("yolo", {"builder": "yolo", "path": "yolo"}, "cxcywh", "fraction")
    as_written = built("voc", {"builder": "voc", "path": "VOC/Annotations"}, "xyxy", "pixels")
    one_based = built("voc1", {"builder": "voc", "path": "VOC/Annotations", "options": {"coordinates": "one_based"}},
                      "xyxy", "pixels")
    np.testing.assert_allclose(yolo, coco, atol=1e-6)
    np.testing.assert_allclose(one_based, coco, atol=1e-7)
    np.testing.assert_allclose(as_written[:, :2] - coco[:, :2], [[1 / HEIGHT, 1 / WIDTH]] * 2, atol=1e-6)
    np.testing.assert_allclose(as_written[:, 2:], coco[:, 2:], atol=1e-7)


def test_cvat_s_voc_attributes_are_read_per_object(tmp_path):
    """CVAT and Datumaro write an object's attributes as <attributes><attribute><name>, <value>."""
    coffee(tmp_path / "VOC" / "JPEGImages" / "coffee.jpg")
    xml = voc_xml(tmp_path / "VOC" / "Annotations", "coffee", BOXES, size=(HEIGHT, WIDTH))
    root = ElementTree.parse(xml).getroot()
    for element, values in zip(root.iterfind("object"), [{"color": "white", "rotation": "0.0"}, {"rotation": "12.5"}]):
        attributes = ElementTree.SubElement(element, "attributes")
        for name, value in values.items():
            attribute = ElementTree.SubElement(attributes, "attribute")
            ElementTree.SubElement(attribute, "name").text = name
            ElementTree.SubElement(attribute, "value").text = value
    ElementTree.ElementTree(root).write(xml)
    features = {**FEATURES, "rotation": {"dtype": "float32", "shape": [None], "source": "attributes.rotation"},
                "color": {"dtype": "string", "shape": [None], "source": "attributes.color", "default": "none"}}
    (record,) = read(build_voc(tmp_path, features=features))
    assert record["rotation"].tolist() == [0.0, 12.5]
    assert [value.decode() for value in record["color"]] == ["white", "none"]
    with pytest.raises(tb.SpecError, match=r"the voc builder gives no field `attributes.colour`; its records offer: "
                                           r"image, .*, pose, attributes.color, attributes.rotation$"):
        build_voc(tmp_path, features={**features, "color": {**features["color"], "source": "attributes.colour"}})
