"""`infer` on annotated photos: a COCO instances JSON, a Pascal VOC folder and a YOLO folder are
recognised, and the spec written builds as it is, with every box equal to the source's.

The photos are scikit-image's (astronaut, chelsea, coffee, camera), saved as JPEG, with boxes
placed on them, written out in each format as tests/builders/test_annotations.py does.
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
import yaml
from PIL import Image

import tfrecord_builder as tb
from tfrecord_builder.errors import DataError

from support.cli import assert_ok, run_cli

from .helpers import comment, line_of
from .photos import CATEGORIES, NAMES, PHOTOS, coco_document, expected_fractions, save_photos

skimage_data = pytest.importorskip("skimage.data")


def infer_and_build(tmp_path: Path, data: Path) -> tuple[str, dict, dict[str, dict[str, dict]]]:
    """tb.infer -> the spec file -> tb.build as written -> each split's records by file name."""
    spec = tmp_path / "specs" / "det.yaml"
    spec.parent.mkdir(exist_ok=True)
    text = tb.infer(data, spec)
    spec.write_text(text)
    loaded = yaml.safe_load(text)
    info = tb.build(spec, output=tmp_path / "out", workers=1, progress=False)
    splits = {split: {Path(record["filename"].decode()).name: record for record in tb.read(info.path, split)}
              for split in info.splits}
    return text, loaded, splits


def assert_boxes(records: dict[str, dict], expected: dict[str, list[list[float]]]) -> None:
    for name, boxes in expected.items():
        got = records[name]["objects"]
        assert got.shape == (len(boxes), 4), name
        np.testing.assert_array_equal(got, np.array(boxes, np.float32).reshape(-1, 4))


# ---- COCO ------------------------------------------------------------------------------------------
def test_a_coco_json_becomes_a_spec_that_builds_with_every_box(tmp_path):
    sizes = save_photos(tmp_path / "data" / "images")
    document = coco_document(sizes)
    path = tmp_path / "data" / "annotations" / "instances.json"
    path.parent.mkdir()
    path.write_text(json.dumps(document, indent=1))

    text, spec, splits = infer_and_build(tmp_path, path)

    assert spec["name"] == "data"  # the folder above annotations/
    assert spec["source"] == {"builder": "coco", "path": "../data/annotations/instances.json",
                              "images": "../data/images"}
    assert spec["features"] == {
        "image": {"type": "image", "encoding": "jpeg", "shape": [None, None, 3]},
        "objects": {"type": "bbox", "source": "bbox", "format": "xywh", "units": "pixels", "image": "image"},
        "labels": {"type": "class_label", "shape": [None], "source": "label"},
        "category_id": {"dtype": "int64", "shape": [None]}, "iscrowd": {"dtype": "int64", "shape": [None]},
        "area": {"dtype": "float32", "shape": [None]}, "image_id": {"dtype": "int64"},
        "filename": {"dtype": "string"}}
    assert spec["splits"] == {"train": 0.8, "test": 0.2}
    assert text.splitlines()[0] == ("# Written by `tfrecord-builder infer` from instances.json: a COCO instances "
                                    "JSON, 4 images (1 without objects: records with no boxes), 5 objects, 4 classes.")
    assert comment(text, "builder:") == "recognised: a COCO instances JSON"
    records = {name: record for split in splits.values() for name, record in split.items()}
    assert sorted(records) == sorted(PHOTOS)
    by_name = {image["file_name"]: image for image in document["images"]}
    for name, record in records.items():
        annotations = [a for a in document["annotations"] if a["image_id"] == by_name[name]["id"]]
        assert_boxes(records, {name: [expected_fractions(a["bbox"], "xywh", sizes[name]) for a in annotations]})
        assert record["labels"].tolist() == [NAMES.index(CATEGORIES[a["category_id"]]) for a in annotations]
        assert record["category_id"].tolist() == [a["category_id"] for a in annotations]
        assert record["iscrowd"].tolist() == [a["iscrowd"] for a in annotations]
        assert record["image_id"] == by_name[name]["id"]


