"""`tfrecord-builder report` on the real command line, in a child process."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys

from PIL import Image

from support.cli import assert_error, assert_ok, run_cli

WINE_FIGURES = {f"{name}-values.png" for name in (
    "alcohol", "malic_acid", "ash", "alcalinity_of_ash", "magnesium", "total_phenols", "flavanoids",
    "nonflavanoid_phenols", "proanthocyanins", "color_intensity", "hue", "od280_od315", "proline")} | {
    "cultivar-classes.png"}


def test_report_writes_the_page_in_the_working_directory_and_prints_its_path(datasets, tmp_path):
    result = run_cli("report", datasets["wine"], cwd=tmp_path)
    assert_ok(result)
    page = tmp_path / "wine-1.0.0-report.html"
    assert result.stdout == f"wine 1.0.0 -> {page}\n"
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    assert not re.search(r"https?://", text)
    assert list(tmp_path.iterdir()) == [page]  # nothing else, and nothing in the dataset's folder
    assert not (datasets["wine"] / "report.html").exists()


def test_png_writes_the_pages_figures_as_png_files(datasets, tmp_path):
    result = run_cli("report", datasets["wine"], "-o", "out/wine.html", "--png", "figures", cwd=tmp_path)
    assert_ok(result)
    assert result.stdout.splitlines() == [f"wine 1.0.0 -> {tmp_path / 'out' / 'wine.html'}",
                                          f"figures: 14 PNG files in {tmp_path / 'figures'}"]
    files = {path.name for path in (tmp_path / "figures").iterdir()}
    assert files == WINE_FIGURES
    page = (tmp_path / "out" / "wine.html").read_text(encoding="utf-8")
    for name in files:
        with Image.open(tmp_path / "figures" / name) as image:
            image.verify()
        with Image.open(tmp_path / "figures" / name) as image:
            assert image.format == "PNG" and image.width > 400 and image.height > 200
        assert f'data-file="{name}"' in page  # the same figures as the page's


def test_an_image_dataset_and_a_sequence_dataset_report(datasets, tmp_path):
    for name, figures in (("digits", {"image-images-train.png", "image-images-test.png", "label-classes.png"}),
                          ("japanese_vowels", {"utterance-values.png", "speaker-classes.png", "frames-values.png",
                                               "frames-steps.png"})):
        result = run_cli("report", datasets[name], "--png", name, "--sample", "all", cwd=tmp_path)
        assert_ok(result)
        assert {path.name for path in (tmp_path / name).iterdir()} == figures
        assert (tmp_path / f"{name}-1.0.0-report.html").is_file()


def test_report_on_a_folder_that_is_not_a_dataset_is_a_usage_error(datasets, tmp_path):
    (tmp_path / "empty").mkdir()
    result = run_cli("report", "empty", cwd=tmp_path)
    line = assert_error(result, 2)
    assert line == ("error: empty: not a finished dataset (no dataset_info.json); build it, or finish it with "
                    "--resume")
    result = run_cli("report", "nowhere", cwd=tmp_path)
    assert assert_error(result, 2) == "error: nowhere: no such dataset folder"
    assert list(tmp_path.iterdir()) == [tmp_path / "empty"]


def test_a_broken_dataset_is_bad_data(datasets, tmp_path):
    copy = tmp_path / "wine"
    shutil.copytree(datasets["wine"], copy)
    shard = next(copy.glob("wine-train.tfrecord-*"))
    shard.write_bytes(shard.read_bytes()[:-10])
    line = assert_error(run_cli("report", copy, cwd=tmp_path), 1)
    assert "shard is" in line and "run `tfrecord-builder verify`" in line


def test_sample_must_be_positive_or_all(datasets, tmp_path):
    line = assert_error(run_cli("report", datasets["wine"], "--sample", "0", cwd=tmp_path), 2)
    assert "--sample: expected a positive number of records or `all`, received '0'" in line


def test_the_report_imports_no_tensorflow(datasets, tmp_path):
    code = ("import sys; import tfrecord_builder as tb; from tfrecord_builder.read.report import report; "
            f"report({str(datasets['digits'])!r}, {str(tmp_path / 'page.html')!r}); "
            "print(sorted(name for name in sys.modules if name.split('.')[0] == 'tensorflow'))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "[]\n"


def test_without_matplotlib_the_error_says_what_to_install(datasets, tmp_path):
    # a None in sys.modules makes `import matplotlib` fail as it does where it isn't installed
    code = ("import sys; sys.modules['matplotlib'] = None; from tfrecord_builder.cli.main import main; "
            f"sys.exit(main(['report', {str(datasets['wine'])!r}]))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == ("error: the report draws its plots with matplotlib, which is not installed: "
                             "pip install matplotlib (the `report` extra)\n")
    assert list(tmp_path.iterdir()) == []
