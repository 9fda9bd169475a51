"""One table of every benchmark's targets, from the JSON reports the scripts wrote (`make bench`).

Run after the scripts (`make bench` runs it last), or alone on the reports already written:

    .venv/bin/python bench/summary.py [--out DIR] [--markdown FILE]

Reads each script's report `DIR/NAME.json` (default bench/out) for the scripts in SCRIPTS, takes
its `targets` (harness.Target: the case, its ratio, the bar, whether it was met, how the ratio is
taken), and prints them as one Markdown table, script by script; then, per script, when its
report was written, the commit it ran at, its size (SIZES), the machine's load average at its
start and end (the report's `run`, harness.run_info) and its machine; then the scripts that have
no report, by name. The scripts `make bench` runs that measure without a bar (reading.py) are not
in it.

`--markdown FILE` also writes the summary into FILE: between the lines START and END (see below)
where FILE holds them, replacing what was there (docs/performance.md's current figures); as the
whole file where FILE doesn't exist. A FILE that exists without the two lines is left alone (exit 2).

Exits 1 if a target was missed, 0 otherwise: the figures are from one run on a noisy machine, so
a miss says "look", not "broken".
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

# the scripts whose reports carry targets, in the order `make bench` runs them (each writes DIR/NAME.json)
SCRIPTS = ("tabular", "images", "sequences", "bad_rows", "workers", "memory", "verify", "beam", "coco",
           "coco_memory", "audio", "video", "text_build", "engines", "sql_postgres", "frames", "spark_table")

# the settings a report may give at its top level that say how large its run was
SIZES = ("rows", "records", "sequences", "images", "large", "photos", "clips", "copies", "megabytes", "repeats", "rounds")

# the lines of a Markdown file between which `--markdown` writes the summary
START = "<!-- bench/summary.py: the current figures, from here -->"
END = "<!-- bench/summary.py: to here -->"


def load_targets(path: str) -> tuple[list[Target], dict[str, Any]]:
    """A report's targets and the report itself."""
    with open(path, encoding="utf-8") as file:
        document = json.load(file)
    fields = ("case", "ratio", "bar", "at_least", "note")
    return [Target(**{name: target[name] for name in fields}) for target in document.get("targets", [])], document


def _loads(loads: list[float]) -> str:
    return " / ".join(f"{load:.2f}" for load in loads)


def _size(value: Any) -> str:
    """A setting as the run line gives it ("200,000", "20", "100,000 / 1,000,000"); "" for what isn't a size."""
    if isinstance(value, bool):
        return ""
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list) and value and all(_size(item) for item in value):
        return " / ".join(_size(item) for item in value)
    return ""


def run_line(script: str, path: str, document: dict[str, Any]) -> str:
    """A report's line under the table: when it was written, its commit, its size, the load at its start and end,
    its machine."""
    written = time.strftime("%Y-%m-%d %H:%M", time.localtime(os.path.getmtime(path)))
    run = document.get("run")
    parts = [f"`{script}.py` ({written}"]
    if run and run.get("commit"):
        parts[0] += f", at {run['commit']}"
    parts[0] += ")"
    sizes = [f"{key} {_size(document[key])}" for key in SIZES if _size(document.get(key))]
    if sizes:
        parts.append(", ".join(sizes))
    if run:
        load = run["load_average"]
        parts.append(f"load average (1 / 5 / 15 min) {_loads(load['start'])} at its start, {_loads(load['end'])} at its end")
    else:
        parts.append("load average not recorded")
    if "machine" in document:  # (less the loads some scripts keep there too)
        machine = {key: value for key, value in document["machine"].items() if not key.startswith("load_average")}
        parts.append(machine_line(machine).removeprefix("Machine: "))
    return "; ".join(parts) + "."


def summary(out: str) -> tuple[str, int]:
    """The Markdown summary of the reports in `out`, and how many targets were missed."""
    rows, missing, runs, missed = [], [], [], 0
    for script in SCRIPTS:
        path = os.path.join(out, f"{script}.json")
        if not os.path.exists(path):
            missing.append(script)
            continue
        targets, document = load_targets(path)
        runs.append(f"- {run_line(script, path, document)}")
        for target in targets:
            missed += not target.met
            rows.append([f"`{script}.py`", target.case, f"{target.ratio:.2f}x", target.wanted,
                         "yes" if target.met else "**no**", target.note])
    lines = [
        "## Benchmark targets",
        "",
        "Written by `bench/summary.py` from the reports of each script's last run, the last step of `make bench`.",
        "",
        f"{len(rows) - missed} of {len(rows)} targets met.",
        "",
        markdown_table(["script", "target", "ratio", "wanted", "met", "ratio of"],
                       ["---", "---", "---:", "---:", "---", "---"], rows),
        "",
        "Each script's run:",
        "",
        *runs,
    ]
    if missing:
        root = os.path.dirname(HERE)
        where = os.path.relpath(out, root) if os.path.abspath(out).startswith(root + os.sep) else out
        lines += ["", f"Not run (no report in {where}): " + ", ".join(f"`{name}.py`" for name in missing) + "."]
    return "\n".join(lines), missed


def write_between_markers(path: str, text: str) -> None:
    """Writes `text` into the file at `path` between START and END, or as the whole file where it
    doesn't exist; a file without the two lines raises ValueError."""
    if not os.path.exists(path):
        content = text + "\n"
    else:
        with open(path, encoding="utf-8") as file:
            old = file.read()
        lines = old.splitlines(keepends=True)
        starts = [index for index, line in enumerate(lines) if line.strip() == START]
        ends = [index for index, line in enumerate(lines) if line.strip() == END]
        if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
            raise ValueError(f"{path}: expected the line {START!r} once, then {END!r} once, "
                             "between which the summary goes")
        content = "".join(lines[: starts[0] + 1]) + text + "\n" + "".join(lines[ends[0]:])
    with open(path, "w", encoding="utf-8") as file:
        file.write(content)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(HERE, "out"), help="where the reports are (default bench/out)")
    parser.add_argument("--markdown", help="also write the summary into this file, between its START and END lines")
    args = parser.parse_args(argv)
    text, missed = summary(args.out)
    print(text)
    if args.markdown:
        try:
            write_between_markers(args.markdown, text)
        except ValueError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