def test_infer_reads_a_coco_json_once_to_recognise_and_describe_it(tmp_path, monkeypatch):
    from tfrecord_builder import fs

    sizes = save_photos(tmp_path / "data" / "images")
    path = tmp_path / "data" / "annotations" / "instances.json"
    path.parent.mkdir()
    path.write_text(json.dumps(coco_document(sizes)))
    opened: list[str] = []
    real = fs.open_file

    def counting(place, *args, **kwargs):
        opened.append(str(place))
        return real(place, *args, **kwargs)

    monkeypatch.setattr(fs, "open_file", counting)
    text = tb.infer(path, tmp_path / "det.yaml")
    assert [place for place in opened if place.endswith(".json")] == [str(path)]  # (the photos are looked at too)
    monkeypatch.undo()
    assert text.splitlines()[0] == ("# Written by `tfrecord-builder infer` from instances.json: a COCO instances "
                                    "JSON, 4 images (1 without objects: records with no boxes), 5 objects, 4 classes.")


def test_a_coco_json_with_a_bad_annotation_is_said_as_the_builder_says_it(tmp_path):
    sizes = save_photos(tmp_path / "data", ["chelsea.jpg"])
    document = coco_document(sizes)
    del document["annotations"][0]["bbox"]
    path = tmp_path / "data" / "instances.json"
    path.write_text(json.dumps(document))
    with pytest.raises(DataError) as error:
        tb.infer(path, tmp_path / "det.yaml")
    assert str(error.value) == f"{path}: annotation 100: expected `bbox`; it has id, image_id, category_id, area, iscrowd"


def test_a_coco_folder_with_a_json_per_split_gives_a_source_per_split(tmp_path):
    """`coco/annotations/instances_train2017.json` and `..._val2017.json`, images in train2017/, val2017/."""
    root = tmp_path / "coco"
    (root / "annotations").mkdir(parents=True)
    parts = {"train2017": ["astronaut.jpg", "chelsea.jpg", "camera.jpg"], "val2017": ["coffee.jpg"]}
    sizes = {}
    for split, names in parts.items():
        sizes.update(save_photos(root / split, names))
        document = coco_document({name: sizes[name] for name in names})
        (root / "annotations" / f"instances_{split}.json").write_text(json.dumps(document))

    text, spec, splits = infer_and_build(tmp_path, root)

    assert spec["name"] == "coco"
    assert spec["source"] == {"builder": "coco"}
    assert spec["splits"] == {
        "train": {"path": "../coco/annotations/instances_train2017.json", "options": {"images": "../coco/train2017"}},
        "val": {"path": "../coco/annotations/instances_val2017.json", "options": {"images": "../coco/val2017"}}}
    assert comment(text, "splits:") == "the data's own split, a source each (images: train 3, val 1)"
    assert {split: sorted(records) for split, records in splits.items()} == {
        "train": sorted(parts["train2017"]), "val": ["coffee.jpg"]}
    from_annotations = yaml.safe_load(tb.infer(root / "annotations", tmp_path / "specs" / "other.yaml"))
    assert (from_annotations["name"], from_annotations["splits"]) == ("coco", spec["splits"])
    assert_boxes(splits["val"], {"coffee.jpg": [expected_fractions(box, "xywh", sizes["coffee.jpg"])
                                                for _, box in PHOTOS["coffee.jpg"][1]]})


def test_coco_boxes_reaching_outside_their_image_are_clipped_and_said(tmp_path):
    sizes = save_photos(tmp_path / "images", ["chelsea.jpg"])
    document = coco_document(sizes)
    height, width = sizes["chelsea.jpg"]
    document["annotations"][0]["bbox"] = [width - 50.0, 10.0, 50.25, 20.0]  # a quarter pixel past the edge
    (tmp_path / "instances.json").write_text(json.dumps(document))

    text, spec, splits = infer_and_build(tmp_path, tmp_path / "instances.json")

    assert spec["features"]["objects"]["clip"] is True
    assert comment(text, "objects:").endswith(
        "guessed: 1 box of 1 reaches outside its image (first: chelsea.jpg, box 0): clipped to it and counted "
        "by the build (remove `clip` to stop at them)")  # (not "1 of 1 boxes reach")
    record = splits["train"]["chelsea.jpg"] if "chelsea.jpg" in splits["train"] else splits["test"]["chelsea.jpg"]
    np.testing.assert_array_equal(record["objects"], np.array(
        [[10 / height, (width - 50) / width, 30 / height, 1.0]], np.float32))


