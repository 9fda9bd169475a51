"""The JSON Schema of spec files, derived from the spec's model (`tfrecord-builder schema`)."""
from __future__ import annotations

from typing import Any

from ..features import Feature
from .fields import json_schema
from .model import SplitSource, Spec

SCHEMA_ID = "https://github.com/tfrecord-builder/tfrecord-builder/spec.schema.json"


def spec_schema() -> dict[str, Any]:
    """The schema; `schema/spec.schema.json` in the repository is this, committed."""
    schema: dict[str, Any] = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "tfrecord-builder spec"}
    schema.update(json_schema(Spec))
    schema["$defs"] = {"feature": json_schema(Feature), "split_source": json_schema(SplitSource)}
    return schema
