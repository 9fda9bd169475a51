"""A BERT vocab.txt encodes to the ids of the reference tokenizers on the same vocabulary: the
original BERT code (TF Model Garden's `official.nlp.tools.tokenization.FullTokenizer`), KerasHub's
WordPieceTokenizer (with tensorflow-text in `.venv-tfm`, and its Python fallback in `.venv`), and
tensorflow-text's BertTokenizer.

The text is real (tests/support/texts.py: standard-library docstrings, this repository's docs,
Babel's names of languages in ten scripts), and the vocabulary is learned from it by
`text.learn` (WordPiece, 3,000 tokens, uncased and cased). Property tests draw text from accents,
CJK ideographs, Hangul, Greek capitals, punctuation, control characters and every kind of space.

Uncased, the original lower-cases with Python's `str.lower`; KerasHub and tensorflow-text with
ICU's NFKC_Casefold (a final sigma stays σ, full-width forms become ASCII, ß becomes ss). So
uncased, their ids are compared with ours on the text case-folded that way: equal for
tensorflow-text on every text, and for KerasHub on the English text (on the other scripts its
Hangul words, NFKC-recomposed, are [UNK]).
"""
from __future__ import annotations

import collections
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support.texts import Reference, corpus, english, needs_model_garden
from tfrecord_builder import text
from tfrecord_builder.text import bert

TEXTS = corpus()


@pytest.fixture(scope="module")
def vocabularies(tmp_path_factory) -> dict[bool, str]:
    """A vocab.txt learned from the corpus, uncased (True) and cased (False)."""
    folder = tmp_path_factory.mktemp("vocabularies")
    paths = {}
    for lowercase in (True, False):
        counts = collections.Counter(word for line in TEXTS for word in text.words(line, lowercase))
        learned = text.learn(counts, "wordpiece", 3000, lowercase=lowercase)
        path = folder / f"vocab-{'uncased' if lowercase else 'cased'}.txt"
        path.write_bytes(learned.data)
        paths[lowercase] = str(path)
    return paths


@pytest.fixture(scope="module")
def reference():
    process = Reference()
    yield process
    process.close()


