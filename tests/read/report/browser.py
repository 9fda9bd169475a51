"""Headless Chromium for the report's browser tests: a screenshot, the DOM after the page's
load event, and what the page wrote to the console; a probe that records where each figure is laid
out, and the screenshot's pixels near a colour.

Chromium runs with a fresh profile each time, without background networking, component updates,
sync or first-run pages, and with every host name resolving to nothing, so a page that reached for
the network would show it (its images would not load). Debian's `chromium` package; `make test`
installs it where it is missing.
"""
from __future__ import annotations

import html
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

TIMEOUT = 300  # seconds: a bound for a Chromium run that hangs (each takes about one; far more on a busy machine)
WINDOW = (1280, 4000)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
         "--force-device-scale-factor=1", "--host-resolver-rules=MAP * ~NOTFOUND",
         "--enable-logging=stderr", "--v=0"]
# what Chromium logs for the page's console.error, console.log and uncaught exceptions:
# `[...:INFO:CONSOLE:12] "message", source: file:///...html (12)` (older builds: `CONSOLE(12)`)
CONSOLE = re.compile(r"CONSOLE[(:]\d*\)?\]? (?P<message>.*)")
# what HTML has no place for (Chromium draws each as a box): C0 controls but tab, line feed and
# carriage return; DEL; C1
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


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


# appended to a copy of the page: where each figure is laid out, once loaded (the same layout as
# the screenshot's: same window, same scale)
PROBE = """<script>
window.addEventListener("load", function () {
  var boxes = Array.prototype.map.call(document.images, function (image) {
    var box = image.getBoundingClientRect();
    return [image.getAttribute("data-file"), Math.round(box.left + window.scrollX), Math.round(box.top + window.scrollY),
            Math.round(box.width), Math.round(box.height)].join(",");
  });
  document.body.setAttribute("data-probe", boxes.join(";"));
});
</script>
"""


def body_attribute(dom: str, name: str) -> str:
    """An attribute the page's script set on <body> (`PROBE`'s data-probe, ...), unescaped."""
    found = re.search(rf'<body[^>]*\s{name}="([^"]*)"', dom)
    assert found, f"no {name} on <body> after the load event:\n{dom[:2000]}"
    return html.unescape(found.group(1))


def _rgb(colour: str) -> np.ndarray:
    return np.array([int(colour[index:index + 2], 16) for index in (1, 3, 5)], dtype=np.int16)


def pixels_near(pixels: np.ndarray, colour: str, tolerance: int = 40) -> int:
    """Pixels within `tolerance` (per channel) of a colour (bars are drawn at 85% opacity on white)."""
    return int((np.abs(pixels.astype(np.int16) - _rgb(colour)).max(axis=2) <= tolerance).sum())
