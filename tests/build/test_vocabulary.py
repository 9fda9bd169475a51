"""Learned vocabularies (`type: text` with `vocabulary:`, build/vocabulary.py): learned from the
train split only, the same bytes from every build, worker count and runner, written beside the
shards and recorded, and every bad input refused in one line."""
from __future__ import annotations

import hashlib
import json
import random
import shutil
from pathlib import Path

import pytest

import tfrecord_builder as tb
from tfrecord_builder import text
from tfrecord_builder.build.plan import read_tasks
from tfrecord_builder.build.runners.steps import Steps
from tfrecord_builder.build.runners.contract import RunJob
from tfrecord_builder.build.runners.local import counted_words
from tfrecord_builder.build.vocabulary import LearnedFile, words_from, write_learned
from tfrecord_builder.builders.sources import source_builders
from tfrecord_builder.errors import DataError, SpecError
from tfrecord_builder.spec.load import load_spec

from conftest import write_spec
from support.engines import run_beam
from support.reading import assert_same_files, files_of

WORDS = "the movie was good bad great awful plot acting film story boring fun loved hated".split()


def _reviews(count: int = 240, seed: int = 3) -> list[dict]:
    """Reviews of common words, each with a word of its own (`only12`): which split holds a
    review decides whether its own word may be in the vocabulary."""
    generator = random.Random(seed)
    return [{"id": number, "sentiment": generator.choice(["neg", "pos"]),
             "review": " ".join(generator.choice(WORDS) for _ in range(generator.randint(2, 9))) + f" only{number}."}
            for number in range(count)]


def _jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def _spec(vocabulary: dict, **extra) -> dict:
    return {"name": "reviews", "source": {"builder": "jsonl", "path": "reviews.jsonl", "key": "id"},
            "features": {"id": {"dtype": "int64"},
                         "review": {"type": "text", "vocabulary": vocabulary, "max_length": 24},
                         "sentiment": {"type": "class_label", "names": ["neg", "pos"]}},
            "splits": {"train": 0.6, "validation": 0.2, "test": 0.2}, "output": {"shards": 2}, **extra}


def _vocabulary(info: tb.DatasetInfo, name: str = "review.vocab.txt") -> list[str]:
    return (Path(info.path) / name).read_text(encoding="utf-8").splitlines()


def _own_words(info: tb.DatasetInfo, split: str) -> dict[int, str]:
    return {int(record["id"]): f"only{int(record['id'])}" for record in tb.read(info.path, split)}


