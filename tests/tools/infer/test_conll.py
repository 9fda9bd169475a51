"""infer recognises CoNLL files: a file of token lines and blank lines (not named as a table)
proposes `builder: conll`, its columns, the words as a list of strings and the tag columns as
class labels per word, and the spec validates and builds as written."""
from __future__ import annotations

import pytest
import yaml

from tfrecord_builder.errors import UsageError
from tfrecord_builder.tools.infer import infer

from support.conll import CONLL2003, CONLLU, conll2003_sentences, conllu_reference, without_syntax
from .helpers import all_records, comment, infer_validate_build
from tfrecord_builder.tools.infer import free_text

# without the text extra the words stay strings; with it they are token ids (test_free_text.py)
strings = pytest.mark.skipif(free_text.text_extra(),
                             reason="the words become token ids here: tests/tools/infer/test_free_text.py")


def _text(values) -> list[str]:
    return [value.decode("utf-8") for value in values]


@strings
@pytest.mark.parametrize("name", ["eng.train", "train.txt", "ner.conll"])
def test_a_conll2003_file_becomes_words_and_tags_per_sentence(tmp_path, name):
    (tmp_path / name).write_text(CONLL2003, encoding="utf-8")
    text, spec, records = infer_validate_build(tmp_path, name)
    assert spec["source"] == {"builder": "conll", "path": name, "columns": ["word", "pos", "chunk", "ner"]}
    assert spec["features"]["words"] == {"dtype": "string", "shape": [None], "source": "word"}
    assert comment(text, "words:") == ("the words, as a list of strings (`pip install 'tfrecord-builder[text]'` and "
                                       "infer again for token ids: `type: text`)")
    assert spec["features"]["ner"] == {"type": "class_label", "shape": [None],
                                       "names": ["O", "B-LOC", "B-MISC", "B-ORG", "B-PER", "I-ORG", "I-PER"]}
    assert comment(text, "ner:") == "guessed: 7 distinct tags in 45 words"
    assert spec["features"]["chunk"]["names"] == ["O", "B-NP", "B-PP", "B-VP", "I-NP", "I-VP"]
    assert text.startswith(f"# {name}: a CoNLL-2003 file, 6 sentences of 45 words read (the whole file); "
                           "a record per sentence.\n")
    built = sorted((_text(record["words"]), [spec["features"]["ner"]["names"][tag] for tag in record["ner"]])
                   for record in all_records(records))
    assert built == sorted(([token[0] for token in sentence], [token[3] for token in sentence])
                           for sentence in conll2003_sentences(CONLL2003))


@strings
def test_a_conllu_file_becomes_its_words_tags_and_heads(tmp_path):
    (tmp_path / "en_ewt-ud-train.conllu").write_text(CONLLU, encoding="utf-8")
    text, spec, records = infer_validate_build(tmp_path, "en_ewt-ud-train.conllu")
    assert spec["name"] == "en_ewt_ud_train"
    assert spec["source"] == {"builder": "conll", "path": "en_ewt-ud-train.conllu"}
    assert list(spec["features"]) == ["words", "lemma", "upos", "xpos", "head", "deprel", "sent_id", "text"]
    assert spec["features"]["head"] == {"dtype": "int64", "shape": [None]}
    assert "# 1 CoNLL-U multiword token (ID ranges such as 3-4) left out of the word lists: the words they stand " \
           "for are listed (the build says so too).\n" in text
    upos = spec["features"]["upos"]["names"]
    built = {record["sent_id"].decode(): record for record in all_records(records)}
    for sentence in conllu_reference(CONLLU):
        record = built[sentence["sent_id"]]
        assert _text(record["words"]) == sentence["form"]
        assert [upos[index] for index in record["upos"]] == sentence["upos"]
        assert record["head"].tolist() == sentence["head"]
        assert record["text"].decode() == sentence["text"]


@strings
def test_a_conllu_file_without_syntax_becomes_its_words_and_tags(tmp_path):
    (tmp_path / "tagged.conllu").write_text(without_syntax(CONLLU), encoding="utf-8")
    _, spec, records = infer_validate_build(tmp_path, "tagged.conllu")
    assert list(spec["features"]) == ["words", "lemma", "upos", "xpos", "sent_id", "text"]
    upos = spec["features"]["upos"]["names"]
    built = {record["sent_id"].decode(): record for record in all_records(records)}
    for sentence in conllu_reference(CONLLU):
        assert [upos[index] for index in built[sentence["sent_id"]]["upos"]] == sentence["upos"]


def test_conllu_in_a_txt_file_says_its_format(tmp_path):
    (tmp_path / "ud.txt").write_text(CONLLU, encoding="utf-8")
    spec = yaml.safe_load(infer(tmp_path / "ud.txt", tmp_path / "ud.yaml"))
    assert spec["source"] == {"builder": "conll", "path": "ud.txt", "format": "conllu"}


@pytest.mark.parametrize("content", ["Call me Ishmael. Some years ago\n\nnever mind how long precisely\n",
                                     "1 2 3\n4 5 6\n7 8 9\n"])
def test_a_text_file_that_is_not_conll_is_refused_as_before(tmp_path, content):
    (tmp_path / "notes.txt").write_text(content, encoding="utf-8")
    with pytest.raises(UsageError, match=r"notes\.txt: can't tell the kind of file from its name"):
        infer(tmp_path / "notes.txt")
