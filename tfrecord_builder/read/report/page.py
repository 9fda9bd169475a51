"""The report as one HTML page: `page(data, plots)`.

Self-contained: the style sheet and the script are inline, figures are PNG `data:` URIs, fonts
are the system's, so the page opens offline, from an e-mail or a CI artefact, and fetches
nothing. Every text from the dataset (names, descriptions, values, the spec) is escaped, and the
page holds no control character (a value of an older dataset's statistics may: shown as `\x00`).
"""
from __future__ import annotations

import base64
import io
import json
import re
import wave
from html import escape
from typing import Any

import numpy as np

from ...sizes import size_text
from ...version import __version__
from .data import AudioClip, ClassBalance, FeatureData, ObjectsData, ReportData
from .wording import share
from .figures import Plot, waveform_stem
from .style import INK, MUTED, RULE, split_colours

KIND_NAMES = {"number": "number", "string": "text", "binary": "binary", "class_label": "class label", "image": "image",
              "bbox": "boxes", "audio": "audio", "text": "token ids", "other": "other"}
SHARDS_OPEN = 16  # a split's shard table starts folded when it has more shards
# control characters (C0 but tab, line feed, carriage return; DEL and C1): HTML has no place for them
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def page(data: ReportData, plots: list[Plot]) -> str:
    """The whole page."""
    colours = split_colours([split.name for split in data.splits])
    by_feature: dict[str, list[Plot]] = {}
    by_objects: dict[str, list[Plot]] = {}
    for plot in plots:
        (by_objects if plot.section == "objects" else by_feature).setdefault(plot.feature, []).append(plot)
    title = f"{data.name} {data.version}"
    body = "\n".join([
        _header(data, colours),
        '<main class="wrap">',
        _splits(data, colours),
        _quality(data, colours),
        _objects(data, by_objects, colours),
        _features(data, by_feature, colours),
        _summary(data),
        _shards(data, colours),
        _spec(data),
        "</main>",
        _footer(data),
    ])
    html = (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<meta name="generator" content="tfrecord-builder {escape(__version__)}">\n'
            f"<title>{escape(title)} · dataset report</title>\n<style>{CSS}</style>\n</head>\n"
            f"<body>\n{body}\n<script>{SCRIPT}</script>\n</body>\n</html>\n")
    return visible(html)


def visible(text: str) -> str:
    """`text` with each control character written out (`\\x00`): binary values are shown as what
    they are (binary.py), so only a value of an older dataset's statistics can hold one."""
    return CONTROL.sub(lambda found: f"\\x{ord(found.group()):02x}", text)


# ---- header -----------------------------------------------------------------------------------
def _header(data: ReportData, colours: dict[str, str]) -> str:
    meta = [("format", data.format), ("compression", data.compression), ("label", data.label or "none"),
            ("built with", f"tfrecord-builder {data.tool_version}" if data.tool_version else "tfrecord-builder"),
            ("folder", data.path)]
    totals = [("examples", f"{data.num_examples:,}"), ("splits", f"{len(data.splits)}"),
              ("shards", f"{data.num_shards:,}"), ("size", _size(data.num_bytes)),
              ("features", f"{data.num_features:,}"), ("skipped", f"{data.skipped:,}")]
    legend = " ".join(_chip(split.name, colours) for split in data.splits)
    lead = f'<p class="lead">{escape(data.description)}</p>' if data.description else ""
    described = "".join(f"<div><dt>{escape(key)}</dt><dd>{escape(value)}</dd></div>" for key, value in meta)
    counted = "".join(f'<div class="total"><span class="number">{escape(value)}</span><span class="what">{key}</span>'
                      "</div>" for key, value in totals)
    links = "".join(f'<a href="#{anchor}">{text}</a>' for anchor, text in (
        ("splits", "Splits"), ("quality", "Missing and skipped"))
        + ((("objects", "Objects"),) if data.objects else ()) + (("features", "Features"),)
        + ((("summary", "Summary table"),) if data.summary else ()) + (("shards", "Shards"), ("spec", "Spec")))
    return f"""<header class="top"><div class="wrap">
<div class="eyebrow">Dataset report</div>
<h1>{escape(data.name)} <span class="version">{escape(data.version)}</span></h1>
{lead}
<dl class="meta">{described}</dl>
<div class="totals">{counted}</div>
<nav class="toc">{links}<span class="legend">{legend}</span></nav>
</div></header>"""


def _chip(split: str, colours: dict[str, str]) -> str:
    return f'<span class="chip" style="--split:{colours[split]}">{escape(split)}</span>'


