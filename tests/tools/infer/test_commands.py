"""`infer` on the real command line, for every kind of source: infer -> validate -> build with no
hand edits, then the built records read back and checked value by value.

Each test builds one small dataset whose columns hold several of the cases infer must get right
(odd column names, missing cells, NA spellings, list cells, booleans, ids, mixed columns,
images), so a build in a subprocess checks many guesses at once.
"""
from __future__ import annotations

import csv
import datetime
import io
import math
import random
from pathlib import Path

import numpy as np
import pytest
import yaml

from support.cli import assert_ok, run_cli, show

from .helpers import (all_records, by_key, comment, infer_validate_build, pixels, write_image,
                      write_jsonl)

SPLITS = {"train": 0.8, "test": 0.2}
KINDS = ["setosa", "versicolor", "virginica"]


def _table_csv(rows: list[list[str]]) -> str:
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(["id", "petal length (cm)", "2nd", "class", "flag", "score", "tags", "point", "ozone",
                     "mixed", "note"])
    writer.writerows(rows)
    return text.getvalue()


def _table_rows() -> list[list[str]]:
    rows = []
    for i in range(12):
        tags = ["red big", "", '["light blue", "x"]', "small"][i % 4]
        ozone = "NA" if i in (2, 7) else ("" if i == 5 else str(10 * i))
        rows.append([str(100 + i), f"{1 + i / 10:g}", str(i * i), KINDS[i % 3], ["true", "FALSE"][i % 2],
                     str(i) if i % 2 else f"{i + 0.25}", tags, f"{i} {i + 0.5}", ozone,
                     "abc" if i == 4 else str(i), "" if i == 3 else f"note {i}"])
    return rows


def test_a_csv_becomes_a_spec_that_builds_with_its_values(tmp_path):
    """Non-identifier names get `source:`; missing cells and NA take defaults; a list cell's shape;
    booleans; floats beside ints; an id keys the rows; a column of numbers and words stays text;
    the spec's data path is relative to the spec's folder, so it builds from anywhere."""
    rows = _table_rows()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "iris rows.csv").write_text(_table_csv(rows), encoding="utf-8")
    (tmp_path / "elsewhere").mkdir()
    text, spec, records = infer_validate_build(tmp_path, "data/iris rows.csv", spec="specs/iris.yaml")

    assert spec["name"] == "iris_rows"
    assert spec["source"] == {"builder": "csv", "path": "../data/iris rows.csv", "key": "id",
                              "options": {"na_values": ["NA"]}}
    assert spec["splits"] == SPLITS
    assert spec["features"] == {
        "id": {"dtype": "int64"},
        "petal_length_cm": {"dtype": "float32", "source": "petal length (cm)"},
        "_2nd": {"dtype": "int64", "source": "2nd"},
        "class_": {"type": "class_label", "names": KINDS, "source": "class"},
        "flag": {"dtype": "bool"},
        "score": {"dtype": "float32"},
        "tags": {"dtype": "string", "shape": [None]},
        "point": {"dtype": "float32", "shape": [2]},
        "ozone": {"dtype": "int64", "default": -1},
        "mixed": {"dtype": "string"},
        "note": {"dtype": "string", "default": ""},
    }
    assert spec["label"] == "class_"
    # the guesses say so, beside their lines
    assert comment(text, "class_:") == "guessed: 3 distinct values in 12 rows"
    assert comment(text, "label:").startswith("guessed: named `class`")
    assert comment(text, "key:").startswith("guessed: unique in all 12 rows")
    assert comment(text, "options:").startswith("guessed: NA among numbers in `ozone`")
    assert comment(text, "ozone:") == ("guessed: 3 of 12 rows missing -> default -1, a value the data never holds "
                                       "(its least value is 0), so a gap stays recognisable as int64 (for NaN "
                                       "instead: dtype float32, default .nan, allow_nan true)")
    assert comment(text, "mixed:") == "mixed: numbers (line 2: '0') and text (line 6: 'abc'); kept as text"
    assert comment(text, "splits:").startswith("change as you need")
    assert text.startswith("# Written by `tfrecord-builder infer` from iris rows.csv: all 12 rows read.\n")

    found = by_key(records, "id")
    assert sorted(found) == list(range(100, 112))
    assert len(records["train"]) > len(records["test"]) > 0
    for i, row in enumerate(rows):
        record = found[100 + i]
        assert record["petal_length_cm"] == np.float32(1 + i / 10)
        assert record["_2nd"] == i * i
        assert record["class_"] == i % 3
        assert bool(record["flag"]) is (i % 2 == 0)
        assert record["score"] == np.float32(i if i % 2 else i + 0.25)
        assert [tag.decode() for tag in record["tags"]] == [["red", "big"], [], ["light blue", "x"], ["small"]][i % 4]
        assert record["point"].tolist() == [i, i + 0.5]
        assert record["ozone"] == (-1 if i in (2, 5, 7) else 10 * i)
        assert record["mixed"] == (b"abc" if i == 4 else str(i).encode())
        assert record["note"] == (b"" if i == 3 else f"note {i}".encode())

    # the spec builds as well from another working directory: its paths are its own
    again = run_cli("build", tmp_path / "specs" / "iris.yaml", "--output", tmp_path / "again", "--workers", "1",
                    cwd=tmp_path / "elsewhere")
    assert_ok(again)
    assert (tmp_path / "again" / "iris_rows" / "1.0.0" / "dataset_info.json").is_file()


