"""`builder: conll`: CoNLL files, one record per sentence, a list per column.

    source: {builder: conll, path: eng.train, columns: [word, pos, chunk, ner]}
    source: {builder: conll, path: "ud/*.conllu"}

CoNLL-2003 files (the default, `format: conll2003`) have whitespace-separated columns that
`columns:` names; CoNLL-U files (`.conllu`, or `format: conllu`) ten tab-separated ones, named
`id form lemma upos xpos feats head deprel deps misc` unless `columns:` renames them
(conll_format.py reads both). `path` is a file (compressed or not) or a glob pattern of files.

A sentence's key is its file (below the pattern's folder) and its number in the file, so it
lands in the same split on every run and every runner. A large plain file is read in parallel
tasks, cut at blank lines (`tasks`), each knowing how many lines and sentences come before it;
within a task the build's process cuts batches of whole sentences and the encoding workers parse
them (`ConllSentences`). Memory holds one block and one batch at a time, whatever the file's size.
"""
from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass
from typing import Any, ClassVar, Iterator, Sequence

from .. import fs
from ..errors import DataError
from ..features.notices import Notices
from .base import Batch, Builder, PendingBatch, RowOrigins, parsed_batch
from .conll_format import CONLLU_COLUMNS, FORMATS, Layout, columns_problem, format_of, is_blank, sentences
from .lines import BOM
from .opened import Window, compression, open_window, task_bytes

READ_BYTES = 1 << 20  # a block read at a time (cut after its last blank line)
_BLANK_LINE = re.compile(rb"\n[ \t\r\x0b\x0c]*\n")


@dataclass(frozen=True)
class ConllPart:
    """A read task: a file, whole (`window` None), or the lines of a window of it, after
    `sentences_before` sentences. `label` names the file in keys and messages."""

    path: str
    label: str
    window: Window | None = None
    sentences_before: int = 0


class ConllBuilder(Builder):
    """Sentences of CoNLL-2003 or CoNLL-U files."""

    SOURCE_KEYS = frozenset({"columns", "format"})
    READS_PATTERN = True
    DEFINES_CLASSES = False  # a class_label of tags lists its names
    OPTIONS: ClassVar[dict[str, str] | None] = {}  # (it takes none)

    def __init__(self, spec: Any, path: str | None = None, options: dict[str, Any] | None = None):
        super().__init__(spec, path, options)
        source = spec.source if spec is not None else None
        format = getattr(source, "format", None) or format_of(path or "")
        columns = getattr(source, "columns", None)
        problem = columns_problem(format, columns)
        if problem:
            if spec is None:
                raise DataError(f"conll builder: columns: {problem}")
            raise spec.error(("source", "columns"), problem)
        self.layout = Layout(format, tuple(columns or CONLLU_COLUMNS))

    def fields(self) -> list[str]:
        return self.layout.fields()

    def files(self) -> list[tuple[str, str]]:
        """The files read, sorted, each with its label: the path below the pattern's fixed folder
        (a single file: its name), the same on every machine."""
        if self.path is None:
            raise DataError("ConllBuilder: the source needs a `path`")
        found = fs.pattern_files(self.path)
        if found is None:
            return [(self.path, fs.basename(self.path))]
        fixed = self.path.replace(os.sep, "/").split("/")
        base = "/".join(fixed[: next(index for index, part in enumerate(fixed) if glob.has_magic(part))]) or "."
        if not found:
            raise DataError(f"{self.path}: the pattern matches no file")
        return [(match, os.path.relpath(match, base).replace(os.sep, "/")) for match in found]

    def tasks(self, split: str | None) -> list[ConllPart]:
        parts: list[ConllPart] = []
        for path, label in self.files():
            parts += windows(path, label, self.layout) or [ConllPart(path, label)]
        return parts

    def encoding_batches(self, split: str | None, needed: Sequence[str], batch_size: int,
                         task: Any = None) -> Iterator[Batch | PendingBatch]:
        keep_going = self.spec is not None and self.spec.on_error == "skip"
        for part in [task] if task is not None else self.tasks(split):
            yield from part_batches(part, self.layout, list(needed), batch_size, keep_going)

    def batches(self, split: str | None, needed: Sequence[str], batch_size: int, task: Any = None) -> Iterator[Batch]:
        for batch in self.encoding_batches(split, needed, batch_size, task):
            yield parsed_batch(batch)

    def generate(self, split: str | None) -> Iterator[tuple[Any, dict[str, Any]]]:
        return self._records(split, None)

    def generate_task(self, split: str | None, task: Any) -> Iterator[tuple[Any, dict[str, Any]]]:
        return self._records(split, task)

    def _records(self, split: str | None, task: Any) -> Iterator[tuple[Any, dict[str, Any]]]:
        fields = self.fields()
        for batch in self.batches(split, fields, 256, task):
            for index, key in enumerate(batch.keys):
                yield key, {name: batch.columns[name][index] for name in fields}


