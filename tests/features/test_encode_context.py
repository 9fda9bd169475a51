"""`Feature.encode(values, context)`: one `tb.EncodeContext` (the rows' origins, the base folder,
the source's language, and the notices collector the caller owns) in place of a process-global
counter. A feature type of one's own notes into it and the build says so once; each batch's
counts come back with its records; an `encode` of the earlier signature, `encode(self, values,
origin, base_dir=None, language="python")`, still builds, its parent's notices said too."""
from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
from PIL import Image

import tfrecord_builder as tb
from tfrecord_builder.build.encode_batch import encode_batch
from tfrecord_builder.builders.base import Batch
from tfrecord_builder.features.context import context_of, earlier_signature
from tfrecord_builder.features.notices import Notices
from tfrecord_builder.spec.fields import At, convert
from tfrecord_builder.spec.yaml_source import Document

from conftest import write_spec

ROUNDED = "feature `{name}`: {{count}} value{{s}} rounded to one decimal"
ROUNDING = textwrap.dedent('''
    import dataclasses

    import tfrecord_builder as tb


    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Rounded(tb.TensorFeature):
        """float32 values rounded to one decimal, each rounded one counted."""

        def encode(self, values, context):
            rounded = []
            for value in values:
                if isinstance(value, float) and round(value, 1) != value:
                    context.notices.note(f"feature `{self.name}`: {{count}} value{{s}} rounded to one decimal")
                    value = round(value, 1)
                rounded.append(value)
            return super().encode(rounded, context)
''')
# written against the earlier signature, as users' types were: passing its origin, base folder
# and language on to the built-in type it extends
EARLIER = textwrap.dedent('''
    import dataclasses

    import tfrecord_builder as tb
    from tfrecord_builder.features import ImageFeature


    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Doubled(tb.TensorFeature):
        def encode(self, values, origin, base_dir=None, language="python"):
            return super().encode([None if value is None else 2 * value for value in values], origin, base_dir,
                                  language)


    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Photo(ImageFeature):
        def encode(self, values, origin, base_dir=None, language="python"):
            if any(value is None for value in values):
                raise self.fail(origin, [value is None for value in values].index(True), "no photo")
            return super().encode(values, origin, base_dir, language)
''')


def _feature(declaration: dict, name: str = "x") -> tb.Feature:
    return convert(tb.Feature, declaration, At(Document(None, "spec.yaml"))).named(name)


def _jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


@pytest.mark.filterwarnings("ignore::tfrecord_builder.BuildWarning")  # asserted below
def test_a_type_of_ones_own_notes_into_the_builds_notices_each_value_once(tmp_path):
    rows = [{"x": 1.25}, {"x": 2.0}, {"x": "two"}, {"x": 4.56}, {"x": 0.5}]
    spec = write_spec(tmp_path, {"name": "r", "source": {"builder": "jsonl", "path": "rows.jsonl"},
                                 "features": {"x": {"type": "rounding.py:Rounded", "dtype": "float32"}},
                                 "output": {"shuffle": False}, "on_error": "skip"},
                      {"rows.jsonl": _jsonl(rows), "rounding.py": ROUNDING})
    info = tb.build(spec, output=tmp_path / "out", workers=1)
    # the bad row is searched for by encoding parts of the batch again: only the records kept count
    assert ROUNDED.format(name="x").replace("{count}", "2").replace("{s}", "s") in info.warnings
    assert [float(record["x"]) for record in tb.read(info.path, "train")] == \
        [np.float32(1.2), 2.0, np.float32(4.6), 0.5]
    assert info.skipped == 1


def test_each_batch_counts_its_own_notices_and_returns_them_with_its_records(tmp_path):
    (tmp_path / "rounding.py").write_text(ROUNDING, encoding="utf-8")
    feature = convert(tb.Feature, {"type": "rounding.py:Rounded", "dtype": "float32"},
                      At(Document(None, str(tmp_path / "spec.yaml")))).named("x")
    features = {"x": feature}
    first = encode_batch(features, Batch(keys=[0, 1, 2], columns={"x": [0.25, 0.5, 0.75]}, origin=str))
    second = encode_batch(features, Batch(keys=[3], columns={"x": [0.125]}, origin=str))
    text = ROUNDED.format(name="x")
    assert (first.notices, second.notices) == ({text: 2}, {text: 1})  # nothing carried from one to the next
    assert encode_batch(features, Batch(keys=[4], columns={"x": [0.5]}, origin=str)).notices == {}


