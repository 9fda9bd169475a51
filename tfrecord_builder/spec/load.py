"""Loading a spec: from a YAML file (`load_spec`) or from a built dataset's normalised copy."""
from __future__ import annotations

import dataclasses
import os
from typing import Any

from ..errors import SpecError
from .fields import At, convert
from .model import Spec
from .yaml_source import Document, load_yaml

MAX_SPEC_BYTES = 10 * 1024 * 1024


def load_spec(path: str | os.PathLike) -> Spec:
    """Reads and validates a spec file.

    >>> spec = load_spec("specs/wine.yaml")
    >>> spec.name, list(spec.splits)
    ('wine', ['train', 'test'])

    Raises SpecError (one line: file, line, key path, what was expected) for any problem.
    """
    path = os.fspath(path)
    try:
        if os.path.getsize(path) > MAX_SPEC_BYTES:
            raise SpecError(f"{path}: the spec is over {MAX_SPEC_BYTES // 2**20} MiB; expected a small YAML file")
        with open(path, "rb") as file:
            raw = file.read()
    except FileNotFoundError:
        raise SpecError(f"{path}: spec file not found") from None
    except IsADirectoryError:
        raise SpecError(f"{path}: is a folder; expected a YAML spec file") from None
    except OSError as error:
        raise SpecError(f"{path}: can't read the spec: {error.strerror}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise SpecError(f"{path}, line {line}: the spec is not valid UTF-8 text") from None
    return spec_from_document(load_yaml(text, path))


def spec_from_document(document: Document) -> Spec:
    """Validates a loaded YAML document into a Spec."""
    if not isinstance(document.value, dict):
        kind = "an empty file" if document.value is None else f"a {type(document.value).__name__}"
        raise SpecError(f"{document.file}, line 1: expected a mapping of spec keys (name, source, features, ...), "
                        f"received {kind}")
    spec = convert(Spec, document.value, At(document))
    return dataclasses.replace(spec, file=os.path.abspath(document.file), document=document)


def spec_from_dict(value: dict[str, Any], file: str) -> Spec:
    """Rebuilds a Spec from its normalised form (as stored in dataset_info.json)."""
    return spec_from_document(Document(value=value, file=file))
