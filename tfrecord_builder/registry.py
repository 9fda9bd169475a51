"""Finds a builder class by the name a spec gives: a short name, an entry point or `module:Class`.

Built-in builders are imported only when used, so a CSV build never imports pyarrow.
Installed packages add builders through the `tfrecord_builder.builders` entry-point group.
A `module:Class` name imports that module (from the spec's folder or the working directory),
a `path/to/file.py:Class` name loads that file (relative to the spec): naming a custom builder
in a spec runs its code.
"""
from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.abc
import importlib.metadata
import importlib.util
import os
import sys
from types import ModuleType
from typing import Any

from .errors import SpecError

BUILTIN = {
    "csv": "tfrecord_builder.builders.tabular:CsvBuilder",
    "jsonl": "tfrecord_builder.builders.tabular:JsonlBuilder",
    "parquet": "tfrecord_builder.builders.parquet:ParquetBuilder",
    "image_folder": "tfrecord_builder.builders.image_folder:ImageFolderBuilder",
    "image_manifest": "tfrecord_builder.builders.tabular:ManifestBuilder",
    "sequence_jsonl": "tfrecord_builder.builders.tabular:JsonlBuilder",
    "coco": "tfrecord_builder.builders.coco:CocoBuilder",
    "voc": "tfrecord_builder.builders.voc:VocBuilder",
    "yolo": "tfrecord_builder.builders.yolo:YoloBuilder",
    "labelme": "tfrecord_builder.builders.labelme:LabelmeBuilder",
    "segmentation": "tfrecord_builder.builders.segmentation:SegmentationBuilder",
    "conll": "tfrecord_builder.builders.conll:ConllBuilder",
    "delta": "tfrecord_builder.builders.delta:DeltaBuilder",
    "iceberg": "tfrecord_builder.builders.iceberg:IcebergBuilder",
    "sql": "tfrecord_builder.builders.sql:SqlBuilder",
    "dataframe": "tfrecord_builder.builders.frames:FrameBuilder",
    "spark_table": "tfrecord_builder.builders.spark_table:SparkTableBuilder",
}
ENTRY_POINT_GROUP = "tfrecord_builder.builders"


def builder_names() -> list[str]:
    """The built-in builders' names as a spec's documentation lists them: each class once, by its
    first name (`sequence_jsonl` is another name of `jsonl`'s class)."""
    first = {target: name for name, target in reversed(BUILTIN.items())}
    return [name for name, target in BUILTIN.items() if first[target] == name]


def builtin_class(name: str) -> type | None:
    """The class of the built-in builder `name` (its module imported), or None for any other name:
    what a spec asks of its builder when it is loaded (the `source:` keys it reads, whether its
    source defines classes). A custom builder's code is never run for that: it runs when a build
    makes the builder."""
    target = BUILTIN.get(name)
    return None if target is None else load_class(target, [], "source.builder")


def source_keys(name: str) -> frozenset[str]:
    """The `source:` keys besides `path` builder `name` reads (`images`, `names_file`): a built-in
    builder's `SOURCE_KEYS`; none for another (a custom builder takes `options:`)."""
    cls = builtin_class(name)
    return frozenset(getattr(cls, "SOURCE_KEYS", ())) if cls is not None else frozenset()


def check_source(name: str, source: Any, at: Any) -> None:
    """Built-in builder `name`'s own checks of the values of its `source:` keys (its
    `check_source`); none for another builder (a custom builder takes `options:`)."""
    cls = builtin_class(name)
    checked = getattr(cls, "check_source", None) if cls is not None else None
    if checked is not None:
        checked(source, at)


def defines_classes(name: str) -> bool:
    """Whether builder `name`'s source may define class names itself (a built-in builder's
    `DEFINES_CLASSES`; a custom builder may, through `class_names`)."""
    cls = builtin_class(name)
    return bool(getattr(cls, "DEFINES_CLASSES", True))


def available() -> dict[str, str]:
    """Every builder name a spec may use without `module:Class`, with its import path."""
    names = dict(BUILTIN)
    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        names.setdefault(entry.name, entry.value)
    return names


def check_name(name: str) -> str | None:
    """None if `name` names a builder (without importing it), else what is wrong."""
    if ":" in name:
        module, _, cls = name.rpartition(":")
        if module.endswith(".py") and cls.isidentifier():
            return None
        if module and cls and all(part.isidentifier() for part in module.split(".")) and cls.isidentifier():
            return None
        return ("expected module:Class (e.g. frames:FramesBuilder) or path/to/file.py:Class, "
                f"received {name!r}")
    if name in BUILTIN:
        return None
    names = available()  # entry points: reading the installed packages' metadata takes milliseconds
    if name in names:
        return None
    close = difflib.get_close_matches(name, names, n=1)
    hint = f" (did you mean `{close[0]}`?)" if close else ""
    return f"unknown builder {name!r}{hint}; expected one of: {', '.join(sorted(names))}, or module:Class"


