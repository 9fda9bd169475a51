"""The report's figures, drawn with matplotlib into PNG bytes: `draw(data)`.

matplotlib is an optional dependency (the `report` extra), imported here when a report is drawn.
Figures are made with `matplotlib.figure.Figure` on an Agg canvas, never through pyplot: nothing
global changes (a notebook keeps its own backend), and nothing is kept once a figure is saved.
Histograms and class balances show the splits together, in the colours of style.py, as shares
of each split, so a split of 31 records compares with one of 147; image grids are one per split,
with each image's boxes drawn over it (a rectangle in its class's colour, its class named) and its
masks (a class colour, half opaque, where the mask is not 0), into the thumbnail's own pixels.
Figures keep their size in inches: the page shows them at 96 CSS pixels per inch.
"""
from __future__ import annotations

import dataclasses
import io
import struct
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
from PIL import Image

from ...errors import UsageError
from ...progress import Progress
from .data import AudioClip, ClassBalance, Histogram, ObjectsData, ReportData
from .thumbnails import ImageGrid
from .sample import Annotation
from .style import INK, MUTED, RULE, class_colour, rgb, split_colours

DPI = 144  # PNG pixels per inch; the page shows a figure at 96 CSS pixels per inch (sharp on 1.5x screens)
WIDTH = 7.0  # inches, a histogram (672 CSS pixels on the page)
HEIGHT = 2.25
THUMBNAIL = 44  # pixels: the largest side of a thumbnail in an image grid
ANNOTATED = 120  # pixels: ... of one with boxes or masks drawn over it (large enough to see them)
LINE = 2  # pixels: a box's edges, drawn inside it
MASK_OPACITY = 0.5  # a mask's class colour over the image
RATIO_TICKS = [1 / 16, 1 / 8, 1 / 4, 1 / 3, 1 / 2, 2 / 3, 1, 1.5, 2, 3, 4, 8, 16]  # a log axis of ratios
GAP = 3  # pixels between thumbnails
MISSING = "the report draws its plots with matplotlib, which is not installed: pip install matplotlib (the `report` extra)"

STYLE = {
    "font.family": "DejaVu Sans", "font.size": 8.5, "text.color": INK,
    "axes.titlesize": 9.5, "axes.titleweight": "bold", "axes.titlelocation": "left", "axes.titlepad": 8,
    "axes.labelsize": 8.5, "axes.labelcolor": MUTED, "axes.edgecolor": "#9AA1AB", "axes.linewidth": 0.8,
    "axes.spines.top": False, "axes.spines.right": False, "axes.grid": True, "axes.grid.axis": "y",
    "axes.axisbelow": True, "grid.color": RULE, "grid.linewidth": 0.8,
    "xtick.color": MUTED, "ytick.color": MUTED, "xtick.labelsize": 8, "ytick.labelsize": 8,
    "xtick.major.size": 3, "ytick.major.size": 0, "legend.fontsize": 8, "legend.frameon": False,
    "figure.facecolor": "white", "savefig.facecolor": "white",
}


@dataclass
class Plot:
    """One drawn figure."""

    stem: str  # its file name under --png DIR, without `.png`: FEATURE-values, FEATURE-images-SPLIT, ...
    feature: str
    title: str
    png: bytes
    # an image grid's boxes as drawn: (left, top, right, bottom) mosaic pixels (edges included), class, name
    marks: list[tuple[int, int, int, int, int | None, str]] = dataclasses.field(default_factory=list)
    section: str = "features"  # where the page shows it: features, or objects (a bbox feature's figures)

    @property
    def size(self) -> tuple[int, int]:
        """Width and height in pixels, from the PNG header."""
        return struct.unpack(">II", self.png[16:24])

    @property
    def css_width(self) -> int:
        """The width the page shows it at: its size in inches at 96 CSS pixels per inch."""
        return round(self.size[0] * 96 / DPI)


