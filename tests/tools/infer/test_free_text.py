"""infer tells free text (many distinct, long, spaced values) from categories, ids and short
strings, and proposes `type: text` with a WordPiece vocabulary the build learns and a max_length
from the texts' lengths; a CoNLL file's words become token ids and its tags align to their pieces.

The proposed spec's text is asserted, then validated and built."""
from __future__ import annotations

import math
import random
import re

import pytest
import yaml

from tfrecord_builder.tools.infer import free_text, infer

from support.conll import CONLL2003, conll2003_sentences
from .helpers import all_records, comment, infer_validate_build, line_of, write_jsonl

pytest.importorskip("tokenizers")
WORDS = ("the a movie film plot actor story scene good bad great boring slow funny long short dark quiet loud "
         "music ending start was is not very quite rather and but so because every").split()


def _reviews(count: int, seed: int = 7) -> list[dict]:
    """Reviews of 6 to 25 words (seeded), a category of 3 values, a short title and an id."""
    rng = random.Random(seed)
    rows = []
    for number in range(count):
        words = [rng.choice(WORDS) for _ in range(rng.randint(6, 25))]
        rows.append({"id": number, "review": " ".join(words).capitalize() + ".", "genre": rng.choice(["drama", "comedy", "horror"]),
                     "title": f"Film{number % 4}", "code": f"A{number:04d}"})
    return rows


def _expected_fields(rows: list[dict]) -> tuple[int, int, int]:
    """The vocabulary size and max_length by the documented rule, and the 99th percentile of words."""
    texts = [free_text.words_of(row["review"]) for row in rows]
    distinct = len({word for words in texts for word in words})
    lengths = sorted(len(words) for words in texts)
    longest = lengths[math.ceil(0.99 * len(lengths)) - 1]
    return max(1000, 1000 * math.ceil(distinct / 2000)), 8 * math.ceil((longest * 1.3 + 2) / 8), longest


def test_free_text_becomes_token_ids_of_a_learned_vocabulary_and_categories_stay_labels(tmp_path):
    rows = _reviews(120)
    write_jsonl(tmp_path / "reviews.jsonl", rows)
    text = infer(tmp_path / "reviews.jsonl", tmp_path / "reviews.yaml")
    spec = yaml.safe_load(text)
    size, length, longest = _expected_fields(rows)
    assert (size, length) == (1000, 8 * math.ceil((longest * 1.3 + 2) / 8))
    assert line_of(text, "review:").startswith(
        f"  review: {{type: text, vocabulary: {{kind: wordpiece, size: 1000}}, max_length: {length}}}  # ")
    distinct = len({word for row in rows for word in free_text.words_of(row["review"])})
    mean = sum(len(free_text.words_of(row["review"])) for row in rows) / len(rows)
    assert comment(text, "review:") == (
        f"guessed: free text (120 distinct of 120 values, {mean:.1f} words a value on average): token ids of a "
        f"WordPiece vocabulary of 1,000 learned from the train split ({distinct} distinct words: half of them, "
        f"rounded up to a thousand, 1,000-32,000); max_length {length}: 99% of the texts have at most {longest} "
        "words, x 1.3 pieces a word + 2 special ids, rounded up to a multiple of 8")
    assert spec["features"]["genre"] == {"type": "class_label", "names": ["comedy", "drama", "horror"]}
    assert spec["features"]["title"]["type"] == "class_label"  # few values: categories
    assert spec["features"]["code"] == {"dtype": "string"}  # distinct, but one word each: an id
    _, built, records = infer_validate_build(tmp_path, "reviews.jsonl", spec="built.yaml")
    assert built["features"]["review"] == spec["features"]["review"]
    assert sum(len(split) for split in records.values()) == 120
    assert all(record["review"].dtype.kind == "i" and 3 <= len(record["review"]) <= length
               for record in all_records(records))


@pytest.mark.parametrize("column, why", [
    ([f"a short note {index % 3}" for index in range(40)], "few distinct values: a class label"),
    ([f"/data/photos/img_{index:04d}.jpg" for index in range(40)], "one word each: paths"),
    ([f"Name{index} Surname{index}" for index in range(40)], "two words each: names"),
    ([f"word{index}" for index in range(10)] * 4, "distinct but too few words"),
])
def test_categories_paths_names_and_short_strings_are_not_free_text(tmp_path, column, why):
    write_jsonl(tmp_path / "rows.jsonl", [{"value": value} for value in column])
    spec = yaml.safe_load(infer(tmp_path / "rows.jsonl", tmp_path / "rows.yaml"))
    assert spec["features"]["value"].get("type") != "text", why


