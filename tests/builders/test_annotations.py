"""Annotation sources: `coco`, `voc` and `yolo` on real photographs with boxes placed on them.

The photos are scikit-image's (astronaut, chelsea, coffee, rocket, camera), saved as JPEG; the
boxes are written out as a COCO JSON, Pascal VOC XML files and YOLO text files, built, and read
back with `tb.read`: every box, class and attribute equals the source as pycocotools, the XML
and the YOLO numbers give it. No mocks.
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
from support.annotated_photos import COCO_SOURCE, IDS, NAMES, PHOTOS, photo, write_coco, write_voc, write_yolo

pytest.importorskip("skimage.data")  # the photos


def features(**extra) -> dict:
    return {"image": {"type": "image", "encoding": "jpeg"},
            "boxes": {"type": "tensor", "dtype": "float32", "shape": [None, 4], "source": "bbox"},
            "labels": {"type": "class_label", "shape": [None], "source": "label"},
            "filename": {"dtype": "string"}, "image_id": {"dtype": "string"},
            "height": {"dtype": "int64"}, "width": {"dtype": "int64"}, **extra}


def build(tmp_path: Path, source: dict, extra: dict | None = None, **top) -> tb.DatasetInfo:
    spec = {"name": "det", "version": "1.0.0", "source": source, "features": features(**(extra or {})),
            "output": {"shuffle": False}, **top}
    return tb.build(write_spec(tmp_path, spec), workers=1)


def records(info) -> dict[str, dict]:
    return {record["filename"].decode(): record for record in tb.read(info.path, "train")}


# ---- COCO ------------------------------------------------------------------------------------------
COCO_EXTRA = {"category_id": {"dtype": "int64", "shape": [None]}, "iscrowd": {"dtype": "int64", "shape": [None]},
              "area": {"dtype": "float32", "shape": [None]}, "image_id": {"dtype": "int64"}}


def test_coco_records_equal_pycocotools_view(tmp_path):
    from pycocotools.coco import COCO

    path = write_coco(tmp_path)
    info = build(tmp_path, COCO_SOURCE, COCO_EXTRA)
    assert info.spec.features["labels"].names == ["person", "cat", "cup", "rocket"]  # by id, without `names:`
    coco = COCO(str(path))
    order = sorted(coco.getCatIds())
    got = records(info)
    assert sorted(got) == sorted(PHOTOS)
    for image in coco.loadImgs(coco.getImgIds()):
        record = got[image["file_name"]]
        annotations = coco.loadAnns(coco.getAnnIds(imgIds=[image["id"]]))
        assert record["image_id"] == image["id"]
        assert (record["height"], record["width"]) == (image["height"], image["width"])
        assert record["image"].shape == (image["height"], image["width"], 3)
        np.testing.assert_array_equal(record["boxes"].reshape(-1, 4),
                                      np.array([a["bbox"] for a in annotations], np.float32).reshape(-1, 4))
        assert record["labels"].tolist() == [order.index(a["category_id"]) for a in annotations]
        assert record["category_id"].tolist() == [a["category_id"] for a in annotations]
        assert record["iscrowd"].tolist() == [a["iscrowd"] for a in annotations]
        np.testing.assert_array_equal(record["area"], np.array([a["area"] for a in annotations], np.float32))
    assert got["camera.jpg"]["boxes"].size == 0 and got["camera.jpg"]["labels"].size == 0
    assert "source: 1 image without objects, kept as records with no boxes" in info.warnings


def test_each_image_is_measured_once_for_its_size_check_and_its_pixel_boxes(tmp_path, monkeypatch):
    """The source measures each file's header to check it against the JSON's size; the `bbox`
    feature's pixel boxes are divided by that size, taken from the batch, not measured again."""
    from tfrecord_builder.media.images import pillow

    measured: list[str] = []
    original = pillow.stored_size
    monkeypatch.setattr(pillow, "stored_size", lambda value: measured.append(str(value)) or original(value))
    write_coco(tmp_path)
    info = build(tmp_path, COCO_SOURCE, {"objects": {"type": "bbox", "source": "bbox", "format": "xywh",
                                                     "units": "pixels", "image": "image"}},
                 output={"shuffle": False, "shards": 1})  # (a shard size would encode a sample first)
    assert sorted(measured) == sorted(str(tmp_path / "images" / name) for name in PHOTOS)
    got = records(info)
    for name, record in got.items():
        height, width = record["image"].shape[:2]
        expected = record["boxes"].reshape(-1, 4)[:, [1, 0, 3, 2]].astype(np.float64)
        expected[:, 2:] += expected[:, :2]
        expected /= [height, width, height, width]
        np.testing.assert_allclose(record["objects"], expected.astype(np.float32), rtol=1e-6, err_msg=name)


