"""Image sources: `image_folder` and `image_manifest`, split columns, bad images, workers.

Real files in tmp_path, real Pillow and TensorFlow, no mocks. The only patch is Pillow's own
configuration (`PIL.Image.MAX_IMAGE_PIXELS`), lowered so a small image counts as a
decompression bomb; those builds run with `workers=1`, so no child process misses the patch.
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import PIL.Image
import pytest
from hypothesis import given, settings, strategies as st
from PIL import Image

import tfrecord_builder as tb
from tfrecord_builder.builders import image_folder

from conftest import import_module, write_spec
from support import reading


# ---- helpers ---------------------------------------------------------------------------------------
def noise(height, width, channels=3, seed=0):
    shape = (height, width) if channels == 1 else (height, width, channels)
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


def save(array, path: Path, **kwargs) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(array).save(path, **kwargs)
    return path


def examples(batches, label=None):
    """Batches (features, or (features, label)) as one list of per-example dicts."""
    out = []
    for element in batches:
        features = dict(element[0]) if isinstance(element, tuple) else dict(element)
        if isinstance(element, tuple):
            features[label] = element[1]
        size = len(next(iter(features.values())))
        out.extend({key: value[index] for key, value in features.items()} for index in range(size))
    return out


def read_both(info, split="train", batch_size=8):
    """Per-example dicts from the generated module's input_fn, checked equal to tb.input_fn's (unshuffled)."""
    read = examples(reading.read_both(info, split, batch_size), info.spec.label)
    assert len(read) == info.splits[split].num_examples
    return read


def keyed(rows, key):
    out = {}
    for row in rows:
        value = row[key]
        out[value.decode() if isinstance(value, bytes) else value.item()] = row
    return out


def crop(image, like):
    """The top-left of a padded image, the size of `like`, grey squeezed."""
    part = image[: like.shape[0], : like.shape[1]]
    return part[..., 0] if like.ndim == 2 else part


# ---- image_folder ------------------------------------------------------------------------------------
FOLDER_FEATURES = {"image": {"type": "image", "channels": 3}, "label": {"type": "class_label"},
                   "filename": {"dtype": "string"}}


def _class_folders(root: Path, classes):
    sources = {}
    for number, name in enumerate(classes):
        for index in range(2):
            relative = f"{name}/{index}.png"
            sources[relative] = save(noise(5 + index, 6, seed=10 * number + index), root / relative)
    return sources


def test_class_names_come_from_the_sub_folders_sorted(tf, tmp_path):
    sources = _class_folders(tmp_path / "images", ["dog", "cat", "bird"])
    info = tb.build(write_spec(tmp_path, {"name": "pets", "source": {"builder": "image_folder", "path": "images"},
                                          "features": FOLDER_FEATURES, "label": "label"}), output=tmp_path / "out")
    names = ["bird", "cat", "dog"]
    assert info.spec.features["label"].names == names
    module = import_module(Path(info.path) / "pets_input.py")
    assert tuple(module.CLASS_NAMES["label"]) == tuple(names)
    rows = keyed(read_both(info), "filename")
    assert set(rows) == set(sources)
    for relative, path in sources.items():
        assert rows[relative]["label"] == names.index(relative.split("/")[0]), relative
        np.testing.assert_array_equal(crop(rows[relative]["image"], np.asarray(Image.open(path))),
                                      np.asarray(Image.open(path)))


def test_class_names_given_in_the_spec_keep_their_order(tf, tmp_path):
    sources = _class_folders(tmp_path / "images", ["dog", "cat", "bird"])
    names = ["dog", "cat", "bird"]
    features = {**FOLDER_FEATURES, "label": {"type": "class_label", "names": names}}
    info = tb.build(write_spec(tmp_path, {"name": "pets", "source": {"builder": "image_folder", "path": "images"},
                                          "features": features, "label": "label"}), output=tmp_path / "out")
    assert info.spec.features["label"].names == names
    rows = keyed(read_both(info), "filename")
    assert {relative: int(rows[relative]["label"]) for relative in sources} == {
        relative: names.index(relative.split("/")[0]) for relative in sources}


def test_extensions_match_case_blind_and_hidden_and_other_files_are_ignored(tf, tmp_path):
    root = tmp_path / "images"
    wanted = {
        "cats/a.JPG": save(noise(6, 7, seed=1), root / "cats/a.JPG", format="JPEG", quality=95),
        "cats/b.Png": save(noise(5, 4, seed=2), root / "cats/b.Png", format="PNG"),
        "cats/c.jpeg": save(noise(4, 4, seed=3), root / "cats/c.jpeg", format="JPEG"),
        "dogs/d.BMP": save(noise(3, 8, seed=4), root / "dogs/d.BMP", format="BMP"),
    }
    for hidden in (".hidden.png", "cats/.hidden.png", ".thumbs/x.png", "cats/.thumbs/y.png"):
        save(noise(4, 4, seed=5), root / hidden, format="PNG")
    for other, text in (("cats/notes.txt", "not an image\n"), ("dogs/data.json", "{}\n"), ("README", "hello\n")):
        (root / other).write_text(text)
    info = tb.build(write_spec(tmp_path, {"name": "pets", "source": {"builder": "image_folder", "path": "images"},
                                          "features": FOLDER_FEATURES, "label": "label"}), output=tmp_path / "out")
    assert info.spec.features["label"].names == ["cats", "dogs"]
    rows = keyed(read_both(info), "filename")
    assert set(rows) == set(wanted)
    for relative, path in wanted.items():
        assert rows[relative]["label"] == ["cats", "dogs"].index(relative.split("/")[0])
        expected = np.asarray(Image.open(path).convert("RGB"))  # stored as PNG: Pillow's decode, losslessly
        np.testing.assert_array_equal(crop(rows[relative]["image"], expected), expected, err_msg=relative)


@pytest.mark.parametrize("names", [None, ["zebra", "cat", "ant"]])
def test_a_flat_folder_takes_its_labels_from_a_csv_beside_the_spec(tf, tmp_path, names):
    labels = {"x.png": "zebra", "y.png": "ant", "z.png": "cat", "w.png": "ant"}
    sources = {name: save(noise(4, 5, seed=index), tmp_path / "photos" / name)
               for index, name in enumerate(labels)}
    lines = "filename,label\n" + "".join(f"{name},{label}\n" for name, label in labels.items())
    label = {"type": "class_label"} if names is None else {"type": "class_label", "names": names}
    spec = {"name": "flat", "source": {"builder": "image_folder", "path": "photos",
                                       "options": {"labels": "meta/labels.csv"}},  # relative to the spec file
            "features": {**FOLDER_FEATURES, "label": label}, "label": "label"}
    info = tb.build(write_spec(tmp_path, spec, {"meta/labels.csv": lines}), output=tmp_path / "out")
    expected_names = names or ["ant", "cat", "zebra"]
    assert info.spec.features["label"].names == expected_names
    rows = keyed(read_both(info), "filename")
    assert set(rows) == set(sources)
    for name, path in sources.items():
        assert rows[name]["label"] == expected_names.index(labels[name]), name
        np.testing.assert_array_equal(crop(rows[name]["image"], np.asarray(Image.open(path))), np.asarray(Image.open(path)))


def _split_folders(root: Path, layout, name_of):
    sources = {}
    for split, classes in layout.items():
        for number, name in enumerate(classes):
            relative = f"{name}/{name_of(split)}.png"
            sources[split, relative] = save(noise(4, 5, seed=len(sources)), root / split / relative)
    return sources


def _split_folder_spec(tmp_path):
    return write_spec(tmp_path, {"name": "pets", "source": {"builder": "image_folder"},
                                 "splits": {"train": {"path": "images/train"}, "test": {"path": "images/test"}},
                                 "features": FOLDER_FEATURES, "label": "label"})


def test_per_split_folders_share_the_union_of_their_class_names(tf, tmp_path):
    sources = _split_folders(tmp_path / "images", {"train": ["dog", "cat"], "test": ["dog"]}, lambda split: split)
    info = tb.build(_split_folder_spec(tmp_path), output=tmp_path / "out", workers=1)
    assert info.spec.features["label"].names == ["cat", "dog"]
    for split in ("train", "test"):
        rows = keyed(read_both(info, split), "filename")
        expected = {relative: ["cat", "dog"].index(relative.split("/")[0])
                    for (where, relative) in sources if where == split}
        assert {name: int(row["label"]) for name, row in rows.items()} == expected


def test_per_split_folders_may_hold_the_same_file_names(tf, tmp_path):
    # train/dog/0.png and test/dog/0.png are different images in different splits, not duplicates
    sources = _split_folders(tmp_path / "images", {"train": ["dog", "cat"], "test": ["dog"]}, lambda split: "0")
    info = tb.build(_split_folder_spec(tmp_path), output=tmp_path / "out", workers=1)
    assert {split: info.splits[split].num_examples for split in ("train", "test")} == {"train": 2, "test": 1}
    for split in ("train", "test"):
        rows = keyed(read_both(info, split), "filename")
        for (where, relative), path in sources.items():
            if where == split:
                pixels = np.asarray(Image.open(path))
                np.testing.assert_array_equal(crop(rows[relative]["image"], pixels), pixels)


# ---- image_manifest ----------------------------------------------------------------------------------
MANIFEST_ROWS = [
    {"id": 0, "path": "pics/a.png", "weight": 0.5, "caption": "a small one", "split": "train"},
    {"id": 1, "path": "pics/sub/b.png", "weight": -2.25, "caption": "Zürich, at night", "split": "test"},
    {"id": 2, "path": "pics/c.png", "weight": 1e-3, "caption": 'say "hi"', "split": "train"},
    {"id": 3, "path": "pics/d.png", "weight": 7.0, "caption": "", "split": "train"},
    {"id": 4, "path": "pics/e.png", "weight": 3.5, "caption": "last", "split": "test"},
]
MANIFEST_FEATURES = {
    "id": {"dtype": "int64"},
    "image": {"type": "image", "encoding": "png", "channels": 3, "source": "path"},
    "weight": {"dtype": "float32"},
    "caption": {"dtype": "string", "default": ""},
}


def _write_manifest(folder: Path, rows, kind: str) -> Path:
    """The manifest in `folder`, as CSV or JSONL, with columns id, path, weight, caption, split."""
    folder.mkdir(parents=True, exist_ok=True)
    if kind == "csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        text = buffer.getvalue()
    else:
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    path = folder / f"manifest.{kind}"
    path.write_text(text, encoding="utf-8")
    return path


def _manifest_images(folder: Path, rows):
    """Writes each row's image below `folder` (paths as the manifest gives them); {id: pixels}."""
    return {row["id"]: np.asarray(Image.open(save(noise(4 + row["id"], 6 - row["id"] % 3, seed=row["id"]),
                                                  folder / row["path"])))
            for row in rows}