def test_a_json_that_is_not_coco_is_read_as_before(tmp_path):
    """A one-line JSON object with other keys is a JSONL of one record (as infer read it before);
    a JSON with `images` but no `categories` isn't taken for COCO either."""
    (tmp_path / "rows.json").write_text('{"a": 1, "b": "x"}\n{"a": 2, "b": "y"}\n')
    assert yaml.safe_load(tb.infer(tmp_path / "rows.json"))["source"]["builder"] == "jsonl"
    (tmp_path / "images.json").write_text(json.dumps({"images": [{"id": 1}], "annotations": []}, indent=1))
    with pytest.raises(DataError, match=r"images\.json, line 1: invalid JSON"):
        tb.infer(tmp_path / "images.json")


def test_a_coco_json_whose_images_are_nowhere_is_one_line(tmp_path):
    sizes = {"chelsea.jpg": (300, 451)}
    path = tmp_path / "data" / "instances.json"
    path.parent.mkdir()
    path.write_text(json.dumps(coco_document(sizes)))
    with pytest.raises(DataError) as error:
        tb.infer(path)
    assert str(error.value) == (
        f"{path}: a COCO instances JSON, but no folder beside it holds its images (looked "
        f"for chelsea.jpg in {path.parent}, {tmp_path} and the folders below them)")


# ---- VOC -------------------------------------------------------------------------------------------
def write_voc(root: Path) -> tuple[dict[str, tuple[int, int]], dict[str, list[list[float]]]]:
    """root/Annotations/*.xml beside root/JPEGImages/*.jpg; the boxes (xmin ymin xmax ymax) written."""
    sizes = save_photos(root / "JPEGImages")
    (root / "Annotations").mkdir()
    written = {}
    for name, (_, objects) in PHOTOS.items():
        height, width = sizes[name]
        xml = ElementTree.Element("annotation")
        ElementTree.SubElement(xml, "filename").text = name
        size = ElementTree.SubElement(xml, "size")
        for key, value in (("width", width), ("height", height), ("depth", 3)):
            ElementTree.SubElement(size, key).text = str(value)
        written[name] = []
        for number, (category, (x, y, w, h)) in enumerate(objects):
            element = ElementTree.SubElement(xml, "object")
            ElementTree.SubElement(element, "name").text = CATEGORIES[category]
            ElementTree.SubElement(element, "truncated").text = str(number % 2)
            ElementTree.SubElement(element, "difficult").text = str(1 - number % 2)
            box = ElementTree.SubElement(element, "bndbox")
            corners = [x + 1, y + 1, x + w, y + h]
            for key, value in zip(("xmin", "ymin", "xmax", "ymax"), corners):
                ElementTree.SubElement(box, key).text = f"{value:g}"
            written[name].append(corners)
        ElementTree.ElementTree(xml).write(root / "Annotations" / (Path(name).stem + ".xml"))
    return sizes, written


def test_a_voc_folder_becomes_a_spec_that_builds_with_every_box(tmp_path):
    sizes, written = write_voc(tmp_path / "VOC")

    text, spec, splits = infer_and_build(tmp_path, tmp_path / "VOC")

    assert spec["source"] == {"builder": "voc", "path": "../VOC/Annotations", "images": "../VOC/JPEGImages"}
    assert spec["features"]["objects"] == {"type": "bbox", "source": "bbox", "format": "xyxy", "units": "pixels",
                                           "image": "image"}
    assert spec["features"]["labels"] == {"type": "class_label", "shape": [None], "source": "label"}
    assert spec["features"]["difficult"] == spec["features"]["truncated"] == {"dtype": "int64", "shape": [None]}
    assert text.splitlines()[0] == ("# Written by `tfrecord-builder infer` from VOC/: a Pascal VOC folder, 4 images "
                                    "(1 without objects: records with no boxes), 5 objects, 4 classes.")
    records = {name: record for split in splits.values() for name, record in split.items()}
    assert sorted(records) == sorted(PHOTOS)
    assert_boxes(records, {name: [expected_fractions(box, "xyxy", sizes[name]) for box in boxes]
                           for name, boxes in written.items()})
    assert records["coffee.jpg"]["labels"].tolist() == [1, 1]  # cat, cup, person: sorted
    assert records["coffee.jpg"]["difficult"].tolist() == [1, 0]


