"""The report of token ids (`type: text`): per split, the build's exact counts of the tokens, the
unknown ones and the texts cut to max_length, the vocabulary's ids used, the most frequent tokens
as the tokenizer spells them, and the first records as their tokens; ids where the tokenizer file
is gone. The statistics are checked against the records read back and the tokenizer's own
encoding, and against every order of merging the batches."""
from __future__ import annotations

import html
import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest

import tfrecord_builder as tb
from tfrecord_builder.read.report import report, report_data
from tfrecord_builder.write.info import read_info
from tfrecord_builder.write.stats import FeatureStatistics

from conftest import write_spec

pytest.importorskip("tokenizers")
TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "was", "good", "bad", "not", "a", "##s",
          ".", "!"]
ROWS = [("Good movie.", "train"), ("Not a good movie!", "train"), ("Bad, bad movies.", "train"),
        ("The movie was bad.", "test"), ("Good, good!", "test")]  # "," is no token: [UNK]
MAX_LENGTH = 7


def _spec(max_length: int | None = MAX_LENGTH) -> dict:
    review = {"type": "text", "tokenizer": "vocab.txt", **({"max_length": max_length} if max_length else {})}
    return {"name": "reviews", "source": {"builder": "jsonl", "path": "rows.jsonl", "split_column": "split"},
            "splits": {"train": {}, "test": {}}, "features": {"review": review},
            "output": {"dir": "out", "shuffle": False}}


def _files() -> dict[str, str]:
    return {"vocab.txt": "".join(token + "\n" for token in TOKENS),
            "rows.jsonl": "".join(json.dumps({"review": review, "split": split}) + "\n" for review, split in ROWS)}


@pytest.fixture
def reviews(tmp_path) -> tb.DatasetInfo:
    return tb.build(write_spec(tmp_path, _spec(), _files()), overwrite=True)


def _table(page: str, feature: str) -> dict[str, list[str]]:
    """A card's statistics table: row label -> its cells, split by split."""
    card = page.split(f'id="feature-{feature}"', 1)[1].split("</article>", 1)[0]
    table = card.split('<table class="stats">', 1)[1].split("</table>", 1)[0]
    return {html.unescape(label): [html.unescape(cell) for cell in re.findall(r"<td class=n>(.*?)</td>", row)]
            for label, row in re.findall(r"<tr><th>(.*?)</th>(.*?)</tr>", table.split("<tbody>")[1])}


def test_each_split_counts_its_tokens_unknown_ones_cuts_and_the_vocabularys_ids_used(reviews):
    statistics = reviews.statistics
    train, test = statistics["train"]["review"], statistics["test"]["review"]
    # [CLS] good movie . [SEP] / [CLS] not a good movie ! [SEP] / [CLS] bad [UNK] bad movie ##s [SEP] (. cut)
    assert train["tokens"] == {"count": 13, "unknown": 1, "unknown_rate": 1 / 13, "vocab_size": 15, "ids_used": 11,
                               "coverage": 11 / 15,
                               "top": [{"id": 6, "count": 3}, {"id": 8, "count": 2}, {"id": 9, "count": 2},
                                       {"id": 1, "count": 1}, {"id": 10, "count": 1}, {"id": 11, "count": 1},
                                       {"id": 12, "count": 1}, {"id": 13, "count": 1}, {"id": 14, "count": 1}]}
    assert train["marked"] == {"truncated": {"values": 1, "records": 1, "rate": 1 / 3}}
    # [CLS] the movie was bad . [SEP] / [CLS] good [UNK] good ! [SEP]
    assert test["tokens"]["count"] == 9 and test["tokens"]["unknown"] == 1 and test["tokens"]["ids_used"] == 10
    assert [top["id"] for top in test["tokens"]["top"]][:1] == [8]  # good, twice
    assert test["marked"] == {"truncated": {"values": 0, "records": 0, "rate": 0.0}}
    assert test["tallies"] == {"unknown_tokens": {"values": 1, "records": 1}}
    for split in ("train", "test"):  # against the records read back
        records = [record["review"].tolist() for record in tb.read(reviews.path, split)]
        figures = statistics[split]["review"]["tokens"]
        every = [number for ids in records for number in ids]
        assert figures["count"] == sum(number not in (2, 3) for number in every)
        assert figures["ids_used"] == len(set(every))
        counted = sorted(((-every.count(number), number) for number in set(every) - {2, 3}))
        assert [(top["id"], top["count"]) for top in figures["top"]] == [(number, -count) for count, number in counted]