@dataclass
class _Job:
    """A figure to draw: what draws it, and its size in inches."""

    stem: str
    feature: str
    title: str
    note: str  # what it is drawn from, in its top right corner
    drawer: Callable[[Any], None]
    size: tuple[float, float]
    marks: list[tuple[int, int, int, int, int | None, str]] = dataclasses.field(default_factory=list)
    section: str = "features"


def draw(data: ReportData, progress: Progress | None = None) -> list[Plot]:
    """Every figure of the report, in page order."""
    matplotlib, Figure, Canvas = _matplotlib()
    jobs = _jobs(data)
    plots = []
    for number, job in enumerate(jobs):
        if progress is not None:
            progress("drawing", number, len(jobs))
        with matplotlib.rc_context(STYLE):
            figure = Figure(figsize=job.size, dpi=DPI)
            Canvas(figure)
            job.drawer(figure)
            axes = figure.axes[0]
            axes.set_title(_text(job.title))
            if job.note and _fits(job.title, job.note, job.size[0]):
                axes.set_title(_text(job.note), loc="right", fontsize=7.5, fontweight="normal", color=MUTED)
            buffer = io.BytesIO()
            figure.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight", pad_inches=0.06,
                           metadata={"Software": None})  # the same bytes whatever matplotlib wrote them
        plots.append(Plot(job.stem, job.feature, job.title, buffer.getvalue(), job.marks, job.section))
    if progress is not None:
        progress("drawing", len(jobs), len(jobs))
    return plots


def _jobs(data: ReportData) -> list[_Job]:
    colours = split_colours([split.name for split in data.splits])
    sampled = f"sample of ≤ {data.sample:,} records per split" if data.is_sample else "all records"
    jobs = []
    for feature in data.features:
        name = feature.name
        if feature.values is not None:
            what = "values per step" if feature.per_step else "values"
            jobs.append(_Job(f"{name}-values", name, f"{name}: {what}", sampled,
                             _histogram_drawer(feature.values, colours, "value", "% of values"), (WIDTH, HEIGHT)))
        if feature.lengths is not None:
            within = "step" if feature.per_step else "record"
            values = "ids" if feature.kind == "text" else "values"  # (token ids)
            jobs.append(_Job(f"{name}-lengths", name, f"{name}: {values} per {within}", sampled,
                             _histogram_drawer(feature.lengths, colours, f"{values} in the {within}", f"% of {within}s"),
                             (WIDTH, HEIGHT)))
        if feature.steps is not None:
            jobs.append(_Job(f"{name}-steps", name, f"{name}: steps per sequence", sampled,
                             _histogram_drawer(feature.steps, colours, "steps", "% of records"), (WIDTH, HEIGHT)))
        if feature.classes is not None and feature.classes.shown:  # (no bars without a class present)
            jobs.append(_Job(f"{name}-classes", name, f"{name}: class balance", "exact counts",
                             _classes_drawer(feature.classes, colours), _classes_size(feature.classes)))
        if feature.durations is not None and feature.loudness is not None:
            jobs.append(_Job(f"{name}-durations", name, f"{name}: duration", sampled,
                             _histogram_drawer(feature.durations, colours, "seconds", "% of clips"), (WIDTH, HEIGHT)))
            jobs.append(_Job(f"{name}-loudness", name, f"{name}: loudness", sampled,
                             _histogram_drawer(feature.loudness, colours, "RMS level, dBFS", "% of clips"),
                             (WIDTH, HEIGHT)))
        for index, clip in enumerate(feature.clips):
            jobs.append(_Job(waveform_stem(name, index), name, f"{clip.label or name} ({clip.split})", "",
                             _waveform_drawer(clip), (WIDTH * 0.75, HEIGHT * 0.5)))
        for grid in feature.images:
            mosaic, centres, marks = mosaic_of(grid)
            jobs.append(_Job(f"{name}-images-{grid.split}", name, f"{name}: {grid.split}", grid.note,
                             _grid_drawer(mosaic, centres, grid, marks), _grid_size(mosaic, grid), marks))
    for objects in data.objects:
        jobs.extend(_objects_jobs(objects, colours, sampled, data))
    return jobs