# ---- splits -----------------------------------------------------------------------------------
def _splits(data: ReportData, colours: dict[str, str]) -> str:
    rows = []
    for split in data.splits:
        read = (f"{split.sampled:,} of {split.num_examples:,} (a sample)" if split.is_sample
                else f"all {split.sampled:,}")
        rows.append(f"<tr><td>{_chip(split.name, colours)}</td><td class=n>{split.num_examples:,}</td>"
                    f"<td class=n>{share(split.num_examples, data.num_examples)}</td>"
                    f"<td class=n>{len(split.shards):,}</td>"
                    f'<td class=n title="{split.num_bytes:,} bytes">{_size(split.num_bytes)}</td>'
                    f"<td class=n>{read}</td></tr>")
    how = ("the first records of each shard, in proportion to its size; the build wrote records in shuffled "
           "order, so they are a random sample" if data.shuffled else
           "the first records of each shard, in proportion to its size (the build kept the source's order: "
           "not a random sample)")
    note = (f'<p class="note">Counts and statistics on this page are exact, from the build. Histograms, lengths '
            f'and images come from the records read: up to {data.sample:,} per split, {how}.</p>'
            if data.is_sample else
            '<p class="note">Counts and statistics on this page are exact, from the build; histograms, lengths and '
            'images come from reading every record.</p>')
    head = "".join(f"<th{' class=n' if index else ''}>{text}</th>" for index, text in enumerate(
        ("split", "examples", "share", "shards", "size", "records read for the plots")))
    total = (f"<tr><td>total</td><td class=n>{data.num_examples:,}</td><td class=n></td>"
             f'<td class=n>{data.num_shards:,}</td><td class=n title="{data.num_bytes:,} bytes">'
             f"{_size(data.num_bytes)}</td><td></td></tr>")
    return f"""<section id="splits"><h2>Splits</h2>
<table class="grid"><thead><tr>{head}</tr></thead>
<tbody>{''.join(rows)}</tbody>
<tfoot>{total}</tfoot></table>
{note}</section>"""


# ---- missing, NaN, skipped --------------------------------------------------------------------
def _quality(data: ReportData, colours: dict[str, str]) -> str:
    parts = []
    if data.skipped:
        entries = "".join(f"<tr><td>{escape(str(entry.get('record', '')))}</td>"
                          f"<td>{escape(str(entry.get('reason', '')))}</td></tr>" for entry in data.skipped_entries)
        more = (f' (the first {len(data.skipped_entries)} below)' if data.skipped > len(data.skipped_entries)
                and data.skipped_entries else "")
        parts.append(f'<p><span class="flag warn">{data.skipped:,} skipped</span> records left out while building '
                     f'(<code>on_error: skip</code>), each listed in <code>skipped.jsonl</code>{more}.</p>')
        if entries:
            parts.append(f'<table class="grid skipped"><thead><tr><th>record</th><th>reason</th></tr></thead>'
                         f"<tbody>{entries}</tbody></table>")
    else:
        parts.append('<p><span class="flag ok">0 skipped</span> no record was left out while building.</p>')
    for what, attribute, none in (
            ("missing in the source", "missing",
             "no feature had values missing in the source (or the build did not count them)"),
            ("filled by the default", "filled", "no value was filled by a feature's default"),
            ("NaN or ±inf", "non_finite", "no NaN or infinite values")):
        found = [feature for feature in data.features if getattr(feature, attribute)]
        if not found:
            parts.append(f'<p><span class="flag ok">0 {escape(what)}</span> {escape(none)}.</p>')
            continue
        head = "".join(f"<th class=n>{_chip(split.name, colours)}</th>" for split in data.splits)
        rows = "".join(
            f'<tr><td><a href="#feature-{escape(feature.name)}">{escape(feature.name)}</a></td>'
            + "".join(f"<td class=n>{getattr(feature, attribute).get(split.name, 0):,}</td>" for split in data.splits)
            + "</tr>" for feature in found)
        kept = {"missing": " (filled by the feature's default, or left empty)",
                "filled": " (left out of the statistics and histograms, which describe the source's values)",
                "non_finite": " (allow_nan)"}[attribute]
        parts.append(f'<p><span class="flag warn">{escape(what)}</span> values per feature and split{kept}:</p>'
                     f'<table class="grid narrow"><thead><tr><th>feature</th>{head}</tr></thead>'
                     f"<tbody>{rows}</tbody></table>")
    return f'<section id="quality"><h2>Missing, NaN and skipped</h2>{"".join(parts)}</section>'


# ---- objects (bbox features) ------------------------------------------------------------------
def _objects(data: ReportData, plots: dict[str, list[Plot]], colours: dict[str, str]) -> str:
    """A card per bbox feature: its objects' counts, objects per image, box sizes and aspect
    ratios, and objects per class."""
    if not data.objects:
        return ""
    cards = "\n".join(_objects_card(objects, plots.get(objects.name, []), data, colours) for objects in data.objects)
    return f'<section id="objects"><h2>Objects</h2>\n{cards}\n</section>'


