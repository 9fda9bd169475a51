"""`tfrecord-builder COMMAND ...`: parses arguments, runs a command, turns errors into one line.

Exit status: 0 done, 1 bad data (or a broken dataset, or a full disk), 2 bad spec or usage. A traceback is
shown only with --debug.
"""
from __future__ import annotations

import argparse
import os
import sys
import traceback
from typing import NoReturn, Sequence

from .. import pandas_probe
from ..errors import TFRecordBuilderError
from ..version import __version__
from . import build, diff, generate, infer, inspect, report, schema, validate, verify

COMMANDS = [build, generate, validate, inspect, verify, infer, report, diff, schema]


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (`error: ...`) and exit status 2."""

    def error(self, message: str) -> "NoReturn":
        self.exit(2, f"error: {self.prog}: {message} (see `{self.prog} --help`)\n")


def parser() -> argparse.ArgumentParser:
    top = _Parser(
        prog="tfrecord-builder",
        description="Builds sharded TFRecord datasets from a YAML spec and generates their tf.data input_fn.",
    )
    top.add_argument("--debug", action="store_true", help="show a traceback on errors")
    top.add_argument("--version", action="version", version=f"tfrecord-builder {__version__}")
    # --debug is accepted after the command too; SUPPRESS keeps the command's parser from
    # resetting a --debug given before it
    after = argparse.ArgumentParser(add_help=False)
    after.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show a traceback on errors")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
    for command in COMMANDS:
        sub = commands.add_parser(command.NAME, help=command.HELP, description=command.HELP, parents=[after])
        command.add_arguments(sub)
        sub.set_defaults(run=command.run)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status."""
    args = parser().parse_args(_joined(list(sys.argv[1:] if argv is None else argv)))
    pandas_probe.look_without_pandas()
    try:
        return args.run(args) or 0
    except TFRecordBuilderError as error:
        return _report(args, f"error: {error}", error.exit_code)
    except KeyboardInterrupt:
        return _report(args, "error: interrupted", 130)
    except BrokenPipeError:  # the reader of our output went away (`... | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so exit's flush can't fail again
        return 1
    except Exception as error:  # a bug of ours or of a custom builder: still one line unless --debug
        return _report(args, f"error: unexpected {type(error).__name__}: {error} (run with --debug for the traceback)", 1)


# options whose value is a list of other options: argparse would take `--pipeline-options "--runner=X"`
# for two options, so the value is joined to its name first
_OPTION_VALUED = ("--pipeline-options",)


def _joined(argv: list[str]) -> list[str]:
    joined: list[str] = []
    position = 0
    while position < len(argv):
        given = argv[position]
        if given in _OPTION_VALUED and position + 1 < len(argv):
            joined.append(f"{given}={argv[position + 1]}")
            position += 2
            continue
        joined.append(given)
        position += 1
    return joined


def _report(args: argparse.Namespace, line: str, status: int) -> int:
    if args.debug:
        traceback.print_exc()
    else:
        print(line, file=sys.stderr)
    return status
