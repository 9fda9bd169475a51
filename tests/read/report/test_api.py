"""The report's Python API: `report`, `write_report`, `Dataset.report` (what a notebook shows)."""
from __future__ import annotations

import html
import shutil

import pytest

import tfrecord_builder as tb
from tfrecord_builder.errors import UsageError
from tfrecord_builder.read.report import REPORT_FILE, Report, report, write_report
from tfrecord_builder.write.info import read_info


def test_report_returns_the_page_or_writes_it(datasets, tmp_path):
    text = report(datasets["wine"], sample=50)
    assert text.startswith("<!DOCTYPE html>") and "<title>wine 1.0.0 · dataset report</title>" in text
    written = report(read_info(str(datasets["wine"])), tmp_path / "page.html", sample=50)  # a DatasetInfo too
    assert written == str(tmp_path / "page.html")
    assert (tmp_path / "page.html").read_text(encoding="utf-8") == text  # the same page, byte for byte


def test_dataset_report_shows_inline_in_a_notebook_and_writes_a_file_when_asked(datasets, tmp_path):
    dataset = tb.load(datasets["digits"])
    shown = dataset.report()
    assert isinstance(shown, Report) and shown.path is None and len(shown.plots) == 3
    inline = shown._repr_html_()
    # an iframe holding the page, so the page's style sheet can't restyle the notebook
    assert inline.startswith("<iframe srcdoc=\"") and "<style>" not in inline
    assert html.unescape(inline.split('srcdoc="', 1)[1].split('" style=', 1)[0]) == shown.html
    saved = dataset.report(tmp_path / "digits.html", png=tmp_path / "figures")
    assert saved.path == str(tmp_path / "digits.html")
    assert (tmp_path / "digits.html").read_text(encoding="utf-8") == saved.html
    assert sorted(path.name for path in (tmp_path / "figures").iterdir()) == [
        "image-images-test.png", "image-images-train.png", "label-classes.png"]
    assert repr(saved).startswith(f"<Report at {tmp_path / 'digits.html'}: ")


def test_write_report_puts_report_html_into_the_dataset_folder(datasets, tmp_path):
    copy = tmp_path / "wine"
    shutil.copytree(datasets["wine"], copy)
    path = write_report(read_info(str(copy)), sample=20)
    assert path == str(copy / REPORT_FILE)
    assert (copy / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_progress_is_called_as_records_are_read_and_figures_drawn(datasets):
    calls = []
    report(datasets["japanese_vowels"], sample=100, progress=lambda phase, count, total: calls.append(
        (phase, count, total)))
    phases = list(dict.fromkeys(phase for phase, _, _ in calls))
    assert phases == ["reading train", "reading test", "drawing"]
    last = {phase: (count, total) for phase, count, total in calls}
    assert last == {"reading train": (100, 100), "reading test": (100, 100), "drawing": (4, 4)}
    assert all(count <= total for _, count, total in calls)


def test_a_path_that_is_not_a_dataset_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="no such dataset folder"):
        report(tmp_path / "nowhere")
    # (tb.load says DatasetError here, as every reader does; for the report a wrong path is a usage error)
    with pytest.raises(UsageError, match=r"not a finished dataset \(no dataset_info.json\)"):
        report(tmp_path)
