"""One table of every benchmark's targets, from the JSON reports the scripts wrote (`make bench`).

Run by hand after the scripts (`make bench` runs it last):

    .venv/bin/python bench/summary.py [--out DIR] [--markdown FILE]

Reads `DIR/*.json` (default bench/out), takes each report's `targets` (harness.Target: the
case, its ratio, the bar, whether it was met, how the ratio is taken), and prints them as one
Markdown table, script by script, with the machine and the time each report was written. A
script that wasn't run is named as missing. Exits 1 if a target was missed, 0 otherwise: the
figures are from one run on a noisy machine, so a miss says "look", not "broken".
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from harness import Target, machine_line, markdown_table  # noqa: E402

# the scripts whose reports carry targets, in the order `make bench` runs them
SCRIPTS = ("tabular", "images", "sequences", "bad_rows", "workers", "coco", "audio", "video", "engines")


def load_targets(path: str) -> tuple[list[Target], dict[str, Any]]:
    """A report's targets and the report itself."""
    with open(path, encoding="utf-8") as file:
        document = json.load(file)
    fields = ("case", "ratio", "bar", "at_least", "note")
    return [Target(**{name: target[name] for name in fields}) for target in document.get("targets", [])], document


def summary(out: str) -> tuple[str, int]:
    """The Markdown summary of the reports in `out`, and how many targets were missed."""
    rows, missing, machines, missed = [], [], [], 0
    for script in SCRIPTS:
        path = os.path.join(out, f"{script}.json")
        if not os.path.exists(path):
            missing.append(script)
            continue
        targets, document = load_targets(path)
        written = time.strftime("%Y-%m-%d %H:%M", time.localtime(os.path.getmtime(path)))
        machines.append(f"`{script}.py` ({written}): {machine_line(document['machine'])}")
        for target in targets:
            missed += not target.met
            rows.append([f"`{script}.py`", target.case, f"{target.ratio:.2f}x", target.wanted,
                         "yes" if target.met else "**no**", target.note])
    lines = [
        "## Benchmark targets",
        "",
        markdown_table(["script", "target", "ratio", "wanted", "met", "ratio of"],
                       ["---", "---", "---:", "---:", "---", "---"], rows),
        "",
        *machines,
    ]
    if missing:
        lines += ["", "Not run (no report in " + out + "): " + ", ".join(f"`{name}.py`" for name in missing)]
    lines += ["", f"{len(rows) - missed} of {len(rows)} targets met."]
    return "\n".join(lines), missed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(HERE, "out"), help="where the reports are (default bench/out)")
    parser.add_argument("--markdown", help="also write the table to this file")
    args = parser.parse_args(argv)
    text, missed = summary(args.out)
    print(text)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as file:
            file.write(text + "\n")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