def test_coco_segmentation_and_annotation_ids_are_offered_as_in_the_json(tmp_path):
    from tfrecord_builder.builders.coco import CocoBuilder

    path = write_coco(tmp_path)
    document = json.loads(path.read_text())
    builder = CocoBuilder(None, str(path), {"images": str(tmp_path / "images")})
    generated = dict(builder.generate(None))
    for annotation in document["annotations"]:
        record = generated[annotation["image_id"]]
        at = record["annotation_id"].index(annotation["id"])
        assert record["segmentation"][at] == annotation["segmentation"]
        assert record["bbox"][at] == annotation["bbox"]


@pytest.mark.parametrize("case", ["unknown_category", "missing_image", "image_twice", "malformed"])
def test_coco_bad_input_is_one_line_naming_the_file_and_object(tmp_path, case):
    def unknown_category(document):
        document["annotations"][0]["category_id"] = 5

    def missing_image(document):
        document["annotations"][1]["image_id"] = 999

    def image_twice(document):
        document["images"].append(dict(document["images"][1]))

    changes = {"unknown_category": unknown_category, "missing_image": missing_image, "image_twice": image_twice}
    path = write_coco(tmp_path, changes.get(case))
    if case == "malformed":
        lines = path.read_text().splitlines()
        lines[6] = lines[6].rstrip(",")  # a missing comma on line 7
        path.write_text("\n".join(lines))
    expected = {
        "unknown_category": f"{path}: annotation 105 (image 19, rocket.jpg): unknown category_id 5; "
                            "the categories' ids: 1, 3, 7, 9",
        "missing_image": f"{path}: annotation 104: image_id 999 is not among the `images`",
        "image_twice": f"{path}: image 13 is listed twice (images 1 and 5 of `images`); expected each id once",
        "malformed": f"{path}, line 8: malformed JSON: Expecting ',' delimiter (column 4)",
    }[case]
    with pytest.raises(DataError) as raised:
        build(tmp_path, COCO_SOURCE, COCO_EXTRA)
    assert str(raised.value) == expected


def test_coco_bad_images_are_skipped_and_listed_under_on_error_skip(tmp_path):
    def change(document):
        document["annotations"][0]["category_id"] = 5  # rocket.jpg's one object
        document["annotations"][1]["image_id"] = 999  # (coffee's second cup, whose image isn't listed)
        document["images"].append(dict(document["images"][1]))  # chelsea.jpg twice

    path = write_coco(tmp_path, change)
    info = build(tmp_path, COCO_SOURCE, COCO_EXTRA, on_error="skip")
    got = records(info)
    assert sorted(got) == ["astronaut.jpg", "camera.jpg", "coffee.jpg"]
    assert len(got["coffee.jpg"]["labels"]) == 1
    skipped = [json.loads(line) for line in (Path(info.path) / "skipped.jsonl").read_text().splitlines()]
    assert sorted(entry["reason"] for entry in skipped) == sorted([
        f"{path}: annotation 104: image_id 999 is not among the `images`",
        f"{path}: annotation 105 (image 19, rocket.jpg): unknown category_id 5; the categories' ids: 1, 3, 7, 9",
        f"{path}: image 13 is listed twice (images 1 and 5 of `images`); expected each id once",
        f"{path}: image 13 is listed twice; both skipped, whose objects would be ambiguous",
    ])
    assert info.skipped == 4


# ---- Pascal VOC ------------------------------------------------------------------------------------
VOC_EXTRA = {"difficult": {"dtype": "int64", "shape": [None]}, "truncated": {"dtype": "int64", "shape": [None]},
             "pose": {"dtype": "string", "shape": [None]}}


