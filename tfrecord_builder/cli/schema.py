"""`schema`: prints the JSON Schema of spec files (for editors)."""
from __future__ import annotations

import argparse
import json

from ..spec.schema import spec_schema

NAME = "schema"
HELP = "print the JSON Schema of spec files, for editor completion and checking"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    print(json.dumps(spec_schema(), indent=2))
    return 0