@dataclass
class ConllSentences(PendingBatch):
    """`count` sentences of a file (whole lines from line `line` on, the first one its sentence
    `number`), parsed where they are encoded."""

    data: bytes
    count: int
    name: str
    line: int
    number: int
    layout: Layout
    needed: list[str]
    keep_going: bool = False  # on_error: skip: a sentence that can't be read is listed, not raised

    def load(self, notices: Notices) -> Batch:
        keys: list[str] = []
        origins = RowOrigins(self.name)
        columns: dict[str, list[Any]] = {name: [] for name in self.needed}
        broken: list[dict[str, str]] = []
        for number, sentence in enumerate(sentences(self.data, self.name, self.line, self.layout, notices),
                                          start=self.number):
            if sentence.record is None:
                if not self.keep_going:
                    raise sentence.error or DataError(f"{self.name}, line {sentence.line}: unreadable")
                broken.append({"record": f"{self.name}, line {sentence.line}", "reason": str(sentence.error)})
                continue
            keys.append(sentence_key(self.name, number))
            origins.lines.append(sentence.line)
            for name, values in columns.items():
                values.append(sentence.record.get(name))
        return self.only_batch([Batch(keys=keys, columns=columns, origin=origins, source=self.name,
                                      language="json", broken=broken)])


def sentence_key(label: str, number: int) -> str:
    """A sentence's key: its file's label and its number there (from 1)."""
    return f"{label}#{number}"


def part_batches(part: ConllPart, layout: Layout, needed: list[str], batch_size: int,
                 keep_going: bool) -> Iterator[ConllSentences]:
    """The part's sentences, `batch_size` at a time, left for the encoding workers to parse."""
    window = part.window
    line = 1 + (window.lines_before if window is not None else 0)
    number = 1 + part.sentences_before
    with open_window(part.path, window, header=False) as file:
        if window is None:
            if not file.peek(1):
                raise DataError(f"{part.label}: the file is empty; expected CoNLL sentences (token lines, a blank "
                                "line after each sentence)")
            if file.peek(len(BOM))[: len(BOM)] == BOM:
                file.read(len(BOM))
        for data, count in sentence_runs(blank_cut_blocks(file, READ_BYTES), layout, batch_size):
            yield ConllSentences(data, count, part.label, line, number, layout, needed, keep_going)
            line += data.count(b"\n")
            number += count
    if window is None and number == 1:
        raise DataError(f"{part.label}: no sentences; expected token lines, a blank line after each sentence"
                        + (" (`#` lines are comments)" if layout.format == "conllu" else ""))


def blank_cut_blocks(file: Any, size: int) -> Iterator[bytes]:
    """The rest of a binary file in blocks of about `size` bytes, each ending after a blank line
    (the last one at the end of the file): no sentence runs from one block into the next."""
    rest = b""
    while True:
        block = file.read(size)
        data = rest + block
        if not block:
            if data:
                yield data
            return
        cut = _after_last_blank_line(data)
        data, rest = data[:cut], data[cut:]
        if data:
            yield data


def _after_last_blank_line(data: bytes) -> int:
    """Where the text after the last blank line of `data` starts (0: no blank line)."""
    for start in (max(0, len(data) - 65536), 0):
        cut = 0
        for match in _BLANK_LINE.finditer(data, start):
            cut = match.end()
        if cut:
            return cut
    return 0


def sentence_runs(blocks: Iterator[bytes], layout: Layout, batch_size: int) -> Iterator[tuple[bytes, int]]:
    """The blocks' lines cut before the first line of every `batch_size + 1`-th sentence, each
    run with its number of sentences (the last run may hold fewer; lines after the last sentence
    go with it)."""
    held: list[bytes] = []
    count = 0
    for block in blocks:
        start = position = run_start = 0
        counted = False  # the run of non-blank lines at `run_start` holds a token line
        in_run = False
        for line in block.split(b"\n"):
            if is_blank(line):
                counted = in_run = False
            else:
                if not in_run:
                    run_start, in_run = position, True
                if not counted and layout.token_line(line):
                    counted = True
                    if count == batch_size:
                        yield b"".join(held) + block[start:run_start], count
                        held, count, start = [], 0, run_start
                    count += 1
            position += len(line) + 1
        held.append(block[start:])
    if count:
        yield b"".join(held), count


def count_sentences(data: bytes, layout: Layout) -> int:
    """The sentences of `data` (whole runs of lines), as `sentence_runs` counts them."""
    count = 0
    counted = False
    for line in data.split(b"\n"):
        if is_blank(line):
            counted = False
        elif not counted and layout.token_line(line):
            count, counted = count + 1, True
    return count


def windows(path: str, label: str, layout: Layout) -> list[ConllPart] | None:
    """A plain local file larger than one task cut at blank lines into parts of about
    `task_bytes()`, each knowing the lines and sentences before it; None: read it whole. Finding
    the cuts reads the file once."""
    task = task_bytes()
    try:
        if fs.size(path) <= task or compression(path) is not None:
            return None
        parts: list[ConllPart] = []
        with fs.open_file(path) as file:
            start = position = len(BOM) if file.read(len(BOM)) == BOM else 0
            file.seek(start)
            lines = sentences_seen = 0
            window = (start, 0, 0)  # its start, and the lines and sentences before it
            for block in blank_cut_blocks(file, min(task, 16 * READ_BYTES)):
                position += len(block)
                lines += block.count(b"\n")
                sentences_seen += count_sentences(block, layout)
                if position - window[0] >= task:
                    parts.append(ConllPart(path, label, Window(window[0], position, window[1]), window[2]))
                    window = (position, lines, sentences_seen)
        if position > window[0]:
            parts.append(ConllPart(path, label, Window(window[0], position, window[1]), window[2]))
    except OSError:
        return None  # reading it says what is wrong, at the file
    return parts if len(parts) > 1 else None


__all__ = ["ConllBuilder", "ConllPart", "ConllSentences", "FORMATS"]