def builder_class(name: str, search_dirs: list[str]) -> type:
    """Imports and returns the builder class for `name`.

    `module:Class` imports a module with `search_dirs` (the spec's folder, the working directory)
    on the import path; `path/to/file.py:Class` loads that file, relative to the first of them.
    """
    problem = check_name(name)
    if problem:
        raise SpecError(f"source.builder: {problem}")
    return load_class(BUILTIN.get(name) or available().get(name, name), search_dirs, "source.builder")


def is_reference(name: str) -> bool:
    """Whether `name` is `module:Class` or `path/to/file.py:Class` (checked as a builder name is)."""
    return ":" in name and check_name(name) is None


def load_class(target: str, search_dirs: list[str], key: str) -> type:
    """The class `module:Class` or `path/to/file.py:Class` names (relative to the first of
    `search_dirs`); a SpecError (its text after `key: `, if a key is given) if it can't be loaded."""
    at = f"{key}: " if key else ""
    module_name, _, class_name = target.rpartition(":")
    added = [folder for folder in search_dirs if folder not in sys.path]
    sys.path[:0] = added
    try:
        local = _local_file(module_name, search_dirs[:1], at)
        if local is not None:
            module = _load_file(local)  # always this file's current code, never a cached namesake
        else:
            module = importlib.import_module(module_name)
    except ImportError as error:
        raise SpecError(f"{at}can't import {module_name!r}: {error}") from None
    except SpecError:
        raise
    except Exception as error:  # the module's own code failed while it was imported
        raise SpecError(f"{at}importing {module_name!r} failed: "
                        f"{type(error).__name__}: {error}") from None
    finally:
        for folder in added:
            sys.path.remove(folder)
    cls: Any = getattr(module, class_name, None)
    if cls is None:
        raise SpecError(f"{at}module {module_name!r} has no class {class_name!r}")
    return cls


# builder files' source text by absolute path, as this process loaded them: a worker on another
# machine (a Beam job) is sent the text and loads the same code from here
SHIPPED: dict[str, str] = {}


def builder_file(name: str, search_dirs: list[str]) -> str | None:
    """The absolute path of the spec's own builder file (`x.py:C`, or `pkg.x:C` found as a file
    in the spec's folder or the working directory), or None (a built-in or installed builder)."""
    if check_name(name) is not None or ":" not in name:
        return None
    local = _local_file(name.rpartition(":")[0], search_dirs[:1])
    return os.path.abspath(local) if local is not None else None


def _exists(path: str) -> bool:
    return os.path.isfile(path) or os.path.abspath(path) in SHIPPED


def _local_file(module_name: str, folders: list[str], at: str = "source.builder: ") -> str | None:
    """The file a module name means inside the spec's folder: `x.py:C`, or `pkg.x:C` as pkg/x.py."""
    if module_name.endswith(".py"):
        path = os.path.join(folders[0], module_name) if folders else module_name
        if not _exists(path):
            raise SpecError(f"{at}{os.path.abspath(path)} not found")
        return path
    if module_name.split(".")[0] == __package__:
        return None  # our own built-ins, imported as the package's modules even beside a checkout of it
    for folder in folders:
        path = os.path.join(folder, *module_name.split(".")) + ".py"
        if _exists(path):
            return path
    return None


def _load_file(path: str) -> ModuleType:
    """Imports a Python file (or the text shipped for it) as a module of its own, through the
    import system and registered under a name made from its path, so its classes pickle and a
    worker that loads the same file gives them the same name."""
    path = os.path.abspath(path)
    digest = hashlib.sha256(path.encode()).hexdigest()[:8]
    name = f"tfrecord_builder_custom_{os.path.splitext(os.path.basename(path))[0]}_{digest}"
    if os.path.isfile(path):
        with open(path, "rb") as file:
            SHIPPED[path] = importlib.util.decode_source(file.read())  # what workers elsewhere run
    spec = importlib.util.spec_from_file_location(name, path, loader=_ShippedLoader(path))
    assert spec is not None and spec.loader is not None  # a loader is given
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before its code runs: a dataclass or a pickle looks its module up there
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


class _ShippedLoader(importlib.abc.ExecutionLoader):
    """Loads a builder file from its text in SHIPPED: the text this process read (always the
    file's current code, never a cached namesake or bytecode), or the text a worker was sent."""

    def __init__(self, path: str):
        self.path = path

    def get_filename(self, fullname: str) -> str:
        return self.path

    def get_source(self, fullname: str) -> str:
        return SHIPPED[self.path]  # text: compiled as read (tracebacks show its lines from here too)

    def is_package(self, fullname: str) -> bool:
        return False
