"""`builder: conll`: CoNLL-2003 and CoNLL-U files, one record per sentence.

The data are tests/support/conll.py's excerpts; every value read back is compared with an
independent reading: the `conllu` package's parser for CoNLL-U, and a plain split of the text
for CoNLL-2003.
"""
from __future__ import annotations

import gzip
import shutil
import tracemalloc

import pytest

import tfrecord_builder as tb
from tfrecord_builder.builders.base import parsed_batch
from tfrecord_builder.builders import conll
from tfrecord_builder.builders.conll import ConllBuilder, count_sentences, sentence_runs
from tfrecord_builder.builders.conll_format import Layout, sentences
from tfrecord_builder.errors import DataError, SpecError
from tfrecord_builder.features.notices import Notices
from tfrecord_builder.spec.load import load_spec

from conftest import write_spec
from support.conll import CONLL2003, CONLLU, CONLLU_FIELDS, NER, conll2003_sentences, conllu_reference, without_syntax
from support.reading import files_of


def ner_spec(path: str = "eng.train", **source) -> dict:
    return {"name": "ner", "source": {"builder": "conll", "path": path, "columns": ["word", "pos", "chunk", "ner"],
                                      **source},
            "splits": {"train": 1.0}, "output": {"shuffle": False},
            "features": {"words": {"dtype": "string", "shape": [None], "source": "word"},
                         "pos": {"dtype": "string", "shape": [None]},
                         "tags": {"type": "class_label", "shape": [None], "source": "ner", "names": NER}}}


def ud_spec(path: str = "en_ewt-ud-train.conllu") -> dict:
    features = {name: {"dtype": "int64" if name in ("id", "head") else "string", "shape": [None]}
                for name in CONLLU_FIELDS}
    return {"name": "ud", "source": {"builder": "conll", "path": path}, "splits": {"train": 1.0},
            "output": {"shuffle": False},
            "features": {**features, "sent_id": {"dtype": "string"}, "text": {"dtype": "string"}}}


def _text(values) -> list[str]:
    return [value.decode("utf-8") for value in values]


def test_conll2003_every_word_and_tag_of_every_sentence(tmp_path):
    info = tb.build(write_spec(tmp_path, ner_spec(), {"eng.train": CONLL2003}), output=tmp_path / "out", workers=1)
    records = list(tb.read(info.path, "train"))
    expected = conll2003_sentences(CONLL2003)
    assert len(records) == len(expected) == 6
    for record, sentence in zip(records, expected):
        assert _text(record["words"]) == [token[0] for token in sentence]
        assert _text(record["pos"]) == [token[1] for token in sentence]
        assert [NER[index] for index in record["tags"].tolist()] == [token[3] for token in sentence]
    assert _text(records[0]["words"]) == ["EU", "rejects", "German", "call", "to", "boycott", "British", "lamb", "."]
    assert records[0]["tags"].tolist() == [3, 0, 7, 0, 0, 0, 7, 0, 0]
    assert info.warnings == []


def test_conllu_every_column_equals_the_conllu_package(tmp_path):
    info = tb.build(write_spec(tmp_path, ud_spec(), {"en_ewt-ud-train.conllu": CONLLU}), output=tmp_path / "out",
                    workers=1)
    records = list(tb.read(info.path, "train"))
    expected = conllu_reference(CONLLU)
    assert len(records) == len(expected) == 3
    for record, sentence in zip(records, expected):
        for name in CONLLU_FIELDS:
            values = record[name].tolist() if name in ("id", "head") else _text(record[name])
            assert values == sentence[name], name
        assert record["sent_id"].decode() == sentence["sent_id"]
        assert record["text"].decode() == sentence["text"]
    assert records[1]["id"].tolist() == list(range(1, 10))  # the range 2-3 and the empty node 8.1 left out
    assert _text(records[1]["form"]) == ["I", "can", "not", "go", ",", "but", "you", "can", "."]
    assert sorted(info.warnings) == [
        "source: 1 CoNLL-U empty node (IDs such as 5.1) left out of the word lists",
        "source: 1 CoNLL-U multiword token (ID ranges such as 3-4) left out of the word lists: the words they "
        "stand for are listed"]


