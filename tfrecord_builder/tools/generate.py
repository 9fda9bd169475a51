"""The generated input module of a spec, with what its source defines (class names an image
folder gives): rendered (`codegen/render.py`, pure) and written where asked (`codegen/module_file.py`)."""
from __future__ import annotations

import os

from ..builders.sources import source_builders, with_source_classes, with_source_columns
from ..codegen.module_file import write_module
from ..codegen.render import render_module
from ..errors import TFRecordBuilderError
from ..features.gathered import is_pattern
from ..spec.load import load_spec
from ..spec.model import Spec
from ..write.naming import dataset_dir


def generate_module(spec: Spec | str | os.PathLike, path: str | os.PathLike | None = None,
                    data_dir: str | os.PathLike | None = None) -> str:
    """Renders the input module of `spec`, writes it to `path` (a file or folder) if given, returns it.

    >>> text = generate_module("specs/wine.yaml", "train/")   # writes train/wine_input.py

    `data_dir` is the dataset folder the module reads by default (default: where the spec builds).
    """
    if not isinstance(spec, Spec):
        spec = load_spec(spec)
    spec = _with_source_classes(spec)
    if any(is_pattern(feature.columns) for feature in spec.features.values()):
        spec = with_source_columns(spec, source_builders(spec))  # the shape [n] needs the source's header
    folder = os.fspath(data_dir) if data_dir is not None else dataset_dir(
        spec.resolve(spec.output.dir), spec.name, spec.version)
    text = render_module(spec, folder)
    if path is not None:
        write_module(text, os.fspath(path), spec.name)
    return text


def _with_source_classes(spec: Spec) -> Spec:
    """The spec with the names its source defines (image folders' sub-folders as classes, a COCO
    category's keypoints), as a build records them; as it is when the source can't be read here."""
    if not any(feature.wants_source_names for feature in spec.features.values()):
        return spec
    try:
        return with_source_classes(spec, source_builders(spec))
    except TFRecordBuilderError:
        return spec
