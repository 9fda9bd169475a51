"""CoNLL files recognised: token lines with a blank line between sentences (CoNLL-2003's
columns, or CoNLL-U's ten), planned as `builder: conll`, a record per sentence.

A file whose name isn't a table's (`.conll`, `.conllu`, `.txt`, CoNLL-2003's `eng.train`) is
looked at: CoNLL-U where it is named so or its token lines are ten tab-separated columns with an
ID first; CoNLL-2003 where every token line has the same number (2 or more) of columns and blank
lines part at least two sentences. Anything else is left to the table kinds (and their message).
The sample is read by the builder's own reader (builders/conll_format.py), so what infer proposes
reads the same way, and a broken line is the build's message.

The words become token ids (`type: text, words: true`) of a WordPiece vocabulary the build learns
from the train split, sized as free text's is (free_text.py), and each tag column of few values a
class label per word aligned to the words' pieces (`align: words`); where the text extra isn't
installed (or this version learns no vocabularies or aligns no labels), a list of strings and
class labels per word.
"""
from __future__ import annotations

import os
import re
from collections import Counter
from typing import Any

from ...builders.conll import READ_BYTES, blank_cut_blocks
from ...builders.conll_format import CONLLU_COLUMNS, Layout, format_of, is_blank, sentences
from ...builders.opened import open_source, plain_name
from ...builders.lines import BOM
from ...features.class_label import class_order
from ...features.notices import Notices, said
from . import free_text
from .names import dataset_name
from .plan import Declaration, Plan
from .sources import BYTE_LIMIT, TABLE_KINDS

MAX_TAGS = 100  # distinct values of a column proposed as a class label per word (UD's XPOS can have thousands)
_LOOK_BYTES = 64 * 1024  # what is read to tell whether a file is CoNLL at all
_FIELD = re.compile(rb"[^ \t\r\x0b\x0c]+")
_CONLLU_ID = re.compile(rb"[1-9][0-9]*([-.][0-9]+)?\Z")
_IOB = re.compile(r"O\Z|[BIES]-.")
WORDS_NOTE = ("the words, as a list of strings (`pip install 'tfrecord-builder[text]'` and infer again for token "
              "ids: `type: text`)")


def conll_plan(path: str) -> Plan | None:
    """The plan of a CoNLL file, or None where `path` is a table's name or doesn't hold CoNLL."""
    if os.path.isdir(path) or os.path.splitext(plain_name(path))[1].lower() in TABLE_KINDS:
        return None
    layout = _layout(path)
    if layout is None:
        return None
    values, found, complete = _sample(path, layout)
    return _plan(path, layout, values, found, complete)


def _layout(path: str) -> Layout | None:
    """The file's layout, from its first token lines; None if they aren't CoNLL's."""
    try:
        with open_source(path) as file:
            head = file.read(_LOOK_BYTES)
    except OSError:
        return None
    lines = head.removeprefix(BOM).split(b"\n")
    if len(head) == _LOOK_BYTES:
        lines = lines[:-1]  # (cut short)
    token_lines = [line for line in lines if not is_blank(line) and not line.startswith((b"#", b"-DOCSTART-"))]
    if not token_lines:
        return None
    conllu = all(len(line.rstrip(b"\r").split(b"\t")) == 10 and _CONLLU_ID.match(line.split(b"\t")[0])
                 for line in token_lines)
    if format_of(path) == "conllu" or conllu:
        return Layout("conllu", CONLLU_COLUMNS)
    counts = {len(_FIELD.findall(line)) for line in token_lines}
    if len(counts) != 1 or counts == {1} or _sentences_in(lines) < 2:
        return None
    return Layout("conll2003", _columns(counts.pop(), token_lines))


def _sentences_in(lines: list[bytes]) -> int:
    runs, inside = 0, False
    for line in lines:
        blank = is_blank(line) or line.startswith(b"-DOCSTART-")
        runs += not blank and not inside
        inside = not blank
    return runs


def _columns(count: int, lines: list[bytes]) -> tuple[str, ...]:
    """Names for CoNLL-2003's columns: the word first; four are CoNLL-2003's own (word, pos,
    chunk, ner); a last column of IOB tags (B-PER, I-PER, O) is `ner`, another `tag`."""
    if count == 4:
        return ("word", "pos", "chunk", "ner")
    last = {_FIELD.findall(line)[-1].decode("utf-8", "replace") for line in lines}
    tags = "ner" if all(_IOB.match(tag) for tag in last) else "tag"
    return ("word", *[f"column{index}" if count > 3 else "pos" for index in range(2, count)], tags)


