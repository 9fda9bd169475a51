"""`validate SPEC`: checks the spec, that its source files exist, that its builder loads (a
custom one is imported and created, and the splits it provides are checked), that a CSV or
Parquet header has every column the spec reads and that an annotation source offers every field
it reads, without building or reading the rows."""
from __future__ import annotations

import argparse

from ..builders.sources import check_columns, check_fields, source_builders, with_source_classes, with_source_columns
from ..spec.load import load_spec

NAME = "validate"
HELP = "check a spec; errors name the file, line and key"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", metavar="SPEC", help="the YAML spec file")


def run(args: argparse.Namespace) -> int:
    spec = load_spec(args.spec)
    builders = source_builders(spec)
    check_fields(spec, builders)
    with_source_classes(spec, builders)
    check_columns(with_source_columns(spec, builders), builders)
    splits = ", ".join(f"{name} {value:g}" if isinstance(value, float) else name for name, value in spec.splits.items())
    print(f"{args.spec}: ok: {spec.name} {spec.version}, {len(spec.features)} features, splits: {splits}")
    return 0
