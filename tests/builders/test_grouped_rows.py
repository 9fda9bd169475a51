"""Rows grouped into one Example: `source.group_by` on a `format: example` spec.

A feature of shape `[null]` or `[null, k]` takes every row's value of its group (source order, or
`order_by`); any other feature must have one value per group. CSV, JSONL, Parquet and image
manifests; records come out by group key, as a long table's sequences do.
"""
from __future__ import annotations

import csv
import io
import json
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

import tfrecord_builder as tb

from conftest import batches_as_numpy, import_module, write_spec

# one box per row: a.jpg has two, b.jpg one, c.jpg none (a row with its box columns empty)
ROWS = [
    {"filename": "b.jpg", "label": "cat", "xmin": 1.5, "ymin": 2.0, "xmax": 3.0, "ymax": 4.0, "score": 7},
    {"filename": "a.jpg", "label": "dog", "xmin": 5.0, "ymin": 6.0, "xmax": 7.0, "ymax": 8.25, "score": 3},
    {"filename": "c.jpg", "label": None, "xmin": None, "ymin": None, "xmax": None, "ymax": None, "score": None},
    {"filename": "a.jpg", "label": "cat", "xmin": 9.0, "ymin": 10.0, "xmax": 11.0, "ymax": 12.5, "score": 1},
]
EXPECTED = {  # by group, the rows' values in source order
    "a.jpg": (["dog", "cat"], [[5.0, 6.0, 7.0, 8.25], [9.0, 10.0, 11.0, 12.5]], [3, 1]),
    "b.jpg": (["cat"], [[1.5, 2.0, 3.0, 4.0]], [7]),
    "c.jpg": ([], [], []),
}
FEATURES = {
    "filename": {"dtype": "string"},
    "label": {"dtype": "string", "shape": [None]},
    "box": {"dtype": "float32", "shape": [None, 4], "columns": ["xmin", "ymin", "xmax", "ymax"]},
    "score": {"dtype": "int64", "shape": [None]},
}


def _csv(rows, header=None) -> str:
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=header or list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows([{key: "" if value is None else value for key, value in row.items()} for row in rows])
    return text.getvalue()


def _spec(builder, path, features=None, **source):
    return {"name": "boxes", "source": {"builder": builder, "path": path, "group_by": "filename", **source},
            "features": features or FEATURES, "output": {"shards": 1, "shuffle": False}}


def _check(info):
    """tb.read, tb.input_fn and the generated module give each group's values, groups by key."""
    records = list(tb.read(info.path, "train"))
    assert [record["filename"].decode() for record in records] == sorted(EXPECTED)
    for record in records:
        labels, boxes, scores = EXPECTED[record["filename"].decode()]
        assert [label.decode() for label in record["label"]] == labels
        assert record["box"].dtype == np.float32 and record["box"].shape == (len(boxes), 4)
        assert record["box"].tolist() == boxes
        assert record["score"].tolist() == scores
    module = import_module(f"{info.path}/boxes_input.py")
    for dataset in (tb.input_fn(info.path, "train", batch_size=3, shuffle=False),
                    module.input_fn("train", batch_size=3, shuffle=False)):
        (batch,) = batches_as_numpy(dataset)
        assert [name.decode() for name in batch["filename"]] == sorted(EXPECTED)
        assert batch["box"] == [EXPECTED[name][1] for name in sorted(EXPECTED)]
        assert [[label.decode() for label in labels] for labels in batch["label"]] == \
            [EXPECTED[name][0] for name in sorted(EXPECTED)]
        assert batch["score"] == [EXPECTED[name][2] for name in sorted(EXPECTED)]
    return records


def test_a_csv_of_one_box_per_row_makes_one_example_per_file(tf, tmp_path):
    path = write_spec(tmp_path, _spec("csv", "boxes.csv"), {"boxes.csv": _csv(ROWS)})
    info = tb.build(path, output=tmp_path / "out")
    assert info.splits["train"].num_examples == 3
    _check(info)