def test_voc_records_equal_the_xml_values(tmp_path):
    folder = write_voc(tmp_path)
    info = build(tmp_path, {"builder": "voc", "path": "VOC/Annotations"}, VOC_EXTRA)
    names = info.spec.features["labels"].names
    assert names == ["cat", "cup", "person", "rocket"]  # the names found, sorted
    got = records(info)
    assert sorted(got) == sorted(PHOTOS)
    for xml in sorted(folder.glob("*.xml")):
        root = ElementTree.parse(xml).getroot()
        record = got[root.findtext("filename")]
        objects = root.findall("object")
        assert record["image_id"].decode() == xml.stem
        assert (record["height"], record["width"]) == (int(root.findtext("size/height")),
                                                       int(root.findtext("size/width")))
        expected = [[float(element.findtext(f"bndbox/{key}")) for key in ("xmin", "ymin", "xmax", "ymax")]
                    for element in objects]
        np.testing.assert_array_equal(record["boxes"].reshape(-1, 4), np.array(expected, np.float32).reshape(-1, 4))
        assert [names[index] for index in record["labels"].tolist()] == [e.findtext("name") for e in objects]
        assert record["difficult"].tolist() == [int(e.findtext("difficult")) for e in objects]
        assert record["truncated"].tolist() == [int(e.findtext("truncated")) for e in objects]
        assert [pose.decode() for pose in record["pose"].tolist()] == [e.findtext("pose") for e in objects]
    assert got["camera.jpg"]["boxes"].size == 0


def test_voc_malformed_xml_names_the_file_and_line_or_is_skipped(tmp_path):
    folder = write_voc(tmp_path)
    bad = folder / "chelsea.xml"
    bad.write_text(bad.read_text().replace("</annotation>", "<object></annotation>"))
    source = {"builder": "voc", "path": "VOC/Annotations", "names_file": "names.txt"}
    (tmp_path / "names.txt").write_text("person\ncat\ncup\nrocket\n")
    with pytest.raises(DataError) as raised:
        build(tmp_path, source, VOC_EXTRA)
    column = len(bad.read_text()) - len("annotation>") + 1  # at the closing tag's name
    assert str(raised.value) == f"{bad}, line 1: malformed XML: mismatched tag (column {column})"
    info = build(tmp_path, source, VOC_EXTRA, on_error="skip")
    assert info.spec.features["labels"].names == ["person", "cat", "cup", "rocket"]  # the names file's order
    assert sorted(records(info)) == sorted(set(PHOTOS) - {"chelsea.jpg"})
    skipped = [json.loads(line) for line in (Path(info.path) / "skipped.jsonl").read_text().splitlines()]
    assert skipped == [{"record": str(bad), "reason": str(raised.value)}]


# ---- YOLO ------------------------------------------------------------------------------------------
YOLO_EXTRA = {"class_id": {"dtype": "int64", "shape": [None]}}


@pytest.mark.parametrize("names", [None, NAMES], ids=["names_mapping", "names_list"])
def test_yolo_records_equal_the_label_files_numbers(tmp_path, names):
    dataset, sizes = write_yolo(tmp_path, names)
    info = build(tmp_path, {"builder": "yolo", "path": "dataset/", "names_file": "dataset/data.yaml"}, YOLO_EXTRA)
    assert info.spec.features["labels"].names == NAMES
    got = records(info)
    assert sorted(got) == sorted(f"images/train/{name}" for name in PHOTOS)
    for name in PHOTOS:
        record = got[f"images/train/{name}"]
        assert (record["height"], record["width"]) == sizes[name]  # from the image's header
        assert record["image_id"].decode() == Path(name).stem
        labels = dataset / "labels" / "train" / (Path(name).stem + ".txt")
        rows = [line.split() for line in labels.read_text().splitlines()] if labels.exists() else []
        np.testing.assert_array_equal(record["boxes"].reshape(-1, 4),
                                      np.array([[float(v) for v in row[1:]] for row in rows], np.float32).reshape(-1, 4))
        assert record["labels"].tolist() == record["class_id"].tolist() == [int(row[0]) for row in rows]
    assert got["images/train/camera.jpg"]["boxes"].size == 0


def test_yolo_classes_txt_is_found_in_the_folder(tmp_path):
    dataset, _ = write_yolo(tmp_path)
    (dataset / "data.yaml").unlink()
    (dataset / "classes.txt").write_text("\n".join(NAMES) + "\n")
    info = build(tmp_path, {"builder": "yolo", "path": "dataset"}, YOLO_EXTRA)
    assert info.spec.features["labels"].names == NAMES
    assert len(records(info)) == len(PHOTOS)