def test_without_o_the_spec_goes_to_stdout_and_o_refuses_to_overwrite(tmp_path):
    (tmp_path / "rows.csv").write_text(_table_csv(_table_rows()), encoding="utf-8")
    printed = run_cli("infer", "rows.csv", cwd=tmp_path)
    assert_ok(printed)
    written = run_cli("infer", "rows.csv", "-o", "rows.yaml", cwd=tmp_path)
    assert_ok(written)
    assert printed.stdout == (tmp_path / "rows.yaml").read_text(encoding="utf-8")  # same folder: same paths
    (tmp_path / "rows.yaml").write_text("# edited by hand\n", encoding="utf-8")
    refused = run_cli("infer", "rows.csv", "-o", "rows.yaml", cwd=tmp_path)
    assert (refused.returncode, refused.stderr) == (2, "error: rows.yaml already exists; pass --overwrite to "
                                                       "replace it\n"), show(refused)
    assert (tmp_path / "rows.yaml").read_text(encoding="utf-8") == "# edited by hand\n"
    replaced = run_cli("infer", "rows.csv", "-o", "rows.yaml", "--overwrite", cwd=tmp_path)
    assert_ok(replaced)
    assert (tmp_path / "rows.yaml").read_text(encoding="utf-8") == printed.stdout
    # -o a folder: NAME.yaml inside it
    (tmp_path / "specs").mkdir()
    into = run_cli("infer", "rows.csv", "-o", "specs", cwd=tmp_path)
    assert_ok(into)
    assert into.stdout == "wrote specs/rows.yaml\n"
    assert yaml.safe_load((tmp_path / "specs" / "rows.yaml").read_text())["source"]["path"] == "../rows.csv"


def test_a_jsonl_with_lists_nulls_and_an_object_column(tmp_path):
    """Fixed and variable lists, null and absent keys, an NA string among numbers, a float column
    holding ints, a uuid key; a column of JSON objects is left out, and the comment says why."""
    records_in = []
    for i in range(10):
        record = {"uuid": f"u-{i}", "weight": i if i % 2 else i + 0.5, "ok": i % 3 == 0, "kind": ["cat", "dog"][i % 2],
                  "vec": [i, i + 1, i + 2], "ids": list(range(i % 4)), "count": None if i == 3 else i,
                  "reading": "NA" if i == 5 else i * 3, "meta": {"a": i}}
        if i == 6:
            del record["count"]  # an absent key is missing too
        records_in.append(record)
    write_jsonl(tmp_path / "things.jsonl", records_in)
    text, spec, records = infer_validate_build(tmp_path, "things.jsonl")

    assert spec["source"] == {"builder": "jsonl", "path": "things.jsonl", "key": "uuid",
                              "options": {"na_values": ["NA"]}}
    assert spec["features"] == {
        "uuid": {"dtype": "string"},
        "weight": {"dtype": "float32"},
        "ok": {"dtype": "bool"},
        "kind": {"type": "class_label", "names": ["cat", "dog"]},
        "vec": {"dtype": "int64", "shape": [3]},
        "ids": {"dtype": "int64", "shape": [None]},
        "count": {"dtype": "int64", "default": -1},
        "reading": {"dtype": "int64", "default": -1},
    }
    assert spec["label"] == "kind"
    assert ("  # column `meta`: left out: line 1 holds an object (a JSON object or a struct); "
            "no dtype reads one\n") in text
    assert comment(text, "ids:") == "0 to 3 items per row"
    assert comment(text, "count:").startswith("guessed: 2 of 10 rows missing -> default -1, a value the data never "
                                              "holds (its least value is 0)")

    found = by_key(records, "uuid")
    for i, given in enumerate(records_in):
        record = found[f"u-{i}"]
        assert record["weight"] == np.float32(given["weight"])
        assert bool(record["ok"]) is given["ok"]
        assert record["kind"] == i % 2
        assert record["vec"].tolist() == given["vec"] and record["ids"].tolist() == given["ids"]
        assert record["count"] == (-1 if i in (3, 6) else i)
        assert record["reading"] == (-1 if i == 5 else i * 3)
        assert "meta" not in record