def waveform_stem(feature: str, index: int) -> str:
    """The file stem of an audio feature's `index`-th clip's waveform (the page puts its player beside it)."""
    return f"{feature}-waveform-{index}"


def _waveform_drawer(clip: AudioClip) -> Callable[[Any], None]:
    """A clip's waveform: each channel's lowest and highest sample per pixel column, over seconds."""
    def drawn(figure: Any) -> None:
        axes = figure.add_subplot()
        samples = clip.samples.reshape(len(clip.samples), -1)
        columns = max(1, min(len(samples), 600))
        edges = np.linspace(0, len(samples), columns + 1).astype(int)
        times = edges[:-1] / clip.rate
        for channel in range(samples.shape[1]):
            parts = [samples[start:max(end, start + 1), channel] for start, end in zip(edges[:-1], edges[1:])]
            low = [part.min() if part.size else 0.0 for part in parts]
            high = [part.max() if part.size else 0.0 for part in parts]
            axes.fill_between(times, low, high, color=INK, linewidth=0.4, alpha=0.8 / samples.shape[1])
        axes.set_xlim(0, max(len(samples), 1) / clip.rate)
        axes.set_ylim(-1, 1)
        axes.set_xlabel("seconds")
        axes.grid(False)

    return drawn


def _objects_jobs(objects: ObjectsData, colours: dict[str, str], sampled: str, data: ReportData) -> list[_Job]:
    """A bbox feature's figures: objects per image, box areas and aspect ratios, objects per class."""
    name, jobs = objects.name, []
    if objects.per_image is not None:
        jobs.append(_Job(f"{name}-objects", name, f"{name}: objects per image", sampled,
                         _histogram_drawer(objects.per_image, colours, "objects in the image", "% of images"),
                         (WIDTH, HEIGHT), section="objects"))
    if objects.areas is not None:
        jobs.append(_Job(f"{name}-areas", name, f"{name}: box sizes", sampled,
                         _histogram_drawer(objects.areas, colours, "box area, a fraction of the image's",
                                           "% of boxes"), (WIDTH, HEIGHT), section="objects"))
    if objects.aspects is not None:
        unit = "pixels" if objects.aspect_pixels else "fractions of the image"
        jobs.append(_Job(f"{name}-aspects", name, f"{name}: aspect ratios", sampled,
                         _histogram_drawer(objects.aspects, colours, f"width / height (in {unit})", "% of boxes"),
                         (WIDTH, HEIGHT), section="objects"))
    if objects.classes is not None and objects.classes.shown:
        note = "exact counts" if objects.classes_exact else f"from {objects.sampled:,} sampled images"
        jobs.append(_Job(f"{name}-classes", name, f"{name}: objects per class ({objects.label})", note,
                         _classes_drawer(objects.classes, colours, "% of the split's objects"),
                         _classes_size(objects.classes), section="objects"))
    return jobs


def _matplotlib() -> tuple[Any, Any, Any]:
    try:
        import matplotlib
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise UsageError(MISSING) from None
    return matplotlib, Figure, FigureCanvasAgg


def _fits(title: str, note: str, width: float) -> bool:
    """Whether the title (bold) and the note beside it fit a figure `width` inches wide."""
    return len(title) * 0.085 + len(note) * 0.058 + 0.4 < width


def _text(text: str) -> str:
    """Text as matplotlib shows it literally (a `$` would start mathematics)."""
    return text.replace("$", r"\$")


