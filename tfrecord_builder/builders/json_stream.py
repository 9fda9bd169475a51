"""A JSON document read without building it whole in Python: the top-level object's values are
decoded one at a time (json's own decoder), and the elements of the lists named are handed over
one by one as they are decoded, so a reader can pack them as they come (a COCO file's `images` and
`annotations`: the dicts of a 450 MB file would take about 10 times its size).
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable

from .. import fs
from ..errors import DataError

_SPACE = re.compile(r"[ \t\n\r]*")


def parse(path: str, arrays: dict[str, Callable[[int, Any], None]], document: str) -> dict[str, Any]:
    """The JSON object in `path` (a local path or a URL), but for the top-level keys in `arrays`,
    whose lists are handed to their function one element at a time (never held whole; their keys
    hold None). A file that can't be read is a DataError naming it as `document` ("COCO JSON");
    malformed JSON one naming the file, line and column."""
    try:
        with fs.open_file(path) as file:  # a local file or a URL (s3://, gs://)
            text = file.read().decode("utf-8")
    except OSError as error:
        raise DataError(f"{path}: can't read the {document} ({error.strerror})") from None
    except UnicodeDecodeError as error:
        raise DataError(f"{path}: not valid UTF-8 text ({error.reason} at byte {error.start})") from None
    try:
        return streamed(text, arrays)
    except json.JSONDecodeError as error:
        raise DataError(f"{path}, line {error.lineno}: malformed JSON: {error.msg} (column {error.colno})") from None


def streamed(text: str, arrays: dict[str, Callable[[int, Any], None]]) -> dict[str, Any]:
    """The JSON object `text` holds, as `json.loads` gives it, but for the top-level keys in
    `arrays` whose values are lists: each element goes to the key's function, with its position,
    as soon as it is decoded, and the key holds None. Malformed JSON raises json.JSONDecodeError
    with json.loads's words and place; a document that isn't an object, "Expecting a JSON object"."""
    decode = json.JSONDecoder().raw_decode
    rest: dict[str, Any] = {}
    at = _SPACE.match(text, 0).end()
    if not text.startswith("{", at):
        raise json.JSONDecodeError("Expecting a JSON object", text, at)
    at = _SPACE.match(text, at + 1).end()
    if text.startswith("}", at):
        return _end(text, at + 1, rest)
    while True:
        if not text.startswith('"', at):
            raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, at)
        key, at = decode(text, at)
        at = _SPACE.match(text, at).end()
        if not text.startswith(":", at):
            raise json.JSONDecodeError("Expecting ':' delimiter", text, at)
        at = _SPACE.match(text, at + 1).end()
        if key in arrays and text.startswith("[", at):
            at = _array(text, at + 1, decode, arrays[key])
            rest[key] = None  # handed over element by element
        else:
            rest[key], at = _value(decode, text, at)
        at = _SPACE.match(text, at).end()
        if text.startswith(",", at):
            at = _SPACE.match(text, at + 1).end()
        elif text.startswith("}", at):
            return _end(text, at + 1, rest)
        else:
            raise json.JSONDecodeError("Expecting ',' delimiter", text, at)


def _array(text: str, at: int, decode: Callable, handle: Callable[[int, Any], None]) -> int:
    """Decodes a list's elements one by one from `at` (past its `[`), handing each over; the
    position past its `]`."""
    at = _SPACE.match(text, at).end()
    if text.startswith("]", at):
        return at + 1
    position = 0
    while True:
        value, at = _value(decode, text, at)
        handle(position, value)
        position += 1
        at = _SPACE.match(text, at).end()
        if text.startswith(",", at):
            at = _SPACE.match(text, at + 1).end()
        elif text.startswith("]", at):
            return at + 1
        else:
            raise json.JSONDecodeError("Expecting ',' delimiter", text, at)


def _value(decode: Callable, text: str, at: int) -> tuple[Any, int]:
    try:
        return decode(text, at)
    except StopIteration:  # raw_decode's way of saying there is no value at `at`
        raise json.JSONDecodeError("Expecting value", text, at) from None


def _end(text: str, at: int, rest: dict[str, Any]) -> dict[str, Any]:
    at = _SPACE.match(text, at).end()
    if at != len(text):
        raise json.JSONDecodeError("Extra data", text, at)
    return rest