def test_the_ids_cut_are_each_texts_ids_beyond_max_length_as_the_tokenizer_counts_them(tmp_path):
    from tfrecord_builder import text
    lines = [" ".join(["good movie"] * count) + "." for count in range(1, 9)]
    files = {**_files(), "rows.jsonl": "".join(json.dumps({"review": line, "split": "train"}) + "\n"
                                               for line in lines)}
    spec = {**_spec(6), "splits": {"train": {}}}
    info = tb.build(write_spec(tmp_path, spec, files), overwrite=True)
    whole = [len(ids) + 2 for ids in text.load(str(tmp_path / "vocab.txt")).encode(lines)]
    cut = {"values": sum(max(0, length - 6) for length in whole), "records": sum(length > 6 for length in whole),
           "rate": sum(length > 6 for length in whole) / len(lines)}
    assert info.statistics["train"]["review"]["marked"]["truncated"] == cut
    # Model Garden's layout pads the ids it keeps: the same ids are cut, counted the same
    garden = {**spec, "features": {"review": {**spec["features"]["review"], "layout": "model_garden"}}}
    laid = tb.build(write_spec(tmp_path / "garden", garden, files), overwrite=True)
    assert laid.statistics["train"]["review"]["marked"]["truncated"] == cut
    # packed (every text cut to the pack's 6 ids, one a pack): the same ids cut, each pack's its example's
    packed = tb.build(write_spec(tmp_path / "packed", {**spec, "pack": {"length": 6}}, files), overwrite=True)
    assert packed.statistics["train"]["review"]["marked"]["truncated"] == cut
    without = tb.build(write_spec(tmp_path / "all", {**spec, "features": {"review": {"type": "text",
                                                                                      "tokenizer": "vocab.txt"}}},
                                  files), overwrite=True)
    assert "marked" not in without.statistics["train"]["review"]  # nothing cut without max_length


def test_the_counts_are_the_same_in_every_order_of_merging(reviews):
    feature = reviews.spec.features["review"]
    from tfrecord_builder.features.context import EncodeContext
    from tfrecord_builder.features.notices import Notices
    texts = [review for review, _ in ROWS] * 3
    parts = []
    for start in range(0, len(texts), 4):
        encoded = feature.encode(texts[start:start + 4], EncodeContext(lambda row: f"row {row}", None, "python",
                                                                       Notices()))
        part = FeatureStatistics(feature)
        part.add(feature.statistics_values(encoded))
        parts.append(part)
    results = set()
    for order in itertools.permutations(parts):
        total = FeatureStatistics(feature)
        for part in order:
            total.merge(part)
        restored = FeatureStatistics(feature)  # (a checkpoint's state reads back to the same figures)
        restored.restore(json.loads(json.dumps(total.state())))
        assert restored.to_dict() == total.to_dict()
        # (the ids' mean and std are floating point, merged by Chan's formula: equal to the last bits only)
        counted = {key: value for key, value in total.to_dict().items() if key not in ("mean", "std")}
        results.add(json.dumps(counted, sort_keys=True))
    assert len(results) == 1
    figures = json.loads(results.pop())
    assert figures["tokens"]["count"] == 3 * (13 + 9) and figures["marked"]["truncated"]["records"] == 3


