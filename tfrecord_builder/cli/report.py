"""`report PATH [-o FILE] [--png DIR] [--sample N]`: a built dataset as one self-contained HTML page."""
from __future__ import annotations

import argparse

from .. import fs
from ..read.report import DEFAULT_SAMPLE, open_dataset, render

NAME = "report"
HELP = ("write a self-contained HTML page of a built dataset: statistics, histograms, class balance, "
        "images per class, shards, spec")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="a dataset folder (NAME/VERSION)")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="the page to write (default: NAME-VERSION-report.html in the working directory)")
    parser.add_argument("--png", metavar="DIR", help="also write every figure as a PNG file into DIR")
    parser.add_argument("--sample", type=_sample, default=DEFAULT_SAMPLE, metavar="N",
                        help=f"records read per split for the distributions (default {DEFAULT_SAMPLE:,}; "
                             "`all` reads every record)")


def run(args: argparse.Namespace) -> int:
    info = open_dataset(args.path)
    output = args.output or f"{info.name}-{info.version}-report.html"
    rendered = render(info, png=args.png, sample=args.sample)
    path = rendered.save(output)
    print(f"{info.name} {info.version} -> {_shown(path)}")
    if args.png:
        print(f"figures: {len(rendered.plots)} PNG files in {_shown(args.png)}")
    return 0


def _shown(path: str) -> str:
    return fs.absolute(path)


def _sample(text: str) -> int | None:
    """An argparse type: a positive number of records, or `all` (None)."""
    if text.strip().lower() == "all":
        return None
    try:
        value = int(text.replace(",", "").replace("_", ""))
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number of records or `all`, received {text!r}")
    return value
