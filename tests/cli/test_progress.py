"""On a terminal the build shows tqdm bars, cleared before its summary; elsewhere it shows none."""
from __future__ import annotations

import os
import re
import pty
import subprocess
import sys



def test_progress_is_drawn_on_a_terminal_and_cleared(tmp_path):
    rows = "".join(f"{i},{i / 3}\n" for i in range(200_000))
    (tmp_path / "big.csv").write_text("id,x\n" + rows)
    (tmp_path / "spec.yaml").write_text("name: big\nsource: {builder: csv, path: big.csv}\n"
                                        "features: {id: {dtype: int64}, x: {dtype: float32}}\n")
    leader, follower = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "tfrecord_builder", "build", "spec.yaml", "--output", "out"],
                               cwd=tmp_path, stdout=subprocess.PIPE, stderr=follower, env={**os.environ})
    os.close(follower)
    drawn = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closes when the build exits
            break
        if not chunk:
            break
        drawn += chunk
    stdout, _ = process.communicate()
    os.close(leader)
    assert process.returncode == 0
    assert b"\rencoding: " in drawn and b"\rwriting: " in drawn and b" records/s]" in drawn
    assert re.search(rb"\rencoding: \d{1,3}(,\d{3})* records \[", drawn)  # how many so far (the total unknown)
    assert b"/200,000 [" in drawn  # the writing bar knows its total
    assert re.search(rb"\r {40,}\r$", drawn)  # the bar's line is cleared before the summary
    assert b"\r" not in stdout and b"train" in stdout
