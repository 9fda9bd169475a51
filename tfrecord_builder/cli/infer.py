"""`infer DATA [-o SPEC]`: writes a commented spec for raw data (to stdout, or to -o SPEC)."""
from __future__ import annotations

import argparse
import os
import sys

from ..errors import UsageError
from ..tools.infer import infer, spec_path, write_spec

NAME = "infer"
HELP = ("write a commented spec for a CSV, JSONL or Parquet file, a folder of images, or a COCO JSON, VOC or "
        "YOLO folder (to stdout, or to -o FILE)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("data", metavar="DATA", help="a CSV, JSONL or Parquet file, or a folder of images")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write the spec here (a file, or a folder for NAME.yaml); its paths are relative to it")
    parser.add_argument("--overwrite", action="store_true", help="replace the -o file if it exists")
    parser.add_argument("--group-by", metavar="COLUMN",
                        help="a long table (one row per step): the column naming each row's sequence")
    parser.add_argument("--order-by", metavar="COLUMN", help="a long table: the column ordering a sequence's steps")
    parser.add_argument("--sequence", action=argparse.BooleanOptionalAction, default=None,
                        help="read a JSONL file's list fields as a record's steps (format: sequence_example), "
                             "or never (--no-sequence); default: when two or more list fields have one "
                             "length in each record")


def run(args: argparse.Namespace) -> int:
    target = spec_path(args.data, args.output) if args.output else None
    if target is not None and os.path.exists(target) and not args.overwrite:
        raise UsageError(f"{target} already exists; pass --overwrite to replace it")  # before reading any data
    text = infer(args.data, target, group_by=args.group_by, order_by=args.order_by, sequence=args.sequence)
    if target is None:
        sys.stdout.write(text)
    else:
        print(f"wrote {write_spec(text, target, overwrite=args.overwrite)}")
    return 0
