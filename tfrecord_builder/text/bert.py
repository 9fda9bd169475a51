"""BERT's basic tokenization, as the original code (`tokenization.BasicTokenizer` of
google-research/bert, kept in TF Model Garden as `official.nlp.tools.tokenization`) does it,
expressed as Hugging Face `tokenizers` normalizers and a pre-tokenizer, so it runs in Rust over a
whole batch.

The rules, in the original's order:

1. clean: drop NUL, U+FFFD and every control character (Unicode categories Cc and Cf) except tab,
   newline and carriage return; turn those three and every space separator (Zs) into a space;
2. put spaces around every CJK ideograph (the CJK Unified Ideographs blocks and their
   extensions, and the compatibility ideographs: not Hangul, Hiragana or Katakana);
3. uncased only: lower-case (as Python's `str.lower`: a final capital sigma becomes ς), decompose (NFD) and drop the non-spacing marks (Mn): "Café" -> "cafe";
4. split on whitespace and around every punctuation character (ASCII's symbols, and Unicode's P
   categories): "don't." -> don ' t .

Hugging Face's own `BertNormalizer` differs from the original in four places: its clean-up also
drops unassigned (Cn) and private-use (Co) characters, which the original keeps (and WordPiece
then maps to the unknown token); its accent stripping also drops spacing marks (Mc: Devanagari's
vowel signs); it strips accents before lower-casing; and its lower-casing has no final sigma.
Steps 1 and 3 are therefore written out as regular expressions in the original's order;
tests/text/test_wordpiece.py compares every id with the original code's.

Text that is all ASCII takes a shortcut (`ASCII_TABLES`): steps 1 to 3 are then one
`str.translate` (controls dropped, tab, newline and carriage return made spaces, A-Z lower-cased;
ASCII has no Cf character, no space separator but the space, no ideograph, no sigma and no
accent), and the tokenizer's normalizer is skipped. Its regular expressions were about 40% of a
vocabulary's encoding time for English reviews, though they change nothing in such text; the
shortcut's ids are the same (tests/text/test_wordpiece.py holds the two to each other).

`words(text)` is this pre-tokenization alone: the words a learned vocabulary is counted over
(text/learn.py), so counting and encoding split text the same way.
"""
from __future__ import annotations

from tokenizers import Regex, normalizers, pre_tokenizers

# Cc and Cf but tab, newline and carriage return, with NUL and the replacement character: what the
# original's _clean_text drops (`[... && [^...]]` is Oniguruma's class intersection)
_DROPPED = Regex(r"[\x00\x{FFFD}[\p{Cc}\p{Cf}&&[^\t\n\r]]]")
_SPACES = Regex(r"[\t\n\r\p{Zs}]")
# the original's accents: the non-spacing marks (Mn) after NFD; Hugging Face's StripAccents drops
# the spacing marks (Mc: the vowel signs of Devanagari, Bengali, Tamil, ...) too
_MARKS = Regex(r"\p{Mn}")
# Python's str.lower, which the original calls, makes a capital sigma at the end of a word the final
# form (Unicode's Final_Sigma rule); Rust's per-character lower-casing doesn't
_FINAL_SIGMA = Regex(r"(?<=\p{Cased}\p{Case_Ignorable}*)\x{03A3}(?!\p{Case_Ignorable}*\p{Cased})")


def normalizer(lowercase: bool) -> normalizers.Normalizer:
    """BERT's normalization (steps 1 to 3 above): uncased with `lowercase=True`, cased without."""
    steps = [normalizers.Replace(_DROPPED, ""), normalizers.Replace(_SPACES, " "),
             normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=True, strip_accents=False,
                                        lowercase=False)]
    if lowercase:
        steps += [normalizers.Replace(_FINAL_SIGMA, "\u03c2"), normalizers.Lowercase(), normalizers.NFD(), normalizers.Replace(_MARKS, "")]
    return normalizers.Sequence(steps)


def _ascii_table(lowercase: bool) -> dict[int, int | None]:
    """Steps 1 to 3 for ASCII text, as a `str.translate` table."""
    table: dict[int, int | None] = {code: None for code in [*range(0x20), 0x7F] if chr(code) not in "\t\n\r"}
    table.update({ord(space): ord(" ") for space in "\t\n\r"})
    if lowercase:
        table.update({code: code + 32 for code in range(ord("A"), ord("Z") + 1)})
    return table


# by `lowercase`: the translation of ASCII text that BERT's normalization (steps 1 to 3) makes
ASCII_TABLES = {case: _ascii_table(case) for case in (False, True)}


def ascii_normalized(text: str, lowercase: bool) -> str | None:
    """`text` normalized (steps 1 to 3) by `str.translate` if it is all ASCII, else None: the
    normalizer's work."""
    return text.translate(ASCII_TABLES[lowercase]) if text.isascii() else None


def pre_tokenizer() -> pre_tokenizers.PreTokenizer:
    """BERT's split on whitespace and around punctuation (step 4)."""
    return pre_tokenizers.BertPreTokenizer()


_WORDS = {case: (normalizer(case), pre_tokenizer()) for case in (False, True)}


def words(text: str, lowercase: bool = True) -> list[str]:
    """The words of `text` as BERT's basic tokenization gives them (and every tokenizer `learn`
    makes applies before its vocabulary): `words("Don't stop, Café!")` is
    `["don", "'", "t", "stop", ",", "cafe", "!"]`."""
    normalize, split = _WORDS[lowercase]
    normalized = ascii_normalized(text, lowercase)
    if normalized is None:
        normalized = normalize.normalize_str(text)
    return [word for word, _ in split.pre_tokenize_str(normalized)]