def _objects_card(objects: ObjectsData, plots: list[Plot], data: ReportData, colours: dict[str, str]) -> str:
    splits = [split.name for split in data.splits]
    head = "".join(f"<th class=n>{_chip(split, colours)}</th>" for split in splits)
    rows = "".join(f"<tr><th>{escape(label)}</th>" + "".join(f"<td class=n>{escape(texts.get(split, '–'))}</td>"
                                                            for split in splits) + "</tr>"
                   for label, texts in objects.rows)
    table = f'<table class="stats"><thead><tr><th></th>{head}</tr></thead><tbody>{rows}</tbody></table>' if rows else ""
    on = f" on image <code>{escape(objects.image)}</code>" if objects.image else ""
    classes = (f" Classes from <code>{escape(objects.label)}</code>, one per box"
               + (" (exact counts, from the build)." if objects.classes_exact else
                  f", counted in {objects.sampled:,} sampled images (the build's statistics hold none).")
               if objects.label else " No per-object class label (<code>shape: [null]</code>) gives the boxes classes.")
    if objects.classes is not None and classes_note(objects.classes, "objects"):
        classes += f" {escape(classes_note(objects.classes, 'objects'))}"
    sampled = (f"from {objects.sampled:,} sampled images" if data.is_sample else f"from all {objects.sampled:,} images")
    unit = "in pixels" if objects.aspect_pixels else "in fractions of the image, whose size in pixels is unknown"
    note = (f'<p class="note">Boxes of <code>{escape(objects.name)}</code>{on}. Counts of objects are exact; the '
            f"histograms are {sampled}: objects per image, each box's area as a fraction of its image's, and its "
            f"aspect ratio (width / height, {unit}).{classes}</p>")
    figures = "".join(_figure(plot) for plot in plots)
    return (f'<article class="objects" id="objects-{escape(objects.name)}">\n<header><h3>{escape(objects.name)}</h3>'
            f'<span class="badge kind-bbox">boxes</span></header>\n{note}'
            f'<div class="body">{table}<div class="plots">{figures}</div></div>\n</article>')


# ---- features ---------------------------------------------------------------------------------
def _features(data: ReportData, plots: dict[str, list[Plot]], colours: dict[str, str]) -> str:
    kinds: dict[str, int] = {}
    for feature in data.features:
        kinds[feature.kind] = kinds.get(feature.kind, 0) + 1
    buttons = "".join(f'<button type="button" class="kind kind-{kind}" data-kind="{kind}">{escape(KIND_NAMES[kind])} '
                      f"<b>{count}</b></button>" for kind, count in kinds.items())
    cards = "\n".join(_feature(feature, plots.get(feature.name, []), data, colours) for feature in data.features)
    return f"""<section id="features"><h2>Features</h2>
<div class="toolbar"><input type="search" id="filter" placeholder="Filter features by name, type or description"
 aria-label="Filter features" autocomplete="off">
<span class="kinds">{buttons}</span><span id="shown" class="shown">{len(data.features)} of {len(data.features)}</span></div>
<p id="no-match" class="note" hidden>No feature matches the filter.</p>
{cards}
</section>"""


def _feature(feature: FeatureData, plots: list[Plot], data: ReportData, colours: dict[str, str]) -> str:
    search = " ".join([feature.name, feature.kind, KIND_NAMES[feature.kind], feature.declared, feature.description,
                       "label" if feature.is_label else "", "sequence step" if feature.per_step else ""]).lower()
    badges = [f'<span class="badge kind-{feature.kind}">{escape(KIND_NAMES[feature.kind])}</span>']
    if feature.is_label:
        badges.append('<span class="badge label">label</span>')
    if feature.per_step:
        badges.append('<span class="badge step">per step</span>')
    description = f'<p class="description">{escape(feature.description)}</p>' if feature.description else ""
    waveforms = {plot.stem: plot for plot in plots if plot.stem.startswith(f"{feature.name}-waveform-")}
    figures = "".join(_figure(plot) for plot in plots if plot.stem not in waveforms)
    extra = _clips(feature, waveforms, data)
    extra += _top_values(feature, data, colours) if feature.top_values else ""
    extra += _examples(feature, data, colours) if feature.examples else ""
    extra += _contents(feature, data, colours) if feature.contents else ""
    extra += f'<p class="note">{escape(feature.note)}</p>' if feature.note else ""
    if feature.classes is not None:
        extra += _class_counts(feature, data, colours)
    if feature.kind == "bbox" and any(objects.name == feature.name for objects in data.objects):
        extra += (f'<p class="note">Objects per image, box sizes, aspect ratios and classes: '
                  f'<a href="#objects-{escape(feature.name)}">Objects</a>.</p>')
    if feature.images:
        sampled = " of the records read" if data.is_sample else ""
        shown = f" {escape(feature.images[0].shown)}" if feature.images[0].shown else ""
        stored = ("" if feature.kind == "binary" else
                  ", as stored (not resized or scaled for <code>input_fn</code>)")
        extra += f'<p class="note">Thumbnails: {escape(feature.images[0].note)}{sampled}{stored}.{shown}</p>'
    empty = "" if feature.rows or figures or extra else '<p class="note">No statistics for this feature.</p>'
    declared = f'<code class="declared">{escape(feature.declared)}</code>'
    body = f'<div class="body">{_stats_table(feature, data, colours)}<div class="plots">{figures}</div></div>'
    return (f'<article class="feature" id="feature-{escape(feature.name)}" data-search="{escape(search)}" '
            f'data-kind="{feature.kind}">\n<header><h3>{escape(feature.name)}</h3>{"".join(badges)}{declared}</header>\n'
            f"{description}{body}{extra}{empty}\n</article>")