def test_xml_files_beside_their_images_are_a_voc_folder(tmp_path):
    sizes, written = write_voc(tmp_path / "VOC")
    for photo in (tmp_path / "VOC" / "JPEGImages").iterdir():
        photo.rename(tmp_path / "VOC" / "Annotations" / photo.name)
    text, spec, splits = infer_and_build(tmp_path, tmp_path / "VOC" / "Annotations")
    assert spec["source"] == {"builder": "voc", "path": "../VOC/Annotations"}
    records = {name: record for split in splits.values() for name, record in split.items()}
    assert_boxes(records, {name: [expected_fractions(box, "xyxy", sizes[name]) for box in boxes]
                           for name, boxes in written.items()})


def test_a_voc_folder_with_image_sets_gives_a_split_each_holding_exactly_its_list(tmp_path):
    sizes, written = write_voc(tmp_path / "VOC")
    main = tmp_path / "VOC" / "ImageSets" / "Main"
    main.mkdir(parents=True)
    lists = {"train": ["coffee", "astronaut"], "val": ["chelsea"], "test": ["camera"]}
    for split, ids in lists.items():
        (main / f"{split}.txt").write_text("".join(f"{stem}\n" for stem in ids))
    (main / "trainval.txt").write_text("coffee\nastronaut\nchelsea\n")  # their union: not a split of its own

    text, spec, splits = infer_and_build(tmp_path, tmp_path / "VOC")

    assert spec["splits"] == {split: {"path": "../VOC/Annotations", "options": {
        "images": "../VOC/JPEGImages", "image_set": f"../VOC/ImageSets/Main/{split}.txt"}} for split in lists}
    assert list(spec["splits"]) == ["train", "val", "test"]
    assert {split: sorted(records) for split, records in splits.items()} == {
        split: sorted(f"{stem}.jpg" for stem in ids) for split, ids in lists.items()}
    for records in splits.values():
        assert_boxes(records, {name: [expected_fractions(box, "xyxy", sizes[name]) for box in written[name]]
                               for name in records})


def test_a_voc_image_set_naming_an_image_without_its_xml_is_one_line(tmp_path):
    write_voc(tmp_path / "VOC")
    main = tmp_path / "VOC" / "ImageSets" / "Main"
    main.mkdir(parents=True)
    (main / "train.txt").write_text("coffee\nzebra\n")
    with pytest.raises(DataError) as error:
        tb.infer(tmp_path / "VOC", tmp_path / "det.yaml")
    assert str(error.value) == (f"{main / 'train.txt'}, line 2: image 'zebra' has neither zebra.xml in "
                                f"{tmp_path / 'VOC' / 'Annotations'} nor an image file in "
                                f"{tmp_path / 'VOC' / 'JPEGImages'}")


# ---- YOLO ------------------------------------------------------------------------------------------
def write_yolo(root: Path, parts: dict[str, list[str]], names_file: str = "data.yaml") -> dict[str, list[list[float]]]:
    """root/images/SPLIT/*.jpg and root/labels/SPLIT/*.txt (class cx cy w h); the numbers written."""
    written = {}
    for split, photos in parts.items():
        sizes = save_photos(root / "images" / split, photos)
        (root / "labels" / split).mkdir(parents=True)
        for name in photos:
            height, width = sizes[name]
            lines = [[NAMES.index(CATEGORIES[category]), round((x + w / 2) / width, 6), round((y + h / 2) / height, 6),
                      round(w / width, 6), round(h / height, 6)] for category, (x, y, w, h) in PHOTOS[name][1]]
            written[name] = [line[1:] for line in lines]
            if lines:
                (root / "labels" / split / (Path(name).stem + ".txt")).write_text(
                    "".join(" ".join(f"{value}" for value in line) + "\n" for line in lines))
    if names_file == "data.yaml":
        (root / "data.yaml").write_text(yaml.safe_dump({"path": ".", "names": dict(enumerate(NAMES))}))
    else:
        (root / "classes.txt").write_text("\n".join(NAMES) + "\n")
    return written