def test_yolo_line_with_four_numbers_names_the_file_and_line_or_is_skipped(tmp_path):
    dataset, _ = write_yolo(tmp_path)
    bad = dataset / "labels" / "train" / "coffee.txt"
    bad.write_text(bad.read_text() + "2 0.5 0.5 0.1\n")
    source = {"builder": "yolo", "path": "dataset", "names_file": "dataset/data.yaml"}
    expected = f"{bad}, line 3: expected 5 numbers (class cx cy w h), received 4: '2 0.5 0.5 0.1'"
    with pytest.raises(DataError) as raised:
        build(tmp_path, source, YOLO_EXTRA)
    assert str(raised.value) == expected
    info = build(tmp_path, source, YOLO_EXTRA, on_error="skip")
    assert "images/train/coffee.jpg" not in records(info) and len(records(info)) == len(PHOTOS) - 1
    skipped = [json.loads(line) for line in (Path(info.path) / "skipped.jsonl").read_text().splitlines()]
    assert skipped == [{"record": str(dataset / "images" / "train" / "coffee.jpg"), "reason": expected}]


def test_yolo_labels_file_without_its_image_is_an_error_or_skipped(tmp_path):
    dataset, _ = write_yolo(tmp_path)
    orphan = dataset / "labels" / "train" / "horse.txt"
    orphan.write_text("1 0.5 0.5 0.2 0.2\n")
    source = {"builder": "yolo", "path": "dataset", "names_file": "dataset/data.yaml"}
    expected = (f"{orphan}: a labels file without its image (expected {dataset / 'images' / 'train' / 'horse'} "
                "with an image's extension)")
    with pytest.raises(DataError) as raised:
        build(tmp_path, source, YOLO_EXTRA)
    assert str(raised.value) == expected
    info = build(tmp_path, source, YOLO_EXTRA, on_error="skip")
    assert len(records(info)) == len(PHOTOS)
    skipped = [json.loads(line) for line in (Path(info.path) / "skipped.jsonl").read_text().splitlines()]
    assert skipped == [{"record": str(orphan), "reason": expected}]


# ---- the COCO JSON's streaming parse -----------------------------------------------------------------
from hypothesis import given, settings, strategies as st  # noqa: E402

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
                    max_leaves=8)


@settings(max_examples=60, deadline=None)
@given(document=st.dictionaries(st.text(), JSON, max_size=4), images=st.lists(JSON, max_size=5),
       indent=st.sampled_from([None, 1, "\t"]))
def test_the_streaming_parse_gives_what_json_loads_does(tmp_path_factory, document, images, indent):
    from tfrecord_builder.builders.coco import parse

    document = {**document, "images": images}
    path = tmp_path_factory.mktemp("json") / "x.json"
    path.write_text(json.dumps(document, indent=indent), encoding="utf-8")
    handed: list = []
    rest = parse(str(path), {"images": lambda position, value: handed.append((position, value))})
    assert handed == list(enumerate(json.loads(path.read_text())["images"]))
    assert rest == {**json.loads(path.read_text()), "images": None}


def test_a_pending_batch_pickles_to_a_worker_and_reads_the_same(tmp_path):
    import pickle

    from tfrecord_builder.builders.coco import CocoBuilder
    from tfrecord_builder.features.notices import Notices

    path = write_coco(tmp_path)
    builder = CocoBuilder(None, str(path), {"images": str(tmp_path / "images")})
    batch = next(builder.encoding_batches(None, ["bbox", "label", "image"], 64))
    here, there = batch.load(Notices()), pickle.loads(pickle.dumps(batch)).load(Notices())
    assert here.keys == there.keys == [IDS[name] for name in PHOTOS]
    assert here.columns == there.columns
    assert there.columns["image"][0] == str(tmp_path / "images" / "astronaut.jpg")


def test_a_pending_batch_notes_what_its_reading_counts_into_the_collector_it_is_loaded_with(tmp_path):
    import pickle

    from tfrecord_builder.builders.annotations import EMPTY_NOTICE
    from tfrecord_builder.builders.coco import CocoBuilder
    from tfrecord_builder.features.notices import Notices

    path = write_coco(tmp_path, lambda document: [image.update(height=0, width=0) for image in document["images"][:2]])
    builder = CocoBuilder(None, str(path), {"images": str(tmp_path / "images")})
    batch = next(builder.encoding_batches(None, ["bbox", "label", "image"], 64))
    here, there = Notices(), Notices()
    batch.load(here)
    pickle.loads(pickle.dumps(batch)).load(there)  # (in a worker: its own collector, sent back with its records)
    sized = "source: {count} image{s} without a size in the annotations: the size read from the image file"
    assert here.counts == there.counts == {EMPTY_NOTICE: 1, sized: 2}  # camera.jpg has no objects
    assert list(builder.records(None, Notices())) == list(builder.generate(None))


