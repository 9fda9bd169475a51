"""Renders the generated input module (`NAME_input.py`) from a spec.

Every value taken from the spec enters the text as a Python literal made by `repr` of a str,
int or tuple (never pasted raw), and feature names are identifiers by then, so no spec can put
code into the module.
"""
from __future__ import annotations

import os

from ..fs import is_url
from ..features import ClassLabelFeature, Feature
from ..spec.model import Spec
from ..version import __version__
from .helpers import helper_functions
from .template import (EXAMPLE_BATCHING, EXAMPLE_PARSING, SEQUENCE_BATCHING, SEQUENCE_CONSTANTS, SEQUENCE_PARSING,
                       TEMPLATE)



def render_module(spec: Spec, data_dir: str) -> str:
    """The module's source text; `data_dir` is recorded as its default dataset folder."""
    features = list(spec.features.values())
    class_names = {
        feature.name: tuple(feature.names) for feature in features
        if isinstance(feature, ClassLabelFeature) and feature.names is not None
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
        compression=repr(spec.output.reader_compression),
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
    length_feature = spec.length_source
    assert length_feature is not None  # a SequenceExample spec has sequence features
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
