"""A built dataset as one self-contained HTML page: `report`, `write_report`, `Report`.

data.py computes what the page shows (exact counts from the build's statistics, distributions
from a sample of records read with NumPy; sample.py reads the sample, thumbnails.py makes its
images' thumbnails, wording.py writes its numbers), figures.py draws it with matplotlib (the
`report` extra), page.py lays it out. Nothing here imports TensorFlow.

>>> report("build/wine/1.0.0", "wine-report.html")
'wine-report.html'
"""
from __future__ import annotations

import dataclasses
import os
from html import escape

from ... import fs
from ...errors import DatasetError, UsageError
from ...write.info import DatasetInfo, dataset_folder, read_info
from ...write.naming import METADATA_FILE, REPORT_FILE
from .data import DEFAULT_SAMPLE, ReportData, report_data
from .figures import MISSING, Plot, draw
from .page import page
from ...progress import ProgressOption, progress_display


__all__ = ["DEFAULT_SAMPLE", "REPORT_FILE", "Report", "ReportData", "open_dataset", "render", "report",
           "report_data", "write_report", "check_plotting"]


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
           progress: ProgressOption = None, files_at: str | None = None) -> Report:
    """The report of a dataset, not yet written anywhere; with `png`, each figure is written into
    that folder as a PNG file (named as `report` lists). `files_at`: where the dataset's files
    are now, if not yet at `info.path` (a build's staging folder). `progress` as for `build`."""
    display = progress_display(progress, units={"drawing": "figures"})
    try:
        if files_at is None:
            data = report_data(info, sample, display)
        else:  # read there, shown as the place the dataset is about to be
            data = dataclasses.replace(report_data(dataclasses.replace(info, path=files_at), sample, display),
                                       path=info.path)
        plots = draw(data, display)
    finally:
        display.close()
    if png is not None:
        write_pngs(plots, os.fspath(png))
    return Report(page(data, plots), plots=plots)


def report(path_or_info: str | os.PathLike | DatasetInfo, output: str | os.PathLike | None = None,
           png: str | os.PathLike | None = None, sample: int | None = DEFAULT_SAMPLE,
           progress: ProgressOption = None) -> str:
    """The HTML report of a built dataset (a folder, or its `DatasetInfo`): the page's text, or,
    given `output`, the path it was written to.

    `png`: a folder that also receives every figure as a PNG file (FEATURE-values.png,
    FEATURE-lengths.png, FEATURE-steps.png, FEATURE-classes.png, FEATURE-images-SPLIT.png; a bbox
    feature's FEATURE-objects.png, FEATURE-areas.png, FEATURE-aspects.png, FEATURE-classes.png).
    `sample`: the records read per split for the distributions (None: all). `progress`: bars
    while records are read and figures drawn (True), none (False), bars on a terminal or in a
    notebook (None), or a callable called as `progress(phase, count, total)`.

    >>> tb.report("build/wine/1.0.0", "wine.html", png="figures")
    'wine.html'
    """
    info = path_or_info if isinstance(path_or_info, DatasetInfo) else open_dataset(os.fspath(path_or_info))
    rendered = render(info, png, sample, progress)
    if output is None:
        return rendered.html
    return rendered.save(output)


def write_report(info: DatasetInfo, sample: int | None = DEFAULT_SAMPLE, progress: ProgressOption = False,
                 files_at: str | None = None) -> str:
    """Writes `report.html` into the dataset's folder (`output.report: true`), or into `files_at`
    (where a build is putting the dataset together); returns its path."""
    folder = files_at or info.path
    return render(info, sample=sample, progress=progress, files_at=files_at).save(fs.join(folder, REPORT_FILE))


def check_plotting() -> None:
    """Raises UsageError unless matplotlib can be imported (a build that writes a report checks
    before it starts)."""
    import importlib.util

    try:
        found = importlib.util.find_spec("matplotlib") is not None
    except ValueError:  # in sys.modules as None: an import that is made to fail
        found = False
    if not found:
        raise UsageError(f"output.report: {MISSING}")


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
    try:
        fs.makedirs(folder)
    except FileExistsError:
        raise UsageError(f"{folder}: is a file; the figures go into a folder") from None
    except OSError as error:
        raise UsageError(f"{folder}: can't be made: {error.strerror or error}") from None
    return [_write(fs.join(folder, f"{plot.stem}.png"), plot.png) for plot in plots]


def _write(path: str, data: bytes) -> str:
    """Writes a file whole or not at all (locally), or into an object store."""
    try:
        return fs.write_whole(path, data)
    except IsADirectoryError:
        raise UsageError(f"{path}: is a folder; give the report's file name") from None
    except OSError as error:
        raise UsageError(f"{path}: can't be written: {error.strerror or error}") from None
