"""`tfrecord-builder COMMAND ...`: parses arguments, runs a command, turns errors into one line.

Exit status: 0 done, 1 bad data (or a broken dataset), 2 bad spec or usage. A traceback is
shown only with --debug.
"""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

from ..errors import TFRecordBuilderError
from ..version import __version__
from . import build, generate, inspect, schema, validate

COMMANDS = [build, generate, validate, inspect, schema]


def parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", help="show a traceback on errors")
    top = argparse.ArgumentParser(
        prog="tfrecord-builder", parents=[common],
        description="Builds sharded TFRecord datasets from a YAML spec and generates their tf.data input_fn.",
    )
    top.add_argument("--version", action="version", version=f"tfrecord-builder {__version__}")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        sub = commands.add_parser(command.NAME, help=command.HELP, description=command.HELP, parents=[common])
        command.add_arguments(sub)
        sub.set_defaults(run=command.run)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status."""
    args = parser().parse_args(argv)
    try:
        return args.run(args) or 0
    except TFRecordBuilderError as error:
        if args.debug:
            raise
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # a bug of ours or of a custom builder: still one line unless --debug
        if args.debug:
            raise
        print(f"error: unexpected {type(error).__name__}: {error} (run with --debug for the traceback)",
              file=sys.stderr)
        return 1
