"""Names for what the spec declares: a feature name for each column, the dataset's name.

A spec names features with identifiers (`[A-Za-z_][A-Za-z0-9_]*`); columns are named anything
(`petal length (cm)`, `2nd`, `class`, an unnamed first column). A column whose name is already
an identifier, and no Python keyword, keeps it; any other gets a snake_case identifier and the
spec reads the column through `source:`.
"""
from __future__ import annotations

import keyword
import os
import re
import unicodedata
from typing import Iterable

from ...builders.opened import plain_name

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_EXTENSIONS = (".csv", ".tsv", ".txt", ".jsonl", ".ndjson", ".json", ".parquet", ".pq", ".conll", ".conllu")


def identifier(text: str, fallback: str = "column") -> str:
    """A snake_case identifier from any text: `petal length (cm)` -> `petal_length_cm`,
    `2nd` -> `_2nd`, `class` -> `class_`, `GrößeX` -> `grosse_x`."""
    if IDENTIFIER.match(text) and not keyword.iskeyword(text):
        return text
    name = snake_case(unicodedata.normalize("NFKD", text.replace("ß", "ss")).encode("ascii", "ignore").decode())
    if not name:
        return fallback
    if name[0].isdigit():
        name = f"_{name}"
    return f"{name}_" if keyword.iskeyword(name) else name


def snake_case(text: str) -> str:
    """`petalLength (cm)` -> `petal_length_cm`: what a column's name says, to compare with words
    such as `id` or `split` (no identifier rules: it may be empty or start with a digit)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", text)  # camelCase -> camel_Case
    return re.sub(r"[^0-9A-Za-z]+", "_", spaced).strip("_").lower()


def feature_names(columns: Iterable[str], taken: Iterable[str] = ()) -> dict[str, str]:
    """A unique feature name per column (`taken`: names already in use, e.g. `sequence_length`,
    which a SequenceExample's input_fn adds). A clash gets `_2`, `_3`, ..."""
    used = set(taken)
    names: dict[str, str] = {}
    for column in columns:
        base = "row" if column == "" else identifier(column)  # R's and pandas' row names
        name, count = base, 1
        while name in used:
            count += 1
            name = f"{base}_{count}"
        used.add(name)
        names[column] = name
    return names


def dataset_name(data: str) -> str:
    """The dataset's name from its file or folder: `wine.csv.gz` -> `wine`, `2024 sales.csv` -> `_2024_sales`."""
    base = os.path.basename(os.path.normpath(plain_name(data)))
    stem, extension = os.path.splitext(base)
    if extension.lower() not in _EXTENSIONS:
        stem = base
    return identifier(stem, fallback="dataset")
