"""The report in a real browser: headless Chromium opens the page, every figure decodes and is
drawn where the page lays it out, in the splits' colours, and the console stays silent. The
checks are shown to work on pages made to fail them."""
from __future__ import annotations

import re

import numpy as np
import pytest
from PIL import Image

from tfrecord_builder.read.report import report
from tfrecord_builder.read.report.style import CLASS_COLOURS, SPLIT_COLOURS

from .browser import (CONTROL, PROBE, WINDOW, body_attribute as _body_attribute, dump_dom, pixels_near as _pixels_near,
                      screenshot)

pytestmark = pytest.mark.browser

NETWORK_REFERENCE = re.compile(r"""(?:\b(?:src|href|action|poster|srcset)\s*=\s*["']?\s*|url\(\s*["']?\s*)"""
                               r"""(?:https?:)?//""", re.IGNORECASE)


@pytest.mark.parametrize("name", ["digits", "wine"])
def test_the_figures_are_drawn_where_the_page_puts_them_and_the_console_is_silent(datasets, tmp_path, name):
    page = tmp_path / f"{name}.html"
    report(datasets[name], page, sample=20_000)
    text = page.read_text(encoding="utf-8")
    assert not NETWORK_REFERENCE.search(text)
    assert "http://" not in text and "https://" not in text

    probe = tmp_path / "probe.html"
    probe.write_text(text.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    laid_out = dump_dom(probe)
    shot = screenshot(page, tmp_path / "shot.png")
    assert laid_out.console == [] and shot.console == []

    images = re.findall(r"<img ", text)
    loaded = _body_attribute(laid_out.stdout, "data-images-loaded")
    assert loaded == f"{len(images)}/{len(images)}"  # every figure decoded (complete, naturalWidth > 0)

    pixels = np.asarray(Image.open(tmp_path / "shot.png").convert("RGB"))
    assert pixels.shape[:2] == (WINDOW[1], WINDOW[0])
    boxes = [item.split(",") for item in _body_attribute(laid_out.stdout, "data-probe").split(";")]
    train, test = SPLIT_COLOURS[:2]
    checked = 0
    for file, left, top, width, height in boxes:
        left, top, width, height = int(left), int(top), int(width), int(height)
        assert width > 100 and height > 60, f"{file} is laid out {width}x{height}"
        if top + height > WINDOW[1]:
            continue  # below the screenshot
        region = pixels[top:top + height, left:left + width]
        if "-images-" in file:  # digits: white strokes on black tiles
            assert (region.max(axis=2) < 40).mean() > 0.2, file
        else:  # both splits' bars or outlines, in their colours
            assert _pixels_near(region, train) > 200, file
            assert _pixels_near(region, test) > 200, file
        checked += 1
    assert checked >= (3 if name == "digits" else 5)
    # outside the figures, the page around them is drawn too: the header's totals, on white
    header = pixels[:150, :]
    assert (header.min(axis=2) < 100).sum() > 500


def test_the_console_check_sees_errors_and_uncaught_exceptions(tmp_path):
    page = tmp_path / "failing.html"
    page.write_text('<!DOCTYPE html><html><body><p>a page that fails</p><script>'
                    'console.error("deliberate failure 42");</script>'
                    '<script>undefined_function_7();</script></body></html>', encoding="utf-8")
    outcome = dump_dom(page)
    assert any("deliberate failure 42" in message for message in outcome.console), outcome.console
    assert any("undefined_function_7" in message for message in outcome.console), outcome.console


def test_the_checks_see_a_figure_from_the_network(datasets, tmp_path):
    text = report(datasets["wine"], sample=50)
    reaching = text.replace("</body>", '<img src="http://example.com/plot.png" alt="remote"></body>')
    assert NETWORK_REFERENCE.search(reaching)
    page = tmp_path / "reaching.html"
    page.write_text(reaching, encoding="utf-8")
    images = len(re.findall(r"<img ", reaching))
    loaded = _body_attribute(dump_dom(page).stdout, "data-images-loaded")
    assert loaded == f"{images - 1}/{images}"  # host names resolve to nothing: the remote image never loads


def test_the_network_pattern_flags_every_kind_of_reference():
    for reference in ('<img src="https://x.org/a.png">', "<a href='http://x.org'>", '<link href="//cdn.x/a.css">',
                      "<div style=\"background: url('https://x/a.png')\">", '<script src = "http://x/a.js">'):
        assert NETWORK_REFERENCE.search(reference), reference
    assert not NETWORK_REFERENCE.search('<img src="data:image/png;base64,AAAA"><a href="#features">')


# appended to a copy of the page: types into the filter box, then clicks a kind button
FILTERING = """<script>
window.addEventListener("load", function () {
  function visible() {
    return Array.prototype.filter.call(document.querySelectorAll("article.feature"), function (card) {
      return !card.hidden;
    }).map(function (card) { return card.id; }).join(" ") + " | " + document.getElementById("shown").textContent;
  }
  var input = document.getElementById("filter");
  input.value = "alc";
  input.dispatchEvent(new Event("input"));
  var typed = visible();
  document.querySelector('button.kind[data-kind="class_label"]').click();
  var clicked = visible();
  input.value = "no such feature";
  input.dispatchEvent(new Event("input"));
  document.body.setAttribute("data-filtered", [typed, clicked, visible(),
                             String(document.getElementById("no-match").hidden)].join(" / "));
});
</script>
"""


def test_the_filter_box_and_kind_buttons_filter_the_features(datasets, tmp_path):
    page = tmp_path / "filtering.html"
    page.write_text(report(datasets["wine"], sample=50).replace("</body>", FILTERING + "</body>"), encoding="utf-8")
    outcome = dump_dom(page)
    assert outcome.console == []
    assert _body_attribute(outcome.stdout, "data-filtered") == (
        "feature-alcohol feature-alcalinity_of_ash | 2 of 14 / feature-cultivar | 1 of 14 /  | 0 of 14 / false")


def test_binary_values_and_sparse_classes_in_the_browser(tmp_path):
    """A COCO build's instance masks (a PNG an object) and 80 classes with 5 present: the page
    has no control character (Chromium would draw each), every figure decodes, the masks'
    thumbnails are laid out as a figure, the class bars are the 5 present, and the console is silent."""
    pytest.importorskip("pycocotools")
    from support.coco_masks import build_coco_masks

    info = build_coco_masks(tmp_path / "source", images=6, per_image=3)
    page = tmp_path / "coco.html"
    report(info.path, page, sample=None)
    text = page.read_text(encoding="utf-8")
    assert CONTROL.search(text) is None
    probe = tmp_path / "probe.html"
    probe.write_text(text.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    laid_out = dump_dom(probe)
    assert laid_out.console == []
    assert CONTROL.search(laid_out.stdout) is None
    images = re.findall(r"<img ", text)
    assert _body_attribute(laid_out.stdout, "data-images-loaded") == f"{len(images)}/{len(images)}"
    boxes = {item.split(",")[0]: [int(number) for number in item.split(",")[1:]]
             for item in _body_attribute(laid_out.stdout, "data-probe").split(";")}
    left, top, width, height = boxes["masks-images-train.png"]
    assert width > 100 and height > 40
    shot = screenshot(page, tmp_path / "shot.png")
    assert shot.console == []
    pixels = np.asarray(Image.open(tmp_path / "shot.png").convert("RGB"))
    assert top + height <= WINDOW[1]
    region = pixels[top:top + height, left:left + width]  # black tiles, class 1's colour where each mask is 1
    assert (region.max(axis=2) < 30).mean() > 0.2
    assert _pixels_near(region, CLASS_COLOURS[1], tolerance=30) > 200
    assert "PNG 64×48" in laid_out.stdout
    assert "The bars: the 5 classes present, most frequent first; 75 of the 80 classes have no values." in laid_out.stdout
