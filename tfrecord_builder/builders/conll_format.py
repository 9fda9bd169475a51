"""Reading CoNLL text: sentences of token lines, a blank line between them.

Two layouts (`Layout`): CoNLL-2003 (whitespace-separated columns that the spec names,
`-DOCSTART-` lines skipped) and CoNLL-U (ten tab-separated columns, `#` comments, multiword
token ranges and empty nodes). A sentence is a run of non-blank lines holding at least one token
line; `token_line` says which lines are, for the cutting (in the build's process, on bytes) and
the parsing (where the batch is encoded) alike, so both number the sentences the same way.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterator, Literal

from ..errors import DataError
from ..features.notices import Notices
from .opened import plain_name

Format = Literal["conll2003", "conllu"]
FORMATS: tuple[Format, ...] = ("conll2003", "conllu")
CONLLU_COLUMNS = ("id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps", "misc")
CONLLU_COMMENTS = ("sent_id", "text")  # the comments a CoNLL-U record keeps, as fields of these names
DOCSTART = b"-DOCSTART-"
BLANK = b" \t\r\x0b\x0c"  # what a blank line holds at most (ASCII whitespace)
_BLANK_TEXT = BLANK.decode()
_FIELD = re.compile(r"[^ \t\r\x0b\x0c]+")  # a CoNLL-2003 column: split at ASCII whitespace only
_WORD_ID = re.compile(r"[1-9][0-9]*")
_RANGE_ID = re.compile(r"[1-9][0-9]*-[1-9][0-9]*")
_EMPTY_NODE_ID = re.compile(r"(0|[1-9][0-9]*)\.[1-9][0-9]*")
_HEAD = re.compile(r"0|[1-9][0-9]*")

# said once for the build with the count: never a silent drop
RANGE_NOTICE = ("source: {count} CoNLL-U multiword token{s} (ID ranges such as 3-4) left out of the word lists: "
                "the words they stand for are listed")
EMPTY_NODE_NOTICE = "source: {count} CoNLL-U empty node{s} (IDs such as 5.1) left out of the word lists"
COMMENTS_ONLY_NOTICE = "source: {count} run{s} of CoNLL-U comment lines without words, left out (no sentence)"


@dataclass(frozen=True)
class Layout:
    """How a file's lines are read: its format and its columns' names, in order."""

    format: Format
    columns: tuple[str, ...]

    def fields(self) -> list[str]:
        """The fields of a record: a list per column (and, in CoNLL-U, `sent_id` and `text`)."""
        return list(self.columns) + (list(CONLLU_COMMENTS) if self.format == "conllu" else [])

    def token_line(self, line: bytes) -> bool:
        """Whether a non-blank line is one of a sentence's tokens (not a `-DOCSTART-` line, nor a
        CoNLL-U comment)."""
        return not line.startswith(b"#" if self.format == "conllu" else DOCSTART)


def is_blank(line: bytes) -> bool:
    return not line.strip(BLANK)


def format_of(path: str) -> Format:
    """The format a file's name says: `.conllu` (before a compression suffix) is CoNLL-U."""
    return "conllu" if plain_name(path).lower().endswith(".conllu") else "conll2003"


def columns_problem(format: Format, columns: list[str] | None) -> str | None:
    """What is wrong with `columns:` for `format` (None: nothing)."""
    if columns is None:
        return ("a CoNLL-2003 file's columns have no standard names: name them, e.g. "
                "`columns: [word, pos, chunk, ner]`") if format == "conll2003" else None
    if not columns:
        return "expected at least one column name"
    repeated = sorted({name for name in columns if columns.count(name) > 1})
    if repeated:
        return f"column `{repeated[0]}` is named twice"
    if format == "conllu":
        if len(columns) != len(CONLLU_COLUMNS):
            return (f"a CoNLL-U file has {len(CONLLU_COLUMNS)} columns ({' '.join(CONLLU_COLUMNS)}); "
                    f"received {len(columns)} names")
        taken = [name for name in columns if name in CONLLU_COMMENTS]
        if taken:
            return f"`{taken[0]}` is the field of the `# {taken[0]} = ...` comment; name the column otherwise"
    return None


@dataclass
class Sentence:
    """One sentence's record, or (`error`) why it couldn't be read."""

    line: int  # its first line (a comment's, in CoNLL-U)
    record: dict[str, Any] | None
    error: DataError | None = None


