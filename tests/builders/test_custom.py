"""Custom builders (`module:Class`, `file.py:Class`): build, round trip, and the errors users hit."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tfrecord_builder as tb

from conftest import ROOT, batches_as_numpy, write_spec

FRAMES = '''
import numpy as np
import tfrecord_builder as tb


class Frames(tb.Builder):
    """Deterministic little clips: a [2, 3] float frame, a variable list and a label per key."""

    def generate(self, split):
        count = int(self.options.get("count", 20))
        rng = np.random.default_rng(7)
        for index in range(count):
            yield f"clip-{index}", {
                "frame": rng.normal(size=(2, 3)).astype(np.float32),
                "points": list(range(index % 4)),
                "label": ["cat", "dog"][index % 2],
                "id": index,
            }
'''
SPEC = {
    "name": "clips",
    "source": {"builder": "frames:Frames", "options": {"count": 20}},
    "splits": {"train": 0.5, "test": 0.5},
    "features": {
        "id": {"dtype": "int64"},
        "frame": {"dtype": "float32", "shape": [2, 3]},
        "points": {"dtype": "int64", "shape": [None]},
        "label": {"type": "class_label", "names": ["cat", "dog"]},
    },
}


def _expected():
    rng = np.random.default_rng(7)
    return {index: (rng.normal(size=(2, 3)).astype(np.float32), list(range(index % 4)), index % 2)
            for index in range(20)}


def _read(info):
    seen = {}
    for split in info.splits:
        for batch in batches_as_numpy(tb.input_fn(info.path, split, shuffle=False)):
            for row, identifier in enumerate(batch["id"].tolist()):
                seen[identifier] = (batch["frame"][row], batch["points"][row], int(batch["label"][row]))
    return seen


def _check(info):
    seen, expected = _read(info), _expected()
    assert sorted(seen) == list(range(20))
    for index, (frame, points, label) in expected.items():
        np.testing.assert_array_equal(seen[index][0], frame)
        assert seen[index][1:] == (points, label)


def test_a_custom_builder_round_trips_through_tb_build(tf, tmp_path):
    spec = write_spec(tmp_path, SPEC, {"frames.py": FRAMES})
    _check(tb.build(spec, output=tmp_path / "out", workers=1))


def test_a_custom_builder_builds_through_the_command_line_from_another_folder(tf, tmp_path):
    spec = dict(SPEC, source={"builder": "frames.py:Frames", "options": {"count": 20}})
    path = write_spec(tmp_path / "project", spec, {"frames.py": FRAMES})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = subprocess.run([sys.executable, "-m", "tfrecord_builder", "build", str(path), "--output", "out"],
                            cwd=elsewhere, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    _check(tb.load(elsewhere / "out" / "clips" / "1.0.0").info)


BAD_BUILDERS = [
    ("duplicate keys", '''
        def generate(self, split):
            yield "a", {"x": 1}
            yield "b", {"x": 2}
            yield "a", {"x": 3}
     ''', r"Bad, key 'a': duplicate key 'a' \(also yielded at Bad, key 'a'\); expected unique keys"),
    ("a field the spec lacks", '''
        def generate(self, split):
            yield 1, {"x": 1, "colour": "red"}
     ''', r"Bad, key 1: field `colour` is not in the spec; expected only: x"),
    ("a missing field", '''
        def generate(self, split):
            yield 1, {"x": 1}
            yield 2, {}
     ''', r"Bad, key 2: feature `x`: missing value \(the spec gives no `default`\)"),
    ("not a dict", '''
        def generate(self, split):
            yield 1, [1, 2]
     ''', r"Bad, key 1: expected a dict of values, received list"),
]


@pytest.mark.parametrize("case, body, message", BAD_BUILDERS, ids=[case[0] for case in BAD_BUILDERS])
def test_builder_mistakes_name_the_key_and_the_feature(tmp_path, case, body, message):
    code = "import tfrecord_builder as tb\n\n\nclass Bad(tb.Builder):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    spec = {"name": "bad", "source": {"builder": "bad:Bad"}, "features": {"x": {"dtype": "int64"}}}
    with pytest.raises(tb.DataError, match=message):
        tb.build(write_spec(tmp_path, spec, {"bad.py": code}), output=tmp_path / "out", workers=1)
    assert not list(tmp_path.rglob("dataset_info.json"))


def test_duplicate_keys_through_the_command_line_are_one_line_and_exit_1(tmp_path):
    code = "import tfrecord_builder as tb\n\nclass Bad(tb.Builder):\n    def generate(self, split):\n" \
           "        yield 'k', {'x': 1}\n        yield 'k', {'x': 2}\n"
    spec = {"name": "bad", "source": {"builder": "bad:Bad"}, "features": {"x": {"dtype": "int64"}}}
    path = write_spec(tmp_path, spec, {"bad.py": code})
    result = subprocess.run([sys.executable, "-m", "tfrecord_builder", "build", str(path), "--output", "out"],
                            cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: Bad, key 'k': duplicate key 'k'")


@pytest.mark.parametrize("code, builder, message", [
    ("class NotABuilder:\n    pass\n", "mod:NotABuilder", "mod:NotABuilder is not a tfrecord_builder.Builder subclass"),
    ("raise RuntimeError('boom')\n", "mod:Anything", "importing 'mod' failed: RuntimeError: boom"),
    ("x = 1\n", "mod:Missing", "module 'mod' has no class 'Missing'"),
    ("x = 1\n", "nowhere:Missing", "can't import 'nowhere'"),
])
def test_unusable_builder_modules_are_spec_errors(tmp_path, code, builder, message):
    spec = {"name": "bad", "source": {"builder": builder}, "features": {"x": {"dtype": "int64"}}}
    with pytest.raises(tb.SpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        tb.build(write_spec(tmp_path, spec, {"mod.py": code}), output=tmp_path / "out", workers=1)


def test_a_split_the_source_does_not_provide(tmp_path):
    code = ("import tfrecord_builder as tb\n\nclass Two(tb.Builder):\n    def splits(self):\n"
            "        return ['train', 'test']\n    def generate(self, split):\n        yield 1, {'x': 1}\n")
    spec = {"name": "s", "source": {"builder": "two:Two"}, "splits": {"train": {}, "validation": {}},
            "features": {"x": {"dtype": "int64"}}}
    with pytest.raises(tb.SpecError, match="splits.validation: the source provides no split 'validation'"):
        tb.build(write_spec(tmp_path, spec, {"two.py": code}), output=tmp_path / "out", workers=1)


def test_the_npz_example_builder_round_trips_arrays(tf, tmp_path):
    info = tb.build(ROOT / "specs" / "digits_npz.yaml", output=tmp_path, workers=1)
    with np.load(ROOT / "data" / "digits.npz") as data:
        images, targets = data["images"], data["target"]
    seen = 0
    for split in info.splits:
        for features, labels in tb.input_fn(info.path, split, batch_size=500, shuffle=False):
            for image, label in zip(features["images"].numpy(), labels.numpy()):
                matches = np.flatnonzero((images == image).all(axis=(1, 2)) & (targets == label))
                assert len(matches) >= 1
                seen += 1
    assert seen == len(images) == 1797


def test_the_captions_example_builder_stores_images_text_and_token_ids(tf, tmp_path):
    info = tb.build(ROOT / "specs" / "digit_captions.yaml", output=tmp_path, workers=1)
    vocabulary = (ROOT / "data" / "digit_captions_vocab.txt").read_text().split()
    captions = {}
    with open(ROOT / "data" / "digit_captions.jsonl") as file:
        for line in file:
            entry = json.loads(line)
            captions[entry["caption"]] = entry["file"]
    count = 0
    for features in tb.input_fn(info.path, "test", batch_size=64, shuffle=False):
        for caption, tokens in zip(features["caption"].numpy(), features["tokens"].to_list()):
            text = caption.decode()
            assert [vocabulary[token] for token in tokens] == text.split()
            assert text in captions
            count += 1
    assert count == info.splits["test"].num_examples
    assert features["image"].shape[1:] == [8, 8, 1]


def test_installed_packages_register_builders_by_entry_point(tmp_path, monkeypatch):
    site = tmp_path / "site"
    (site / "squares_pkg-1.0.dist-info").mkdir(parents=True)
    (site / "squares_pkg-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: squares-pkg\nVersion: 1.0\n")
    (site / "squares_pkg-1.0.dist-info" / "entry_points.txt").write_text(
        "[tfrecord_builder.builders]\nsquares = squares_pkg:Squares\n")
    (site / "squares_pkg.py").write_text(
        "import tfrecord_builder as tb\n\nclass Squares(tb.Builder):\n    def generate(self, split):\n"
        "        for n in range(5):\n            yield n, {'n': n, 'square': n * n}\n")
    monkeypatch.syspath_prepend(str(site))
    spec = {"name": "sq", "source": {"builder": "squares"}, "output": {"shuffle": False},
            "features": {"n": {"dtype": "int64"}, "square": {"dtype": "int64"}}}
    info = tb.build(write_spec(tmp_path, spec), output=tmp_path / "out", workers=1)
    assert info.splits["train"].num_examples == 5
    with pytest.raises(tb.SpecError, match="unknown builder 'squarez' \\(did you mean `squares`\\?\\)"):
        tb.load_spec(write_spec(tmp_path, dict(spec, source={"builder": "squarez"}), name="typo.yaml"))


@pytest.mark.parametrize("shuffle,workers,max_runs", [(True, 1, 128), (False, 1, 128), (True, 2, 128), (True, 2, 4)])
def test_duplicate_keys_far_apart_are_found_beyond_the_memory_budget(tmp_path, monkeypatch, shuffle, workers, max_runs):
    """Spilled by the build's process, or written to runs by workers (and those merged into fewer,
    longer runs first): the twins meet in the merge, named by both their labels."""
    from tfrecord_builder.features import TensorFeature
    from tfrecord_builder.write import collect

    monkeypatch.setattr(collect, "MAX_RUNS", max_runs)
    monkeypatch.setattr(collect, "SPILL_BYTES", 200)  # a sorted run every batch: the twins meet in the merge
    monkeypatch.setattr(TensorFeature, "batch_rows", 50)
    code = ("import tfrecord_builder as tb\n\nclass Bad(tb.Builder):\n    def generate(self, split):\n"
            "        for i in range(3000):\n            yield f'k{i}', {'x': i}\n        yield 'k1234', {'x': -1}\n")
    spec = {"name": "bad", "source": {"builder": "bad:Bad"}, "output": {"shuffle": shuffle},
            "features": {"x": {"dtype": "int64"}}}
    with pytest.raises(tb.DataError, match=r"^Bad, key 'k1234': duplicate key 'k1234' "
                                           r"\(also yielded at Bad, key 'k1234'\); expected unique keys$"):
        tb.build(write_spec(tmp_path, spec, {"bad.py": code}), output=tmp_path / "out", workers=workers)
    assert not list(tmp_path.rglob("dataset_info.json"))
    assert sorted(os.listdir(tmp_path / "out" / "bad")) == [".1.0.0.lock"]  # no staging or runs left behind


IN_MEMORY_IMAGES = '''
import numpy as np
from PIL import Image
import tfrecord_builder as tb


class Pictures(tb.Builder):
    """Images made in memory: NumPy arrays (RGB and grey) and PIL images, plain and derived."""

    def generate(self, split):
        rng = np.random.default_rng(3)
        for index in range(4):
            pixels = rng.integers(0, 256, (6, 5, 3), dtype=np.uint8)
            image = [pixels, Image.fromarray(pixels), Image.fromarray(pixels).rotate(0),
                     np.dstack([pixels[..., 0]] * 3)][index]
            yield index, {"image": image, "id": index}
'''


@pytest.mark.parametrize("encoding", ["png", "raw"])
def test_images_made_in_memory_are_stored_exactly(tf, tmp_path, encoding):
    """NumPy arrays and PIL images have no file (Pillow 13 gives them no `tile`)."""
    spec = {"name": "pictures", "source": {"builder": "pictures:Pictures"},
            "features": {"id": {"dtype": "int64"}, "image": {"type": "image", "encoding": encoding, "shape": [6, 5, 3]}}}
    info = tb.build(write_spec(tmp_path, spec, {"pictures.py": IN_MEMORY_IMAGES}), output=tmp_path / "out", workers=1)
    (batch,) = batches_as_numpy(tb.input_fn(info.path, "train", shuffle=False))
    rng = np.random.default_rng(3)
    expected = [rng.integers(0, 256, (6, 5, 3), dtype=np.uint8) for _ in range(4)]
    expected[3] = np.dstack([expected[3][..., 0]] * 3)
    for row, identifier in enumerate(batch["id"].tolist()):
        np.testing.assert_array_equal(batch["image"][row], expected[identifier])


GENERATOR_MISTAKES = [
    ("a key whose text changes between runs", "yield object(), {'x': 1}",
     r"^Bad, key <object object at .*>: expected a key of str, bytes or numbers \(or a tuple of them\), received "
     r"object: keys decide splits, so they must read the same in every run$"),
    ("a set as key", "yield frozenset({'a'}), {'x': 1}", r"received frozenset"),
    ("its own error", "yield 'a', {'x': 1}\nyield 'b', {'x': 2}\nraise RuntimeError('boom')",
     r"^Bad.generate\(None\) failed after key 'b': RuntimeError: boom$"),
    ("an error before the first record", "raise KeyError('gone')\nyield 1, {}",
     r"^Bad.generate\(None\) failed before its first record: KeyError: 'gone'$"),
    ("not a pair", "yield 'a', {'x': 1}, 'extra'", r"^Bad.generate\(None\): expected \(key, record\) pairs, received tuple of 3$"),
    ("returns None", "return None", r"^Bad.generate\(None\) returned None; expected it to yield \(key, record\) pairs$"),
]


@pytest.mark.parametrize("case, body, message", GENERATOR_MISTAKES, ids=[case[0] for case in GENERATOR_MISTAKES])
def test_generator_mistakes_are_one_line_naming_the_builder(tmp_path, case, body, message):
    code = "import tfrecord_builder as tb\n\n\nclass Bad(tb.Builder):\n    def generate(self, split):\n" + \
        textwrap.indent(body, "        ") + "\n"
    spec = {"name": "bad", "source": {"builder": "bad:Bad"}, "features": {"x": {"dtype": "int64"}}}
    with pytest.raises(tb.DataError, match=message):
        tb.build(write_spec(tmp_path, spec, {"bad.py": code}), output=tmp_path / "out", workers=1)
    assert not list(tmp_path.rglob("dataset_info.json"))


def test_a_builder_that_fails_to_start_is_a_spec_error_at_its_line(tmp_path):
    code = ("import tfrecord_builder as tb\n\nclass Picky(tb.Builder):\n    def __init__(self, *args):\n"
            "        super().__init__(*args)\n        raise ValueError('option `rate` must be set')\n")
    spec = {"name": "bad", "source": {"builder": "bad:Picky"}, "features": {"x": {"dtype": "int64"}}}
    with pytest.raises(tb.SpecError, match=r"line 3: source.builder: creating Picky failed: ValueError: option `rate` must be set$"):
        tb.build(write_spec(tmp_path, spec, {"bad.py": code}), output=tmp_path / "out", workers=1)


def test_a_spec_beside_a_checkout_of_the_package_still_uses_the_built_in_builders(tmp_path):
    """A spec in the repository's root (say, written there by `infer`) sits beside
    tfrecord_builder/builders/tabular.py: `csv` is still the package's own builder, not that file
    loaded on its own."""
    (tmp_path / "tfrecord_builder" / "builders").mkdir(parents=True)
    (tmp_path / "tfrecord_builder" / "builders" / "tabular.py").write_text("from .base import nothing\n")
    spec = write_spec(tmp_path, {"name": "t", "source": {"builder": "csv", "path": "t.csv"},
                                 "features": {"x": {"dtype": "int64"}}}, {"t.csv": "x\n1\n2\n"})
    info = tb.build(str(spec), output=str(tmp_path / "out"))
    assert sorted(int(record["x"]) for record in tb.read(info.path)) == [1, 2]