class _NaN(float):
    """Equal to any NaN (a spec's `default: .nan`, compared inside a dict)."""

    def __eq__(self, other):
        return isinstance(other, float) and math.isnan(other)

    __hash__ = float.__hash__


NAN = _NaN("nan")


def test_a_parquet_file_with_nulls_nan_timestamps_and_a_struct(tmp_path):
    pa = pytest.importorskip("pyarrow")
    parquet = pytest.importorskip("pyarrow.parquet")
    times = [datetime.datetime(2024, 3, 1 + i, 12, 30) for i in range(8)]
    table = pa.table({
        "Row ID": list(range(8)),
        "f": [1.5, None, 2.0, float("nan"), 4.25, 5.0, 6.5, 7.0],
        "s": ["a", "b"] * 4,
        "taken": pa.array(times, pa.timestamp("s")),
        "xy": pa.array([[float(i), i + 0.5] for i in range(8)], pa.list_(pa.float64(), 2)),
        "flag": [True, False, None, True, False, True, False, True],
        "blob": [bytes([i, 0, 255]) for i in range(8)],
        "st": pa.array([{"x": i} for i in range(8)]),
    })
    parquet.write_table(table, tmp_path / "frame.parquet")
    text, spec, records = infer_validate_build(tmp_path, "frame.parquet")

    assert spec["source"] == {"builder": "parquet", "path": "frame.parquet", "key": "Row ID"}
    assert spec["features"] == {
        "row_id": {"dtype": "int64", "source": "Row ID"},
        "f": {"dtype": "float32", "default": NAN, "allow_nan": True},
        "s": {"type": "class_label", "names": ["a", "b"]},
        "taken": {"dtype": "string"},
        "xy": {"dtype": "float32", "shape": [2]},
        "flag": {"dtype": "bool", "default": False},
        "blob": {"dtype": "bytes"},
    }
    assert comment(text, "f:") == ("row 4 holds inf or NaN: kept (allow_nan); "
                                   "guessed: 1 of 8 rows missing -> default NaN, not 0, which would pass for a "
                                   "value; statistics count them apart (impute in the model)")
    assert "# column `st`: left out: a struct<x: int64> column: no dtype reads one" in text
    found = by_key(records, "row_id")
    for i in range(8):
        record = found[i]
        expected = table.column("f")[i].as_py()
        if expected is None or np.isnan(expected):
            assert np.isnan(record["f"])
        else:
            assert record["f"] == np.float32(expected)
        assert record["s"] == i % 2
        assert record["taken"] == times[i].isoformat().encode()
        assert record["xy"].tolist() == [i, i + 0.5]
        assert bool(record["flag"]) is bool(table.column("flag")[i].as_py())
        assert record["blob"] == bytes([i, 0, 255])