def test_ner_tags_as_class_labels_through_input_fn(tmp_path, tf):
    info = tb.build(write_spec(tmp_path, ner_spec(), {"eng.train": CONLL2003}), output=tmp_path / "out", workers=1)
    (batch,) = list(tb.input_fn(info.path, "train", batch_size=6, shuffle=False))
    expected = conll2003_sentences(CONLL2003)
    assert batch["tags"].to_list() == [[NER.index(token[3]) for token in sentence] for sentence in expected]
    assert batch["words"].to_list() == [[token[0].encode() for token in sentence] for sentence in expected]
    assert tb.load(info.path).features["tags"].names == NER


def test_keys_are_file_and_sentence_number_the_same_whether_read_whole_or_in_tasks(tmp_path, monkeypatch):
    text = CONLL2003 * 30
    spec = load_spec(write_spec(tmp_path, ner_spec(), {"eng.train": text}))
    whole = ConllBuilder(spec, str(tmp_path / "eng.train"))
    assert len(whole.tasks(None)) == 1
    records = list(whole.generate(None))
    monkeypatch.setenv("TFRECORD_BUILDER_TASK_BYTES", "700")
    cut = ConllBuilder(spec, str(tmp_path / "eng.train"))
    parts = cut.tasks(None)
    assert len(parts) > 10
    assert [record for part in parts for record in cut.generate_task(None, part)] == records
    assert [key for key, _ in records] == [f"eng.train#{number}" for number in range(1, 6 * 30 + 1)]
    assert [record["word"] for _, record in records[:6]] == [[token[0] for token in sentence]
                                                             for sentence in conll2003_sentences(CONLL2003)]


@pytest.mark.parametrize("batch_size", [1, 2, 3, 5, 1000])
def test_batches_cut_before_a_sentence_hold_every_line_once(batch_size):
    layout = Layout("conllu", tuple(CONLLU_FIELDS))
    data = (CONLLU * 3).encode()
    runs = list(sentence_runs(iter([data]), layout, batch_size))
    assert b"".join(run for run, _ in runs) == data
    assert [count for _, count in runs[:-1]] == [batch_size] * (len(runs) - 1)
    assert sum(count for _, count in runs) == count_sentences(data, layout) == 9
    for run, count in runs:
        assert len(list(sentences(run, "x", 1, layout, Notices()))) == count


def test_two_builds_one_and_two_workers_and_read_tasks_give_the_same_bytes(tmp_path, monkeypatch):
    spec = ner_spec()
    spec["splits"] = {"train": 0.7, "test": 0.3}
    spec["output"] = {"shuffle": True}
    path = write_spec(tmp_path, spec, {"eng.train": CONLL2003 * 30})
    out = tmp_path / "out"
    first = tb.build(path, output=out, workers=1)
    reference = files_of(out)
    assert first.splits["train"].num_examples + first.splits["test"].num_examples == 180
    shutil.rmtree(out)
    tb.build(path, output=out, workers=2)
    assert files_of(out) == reference
    shutil.rmtree(out)
    monkeypatch.setenv("TFRECORD_BUILDER_TASK_BYTES", "700")
    tb.build(path, output=out, workers=2)
    assert files_of(out) == reference


def test_splits_by_file_and_a_glob_of_files(tmp_path):
    testa = CONLL2003.split("-DOCSTART- -X- -X- O\n\nSOCCER")[0]
    testb = "-DOCSTART- -X- -X- O\n\nSOCCER" + CONLL2003.split("-DOCSTART- -X- -X- O\n\nSOCCER")[1]
    spec = ner_spec()
    spec["splits"] = {"train": {"path": "conll/eng.train"}, "test": {"path": "conll/eng.testb"}}
    info = tb.build(write_spec(tmp_path, spec, {"conll/eng.train": testa, "conll/eng.testb": testb}),
                    output=tmp_path / "out", workers=1)
    assert (info.splits["train"].num_examples, info.splits["test"].num_examples) == (4, 2)
    assert _text(next(tb.read(info.path, "test"))["words"])[:3] == ["SOCCER", "-", "JAPAN"]

    spec = ud_spec("ud/**/*.conllu")
    files = {"ud/a/one.conllu": CONLLU, "ud/b/two.conllu": CONLLU.replace("Zürich", "Bern"), "ud/notes.txt": "x"}
    folder = tmp_path / "glob"
    info = tb.build(write_spec(folder, spec, files), output=folder / "out", workers=1)
    records = list(tb.read(info.path, "train"))
    assert len(records) == 6
    assert _text(records[2]["form"])[4] == "Zürich" and _text(records[5]["form"])[4] == "Bern"
    builder = ConllBuilder(load_spec(folder / "spec.yaml"), str(folder / "ud/**/*.conllu"))
    assert [key for key, _ in builder.generate(None)] == [f"{name}#{number}" for name in ("a/one.conllu", "b/two.conllu")
                                                          for number in (1, 2, 3)]


