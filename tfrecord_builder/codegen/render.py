"""Renders the generated input module (`NAME_input.py`) from a spec.

Every value taken from the spec enters the text as a Python literal made by `repr` of a str,
int or tuple (never pasted raw), and feature names are identifiers by then, so no spec can put
code into the module.
"""
from __future__ import annotations

import os

from ..errors import TFRecordBuilderError, UsageError
from .. import fs
from ..fs import is_url, place_problem
from ..spec.load import load_spec
from ..builders.sources import source_builders, with_source_classes
from ..features import Feature
from ..spec.model import Spec
from ..version import __version__
from ..write.naming import dataset_dir, module_name
from .helpers import helper_functions
from .template import (EXAMPLE_BATCHING, EXAMPLE_PARSING, SEQUENCE_BATCHING, SEQUENCE_CONSTANTS, SEQUENCE_PARSING,
                       TEMPLATE)

_COMPRESSION = {"none": None, "gzip": "GZIP", "zlib": "ZLIB"}


def render_module(spec: Spec, data_dir: str) -> str:
    """The module's source text; `data_dir` is recorded as its default dataset folder."""
    features = list(spec.features.values())
    class_names = {
        feature.name: tuple(feature.names) for feature in features if getattr(feature, "names", None) is not None
    }
    splits = tuple(spec.splits)
    label = spec.label
    yields = "`(features, label)` pairs" if label else "feature dicts"
    if spec.is_sequence:
        format_constants, parsing, batching = _sequence_parts(spec)
    else:
        format_constants, parsing, batching = "", _example_parsing(spec), EXAMPLE_BATCHING
    return TEMPLATE.format(
        name=spec.name,
        version=spec.version,
        tool_version=__version__,
        other_split=next((split for split in splits if split != "train"), splits[0]),
        name_literal=repr(spec.name),
        version_literal=repr(spec.version),
        description=repr(spec.description),
        spec_file=repr(os.path.basename(spec.file)),
        data_dir=repr(data_dir if is_url(data_dir) else os.path.abspath(data_dir)),
        splits=repr(splits),
        compression=repr(_COMPRESSION[spec.output.compression]),
        label=repr(label),
        batch_size=int(spec.input.batch_size),
        shuffle_buffer=int(spec.input.shuffle_buffer),
        class_names=repr(class_names),
        format_constants=format_constants,
        parsing=parsing,
        batching=batching,
        yields=yields,
    )


def _parse_specs(features: list[Feature]) -> str:
    return "\n".join(f"    {key!r}: {source}," for feature in features
                     for key, source in feature.parse_specs_source().items())


def _helpers(features: list[Feature]) -> str:
    return helper_functions(sorted({name for feature in features for name in feature.helpers_source()}))


def _example_parsing(spec: Spec) -> str:
    features = list(spec.features.values())
    decoders = "\n".join(f"        {feature.name!r}: {feature.decode_source('parsed', spec.input)},"
                         for feature in features)
    return EXAMPLE_PARSING.format(parse_specs=_parse_specs(features), helpers=_helpers(features), decoders=decoders)


def _sequence_parts(spec: Spec) -> tuple[str, str, str]:
    features = list(spec.features.values())
    context = [feature for feature in features if not feature.sequence]
    sequence = [feature for feature in features if feature.sequence]
    decoders = "\n".join(
        f"        {feature.name!r}: {feature.decode_source('sequence' if feature.sequence else 'context', spec.input)},"
        for feature in features)
    length_feature = length_source(sequence, spec.label)
    constants = SEQUENCE_CONSTANTS.format(
        length_feature=repr(spec.input.length_feature),
        mask_feature=repr(spec.input.mask_feature),
        max_length=repr(spec.input.max_length),
        bucket_boundaries=repr(spec.input.bucket_boundaries),
        sequence_names=repr(tuple(feature.name for feature in sequence)),
        length_key=repr(length_feature.record_key),
    )
    if length_feature.is_variable:
        expression = "return sequence[LENGTH_KEY].row_lengths()"
    else:
        expression = "return lengths[LENGTH_KEY]"
    parsing = SEQUENCE_PARSING.format(context_specs=_parse_specs(context), sequence_specs=_parse_specs(sequence),
                                      helpers=_helpers(features), decoders=decoders, length_expression=expression)
    return constants, parsing, SEQUENCE_BATCHING


def length_source(sequence: list[Feature], label: str | None = None) -> Feature:
    """The sequence feature whose lengths are the records' lengths (and the mask's): the label if
    it is a sequence feature (with `sequence_lengths: free` the mask must cover the label), else
    a fixed per-step shape if any (the parser reports their lengths), else a variable one (its
    ragged row lengths)."""
    labelled = [feature for feature in sequence if feature.name == label]
    return next(iter(labelled), None) or next((feature for feature in sequence if not feature.is_variable),
                                              sequence[0])


def generate_module(spec: Spec | str | os.PathLike, path: str | os.PathLike | None = None,
                    data_dir: str | os.PathLike | None = None) -> str:
    """Renders the input module of `spec`, writes it to `path` (a file or folder) if given, returns it.

    >>> text = generate_module("specs/wine.yaml", "train/")   # writes train/wine_input.py

    `data_dir` is the dataset folder the module reads by default (default: where the spec builds).
    """
    if not isinstance(spec, Spec):
        spec = load_spec(spec)
    spec = _with_source_classes(spec)
    folder = os.fspath(data_dir) if data_dir is not None else dataset_dir(
        spec.resolve(spec.output.dir), spec.name, spec.version)
    text = render_module(spec, folder)
    if path is not None:
        write_module(text, os.fspath(path), spec.name)
    return text


def _with_source_classes(spec: Spec) -> Spec:
    """The spec with the class names its source defines (image folders' sub-folders), as a build
    records them; as it is when the source can't be read here."""
    if all(getattr(feature, "has_classes", True) for feature in spec.features.values()):
        return spec
    try:
        return with_source_classes(spec, source_builders(spec))
    except TFRecordBuilderError:
        return spec


def write_module(text: str, path: str, name: str) -> str:
    """Writes module text to `path`, or into it as NAME_input.py when `path` is a folder."""
    problem = place_problem(path)
    if problem:
        raise UsageError(problem)
    if is_url(path):  # an object store: the object appears whole once written
        if path.endswith("/") or fs.isdir(path):
            path = fs.join(path.rstrip("/"), module_name(name))
        with fs.open_file(path, "wb") as file:
            file.write(text.encode("utf-8"))
        return path
    if os.path.isdir(path) or path.endswith(os.sep):
        path = os.path.join(path, module_name(name))
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    aside = os.path.join(folder, f".{os.path.basename(path)}.tmp-{os.getpid()}")
    with open(aside, "w", encoding="utf-8") as file:
        file.write(text)
    os.replace(aside, path)
    return path