@pytest.mark.filterwarnings("ignore::tfrecord_builder.BuildWarning")  # asserted below
def test_a_type_written_against_the_earlier_signature_still_builds_and_its_parents_notices_are_said(tmp_path):
    pixels = np.zeros((6, 10, 3), np.uint8)
    pixels[:, :5] = 255  # left half white
    exif = Image.Exif()
    exif[0x0112] = 6  # shown turned a quarter: re-encoded upright, a notice
    (tmp_path / "data" / "photos").mkdir(parents=True)
    Image.fromarray(pixels).save(tmp_path / "data" / "photos" / "turned.jpg", quality=95, exif=exif)
    Image.fromarray(pixels).save(tmp_path / "data" / "photos" / "plain.jpg", quality=95)
    rows = [{"n": 1, "photo": "photos/turned.jpg"}, {"n": 5, "photo": "photos/plain.jpg"}]

    def spec(table: str) -> dict:
        return {"name": "e", "source": {"builder": "jsonl", "path": f"data/{table}"},
                "features": {"n": {"type": "earlier.py:Doubled", "dtype": "int64"},
                             "photo": {"type": "earlier.py:Photo", "shape": [None, None, 3], "encoding": "jpeg"}},
                "output": {"shuffle": False}}

    info = tb.build(write_spec(tmp_path, spec("rows.jsonl"), {"data/rows.jsonl": _jsonl(rows), "earlier.py": EARLIER}),
                    output=tmp_path / "out", workers=1)
    records = list(tb.read(info.path, "train"))
    assert [int(record["n"]) for record in records] == [2, 10]  # its own encode ran
    assert [record["photo"].shape for record in records] == [(10, 6, 3), (6, 10, 3)]  # paths from the table's folder
    assert info.warnings == [("feature `photo`: 1 JPEG file turned upright by the EXIF orientation, so re-encoded "
                              "at quality 90 (a second lossy pass) instead of stored byte for byte")]
    with pytest.raises(tb.DataError) as raised:
        tb.build(write_spec(tmp_path, spec("more.jsonl"), {"data/more.jsonl": _jsonl([*rows, {"n": 2}])}),
                 output=tmp_path / "more", workers=1)
    assert str(raised.value) == "more.jsonl, line 3: feature `photo`: no photo"


def test_encode_takes_a_call_of_the_earlier_form_too():
    feature = _feature({"dtype": "int64", "shape": [None]})

    def origin(row: int) -> str:
        return f"line {row + 1}"

    by_context = feature.encode(["1 2", "3"], tb.EncodeContext(origin, language="text"))["x"]
    for earlier in (feature.encode(["1 2", "3"], origin, None, "text"),
                    feature.encode(["1 2", "3"], origin, language="text"),
                    feature.encode(["1 2", "3"], origin=origin, language="text")):
        assert earlier["x"].values.tolist() == by_context.values.tolist() == [1, 2, 3]
        assert earlier["x"].counts.tolist() == by_context.counts.tolist() == [2, 1]
    with pytest.raises(tb.DataError) as raised:
        feature.encode([[1, "a"]], origin)
    assert str(raised.value).startswith("line 1: feature `x`: element 1: ")
    with pytest.raises(TypeError):
        feature.encode([1], origin, None, "text", "more")
    with pytest.raises(TypeError):
        feature.encode([1], tb.EncodeContext(origin), base_dir="here")
    with pytest.raises(TypeError):
        feature.encode([1])


def test_the_earlier_signature_is_told_by_its_parameters():
    def current(self, values, context): ...
    def renamed(self, values, batch): ...
    def passing_on(self, *args, **kwargs): ...
    def earlier(self, values, origin, base_dir=None, language="python"): ...
    def only_origin(self, values, origin): ...
    def two(self, values, where, folder): ...
    assert [earlier_signature(function) for function in (current, renamed, passing_on)] == [None] * 3
    assert [earlier_signature(function) for function in (earlier, only_origin, two)] == [3, 1, 2]


def test_a_context_is_what_the_call_gives():
    noted = Notices()
    context = tb.EncodeContext(str, "folder", "json", noted)
    assert context_of((context,), {}) is context and context_of((), {"context": context}) is context
    made = context_of((str, "there"), {})
    assert (made.origin, made.base_dir, made.language, made.notices.counts) == (str, "there", "python", {})
    steps = context.named(lambda row: f"step {row}")
    steps.notices.note("one")
    assert steps.origin(2) == "step 2" and steps.base_dir == "folder" and noted.counts == {"one": 1}