def test_the_thresholds_each_decide(tmp_path):
    sentence = "this is a sentence of seven words"
    free, measured = free_text.is_free_text([f"{sentence} {index}" for index in range(20)], 20)
    assert free and measured == "20 distinct of 20 values, 8.0 words a value on average"
    assert not free_text.is_free_text([f"{sentence} {index}" for index in range(19)], 19)[0]  # fewer than 20
    assert not free_text.is_free_text([f"{sentence} {index % 9}" for index in range(20)], 9)[0]  # under half distinct
    assert not free_text.is_free_text([f"four words here {index}" for index in range(20)], 20)[0]  # under 5 words
    unspaced = [f"{sentence.replace(' ', '_')}_{index}" if index < 5 else f"{sentence} {index}" for index in range(20)]
    assert not free_text.is_free_text(unspaced, 20)[0]  # a quarter without a space: under 80% spaced
    assert free_text.is_free_text([f"{sentence} {index}" for index in range(2000)], None)[0]  # more than counted


def test_a_large_vocabulary_and_long_texts_are_bounded():
    texts = [[f"w{index}", *(["x"] * 600)] for index in range(70_000)]
    fields, note = free_text.text_fields(texts)
    assert fields == {"vocabulary": {"kind": "wordpiece", "size": 32_000}, "max_length": 512}
    assert note.endswith("rounded up to a multiple of 8 (at most 512)")


def test_free_text_with_missing_values_or_without_the_text_extra_stays_a_string(tmp_path, monkeypatch):
    rows = _reviews(40)
    rows[3]["review"] = None
    write_jsonl(tmp_path / "gaps.jsonl", rows)
    text = infer(tmp_path / "gaps.jsonl", tmp_path / "gaps.yaml")
    assert yaml.safe_load(text)["features"]["review"] == {"dtype": "string", "default": ""}
    assert re.search(r"free text \(39 distinct of 39 values, [0-9.]+ words a value on average\), but 1 row without a "
                     r"value: `type: text` needs one in every row", comment(text, "review:"))
    write_jsonl(tmp_path / "plain.jsonl", _reviews(40))
    monkeypatch.setattr(free_text, "text_extra", lambda: False)
    text = infer(tmp_path / "plain.jsonl", tmp_path / "plain.yaml")
    assert yaml.safe_load(text)["features"]["review"] == {"dtype": "string"}
    assert comment(text, "review:") == free_text.NO_EXTRA


def test_conll_words_become_token_ids_and_tags_align_to_their_pieces(tmp_path):
    (tmp_path / "eng.train").write_text(CONLL2003, encoding="utf-8")
    text = infer(tmp_path / "eng.train", tmp_path / "ner.yaml")
    spec = yaml.safe_load(text)
    sentences = conll2003_sentences(CONLL2003)
    words = [[token[0].lower() for token in sentence] for sentence in sentences]
    size_fields, note = free_text.text_fields(words)
    assert spec["features"]["words"] == {"type": "text", "source": "word", "words": True, **size_fields}
    assert comment(text, "words:") == "guessed: the words as token ids of " + note.replace("texts", "sentences")
    assert spec["features"]["ner"] == {"type": "class_label", "shape": [None], "names": [
        "O", "B-LOC", "B-MISC", "B-ORG", "B-PER", "I-ORG", "I-PER"], "align": "words"}
    assert comment(text, "ner:") == ("guessed: 7 distinct tags in 45 words; each word's tag on its first piece (-1 on "
                                     "the others, ignored)")
    _, built, records = infer_validate_build(tmp_path, "eng.train", spec="built.yaml")
    names = built["features"]["ner"]["names"]
    expected = sorted([token[3] for token in sentence] for sentence in sentences)
    found = sorted([names[tag] for tag in record["ner"].tolist() if tag >= 0] for record in all_records(records))
    # each sentence's tags, in order, on its words' first pieces (all of them: no sentence is cut)
    assert found == expected
    assert all(len(record["ner"]) == len(record["words"]) for record in all_records(records))