def test_a_compressed_file_and_a_byte_order_mark(tmp_path):
    files = {"en.conllu.gz": gzip.compress(("\ufeff" + CONLLU).encode("utf-8"))}
    info = tb.build(write_spec(tmp_path, ud_spec("en.conllu.gz"), files), output=tmp_path / "out", workers=1)
    assert [_text(record["form"]) for record in tb.read(info.path, "train")] == [
        sentence["form"] for sentence in conllu_reference(CONLLU)]


def _error(tmp_path, spec: dict, files: dict) -> str:
    with pytest.raises(DataError) as raised:
        tb.build(write_spec(tmp_path, spec, files), output=tmp_path / "out", workers=1)
    return str(raised.value)


def test_a_line_with_another_number_of_columns(tmp_path):
    text = CONLL2003.replace("Blackburn NNP I-NP I-PER", "Blackburn NNP I-PER")
    assert _error(tmp_path, ner_spec(), {"eng.train": text}) == (
        "eng.train, line 14: expected 4 columns (word pos chunk ner), received 3")
    text = CONLLU.replace("6\tstory\tstory\tNOUN\tNN\t", "6\tstory story\tNOUN\tNN\t")
    assert _error(tmp_path, ud_spec("x.conllu"), {"x.conllu": text}) == (
        "x.conllu, line 10: expected 10 tab-separated columns (id form lemma upos xpos feats head deprel deps misc), "
        "received 9")


def test_an_id_that_does_not_follow(tmp_path):
    text = CONLLU.replace("5\tthis\t", "6\tthis\t")
    assert _error(tmp_path, ud_spec("x.conllu"), {"x.conllu": text}) == (
        "x.conllu, line 9: id '6': expected 5 (a sentence's words are numbered 1, 2, 3, ...; 3-4 a multiword token, "
        "5.1 an empty node)")
    text = CONLLU.replace("4\tcomes\tcome\tVERB\tVBZ\tMood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin\t0",
                          "4\tcomes\tcome\tVERB\tVBZ\tMood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin\t_")
    assert _error(tmp_path, ud_spec("x.conllu"), {"x.conllu": text}) == (
        "x.conllu, line 8: head '_': expected the ID of the word's head (0 for the root), or `_` for every word of "
        "a sentence without syntax")


def test_a_conllu_file_without_syntax_reads_its_words_and_tags_and_refuses_a_head_feature(tmp_path):
    """Tagged-only CoNLL-U (every HEAD `_`, as POS and NER tools write it) is read: its words and
    tags as any file's; an int64 `head` feature of it is refused, never filled in."""
    text = without_syntax(CONLLU)
    spec = ud_spec("x.conllu")
    del spec["features"]["head"]
    info = tb.build(write_spec(tmp_path, spec, {"x.conllu": text}), output=tmp_path / "out", workers=1)
    records = list(tb.read(info.path, "train"))
    expected = conllu_reference(CONLLU)
    assert [_text(record["form"]) for record in records] == [sentence["form"] for sentence in expected]
    assert [_text(record["upos"]) for record in records] == [sentence["upos"] for sentence in expected]
    assert [_text(record["deprel"]) for record in records] == [["_"] * len(sentence["form"]) for sentence in expected]
    message = _error(tmp_path / "with_head", ud_spec("x.conllu"), {"x.conllu": text})
    assert message == ('x.conllu, line 1: feature `head`: element 0: expected an integer in [-9223372036854775808, '
                       '9223372036854775807] (int64), received "_"')


