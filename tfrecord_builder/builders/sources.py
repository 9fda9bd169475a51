"""Resolving a spec's source: the builder of each split, its options, and what it defines.

The build, `validate` and the code generator (class names an image folder gives) all start here,
so none of them needs the others.
"""
from __future__ import annotations

import dataclasses
import os

from .. import fs
from ..errors import SpecError, TFRecordBuilderError
from ..features import gathered
from ..spec.fields import unknown_key_message
from ..spec.model import Spec
from .base import Builder, no_column
from ..registry import SHIPPED, builder_class, builder_file, builtin_class


def check_sources(spec: Spec) -> None:
    """A built-in builder's source paths exist; raises SpecError at the `path` key otherwise."""
    cls = builtin_class(spec.source.builder)
    if cls is None or not cls.READS_PATH:
        return
    if issubclass(cls, Builder) and cls.FROM_PYTHON:
        raise spec.error(("source", "builder"), f"the {spec.source.builder} builder reads a frame given from Python, "
                                                "tb.build(spec, source=frame); to build from files, name them: "
                                                "source: {builder: parquet, path: ...}")
    places = [(("source", "path"), spec.source.path)]
    if not spec.fraction_splits:
        places = [(("splits", split, "path"), source.path) if source.path else (("source", "path"), spec.source.path)
                  for split, source in spec.splits.items()]
    for key_path, path in places:
        if path is None:
            raise spec.error(key_path[:-1], f"the {spec.source.builder} builder needs a `path`")
        resolved = spec.resolve(path)
        matches = fs.pattern_files(resolved) if getattr(cls, "READS_PATTERN", False) else None
        if matches is not None:
            if not matches:
                raise spec.error(key_path, f"{resolved}: the pattern matches no file")
            continue
        if not fs.exists(resolved):
            raise spec.error(key_path, f"{resolved} not found")
        wants_folder = cls.READS_FOLDER
        if fs.isdir(resolved) != wants_folder:
            raise spec.error(key_path, f"{resolved} is a {'file' if wants_folder else 'folder'}; the "
                                       f"{spec.source.builder} builder reads a {'folder' if wants_folder else 'file'}")


def source_builders(spec: Spec) -> list[tuple[str | None, Builder]]:
    """The source's builder for each split (one, for None, when the spec splits by fraction)."""
    check_sources(spec)
    try:
        cls = builder_class(spec.source.builder, [spec.base_dir, os.getcwd()])
    except SpecError as error:  # said at the spec's line
        raise spec.error(("source", "builder"), str(error).removeprefix("source.builder: ")) from None
    if not (isinstance(cls, type) and issubclass(cls, Builder)):
        raise spec.error(("source", "builder"), f"{spec.source.builder} is not a tfrecord_builder.Builder subclass")
    _check_options(spec, cls)
    if spec.fraction_splits:
        path = spec.resolve(spec.source.path) if spec.source.path else None
        return [(None, _created(spec, cls, path, spec.source.options))]
    builders = []
    for split, source in spec.splits.items():
        path = source.path or spec.source.path
        builder = _created(spec, cls, spec.resolve(path) if path else None, {**spec.source.options, **source.options})
        provided = builder.splits()
        if provided is not None and split not in provided:
            raise spec.error(("splits", split), f"the source provides no split {split!r}; it has: {', '.join(provided)}")
        builders.append((split, builder))
    return builders


def _check_options(spec: Spec, cls: type[Builder]) -> None:
    """The source's `options:` (and each split's) are keys the builder reads, with valid values."""
    if cls.OPTIONS is None:
        return
    places = [(("source", "options"), spec.source.options)]
    if not spec.fraction_splits:
        places += [(("splits", name, "options"), source.options) for name, source in spec.splits.items()]
    for place, options in places:
        for key, value in options.items():
            if key not in cls.OPTIONS:
                problem = (unknown_key_message(key, cls.OPTIONS) if cls.OPTIONS
                           else f"unknown key `{key}`: the {spec.source.builder} builder takes no options")
            else:
                problem = cls.option_problem(key, value)
            if problem:
                raise spec.error(place + (key,), problem)


def _created(spec: Spec, cls: type, path: str | None, options: dict) -> Builder:
    try:
        return cls(spec, path, options)
    except TFRecordBuilderError:
        raise
    except Exception as error:  # the builder's own code (e.g. its options): keep the cause for --debug
        raise spec.error(("source", "builder"), f"creating {cls.__name__} failed: "
                                                f"{type(error).__name__}: {error}") from error


