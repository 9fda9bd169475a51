"""`validate SPEC`: checks the spec (and that its source files exist) without building."""
from __future__ import annotations

import argparse

from ..build import check_sources
from ..spec.load import load_spec

NAME = "validate"
HELP = "check a spec; errors name the file, line and key"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", metavar="SPEC", help="the YAML spec file")


def run(args: argparse.Namespace) -> int:
    spec = load_spec(args.spec)
    check_sources(spec)
    splits = ", ".join(f"{name} {value:g}" if isinstance(value, float) else name for name, value in spec.splits.items())
    print(f"{args.spec}: ok: {spec.name} {spec.version}, {len(spec.features)} features, splits: {splits}")
    return 0
