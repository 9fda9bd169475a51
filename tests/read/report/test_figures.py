"""The report's figures as matplotlib lays them out: the splits' legend beside the plot, never
over its bars or lines."""
from __future__ import annotations

import pytest

from tfrecord_builder.read.report import report_data
from tfrecord_builder.read.report.figures import STYLE, _jobs, _matplotlib
from tfrecord_builder.write.info import read_info


@pytest.mark.parametrize("name, figures", [("wine", 14), ("digits", 1)])
def test_the_legend_lies_beside_the_plot_not_over_it(datasets, name, figures):
    matplotlib, Figure, Canvas = _matplotlib()
    data = report_data(read_info(str(datasets[name])), sample=200)
    checked = 0
    for job in _jobs(data):
        if "-images-" in job.stem:
            continue  # image grids have no legend
        with matplotlib.rc_context(STYLE):
            figure = Figure(figsize=job.size, dpi=72)
            Canvas(figure)
            job.drawer(figure)
            figure.canvas.draw()
            axes = figure.axes[0]
            legend, plot = axes.get_legend().get_window_extent(), axes.get_window_extent()
            assert legend.x0 >= plot.x1, f"{job.stem}: legend from {legend.x0:.0f}, plot to {plot.x1:.0f}"
            assert legend.x1 <= figure.bbox.x1 + 1, f"{job.stem}: the legend runs past the figure"
        checked += 1
    assert checked == figures  # histograms and class balances