def test_a_yolo_folder_with_train_and_val_gives_a_source_per_split(tmp_path):
    written = write_yolo(tmp_path / "dataset", {"train": ["astronaut.jpg", "chelsea.jpg", "camera.jpg"],
                                                "val": ["coffee.jpg"]})
    save_photos(tmp_path / "dataset" / "images" / "test", ["chelsea.jpg"])  # no labels/test: no objects

    text, spec, splits = infer_and_build(tmp_path, tmp_path / "dataset")

    assert spec["source"] == {"builder": "yolo", "names_file": "../dataset/data.yaml"}
    assert spec["splits"] == {"train": {"path": "../dataset/images/train"}, "val": {"path": "../dataset/images/val"},
                              "test": {"path": "../dataset/images/test"}}
    assert list(spec["splits"]) == ["train", "val", "test"]
    assert spec["features"]["objects"] == {"type": "bbox", "source": "bbox", "format": "cxcywh",
                                           "units": "fraction", "image": "image"}
    assert text.splitlines()[0] == ("# Written by `tfrecord-builder infer` from dataset/: a YOLO folder, 5 images "
                                    "(2 without objects: records with no boxes), 5 objects, 4 classes.")
    assert sorted(splits["val"]) == ["coffee.jpg"]
    assert splits["test"]["chelsea.jpg"]["objects"].shape == (0, 4)
    records = {**splits["train"], **splits["val"]}
    assert_boxes(records, {name: [expected_fractions(box, "cxcywh", (1, 1)) for box in boxes]
                           for name, boxes in written.items()})
    assert records["astronaut.jpg"]["labels"].tolist() == [0, 3]


def test_a_flat_yolo_folder_with_classes_txt_on_the_command_line(tmp_path):
    """images/*.jpg beside labels/*.txt, classes.txt: one source, fractions; infer -> build on the CLI."""
    root = tmp_path / "dataset"
    written = write_yolo(root, {"": ["astronaut.jpg", "coffee.jpg"]}, names_file="classes.txt")
    inferred = run_cli("infer", root, "-o", tmp_path / "yolo.yaml", cwd=tmp_path)
    assert_ok(inferred)
    text = (tmp_path / "yolo.yaml").read_text()
    assert line_of(text, "source:") == "source:"
    assert yaml.safe_load(text)["source"] == {"builder": "yolo", "path": "dataset", "names_file": "dataset/classes.txt"}
    built = run_cli("build", tmp_path / "yolo.yaml", "--output", tmp_path / "out", "--workers", "1", cwd=tmp_path)
    assert_ok(built)
    records = {Path(record["filename"].decode()).name: record
               for split in ("train", "test") for record in tb.read(tmp_path / "out" / "dataset" / "1.0.0", split)}
    assert_boxes(records, {name: [expected_fractions(box, "cxcywh", (1, 1)) for box in boxes]
                           for name, boxes in written.items()})


def test_a_yolo_folder_without_class_names_is_one_line(tmp_path):
    write_yolo(tmp_path / "dataset", {"train": ["chelsea.jpg"]})
    (tmp_path / "dataset" / "data.yaml").unlink()
    with pytest.raises(DataError) as error:
        tb.infer(tmp_path / "dataset")
    assert str(error.value) == (f"{tmp_path / 'dataset'}: a YOLO folder (images/, labels/*.txt) without class names: "
                                "expected data.yaml (`names:`) or classes.txt (one name a line) in it")


# ---- any boxes: what infer declares builds, and reads back as the boxes clipped or dropped --------
WIDTH, HEIGHT = 80, 60
SIDE = st.integers(-3, WIDTH + 3)


@st.composite
def boxes(draw) -> list[list[int]]:
    """Pixel boxes [x, y, w, h] on an 80x60 photo: inside, reaching past an edge, or empty (w or h 0)."""
    found = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["inside", "outside", "empty"]))
        if kind == "inside":
            x, y = draw(st.integers(0, WIDTH - 2)), draw(st.integers(0, HEIGHT - 2))
            w, h = draw(st.integers(1, WIDTH - x)), draw(st.integers(1, HEIGHT - y))
        elif kind == "outside":
            x, y = draw(st.integers(-3, WIDTH - 3)), draw(st.integers(-3, HEIGHT - 3))
            w, h = draw(st.integers(3, WIDTH + 3 - x)), draw(st.integers(3, HEIGHT + 3 - y))
        else:
            x, y = draw(st.integers(0, WIDTH - 1)), draw(st.integers(0, HEIGHT - 1))
            w, h = draw(st.sampled_from([(0, 1), (1, 0), (0, 0)]))
        found.append([x, y, w, h])
    return found


