"""bench/summary.py on small fake reports: one table of every script's targets with the ratio, the
bar and met or missed, each run's load average at its start and end, the scripts without a report
named, and `--markdown` writing between a page's two marker lines only."""
from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT

SUMMARY = ROOT / "bench" / "summary.py"
START = "<!-- bench/summary.py: the current figures, from here -->"
END = "<!-- bench/summary.py: to here -->"
MACHINE = {"cpu_count": 2, "load_average": [9.0, 9.0, 9.0], "processor": "x86_64", "platform": "Linux-6",
           "python": "3.11.7", "tensorflow": "2.21.0"}


def _target(case, ratio, bar, at_least=True, note="ours / theirs"):
    met = ratio >= bar if at_least else ratio <= bar
    return {"case": case, "ratio": ratio, "bar": bar, "at_least": at_least, "note": note,
            "wanted": f"{'>=' if at_least else '<='} {bar:.2f}x", "met": met}


def _report(folder, name, targets, run=True):
    document = {"rows": [100000, 1000000], "repeats": 3, "machine": MACHINE, "targets": targets}
    if run:
        document["run"] = {"load_average": {"start": [0.25, 0.5, 1.0], "end": [1.75, 0.75, 1.0]},
                           "commit": "f48dfef1a2"}
    (folder / f"{name}.json").write_text(json.dumps(document), encoding="utf-8")


def _summary(*arguments):
    return subprocess.run([sys.executable, str(SUMMARY), *map(str, arguments)], capture_output=True, text=True,
                          timeout=120)


def _fake_reports(folder):
    _report(folder, "tabular", [_target("tabular build, time over the TFRecordWriter floor", 2.4, 3.0, at_least=False,
                                        note="build time / floor time"),
                                _target("tabular build, over the seed loop", 9.5, 10.0)])
    _report(folder, "images", [_target("images: JPEG passthrough, 2,000 photos", 1.62, 1.5)])
    _report(folder, "coco", [_target("COCO build, ours over the Object Detection API's loop", 2.1, 2.0)], run=False)


def test_the_table_says_each_target_met_or_missed_and_exits_1_on_a_miss(tmp_path):
    _fake_reports(tmp_path)
    done = _summary("--out", tmp_path)
    assert done.returncode == 1, done.stderr  # one target missed
    lines = done.stdout.splitlines()
    assert "| `tabular.py` | tabular build, time over the TFRecordWriter floor | 2.40x | <= 3.00x | yes | " \
           "build time / floor time |" in lines
    assert "| `tabular.py` | tabular build, over the seed loop | 9.50x | >= 10.00x | **no** | ours / theirs |" in lines
    assert "| `images.py` | images: JPEG passthrough, 2,000 photos | 1.62x | >= 1.50x | yes | ours / theirs |" in lines
    assert "| `coco.py` | COCO build, ours over the Object Detection API's loop | 2.10x | >= 2.00x | yes | " \
           "ours / theirs |" in lines
    assert "3 of 4 targets met." in lines


def test_each_run_gives_its_load_at_start_and_end_and_the_missing_scripts_are_named(tmp_path):
    _fake_reports(tmp_path)
    text = _summary("--out", tmp_path).stdout
    tabular = next(line for line in text.splitlines() if line.startswith("- `tabular.py` ("))
    assert "at f48dfef1a2" in tabular and "rows 100,000 / 1,000,000, repeats 3" in tabular
    assert "load average (1 / 5 / 15 min) 0.25 / 0.50 / 1.00 at its start, 1.75 / 0.75 / 1.00 at its end" in tabular
    assert "2 CPUs (x86_64)" in tabular and "TensorFlow 2.21.0" in tabular
    coco = next(line for line in text.splitlines() if line.startswith("- `coco.py` ("))
    assert "load average not recorded" in coco  # a report from before the load was recorded
    missing = next(line for line in text.splitlines() if line.startswith("Not run"))
    for script in ("sequences", "workers", "memory", "video", "text_build", "sql_postgres", "frames", "spark_table"):
        assert f"`{script}.py`" in missing
    for script in ("tabular", "images", "coco"):
        assert f"`{script}.py`" not in missing


def test_all_met_exits_0(tmp_path):
    _report(tmp_path, "workers", [_target("table, default workers over 1", 0.8, 1.05, at_least=False)])
    done = _summary("--out", tmp_path)
    assert done.returncode == 0 and "1 of 1 targets met." in done.stdout


def test_markdown_replaces_only_what_is_between_the_markers(tmp_path):
    _fake_reports(tmp_path)
    page = tmp_path / "performance.md"
    page.write_text(f"# Performance\n\nProse before.\n\n{START}\nold figures: 0.58x\n{END}\n\nProse after.\n",
                    encoding="utf-8")
    _summary("--out", tmp_path, "--markdown", page)
    text = page.read_text(encoding="utf-8")
    assert text.startswith(f"# Performance\n\nProse before.\n\n{START}\n## Benchmark targets\n")
    assert text.endswith(f"\n{END}\n\nProse after.\n")
    assert "old figures" not in text and "3 of 4 targets met." in text
    _summary("--out", tmp_path, "--markdown", page)  # again: the same page, not a second table
    assert page.read_text(encoding="utf-8") == text


def test_markdown_leaves_a_page_without_markers_alone(tmp_path):
    _fake_reports(tmp_path)
    page = tmp_path / "performance.md"
    page.write_text("# Performance\n\nProse only.\n", encoding="utf-8")
    done = _summary("--out", tmp_path, "--markdown", page)
    assert done.returncode == 2 and "expected the line" in done.stderr
    assert page.read_text(encoding="utf-8") == "# Performance\n\nProse only.\n"
