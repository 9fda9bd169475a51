"""`verify PATH`: re-reads every shard and checks it against dataset_info.json and the spec."""
from __future__ import annotations

import argparse
import os

from ..errors import DatasetError, UsageError
from ..write.naming import INFO_FILE
from ..tools.verify import verify
from .format import positive_int

NAME = "verify"
HELP = "re-read every shard: framing, CRCs, sha256, every record against the spec, counts"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="a dataset folder (NAME/VERSION)")
    parser.add_argument("--workers", type=positive_int, default=None, metavar="N",
                        help="processes that check shards (default: the machine's cores)")


def run(args: argparse.Namespace) -> int:
    if os.path.isfile(args.path) and os.path.basename(args.path) != INFO_FILE:
        raise UsageError(f"{args.path}: verify takes a dataset folder (NAME/VERSION); "
                         "`tfrecord-builder inspect` reads a single TFRecord file")
    result = verify(args.path, workers=args.workers)
    if result.ok:
        print(f"{result.info.path}: ok: {result.num_shards} shards, {result.num_records:,} records, "
              "checksums and every record match the spec")
        return 0
    for fault in result.faults[1:]:
        print(f"fault: {fault}")
    raise DatasetError(f"{result.info.path}: {len(result.faults)} faults; first: {result.faults[0]}")
