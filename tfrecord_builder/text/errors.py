"""What goes wrong with a tokenizer file or a text, in words for a user. The feature types say
where (the row, the feature); these say what and why, each in one line."""
from __future__ import annotations


class BadTokenizer(ValueError):
    """A vocabulary, SentencePiece model or tokenizer.json that can't be used: missing, empty,
    malformed, or without a padding or unknown token. The message names the file."""


class BadText(ValueError):
    """A text that can't be tokenized (bytes that are not UTF-8, a value that is no text).
    `index` is its place in the batch given, so the caller can name the row."""

    def __init__(self, message: str, index: int):
        super().__init__(message)
        self.index = index

    def __reduce__(self) -> tuple:  # whole across processes
        return type(self), (str(self), self.index)