# ---- histograms -------------------------------------------------------------------------------
def _histogram_drawer(histogram: Histogram, colours: dict[str, str], xlabel: str, ylabel: str) -> Callable[[Any], None]:
    def drawn(figure: Any) -> None:
        axes = figure.add_subplot()
        edges = np.asarray(histogram.edges)
        splits = [split for split, total in histogram.totals.items() if total]
        if histogram.whole:
            centres = (edges[:-1] + edges[1:]) / 2
            width = 0.84 / max(1, len(splits))
            for place, split in enumerate(splits):
                shares = _shares(histogram.counts[split])
                offset = (place - (len(splits) - 1) / 2) * width
                axes.bar(centres + offset, shares, width=width, color=colours[split], alpha=0.85,
                         label=_legend(split, histogram), linewidth=0)
            if len(centres) <= 20:
                axes.set_xticks(centres)
                axes.set_xticklabels([f"{value:g}" for value in centres])
            axes.set_xlim(edges[0], edges[-1])
        else:
            for split in splits:
                shares = _shares(histogram.counts[split])
                axes.stairs(shares, edges, fill=True, color=colours[split], alpha=0.14, linewidth=0)
                axes.stairs(shares, edges, color=colours[split], linewidth=1.5, label=_legend(split, histogram))
            axes.set_xlim(edges[0], edges[-1])
        if histogram.log:  # (ratios: 1/2 and 2 equally far from 1)
            axes.set_xscale("log")
            ticks = [value for value in RATIO_TICKS if edges[0] <= value <= edges[-1]]
            axes.set_xticks(ticks)
            axes.set_xticklabels([f"{value:.2g}" for value in ticks])
            axes.xaxis.set_minor_formatter(lambda value, _: "")
        _headroom(axes)
        axes.set_xlabel(xlabel)
        axes.set_ylabel(ylabel)
        axes.yaxis.set_major_formatter(lambda value, _: f"{value:g}%")
        if splits:
            _legend_beside(figure, axes)
    return drawn


def _headroom(axes: Any) -> None:
    """The y axis from 0, a little above the tallest bar."""
    top = axes.get_ylim()[1]
    axes.set_ylim(0, top * 1.05 if top > 0 else 1)


def _legend_beside(figure: Any, axes: Any) -> None:
    """The splits' legend right of the plot, where no bar or line can lie under it (inside the
    axes it hid the tallest bars of whichever split peaked beneath it); the figure keeps its
    size, the plot narrowing to make room (constrained layout)."""
    figure.set_layout_engine("constrained")
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, handlelength=1.2)


def _shares(counts: list[int]) -> np.ndarray:
    values = np.asarray(counts, dtype=np.float64)
    total = values.sum()
    return values * 100 / total if total else values


def _legend(split: str, histogram: Histogram) -> str:
    return _text(f"{split} ({histogram.totals[split]:,})")


# ---- class balance ----------------------------------------------------------------------------
def _classes_size(balance: ClassBalance) -> tuple[float, float]:
    """Wider with more bars, taller with slanted names (to a point: the figure's height stays
    that of a histogram for short names)."""
    longest = max((len(balance.names[index]) for index in balance.shown), default=1)
    extra = 0.045 * min(longest, 24) if _slanted(balance) else 0.0
    return _classes_size_width(balance), HEIGHT + extra


def _slanted(balance: ClassBalance) -> bool:
    """Whether the class names would crowd each other level (about 7 characters to a bar group)."""
    names = [balance.names[index] for index in balance.shown]
    width = _classes_size_width(balance)
    return sum(len(name) + 2 for name in names) * 0.075 > width - 1.0


def _classes_size_width(balance: ClassBalance) -> float:
    bars = len(balance.shown) * max(1, len(balance.counts))
    return min(11.0, max(WIDTH, 1.2 + 0.13 * bars))


