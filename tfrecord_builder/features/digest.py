"""`digest: sha256`: a string feature that stores the hex digest of a file instead of its path.

What the Object Detection API's `create_coco_tf_record.py` stores as `image/key/sha256`: the
SHA-256 of the image file's bytes, as 64 hex digits. A value is a file path (relative to the
source's folder, as an image feature reads it: a local path or a URL) or bytes already read (a
custom builder's, a Parquet binary column's), whose digest is taken as they are.
"""
from __future__ import annotations

import hashlib
import os
from typing import Any, Callable, Sequence

from .. import fs
from ..errors import DataError

ALGORITHMS = ("sha256",)
_CHUNK = 1 << 20  # a file is hashed a MiB at a time: a large one is never held whole


def digests(values: Sequence[Any], algorithm: str, base_dir: str | None,
            fail: Callable[[int, str], DataError]) -> list[str | None]:
    """Each value's hex digest (None stays None: a missing value, which the feature's rules
    handle); `fail(row, problem)` makes the error for a file that can't be read."""
    out: list[str | None] = []
    for row, value in enumerate(values):
        if value is None:
            out.append(None)
        elif isinstance(value, (bytes, bytearray, memoryview)):
            out.append(hashlib.new(algorithm, value).hexdigest())
        elif isinstance(value, (str, os.PathLike)):
            out.append(_file_digest(os.fspath(value), algorithm, base_dir, lambda problem: fail(row, problem)))
        else:
            raise fail(row, f"expected a file path or bytes to take the {algorithm} of, received "
                            f"{type(value).__name__}")
    return out


def _file_digest(path: str, algorithm: str, base_dir: str | None, fail: Callable[[str], DataError]) -> str:
    located = fs.resolve(path, base_dir) if base_dir is not None else path
    digest = hashlib.new(algorithm)
    try:
        with fs.open_file(located) as file:
            while chunk := file.read(_CHUNK):
                digest.update(chunk)
    except FileNotFoundError:
        raise fail(f"{located}: file not found (its {algorithm} is asked for)") from None
    except IsADirectoryError:
        raise fail(f"{located}: is a folder, not a file (its {algorithm} is asked for)") from None
    except OSError as error:
        raise fail(f"{located}: can't read the file ({error.strerror or error})") from None
    return digest.hexdigest()
