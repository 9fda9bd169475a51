"""`source.decimals`: how an Arrow decimal column is read (`float`: the nearest float64, `text`:
its digits), where a source's rows may hold decimals (a SQL query's, a Spark table's). Without
the rule a decimal is refused: no feature's numbers hold one exactly."""
from __future__ import annotations

from typing import Any, Callable

import pyarrow as pa
import pyarrow.compute as pc

PROBLEM = ("a decimal has no exact mapping to a feature's numbers; give `source.decimals: float` (to the nearest "
           "float64) or `text` (its digits)")


def is_decimal(kind: Any) -> bool:
    """A decimal, or PostgreSQL's numeric (which its driver gives as opaque text)."""
    return bool(pa.types.is_decimal(kind)) or (isinstance(kind, pa.OpaqueType) and kind.type_name == "numeric")


def holds(kind: Any, test: Callable[[Any], bool]) -> bool:
    """Whether the type, or a type within it (a list's items, a struct's fields), passes `test`."""
    if pa.types.is_dictionary(kind):
        return holds(kind.value_type, test)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return holds(kind.value_type, test)
    if pa.types.is_struct(kind):
        return any(holds(field.type, test) for field in kind)
    return bool(test(kind))


def without_decimals(kind: Any, into: Any) -> Any:
    """The type with each decimal in it replaced by `into`."""
    if pa.types.is_decimal(kind):
        return into
    if pa.types.is_list(kind):
        return pa.list_(without_decimals(kind.value_type, into))
    if pa.types.is_large_list(kind):
        return pa.large_list(without_decimals(kind.value_type, into))
    if pa.types.is_fixed_size_list(kind):
        return pa.list_(without_decimals(kind.value_type, into), kind.list_size)
    if pa.types.is_struct(kind):
        return pa.struct([field.with_type(without_decimals(field.type, into)) for field in kind])
    return kind


def as_ruled(array: Any, rule: str | None) -> Any:
    """The column with its decimals turned as `rule` says (float or text); as it is without one."""
    if rule is not None and holds(array.type, is_decimal):
        return pc.cast(array, without_decimals(array.type, pa.float64() if rule == "float" else pa.string()))
    return array
