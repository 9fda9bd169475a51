"""`generate SPEC [-o FILE]`: writes only the generated input module."""
from __future__ import annotations

import argparse
import sys

from ..codegen.module_file import write_module
from ..tools.generate import generate_module
from ..spec.load import load_spec

NAME = "generate"
HELP = "write the generated input module of a spec (to stdout, or to -o FILE)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", metavar="SPEC", help="the YAML spec file")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the module here (a file or a folder)")
    parser.add_argument("--data-dir", metavar="DIR", help="the dataset folder the module reads by default")


def run(args: argparse.Namespace) -> int:
    spec = load_spec(args.spec)
    text = generate_module(spec, data_dir=args.data_dir)
    if args.output:
        print(f"wrote {write_module(text, args.output, spec.name)}")
    else:
        sys.stdout.write(text)
    return 0
