"""A built dataset as one self-contained HTML page: `report`, `write_report`, `Report`.

data.py computes what the page shows (exact counts from the build's statistics, distributions
from a sample of records read with NumPy), figures.py draws it with matplotlib (the `report`
extra), page.py lays it out. Nothing here imports TensorFlow.

>>> report("build/wine/1.0.0", "wine-report.html")
'wine-report.html'
"""
from __future__ import annotations

import os
from html import escape

from .. import fs
from ..errors import DatasetError, UsageError
from ..write.info import DatasetInfo, dataset_folder, read_info, write_file
from ..write.naming import METADATA_FILE
from .data import DEFAULT_SAMPLE, ReportData, report_data
from .figures import Plot, draw
from .page import page
from .sample import Progress

REPORT_FILE = "report.html"  # what `output.report: true` writes into the dataset's folder

__all__ = ["DEFAULT_SAMPLE", "REPORT_FILE", "Report", "ReportData", "open_dataset", "render", "report",
           "report_data", "write_report"]


class Report:
    """A rendered report: its HTML, and the file it was written to (if any). In a Jupyter
    notebook it shows itself inline, in an iframe, so the page's style stays inside it."""

    def __init__(self, html: str, path: str | None = None, plots: list[Plot] | None = None):
        self.html = html
        self.path = path
        self.plots = plots or []

    def save(self, path: str | os.PathLike) -> str:
        """Writes the page to `path`; returns the path."""
        self.path = _write(os.fspath(path), self.html.encode("utf-8"))
        return self.path

    def _repr_html_(self) -> str:
        return (f'<iframe srcdoc="{escape(self.html, quote=True)}" style="width: 100%; height: 760px; '
                'border: 1px solid #E3E6EA; border-radius: 8px;" sandbox="allow-scripts" '
                'title="dataset report"></iframe>')

    def __repr__(self) -> str:
        where = f" at {self.path}" if self.path else ""
        return f"<Report{where}: {len(self.html):,} characters, {len(self.plots)} figures>"


def render(info: DatasetInfo, png: str | os.PathLike | None = None, sample: int | None = DEFAULT_SAMPLE,
           progress: Progress | None = None) -> Report:
    """The report of a dataset, not yet written anywhere; with `png`, each figure is written into
    that folder as a PNG file (named as `report` lists)."""
    data = report_data(info, sample, progress)
    plots = draw(data, progress)
    if png is not None:
        write_pngs(plots, os.fspath(png))
    return Report(page(data, plots), plots=plots)


def report(path_or_info: str | os.PathLike | DatasetInfo, output: str | os.PathLike | None = None,
           png: str | os.PathLike | None = None, sample: int | None = DEFAULT_SAMPLE,
           progress: Progress | None = None) -> str:
    """The HTML report of a built dataset (a folder, or its `DatasetInfo`): the page's text, or,
    given `output`, the path it was written to.

    `png`: a folder that also receives every figure as a PNG file (FEATURE-values.png,
    FEATURE-lengths.png, FEATURE-steps.png, FEATURE-classes.png, FEATURE-images-SPLIT.png).
    `sample`: the records read per split for the distributions (None: all). `progress`: called
    as `progress(phase, count, total)` while records are read and figures drawn.
    """
    info = path_or_info if isinstance(path_or_info, DatasetInfo) else open_dataset(os.fspath(path_or_info))
    rendered = render(info, png, sample, progress)
    if output is None:
        return rendered.html
    return rendered.save(output)


def write_report(info: DatasetInfo, sample: int | None = DEFAULT_SAMPLE, progress: Progress | None = None) -> str:
    """Writes `report.html` into the dataset's folder (`output.report: true`); returns its path.
    The dataset's shards must be in `info.path`."""
    return render(info, sample=sample, progress=progress).save(fs.join(info.path, REPORT_FILE))


def open_dataset(path: str) -> DatasetInfo:
    """The dataset at `path`. A path where no dataset of ours is (a wrong folder, a file) is a
    usage error (exit 2), in read_info's words; a dataset that is there but broken stays a
    DatasetError (exit 1)."""
    try:
        return read_info(path)
    except DatasetError as error:
        if not fs.exists(fs.join(dataset_folder(path), METADATA_FILE)):
            raise UsageError(str(error)) from None
        raise


def write_pngs(plots: list[Plot], folder: str) -> list[str]:
    """Writes each figure as `folder/STEM.png` (the folder made if needed); returns the paths."""
    if not fs.is_url(folder):
        if os.path.exists(folder) and not os.path.isdir(folder):
            raise UsageError(f"{folder}: is a file; the figures go into a folder")
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as error:
            raise UsageError(f"{folder}: can't be made: {error.strerror or error}") from None
    return [_write(fs.join(folder, f"{plot.stem}.png"), plot.png) for plot in plots]


def _write(path: str, data: bytes) -> str:
    """Writes a file whole or not at all (locally), or into an object store."""
    if fs.is_url(path):
        with fs.open_file(path, "wb") as file:
            file.write(data)
        return path
    try:
        write_file(os.path.abspath(path), data)
        return path
    except IsADirectoryError:
        raise UsageError(f"{path}: is a folder; give the report's file name") from None
    except OSError as error:
        raise UsageError(f"{path}: can't be written: {error.strerror or error}") from None