def test_the_card_shows_the_rates_the_top_tokens_and_records_as_their_tokens(reviews, tmp_path):
    pytest.importorskip("matplotlib")
    page = report(reviews.path, png=tmp_path / "png", sample=None)
    rows = _table(page, "review")
    assert rows["tokens (special ids left out)"] == ["13", "9"]
    assert rows["unknown tokens"] == ["1 (7.7%)", "1 (11.1%)"]
    assert rows["texts with unknown tokens"] == ["1", "1"]
    assert rows["texts cut to max_length"] == ["1 (33.3%)", "0 (0%)"]
    assert rows["ids cut off"] == ["1", "0"]
    assert rows["vocabulary ids used"] == ["11 of 15 (73.3%)", "10 of 15 (66.7%)"]
    assert rows["tokens known (not unknown)"] == ["92.3%", "88.9%"]
    assert rows["length (ids per record)"] == ["5–7, mean 6.3 ± 0.9", "6–7, mean 6.5 ± 0.5"]
    assert '<span class="badge kind-text">token ids</span>' in page
    top = page.split("the most frequent of 13 tokens</caption>", 1)[1].split("</table>", 1)[0]
    assert re.findall(r'<td class="value" title="[^"]*">(.*?)</td><td class=n>(\d+)</td>', top) == [
        ("movie", "3"), ("good", "2"), ("bad", "2"), ("[UNK]", "1"), ("not", "1"), ("a", "1"), ("##s", "1"),
        (".", "1"), ("!", "1")]
    assert re.findall(r'<p class="tokens"><code>(.*?)</code></p>', page) == [
        "[CLS] good movie . [SEP]", "[CLS] not a good movie ! [SEP]", "[CLS] bad [UNK] bad movie ##s [SEP]",
        "[CLS] the movie was bad . [SEP]", "[CLS] good [UNK] good ! [SEP]"]
    assert "the first 3 records read, as tokens" in page and "the first 2 records read, as tokens" in page
    assert (tmp_path / "png" / "review-lengths.png").stat().st_size > 0
    lengths = next(feature for feature in report_data(read_info(reviews.path), sample=None).features).lengths
    assert lengths.counts == {"train": [1, 0, 2], "test": [0, 1, 1]}  # 5, 7, 7 ids and 7, 6 (bins 5, 6, 7)


def test_without_the_tokenizer_file_the_page_shows_ids_and_says_why(reviews, tmp_path):
    (tmp_path / "vocab.txt").unlink()
    data = report_data(read_info(reviews.path), sample=None)
    review = data.features[0]
    assert review.top_values["train"][:3] == [("#6", 3), ("#8", 2), ("#9", 2)]
    assert review.examples["train"][0] == "#2 #8 #6 #13 #3"
    assert review.note.startswith("Tokens shown as their ids (#id): feature `review`: tokenizer ")
    assert "vocab.txt: file not found" in review.note
    page = report(reviews.path, sample=None)
    assert "#2 #8 #6 #13 #3" in page and "file not found" in page


def _counted(path: Path) -> dict:
    return json.loads((path / "tfrecord_builder.json").read_text(encoding="utf-8"))["statistics"]


def test_the_metadata_holds_the_top_tokens_not_the_vocabulary(reviews):
    figures = _counted(Path(reviews.path))["train"]["review"]["tokens"]
    assert len(figures["top"]) <= 20 and set(figures) == {"count", "unknown", "unknown_rate", "vocab_size",
                                                           "ids_used", "coverage", "top"}
    assert np.isclose(figures["coverage"], 11 / 15)


TOKENS_PROBE = """<script>
window.addEventListener("load", function () {
  var boxes = Array.prototype.map.call(document.querySelectorAll("p.tokens"), function (line) {
    var box = line.getBoundingClientRect();
    return [Math.round(box.left), Math.round(box.right), Math.round(box.height)].join(",");
  });
  document.body.setAttribute("data-tokens", boxes.join(";"));
});
</script>
"""


@pytest.mark.browser
def test_in_a_browser_the_text_card_draws_its_figure_and_lays_its_tokens_out_in_the_window(reviews, tmp_path):
    from .browser import WINDOW, body_attribute, dump_dom
    pytest.importorskip("matplotlib")
    text = report(reviews.path, sample=None)
    probe = tmp_path / "probe.html"
    probe.write_text(text.replace("</body>", TOKENS_PROBE + "</body>"), encoding="utf-8")
    laid_out = dump_dom(probe)
    assert laid_out.console == []
    images = len(re.findall(r"<img ", text))
    assert images >= 1 and body_attribute(laid_out.stdout, "data-images-loaded") == f"{images}/{images}"
    boxes = [[int(number) for number in box.split(",")] for box in body_attribute(laid_out.stdout,
                                                                                  "data-tokens").split(";")]
    assert len(boxes) == len(ROWS)
    assert all(0 <= left < right <= WINDOW[0] and height > 0 for left, right, height in boxes)