def sentences(data: bytes, name: str, first_line: int, layout: Layout, notices: Notices) -> Iterator[Sentence]:
    """The sentences of `data`, whole lines that begin a sentence (or a blank line) and whose
    first line is line `first_line` of file `name`. A sentence that can't be read is yielded
    with its error (in its place: keys count every sentence)."""
    block: list[bytes] = []
    start = first_line
    for number, line in enumerate(data.split(b"\n"), start=first_line):
        if is_blank(line):
            if block:
                yield from _sentence(block, name, start, layout, notices)
                block = []
            continue
        if not block:
            start = number
        block.append(line)
    if block:
        yield from _sentence(block, name, start, layout, notices)


def _sentence(block: list[bytes], name: str, start: int, layout: Layout, notices: Notices) -> Iterator[Sentence]:
    if not any(layout.token_line(line) for line in block):
        if layout.format == "conllu":
            notices.note(COMMENTS_ONLY_NOTICE)
        return  # (a `-DOCSTART-` line and the blank line after it)
    try:
        lines = _decoded(block, name, start)
        record = (_conllu(lines, name, start, layout.columns, notices) if layout.format == "conllu"
                  else _conll2003(lines, name, start, layout.columns))
    except DataError as error:
        yield Sentence(start, None, error)
        return
    yield Sentence(start, record)


def _decoded(block: list[bytes], name: str, start: int) -> list[str]:
    try:
        return b"\n".join(block).decode("utf-8").split("\n")
    except UnicodeDecodeError:
        pass
    for offset, line in enumerate(block):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise DataError(f"{name}, line {start + offset}: not valid UTF-8 text (byte 0x{line[error.start]:02x} "
                            f"at column {error.start + 1})") from None
    raise AssertionError("unreachable: the joined lines decode when each does")


def _conll2003(lines: list[str], name: str, start: int, columns: tuple[str, ...]) -> dict[str, Any]:
    values: list[list[str]] = [[] for _ in columns]
    for offset, line in enumerate(lines):
        if line.startswith("-DOCSTART-"):
            continue
        fields = _FIELD.findall(line)
        if len(fields) != len(columns):
            raise DataError(f"{name}, line {start + offset}: expected {len(columns)} columns "
                            f"({' '.join(columns)}), received {len(fields)}")
        for column, field in zip(values, fields):
            column.append(field)
    return dict(zip(columns, values))


def _conllu(lines: list[str], name: str, start: int, columns: tuple[str, ...], notices: Notices) -> dict[str, Any]:
    values: list[list[Any]] = [[] for _ in columns]
    comments: dict[str, str | None] = dict.fromkeys(CONLLU_COMMENTS)
    without_heads: bool | None = None
    for offset, line in enumerate(lines):
        where = f"{name}, line {start + offset}"
        if line.startswith("#"):
            key, equals, value = line[1:].partition("=")
            if equals and key.strip() in comments:
                comments[key.strip()] = value.strip()
            continue
        fields = line.rstrip("\r").split("\t")
        if len(fields) != len(columns):
            raise DataError(f"{where}: expected {len(columns)} tab-separated columns ({' '.join(columns)}), "
                            f"received {len(fields)}")
        word = fields[0]
        if _RANGE_ID.fullmatch(word):
            notices.note(RANGE_NOTICE)
            continue
        if _EMPTY_NODE_ID.fullmatch(word):
            notices.note(EMPTY_NODE_NOTICE)
            continue
        expected = len(values[0]) + 1
        if not _WORD_ID.fullmatch(word) or int(word) != expected:
            raise DataError(f"{where}: {columns[0]} {word!r}: expected {expected} (a sentence's words are "
                            "numbered 1, 2, 3, ...; 3-4 a multiword token, 5.1 an empty node)")
        unheaded = fields[6] == "_"  # a sentence without syntax (tags only) leaves every head out
        if (not unheaded and not _HEAD.fullmatch(fields[6])) or (values[0] and unheaded != without_heads):
            raise DataError(f"{where}: {columns[6]} {fields[6]!r}: expected the ID of the word's head "
                            "(0 for the root), or `_` for every word of a sentence without syntax")
        without_heads = unheaded
        fields_read: list[Any] = list(fields)
        # `_` stays as written: an int64 `head` feature refuses it, naming the sentence
        fields_read[0], fields_read[6] = int(word), "_" if unheaded else int(fields[6])
        for column, field in zip(values, fields_read):
            column.append(field)
    return {**dict(zip(columns, values)), **comments}