def test_images_and_names_file_are_refused_where_no_builder_reads_them(tmp_path):
    from tfrecord_builder.errors import SpecError

    spec = {"name": "t", "source": {"builder": "csv", "path": "t.csv", "images": "images/"},
            "features": {"x": {"dtype": "int64"}}}
    with pytest.raises(SpecError) as raised:
        tb.load_spec(write_spec(tmp_path, spec, {"t.csv": "x\n1\n"}))
    assert str(raised.value).endswith("source.images: `images` is read by the coco, segmentation and voc builders, "
                                      "not by csv")
    spec["source"] = {"builder": "coco", "path": "t.csv", "names_file": "names.txt"}
    with pytest.raises(SpecError) as raised:
        tb.load_spec(write_spec(tmp_path, spec))
    assert str(raised.value).endswith("source.names_file: `names_file` is read by the labelme, voc and yolo builders, "
                                      "not by coco")


def test_yolo_size_is_the_upright_images_when_exif_turns_it(tmp_path):
    dataset, sizes = write_yolo(tmp_path)
    turned = dataset / "images" / "train" / "rocket.jpg"
    exif = Image.Exif()
    exif[0x0112] = 6  # stored sideways: shown turned a quarter clockwise
    Image.fromarray(photo("rocket.jpg")).save(turned, quality=90, exif=exif)
    info = build(tmp_path, {"builder": "yolo", "path": "dataset", "names_file": "dataset/data.yaml"}, YOLO_EXTRA)
    record = records(info)["images/train/rocket.jpg"]
    height, width = sizes["rocket.jpg"]
    assert (record["height"], record["width"]) == (width, height)
    assert record["image"].shape[:2] == (width, height)  # as the image feature turns it upright


def test_coco_splits_each_with_its_json_and_image_folder(tmp_path):
    path = write_coco(tmp_path)
    document = json.loads(path.read_text())
    (tmp_path / "val").mkdir()
    (tmp_path / "images" / "rocket.jpg").rename(tmp_path / "val" / "rocket.jpg")
    val = {**document, "images": [image for image in document["images"] if image["file_name"] == "rocket.jpg"]}
    val["annotations"] = [a for a in document["annotations"] if a["image_id"] == val["images"][0]["id"]]
    document["images"] = [image for image in document["images"] if image["file_name"] != "rocket.jpg"]
    document["annotations"] = [a for a in document["annotations"] if a not in val["annotations"]]
    path.write_text(json.dumps(document))
    (tmp_path / "annotations" / "val.json").write_text(json.dumps(val))
    info = build(tmp_path, {"builder": "coco", "images": "images"}, COCO_EXTRA,
                 splits={"train": {"path": "annotations/instances.json"},
                         "val": {"path": "annotations/val.json", "options": {"images": "val"}}})
    assert info.spec.features["labels"].names == ["person", "cat", "cup", "rocket"]
    assert sorted(record["filename"].decode() for record in tb.read(info.path, "val")) == ["rocket.jpg"]
    assert len(list(tb.read(info.path, "train"))) == len(PHOTOS) - 1


def uncompressed_rle(mask: np.ndarray) -> dict:
    """COCO's uncompressed RLE of a 0/1 mask: run lengths down the columns, zeros first."""
    flat = mask.flatten(order="F")
    edges = np.flatnonzero(np.diff(flat)) + 1
    runs = np.diff(np.concatenate([[0], edges, [len(flat)]])).tolist()
    return {"size": list(mask.shape), "counts": ([0] if flat[0] else []) + runs}