def test_a_file_that_is_not_utf8_and_an_empty_file(tmp_path):
    text = CONLL2003.replace("BRUSSELS", "BRÜSSEL").encode("latin-1")
    assert _error(tmp_path, ner_spec(), {"eng.train": text}) == (
        "eng.train, line 16: not valid UTF-8 text (byte 0xdc at column 3)")
    assert _error(tmp_path, ner_spec(), {"eng.train": b""}) == (
        "eng.train: the file is empty; expected CoNLL sentences (token lines, a blank line after each sentence)")
    assert _error(tmp_path, ner_spec(), {"eng.train": "-DOCSTART- -X- -X- O\n\n\n"}) == (
        "eng.train: no sentences; expected token lines, a blank line after each sentence")


def test_on_error_skip_lists_the_sentence_and_keeps_the_others_keys(tmp_path):
    spec = ner_spec()
    spec["on_error"] = "skip"
    text = CONLL2003.replace("Blackburn NNP I-NP I-PER", "Blackburn NNP I-PER")
    info = tb.build(write_spec(tmp_path, spec, {"eng.train": text}), output=tmp_path / "out", workers=1)
    assert info.skipped == 1
    words = [_text(record["words"]) for record in tb.read(info.path, "train")]
    assert words == [[token[0] for token in sentence] for index, sentence in enumerate(conll2003_sentences(CONLL2003))
                     if index != 1]


def test_the_spec_errors(tmp_path):
    spec = ner_spec()
    del spec["source"]["columns"]
    with pytest.raises(SpecError, match=r"source\.columns.*a CoNLL-2003 file's columns have no standard names: name "
                                        r"them, e.g. `columns: \[word, pos, chunk, ner\]`"):
        tb.build(write_spec(tmp_path, spec, {"eng.train": CONLL2003}), output=tmp_path / "out")
    spec = ud_spec("x.conllu")
    spec["source"]["columns"] = ["id", "form"]
    with pytest.raises(SpecError, match=r"a CoNLL-U file has 10 columns \(id form lemma upos xpos feats head deprel "
                                        r"deps misc\); received 2 names"):
        tb.build(write_spec(tmp_path, spec, {"x.conllu": CONLLU}), output=tmp_path / "out")
    spec = {"name": "t", "source": {"builder": "csv", "path": "t.csv", "format": "conllu"},
            "features": {"a": {"dtype": "int64"}}}
    with pytest.raises(SpecError, match=r"`format` is read by the conll builder, not by csv"):
        load_spec(write_spec(tmp_path, spec, {"t.csv": "a\n1\n"}))
    spec = ud_spec("ud/*.conllu")
    with pytest.raises(SpecError, match=r"ud/\*\.conllu: the pattern matches no file"):
        tb.build(write_spec(tmp_path, spec), output=tmp_path / "out")


def _peak_bytes_reading(tmp_path, copies: int) -> int:
    """The most memory Python held while every sentence of a file of `copies` excerpts was cut
    into batches and parsed, as a build does (traced allocations)."""
    folder = tmp_path / str(copies)
    spec = load_spec(write_spec(folder, ner_spec(), {"eng.train": CONLL2003 * copies}))
    builder = ConllBuilder(spec, str(folder / "eng.train"))
    tracemalloc.start()
    try:
        count = sum(len(parsed_batch(batch, Notices())) for part in builder.tasks(None)
                    for batch in builder.encoding_batches(None, ["word", "ner"], 256, part))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == 6 * copies
    return peak


def test_memory_stays_flat_in_the_file_size(tmp_path, monkeypatch):
    monkeypatch.setattr(conll, "READ_BYTES", 64 * 1024)  # blocks smaller than both files, as in a large build
    small = _peak_bytes_reading(tmp_path, 300)  # 240 KB
    large = _peak_bytes_reading(tmp_path, 3000)  # 2.4 MB
    assert large < 1.5 * small + 512 * 1024
    assert large < len(CONLL2003) * 3000 / 2