def _manifest_spec(kind, **extra):
    # the spec lives in specs/, the manifest and images in data/: image paths are relative to the manifest
    return {"name": "man", "source": {"builder": "image_manifest", "path": f"../data/manifest.{kind}"},
            "features": MANIFEST_FEATURES, **extra}


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_a_manifest_names_images_relative_to_itself_beside_other_columns(tf, tmp_path, kind):
    _write_manifest(tmp_path / "data", MANIFEST_ROWS, kind)
    pixels = _manifest_images(tmp_path / "data", MANIFEST_ROWS)
    info = tb.build(write_spec(tmp_path / "specs", _manifest_spec(kind)), output=tmp_path / "out")
    rows = keyed(read_both(info), "id")
    assert set(rows) == {row["id"] for row in MANIFEST_ROWS}
    for row in MANIFEST_ROWS:
        got = rows[row["id"]]
        assert got["weight"] == np.float32(row["weight"])
        assert got["caption"].decode() == row["caption"]
        np.testing.assert_array_equal(crop(got["image"], pixels[row["id"]]), pixels[row["id"]])


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_a_split_column_puts_each_row_in_the_split_it_names(tf, tmp_path, kind):
    _write_manifest(tmp_path / "data", MANIFEST_ROWS, kind)
    pixels = _manifest_images(tmp_path / "data", MANIFEST_ROWS)
    spec = _manifest_spec(kind, splits={"train": {}, "test": {}})
    spec["source"]["split_column"] = "split"
    info = tb.build(write_spec(tmp_path / "specs", spec), output=tmp_path / "out")
    for split in ("train", "test"):
        rows = keyed(read_both(info, split), "id")
        assert set(rows) == {row["id"] for row in MANIFEST_ROWS if row["split"] == split}, split
        for identifier, got in rows.items():
            np.testing.assert_array_equal(crop(got["image"], pixels[identifier]), pixels[identifier])


