"""What a feature's `encode` is told besides its values: one `EncodeContext`.

It names the batch's rows in errors (`origin`), says where relative paths in the values point
from (`base_dir`) and how the source writes values (`language`), and carries the collector of
notices that the caller owns (`notices`, features/notices.py): build/encode_batch.py makes one a
batch and returns its counts with the batch's records, so nothing in encoding is global.

A feature type written against the earlier signature, `encode(self, values, origin,
base_dir=None, language="python")`, keeps working. `Feature` looks at each class's own `encode`
once, when the class is made (`taking_context`): one of the earlier form is called with the
context's parts, and every `encode` also takes a call of the earlier form, such as that type's
`super().encode(values, origin, base_dir, language)` (the notices of which still reach the
caller's collector where the origin it passes on is the one it was given).
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Mapping

from .notices import Notices
from .shown import Language

# Describes row i of a batch for error messages, e.g. "wine.csv, line 17".
Origin = Callable[[int], str]


@dataclass(frozen=True)
class EncodeContext:
    """What `Feature.encode(values, context)` is told about its batch of values.

    >>> context = tb.EncodeContext(lambda row: f"wine.csv, line {row + 2}")
    >>> cultivar = tb.load_spec("specs/wine.yaml").features["cultivar"]
    >>> cultivar.encode(["barbera", "barolo"], context)["cultivar"].values.tolist()
    [2, 0]
    >>> cultivar.encode(["nebbiolo"], context)
    Traceback (most recent call last):
    ...
    tfrecord_builder.errors.DataError: wine.csv, line 2: feature `cultivar`: ...
    """

    origin: Origin  # names row i of the batch in errors: `self.fail(context.origin, i, problem)`
    base_dir: str | None = None  # where relative file paths in the values point from (a manifest's folder)
    # how the source writes values (`features/shown.py`): messages name values that way, and a
    # string may spell a list unless the source is JSON (or Arrow)
    language: Language = "python"
    # what encoding did that the spec didn't ask for in so many words, counted here and said once
    # for the build: `context.notices.note("feature `x`: {count} value{s} ...")`
    notices: Notices = field(default_factory=Notices)
    # the upright (height, width) of image files the source measured already, by path (`Batch.image_sizes`)
    image_sizes: Mapping[str, tuple[int, int]] | None = None

    def named(self, origin: Origin) -> EncodeContext:
        """The same context, naming rows by `origin` (the rows of groups, the steps of sequences)."""
        return dataclasses.replace(self, origin=origin)


class _CarriedOrigin:
    """The origin an `encode` of the earlier signature is given: it names rows as its context's
    does, and carries that context, so a call of the earlier form made with it (`super().encode(
    values, origin, ...)`) notes into the same collector."""

    __slots__ = ("context",)

    def __init__(self, context: EncodeContext):
        self.context = context

    def __call__(self, row: int) -> str:
        return self.context.origin(row)


_EARLIER = ("origin", "base_dir", "language")  # the earlier signature's parameters after `values`


def context_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> EncodeContext:
    """The context of a call of `encode` after its values: `(context)`, or the earlier form's
    `(origin, base_dir=None, language="python")`."""
    if len(args) == 1 and not kwargs and isinstance(args[0], EncodeContext):
        return args[0]
    if not args and set(kwargs) == {"context"} and isinstance(kwargs["context"], EncodeContext):
        return kwargs["context"]
    if len(args) > len(_EARLIER) or set(kwargs) - set(_EARLIER[len(args):]):
        raise TypeError(f"encode() takes (values, context), or (values, origin, base_dir=None, language=\"python\"); "
                        f"received {len(args) + 1} positional arguments and {sorted(kwargs) or 'no'} keywords")
    given = dict(zip(_EARLIER, args), **kwargs)
    if "origin" not in given:
        raise TypeError("encode() missing its context (or, in the earlier form, its origin)")
    origin, base_dir, language = given["origin"], given.get("base_dir"), given.get("language", "python")
    if isinstance(origin, _CarriedOrigin):  # an earlier-form encode passing on what it was given
        return dataclasses.replace(origin.context, base_dir=base_dir, language=language)
    return EncodeContext(origin, base_dir, language)


def earlier_signature(encode: Callable[..., Any]) -> int | None:
    """How many of (origin, base_dir, language) an `encode` of the earlier form takes by position
    (3 for `*args`); None if it is of the current form, `encode(self, values, context)`."""
    try:
        parameters = list(inspect.signature(encode).parameters.values())[2:]  # (after self and values)
    except (TypeError, ValueError):  # not a plain function: taken as it is
        return None
    if any(parameter.kind is parameter.VAR_POSITIONAL for parameter in parameters):
        return None  # passes on whatever it is given
    positional = [parameter for parameter in parameters
                  if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)]
    if len(positional) > 1 or (positional and positional[0].name == "origin"):
        return min(len(positional), len(_EARLIER))
    return None


def taking_context(encode: Callable[..., Any]) -> Callable[..., Any]:
    """A class's own `encode` as `Feature` calls it, `encode(values, context)`, that takes a call
    of the earlier form too; one of the earlier signature is called with the context's parts."""
    if getattr(encode, "takes_context", False):
        return encode  # (adapted already: a class that assigns another's encode)
    earlier = earlier_signature(encode)

    @functools.wraps(encode)
    def adapted(self: Any, values: Any, *args: Any, **kwargs: Any) -> Any:
        context = context_of(args, kwargs)
        if earlier is None:
            return encode(self, values, context)
        parts = (_CarriedOrigin(context), context.base_dir, context.language)
        return encode(self, values, *parts[:earlier])

    adapted.takes_context = True  # type: ignore[attr-defined]
    adapted.earlier_signature = earlier is not None  # type: ignore[attr-defined]
    return adapted
