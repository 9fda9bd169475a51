"""Headless Chromium for the report's browser tests: a screenshot, the DOM after the page's
load event, and what the page wrote to the console.

Chromium runs with a fresh profile each time, without background networking, component updates,
sync or first-run pages, and with every host name resolving to nothing, so a page that reached for
the network would show it (its images would not load). Debian's `chromium` package; `make test`
installs it where it is missing.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

TIMEOUT = 300  # seconds: a bound for a Chromium run that hangs (each takes about one; far more on a busy machine)
WINDOW = (1280, 4000)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
         "--force-device-scale-factor=1", "--host-resolver-rules=MAP * ~NOTFOUND",
         "--enable-logging=stderr", "--v=0"]
# what Chromium logs for the page's console.error, console.log and uncaught exceptions:
# `[...:INFO:CONSOLE:12] "message", source: file:///...html (12)` (older builds: `CONSOLE(12)`)
CONSOLE = re.compile(r"CONSOLE[(:]\d*\)?\]? (?P<message>.*)")


def chromium() -> str:
    """The Chromium binary; fails with what to do when there is none."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise AssertionError("the browser test needs Chromium: `make chromium` (apt-get install chromium) "
                             "installs Debian's package")
    return found


@dataclass
class Run:
    stdout: str
    console: list[str]  # the page's console messages, uncaught errors included


def run(page: Path, *arguments: str) -> Run:
    """Chromium once on `page` (a file) with `arguments` (e.g. --dump-dom, --screenshot=FILE)."""
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        command = [chromium(), *FLAGS, f"--user-data-dir={profile}", f"--window-size={WINDOW[0]},{WINDOW[1]}",
                   *arguments, page.resolve().as_uri()]
        result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, errors="replace",
                                stdin=subprocess.DEVNULL)
    assert result.returncode == 0, f"chromium failed ({result.returncode}):\n{result.stderr[-3000:]}"
    console = [match.group("message") for line in result.stderr.splitlines() if (match := CONSOLE.search(line))]
    return Run(result.stdout, console)


def screenshot(page: Path, file: Path) -> Run:
    outcome = run(page, f"--screenshot={file}")
    assert file.is_file(), f"chromium wrote no screenshot of {page}"
    return outcome


def dump_dom(page: Path) -> Run:
    """The DOM after the load event (the page's script has run)."""
    return run(page, "--dump-dom")