@pytest.mark.parametrize("kind, line", [("csv", 4), ("jsonl", 3)])
def test_a_row_naming_an_unknown_split_is_an_error_naming_file_and_line(tmp_path, kind, line):
    rows = [dict(row) for row in MANIFEST_ROWS]
    rows[2]["split"] = "valid"
    _write_manifest(tmp_path / "data", rows, kind)
    _manifest_images(tmp_path / "data", rows)
    spec = _manifest_spec(kind, splits={"train": {}, "test": {}})
    spec["source"]["split_column"] = "split"
    with pytest.raises(tb.DataError) as caught:
        tb.build(write_spec(tmp_path / "specs", spec), output=tmp_path / "out", workers=1)
    message = str(caught.value)
    quoted = '"valid"' if kind == "jsonl" else "'valid'"  # as the file writes it
    assert f"manifest.{kind}, line {line}" in message and quoted in message and "\n" not in message
    assert not list((tmp_path / "out").rglob("dataset_info.json"))


def test_a_string_feature_reading_the_image_column_keeps_the_manifest_text(tf, tmp_path):
    # the image is found relative to the manifest, but the column's own text is what a string feature stores:
    # not a path of the machine that built the dataset
    _write_manifest(tmp_path / "data", MANIFEST_ROWS, "csv")
    _manifest_images(tmp_path / "data", MANIFEST_ROWS)
    spec = _manifest_spec("csv")
    spec["features"] = {**MANIFEST_FEATURES, "path": {"dtype": "string"}}
    info = tb.build(write_spec(tmp_path / "specs", spec), output=tmp_path / "out")
    rows = keyed(read_both(info), "id")
    assert {identifier: row["path"].decode() for identifier, row in rows.items()} == {
        row["id"]: row["path"] for row in MANIFEST_ROWS}


