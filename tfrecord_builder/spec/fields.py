"""Typed dataclasses as the one model of the spec: conversion from YAML values and JSON Schema.

A spec section is a frozen dataclass whose type hints say what each key accepts. `convert` turns
loaded YAML into instances, with errors that name the file, the line, the key path and what was
expected (and a "did you mean" for unknown keys); `json_schema` turns the same classes into the
published JSON Schema, so the two can't disagree.

Field metadata: `doc` (a description for the schema), `convert` (a function `(value, at) ->
value` for a value the type hints can't express, with `schema` giving its JSON Schema).
A class may define `check(self, at)` for rules across fields, and a polymorphic base sets
`variants` (a dict name -> class, read at call time) and `discriminator` (the key that picks one).
"""
from __future__ import annotations

import dataclasses
import difflib
import functools
import types
import typing
from dataclasses import dataclass
from typing import Any, Literal, Union

from ..errors import SpecError
from .yaml_source import Document, Path, format_path


@dataclass(frozen=True)
class At:
    """Where a value sits: the document it came from and its key path inside it."""

    document: Document
    path: Path = ()

    def __truediv__(self, key: str | int) -> "At":
        return At(self.document, self.path + (key,))

    @property
    def line(self) -> int | None:
        return self.document.line(self.path)

    def error(self, message: str) -> SpecError:
        """A SpecError for this place: `file, line N: key.path: message`."""
        line = self.line
        place = f"{self.document.file}, line {line}" if line else self.document.file
        return SpecError(f"{place}: {format_path(self.path)}: {message}")


class Section:
    """A spec section's dataclass (frozen). The loader converts its keys, then asks it for its
    normalised form (a new instance: values read from files, shorthand spelled out) and checks
    that; both raise SpecError at `at`."""

    def normalised(self, at: At) -> Any:
        """This section as it is kept: by default itself; else a `dataclasses.replace` of it."""
        return self

    def check(self, at: At) -> None:
        """Rules across this section's keys."""


def describe(value: Any) -> str:
    """A short description of a received value for error messages."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def meta(doc: str, default: Any = dataclasses.MISSING, **extra: Any) -> Any:
    """A dataclass field a spec may set: its description (for the JSON Schema and error messages)
    and its default (and optionally a converter). `tb.spec_field` declares a custom feature
    type's own keys.

    >>> @dataclasses.dataclass(frozen=True, kw_only=True)
    ... class Percent(tb.TensorFeature):
    ...     dtype: str = tb.spec_field("always float32", "float32")
    ...     decimals: int = tb.spec_field("digits kept after the point", 1)
    """
    metadata = {"doc": doc, **extra}
    if isinstance(default, (list, dict)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


@functools.lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    """A class's type hints, evaluated once (a wide spec converts thousands of features)."""
    return typing.get_type_hints(cls)


def _is_optional(hint: Any) -> tuple[bool, Any]:
    if typing.get_origin(hint) in (Union, types.UnionType):
        args = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        if len(args) < len(typing.get_args(hint)):
            return True, args[0] if len(args) == 1 else Union[tuple(args)]
    return False, hint


