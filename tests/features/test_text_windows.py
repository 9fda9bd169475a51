"""`window:` on a `text` feature: a long text cut into windows of ids, one record each, with its
offset and number kept; checked on real text (tests/support/texts.py) against BERT's SQuAD
loop written out here (run_squad.py's `doc_spans`), through tb.read, both input_fns and TFDS."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tfrecord_builder as tb
from conftest import write_spec
from support.reading import assert_same_files, files_of, read_both
from support.texts import english, english_vocab
from tfrecord_builder import text

TEXTS = english()


@pytest.fixture(scope="module")
def vocab(tmp_path_factory) -> Path:
    """A BERT vocab.txt learned from half of the text (`english_vocab`)."""
    return english_vocab(tmp_path_factory.mktemp("vocab"))


def squad_spans(length: int, room: int, stride: int) -> list[tuple[int, int]]:
    """run_squad.py's doc spans (start, length), as BERT's code writes them."""
    spans, start = [], 0
    while start < length:
        size = min(length - start, room)
        spans.append((start, size))
        if start + size == length:
            break
        start += min(size, stride)
    return spans or [(0, 0)]  # (an empty text: one record of its special ids)


def _rows(texts: list[str], firsts: list[str] | None = None) -> str:
    return "".join(json.dumps({"id": number, "text": line, **({"q": firsts[number]} if firsts else {})}) + "\n"
                   for number, line in enumerate(texts))


def _spec(feature: dict, **keys) -> dict:
    return {"name": "docs", "source": {"builder": "jsonl", "path": "rows.jsonl"},
            "features": {"id": {"dtype": "int64"}, "text": {"type": "text", **feature}}, **keys}


def _build(folder: Path, feature: dict, texts: list[str], firsts: list[str] | None = None, **keys) -> tb.DatasetInfo:
    path = write_spec(folder, _spec(feature, **keys), {"rows.jsonl": _rows(texts, firsts)})
    return tb.build(path, output=folder / "out", overwrite=True)


def _records(info: tb.DatasetInfo, split: str = "train") -> dict[tuple[int, int], dict]:
    found = {}
    for record in tb.read(info.path, split):
        key = (int(record["id"]), int(record["text_window"]))
        assert key not in found
        found[key] = record
    return found


def test_windows_give_back_every_id_with_the_strides_overlap(tmp_path, vocab):
    tokenizer = text.load(str(vocab))
    whole = tokenizer.encode(TEXTS)
    assert max(map(len, whole)) > 200 and min(map(len, whole)) < 20  # long texts and short ones
    info = _build(tmp_path, {"tokenizer": str(vocab), "window": {"tokens": 64, "stride": 24}}, TEXTS)
    records = _records(info)
    cls, sep = tokenizer.template.before[0][0], tokenizer.template.after[0][0]
    expected = 0
    for number, ids in enumerate(whole):
        spans = squad_spans(len(ids), 62, 24)  # 64 tokens less [CLS] and [SEP]
        expected += len(spans)
        covered = np.zeros(len(ids), dtype=int)
        for index, (start, size) in enumerate(spans):
            record = records[(number, index)]
            assert int(record["text_offset"]) == start
            assert record["text"].tolist() == [cls] + ids[start:start + size] + [sep]  # at most 64 ids
            covered[start:start + size] += 1
        assert covered.min(initial=1) >= 1  # every id, in order, at its offset
        if len(spans) > 1:  # neighbours overlap by 62 - 24 ids, the last ends at the text's end
            assert spans[-1][0] + spans[-1][1] == len(ids)
            assert all(covered[start:start + 62 - 24].min() == 2 for start, _ in spans[1:-1])
    assert len(records) == expected == info.splits["train"].num_examples
    assert sum(len(spans) == 1 for spans in (squad_spans(len(ids), 62, 24) for ids in whole)) > 10  # short: one record
    assert info.warnings == [f"feature `text`: {sum(tokenizer.specials.unk.id in ids for ids in whole)} texts with "
                             "unknown tokens ([UNK])"]  # (no cut: windows lose nothing)


def test_side_by_side_windows_hold_each_id_exactly_once(tmp_path, vocab):
    tokenizer = text.load(str(vocab))
    info = _build(tmp_path, {"tokenizer": str(vocab), "window": {"tokens": 40}, "special_tokens": False}, TEXTS)
    records = _records(info)
    for number, ids in enumerate(tokenizer.encode(TEXTS)):
        windows = sorted((key[1], record) for key, record in records.items() if key[0] == number)
        assert [index for index, _ in windows] == list(range(len(windows)))
        assert [int(record["text_offset"]) for _, record in windows] == list(range(0, max(len(ids), 1), 40))
        assert [i for _, record in windows for i in record["text"].tolist()] == ids  # each id once, in order


def test_a_pair_keeps_its_question_and_windows_the_passage_as_squad_does(tmp_path, vocab, tf):
    tokenizer = text.load(str(vocab))
    passages, questions = TEXTS[:80], [line[:60] for line in TEXTS[80:160]]
    info = _build(tmp_path, {"tokenizer": str(vocab), "source": ["q", "text"], "window": {"tokens": 96, "stride": 32}},
                  passages, questions)
    records = _records(info)
    cls, sep = tokenizer.template.pair_before[0][0], tokenizer.template.between[0][0]
    count = 0
    for number, (question, passage) in enumerate(zip(tokenizer.encode(questions), tokenizer.encode(passages))):
        for index, (start, size) in enumerate(squad_spans(len(passage), 96 - 3 - len(question), 32)):
            record = records[(number, index)]
            part = passage[start:start + size]
            assert record["text"].tolist() == [cls] + question + [sep] + part + [sep]
            assert record["text_segment_ids"].tolist() == [0] * (len(question) + 2) + [1] * (len(part) + 1)
            assert int(record["text_offset"]) == start
            count += 1
    assert count == len(records)
    batches = read_both(info, batch_size=16)  # the generated module's batches equal tb.input_fn's
    assert {"text", "text_mask", "text_segment_ids", "text_offset", "text_window", "id"} == set(batches[0])
    assert batches[0]["text_offset"].dtype == np.int64 and batches[0]["text"].shape[1] <= 96


def test_a_documents_windows_stay_in_its_split_with_keys_of_their_own_whatever_the_row_order(tmp_path, vocab):
    keys = {"splits": {"train": 0.5, "test": 0.5}, "output": {"shards": 2}}
    feature = {"tokenizer": str(vocab), "window": {"tokens": 32, "stride": 16}}
    one = _build(tmp_path / "a", feature, TEXTS, **keys)
    splits: dict[int, set] = {}
    for split in ("train", "test"):
        for record in tb.read(one.path, split):
            splits.setdefault(int(record["id"]), set()).add(split)
    assert sorted(splits) == list(range(len(TEXTS))) and all(len(found) == 1 for found in splits.values())
    assert set().union(*splits.values()) == {"train", "test"}
    reversed_rows = "".join(reversed(_rows(TEXTS).splitlines(keepends=True)))  # the same rows backwards
    path = write_spec(tmp_path / "b", _spec(feature, **keys), {"rows.jsonl": reversed_rows})
    two = tb.build(path, output=tmp_path / "b" / "out")
    shards = sorted(path.name for path in Path(one.path).glob("*.tfrecord*"))
    assert len(shards) == 4
    for name in shards:  # the same records, byte for byte: each window keyed by its row's key and number
        assert (Path(one.path) / name).read_bytes() == (Path(two.path) / name).read_bytes()
    path = write_spec(tmp_path / "c", _spec(feature, **keys), {"rows.jsonl": _rows(TEXTS)})
    assert_same_files(files_of(tb.build(path, output=tmp_path / "c" / "out", workers=1).path),
                      files_of(tb.build(path, output=tmp_path / "c" / "out", workers=2, overwrite=True).path))


def test_tfds_and_verify_read_the_offsets(tmp_path, vocab):
    from support.cli import assert_ok, run_cli
    info = _build(tmp_path, {"tokenizer": str(vocab), "window": {"tokens": 48, "stride": 46}}, TEXTS[:30])
    result = run_cli("verify", info.path, cwd=tmp_path)
    assert_ok(result)
    assert f"{info.splits['train'].num_examples} records, checksums and every record match the spec" in result.stdout
    tfds = pytest.importorskip("tensorflow_datasets")
    read = list(tfds.as_numpy(tfds.builder_from_directory(info.path).as_dataset(split="train", shuffle_files=False)))
    ours = {(int(r["id"]), int(r["text_window"])): int(r["text_offset"]) for r in tb.read(info.path, "train")}
    assert {(int(r["id"]), int(r["text_window"])): int(r["text_offset"]) for r in read} == ours


def test_a_question_that_leaves_no_room_names_its_row_and_is_skipped_under_skip(tmp_path, vocab):
    passages = ["the module " * 30] * 3
    questions = ["short", "the module " * 40, "short"]
    feature = {"tokenizer": str(vocab), "source": ["q", "text"], "window": {"tokens": 64, "stride": 16}}
    with pytest.raises(tb.DataError, match=r"rows.jsonl, line 2: feature `text`: the first text's 80 ids leave 0 of "
                                           r"the window's 64 tokens for the second, fewer than one; expected a "
                                           r"shorter first text$"):
        _build(tmp_path, feature, passages, questions)
    info = _build(tmp_path, feature, passages, questions, on_error="skip")
    assert info.skipped == 1 and sorted({int(r["id"]) for r in tb.read(info.path, "train")}) == [0, 2]


@pytest.mark.parametrize("feature, keys, expected", [
    ({"window": {"tokens": 64}, "max_length": 64}, {},
     "text.max_length: a window's `tokens` is each record's length: leave max_length out beside window:"),
    ({"window": {"tokens": 2}}, {}, "text.window.tokens: 2 leaves no room for text: the template adds 2 special ids"),
    ({"window": {"tokens": 10, "stride": 9}}, {},
     "text.window.stride: 9 is more than a window's 8 text ids (10 tokens less 2 special ids): ids would be skipped"),
    ({"window": {"tokens": 10, "stride": 0}}, {}, "text.window.stride: expected a positive number of ids, received 0"),
    ({"window": {"tokens": 64}}, {"splits": {"train": 0.5, "test": 0.5}, "stratify": "id"},
     "stratify: can't divide records that feature `text` cuts from rows"),
])
def test_window_mistakes_are_one_line_at_their_key(tmp_path, vocab, feature, keys, expected):
    spec = _spec({"tokenizer": str(vocab), **feature}, **keys)
    if "stratify" in keys:
        spec["features"]["id"] = {"type": "class_label", "names": ["a", "b"]}
    with pytest.raises(tb.SpecError) as error:
        tb.load_spec(write_spec(tmp_path, spec, {"rows.jsonl": ""}))
    assert expected in str(error.value) and "\n" not in str(error.value)


def test_per_step_text_cannot_be_windowed(tmp_path, vocab):
    spec = {"name": "docs", "format": "sequence_example", "source": {"builder": "jsonl", "path": "rows.jsonl"},
            "context": {"id": {"dtype": "int64"}},
            "sequence": {"text": {"type": "text", "tokenizer": str(vocab), "window": {"tokens": 8}}}}
    with pytest.raises(tb.SpecError, match=r"sequence.text.window: cuts a text into records: declare it under "
                                           r"`context:` or `features:`, not per step$"):
        tb.load_spec(write_spec(tmp_path, spec, {"rows.jsonl": ""}))
