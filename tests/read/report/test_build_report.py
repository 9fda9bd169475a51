"""`output.report: true`: the build writes report.html into the dataset, read from the shards it
just wrote (before the dataset is whole), showing the dataset's own folder, not the staging one;
without matplotlib it refuses before anything is made."""
from __future__ import annotations

from support.cli import assert_ok, run_cli, show
from conftest import write_spec

SPEC = {"name": "r", "source": {"builder": "csv", "path": "r.csv"}, "splits": {"train": 0.5, "test": 0.5},
        "features": {"x": {"dtype": "float32"}, "kind": {"type": "class_label", "names": ["a", "b"]}},
        "label": "kind", "output": {"dir": "out", "report": True}}
ROWS = "x,kind\n" + "".join(f"{i / 10},{'ab'[i % 2]}\n" for i in range(200))


def test_the_build_writes_its_report(tmp_path):
    spec = write_spec(tmp_path, SPEC, {"r.csv": ROWS})
    result = run_cli("build", spec, cwd=tmp_path)
    assert_ok(result)
    folder = tmp_path / "out" / "r" / "1.0.0"
    assert result.stdout.splitlines()[-2] == f"report: {folder / 'report.html'}"
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert f"<code>{folder}</code>" in page and ".staging" not in page and "tmp-" not in page
    assert_ok(run_cli("verify", folder, cwd=tmp_path))  # the page is no stranger to verify


def test_without_matplotlib_the_build_refuses_up_front(tmp_path):
    spec = write_spec(tmp_path, SPEC, {"r.csv": ROWS})
    script = ("import sys; sys.modules['matplotlib'] = None\n"
              "from tfrecord_builder.cli.main import main\n"
              f"sys.exit(main(['build', {str(spec)!r}]))\n")
    import subprocess
    import sys
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, show(result)
    assert result.stderr.strip() == ("error: output.report: the report draws its plots with matplotlib, which is not "
                                     "installed: pip install matplotlib (the `report` extra)")
    assert not (tmp_path / "out").exists()