def test_coco_instance_masks_are_one_png_per_object_equal_to_pycocotools(tmp_path):
    import io

    from pycocotools.coco import COCO

    def change(document):
        sizes = {image["id"]: (image["height"], image["width"]) for image in document["images"]}
        for annotation in document["annotations"]:
            if annotation["iscrowd"]:  # a crowd's segmentation is RLE: an ellipse inside its box
                height, width = sizes[annotation["image_id"]]
                x, y, w, h = annotation["bbox"]
                rows, columns = np.mgrid[:height, :width]
                inside = ((columns - x - w / 2) / (w / 2)) ** 2 + ((rows - y - h / 2) / (h / 2)) ** 2 <= 1
                annotation["segmentation"] = uncompressed_rle(inside.astype(np.uint8))

    path = write_coco(tmp_path, change)
    extra = {**COCO_EXTRA, "masks": {"dtype": "bytes", "shape": [None], "key": "image/object/mask"}}
    info = build(tmp_path, COCO_SOURCE, extra)
    coco = COCO(str(path))
    got = records(info)
    crowds = 0
    for image in coco.loadImgs(coco.getImgIds()):
        annotations = coco.loadAnns(coco.getAnnIds(imgIds=[image["id"]]))
        masks = got[image["file_name"]]["masks"].tolist()
        assert len(masks) == len(annotations)
        for png, annotation in zip(masks, annotations):
            pixels = np.asarray(Image.open(io.BytesIO(png)))
            np.testing.assert_array_equal(pixels, coco.annToMask(annotation))
            assert pixels.any()
            crowds += annotation["iscrowd"]
    assert crowds == 3


@pytest.mark.parametrize("key, value, expected", [
    ("iscrowd", "yes", '`iscrowd`: expected 0 or 1, received "yes"'),
    ("area", None, "`area`: expected a number, received null"),
    ("bbox", [1, 2, 3], "`bbox`: expected [x, y, width, height], received [1, 2, 3]"),
])
def test_coco_malformed_annotation_values_are_refused_not_changed(tmp_path, key, value, expected):
    def change(document):
        document["annotations"][2][key] = value

    path = write_coco(tmp_path, change)
    with pytest.raises(DataError) as raised:
        build(tmp_path, COCO_SOURCE, COCO_EXTRA)
    assert str(raised.value) == f"{path}: annotation 103: {expected}"


@pytest.mark.parametrize("layout", ["beside", "images_key"])
def test_voc_images_beside_the_xml_or_in_the_images_folder(tmp_path, layout):
    folder = write_voc(tmp_path)
    photos = tmp_path / "VOC" / "JPEGImages"
    source = {"builder": "voc", "path": "VOC/Annotations"}
    if layout == "beside":
        for path in photos.iterdir():
            path.rename(folder / path.name)
        photos.rmdir()
    else:
        photos.rename(tmp_path / "photos")
        source["images"] = "photos"
    info = build(tmp_path, source, VOC_EXTRA)
    got = records(info)
    assert sorted(got) == sorted(PHOTOS)
    assert got["chelsea.jpg"]["image"].shape == photo("chelsea.jpg").shape


def test_coco_batches_are_cut_by_the_images_bytes_not_the_plans_32(tmp_path, monkeypatch):
    """Images of no fixed size make the plan's batches 32 records; a source that knows its files'
    sizes cuts them by bytes instead (as an image folder does), up to BATCH_IMAGES images."""
    from tfrecord_builder.builders import annotations
    from tfrecord_builder.builders.coco import CocoBuilder

    path = write_coco(tmp_path)
    spec = tb.load_spec(write_spec(tmp_path, {"name": "b", "source": COCO_SOURCE, "features": features()},
                                   name="b.yaml"))
    builder = CocoBuilder(spec, str(path))
    items, _ = builder.listed()
    sizes = [(Path(builder.image_file(item, builder.context()))).stat().st_size for item in items]
    assert len(items) == 5 and min(sizes) > 1000
    monkeypatch.setattr(annotations, "BATCH_BYTES", sizes[0] + sizes[1])  # the first two images fill a batch
    assert [len(batch) for batch in builder.encoding_batches(None, ["image"], 1)][0] == 2
    monkeypatch.setattr(annotations, "BATCH_BYTES", 1)  # an image a batch
    assert [len(batch) for batch in builder.encoding_batches(None, ["image"], 32)] == [1] * 5
    monkeypatch.setattr(annotations, "BATCH_IMAGES", 3)
    monkeypatch.setattr(annotations, "BATCH_BYTES", 1 << 30)  # the plan's batch_size (1) doesn't cut them
    assert [len(batch) for batch in builder.encoding_batches(None, ["image"], 1)] == [3, 2]