def _sample(path: str, layout: Layout) -> tuple[dict[str, list[Any]], dict[str, Any], bool]:
    """Every column's values (flattened over words) and the sentences' comments, of the
    sentences read (all of them, up to BYTE_LIMIT bytes), and whether that was the whole file."""
    values: dict[str, list[Any]] = {name: [] for name in layout.fields()}
    found: dict[str, Any] = {"sentences": 0, "with": Counter(), "words": []}
    size, complete = 0, True
    name = os.path.basename(path)
    notices = Notices()
    line = 1
    with open_source(path) as file:
        if file.peek(len(BOM))[: len(BOM)] == BOM:
            file.read(len(BOM))
        for block in blank_cut_blocks(file, READ_BYTES):
            for sentence in sentences(block, name, line, layout, notices):
                if sentence.error is not None:
                    raise sentence.error  # (a sentence the build would refuse: its message)
                assert sentence.record is not None
                found["sentences"] += 1
                found["words"].append(sentence.record[layout.columns[0] if layout.format == "conll2003" else "form"])
                for column in layout.columns:
                    values[column].extend(sentence.record[column])
                found["with"].update(key for key in ("sent_id", "text") if sentence.record.get(key) is not None)
            line += block.count(b"\n")
            size += len(block)
            if size >= BYTE_LIMIT:
                complete = not file.peek(1)
                break
    found["notices"] = notices.counts
    return values, found, complete


def _plan(path: str, layout: Layout, values: dict[str, list[Any]], found: dict[str, Any], complete: bool) -> Plan:
    words = len(values[layout.columns[0]])
    source: dict[str, Any] = {"builder": "conll", "path": path}
    if layout.format != format_of(path):
        source["format"] = layout.format
    plan = Plan(dataset_name(path), source)
    sample = "" if complete else " (of the sentences read: a tag seen only later stops the build)"
    tokens = free_text.text_extra()
    if layout.format == "conll2003":
        source["columns"] = list(layout.columns)
        plan.source_notes["columns"] = ("CoNLL-2003's columns" if len(layout.columns) == 4 else
                                        "guessed: name them as the corpus does")
        plan.features.append(_words("word", found["words"], tokens))
        for column in layout.columns[1:]:
            plan.features.append(_tags(column, values[column], sample, tokens))
    else:
        plan.features.append(_words("form", found["words"], tokens))
        plan.features.append(Declaration("lemma", {"dtype": "string", "shape": [None]}, [], "lemma"))
        for column in ("upos", "xpos"):
            plan.features.append(_tags(column, values[column], sample, tokens))
        if all(isinstance(head, int) for head in values["head"]):  # else tags only: no syntax to keep
            plan.features.append(Declaration("head", {"dtype": "int64", "shape": [None]},
                                             ["each word's head: its ID, 0 for the root (one a word, not a piece)"],
                                             "head"))
            plan.features.append(_tags("deprel", values["deprel"], sample, tokens))
        for key in ("sent_id", "text"):
            if found["with"][key] == found["sentences"]:
                plan.features.append(Declaration(key, {"dtype": "string"}, [f"the `# {key} = ...` comment"], key))
        plan.left_out = ["id: left out, the words' 1, 2, 3, ... (add `id: {dtype: int64, shape: [null]}` to keep it)",
                         "feats, deps, misc: left out (add e.g. `feats: {dtype: string, shape: [null]}` to keep "
                         "them as written)"]
    kind = "CoNLL-2003" if layout.format == "conll2003" else "CoNLL-U"
    extent = "the whole file" if complete else f"the first {BYTE_LIMIT // 1024**2} MiB"
    plan.header = [f"{os.path.basename(path)}: a {kind} file, {found['sentences']:,} sentences of {words:,} words "
                   f"read ({extent}); a record per sentence."]
    plan.header += [line.removeprefix("source: ") + " (the build says so too)."
                    for line in said(found["notices"])]
    return plan


def _words(column: str, sentences: list[list[str]], tokens: bool) -> Declaration:
    """The words: token ids of a vocabulary learned in the build (`tokens`), else strings."""
    if not tokens:
        return Declaration("words", {"dtype": "string", "shape": [None], "source": column}, [WORDS_NOTE], column)
    fields, note = free_text.text_fields([[word.lower() for word in words] for words in sentences])
    return Declaration("words", {"type": "text", "source": column, "words": True, **fields},
                       [f"guessed: the words as token ids of {note.replace('texts', 'sentences')}"], column)


def _tags(column: str, values: list[Any], sample: str, tokens: bool = False) -> Declaration:
    """A column of tags: a class label per word where its values are few (on the words' pieces,
    `align: words`, where they are token ids), else text."""
    counts = Counter(values)
    if 2 <= len(counts) <= MAX_TAGS:
        names = class_order(counts)
        if "O" in counts:  # IOB tags: O, outside every entity, first (index 0)
            names = ["O"] + [name for name in names if name != "O"]
        note = f"guessed: {len(names)} distinct tags in {len(values):,} words{sample}"
        fields: dict[str, Any] = {"type": "class_label", "shape": [None], "names": names}
        if tokens:
            fields["align"] = "words"
            note += "; each word's tag on its first piece (-1 on the others, ignored)"
        return Declaration(column, fields, [note], column)
    why = "one value" if len(counts) < 2 else f"{len(counts):,} distinct values (more than {MAX_TAGS})"
    return Declaration(column, {"dtype": "string", "shape": [None]}, [f"{why}: kept as text"], column)


__all__ = ["conll_plan"]
