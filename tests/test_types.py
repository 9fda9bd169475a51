"""The package's types, checked by mypy with the settings in setup.cfg ([mypy]): no file may have
more errors than tests/mypy_baseline.txt records for it, and a file it doesn't list may have none.
The baseline only shrinks: when a file has fewer errors than recorded, the test says so and how to
lower it (`make mypy-baseline`, which runs this test with TFRECORD_BUILDER_MYPY_BASELINE=write).

mypy's verdicts depend on its version and on the stubs the installed packages carry (NumPy's,
Pillow's): setup.cfg's test extra pins mypy, so the baseline fits the environment `make setup`
makes.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings

from conftest import ROOT

BASELINE = ROOT / "tests" / "mypy_baseline.txt"
REGENERATE = "TFRECORD_BUILDER_MYPY_BASELINE"  # =write: the baseline rewritten from this run
ERROR = re.compile(r"^(?P<path>[^:\s]+\.pyi?):\d+: error: ")
HEADER = ("# mypy's errors per file of the package (tests/test_types.py): a file may have fewer, never more,\n"
          "# and a file not listed none. Regenerate with `make mypy-baseline` once the counts went down.\n")


def mypy_errors() -> dict[str, list[str]]:
    """mypy's error lines by file (paths relative to the checkout, as setup.cfg's `files` gives them)."""
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-pretty", "--no-color-output", "--no-error-summary"],
                          cwd=ROOT, capture_output=True, text=True, timeout=1800)
    # 0: no error, 1: errors found; anything else is mypy itself failing (a bad setting, a crash)
    assert done.returncode in (0, 1), f"mypy failed ({done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    errors: dict[str, list[str]] = {}
    for line in done.stdout.splitlines():
        if match := ERROR.match(line):
            errors.setdefault(match["path"], []).append(line)
    return errors


def read_baseline() -> dict[str, int]:
    counts = {}
    for line in BASELINE.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            path, count = line.rsplit(" ", 1)
            counts[path] = int(count)
    return counts


def write_baseline(errors: dict[str, list[str]]) -> None:
    lines = [f"{path} {len(errors[path])}\n" for path in sorted(errors)]
    BASELINE.write_text(HEADER + "".join(lines), encoding="utf-8")


def test_mypy_finds_no_more_errors_in_any_file_than_its_baseline():
    errors = mypy_errors()
    if os.environ.get(REGENERATE) == "write":
        write_baseline(errors)
        return
    baseline = read_baseline()
    more = {path: lines for path, lines in errors.items() if len(lines) > baseline.get(path, 0)}
    assert not more, "mypy finds more errors than tests/mypy_baseline.txt allows:\n" + "\n".join(
        f"{path}: {len(lines)} errors, baseline {baseline.get(path, 0)}\n  " + "\n  ".join(lines)
        for path, lines in sorted(more.items()))
    fewer = sorted(path for path, count in baseline.items() if len(errors.get(path, ())) < count)
    if fewer:
        warnings.warn(f"mypy finds fewer errors than tests/mypy_baseline.txt records in {len(fewer)} files "
                      f"({', '.join(fewer[:5])}{', ...' if len(fewer) > 5 else ''}): lower the baseline with "
                      "`make mypy-baseline` (TFRECORD_BUILDER_MYPY_BASELINE=write pytest tests/test_types.py)")