def _classes_drawer(balance: ClassBalance, colours: dict[str, str],
                    ylabel: str = "% of the split") -> Callable[[Any], None]:
    def drawn(figure: Any) -> None:
        axes = figure.add_subplot()
        positions = np.arange(len(balance.shown))
        splits = [split for split, counts in balance.counts.items() if sum(counts)]
        width = 0.84 / max(1, len(splits))
        for place, split in enumerate(splits):
            counts = np.asarray(balance.counts[split], dtype=np.float64)
            shares = counts[balance.shown] * 100 / counts.sum()
            offset = (place - (len(splits) - 1) / 2) * width
            axes.bar(positions + offset, shares, width=width, color=colours[split], alpha=0.85, linewidth=0,
                     label=_text(f"{split} ({int(counts.sum()):,})"))
        names = [_text(balance.names[index]) for index in balance.shown]
        slanted = _slanted(balance)
        axes.set_xticks(positions)
        axes.set_xticklabels(names, rotation=45 if slanted else 0, ha="right" if slanted else "center",
                             rotation_mode="anchor")
        axes.set_xlim(-0.6, len(positions) - 0.4)
        axes.set_ylabel(ylabel)
        _headroom(axes)
        axes.yaxis.set_major_formatter(lambda value, _: f"{value:g}%")
        if len(balance.shown) < len(balance.names):  # (the page's note says it in words too)
            drawn = len(balance.shown)
            label = (f"the {drawn} classes present" if drawn == balance.present else
                     f"the {drawn} most frequent of {balance.present} classes present")
            absent = f", {balance.absent} of {len(balance.names)} without any" if balance.absent else ""
            axes.set_xlabel(_text(f"{label}, most frequent first{absent}"))
        if splits:
            _legend_beside(figure, axes)
    return drawn


