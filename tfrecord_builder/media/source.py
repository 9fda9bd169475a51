"""One way to open a media file: a local path, an object in a store (a URL, read through `fs`), or
the file's bytes. Images, audio and video open their files here, so a photo, a recording or a
clip in a bucket is read as a local one is, and each kind says the same where there is no file.
"""
from __future__ import annotations

import contextlib
import io
import os
import stat
from typing import Any, BinaryIO, Callable, Iterator

from .. import fs

# what a kind raises for a file it can't read (BadImage, BadAudio, BadVideo), given the words why
Refusal = Callable[[str], Exception]


@contextlib.contextmanager
def opened(value: Any, kind: str, bad: Refusal) -> Iterator[BinaryIO]:
    """`value` (a path, a URL, or bytes) as a binary file at its start, closed after. A missing
    file is `bad("file not found")`, a folder `bad(f"is a folder, not {kind}")` (`kind`: "an
    image file"), any other failure to open it `bad("can't read the file (why)")`."""
    with _source(value, kind, bad, native=False) as file:
        assert not isinstance(file, str)  # (only `native` gives a path)
        yield file


@contextlib.contextmanager
def for_decoder(value: Any, kind: str, bad: Refusal) -> Iterator[str | BinaryIO]:
    """As `opened`, but a local file as its path, checked to be a file: for a decoder that reads
    files itself (libsndfile, FFmpeg), without a Python call per read."""
    with _source(value, kind, bad, native=True) as source:
        yield source


def read_whole(value: Any, kind: str, bad: Refusal) -> bytes:
    """The bytes of the file `value` names (a path or a URL), or `value` itself when it is bytes."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if type(value) is str:  # read at once (2,000 photos a build: the way below costs a third more)
        try:
            return fs.read_bytes(value)
        except OSError:
            pass  # said below, as for any source
    with opened(value, kind, bad) as file:
        try:
            return file.read()
        except OSError as error:
            raise bad(f"can't read the file ({error.strerror or error})") from None


@contextlib.contextmanager
def _source(value: Any, kind: str, bad: Refusal, native: bool) -> Iterator[str | BinaryIO]:
    if isinstance(value, (bytes, bytearray, memoryview)):
        yield io.BytesIO(bytes(value))
        return
    path = os.fspath(value)
    try:
        source = fs.path_or_file(path) if native else fs.open_file(path)
        if isinstance(source, str) and stat.S_ISDIR(os.stat(source).st_mode):  # (a local path, not opened)
            raise IsADirectoryError(source)
    except FileNotFoundError:  # (a store's folder is a prefix, which no object is)
        raise bad(f"is a folder, not {kind}" if fs.isdir(path) else "file not found") from None
    except IsADirectoryError:
        raise bad(f"is a folder, not {kind}") from None
    except OSError as error:
        raise bad(f"can't read the file ({error.strerror or error})") from None
    if isinstance(source, str):
        yield source
        return
    with source:
        yield source
