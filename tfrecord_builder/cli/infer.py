"""`infer DATA [-o SPEC]`: writes a commented spec for raw data (to stdout, or to -o SPEC)."""
from __future__ import annotations

import argparse
import os
import sys

from ..errors import UsageError
from ..tools.infer import infer, spec_path, write_spec

NAME = "infer"
HELP = ("write a commented spec for a CSV, JSONL or Parquet file, a folder of images, a COCO JSON, VOC or "
        "YOLO folder, a Delta table, a DuckDB or SQLite table or query, or an Iceberg table (to stdout, or to -o FILE)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("data", metavar="DATA", nargs="?",
                        help="a CSV, JSONL or Parquet file, a folder of images, a Delta table's folder, a DuckDB or "
                             "SQLite file or a connection URL (duckdb:///x.duckdb, sqlite:///x.db); left out with "
                             "--query (DuckDB over files) or --catalog")
    parser.add_argument("--table", metavar="NAME",
                        help="the database's table to read (one table: that one), or with --catalog the Iceberg "
                             "table NAMESPACE.NAME")
    parser.add_argument("--query", metavar="SQL",
                        help="read a query's rows: of DATA's database, or without DATA DuckDB over the files it "
                             "names (FROM 'rows.parquet', from the spec's folder)")
    parser.add_argument("--catalog", metavar="URI_OR_NAME",
                        help="an Iceberg catalog: a SQL catalog's URI (sqlite:///catalog.db) or a catalog's name in "
                             "~/.pyiceberg.yaml; with --table NAMESPACE.NAME")
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
    named = args.data or args.table or "query"
    target = spec_path(named.rpartition(".")[2] if args.data is None else named, args.output) if args.output else None
    if target is not None and os.path.exists(target) and not args.overwrite:
        raise UsageError(f"{target} already exists; pass --overwrite to replace it")  # before reading any data
    text = infer(args.data, target, group_by=args.group_by, order_by=args.order_by, sequence=args.sequence,
                 table=args.table, query=args.query, catalog=args.catalog)
    if target is None:
        sys.stdout.write(text)
    else:
        print(f"wrote {write_spec(text, target, overwrite=args.overwrite)}")
    return 0
