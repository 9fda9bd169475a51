"""`inspect` on binary values and sparse classes: a COCO build's instance masks (one PNG an object)
show as `<PNG 64×48, 1,276 bytes>`, never as 12 KB of escaped bytes a record, in a dataset's
examples and a lone shard's records alike; its statistics give the masks' sizes, and of its 80
classes the 5 present, most frequent first."""
from __future__ import annotations

import io
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image

import tfrecord_builder as tb
from tfrecord_builder.write.info import read_info

from support.cli import assert_ok, run_cli, show
from support.coco_masks import NUM_CATEGORIES, OBJECT_CATEGORIES, build_coco_masks

pytest.importorskip("pycocotools")

IMAGES, PER_IMAGE = 4, 3


@pytest.fixture(scope="module")
def coco(tmp_path_factory) -> Path:
    return Path(build_coco_masks(tmp_path_factory.mktemp("coco-masks"), images=IMAGES, per_image=PER_IMAGE).path)


def _png_text(png: bytes) -> str:
    width, height = Image.open(io.BytesIO(png)).size
    return f"<PNG {width}×{height}, {len(png):,} bytes>"


def _lines(stdout: str, prefix: str) -> list[dict]:
    return [json.loads(line.split(": ", 1)[1]) for line in stdout.splitlines() if re.match(rf"{prefix} \d+: ", line)]


def test_show_gives_each_mask_as_what_it_is_never_its_bytes(coco):
    result = run_cli("inspect", coco, "--show", "2", cwd=coco)
    assert_ok(result)
    assert "IHDR" not in result.stdout and "\\x89" not in result.stdout and "\\u0000" not in result.stdout, show(result)
    records = list(tb.read(coco, "train"))[:2]
    shown = _lines(result.stdout, "example")
    assert [example["masks"] for example in shown] == [[_png_text(png) for png in record["masks"].tolist()]
                                                       for record in records]
    assert all(mask.startswith("<PNG 64×48, ") for example in shown for mask in example["masks"])
    (shard,) = read_info(str(coco)).splits["train"].shards
    result = run_cli("inspect", coco / shard["file"], "--show", "1", cwd=coco)
    assert_ok(result)
    (record,) = _lines(result.stdout, "record")
    assert record["image/object/mask"] == [_png_text(png) for png in records[0]["masks"].tolist()]
    assert re.fullmatch(r"<JPEG 64×48, [\d,]+ bytes>", record["image"][0])  # the stored photo too


def test_statistics_give_the_masks_sizes_and_the_classes_present_most_frequent_first(coco):
    result = run_cli("inspect", coco, cwd=coco)
    assert_ok(result)
    masks = [png for record in tb.read(coco, "train") for png in record["masks"].tolist()]
    sizes = [len(png) for png in masks]
    assert (f"  masks: {len(masks)} binary values, {min(sizes):,}-{max(sizes):,} bytes "
            f"(mean {sum(sizes) / len(sizes):,.1f}); length 3-3 (mean 3.0)") in result.stdout.splitlines(), show(result)
    counts = Counter(OBJECT_CATEGORIES[index % len(OBJECT_CATEGORIES)] for index in range(IMAGES * PER_IMAGE))
    present = ", ".join(f"class{category} {count}" for category, count in
                        sorted(counts.items(), key=lambda item: (-item[1], item[0])))
    absent = NUM_CATEGORIES - len(counts)
    assert f"  labels: classes {present} ({absent} of {NUM_CATEGORIES} classes have none)" in result.stdout.splitlines(), \
        show(result)