MAX_PLAYED_SECONDS = 10  # a clip's player holds at most this much (16-bit WAV in the page: ~2 MB at 48 kHz)


def _clips(feature: FeatureData, waveforms: dict[str, Plot], data: ReportData) -> str:
    """An audio feature's clip per class: its waveform and a player of its own samples, inline (a
    data: URI of a 16-bit WAV: nothing is fetched)."""
    if not feature.clips:
        return ""
    items = []
    for index, clip in enumerate(feature.clips):
        plot = waveforms.get(waveform_stem(feature.name, index))
        image = _figure(plot) if plot is not None else ""
        source = "data:audio/wav;base64," + base64.b64encode(wav_bytes(clip)).decode("ascii")
        items.append(f'<div class="clip">{image}<audio controls preload="none" src="{source}" '
                     f'aria-label="{escape(clip.label or feature.name)} ({escape(clip.split)})"></audio></div>')
    sampled = " of the records read" if data.is_sample else ""
    return (f'<p class="note">A clip per class: each split\'s first{sampled}, as stored (players hold at most '
            f'{MAX_PLAYED_SECONDS} s).</p><div class="clips">{"".join(items)}</div>')


def wav_bytes(clip: AudioClip) -> bytes:
    """A clip as a 16-bit PCM WAV file (its first MAX_PLAYED_SECONDS)."""
    samples = clip.samples[: MAX_PLAYED_SECONDS * clip.rate].reshape(min(len(clip.samples),
                                                                         MAX_PLAYED_SECONDS * clip.rate), -1)
    pcm = np.clip(np.rint(samples * 32768.0), -32768, 32767).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as file:
        file.setnchannels(pcm.shape[1])
        file.setsampwidth(2)
        file.setframerate(clip.rate)
        file.writeframes(pcm.tobytes())
    return buffer.getvalue()


def _stats_table(feature: FeatureData, data: ReportData, colours: dict[str, str]) -> str:
    if not feature.rows:
        return ""
    splits = [split.name for split in data.splits]
    head = "".join(f"<th class=n>{_chip(split, colours)}</th>" for split in splits)
    rows = "".join(f"<tr><th>{escape(label)}</th>" + "".join(f"<td class=n>{escape(texts.get(split, '–'))}</td>"
                                                            for split in splits) + "</tr>"
                   for label, texts in feature.rows)
    return f'<table class="stats"><thead><tr><th></th>{head}</tr></thead><tbody>{rows}</tbody></table>'


def _figure(plot: Plot) -> str:
    width, height = plot.size
    css_width = plot.css_width
    source = "data:image/png;base64," + base64.b64encode(plot.png).decode("ascii")
    # an image grid's boxes as drawn (left, top, right, bottom in the grid's own pixels, class, name)
    boxes = (f' data-boxes="{escape(json.dumps([list(mark) for mark in plot.marks], ensure_ascii=False))}"'
             if plot.marks else "")
    return (f'<figure><img src="{source}" alt="{escape(plot.title)}" width="{css_width}" '
            f'height="{round(height * css_width / width)}" data-file="{escape(plot.stem)}.png"{boxes}></figure>')


def _top_values(feature: FeatureData, data: ReportData, colours: dict[str, str]) -> str:
    tables = []
    for split in data.splits:
        tops = feature.top_values.get(split.name)
        if not tops:
            continue
        total = feature.num_values.get(split.name) or sum(count for _, count in tops)
        largest = max(count for _, count in tops) or 1
        # bars relative to the most frequent value, so the differences between the top ten show
        rows = "".join(
            f'<tr><td class="value" title="{escape(value)}">{escape(_shortened(value))}</td><td class=n>{count:,}</td>'
            f'<td class="bar"><span style="width:{100 * count / largest:.1f}%;background:{colours[split.name]}">'
            "</span></td>"
            f'<td class="n share">{share(count, total)}</td></tr>' for value, count in tops)
        what = "tokens" if feature.kind == "text" else "values"
        tables.append(f'<table class="tops"><caption>{_chip(split.name, colours)} the most frequent of {total:,} {what}'
                      f"</caption><tbody>{rows}</tbody></table>")
    return f'<div class="top-values">{"".join(tables)}</div>'


