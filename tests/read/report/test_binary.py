"""Binary values and sparse classes on the page: COCO instance masks (one PNG an object) show as
what they are ("PNG 64×48") with their sizes and as thumbnails, never as bytes, and the page holds
no control character; a label of 80 classes with 5 present draws 5 bars, most frequent first,
and says how many classes have none. Checked against the records read back with `tb.read` and
Pillow's decoding of the same PNGs."""
from __future__ import annotations

import dataclasses
import gzip
import io
import wave
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import tfrecord_builder as tb
from tfrecord_builder.read.report import report, report_data
from tfrecord_builder.read.report.binary import decoded, described, shown
from tfrecord_builder.read.report.data import Contents
from tfrecord_builder.read.report.thumbnails import mask_colours
from tfrecord_builder.read.report.wording import span
from tfrecord_builder.write.info import read_info

from conftest import write_spec
from support.coco_masks import NUM_CATEGORIES, OBJECT_CATEGORIES, build_coco_masks

from .browser import CONTROL

pytest.importorskip("pycocotools")

IMAGES, PER_IMAGE = 6, 3


@pytest.fixture(scope="module")
def coco(tmp_path_factory) -> Path:
    return Path(build_coco_masks(tmp_path_factory.mktemp("coco-masks"), images=IMAGES, per_image=PER_IMAGE).path)


def _feature(data, name):
    return next(feature for feature in data.features if feature.name == name)


def _masks(path: Path) -> list[bytes]:
    return [png for record in tb.read(path, "train") for png in record["masks"].tolist()]


def test_instance_masks_show_as_what_they_are_and_the_page_holds_no_control_character(coco):
    page = report(coco, sample=None)
    assert CONTROL.search(page) is None
    assert "IHDR" not in page and "\\x89PNG" not in page  # no PNG, raw or escaped
    masks = _masks(coco)
    assert len(masks) == IMAGES * PER_IMAGE
    data = report_data(read_info(str(coco)), sample=None)
    feature = _feature(data, "masks")
    assert feature.kind == "binary" and feature.top_values == {}
    assert feature.contents == [Contents("train", [("PNG 64×48", len(masks))], len(masks), len(masks))]
    sizes = np.array([len(png) for png in masks])
    expected = span({"min": int(sizes.min()), "max": int(sizes.max()), "mean": sizes.mean(), "std": sizes.std()})
    assert dict(feature.rows)["bytes a value"] == {"train": expected}
    assert dict(feature.rows)["values"] == {"train": str(len(masks))}
    assert '<span class="badge kind-binary">binary</span>' in page
    assert f'<td class="value">PNG 64×48</td><td class=n>{len(masks)}</td>' in page
    assert f"what the {len(masks)} values read are" in page


def test_the_images_among_binary_values_are_thumbnails_masks_in_class_colours(coco):
    data = report_data(read_info(str(coco)), sample=None)
    (grid,) = _feature(data, "masks").images
    thumbnails = [image for _, row in grid.rows for image in row]
    first = _masks(coco)[:16]
    assert len(thumbnails) == len(first) == 16
    for thumbnail, png in zip(thumbnails, first):
        pixels = np.asarray(Image.open(io.BytesIO(png)))
        assert pixels.shape == (48, 64) and set(np.unique(pixels)) == {0, 1}
        np.testing.assert_array_equal(thumbnail, mask_colours(pixels))
    assert grid.note == "the first 16 values that are images, decoded"
    assert "(masks) are shown in class colours, 0 black" in grid.shown
    page = report(coco, sample=None)
    assert 'data-file="masks-images-train.png"' in page


