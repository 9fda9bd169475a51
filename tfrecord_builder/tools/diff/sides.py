"""Opening what `diff` compares: a spec file, or a built dataset (its folder or metadata file)."""
from __future__ import annotations

import os

from ... import fs
from ...builders.sources import source_builders, with_source_columns
from ...errors import TFRecordBuilderError, UsageError
from ...features.gathered import is_pattern
from ...spec.load import load_spec
from ...spec.model import Spec
from ...write.info import DatasetInfo, read_info
from ...write.naming import INFO_FILE, METADATA_FILE, MARKER_FILES
from .model import Side

SPEC_SUFFIXES = (".yaml", ".yml")


def open_side(what: str | os.PathLike | Spec | DatasetInfo) -> Side:
    """A spec (a .yaml file or a Spec) or a built dataset (a NAME/VERSION folder, one of its metadata
    files, a URL, or a DatasetInfo).

    Raises UsageError for a path that is neither, SpecError for a bad spec and DatasetError for an
    unfinished or damaged dataset.
    """
    if isinstance(what, DatasetInfo):
        return Side(what.path, what.spec, what)
    if isinstance(what, Spec):
        return Side(what.file, what)
    path = os.fspath(what)
    if fs.is_url(path):  # in an object store a folder is a prefix: what read_info can't open is one line
        return _dataset(path)
    if not os.path.exists(path):
        raise UsageError(f"{path}: no such file or folder")
    if os.path.isdir(path):
        names = set(os.listdir(path))
        # a folder of ours without dataset_info.json is an unfinished build: read_info names it
        if INFO_FILE not in names and not names & set(MARKER_FILES):
            raise UsageError(f"{path}: neither a spec nor a built dataset (no {INFO_FILE}){_versions_hint(path)}")
        return _dataset(path)
    if os.path.basename(path) in (INFO_FILE, METADATA_FILE):
        return _dataset(path)
    if path.lower().endswith(SPEC_SUFFIXES):
        return Side(path, _with_columns(load_spec(path)))
    raise UsageError(f"{path}: neither a spec (a .yaml file) nor a built dataset (a NAME/VERSION folder)")


def _with_columns(spec: Spec) -> Spec:
    """A spec with its `columns:` patterns matched against its source's header, as a build records
    them (so a spec compares with its dataset column for column); as it is when the source can't
    be read here (specs.py then takes a pattern and the columns it matches as the same)."""
    if not any(is_pattern(feature.columns) for feature in spec.features.values()):
        return spec
    try:
        return with_source_columns(spec, source_builders(spec))
    except TFRecordBuilderError:
        return spec


def _dataset(path: str) -> Side:
    """A built dataset, named as it was given (the report shows the paths the user typed)."""
    info = read_info(path)
    return Side(path, info.spec, info)


def _versions_hint(path: str) -> str:
    """`; it holds versions 1.0.0, 1.1.0 (give NAME/VERSION)` for a dataset's NAME folder."""
    versions = sorted(name for name in os.listdir(path) if os.path.isfile(os.path.join(path, name, INFO_FILE)))
    if not versions:
        return ""
    return f"; it holds the versions {', '.join(versions)}: give one, e.g. {os.path.join(path, versions[-1])}"