def test_an_image_folder_with_a_class_per_sub_folder(tmp_path):
    """Every image 7 high and 5 wide, RGB PNG: the fixed shape [7, 5, 3], stored as they are."""
    expected = {}
    for index in range(6):
        kind = ["cat", "dog"][index % 2]
        expected[f"{kind}/{index}.png"] = write_image(tmp_path / "pets" / kind / f"{index}.png", pixels(7, 5, index))
    text, spec, records = infer_validate_build(tmp_path, "pets")

    assert spec["source"] == {"builder": "image_folder", "path": "pets"}
    assert spec["features"] == {"image": {"type": "image", "encoding": "png", "shape": [7, 5, 3]},
                                "label": {"type": "class_label"}}
    assert spec["label"] == "label"
    assert comment(text, "image:") == "guessed: all 6 images are PNG 7x5, 3 channels"
    assert comment(text, "  label:") == "names: the 2 sub-folders, sorted: cat, dog"
    assert comment(text, "label:") == "the class sub-folder; input_fn yields (features, label)"
    found = all_records(records)
    assert len(found) == 6
    remaining = dict(expected)
    for record in found:
        assert record["image"].shape == (7, 5, 3)
        name = next(name for name, image in remaining.items() if np.array_equal(image, record["image"]))
        assert record["label"] == ["cat", "dog"].index(name.split("/")[0])
        del remaining[name]
    assert remaining == {}


@pytest.mark.parametrize("top, rule, suffix", [(2191, "min_max", "png"), (60000, "full_range", "png"),
                                               (2191, "min_max", "tif")])
def test_a_folder_of_16_bit_scans_gets_dtype_uint16_and_builds_every_value(tmp_path, top, rule, suffix):
    """Every file 16-bit (PNG or TIFF): `dtype: uint16`, each value kept, the 8-bit rule named in
    the comment. Before, infer chose a scale_16bit rule, and the build kept 8 bits of each value."""
    from PIL import Image

    expected = {}
    for index in range(4):
        scan = np.random.default_rng(index).integers(0, top + 1, (6, 5)).astype(np.uint16)
        scan[0, 0], scan[0, 1] = 0, top - index
        path = tmp_path / "scans" / f"s{index}.{suffix}"
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(scan).save(path)
        expected[path.name] = scan
    text, spec, records = infer_validate_build(tmp_path, "scans")

    kind = {"png": "PNG", "tif": "TIFF"}[suffix]
    assert spec["features"]["image"] == {"type": "image", "encoding": "png", "shape": [6, 5, 1], "dtype": "uint16"}
    eight = ("min_max stretches each file's own range onto 0-255" if rule == "min_max"
             else "full_range divides them by 257")
    assert comment(text, "image:") == (
        f"guessed: all 4 images are {kind} 6x5, 1 channel{'; stored as PNG (lossless)' * (suffix == 'tif')}; all "
        f"16-bit (values 0-{top}): dtype: uint16 keeps every value (in 8 bits instead: scale_16bit: {eight})")
    found = by_key(records, "filename")
    assert set(found) == set(expected)
    for name, values in expected.items():
        assert found[name]["image"].dtype == np.uint16
        np.testing.assert_array_equal(found[name]["image"][..., 0], values, err_msg=name)


def test_the_bundled_16_bit_scans_manifest_gets_dtype_uint16(tmp_path):
    """data/scans16/scans.csv (real CT and MR slices, a column of paths): the image column is
    `dtype: uint16`, and the build keeps each slice's values."""
    from PIL import Image

    scans = Path(__file__).resolve().parents[3] / "data" / "scans16"
    (tmp_path / "scans16").symlink_to(scans, target_is_directory=True)
    text, spec, records = infer_validate_build(tmp_path, "scans16/scans.csv")
    assert spec["features"]["path"] == {"type": "image", "encoding": "png", "shape": [None, None, 1],
                                        "dtype": "uint16"}
    assert comment(text, "path:     {type: image").endswith("; all 16-bit (values 0-2836): dtype: uint16 keeps every value (in 8 "
                                           "bits instead: scale_16bit: min_max stretches each file's own range "
                                           "onto 0-255)")
    found = all_records(records)
    assert len(found) == 5
    slices = [np.asarray(Image.open(path)) for path in sorted(scans.glob("*.png"))]
    for record in found:
        assert record["path"].dtype == np.uint16
        assert sum(np.array_equal(record["path"][..., 0], values) for values in slices) == 1