# ---- bad images --------------------------------------------------------------------------------------
BOMB_LIMIT = 1000  # pixels: PIL.Image.MAX_IMAGE_PIXELS for these builds; the good images have 64


def _bad_file(kind: str, folder: Path) -> str:
    """Writes one bad image of `kind` into folder/pics; returns its path relative to `folder`."""
    pics = folder / "pics"
    pics.mkdir(parents=True, exist_ok=True)
    if kind == "corrupt":
        (pics / "c1.png").write_bytes(np.random.default_rng(99).bytes(300))
        return "pics/c1.png"
    if kind == "truncated":
        buffer = io.BytesIO()
        Image.fromarray(noise(24, 24, seed=5)).save(buffer, "JPEG", quality=95)  # 576 pixels: under the limit
        whole = buffer.getvalue()
        (pics / "half.jpg").write_bytes(whole[: len(whole) // 2])
        return "pics/half.jpg"
    if kind == "missing":
        return "pics/gone.png"  # never written
    if kind == "unsupported":
        (pics / "notes.jpg").write_text("this is a text file, not a JPEG\n")
        return "pics/notes.jpg"
    if kind == "bomb":  # 1600 pixels: over the limit (Pillow itself would only warn below twice the limit)
        save(noise(40, 40, seed=6), pics / "big.png")
        return "pics/big.png"
    if kind == "bomb_2x":  # 4096 pixels: over twice the limit (Pillow raises)
        save(noise(64, 64, seed=7), pics / "huge.png")
        return "pics/huge.png"
    if kind == "float_mode":
        Image.fromarray(np.linspace(0, 1, 64, dtype=np.float32).reshape(8, 8)).save(pics / "float.tif")
        assert Image.open(pics / "float.tif").mode == "F"
        return "pics/float.tif"
    raise AssertionError(kind)


REASONS = {
    "corrupt": r"corrupt|not an image",
    "truncated": r"truncated",
    "missing": r"not found",
    "unsupported": r"unsupported|not an image",
    "bomb": r"decompression.bomb",
    "bomb_2x": r"decompression.bomb",
    "float_mode": r"mode F\b",
}


def _bad_manifest(tmp_path: Path, kinds, on_error: str):
    """A manifest of three good images then one bad image per kind; (spec path, good pixels, bad paths)."""
    folder = tmp_path / "data"
    good = {index: save(noise(8, 8, seed=index), folder / "pics" / f"good{index}.png") for index in range(3)}
    bad = {kind: _bad_file(kind, folder) for kind in kinds}
    lines = ["id,path"] + [f"{index},pics/good{index}.png" for index in good]
    lines += [f"{10 + number},{path}" for number, path in enumerate(bad.values())]
    (folder / "manifest.csv").write_text("\n".join(lines) + "\n")
    spec = {"name": "bad", "source": {"builder": "image_manifest", "path": "../data/manifest.csv"},
            "features": {"id": {"dtype": "int64"}, "image": {"type": "image", "shape": [8, 8, 3], "source": "path"}},
            "on_error": on_error}
    pixels = {index: np.asarray(Image.open(path)) for index, path in good.items()}
    return write_spec(tmp_path / "specs", spec), pixels, bad


@pytest.mark.parametrize("kind", sorted(REASONS))
def test_a_bad_image_fails_the_build_with_one_line_naming_file_and_reason(tmp_path, monkeypatch, kind):
    monkeypatch.setattr(PIL.Image, "MAX_IMAGE_PIXELS", BOMB_LIMIT)
    spec, _, bad = _bad_manifest(tmp_path, [kind], "fail")
    with pytest.raises(tb.DataError) as caught:
        tb.build(spec, output=tmp_path / "out", workers=1)
    message = str(caught.value)
    assert "\n" not in message
    assert os.path.basename(bad[kind]) in message, message
    assert "manifest.csv, line 5" in message, message
    assert re.search(REASONS[kind], message.replace(bad[kind], ""), re.IGNORECASE), message
    assert not list((tmp_path / "out").rglob("dataset_info.json"))


def _check_skipped(tmp_path, info, pixels, bad):
    assert info.skipped == len(bad)
    assert info.splits["train"].num_examples == len(pixels)
    entries = [json.loads(line) for line in (Path(info.path) / "skipped.jsonl").read_text().splitlines()]
    assert len(entries) == len(bad)
    for entry, (kind, path) in zip(entries, bad.items()):
        text = json.dumps(entry, ensure_ascii=False)
        assert os.path.basename(path) in text, (kind, entry)
        assert re.search(REASONS[kind], text.replace(path, ""), re.IGNORECASE), (kind, entry)
    rows = keyed(read_both(info), "id")
    assert set(rows) == set(pixels)
    for identifier, expected in pixels.items():
        np.testing.assert_array_equal(rows[identifier]["image"], expected)


@pytest.mark.parametrize("kind", sorted(REASONS))
def test_a_bad_image_is_skipped_and_listed_under_on_error_skip(tf, tmp_path, monkeypatch, kind):
    monkeypatch.setattr(PIL.Image, "MAX_IMAGE_PIXELS", BOMB_LIMIT)
    spec, pixels, bad = _bad_manifest(tmp_path, [kind], "skip")
    info = tb.build(spec, output=tmp_path / "out", workers=1)
    _check_skipped(tmp_path, info, pixels, bad)


def test_every_kind_of_bad_image_is_skipped_in_one_build(tf, tmp_path, monkeypatch):
    monkeypatch.setattr(PIL.Image, "MAX_IMAGE_PIXELS", BOMB_LIMIT)
    spec, pixels, bad = _bad_manifest(tmp_path, sorted(REASONS), "skip")
    info = tb.build(spec, output=tmp_path / "out", workers=1)
    _check_skipped(tmp_path, info, pixels, bad)
    assert json.loads((Path(info.path) / "tfrecord_builder.json").read_text())["num_skipped"] == len(REASONS)


@pytest.mark.parametrize("on_error", ["fail", "skip"])
def test_a_corrupt_file_in_an_image_folder(tf, tmp_path, on_error):
    good = {f"cats/{index}.png": save(noise(5, 5, seed=index), tmp_path / "images" / "cats" / f"{index}.png")
            for index in range(3)}
    (tmp_path / "images" / "cats" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)
    spec = write_spec(tmp_path, {"name": "pets", "source": {"builder": "image_folder", "path": "images"},
                                 "features": FOLDER_FEATURES, "label": "label", "on_error": on_error})
    if on_error == "fail":
        with pytest.raises(tb.DataError, match=r"broken\.png") as caught:
            tb.build(spec, output=tmp_path / "out", workers=1)
        assert "\n" not in str(caught.value)
        return
    info = tb.build(spec, output=tmp_path / "out", workers=1)
    assert info.skipped == 1
    (entry,) = [json.loads(line) for line in (Path(info.path) / "skipped.jsonl").read_text().splitlines()]
    assert "cats/broken.png" in json.dumps(entry)
    rows = keyed(read_both(info), "filename")
    assert set(rows) == set(good)
    for relative, path in good.items():
        np.testing.assert_array_equal(crop(rows[relative]["image"], np.asarray(Image.open(path))),
                                      np.asarray(Image.open(path)))


def test_the_command_line_reports_a_bad_image_in_one_line(tmp_path):
    spec, _, bad = _bad_manifest(tmp_path, ["corrupt"], "fail")
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "tfrecord_builder", "build", str(spec), "--output", str(out)],
                            capture_output=True, text=True, timeout=600, cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert result.returncode == 1, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and "c1.png" in lines[0], lines[0]
    assert "Traceback" not in result.stderr
    assert not out.exists() or not list(out.rglob("dataset_info.json"))


# ---- workers -----------------------------------------------------------------------------------------
def test_one_and_two_workers_write_byte_identical_shards(tmp_path):
    for index in range(70):  # 3 batches of up to 32 images: the two-worker build really uses two processes
        save(noise(8, 8, seed=index), tmp_path / "images" / ("odd" if index % 2 else "even") / f"{index:02d}.png")
    spec = write_spec(tmp_path, {
        "name": "w", "source": {"builder": "image_folder", "path": "images"},
        "splits": {"train": 0.75, "test": 0.25},
        "features": {"image": {"type": "image", "shape": [8, 8, 3]},
                     "small": {"type": "image", "encoding": "jpeg", "shape": [4, 4, 3], "source": "image"},
                     "label": {"type": "class_label"}, "filename": {"dtype": "string"}},
        "label": "label", "output": {"shards": 2}})
    infos = {workers: tb.build(spec, output=tmp_path / f"out{workers}", workers=workers) for workers in (1, 2)}
    assert sum(split.num_examples for split in infos[1].splits.values()) == 70
    for split in ("train", "test"):
        files = infos[1].splits[split].files
        assert files == infos[2].splits[split].files and len(files) == 2
        for name in files:
            assert (Path(infos[1].path) / name).read_bytes() == (Path(infos[2].path) / name).read_bytes(), name


# ---- class folders as Keras lists them -------------------------------------------------------------
def test_classes_are_every_sub_folder_empty_or_linked_and_links_up_the_tree_are_not_walked(tmp_path):
    """As `image_dataset_from_directory`: the classes are the sub-folders, sorted, an empty one
    included (so `c` keeps index 2 when `b` gains images); a linked class folder is read; a link
    back up the tree (a loop) is neither a class nor walked."""
    images = tmp_path / "images"
    save(noise(4, 4), images / "a" / "1.png")
    (images / "b").mkdir()
    save(noise(4, 4, seed=1), images / "c" / "1.png")
    save(noise(4, 4, seed=2), tmp_path / "elsewhere" / "1.png")
    (images / "d").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (images / "up").symlink_to(tmp_path, target_is_directory=True)
    (images / "c" / "again").symlink_to(images, target_is_directory=True)
    spec = {"name": "linked", "source": {"builder": "image_folder", "path": "images"},
            "features": {"image": {"type": "image", "encoding": "png", "shape": [4, 4, 3]},
                         "label": {"type": "class_label"}, "filename": {"dtype": "string"}},
            "label": "label", "output": {"shuffle": False}}
    info = tb.build(write_spec(tmp_path, spec), output=tmp_path / "out")
    assert info.spec.features["label"].names == ["a", "b", "c", "d"]
    rows = read_both(info)
    assert sorted((row["filename"].decode(), int(row["label"])) for row in rows) == [
        ("a/1.png", 0), ("c/1.png", 2), ("d/1.png", 3)]


def test_a_labels_file_row_without_its_image_is_an_error(tmp_path):
    save(noise(4, 4), tmp_path / "flat" / "1.png")
    spec = {"name": "flat", "source": {"builder": "image_folder", "path": "flat", "options": {"labels": "labels.csv"}},
            "features": {"image": {"type": "image", "encoding": "png", "shape": [4, 4, 3]},
                         "label": {"type": "class_label"}}}
    path = write_spec(tmp_path, spec, {"labels.csv": "filename,label\n1.png,a\n9.png,b\n"})
    with pytest.raises(tb.DataError, match=r"labels\.csv, line 3: `9\.png` is not an image file in .*flat$"):
        tb.build(path, output=tmp_path / "out")
    path = write_spec(tmp_path, spec, {"labels.csv": "filename,label\n1.png,a\n1.png,b\n"})
    with pytest.raises(tb.DataError, match=r"labels\.csv, line 3: `1\.png` is listed twice \(also at .*line 2\)"):
        tb.build(path, output=tmp_path / "out")
    assert not list(tmp_path.glob("out/**/dataset_info.json"))


# ---- the listing -------------------------------------------------------------------------------------
def _walked(folder: Path) -> list[tuple[str, int]]:
    """What the listing must give, by `os.walk`: each image file (extension case-blind, hidden
    files and folders skipped), a folder's files sorted before its sub-folders, sorted, each with
    its size from `os.stat` of its path (0 where that fails)."""
    found = []

    def size(path: str) -> int:
        try:
            return os.stat(path).st_size
        except OSError:
            return 0

    def walk(root: str, prefix: str) -> None:
        _, folders, files = next(os.walk(root, followlinks=True), (root, [], []))
        for name in sorted(files):
            if not name.startswith(".") and os.path.splitext(name)[1].lower() in image_folder.EXTENSIONS:
                found.append((prefix + name, size(os.path.join(root, name))))
        for name in sorted(folders):
            if not name.startswith("."):
                walk(os.path.join(root, name), f"{prefix}{name}/")

    walk(str(folder), "")
    return found


def test_the_listing_is_a_walk_of_the_folder_with_each_files_size(tmp_path):
    """Files stat'ed by name in their open folder give what a walk and a stat of each path give:
    a broken link is listed with size 0 (reading it says why), a folder that can't be read is
    passed over (by anyone but root)."""
    images = tmp_path / "images"
    for number, name in enumerate(["b/2.JPG", "b/10.png", "a/1.png", "a/deeper/3.png", "top.png", "a/.hidden.png",
                                   ".secret/4.png", "a/notes.txt", "a/no_dot"]):
        (images / name).parent.mkdir(parents=True, exist_ok=True)
        (images / name).write_bytes(b"x" * (number * 7 + 1))
    (images / "a" / "gone.png").symlink_to(tmp_path / "nowhere.png")
    (images / "locked").mkdir()
    (images / "locked" / "5.png").write_bytes(b"y")
    (images / "locked").chmod(0)
    try:
        listed = image_folder._images(str(images))
        expected = _walked(images)
    finally:
        (images / "locked").chmod(0o755)
    assert listed == expected
    assert (("locked/5.png", 1) in listed) == (os.geteuid() == 0)  # root reads any folder
    assert ("a/gone.png", 0) in listed and ("b/2.JPG", 1) in listed and ("b/10.png", 8) in listed
    assert [name for name, _ in listed][:4] == ["top.png", "a/1.png", "a/gone.png", "a/deeper/3.png"]


@settings(max_examples=200, deadline=None)
@given(sizes=st.lists(st.sampled_from([0, 0, 1, 5, 10, 100, 999]), max_size=40),
       max_bytes=st.sampled_from([-1, 0, 1, 10, 50, 200, 10**9]),
       max_rows=st.sampled_from([None, 1, 2, 3, 7]))
def test_runs_are_cut_where_the_bytes_or_the_rows_reach_their_limit(sizes, max_bytes, max_rows):
    """`cut_runs`' searches in running sums cut where its definition, item by item, cuts."""
    runs, start, total = [], 0, 0
    for index, size in enumerate(sizes):
        total += size
        if total >= max_bytes or index + 1 - start == max_rows:
            runs.append(tuple(range(start, index + 1)))
            start, total = index + 1, 0
    if start < len(sizes):
        runs.append(tuple(range(start, len(sizes))))
    assert list(image_folder.cut_runs(range(len(sizes)), sizes, max_bytes, max_rows)) == runs
