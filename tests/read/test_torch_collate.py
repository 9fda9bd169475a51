"""Our torch Dataset's `collate`: a PyTorch DataLoader's batches of records of their own sizes
(images of different sizes, their boxes, variable-length lists) equal `input_fn`'s batches of the
same records: images zero-padded at the bottom and right to the batch's largest, boxes as
fractions of the padded images, the rest stacked (or, where records differ, a list a record)."""
from __future__ import annotations

import io
import json

import numpy as np
import pytest
from PIL import Image

import tfrecord_builder as tb

from conftest import write_spec

torch_data = pytest.importorskip("torch.utils.data")

ROWS = 22


def _png(seed: int, height: int, width: int) -> bytes:
    pixels = np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "PNG")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def sized(tmp_path_factory) -> tb.Dataset:
    folder = tmp_path_factory.mktemp("sized")
    files, rows = {}, []
    for row in range(ROWS):
        height, width = 5 + row % 4 * 3, 4 + row % 5 * 2
        files[f"img/{row}.png"] = _png(row, height, width)
        boxes = [[0.1 * k, 0.05 * k, 0.1 * k + 0.5, 0.05 * k + 0.25] for k in range(row % 3)]
        rows.append({"id": row, "icon": f"img/{row}.png", "boxes": boxes, "tags": ["t"] * (row % 4),
                     "v": [row * 0.5, -row], "cat": "ab"[row % 2]})
    spec = write_spec(folder, {
        "name": "sized", "source": {"builder": "jsonl", "path": "rows.jsonl"}, "splits": {"train": 1.0},
        "features": {"id": {"dtype": "int64"},
                     "icon": {"type": "image", "encoding": "png", "shape": [None, None, 3]},
                     "boxes": {"type": "bbox", "image": "icon"},
                     "tags": {"dtype": "string", "shape": [None]},
                     "v": {"dtype": "float32", "shape": [2]},
                     "cat": {"type": "class_label", "names": ["a", "b"]}},
        "output": {"shards": 3, "shuffle": False}},
        {"rows.jsonl": "".join(json.dumps(row) + "\n" for row in rows), **files})
    return tb.load(tb.build(spec, output=folder / "out").path)


def test_the_default_collate_cant_batch_images_of_different_sizes(sized):
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        next(iter(torch_data.DataLoader(sized.torch("train"), batch_size=4)))


def test_a_dataloader_with_our_collate_gives_input_fns_batches(tf, sized):
    data = sized.torch("train")
    loader = torch_data.DataLoader(data, batch_size=4, shuffle=False, num_workers=2, collate_fn=data.collate)
    theirs = list(sized.input_fn("train", batch_size=4, shuffle=False))
    ours = list(loader)
    assert len(ours) == len(theirs) == -(-ROWS // 4)
    heights = set()
    for batch, features in zip(ours, theirs):
        assert str(batch["icon"].dtype) == "torch.uint8"
        np.testing.assert_array_equal(batch["icon"].numpy(), features["icon"].numpy())  # padded alike
        heights.add(batch["icon"].shape[1])
        assert len(batch["boxes"]) == features["boxes"].shape[0]
        for place, boxes in enumerate(batch["boxes"]):  # fractions of the padded images
            np.testing.assert_array_equal(boxes.numpy(), features["boxes"][place].numpy().reshape(-1, 4))
        assert [[bytes(tag) for tag in tags] for tags in batch["tags"]] == \
               [[bytes(tag) for tag in tags] for tags in features["tags"].to_list()]
        np.testing.assert_array_equal(batch["v"].numpy(), features["v"].numpy())
        np.testing.assert_array_equal(batch["id"].numpy(), features["id"].numpy())
        np.testing.assert_array_equal(batch["cat"].numpy(), features["cat"].numpy())
    assert len(heights) > 1  # batches of different padded sizes: the images did differ
    # a box was scaled: some image in a batch is smaller than the batch's largest and has boxes
    raw = [sized.record("train", index) for index in range(4)]
    assert any(not np.array_equal(boxes.numpy(), record["boxes"]) for boxes, record in zip(ours[0]["boxes"], raw)
               if len(record["boxes"]))


def test_our_collate_batches_an_iterable_dataset_of_compressed_shards(tmp_path):
    spec = write_spec(tmp_path, {"name": "gz", "source": {"builder": "jsonl", "path": "r.jsonl"},
                                 "features": {"id": {"dtype": "int64"}, "tags": {"dtype": "string", "shape": [None]}},
                                 "output": {"shards": 2, "compression": "gzip", "shuffle": False}},
                      {"r.jsonl": "".join(json.dumps({"id": row, "tags": ["x"] * (row % 3)}) + "\n"
                                          for row in range(10))})
    data = tb.load(tb.build(spec, output=tmp_path / "out").path).torch("train")
    assert isinstance(data, torch_data.IterableDataset)
    batches = list(torch_data.DataLoader(data, batch_size=4, collate_fn=data.collate))
    assert [batch["id"].tolist() for batch in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert [len(tags) for batch in batches for tags in batch["tags"]] == [row % 3 for row in range(10)]