def test_jsonl_rows_with_a_list_a_row_fill_a_null_k_feature(tf, tmp_path):
    """A JSON list of 4 per row (not four columns) fills shape [null, 4] too; an absent or null box
    adds none."""
    rows = [{"filename": row["filename"], "label": row["label"], "score": row["score"],
             **({"box": [row[key] for key in ("xmin", "ymin", "xmax", "ymax")]} if row["xmin"] is not None else {})}
            for row in ROWS]
    text = "".join(json.dumps(row) + "\n" for row in rows)
    features = {**FEATURES, "box": {"dtype": "float32", "shape": [None, 4]}}
    info = tb.build(write_spec(tmp_path, _spec("jsonl", "boxes.jsonl", features), {"boxes.jsonl": text}),
                    output=tmp_path / "out")
    _check(info)


def test_parquet_rows_are_grouped(tf, tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist(ROWS)
    pq.write_table(table, tmp_path / "boxes.parquet", row_group_size=2)  # a group across row groups
    info = tb.build(write_spec(tmp_path, _spec("parquet", "boxes.parquet")), output=tmp_path / "out")
    _check(info)


def _photos(folder):
    """Three real photographs as JPEG files; {name: pixels as Pillow reads the file}."""
    from skimage import data

    folder.mkdir(parents=True, exist_ok=True)
    pixels = {}
    for name, image in (("a.jpg", data.astronaut()), ("b.jpg", data.coffee()), ("c.jpg", data.chelsea())):
        small = Image.fromarray(image).resize((image.shape[1] // 4, image.shape[0] // 4))
        small.save(folder / name, quality=90)
        pixels[name] = np.asarray(Image.open(folder / name))
    return pixels


def test_an_image_manifest_of_one_box_per_row_gives_each_photo_its_boxes(tf, tmp_path):
    """The image path repeats on each of a photo's rows: one image per record; a photo without boxes
    (a row with its box columns empty) is a record with none."""
    pixels = _photos(tmp_path / "data" / "photos")
    rows = [{"filename": row["filename"], "path": f"photos/{row['filename']}",
             **{key: value for key, value in row.items() if key != "filename"}} for row in ROWS]
    features = {**FEATURES, "image": {"type": "image", "encoding": "jpeg", "source": "path"}}
    spec = _spec("image_manifest", "../data/boxes.csv", features)
    (tmp_path / "data" / "boxes.csv").write_text(_csv(rows))
    info = tb.build(write_spec(tmp_path / "specs", spec), output=tmp_path / "out")
    records = _check(info)
    for record in records:
        np.testing.assert_array_equal(record["image"], pixels[record["filename"].decode()])
    module = import_module(f"{info.path}/boxes_input.py")
    (batch,) = batches_as_numpy(module.input_fn("train", batch_size=3, shuffle=False))
    for index, name in enumerate(sorted(EXPECTED)):
        height, width, _ = pixels[name].shape
        assert batch["image"][index][:height, :width].shape == pixels[name].shape


def test_order_by_orders_each_groups_values(tf, tmp_path):
    rows = [{"filename": "a", "t": t, "v": f"a{t}"} for t in (10, 2, 9, 1)] + \
        [{"filename": "b", "t": t, "v": f"b{t}"} for t in (3, 1)]
    random.Random(3).shuffle(rows)
    spec = _spec("csv", "rows.csv", {"filename": {"dtype": "string"}, "v": {"dtype": "string", "shape": [None]},
                                     "t": {"dtype": "int64", "shape": [None]}}, order_by="t")
    info = tb.build(write_spec(tmp_path, spec, {"rows.csv": _csv(rows)}), output=tmp_path / "out")
    got = {record["filename"].decode(): ([v.decode() for v in record["v"]], record["t"].tolist())
           for record in tb.read(info.path, "train")}
    assert got == {"a": (["a1", "a2", "a9", "a10"], [1, 2, 9, 10]), "b": (["b1", "b3"], [1, 3])}


def test_a_scalar_feature_with_two_values_in_a_group_names_the_file_row_group_and_both(tmp_path):
    rows = [{"filename": "a.jpg", "width": 640, "label": "cat"}, {"filename": "b.jpg", "width": 10, "label": "x"},
            {"filename": "a.jpg", "width": 480, "label": "dog"}]
    spec = _spec("csv", "boxes.csv", {"width": {"dtype": "int64"}, "label": {"dtype": "string", "shape": [None]}})
    with pytest.raises(tb.DataError) as caught:
        tb.build(write_spec(tmp_path, spec, {"boxes.csv": _csv(rows)}), output=tmp_path / "out")
    assert str(caught.value) == ("boxes.csv, line 4: feature `width` differs within filename 'a.jpg' ('640', then "
                                 "'480'); expected one value per group (a feature of shape [null] takes every "
                                 "row's)")


def test_a_box_with_some_columns_empty_is_an_error_naming_its_row(tmp_path):
    rows = [dict(ROWS[0]), dict(ROWS[1], ymax=None)]
    with pytest.raises(tb.DataError) as caught:
        tb.build(write_spec(tmp_path, _spec("csv", "boxes.csv"), {"boxes.csv": _csv(rows)}), output=tmp_path / "out")
    assert str(caught.value).startswith("boxes.csv, line 3: feature `box`, column `ymax`: missing value")


def test_a_misspelt_column_is_an_error_not_empty_groups(tmp_path):
    features = {**FEATURES, "label": {"dtype": "string", "shape": [None], "source": "lable"}}
    with pytest.raises(tb.DataError, match=r"boxes\.csv: feature `label`: no column `lable` in the source"):
        tb.build(write_spec(tmp_path, _spec("csv", "boxes.csv", features), {"boxes.csv": _csv(ROWS)}),
                 output=tmp_path / "out")


def test_an_empty_group_key_is_an_error(tmp_path):
    rows = [dict(ROWS[0]), dict(ROWS[1], filename=None)]
    with pytest.raises(tb.DataError, match=r"^boxes\.csv, line 3: `filename` is empty; every row needs its group$"):
        tb.build(write_spec(tmp_path, _spec("csv", "boxes.csv"), {"boxes.csv": _csv(rows)}), output=tmp_path / "out")


def test_groups_stay_whole_across_fraction_splits(tf, tmp_path):
    rows = [{"filename": f"g{index % 13}", "v": index} for index in range(60)]
    spec = _spec("csv", "rows.csv", {"filename": {"dtype": "string"}, "v": {"dtype": "int64", "shape": [None]}})
    spec["splits"] = {"train": 0.5, "test": 0.5}
    info = tb.build(write_spec(tmp_path, spec, {"rows.csv": _csv(rows)}), output=tmp_path / "out")
    got = {}
    for split in ("train", "test"):
        for record in tb.read(info.path, split):
            got[record["filename"].decode()] = record["v"].tolist()
    assert got == {f"g{group}": list(range(group, 60, 13)) for group in range(13)}
    assert info.splits["train"].num_examples and info.splits["test"].num_examples


def test_the_spec_rules_of_grouped_rows(tmp_path):
    files = {"boxes.csv": _csv(ROWS)}
    # a long table (sequence_example) still needs order_by; order_by alone is refused
    sequence = {"name": "s", "format": "sequence_example",
                "source": {"builder": "csv", "path": "boxes.csv", "group_by": "filename"},
                "sequence": {"score": {"dtype": "int64"}}}
    with pytest.raises(tb.SpecError, match=r"source: a long table needs both `group_by` and `order_by`"):
        tb.load_spec(write_spec(tmp_path, sequence, files))
    alone = _spec("csv", "boxes.csv")
    alone["source"] = {"builder": "csv", "path": "boxes.csv", "order_by": "score"}
    with pytest.raises(tb.SpecError, match=r"source: a long table needs both `group_by` and `order_by`"):
        tb.load_spec(write_spec(tmp_path, alone, files))
    # [null, k] from k columns needs groups of rows
    ungrouped = _spec("csv", "boxes.csv")
    del ungrouped["source"]["group_by"]
    with pytest.raises(tb.SpecError, match=r"features\.box\.shape: shape \[null, 4\] with `columns:` takes the "
                                           r"columns of every row of a group \(source\.group_by\)"):
        tb.load_spec(write_spec(tmp_path, ungrouped, files))
    # a column feeds one value per group or every row's, not both
    both = _spec("csv", "boxes.csv", {**FEATURES, "labels": {"dtype": "string", "source": "filename",
                                                             "shape": [None]}})
    with pytest.raises(tb.SpecError, match=r"features\.labels: column `filename` already feeds feature `filename`"):
        tb.load_spec(write_spec(tmp_path, both, files))


@pytest.mark.parametrize("kind", ["csv", "jsonl"])  # (JSONL: Arrow's fast reader, or json.loads)
@settings(max_examples=12, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from(["k0", "k1", "k2", "k10", "x"]), st.integers(-1000, 1000),
                               st.one_of(st.none(), st.integers(0, 5))), min_size=1, max_size=25))
def test_records_are_a_plain_groupby_of_the_rows(tmp_path_factory, kind, rows):
    """Whatever the rows, the records are Python's grouping of them: groups by key, each group's
    values in source order (a missing value adds none)."""
    folder = tmp_path_factory.mktemp("groups")
    table = [{"filename": key, "v": value, "w": other} for key, value, other in rows]
    text = _csv(table) if kind == "csv" else "".join(json.dumps(row) + "\n" for row in table)
    spec = _spec(kind, f"rows.{kind}", {"filename": {"dtype": "string"}, "v": {"dtype": "int64", "shape": [None]},
                                        "w": {"dtype": "int64", "shape": [None]}})
    info = tb.build(write_spec(folder, spec, {f"rows.{kind}": text}), output=folder / "out")
    expected: dict[str, tuple[list[int], list[int]]] = {}
    for key, value, other in rows:
        values, others = expected.setdefault(key, ([], []))
        values.append(value)
        if other is not None:
            others.append(other)
    got = [(record["filename"].decode(), record["v"].tolist(), record["w"].tolist())
           for record in tb.read(info.path, "train")]
    assert got == [(key, *expected[key]) for key in sorted(expected)]


def test_on_error_skip_leaves_out_the_group_of_a_bad_row_and_lists_it(tmp_path):
    rows = [dict(ROWS[0]), dict(ROWS[1], ymax="x"), dict(ROWS[2]), dict(ROWS[3])]
    spec = {**_spec("csv", "boxes.csv"), "on_error": "skip"}
    info = tb.build(write_spec(tmp_path, spec, {"boxes.csv": _csv(rows)}), output=tmp_path / "out")
    assert [record["filename"] for record in tb.read(info.path, "train")] == [b"b.jpg", b"c.jpg"]
    listed = (tmp_path / "out" / "boxes" / "1.0.0" / "skipped.jsonl").read_text()
    skipped = [json.loads(line) for line in listed.splitlines()]
    assert skipped == [{"record": "boxes.csv, filename, key 'a.jpg'",
                        "reason": "boxes.csv, line 3: feature `box`, column `ymax`: expected a number (float32), "
                                  "received 'x'"}]


def test_groups_encoded_in_worker_processes_are_the_same(tmp_path):
    """More groups than a batch holds (4,096 with a [null, k] feature): the later batches are encoded
    in workers (their rows pickled)."""
    rows = [{"filename": f"g{index % 5000:04d}", "v": index, "w": f"{index}.5"} for index in range(10000)]
    spec = _spec("csv", "rows.csv", {"filename": {"dtype": "string"}, "v": {"dtype": "int64", "shape": [None]},
                                     "vw": {"dtype": "float32", "shape": [None, 2], "columns": ["v", "w"]}})
    info = tb.build(write_spec(tmp_path, spec, {"rows.csv": _csv(rows)}), output=tmp_path / "out", workers=2)
    records = list(tb.read(info.path, "train"))
    assert len(records) == 5000
    for group, record in enumerate(records):
        assert record["filename"].decode() == f"g{group:04d}"
        assert record["v"].tolist() == [group, group + 5000]
        assert record["vw"].tolist() == [[group, group + 0.5], [group + 5000, group + 5000.5]]


def test_the_new_users_csv_of_boxes_builds_one_example_a_photo_with_bbox_and_class_label(tf, tmp_path):
    """The issue's case: an image manifest with one box per row, grouped by file, boxes given in
    pixels as four columns: each photo's boxes come back as fractions [ymin, xmin, ymax, xmax] of
    its size, its labels as class indices, a photo without boxes as none."""
    pixels = _photos(tmp_path / "data" / "photos")
    rows = [{"filename": row["filename"], "path": f"photos/{row['filename']}",
             **{key: value for key, value in row.items() if key != "filename"}} for row in ROWS]
    (tmp_path / "data" / "boxes.csv").write_text(_csv(rows))
    features = {
        "image": {"type": "image", "encoding": "jpeg", "source": "path"},
        "filename": {"dtype": "string"},
        "objects": {"type": "bbox", "columns": ["xmin", "ymin", "xmax", "ymax"], "format": "xyxy",
                    "units": "pixels", "image": "image"},
        "labels": {"type": "class_label", "shape": [None], "source": "label", "names": ["cat", "dog"]},
    }
    spec = _spec("image_manifest", "../data/boxes.csv", features)
    info = tb.build(write_spec(tmp_path / "specs", spec), output=tmp_path / "out")
    records = {record["filename"].decode(): record for record in tb.read(info.path, "train")}
    assert sorted(records) == sorted(EXPECTED)
    for name, (labels, boxes, _) in EXPECTED.items():
        height, width, _ = pixels[name].shape
        expected = np.array([[ymin / height, xmin / width, ymax / height, xmax / width]
                             for xmin, ymin, xmax, ymax in boxes], np.float32).reshape(-1, 4)
        np.testing.assert_array_equal(records[name]["objects"], expected)
        assert records[name]["labels"].tolist() == [["cat", "dog"].index(label) for label in labels]
        np.testing.assert_array_equal(records[name]["image"], pixels[name])


def test_a_grouped_batch_names_the_columns_that_hold_each_rows_value(tmp_path):
    """The batch says which of its columns hold a group's rows (`Batch.grouped`): those of the
    features taking every row's value, not the group's one filename; a part of it keeps them."""
    from tfrecord_builder.build.encode_batch import encode_batch
    from tfrecord_builder.builders.base import Batch
    from tfrecord_builder.builders.long_table import grouped_batches

    spec = tb.load_spec(write_spec(tmp_path, _spec("csv", "boxes.csv"), {"boxes.csv": _csv(ROWS)}))
    rows = Batch(keys=list(range(len(ROWS))), columns={key: [row[key] for row in ROWS] for key in ROWS[0]},
                 origin=lambda row: f"boxes.csv, line {row + 2}", source="boxes.csv")
    (batch,) = grouped_batches([rows], spec, 64)
    assert batch.grouped == {"label", "xmin", "ymin", "xmax", "ymax", "score"}
    assert batch.select([0, 2], ["filename", "score"]).grouped == {"score"} and not batch.without_columns().grouped
    encoded = encode_batch(spec.features, batch).values
    assert encoded["score"]["score"].values.tolist() == [3, 1, 7] and encoded["score"]["score"].counts.tolist() == [2, 1, 0]
    assert encoded["filename"]["filename"].values == [b"a.jpg", b"b.jpg", b"c.jpg"]