def folded(line: str) -> str:
    """ICU's NFKC_Casefold, as tensorflow-text's case_fold_utf8 applies it (near enough for this text)."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKD", line).casefold())


@needs_model_garden
@pytest.mark.extra_env
@pytest.mark.parametrize("lowercase", [True, False], ids=["uncased", "cased"])
def test_ids_equal_the_original_berts_on_real_text(vocabularies, reference, lowercase):
    ours = text.load(vocabularies[lowercase], lowercase=lowercase).encode(TEXTS)
    assert ours == reference.ids("original", TEXTS, vocab=vocabularies[lowercase], lower=lowercase)
    assert sum(map(len, ours)) > 50_000
    assert sum(ids.count(1) for ids in ours) < sum(map(len, ours)) / 50  # few unknown: a real vocabulary


# accents (precomposed and combining), CJK ideographs and Hangul, Greek capitals (final sigma),
# ASCII and Unicode punctuation, control and format characters, every kind of space, unassigned
# and private-use code points, and letters the vocabulary knows
ALPHABET = (list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
            + list("éèêëàçñøåßæœÀÉÎÕÜİǅﬁµ") + ["\u0301", "\u0308", "\u0327"]
            + list("中文字漢語日本東京한국어노르웨이ひらがなカタカナ") + list("ΑΒΓΔΣΟΣ αβγσς")
            + list(",.;:!?'\"()[]{}-_/\\@#$%^&*~`«»¿¡—–…、。「」（）＝")
            + ["\t", "\n", "\r", "\x0b", "\x0c", "\x85", "\x00", "\x07", "\x1f", "\x7f", "\ufffd", "\u200b", "\u200d",
               "\ufeff", "\u00ad", "\u061c", "\u00a0", "\u1680", "\u2003", "\u2028", "\u2029", "\u3000", " ", " "]
            + ["\u0378", "\ue000", "\U000f0000", "\u2581", "\U0001f600", "Ⅻ", "①"])
lines = st.lists(st.text(alphabet=st.sampled_from(ALPHABET), max_size=40)
                 | st.lists(st.sampled_from(english()[:30]), min_size=1, max_size=2).map(" ".join), min_size=1, max_size=30)


@needs_model_garden
@pytest.mark.extra_env
@pytest.mark.parametrize("lowercase", [True, False], ids=["uncased", "cased"])
def test_ids_equal_the_original_berts_on_any_text(vocabularies, reference, lowercase):
    tokenizer = text.load(vocabularies[lowercase], lowercase=lowercase)

    @settings(max_examples=60)
    @given(lines)
    def check(batch):
        assert tokenizer.encode(batch) == reference.ids("original", batch, vocab=vocabularies[lowercase],
                                                        lower=lowercase)
    check()


@needs_model_garden
@pytest.mark.extra_env
@pytest.mark.parametrize("kind", ["keras_hub_wordpiece", "tf_text_bert"])
def test_ids_equal_keras_hubs_and_tensorflow_texts_with_tensorflow_text(vocabularies, reference, kind):
    cased = text.load(vocabularies[False], lowercase=False)
    assert cased.encode(TEXTS) == reference.ids(kind, TEXTS, vocab=vocabularies[False], lower=False)
    uncased = text.load(vocabularies[True])
    chosen = TEXTS if kind == "tf_text_bert" else english()
    assert uncased.encode([folded(line) for line in chosen]) == reference.ids(kind, chosen, vocab=vocabularies[True],
                                                                              lower=True)


def test_ids_equal_keras_hubs_python_wordpiece_tokenizer(vocabularies):
    """KerasHub in the main environment, which has no tensorflow-text: its Python fallback."""
    keras_hub = pytest.importorskip("keras_hub")
    for lowercase, chosen in ((False, TEXTS), (True, english())):
        layer = keras_hub.tokenizers.WordPieceTokenizer(vocabulary=vocabularies[lowercase], lowercase=lowercase,
                                                        strip_accents=lowercase, oov_token="[UNK]")
        theirs = [[int(number) for number in layer(line)] for line in chosen]
        ours = text.load(vocabularies[lowercase], lowercase=lowercase).encode(
            [folded(line) for line in chosen] if lowercase else chosen)
        assert ours == theirs


def test_known_ids_of_the_basic_tokenization(tmp_path):
    """BERT's rules, spelled out on a small vocabulary."""
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "cafe", "café", "Café", "don", "'", "t", ",", "!",
              "中", "文", "run", "##ning", "ς", "οδος", "σας"]
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(tokens) + "\n", encoding="utf-8")
    uncased, cased = text.load(str(path)), text.load(str(path), lowercase=False)
    line = "Café don't\u200b RUNNING,中文! ΟΔΟΣ ΣΑΣ \x00\ue000"
    assert uncased.tokens(uncased.encode([line])[0]) == [
        "cafe", "don", "'", "t", "run", "##ning", ",", "中", "文", "!", "οδος", "σας", "[UNK]"]
    assert cased.tokens(cased.encode([line])[0]) == [
        "Café", "don", "'", "t", "[UNK]", ",", "中", "文", "!", "[UNK]", "[UNK]", "[UNK]"]
    assert text.words(line) == ["cafe", "don", "'", "t", "running", ",", "中", "文", "!", "οδος", "σας", "\ue000"]
    assert uncased.decode(uncased.encode([line])[0]) == "cafe don ' t running, 中 文! οδος σας [UNK]"


ASCII = [chr(code) for code in range(128)]


@pytest.mark.parametrize("lowercase", [True, False], ids=["uncased", "cased"])
def test_the_ascii_shortcut_gives_the_normalizers_ids(vocabularies, lowercase):
    """Text that is all ASCII is normalized by `str.translate` and encoded without the normalizer
    (bert.ASCII_TABLES): the same ids as through it, for every ASCII character (controls
    included), alone and in batches mixed with other text, in the batch's order; and the same
    words for a learned vocabulary's count (`text.words`)."""
    tokenizer = text.load(vocabularies[lowercase], lowercase=lowercase)

    def through_normalizer(batch: list[str]) -> list[list[int]]:
        return [encoding.ids for encoding in tokenizer._hf.encode_batch_fast(batch, add_special_tokens=False)]

    every = ["".join(ASCII), "".join(ASCII).upper(), *ASCII]
    assert tokenizer.encode(every) == through_normalizer(every)
    english_lines = [line for line in TEXTS if line.isascii()]
    assert len(english_lines) > 100 and tokenizer.encode(english_lines) == through_normalizer(english_lines)

    @settings(max_examples=80, deadline=None)
    @given(st.lists(st.text(alphabet=st.sampled_from(ASCII + ALPHABET[:30]), max_size=40)
                    | st.text(alphabet=st.sampled_from(ASCII), max_size=40), min_size=1, max_size=20))
    def check(batch):
        assert tokenizer.encode(batch) == through_normalizer(batch)
        normalize, split = bert._WORDS[lowercase]
        assert [text.words(line, lowercase) for line in batch] == [
            [word for word, _ in split.pre_tokenize_str(normalize.normalize_str(line))] for line in batch]
    check()