def _examples(feature: FeatureData, data: ReportData, colours: dict[str, str]) -> str:
    """A text's first records read in each split, as their tokens (special ones included)."""
    parts = "".join(f'<div class="examples"><div class="caption">{_chip(split, colours)} the first '
                    f"{len(texts)} record{'s' if len(texts) != 1 else ''} read, as tokens</div>"
                    + "".join(f'<p class="tokens"><code>{escape(text)}</code></p>' for text in texts) + "</div>"
                    for split, texts in feature.examples.items())
    return f'<div class="top-values">{parts}</div>'


def _contents(feature: FeatureData, data: ReportData, colours: dict[str, str]) -> str:
    """What a binary feature's values read are, per split: each kind ("PNG 64×48") and its share."""
    tables = []
    for contents in feature.contents:
        rows = "".join(f'<tr><td class="value">{escape(what or "data of no known kind")}</td><td class=n>{number:,}</td>'
                       f'<td class="n share">{share(number, contents.described)}</td></tr>'
                       for what, number in contents.kinds)
        which = (f"the first {contents.described:,} of {contents.values:,} values read" if contents.described < contents.values
                 else f"the {contents.values:,} values read")
        tables.append(f'<table class="tops"><caption>{_chip(contents.split, colours)} what {which} are</caption>'
                      f"<tbody>{rows}</tbody></table>")
    return (f'<p class="note">Binary values (not text): shown as what they are and their size in bytes, never as '
            f'text.</p><div class="top-values">{"".join(tables)}</div>')


def classes_note(balance: ClassBalance, what: str) -> str:
    """What the class balance's bars leave out: `The bars: the 5 classes present, most frequent
    first; 75 of the 80 classes have no examples.` ("" when every class is drawn)."""
    if len(balance.shown) == len(balance.names):
        return ""
    drawn = (f"the {len(balance.shown):,} classes present" if len(balance.shown) == balance.present else
             f"the {len(balance.shown):,} most frequent of the {balance.present:,} classes present")
    none = f"; {balance.absent:,} of the {len(balance.names):,} classes have no {what}" if balance.absent else ""
    return f"The bars: {drawn}, most frequent first{none}."


def _class_counts(feature: FeatureData, data: ReportData, colours: dict[str, str]) -> str:
    """Every class's exact count per split, folded away (a label may have thousands of classes)."""
    balance = feature.classes
    assert balance is not None
    splits = [split.name for split in data.splits if split.name in balance.counts]
    totals = {split: sum(balance.counts[split]) for split in splits}
    head = "".join(f"<th class=n>{_chip(split, colours)}</th>" for split in splits)
    rows = "".join(
        f"<tr><td>{index}</td><td>{escape(name)}</td>"
        + "".join(f'<td class=n>{balance.counts[split][index]:,} <span class="share">'
                  f"{share(balance.counts[split][index], totals[split])}</span></td>" for split in splits)
        + "</tr>" for index, name in enumerate(balance.names))
    what = "values" if feature.lengths is not None or feature.per_step else "examples"
    note = classes_note(balance, what)
    return ((f'<p class="note">{escape(note)}</p>' if note else "")
            + f'<details class="counts"><summary>{what.capitalize()} per class, all {len(balance.names):,} classes'
            f'</summary><table class="grid narrow"><thead><tr><th>index</th><th>class</th>{head}</tr></thead>'
            f"<tbody>{rows}</tbody></table></details>")


