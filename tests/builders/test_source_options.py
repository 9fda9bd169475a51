"""Each built-in builder says what it reads of a spec's `source:` (its class's SOURCE_KEYS,
READS_FOLDER, DEFINES_CLASSES), and the spec asks it through the registry when it is loaded:
`images` and `names_file` are refused for every other builder, in the same words, and a custom
builder's code is never run to check a spec."""
from __future__ import annotations

import pytest

import tfrecord_builder as tb
from tfrecord_builder.builders.base import Builder
from tfrecord_builder.errors import SpecError
from tfrecord_builder.registry import BUILTIN, builder_names, load_class

from conftest import write_spec

READERS = {"images": "the coco, segmentation and voc builders", "names_file": "the labelme, voc and yolo builders"}


def _spec(builder: str, key: str) -> dict:
    return {"name": "t", "source": {"builder": builder, "path": "t.csv", key: "x/"}, "features": {"x": {"dtype": "int64"}}}


@pytest.mark.parametrize("key", ["images", "names_file"])
@pytest.mark.parametrize("builder", sorted(BUILTIN))
def test_a_source_key_is_taken_by_the_builders_whose_class_reads_it_and_refused_for_the_others(tmp_path, builder, key):
    cls = load_class(BUILTIN[builder], [], "")
    path = write_spec(tmp_path, _spec(builder, key), {"t.csv": "x\n1\n"})
    if key in cls.SOURCE_KEYS:
        assert getattr(tb.load_spec(path).source, key) == "x/"
        return
    with pytest.raises(SpecError) as raised:
        tb.load_spec(path)
    assert str(raised.value).endswith(f"source.{key}: `{key}` is read by {READERS[key]}, not by {builder}")


def test_a_custom_builder_is_refused_the_keys_without_its_code_being_run(tmp_path):
    (tmp_path / "mine.py").write_text("raise RuntimeError('imported')\n")
    path = write_spec(tmp_path, _spec("mine.py:Mine", "images"), {"t.csv": "x\n1\n"})
    with pytest.raises(SpecError) as raised:
        tb.load_spec(path)
    assert str(raised.value).endswith("source.images: `images` is read by the coco, segmentation and voc builders, "
                                      "not by mine.py:Mine")


@pytest.mark.parametrize("builder", sorted(BUILTIN))
def test_a_class_label_without_names_is_refused_at_load_where_the_source_defines_no_classes(tmp_path, builder):
    source = {"builder": "iceberg", "table": "db.t"} if builder == "iceberg" else {"builder": builder, "path": "t.csv"}
    spec = {"name": "t", "source": source, "features": {"x": {"type": "class_label"}}}
    path = write_spec(tmp_path, spec, {"t.csv": "x\n1\n"})
    if load_class(BUILTIN[builder], [], "").DEFINES_CLASSES:
        assert tb.load_spec(path).features["x"].names is None
        return
    with pytest.raises(SpecError) as raised:
        tb.load_spec(path)
    assert "features.x: a class_label needs one of `names`, `names_file` or `num_classes` (only image_folder " \
           "sources and Parquet categorical columns define classes themselves)" in str(raised.value)


def test_the_builtin_builders_read_what_their_classes_say():
    """The facts the spec asks, as the classes state them (and Builder's defaults for a custom one)."""
    said = {name: (sorted(cls.SOURCE_KEYS), cls.READS_FOLDER, cls.DEFINES_CLASSES)
            for name, cls in ((name, load_class(target, [], "")) for name, target in BUILTIN.items())}
    assert said == {
        "csv": ([], False, False), "jsonl": ([], False, False), "sequence_jsonl": ([], False, False),
        "image_manifest": ([], False, False), "parquet": ([], False, True), "image_folder": ([], True, True),
        "coco": (["images"], False, True), "voc": (["images", "names_file"], True, True),
        "yolo": (["names_file"], True, True), "labelme": (["names_file"], True, True),
        "segmentation": (["images"], True, True), "conll": (["columns", "format"], False, False),
        "sql": (["connection", "decimals", "partition_by", "partitions", "query", "table"], False, False),
        "delta": (["version"], True, False), "iceberg": (["catalog", "snapshot", "table"], False, False),
        "dataframe": ([], False, True), "spark_table": (["decimals", "table"], False, False)}
    assert (Builder.SOURCE_KEYS, Builder.READS_FOLDER, Builder.DEFINES_CLASSES) == (frozenset(), False, True)
    assert [name for name, target in BUILTIN.items() if load_class(target, [], "").READS_PATTERN] == ["conll"]
    assert builder_names() == ["csv", "jsonl", "parquet", "image_folder", "image_manifest", "coco", "voc", "yolo",
                               "labelme", "segmentation", "conll", "delta", "iceberg", "sql",
                               "dataframe", "spark_table"]  # sequence_jsonl: jsonl's other name


@pytest.mark.parametrize("builder, made, words", [
    ("voc", "file", "is a file; the voc builder reads a folder"),
    ("coco", "folder", "is a folder; the coco builder reads a file"),
    ("csv", "folder", "is a folder; the csv builder reads a file"),
])
def test_a_path_of_the_wrong_kind_is_refused_by_what_its_builder_reads(tmp_path, builder, made, words):
    spec = {"name": "t", "source": {"builder": builder, "path": "data"}, "features": {"x": {"dtype": "int64"}}}
    path = write_spec(tmp_path, spec)
    (tmp_path / "data").mkdir() if made == "folder" else (tmp_path / "data").write_text("x\n")
    with pytest.raises(SpecError) as raised:
        tb.build(path, output=tmp_path / "out")
    assert str(raised.value).endswith(f"source.path: {tmp_path / 'data'} {words}")