@pytest.mark.parametrize("top, scale", [(2191, "min_max"), (60000, "full_range")])
def test_16_bit_scans_beside_an_8_bit_file_get_a_scaling_rule_and_build(tmp_path, top, scale):
    """A uint16 feature refuses 8-bit files, so a folder with one among its 16-bit scans is stored
    in 8 bits: 12-bit slices (under 2^12) stretched file by file, 16-bit ones that use the range
    divided by 257, the 8-bit file as it is."""
    from PIL import Image

    expected = {}
    for index in range(4):
        scan = np.random.default_rng(index).integers(0, top + 1, (6, 5)).astype(np.uint16)
        scan[0, 0], scan[0, 1] = 0, top - index
        path = tmp_path / "scans" / f"s{index}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(scan).save(path)
        wide = scan.astype(np.int64)
        expected[f"s{index}.png"] = ((wide + 128) // 257 if scale == "full_range"
                                     else (wide * 510 + wide.max()) // (2 * wide.max()))
    expected["s4.png"] = write_image(tmp_path / "scans" / "s4.png", pixels(6, 5, 9, channels=1))
    text, spec, records = infer_validate_build(tmp_path, "scans")

    assert spec["features"]["image"] == {"type": "image", "encoding": "png", "shape": [6, 5, 1], "scale_16bit": scale}
    if scale == "min_max":
        assert comment(text, "image:") == (
            "guessed: all 5 images are PNG 6x5, 1 channel; 4 are 16-bit (values 0-2191): scale_16bit: min_max "
            "stretches each file's own range onto 0-255 (full_range, value / 257, would leave them dark)")
    else:
        assert comment(text, "image:") == (
            "guessed: all 5 images are PNG 6x5, 1 channel; 4 are 16-bit (values 0-60000): scale_16bit: full_range "
            "divides them by 257 (min_max: each file's own range onto 0-255)")
    found = by_key(records, "filename")
    assert set(found) == set(expected)
    for name, values in expected.items():
        np.testing.assert_array_equal(found[name]["image"][..., 0], values, err_msg=name)


def test_an_image_manifest_names_images_of_several_sizes(tmp_path):
    """A column of JPEG paths (relative to the manifest) becomes an image feature of varying size;
    a column naming a file that isn't there stays text, and says why."""
    sizes = [(6, 8), (10, 4), (6, 8), (9, 9), (5, 7), (8, 6)]
    rows, expected = [], {}
    for index, (height, width) in enumerate(sizes):
        name = f"pics/{'sub/' if index % 2 else ''}im{index}.jpg"
        expected[index] = write_image(tmp_path / "data" / name, pixels(height, width, index), quality=95)
        thumb = f"thumbs/t{index}.png"
        if index != 3:
            write_image(tmp_path / "data" / thumb, pixels(2, 2, index))
        rows.append([str(index), name, thumb, f"picture {index}", ["day", "night"][index % 2]])
    text_rows = io.StringIO()
    writer = csv.writer(text_rows, lineterminator="\n")
    writer.writerows([["n", "file", "thumb", "caption", "label"]] + rows)
    (tmp_path / "data" / "manifest.csv").write_text(text_rows.getvalue(), encoding="utf-8")
    text, spec, records = infer_validate_build(tmp_path, "data/manifest.csv")

    # the image paths are unique: the key (an image keeps its split when a caption is edited)
    assert spec["source"] == {"builder": "image_manifest", "path": "data/manifest.csv", "key": "file"}
    assert spec["features"] == {
        "n": {"dtype": "int64"},
        "file": {"type": "image", "encoding": "jpeg", "shape": [None, None, 3]},
        "thumb": {"dtype": "string"},
        "caption": {"dtype": "string"},
        "label": {"type": "class_label", "names": ["day", "night"]},
    }
    assert comment(text, "file:") == ("guessed: names image files; all 6 images are JPEG, 5-10 high and 4-9 wide: "
                                      "each keeps its size (3 channels)")
    assert comment(text, "thumb:") == ("1 of 6 image files named are missing (line 5: thumbs/t3.png), "
                                       "so kept as text")
    found = by_key(records, "n")
    for index, (height, width) in enumerate(sizes):
        record = found[index]
        assert record["file"].shape == (height, width, 3)
        assert np.array_equal(record["file"], expected[index])  # the JPEG's own bytes, decoded as Pillow does
        assert record["label"] == index % 2
        assert record["caption"] == f"picture {index}".encode()


def test_a_jsonl_of_sequences_becomes_a_sequence_example_spec(tmp_path):
    """Fields whose lists have one length per record, varying between records, are steps; the
    other fields are per record (context)."""
    generator = random.Random(3)
    records_in = []
    for i in range(12):
        steps = 2 + i % 5
        records_in.append({"utterance": i, "speaker": ["ann", "bob", "cy"][i % 3],
                           "tokens": [generator.randint(0, 99) for _ in range(steps)],
                           "tags": [generator.choice("OBI") for _ in range(steps)],
                           "frames": [[generator.randint(-8, 8) / 4, step] for step in range(steps)]})
    write_jsonl(tmp_path / "talk.jsonl", records_in)
    text, spec, records = infer_validate_build(tmp_path, "talk.jsonl")

    assert spec["format"] == "sequence_example"
    assert spec["source"] == {"builder": "sequence_jsonl", "path": "talk.jsonl"}
    assert spec["context"] == {"utterance": {"dtype": "int64"},
                               "speaker": {"type": "class_label", "names": ["ann", "bob", "cy"]}}
    assert spec["sequence"] == {"tokens": {"dtype": "int64"},
                                "tags": {"type": "class_label", "names": ["B", "I", "O"]},
                                "frames": {"dtype": "float32", "shape": [2]}}
    assert spec["label"] == "tags"
    assert comment(text, "format:").startswith("guessed: `tokens`, `tags`, `frames` hold lists of one length")
    assert comment(text, "tags:").startswith("guessed: 3 distinct values in")
    found = by_key(records, "utterance")
    for i, given in enumerate(records_in):
        record = found[i]
        assert record["speaker"] == i % 3
        assert record["sequence_length"] == len(given["tokens"])
        assert record["tokens"].tolist() == given["tokens"]
        assert record["tags"].tolist() == ["BIO".index(tag) for tag in given["tags"]]
        assert record["frames"].tolist() == given["frames"]

    # --no-sequence: the same lists as variable-length features of plain records
    plain = run_cli("infer", "talk.jsonl", "--no-sequence", cwd=tmp_path)
    assert_ok(plain)
    features = yaml.safe_load(plain.stdout)["features"]
    assert features["tokens"] == {"dtype": "int64", "shape": [None]}
    assert features["frames"] == {"dtype": "float32", "shape": [None, 2]}


def test_a_long_table_grouped_into_sequences(tmp_path):
    """Rows shuffled; `--group-by`/`--order-by` group and order them; a column with one value per
    sequence is context, the rest per step; positions order as numbers (10 after 9)."""
    generator = random.Random(5)
    sequences = {}
    rows = []
    for index in range(7):
        name = f"s{index}"
        times = list(range(1, 13)) if index == 0 else sorted(generator.sample(range(40), 2 + index % 4))
        steps = [(t, generator.randint(-20, 20) / 4, generator.choice(["up", "down"])) for t in times]
        sequences[name] = (["ann", "bob"][index % 2], steps)
        rows += [[name, str(t), repr(value), sign, sequences[name][0]] for t, value, sign in steps]
    generator.shuffle(rows)
    table = io.StringIO()
    csv.writer(table, lineterminator="\n").writerows([["sid", "t", "value", "move", "speaker"]] + rows)
    (tmp_path / "steps.csv").write_text(table.getvalue(), encoding="utf-8")
    text, spec, records = infer_validate_build(tmp_path, "steps.csv", "--group-by", "sid", "--order-by", "t")

    assert spec["format"] == "sequence_example"
    assert spec["source"] == {"builder": "csv", "path": "steps.csv", "group_by": "sid", "order_by": "t"}
    assert spec["context"] == {"sid": {"dtype": "string"},
                               "speaker": {"type": "class_label", "names": ["ann", "bob"]}}
    assert spec["sequence"] == {"t": {"dtype": "int64"}, "value": {"dtype": "float32"},
                                "move": {"type": "class_label", "names": ["down", "up"]}}
    assert comment(text, "group_by:") == "7 sequences of 2 to 12 steps"
    assert comment(text, "speaker:").startswith("the same throughout each sequence, so per sequence; guessed: "
                                                "2 distinct values in 7 sequences")
    found = by_key(records, "sid")
    assert sorted(found) == sorted(sequences)
    for name, (speaker, steps) in sequences.items():
        record = found[name]
        assert record["speaker"] == ["ann", "bob"].index(speaker)
        assert record["t"].tolist() == [t for t, _, _ in steps]
        assert record["value"].tolist() == [value for _, value, _ in steps]
        assert record["move"].tolist() == [["down", "up"].index(move) for _, _, move in steps]