def test_binary_values_are_named_by_their_kind_or_their_size_and_text_stays_text():
    def png(pixels: np.ndarray) -> bytes:
        buffer = io.BytesIO()
        Image.fromarray(pixels).save(buffer, format="PNG")
        return buffer.getvalue()

    mask = png(np.zeros((48, 64), np.uint8))
    assert described(mask) == "PNG 64×48" and shown(mask) == f"<PNG 64×48, {len(mask):,} bytes>"
    photo = io.BytesIO()
    Image.fromarray(np.full((30, 40, 3), 200, np.uint8)).save(photo, format="JPEG")
    assert shown(photo.getvalue()) == f"<JPEG 40×30, {len(photo.getvalue()):,} bytes>"
    sound = io.BytesIO()
    with wave.open(sound, "wb") as file:
        file.setnchannels(1), file.setsampwidth(2), file.setframerate(8000), file.writeframes(b"\0\0" * 100)
    assert shown(sound.getvalue()) == f"<WAV audio, {len(sound.getvalue())} bytes>"
    assert described(gzip.compress(b"text")) == "gzip data"
    noise = bytes(np.random.default_rng(0).integers(0, 256, 1276, dtype=np.uint8))
    assert shown(noise) == "<1,276 bytes>"
    assert shown("café\tau lait\n".encode()) == "café\tau lait\n"
    assert shown(b"a\x00b") == "<3 bytes>"
    deep = np.arange(12, dtype=np.uint16).reshape(3, 4) * 5000
    np.testing.assert_array_equal(decoded(png(deep)), deep)  # 16 bits kept
    assert decoded(noise) is None


def test_a_label_of_80_classes_draws_the_classes_present_most_frequent_first(coco):
    objects = [OBJECT_CATEGORIES[index % len(OBJECT_CATEGORIES)] for index in range(IMAGES * PER_IMAGE)]
    counts = Counter(category - 1 for category in objects)  # ids 1..80: class index id - 1
    expected = sorted(counts, key=lambda index: (-counts[index], index))
    assert len(expected) == 5
    data = report_data(read_info(str(coco)), sample=None)
    balance = _feature(data, "labels").classes
    assert len(balance.names) == NUM_CATEGORIES and balance.shown == expected
    assert (balance.present, balance.absent) == (5, 75)
    assert data.objects[0].classes.shown == expected  # the Objects card's bars too
    rows = dict(_feature(data, "labels").rows)
    assert rows["classes present"] == {"train": f"5 of {NUM_CATEGORIES}"}
    smallest = expected[-1]
    assert rows["smallest class present"] == {"train": f"class{smallest + 1} ({100 * counts[smallest] / len(objects):.1f}%)"}
    page = report(coco, sample=None)
    assert "The bars: the 5 classes present, most frequent first; 75 of the 80 classes have no values." in page
    assert "75 of the 80 classes have no objects." in page
    # the full table keeps every class, the absent ones with 0
    table = page.split("Values per class, all 80 classes", 1)[1].split("</details>", 1)[0]
    assert table.count("<tr><td>") == NUM_CATEGORIES
    assert '<tr><td>79</td><td>class80</td><td class=n>0 <span class="share">0.0%</span></td></tr>' in table


def test_statistics_of_an_older_build_holding_masks_as_top_values_show_no_bytes(coco):
    """Statistics of earlier builds kept binary values in a vocabulary, the top values decoded with
    backslashreplace (NUL kept): the sample finds the values binary, and the page shows none of them."""
    info = read_info(str(coco))
    masks = _masks(coco)
    older = {split: {**items, "masks": {"num_values": len(masks), "vocabulary_size": len(masks),
                                        "top_values": [{"value": png.decode("utf-8", "backslashreplace"), "count": 1}
                                                       for png in sorted(masks)[:10]],
                                        "length": items["masks"]["length"]}}
             for split, items in info.statistics.items()}
    page = report(dataclasses.replace(info, statistics=older), sample=None)
    assert CONTROL.search(page) is None and "IHDR" not in page
    assert '<span class="badge kind-binary">binary</span>' in page


def test_text_values_over_256_bytes_keep_no_vocabulary_and_the_page_says_so(tmp_path):
    rows = ["text"] + ["short"] * 3 + ["x" * 300, "y" * 257]
    spec = {"name": "essays", "source": {"builder": "csv", "path": "rows.csv"},
            "features": {"text": {"dtype": "string"}}, "output": {"shards": 1}}
    info = tb.build(write_spec(tmp_path, spec, {"rows.csv": "\n".join(rows) + "\n"}), output=tmp_path / "out", workers=1)
    data = report_data(info, sample=None)
    feature = _feature(data, "text")
    assert feature.kind == "string" and feature.top_values == {}
    assert dict(feature.rows)["bytes a value"] == {"train": span(info.statistics["train"]["text"]["value_bytes"])}
    assert info.statistics["train"]["text"]["value_bytes"]["max"] == 300
    assert "No vocabulary or most frequent values: the build counts them only while every value is text of at " \
           "most 256 bytes" in report(info, sample=None)