def convert(hint: Any, value: Any, at: At) -> Any:
    """Converts a loaded YAML `value` to the type `hint`, raising SpecError at `at`."""
    optional, hint = _is_optional(hint)
    if value is None:
        if optional or hint is Any:
            return None
        raise at.error(f"expected {expected(hint)}, received nothing (null)")
    if hint is Any:
        return value
    if dataclasses.is_dataclass(hint):
        return _convert_dataclass(hint, value, at)
    origin = typing.get_origin(hint)
    if origin is Literal:
        choices = typing.get_args(hint)
        if value in choices and type(value) is type(choices[0]):
            return value
        raise at.error(f"expected {expected(hint)}, received {describe(value)}")
    if origin is list:
        if not isinstance(value, list):
            raise at.error(f"expected {expected(hint)}, received {describe(value)}")
        (item,) = typing.get_args(hint)
        return [convert(item, element, at / index) for index, element in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise at.error(f"expected {expected(hint)}, received {describe(value)}")
        _, item = typing.get_args(hint)
        return {key: convert(item, element, at / key) for key, element in value.items()}
    if hint is bool:
        if isinstance(value, bool):
            return value
    elif hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif hint is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif hint is str:
        if isinstance(value, str):
            return value
    elif origin in (Union, types.UnionType):
        for option in typing.get_args(hint):
            try:
                return convert(option, value, at)
            except SpecError:
                continue
    raise at.error(f"expected {expected(hint)}, received {describe(value)}")


def _convert_dataclass(cls: type, value: Any, at: At) -> Any:
    if "variants" in cls.__dict__:
        return _convert_variant(cls, cls.variants(), value, at)
    if not isinstance(value, dict):
        raise at.error(f"expected a mapping ({expected(cls)}), received {describe(value)}")
    keys = {_key(f): f for f in spec_fields(cls)}
    for key in value:
        if key not in keys:
            raise (at / key).error(unknown_key_message(key, keys))
    hints = _hints(cls)
    kwargs = {}
    for key, spec_field in keys.items():
        if key in value:
            custom = spec_field.metadata.get("convert")
            raw = value[key]
            kwargs[spec_field.name] = (
                custom(raw, at / key) if custom else convert(hints[spec_field.name], raw, at / key)
            )
        elif spec_field.default is dataclasses.MISSING and spec_field.default_factory is dataclasses.MISSING:
            raise at.error(f"missing required key `{key}` ({spec_field.metadata.get('doc', '')})")
    instance = cls(**kwargs)
    if isinstance(instance, Section):
        instance = instance.normalised(at)
        instance.check(at)
    return instance


def _convert_variant(base: type, variants: dict[str, type], value: Any, at: At) -> Any:
    if not isinstance(value, dict):
        raise at.error(f"expected a mapping, received {describe(value)}")
    key = base.discriminator
    name = value.get(key, base.default_variant)
    found = base.variant(name, at) if isinstance(name, str) else None  # e.g. one a plug-in declares
    if found is not None:
        variants = {**variants, name: found}
    if name not in variants:
        choices = ", ".join(sorted(variants))
        hint = difflib.get_close_matches(str(name), variants, n=1)
        suggestion = f" (did you mean `{hint[0]}`?)" if hint else ""
        raise (at / key).error(f"unknown {key} {describe(name)}{suggestion}; expected one of: {choices}")
    fields = {k: v for k, v in value.items() if k != key}
    return _convert_dataclass(variants[name], fields, at)


def spec_fields(cls: type) -> list[dataclasses.Field]:
    """The fields of `cls` that a spec file may set (not the ones filled in by the loader)."""
    return [f for f in dataclasses.fields(cls) if f.init and not f.metadata.get("internal")]


def _key(spec_field: dataclasses.Field) -> str:
    return spec_field.metadata.get("key", spec_field.name)


def unknown_key_message(key: str, known: typing.Iterable[str]) -> str:
    """`unknown key ...` with a "did you mean" suggestion and the accepted keys."""
    known = sorted(known)
    close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
    suggestion = f" (did you mean `{close[0]}`?)" if close else ""
    return f"unknown key `{key}`{suggestion}; expected one of: {', '.join(known)}"


def expected(hint: Any) -> str:
    """Plain words for what a type hint accepts."""
    optional, hint = _is_optional(hint)
    suffix = " or null" if optional else ""
    origin = typing.get_origin(hint)
    if origin is Literal:
        text = "one of " + ", ".join(str(choice) for choice in typing.get_args(hint))
    elif origin is list:
        text = f"a list of {expected(typing.get_args(hint)[0])}"
    elif origin is dict:
        text = "a mapping"
    elif origin in (Union, types.UnionType):
        text = " or ".join(expected(option) for option in typing.get_args(hint))
    elif dataclasses.is_dataclass(hint):
        text = "a mapping"
    else:
        text = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}.get(
            hint, str(hint)
        )
    return text + suffix


def json_schema(hint: Any) -> dict[str, Any]:
    """The JSON Schema of a type hint (dataclasses become closed objects with descriptions)."""
    optional, hint = _is_optional(hint)
    schema = _schema(hint)
    return {"anyOf": [schema, {"type": "null"}]} if optional else schema


def _schema(hint: Any) -> dict[str, Any]:
    origin = typing.get_origin(hint)
    if hint is Any:
        return {}
    if dataclasses.is_dataclass(hint):
        if "variants" in hint.__dict__:
            variants = sorted(hint.variants().items())
            # a class of one's own (`module:Class`, `file.py:Class`) declares its own keys
            own = {"type": "object", "required": [hint.discriminator],
                   "properties": {hint.discriminator: {"type": "string", "pattern": ":",
                                                       "description": "a type of one's own: module:Class or "
                                                                      "path/to/file.py:Class"}}}
            return {"oneOf": [_variant_schema(hint, name, cls) for name, cls in variants
                              if ":" not in name] + [own]}
        return _object_schema(hint)
    if origin is Literal:
        return {"enum": list(typing.get_args(hint))}
    if origin is list:
        return {"type": "array", "items": json_schema(typing.get_args(hint)[0])}
    if origin is dict:
        return {"type": "object", "additionalProperties": json_schema(typing.get_args(hint)[1])}
    if origin in (Union, types.UnionType):
        return {"anyOf": [json_schema(option) for option in typing.get_args(hint)]}
    return {"type": {bool: "boolean", int: "integer", float: "number", str: "string"}[hint]}


def _object_schema(cls: type) -> dict[str, Any]:
    hints = _hints(cls)
    properties: dict[str, Any] = {}
    required = []
    for spec_field in spec_fields(cls):
        schema = dict(spec_field.metadata.get("schema") or json_schema(hints[spec_field.name]))
        if spec_field.metadata.get("doc"):
            schema["description"] = spec_field.metadata["doc"]
        if spec_field.default not in (dataclasses.MISSING, None) and not dataclasses.is_dataclass(spec_field.default):
            schema["default"] = spec_field.default
        properties[_key(spec_field)] = schema
        if spec_field.default_factory is not dataclasses.MISSING:
            schema["default"] = spec_field.default_factory()
        if spec_field.default is dataclasses.MISSING and spec_field.default_factory is dataclasses.MISSING:
            required.append(_key(spec_field))
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if cls.__doc__:
        schema["description"] = cls.__doc__.strip().splitlines()[0]
    if required:
        schema["required"] = required
    return schema


def _variant_schema(base: type, name: str, cls: type) -> dict[str, Any]:
    schema = _object_schema(cls)
    schema["properties"][base.discriminator] = {"const": name, "description": f"the feature type: {name}"}
    if name != base.default_variant:
        schema.setdefault("required", []).append(base.discriminator)
    return schema