def test_the_vocabulary_holds_the_train_splits_words_and_no_other_splits(tmp_path):
    path = write_spec(tmp_path, _spec({"kind": "word", "size": 1000}), {"reviews.jsonl": _jsonl(_reviews())})
    info = tb.build(path, output=tmp_path / "out", workers=2)
    vocabulary = _vocabulary(info)
    assert vocabulary[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    train, held_out = _own_words(info, "train"), {**_own_words(info, "validation"), **_own_words(info, "test")}
    assert len(train) > 100 and len(held_out) > 50
    assert set(train.values()) <= set(vocabulary)
    assert not set(held_out.values()) & set(vocabulary)  # no validation or test text reached it
    assert set(vocabulary[5:]) == set(WORDS) | {"."} | set(train.values())
    for record in tb.read(info.path, "test", decode_text=True):  # its own word: unknown, the rest known
        assert record["review_text"].endswith(" [UNK].")
        assert list(record["review"]).count(1) == 1


def test_the_same_data_give_the_same_file_byte_for_byte_recorded_in_the_dataset(tmp_path):
    rows = _reviews(300, seed=5)
    path = write_spec(tmp_path, _spec({"kind": "wordpiece", "size": 80, "min_count": 2}),
                      {"reviews.jsonl": _jsonl(rows)})
    one = tb.build(path, output=tmp_path / "one", workers=1)
    first = files_of(one.path)
    shuffled = write_spec(tmp_path / "shuffled", _spec({"kind": "wordpiece", "size": 80, "min_count": 2}),
                          {"reviews.jsonl": _jsonl(random.Random(1).sample(rows, len(rows)))})
    two = tb.build(shuffled, output=tmp_path / "two", workers=2)  # another row order, two workers
    data = (Path(one.path) / "review.vocab.txt").read_bytes()
    assert data == (Path(two.path) / "review.vocab.txt").read_bytes()
    assert len(data.splitlines()) == 80
    assert files_of(one.path) == first
    saved = json.loads((Path(one.path) / "tfrecord_builder.json").read_text())["spec"]["features"]["review"]
    assert saved["vocabulary"] == {"kind": "wordpiece", "size": 80, "min_count": 2}
    assert saved["recorded"] == {"kind": "wordpiece", "sha256": hashlib.sha256(data).hexdigest(), "vocab_size": 80,
                                 "pad_id": 0, "unk_id": 1, "mask_id": 4, "special_ids": [0, 2, 3, 4],
                                 "file": "review.vocab.txt"}
    # reading finds it in the dataset's folder: decoded text, and the generated module's padding id
    texts = [record["review_text"] for record in tb.read(one.path, "train", decode_text=True)]
    assert len(texts) == one.splits["train"].num_examples and all(texts)
    assert "review.vocab.txt" in info_files(one)


def info_files(info: tb.DatasetInfo) -> list[str]:
    return sorted(path.name for path in Path(info.path).iterdir())


@pytest.mark.parametrize("kind, file", [("bpe", "review.tokenizer.json"), ("unigram", "review.tokenizer.json"),
                                        ("wordpiece", "review.vocab.txt"), ("word", "review.vocab.txt")])
def test_every_kind_is_written_as_the_file_its_tokenizer_loads(tmp_path, kind, file):
    path = write_spec(tmp_path, _spec({"kind": kind, "size": 60}), {"reviews.jsonl": _jsonl(_reviews(120))})
    info = tb.build(path, output=tmp_path / "out")
    data = (Path(info.path) / file).read_bytes()
    tokenizer = text.load(str(Path(info.path) / file))
    assert tokenizer.fingerprint == hashlib.sha256(data).hexdigest() == info.spec.features["review"].recorded.sha256
    for record in tb.read(info.path, "train"):  # the stored ids are the file's tokenizer's
        expected = tokenizer.inputs([_reviews(120)[int(record["id"])]["review"]], max_length=24).ids[0]
        assert list(record["review"]) == expected
    assert sorted(Path(info.path).glob("review.*")) == [Path(info.path) / file]


def test_splits_from_the_source_learn_from_the_train_file_and_else_the_first_split(tmp_path):
    rows = _reviews(60)
    files = {"fit.jsonl": _jsonl(rows[:40]), "held.jsonl": _jsonl(rows[40:])}
    spec = _spec({"kind": "word", "size": 500})
    spec["source"] = {"builder": "jsonl", "key": "id"}
    spec["splits"] = {"fit": {"path": "fit.jsonl"}, "holdout": {"path": "held.jsonl"}}  # no `train`: the first
    info = tb.build(write_spec(tmp_path, spec, files), output=tmp_path / "out")
    vocabulary = set(_vocabulary(info))
    assert {f"only{number}" for number in range(40)} <= vocabulary
    assert not {f"only{number}" for number in range(40, 60)} & vocabulary
    spec["splits"] = {"holdout": {"path": "held.jsonl"}, "train": {"path": "fit.jsonl"}}  # `train`, declared second
    info = tb.build(write_spec(tmp_path / "two", spec, files), output=tmp_path / "two" / "out")
    assert set(_vocabulary(info)) == vocabulary


def test_a_stratified_build_learns_after_its_strata(tmp_path):
    path = write_spec(tmp_path, _spec({"kind": "word", "size": 1000}, stratify="sentiment", on_error="skip"),
                      {"reviews.jsonl": _jsonl(_reviews())})
    info = tb.build(path, output=tmp_path / "out", workers=2)
    vocabulary = set(_vocabulary(info))
    assert set(_own_words(info, "train").values()) <= vocabulary
    assert not (set(_own_words(info, "test").values()) | set(_own_words(info, "validation").values())) & vocabulary


def test_a_record_skipped_for_another_feature_is_not_counted(tmp_path):
    rows = _reviews(40)
    rows[0]["sentiment"] = "meh"  # not a class: skipped
    spec = _spec({"kind": "word", "size": 1000}, on_error="skip")
    spec["splits"] = {"train": 1.0}
    info = tb.build(write_spec(tmp_path, spec, {"reviews.jsonl": _jsonl(rows)}), output=tmp_path / "out")
    assert info.skipped == 1
    assert "only0" not in _vocabulary(info) and "only1" in _vocabulary(info)


def test_the_counts_are_the_same_whatever_order_the_tasks_run_in(tmp_path, monkeypatch):
    """The engines' seam (Steps.count_words), tasks last to first: the local pass's counts."""
    monkeypatch.setenv("TFRECORD_BUILDER_TASK_BYTES", "2000")  # several read tasks
    path = write_spec(tmp_path, _spec({"kind": "word", "size": 100}), {"reviews.jsonl": _jsonl(_reviews(300))})
    spec = load_spec(path)
    builders = source_builders(spec)
    tasks = read_tasks(builders)
    assert len(tasks) > 3
    job = RunJob(spec, tasks, dict(builders), staging=str(tmp_path), shards=str(tmp_path), build_id="", kept={},
                 restored=None, workers=1, progress=None)
    steps = Steps.of(job)
    found = steps.builders()
    reversed_counts = words_from([steps.count_words(found, task) for task in tasks[::-1]])
    assert reversed_counts == counted_words(spec, tasks, dict(builders), 2, None)
    assert sum(reversed_counts["review"].values()) > 300


def test_a_resumed_build_keeps_a_file_of_the_same_bytes(tmp_path):
    write_learned(str(tmp_path), [LearnedFile("review", "review.vocab.txt", b"[PAD]\n")])
    before = (tmp_path / "review.vocab.txt").stat()
    write_learned(str(tmp_path), [LearnedFile("review", "review.vocab.txt", b"[PAD]\n")])
    assert (tmp_path / "review.vocab.txt").stat().st_ino == before.st_ino
    write_learned(str(tmp_path), [LearnedFile("review", "review.vocab.txt", b"[PAD]\n[UNK]\n")])
    assert (tmp_path / "review.vocab.txt").read_bytes() == b"[PAD]\n[UNK]\n"


def test_a_dry_run_learns_from_the_records_it_reads_and_says_so(tmp_path):
    path = write_spec(tmp_path, _spec({"kind": "word", "size": 1000}), {"reviews.jsonl": _jsonl(_reviews())})
    plan = tb.dry_run(path, sample=20)
    info = tb.build(path, output=tmp_path / "out")
    recorded = info.spec.features["review"].recorded
    assert plan.findings[0] == (f"feature `review`: vocabulary learned from the train split's texts, "
                                f"{recorded.vocab_size:,} tokens (sha256 {recorded.sha256[:12]}...), as the build "
                                "learns it; it writes it beside the shards as review.vocab.txt")
    assert not (tmp_path / "build").exists()


@pytest.mark.parametrize("vocabulary, line", [
    ({"kind": "wordpiece", "size": 5}, "features.review.vocabulary.size: 5: expected more than the 5 special tokens "
                                       "([PAD] [UNK] [CLS] [SEP] [MASK])"),
    ({"kind": "sentencepiece", "size": 50}, "features.review.vocabulary.kind: "),
    ({"kind": "word", "size": 50, "min_count": 0}, "features.review.vocabulary.min_count: expected a count, 1 or "
                                                   "more, received 0"),
])
def test_a_bad_vocabulary_is_one_line_at_its_key(tmp_path, vocabulary, line):
    path = write_spec(tmp_path, _spec(vocabulary), {"reviews.jsonl": _jsonl(_reviews(10))})
    with pytest.raises(SpecError) as raised:
        tb.build(path, output=tmp_path / "out")
    assert line in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.parametrize("given", [{"tokenizer": "vocab.txt", "vocabulary": {"kind": "word", "size": 50}}, {}])
def test_a_text_takes_a_tokenizer_or_a_vocabulary_exactly(tmp_path, given):
    spec = _spec({"kind": "word", "size": 50})
    spec["features"]["review"] = {"type": "text", **given}
    path = write_spec(tmp_path, spec, {"reviews.jsonl": _jsonl(_reviews(10)), "vocab.txt": "[PAD]\n[UNK]\n"})
    with pytest.raises(SpecError) as raised:
        tb.build(path, output=tmp_path / "out")
    assert str(raised.value).endswith("features.review: expected a tokenizer file (`tokenizer: vocab.txt`) or a "
                                      "vocabulary to learn (`vocabulary: {kind: wordpiece, size: 8000}`): exactly one "
                                      "of the two")


def test_a_learned_vocabulary_masks_for_the_mlm_view_and_has_no_module_before_its_build(tmp_path):
    path = write_spec(tmp_path, _spec({"kind": "wordpiece", "size": 80}, input={"text": "keras_hub",
                                                                                "mlm": {"rate": 0.3, "seed": 5}}),
                      {"reviews.jsonl": _jsonl(_reviews())})
    with pytest.raises(SpecError, match=r"feature `review`: its vocabulary is learned by the build \(`vocabulary:`\), "
                                        r"so its ids are known only then; the build writes the generated module"):
        tb.generate_module(path)
    info = tb.build(path, overwrite=True)
    saved = json.loads((Path(info.path) / "tfrecord_builder.json").read_text())["spec"]["features"]["review"]
    assert (saved["recorded"]["mask_id"], saved["recorded"]["special_ids"]) == (4, [0, 2, 3, 4])   # [MASK]; [PAD] [CLS] [SEP] [MASK]
    stored = [record["review"].tolist() for record in tb.read(info.path, "train")]
    x, y, weights = next(iter(tb.input_fn(info.path, "train", batch_size=len(stored), shuffle=False)))
    positions, picked = x["mask_positions"].numpy(), weights.numpy() > 0
    assert picked.any()
    for row, ids in enumerate(stored):   # the targets are the stored ids at the picked positions, never a special one
        assert [ids[at] for at in positions[row][picked[row]]] == y.numpy()[row][picked[row]].tolist()
        assert not {ids[at] for at in positions[row][picked[row]]} & {0, 2, 3, 4}


def test_a_train_split_without_text_says_what_is_missing(tmp_path):
    rows = [{**row, "review": None} for row in _reviews(30)]
    path = write_spec(tmp_path, _spec({"kind": "word", "size": 50}), {"reviews.jsonl": _jsonl(rows)})
    with pytest.raises(DataError) as raised:
        tb.build(path, output=tmp_path / "out")
    assert str(raised.value) == ("feature `review`: the train split has no text to learn a vocabulary from "
                                 "(vocabulary: kind word, size 50); expected text in `review` of its records")
    path = write_spec(tmp_path / "few", _spec({"kind": "word", "size": 50, "min_count": 1000}),
                      {"reviews.jsonl": _jsonl(_reviews(30))})
    with pytest.raises(DataError) as raised:
        tb.build(path, output=tmp_path / "few" / "out")
    assert str(raised.value).startswith("feature `review`: the train split has no word seen at least 1000 times "
                                        "(min_count) among its ")
    assert not (tmp_path / "out" / "reviews" / "1.0.0").exists()  # nothing half-written


def _engine_spec(tmp_path: Path) -> Path:
    spec = _spec({"kind": "bpe", "size": 70}, stratify="sentiment")
    spec["features"]["pair"] = {"type": "text", "source": ["review", "other"], "vocabulary": {"kind": "wordpiece",
                                                                                             "size": 90}}
    rows = [{**row, "other": row["review"][::-1]} for row in _reviews(400, seed=11)]
    return write_spec(tmp_path, spec, {"reviews.jsonl": _jsonl(rows)})


@pytest.mark.spark
def test_spark_learns_the_local_vocabulary_and_writes_the_local_bytes(spark, tmp_path, monkeypatch):
    """On the run's one session on the cluster (support/spark_cluster.py): two executors."""
    monkeypatch.setenv("TFRECORD_BUILDER_TASK_BYTES", "4000")  # several tasks, on both executors
    path = _engine_spec(tmp_path)
    local = files_of(tb.build(path, output=tmp_path / "out", workers=2).path)
    shutil.rmtree(tmp_path / "out")
    built = files_of(tb.build(path, output=tmp_path / "out", runner="spark").path)
    assert {"review.tokenizer.json", "pair.vocab.txt"} <= set(local)
    assert_same_files(local, built)


@pytest.mark.beam
def test_beam_learns_the_local_vocabulary_and_writes_the_local_bytes(tmp_path, monkeypatch):
    monkeypatch.setenv("TFRECORD_BUILDER_TASK_BYTES", "4000")
    path = _engine_spec(tmp_path)
    local = files_of(tb.build(path, output=tmp_path / "out", workers=2).path)
    shutil.rmtree(tmp_path / "out")
    done = run_beam("build", str(path), "--output", str(tmp_path / "out"), "--workers", "2")
    assert done.returncode == 0, done.stderr
    assert_same_files(local, files_of(tmp_path / "out" / "reviews" / "1.0.0"))