def _shortened(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---- the summary table of a wide table ------------------------------------------------------
def _summary(data: ReportData) -> str:
    """One row per feature not drawn above, and per column of a feature gathered from several."""
    if not data.summary:
        return ""
    notes = []
    if data.summarised:
        notes.append(f"The page draws {len(data.features)} of the {data.num_features:,} features"
                     f"{' (the label first)' if data.label else ''}; the other {data.summarised:,} are rows here")
    if any(row.column for row in data.summary):
        notes.append("a feature gathered from several columns (<code>columns:</code>) has a row per column")
    label = ' <span class="badge label">label</span>'
    rows = "".join(
        f"<tr><td>{escape(row.feature)}{label if row.is_label else ''}</td>"
        f"<td>{escape(row.column)}</td><td><code>{escape(row.declared)}</code></td><td class=n>{escape(row.low)}</td>"
        f"<td class=n>{escape(row.high)}</td><td class=n>{escape(row.mean)}</td><td class=n>{escape(row.missing)}</td>"
        "</tr>" for row in data.summary)
    head = "".join(f"<th{' class=n' if index > 2 else ''}>{text}</th>" for index, text in enumerate(
        ("feature", "column", "type", "min", "max", "mean", "missing in the source")))
    return (f'<section id="summary"><h2>Summary table</h2><p class="note">{"; ".join(notes)}: exact statistics '
            f"from the build, over every split together.</p>"
            f'<table class="grid summary"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></section>')


# ---- shards and spec --------------------------------------------------------------------------
def _shards(data: ReportData, colours: dict[str, str]) -> str:
    parts = []
    for split in data.splits:
        rows = "".join(
            f"<tr><td class=n>{number}</td><td><code>{escape(str(shard.get('file', '')))}</code></td>"
            f"<td class=n>{_count(shard.get('num_examples'))}</td>"
            f"<td class=n title=\"{_count(shard.get('num_bytes'))} bytes\">{_size(shard.get('num_bytes'))}</td>"
            f'<td><code title="{escape(str(shard.get("sha256", "")))}">{escape(str(shard.get("sha256", ""))[:12])}</code>'
            "</td></tr>"
            for number, shard in enumerate(split.shards))
        opened = " open" if len(split.shards) <= SHARDS_OPEN else ""
        parts.append(f"<details class=\"shards\"{opened}><summary>{_chip(split.name, colours)} {len(split.shards):,} "
                     f"shard{'s' if len(split.shards) != 1 else ''}, {_size(split.num_bytes)}</summary>"
                     f'<table class="grid"><thead><tr><th class=n>#</th><th>file</th><th class=n>examples</th>'
                     f"<th class=n>size</th><th>sha256</th></tr></thead><tbody>{rows}</tbody></table></details>")
    return f'<section id="shards"><h2>Shards</h2>{"".join(parts)}</section>'


def _spec(data: ReportData) -> str:
    return (f'<section id="spec"><h2>Spec</h2><details class="spec"><summary>The normalised spec, every key with '
            f"its value or default (as <code>tfrecord_builder.json</code> holds it)</summary>"
            f"<pre><code>{escape(data.spec_yaml)}</code></pre></details></section>")


def _footer(data: ReportData) -> str:
    return (f'<footer class="wrap">Made by <code>tfrecord-builder report</code> {escape(__version__)} from '
            f"<code>{escape(data.path)}</code>.</footer>")


def _count(value: Any) -> str:
    return f"{int(value):,}" if isinstance(value, (int, float)) else "–"


def _size(num_bytes: Any) -> str:
    return size_text(num_bytes) if isinstance(num_bytes, (int, float)) else "–"


CSS = f"""
:root {{ --ink: {INK}; --muted: {MUTED}; --rule: {RULE}; --paper: #F5F6F8; --card: #FFFFFF; --accent: #2F6DB5;
  --sans: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", "Liberation Sans", sans-serif;
  --mono: ui-monospace, "SFMono-Regular", "Cascadia Mono", Menlo, Consolas, "Liberation Mono", "DejaVu Sans Mono", monospace; }}
* {{ box-sizing: border-box; }}
html {{ -webkit-text-size-adjust: 100%; }}
body {{ margin: 0; background: var(--paper); color: var(--ink); font: 14px/1.5 var(--sans); }}
.wrap {{ max-width: 1240px; margin: 0 auto; padding: 0 28px; }}
code, pre {{ font-family: var(--mono); font-size: 12.5px; }}
a {{ color: var(--accent); text-decoration: none; }}
a:hover {{ text-decoration: underline; }}
header.top {{ background: var(--card); border-bottom: 1px solid var(--rule); padding: 28px 0 0; }}
.eyebrow {{ text-transform: uppercase; letter-spacing: .08em; font-size: 11.5px; font-weight: 600; color: var(--muted); }}
h1 {{ margin: 2px 0 4px; font-size: 30px; line-height: 1.2; font-weight: 700; letter-spacing: -.01em; }}
h1 .version {{ font-weight: 500; color: var(--muted); font-size: 22px; }}
.lead {{ margin: 0 0 14px; font-size: 15.5px; color: #3A4250; max-width: 70ch; }}
dl.meta {{ display: flex; flex-wrap: wrap; gap: 6px 26px; margin: 0 0 18px; }}
dl.meta div {{ display: flex; gap: 6px; align-items: baseline; min-width: 0; }}
dl.meta dt {{ color: var(--muted); font-size: 12.5px; }}
dl.meta dd {{ margin: 0; font-weight: 500; overflow-wrap: anywhere; }}
.totals {{ display: grid; grid-template-columns: repeat(auto-fit, minmax(130px, 1fr)); gap: 12px; margin-bottom: 20px; }}
.total {{ border: 1px solid var(--rule); border-radius: 10px; padding: 10px 14px; background: #FAFBFC; }}
.total .number {{ display: block; font-size: 22px; font-weight: 650; font-variant-numeric: tabular-nums; }}
.total .what {{ color: var(--muted); font-size: 12.5px; }}
nav.toc {{ display: flex; flex-wrap: wrap; align-items: center; gap: 4px 20px; padding: 10px 0 12px; border-top: 1px solid var(--rule); font-size: 13.5px; }}
nav.toc .legend {{ margin-left: auto; display: flex; gap: 8px; }}
main {{ padding-top: 8px; padding-bottom: 24px; }}
section {{ margin: 26px 0 8px; }}
h2 {{ font-size: 19px; margin: 0 0 12px; font-weight: 650; letter-spacing: -.005em; }}
.note {{ color: var(--muted); font-size: 13px; margin: 8px 0; max-width: 95ch; }}
.chip {{ display: inline-flex; align-items: center; gap: 6px; font-weight: 600; white-space: nowrap; }}
.chip::before {{ content: ""; width: 10px; height: 10px; border-radius: 3px; background: var(--split); }}
table {{ border-collapse: collapse; font-variant-numeric: tabular-nums; }}
table.grid {{ background: var(--card); border: 1px solid var(--rule); border-radius: 10px; border-collapse: separate; border-spacing: 0; overflow: hidden; min-width: 50%; }}
table.grid.narrow {{ min-width: 0; }}
table.grid th, table.grid td {{ padding: 7px 14px; text-align: left; border-bottom: 1px solid var(--rule); }}
table.grid tbody tr:last-child td {{ border-bottom: none; }}
table.grid thead th {{ background: #FAFBFC; color: var(--muted); font-size: 12px; font-weight: 600; text-transform: uppercase; letter-spacing: .04em; }}
table.grid tfoot td {{ border-top: 1px solid var(--rule); border-bottom: none; font-weight: 600; background: #FAFBFC; }}
table.grid tbody tr:hover {{ background: #F8FAFD; }}
th.n, td.n {{ text-align: right !important; }}
table.skipped td:last-child {{ color: #8A3B12; }}
.flag {{ display: inline-block; font-size: 12px; font-weight: 650; border-radius: 999px; padding: 1px 9px; margin-right: 6px; }}
.flag.ok {{ background: #E7F5EE; color: #1D6B47; }}
.flag.warn {{ background: #FDF0E4; color: #8A4B12; }}
.toolbar {{ display: flex; flex-wrap: wrap; align-items: center; gap: 10px 14px; margin-bottom: 14px; position: sticky; top: 0; z-index: 2; background: var(--paper); padding: 8px 0; }}
#filter {{ flex: 1 1 280px; max-width: 420px; font: inherit; padding: 7px 12px; border: 1px solid #C9CED6; border-radius: 8px; background: var(--card); color: var(--ink); }}
#filter:focus {{ outline: 2px solid #9CC0EA; border-color: var(--accent); }}
.kinds {{ display: flex; flex-wrap: wrap; gap: 6px; }}
button.kind {{ font: inherit; font-size: 12.5px; border: 1px solid var(--rule); background: var(--card); color: var(--ink); border-radius: 999px; padding: 3px 11px; cursor: pointer; }}
button.kind:hover, button.kind.active {{ border-color: var(--accent); color: var(--accent); }}
button.kind b {{ font-weight: 650; color: var(--muted); margin-left: 2px; }}
.shown {{ color: var(--muted); font-size: 12.5px; margin-left: auto; }}
article.feature, article.objects {{ background: var(--card); border: 1px solid var(--rule); border-radius: 12px; padding: 16px 20px 18px; margin: 0 0 16px; box-shadow: 0 1px 2px rgba(20, 30, 50, .04); }}
article.feature > header, article.objects > header {{ display: flex; flex-wrap: wrap; align-items: center; gap: 8px; margin-bottom: 6px; }}
article.feature h3, article.objects h3 {{ margin: 0 6px 0 0; font-size: 16.5px; font-family: var(--mono); font-weight: 650; }}
code.declared {{ color: var(--muted); margin-left: auto; }}
.badge {{ font-size: 11.5px; font-weight: 600; border-radius: 6px; padding: 1px 8px; background: #EEF1F5; color: #3A4250; }}
.badge.kind-number {{ background: #E8F0FA; color: #22528A; }}
.badge.kind-class_label {{ background: #F3EAF7; color: #6E3B84; }}
.badge.kind-string {{ background: #E7F5EE; color: #1D6B47; }}
.badge.kind-binary {{ background: #EEF1F5; color: #3A4250; }}
.badge.kind-image {{ background: #FDF0E4; color: #8A4B12; }}
.badge.kind-bbox {{ background: #FBE9EE; color: #8A1F3D; }}
.badge.kind-audio {{ background: #EDEBFA; color: #3D3590; }}
.badge.kind-text {{ background: #E6F4F1; color: #1A6358; }}
.examples {{ flex: 1 1 360px; min-width: 0; font-size: 13px; }}
.examples .caption {{ color: var(--muted); font-size: 12.5px; padding-bottom: 6px; }}
p.tokens {{ margin: 0 0 6px; overflow-wrap: anywhere; }}
.clips {{ display: flex; flex-wrap: wrap; gap: 10px 18px; }}
.clip {{ display: flex; flex-direction: column; gap: 4px; }}
.clip figure {{ margin: 0; }}
.clip audio {{ width: 100%; height: 32px; }}
.badge.label {{ background: #1F2430; color: #FFFFFF; }}
.badge.step {{ background: #EAF6F8; color: #1B6C78; }}
.description {{ margin: 0 0 8px; color: #3A4250; }}
.body {{ display: flex; flex-wrap: wrap; gap: 18px 28px; align-items: flex-start; margin-top: 8px; }}
table.stats {{ font-size: 13px; min-width: 260px; }}
table.stats th, table.stats td {{ padding: 4px 10px; border-bottom: 1px solid #EEF0F3; }}
table.stats thead th {{ border-bottom: 1px solid var(--rule); font-size: 12.5px; }}
table.stats tbody th {{ text-align: left; font-weight: 500; color: var(--muted); white-space: nowrap; padding-left: 0; }}
table.stats tbody tr:last-child th, table.stats tbody tr:last-child td {{ border-bottom: none; }}
.plots {{ display: flex; flex-wrap: wrap; gap: 14px; flex: 1 1 520px; min-width: 0; }}
figure {{ margin: 0; max-width: 100%; }}
figure img {{ display: block; max-width: 100%; height: auto; }}
.top-values {{ display: flex; flex-wrap: wrap; gap: 16px 36px; margin-top: 14px; }}
table.tops {{ font-size: 13px; min-width: 320px; }}
table.tops caption {{ text-align: left; padding-bottom: 6px; color: var(--muted); font-size: 12.5px; }}
table.tops td {{ padding: 3px 8px; border-bottom: 1px solid #EEF0F3; }}
table.tops td.value {{ font-family: var(--mono); font-size: 12.5px; max-width: 36ch; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; padding-left: 0; }}
table.tops td.bar {{ width: 120px; }}
table.tops td.bar span {{ display: block; height: 8px; border-radius: 4px; opacity: .8; min-width: 2px; }}
table.tops td.share {{ color: var(--muted); font-size: 12px; }}
details.shards {{ margin: 0 0 12px; }}
details.counts {{ margin-top: 10px; }}
details.counts table {{ font-size: 13px; }}
details.counts table td, details.counts table th {{ padding: 4px 14px; }}
span.share {{ color: var(--muted); font-size: 12px; margin-left: 4px; }}
details > summary {{ cursor: pointer; padding: 6px 0; font-weight: 500; }}
details.shards table {{ margin-top: 6px; }}
details.spec pre {{ background: #1F2430; color: #E8EAEE; border-radius: 10px; padding: 16px 18px; overflow: auto; max-height: 640px; line-height: 1.45; }}
footer {{ color: var(--muted); font-size: 12.5px; padding-top: 10px; padding-bottom: 40px; border-top: 1px solid var(--rule); }}
[hidden] {{ display: none !important; }}
@media (max-width: 720px) {{ .wrap {{ padding: 0 14px; }} nav.toc .legend {{ margin-left: 0; }} code.declared {{ margin-left: 0; }} }}
"""

# the filter box and kind buttons; on load, whether every figure decoded (`data-images-loaded`,
# read by the browser test). Plain ES5, logs nothing.
SCRIPT = """
(function () {
  "use strict";
  var input = document.getElementById("filter");
  var cards = Array.prototype.slice.call(document.querySelectorAll("article.feature"));
  var buttons = Array.prototype.slice.call(document.querySelectorAll("button.kind"));
  var shown = document.getElementById("shown");
  var empty = document.getElementById("no-match");
  var kinds = buttons.map(function (button) { return button.getAttribute("data-kind"); });
  function apply() {
    var value = input.value.trim().toLowerCase();
    var words = value.split(/\\s+/).filter(function (word) { return word.length > 0; });
    var kind = kinds.indexOf(value) !== -1 ? value : null;  // a kind button's word: that kind only
    var count = 0;
    cards.forEach(function (card) {
      var text = card.getAttribute("data-search") || "";
      var match = kind !== null ? card.getAttribute("data-kind") === kind
        : words.every(function (word) { return text.indexOf(word) !== -1; });
      card.hidden = !match;
      if (match) { count += 1; }
    });
    shown.textContent = count + " of " + cards.length;
    empty.hidden = count !== 0;
    buttons.forEach(function (button) {
      button.classList.toggle("active", kind === button.getAttribute("data-kind"));
    });
  }
  if (input) {
    input.addEventListener("input", apply);
    buttons.forEach(function (button) {
      button.addEventListener("click", function () {
        var kind = button.getAttribute("data-kind");
        input.value = input.value.trim() === kind ? "" : kind;
        apply();
      });
    });
  }
  window.addEventListener("load", function () {
    var images = Array.prototype.slice.call(document.images);
    var drawn = images.filter(function (image) { return image.complete && image.naturalWidth > 0; });
    document.body.setAttribute("data-images-loaded", drawn.length + "/" + images.length);
  });
})();
"""