def write_any(root: Path, kind: str, pixel_boxes: list[list[int]]) -> tuple[Path, list[list[float]]]:
    """One photo with these boxes in `kind`'s layout: the data's path and the boxes as written."""
    photo = Image.fromarray(skimage_data.coffee()).resize((WIDTH, HEIGHT))
    if kind == "coco":
        photo.save(root / "coffee.jpg")
        written = [[float(value) for value in box] for box in pixel_boxes]
        (root / "instances.json").write_text(json.dumps({
            "images": [{"id": 1, "file_name": "coffee.jpg", "height": HEIGHT, "width": WIDTH}],
            "annotations": [{"id": n, "image_id": 1, "category_id": 1, "bbox": box} for n, box in enumerate(written)],
            "categories": [{"id": 1, "name": "thing"}, {"id": 2, "name": "other"}]}))
        return root / "instances.json", written
    if kind == "voc":
        photo.save(root / "coffee.jpg")
        written = [[float(x), float(y), float(x + w), float(y + h)] for x, y, w, h in pixel_boxes]
        objects = "".join(f"<object><name>thing</name><bndbox><xmin>{a:g}</xmin><ymin>{b:g}</ymin><xmax>{c:g}</xmax>"
                          f"<ymax>{d:g}</ymax></bndbox></object>" for a, b, c, d in written)
        (root / "coffee.xml").write_text(f"<annotation><filename>coffee.jpg</filename><size><width>{WIDTH}</width>"
                                         f"<height>{HEIGHT}</height></size>{objects}</annotation>")
        return root, written
    (root / "images").mkdir()
    (root / "labels").mkdir()
    photo.save(root / "images" / "coffee.jpg")
    written = [[(x + w / 2) / WIDTH, (y + h / 2) / HEIGHT, w / WIDTH, h / HEIGHT] for x, y, w, h in pixel_boxes]
    (root / "labels" / "coffee.txt").write_text("".join(f"0 {' '.join(map(repr, box))}\n" for box in written))
    (root / "classes.txt").write_text("thing\n")
    return root, written


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(kind=st.sampled_from(["coco", "voc", "yolo"]), pixel_boxes=boxes())
@example(kind="coco", pixel_boxes=[[0, -3, 3, 3]])  # issue 38: a box past the top edge, empty once clipped
@example(kind="voc", pixel_boxes=[[-3, 10, 3, 5], [5, 5, 10, 10]])  # past the left edge, empty once clipped
@example(kind="yolo", pixel_boxes=[[WIDTH, 0, 3, 3]])  # past the right edge, empty once clipped
def test_any_boxes_build_as_inferred_and_read_back_clipped_or_dropped_as_said(tmp_path_factory, kind, pixel_boxes):
    root = tmp_path_factory.mktemp(kind)
    data, written = write_any(root, kind, pixel_boxes)
    form, size = {"coco": ("xywh", (HEIGHT, WIDTH)), "voc": ("xyxy", (HEIGHT, WIDTH)), "yolo": ("cxcywh", (1, 1))}[kind]
    expected, outside, empty = [], 0, 0
    for box in written:
        corners = np.array(expected_fractions(box, form, size))
        if (corners < 0).any() or (corners > 1).any():
            outside += 1
            corners = np.clip(corners, 0.0, 1.0)
            if corners[2] <= corners[0] or corners[3] <= corners[1]:
                continue  # `clip: true` drops a box empty once clipped (counted): docs/detection.md
        elif corners[2] <= corners[0] or corners[3] <= corners[1]:
            empty += 1
            continue
        expected.append(corners)

    text, spec, splits = infer_and_build(root, data)

    objects = spec["features"]["objects"]
    assert objects.get("clip", False) is bool(outside)
    assert objects.get("min_size") == (0 if empty else None)
    (record,) = [record for split in splits.values() for record in split.values()]
    np.testing.assert_array_equal(record["objects"], np.array(expected, np.float32).reshape(-1, 4))