# ---- image grids ------------------------------------------------------------------------------
def mosaic_of(grid: ImageGrid) -> tuple[np.ndarray, list[float], list[tuple[int, int, int, int, int | None, str]]]:
    """The grid's thumbnails as one RGB image (rows of tiles on white), each row's centre, and
    the boxes drawn over them (left, top, right, bottom in the mosaic's pixels, edges included;
    class index; class name)."""
    images = [image for _, row in grid.rows for image in row]
    largest = max(max(image.shape[0], image.shape[1]) for image in images)
    size = ANNOTATED if grid.annotations else THUMBNAIL
    # tiny images (digits, icons) scaled up by a whole factor, pixels kept sharp; others fitted
    factor = max(1, size // largest) if largest <= size // 2 else 1
    tile = largest * factor if factor > 1 else size
    columns = max(len(row) for _, row in grid.rows)
    height = len(grid.rows) * (tile + GAP) + GAP
    width = columns * (tile + GAP) + GAP
    mosaic = np.full((height, width, 3), 255, dtype=np.uint8)
    centres = []
    marks: list[tuple[int, int, int, int, int | None, str]] = []
    for row_number, (_, row) in enumerate(grid.rows):
        top = GAP + row_number * (tile + GAP)
        centres.append(top + tile / 2)
        for column, image in enumerate(row):
            thumbnail = _thumbnail(image, tile, factor)
            annotation = grid.annotations[row_number][column] if grid.annotations else None
            if annotation is not None:
                thumbnail = _masked(thumbnail, annotation)
            left = GAP + column * (tile + GAP)
            down = top + (tile - thumbnail.shape[0]) // 2
            across = left + (tile - thumbnail.shape[1]) // 2
            mosaic[down:down + thumbnail.shape[0], across:across + thumbnail.shape[1]] = thumbnail
            if annotation is not None:
                marks.extend(_boxes(mosaic, annotation, down, across, thumbnail.shape[0], thumbnail.shape[1]))
    return mosaic, centres, marks


def box_pixels(box: Any, height: int, width: int) -> tuple[int, int, int, int]:
    """A box's (left, top, right, bottom) pixels on a thumbnail of `height` x `width`, edges
    included, from its [ymin, xmin, ymax, xmax] fractions: the pixels whose centres it covers
    (at least one)."""
    ymin, xmin, ymax, xmax = (float(value) for value in box)
    left = min(max(round(xmin * width), 0), width - 1)
    top = min(max(round(ymin * height), 0), height - 1)
    right = min(max(round(xmax * width) - 1, left), width - 1)
    bottom = min(max(round(ymax * height) - 1, top), height - 1)
    return left, top, right, bottom


def _boxes(mosaic: np.ndarray, annotation: Annotation, down: int, across: int, height: int,
           width: int) -> list[tuple[int, int, int, int, int | None, str]]:
    """Draws a thumbnail's boxes (at `down`, `across` in the mosaic) as rectangles LINE pixels
    wide inside their edges, in their class's colour; returns them in mosaic pixels."""
    marks = []
    for box, index, name in zip(annotation.boxes, annotation.classes, annotation.names):
        left, top, right, bottom = box_pixels(box, height, width)
        left, right, top, bottom = left + across, right + across, top + down, bottom + down
        colour = np.array(rgb(class_colour(index)), np.uint8)
        mosaic[top:min(top + LINE, bottom + 1), left:right + 1] = colour
        mosaic[max(bottom - LINE + 1, top):bottom + 1, left:right + 1] = colour
        mosaic[top:bottom + 1, left:min(left + LINE, right + 1)] = colour
        mosaic[top:bottom + 1, max(right - LINE + 1, left):right + 1] = colour
        marks.append((left, top, right, bottom, index, name))
    return marks


def _masked(thumbnail: np.ndarray, annotation: Annotation) -> np.ndarray:
    """A thumbnail with its masks over it: where a mask (resized to it, nearest) is not 0, the
    class's colour at MASK_OPACITY."""
    pixels = thumbnail.astype(np.float32)
    for mask in annotation.masks:
        indices = np.asarray(Image.fromarray(np.asarray(mask, np.uint8)).resize(
            (thumbnail.shape[1], thumbnail.shape[0]), Image.Resampling.NEAREST))
        for index in np.unique(indices[indices > 0]):
            where = indices == index
            pixels[where] = pixels[where] * (1 - MASK_OPACITY) + np.array(rgb(class_colour(int(index)))) * MASK_OPACITY
    return np.round(pixels).astype(np.uint8)


def _thumbnail(image: np.ndarray, tile: int, factor: int) -> np.ndarray:
    """An image as RGB fitting a tile: grey repeated, transparency over white."""
    pixels = np.asarray(image, dtype=np.uint8)
    if pixels.ndim == 2:
        pixels = pixels[:, :, None]
    if pixels.shape[2] == 4:
        alpha = pixels[:, :, 3:4].astype(np.float32) / 255
        pixels = (pixels[:, :, :3] * alpha + 255 * (1 - alpha)).astype(np.uint8)
    if pixels.shape[2] == 1:
        pixels = np.repeat(pixels, 3, axis=2)
    picture = Image.fromarray(pixels, "RGB")
    if factor > 1:
        picture = picture.resize((picture.width * factor, picture.height * factor), Image.Resampling.NEAREST)
    else:
        picture.thumbnail((tile, tile), Image.Resampling.LANCZOS)
    return np.asarray(picture)


def _grid_size(mosaic: np.ndarray, grid: ImageGrid) -> tuple[float, float]:
    labelled = any(label for label, _ in grid.rows)
    label_width = 0.15 + 0.065 * max((len(label) for label, _ in grid.rows), default=0) if labelled else 0.1
    # shown at 96 CSS pixels per inch: the thumbnails keep their pixel size on the page
    return mosaic.shape[1] / 96 + label_width, mosaic.shape[0] / 96 + 0.45


def _grid_drawer(mosaic: np.ndarray, centres: list[float], grid: ImageGrid,
                 marks: Sequence[tuple[int, int, int, int, int | None, str]] = ()) -> Callable[[Any], None]:
    def drawn(figure: Any) -> None:
        width, height = figure.get_size_inches()
        image_width, image_height = mosaic.shape[1] / 96, mosaic.shape[0] / 96
        axes = figure.add_axes((1 - image_width / width, 0.02, image_width / width, image_height / height))
        axes.imshow(mosaic, interpolation="nearest")
        axes.grid(False)
        for spine in axes.spines.values():
            spine.set_visible(False)
        axes.set_xticks([])
        axes.set_yticks(centres)
        axes.set_yticklabels([_text(label) for label, _ in grid.rows])
        axes.tick_params(axis="y", length=0, pad=4, labelsize=8.5, labelcolor=INK)
        for left, top, _, _, index, name in marks:  # each box's class, small, on its top left corner
            if name:
                axes.text(left - 0.5, top - 0.5, _text(name), fontsize=4.5, color="white", va="bottom", ha="left",
                          clip_on=True, bbox={"facecolor": class_colour(index), "edgecolor": "none", "pad": 0.6})
    return drawn
