"""Progress of a long job (a build, `verify`, `report`) as tqdm bars: one per phase, on a terminal
or, in a Jupyter notebook, as its widget.

The jobs report through a plain callable, `progress(phase, count, total)`: records (or items) done
so far in the phase, and how many in all when known. `progress_display` turns what a caller
passed (True, False, None for "where someone watches", or a callable of their own) into one.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Callable, TextIO, Union

Progress = Callable[[str, int, "int | None"], None]  # (phase, done so far, in all if known)
ProgressOption = Union[bool, None, Progress]


def in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (where tqdm draws a widget)."""
    return "ipykernel.zmqshell" in sys.modules


class ProgressBars:
    """A tqdm bar per phase: a new phase closes the previous bar and starts its own.

    On a terminal the bars are cleared when done (the job prints its summary table after); in a
    notebook they stay, as TensorFlow Datasets' and Keras' do.
    """

    def __init__(self, stream: TextIO | None = None, unit: str = "records", notebook: bool | None = None,
                 units: dict[str, str] | None = None):
        self.stream = stream
        self.unit = unit
        self.units = units or {}  # a phase's own unit (figures drawn, not records)
        self.notebook = in_notebook() if notebook is None else notebook
        self.phase: str | None = None
        self.bar: Any = None

    def __call__(self, phase: str, count: int, total: int | None = None) -> None:
        if phase != self.phase:
            self.close()
            self.phase = phase
            self.bar = self._bar(phase, total)
        if total is not None and self.bar.total != total:
            self.bar.total = total
        self.bar.update(count - self.bar.n)

    def _bar(self, phase: str, total: int | None) -> Any:
        unit = self.units.get(phase, self.unit)
        # counts in full (1,234,567 records), rates scaled (1.2M records/s)
        counted = "{n:,}/{total:,}" if total is not None else "{n:,} " + unit
        shape = "{desc}: {percentage:3.0f}%|{bar}| " if total is not None else "{desc}: "
        options = dict(desc=phase, total=total, unit=f" {unit}", dynamic_ncols=True, unit_scale=True,
                       mininterval=0.1, smoothing=0.1, bar_format=shape + counted + " [{elapsed}<{remaining}, {rate_fmt}]"
                       if total is not None else shape + counted + " [{elapsed}, {rate_fmt}]")
        if self.notebook:
            try:
                from tqdm.notebook import IProgress, tqdm as notebook_tqdm
                if IProgress is not None:  # ipywidgets is installed: the notebook's own widget
                    return notebook_tqdm(leave=True, **options)
            except ImportError:
                pass
        from tqdm import tqdm
        stream = self.stream or sys.stderr
        if not _width(stream):  # a terminal that gives no size (0x0): tqdm would draw nothing
            options.update(dynamic_ncols=False, ncols=100, nrows=24)
        return tqdm(file=stream, leave=self.notebook, **options)

    def close(self) -> None:
        """Closes the current bar (a terminal's line is cleared)."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        self.phase = None


def _width(stream: TextIO) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return 0


class _Silent:
    def __call__(self, phase: str, count: int, total: int | None = None) -> None:
        pass

    def close(self) -> None:
        pass


class _Given:
    """A caller's own callable: called as it is, nothing to close."""

    def __init__(self, function: Progress):
        self.function = function

    def __call__(self, phase: str, count: int, total: int | None = None) -> None:
        self.function(phase, count, total)

    def close(self) -> None:
        pass


def progress_display(option: ProgressOption, stream: TextIO | None = None, unit: str = "records",
                     units: dict[str, str] | None = None) -> Any:
    """A progress callable with a `close()`, for what a caller passed as `progress`.

    True: bars. False: nothing. None: bars where someone is watching (a terminal on stderr, or a
    notebook), nothing in logs and pipes. A callable: called with (phase, count, total).
    """
    if callable(option):
        return _Given(option)
    if option is None:
        stream_of = stream or sys.stderr
        option = in_notebook() or bool(getattr(stream_of, "isatty", lambda: False)())
    return ProgressBars(stream, unit, units=units) if option else _Silent()