def check_columns(spec: Spec, builders: list[tuple[str | None, Builder]]) -> None:
    """Every column the spec reads is in the header of each file that has one (CSV, Parquet):
    what a build would find at its first batch, found without reading the rows."""
    wanted = wanted_columns(spec)
    for _, builder in builders:
        header = builder.header()
        if header is None:
            continue
        for column, user in wanted.items():
            if column not in header:
                raise no_column(builder.place(), user, column, header)


def wanted_columns(spec: Spec) -> dict[str, str]:
    """Every column the spec reads by name, with what reads it (`feature \`x\``, `source.key`)."""
    wanted = {column: f"feature `{name}`" for name, feature in spec.features.items() for column in feature.source_names
              if not gathered.is_pattern(feature.columns)}
    for key in ("key", "split_column", "group_by", "order_by"):
        if getattr(spec.source, key) is not None:
            wanted.setdefault(getattr(spec.source, key), f"source.{key}")
    return wanted


def check_fields(spec: Spec, builders: list[tuple[str | None, Builder]]) -> None:
    """Every field a feature reads is one its builder's records offer, where the builder says
    which (`Builder.fields`): a misspelt field (`is_crowd` for `iscrowd`) is refused at the
    feature's line, not built as empty lists."""
    section = "context" if spec.is_sequence else "features"
    for _, builder in builders:
        offered = builder.fields()
        if offered is None:
            continue
        for name, feature in spec.features.items():
            for field in feature.source_names:
                if field not in offered:
                    at = "source" if feature.source is not None else "columns" if feature.columns is not None else None
                    where = "sequence" if feature.sequence else section
                    place = (where, name, at) if at else (where, name)
                    raise spec.error(place, f"the {spec.source.builder} builder gives no field `{field}`; its records "
                                            f"offer: {', '.join(offered)}")


def with_source_columns(spec: Spec, builders: list[tuple[str | None, Builder]]) -> Spec:
    """The spec with each `columns:` pattern matched against its source's columns, in the file's
    order: the list a build records (in tfrecord_builder.json) and the shape `[n]`. Every split's
    file must give the same list; a pattern that matches nothing is an error naming the pattern."""
    patterns = [name for name, feature in spec.features.items() if gathered.is_pattern(feature.columns)]
    if not patterns:
        return spec
    section = "context" if spec.is_sequence else "features"
    features = dict(spec.features)
    for name in patterns:
        def error(path: tuple, message: str, name: str = name) -> Exception:
            return spec.error((section, name, *path), message)
        first: tuple[str, list[str]] | None = None
        for _, builder in builders:
            where = fs.basename(builder.path) if builder.path else type(builder).__name__
            header = builder.column_names()
            if header is None:
                raise error(("columns",), f"a pattern is matched against the source's columns, and {where} names "
                                          "none before its rows are read (a CSV or Parquet header, a JSONL file's "
                                          "first object do); list the columns instead")
            feature = gathered.resolved(spec.features[name], header, where, error)
            if first is not None and feature.columns != first[1]:
                raise error(("columns",), f"the pattern {spec.features[name].columns!r} matches other columns in "
                                          f"{where} ({len(feature.columns)}) than in {first[0]} ({len(first[1])}); "
                                          "every split's file must give the same columns")
            first = first or (where, feature.columns)
            features[name] = feature
    context = {name: features[name] for name in spec.context} if spec.is_sequence else spec.context
    return dataclasses.replace(spec, features=features, context=context)


def with_source_classes(spec: Spec, builders: list[tuple[str | None, Builder]]) -> Spec:
    """The spec with the names of features that leave them to the source: class labels' classes
    (an image folder's sub-folders), keypoints' points (a COCO category's)."""
    features = dict(spec.features)
    section = "context" if spec.is_sequence else "features"
    for name, feature in spec.features.items():
        if not feature.wants_source_names:
            continue
        found = [names for _, builder in builders if (names := builder.class_names(feature.source_name))]
        try:
            features[name] = feature.with_source_names(found)
        except ValueError as error:
            raise spec.error((section, name), str(error)) from None
    context = {name: features[name] for name in spec.context} if spec.is_sequence else spec.context
    return dataclasses.replace(spec, features=features, context=context)


def builder_sources(spec: Spec) -> dict[str, str]:
    """The spec's own builder file's text by its path, as this process loaded it (empty for built-in
    and installed builders): what workers on other machines load it from (`add_shipped_sources`)."""
    path = builder_file(spec.source.builder, [spec.base_dir, os.getcwd()])
    return {path: SHIPPED[path]} if path is not None and path in SHIPPED else {}


def add_shipped_sources(sources: dict[str, str]) -> None:
    """Makes builder files read elsewhere (`builder_sources`) loadable here where they are missing."""
    SHIPPED.update(sources)
