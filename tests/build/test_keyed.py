"""One copy (build/runners/keyed.py): a source whose records are known by key before their bytes are read
(an image folder) has its shards planned from the keys and written whole by one worker each. The
dataset is the same, byte for byte, as the usual path's (sorted runs, merge:
TFRECORD_BUILDER_ONE_COPY=0), whatever the splits, order, shard count, workers; a bad file, a
wrong estimate of the bytes or an interrupted build end as they always have."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import tfrecord_builder as tb
from tfrecord_builder.build.plan import ONE_COPY_VARIABLE, keyed_plan, read_tasks
from tfrecord_builder.build.runners import keyed, local
from tfrecord_builder.builders.sources import source_builders
from tfrecord_builder.spec.load import load_spec

from conftest import ROOT, write_spec
from support.reading import assert_same_files, files_of

FEATURES = {"image": {"type": "image", "encoding": "jpeg", "shape": [16, 16, 3]}, "label": {"type": "class_label"},
            "filename": {"dtype": "string"}}


def photos(folder: Path, count: int, classes: int = 3, seed: int = 0) -> None:
    """`count` small JPEGs of noise, image i into class_{i % classes}/."""
    rng = np.random.default_rng(seed)
    for index in range(count):
        path = folder / f"class_{index % classes}" / f"photo_{index:04d}.jpg"
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(rng.integers(0, 256, (16, 16, 3), dtype=np.uint8)).save(path, quality=90)


def spec_of(folder: Path, **extra) -> Path:
    spec = {"name": "pics", "source": {"builder": "image_folder", "path": "images"}, "features": FEATURES,
            "label": "label", **extra}
    return write_spec(folder, spec)


def both_ways(spec: Path, out: Path, monkeypatch, workers: int = 2, phases: list | None = None,
              **options) -> tuple[dict, dict]:
    """The dataset's files built the usual way, then in one copy, into the same folder (the
    generated module names it); `phases`, if given, gets the phases the second build showed."""
    monkeypatch.setenv(ONE_COPY_VARIABLE, "0")
    usual = files_of(tb.build(spec, output=out, overwrite=True, workers=workers, **options).path)
    monkeypatch.setenv(ONE_COPY_VARIABLE, "1")
    shown = {} if phases is None else {"progress": lambda phase, *_: phases.append(phase)}
    once = files_of(tb.build(spec, output=out, overwrite=True, workers=workers, **options, **shown).path)
    return usual, once


def errors_both_ways(spec: Path, out: Path, monkeypatch) -> list[str]:
    """The one-line errors of a build that fails, the usual way, then in one copy."""
    messages = []
    for flag in ("0", "1"):
        monkeypatch.setenv(ONE_COPY_VARIABLE, flag)
        with pytest.raises(tb.DataError) as caught:
            tb.build(spec, output=out, workers=2)
        messages.append(str(caught.value))
    return messages


def planned(spec: Path):
    """The keyed plan of the spec (None: the usual path)."""
    loaded = load_spec(spec)
    builders = source_builders(loaded)
    return keyed_plan(loaded, read_tasks(builders), dict(builders), None, lambda split, number, count: f"{split}-{number}")


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("output", [{"shards": 4}, {"shards": 3, "shuffle": False}, {"shard_size": 3000},
                                    {"shards": 2, "compression": "gzip"}])
def test_an_image_folder_in_one_copy_is_the_usual_build_byte_for_byte(tmp_path, monkeypatch, workers, output):
    photos(tmp_path / "images", 120)
    monkeypatch.setattr(local, "KEYED_PARALLEL_SECONDS", 0)  # workers even for a few KiB of photos
    spec = spec_of(tmp_path, splits={"train": 0.7, "test": 0.3}, output=output)
    assert planned(spec) is not None
    usual, once = both_ways(spec, tmp_path / "out", monkeypatch, workers)
    assert len([name for name in once if ".tfrecord" in name]) > 2
    assert_same_files(usual, once)


def test_per_split_folders_and_many_read_tasks_are_the_usual_build(tmp_path, monkeypatch):
    monkeypatch.setenv("TFRECORD_BUILDER_TASK_BYTES", "4000")  # tasks of a few photos: statistics merged task by task
    monkeypatch.setattr(local, "KEYED_PARALLEL_SECONDS", 0)
    for split, count in (("train", 90), ("test", 30)):
        photos(tmp_path / split, count, seed=count)
    spec = write_spec(tmp_path, {"name": "pics", "features": FEATURES, "label": "label", "output": {"shards": 3},
                                 "source": {"builder": "image_folder"},
                                 "splits": {"train": {"path": "train"}, "test": {"path": "test"}}})
    assert planned(spec) is not None
    usual, once = both_ways(spec, tmp_path / "out", monkeypatch)
    assert_same_files(usual, once)


def test_kept_splits_are_decided_as_the_usual_build_decides_them(tmp_path, monkeypatch):
    photos(tmp_path / "images", 60)
    spec = spec_of(tmp_path, splits={"train": 0.5, "test": 0.5}, output={"shards": 2})
    earlier = tb.build(spec, output=tmp_path / "v1")
    photos(tmp_path / "images", 90, seed=1)  # 30 more, the first 60 rewritten
    usual, once = both_ways(spec, tmp_path / "out", monkeypatch, keep_splits=earlier.path)
    assert_same_files(usual, once)


@pytest.mark.parametrize("on_error", ["fail", "skip"])
def test_a_bad_file_ends_the_build_as_the_usual_path_does(tmp_path, monkeypatch, on_error):
    photos(tmp_path / "images", 40)
    for name in ("class_0/zz_broken.jpg", "class_2/aa_broken.jpg"):
        (tmp_path / "images" / name).write_bytes(b"\xff\xd8\xff\xe0" + b"\x00" * 40)
    spec = spec_of(tmp_path, output={"shards": 2}, on_error=on_error)
    if on_error == "skip":
        usual, once = both_ways(spec, tmp_path / "out", monkeypatch)
        assert_same_files(usual, once)
        return
    messages = errors_both_ways(spec, tmp_path / "out", monkeypatch)
    assert messages[0] == messages[1] and "class_0/zz_broken.jpg" in messages[1]  # the first in the source's order
    assert not (tmp_path / "out" / "pics").exists() or not any((tmp_path / "out" / "pics").rglob("*.tfrecord*"))


def test_a_wrong_estimate_of_the_bytes_builds_the_usual_way(tmp_path, monkeypatch):
    photos(tmp_path / "images", 80)
    spec = spec_of(tmp_path, output={"shard_size": 5000})
    monkeypatch.setattr(keyed, "estimate_bytes", lambda spec, sources: lambda rows: 1)  # one shard, it says
    refused = []
    real = keyed.guess_held

    def held(*args):
        try:
            real(*args)
        except keyed.OneCopyRefused as error:
            refused.append(error.reason)
            raise

    monkeypatch.setattr(keyed, "guess_held", held)
    usual, once = both_ways(spec, tmp_path / "out", monkeypatch)
    assert refused and len([name for name in once if ".tfrecord" in name]) > 1
    assert_same_files(usual, once)


class Killed(BaseException):
    """The build's process killed (as a signal would stop it: no `except Exception` catches it)."""


def test_a_resumed_build_keeps_the_shards_an_interrupted_one_finished(tmp_path, monkeypatch):
    photos(tmp_path / "images", 60)
    spec = spec_of(tmp_path, output={"shards": 4})
    whole = files_of(tb.build(spec, output=tmp_path / "out", workers=1).path)
    real, calls, killing = keyed.write_keyed_shard, [], [True]

    def stopped(state, job):
        calls.append(job[1])
        if len(calls) == 3 and killing and killing.pop():
            raise Killed  # killed while writing the third shard
        return real(state, job)

    monkeypatch.setattr(local, "write_keyed_shard", stopped)
    with pytest.raises(Killed):
        tb.build(spec, output=tmp_path / "out", overwrite=True, workers=1)
    finished = {path: os.stat(path).st_ino for path in calls[:2]}
    calls.clear()
    info = tb.build(spec, output=tmp_path / "out", overwrite=True, workers=1, resume=True)
    assert [path for path in calls if path is not None] == calls[2:]  # the first two only encoded
    assert calls[:2] == [None, None]
    assert all(os.stat(Path(info.path) / Path(path).name).st_ino == inode for path, inode in finished.items())
    assert_same_files(whole, files_of(info.path))


def test_a_duplicate_or_a_fanned_out_record_leaves_the_plan_to_the_usual_path(tmp_path, monkeypatch):
    photos(tmp_path / "images", 10)
    assert planned(spec_of(tmp_path)) is not None
    monkeypatch.setenv(ONE_COPY_VARIABLE, "0")
    assert planned(spec_of(tmp_path)) is None


def manifest(folder: Path, form: str, count: int, duplicate: bool = False) -> str:
    """A manifest of `photos` beside them: each row the photo's path, its class, a score and the
    row's split (as a CSV, or as JSON lines); with `duplicate`, its first row twice."""
    photos(folder / "images", count)
    rows = [(f"images/class_{index % 3}/photo_{index:04d}.jpg", f"class_{index % 3}", index / 7,
             "test" if index % 4 == 0 else "train") for index in range(count)]
    rows += rows[:1] if duplicate else []
    if form == "csv":
        (folder / "photos.csv").write_text("image,label,score,split\n" + "".join(
            f"{path},{label},{score!r},{split}\n" for path, label, score, split in rows))
        return "photos.csv"
    (folder / "photos.jsonl").write_text("".join(
        json.dumps({"image": path, "label": label, "score": score, "split": split}) + "\n"
        for path, label, score, split in rows))
    return "photos.jsonl"


MANIFESTED = {"image": {"type": "image", "encoding": "jpeg", "shape": [16, 16, 3]},
              "label": {"type": "class_label", "names": ["class_0", "class_1", "class_2"]},
              "score": {"dtype": "float32"}}


@pytest.mark.parametrize("form", ["csv", "jsonl"])
@pytest.mark.parametrize("builder", ["image_manifest", "table"])
@pytest.mark.parametrize("splits", ["fractions", "column"])
@pytest.mark.parametrize("workers", [1, 2])
def test_a_manifest_in_one_copy_is_the_usual_build_byte_for_byte(tmp_path, monkeypatch, form, builder, splits,
                                                                 workers):
    """An `image_manifest`, or a `csv` or `jsonl` table whose rows name the photos an image feature
    reads: one copy, the usual build's bytes."""
    monkeypatch.setenv("TFRECORD_BUILDER_TASK_BYTES", "2000")  # several read tasks: statistics merged task by task
    monkeypatch.setattr(local, "KEYED_PARALLEL_SECONDS", 0)
    source = {"builder": builder if builder != "table" else form, "path": manifest(tmp_path, form, 150)}
    chosen = {"train": 0.7, "test": 0.3}
    if splits == "column":
        source["split_column"], chosen = "split", {"train": {}, "test": {}}
    spec = write_spec(tmp_path, {"name": "pics", "source": source, "features": MANIFESTED, "label": "label",
                                 "splits": chosen, "output": {"shards": 3}})
    plan = planned(spec)
    assert plan is not None and sum(plan.counts.values()) == 150
    phases: list[str] = []
    usual, once = both_ways(spec, tmp_path / "out", monkeypatch, workers, phases)
    assert len([name for name in once if ".tfrecord" in name]) == 6
    assert_same_files(usual, once)
    assert set(phases) == {"writing"}  # one copy: no records encoded into sorted runs first


def test_a_table_of_no_files_is_read_in_parts_by_the_workers_as_before(tmp_path):
    """A table whose features read no files keeps the usual path (its rows read in parts by the
    workers); so does a table whose cells may hold the files' bytes (Parquet)."""
    pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa
    import pyarrow.parquet as pq

    manifest(tmp_path, "csv", 12)
    numbers = write_spec(tmp_path, {"name": "t", "source": {"builder": "csv", "path": "photos.csv"},
                                    "features": {"score": {"dtype": "float32"}}})
    assert planned(numbers) is None
    pq.write_table(pa.table({"image": [(tmp_path / "images" / "class_0" / "photo_0000.jpg").read_bytes()] * 3,
                             "label": ["class_0"] * 3}), tmp_path / "photos.parquet")
    embedded = write_spec(tmp_path, {"name": "t", "source": {"builder": "parquet", "path": "photos.parquet"},
                                     "features": {"image": MANIFESTED["image"], "label": MANIFESTED["label"]}})
    assert planned(embedded) is None


def test_a_table_of_clips_as_sequences_in_one_copy_is_the_usual_build_byte_for_byte(tmp_path, monkeypatch):
    """The bundled clips (a CSV naming MP4 files, each clip a SequenceExample of frames): a shard's
    statistics values go back to the source's order record by record, every frame with its clip."""
    spec = Path(ROOT) / "specs" / "clips.yaml"
    monkeypatch.setattr(local, "KEYED_PARALLEL_SECONDS", 0)
    assert planned(spec) is not None
    usual, once = both_ways(spec, tmp_path / "out", monkeypatch)
    assert_same_files(usual, once)


def test_a_manifests_shard_size_is_estimated_from_its_records(tmp_path, monkeypatch):
    """Without the images' sizes (a manifest doesn't stat them), `shard_size` cuts shards by an
    estimate from encoded records; the same shards as the usual build's."""
    monkeypatch.setattr(local, "KEYED_PARALLEL_SECONDS", 0)
    spec = write_spec(tmp_path, {"name": "pics", "features": MANIFESTED, "label": "label",
                                 "output": {"shard_size": 20000},
                                 "source": {"builder": "image_manifest", "path": manifest(tmp_path, "csv", 120)}})
    assert planned(spec) is not None
    phases: list[str] = []
    usual, once = both_ways(spec, tmp_path / "out", monkeypatch, phases=phases)
    assert len([name for name in once if ".tfrecord" in name]) > 2
    assert_same_files(usual, once)
    assert set(phases) == {"writing"}  # the estimate held: one copy


def test_a_manifest_with_a_row_twice_or_a_bad_image_ends_as_the_usual_build_does(tmp_path, monkeypatch):
    spec = write_spec(tmp_path, {"name": "pics", "features": MANIFESTED, "label": "label", "output": {"shards": 2},
                                 "source": {"builder": "image_manifest",
                                            "path": manifest(tmp_path, "csv", 30, duplicate=True)}})
    assert planned(spec) is None  # two equal rows: the usual path keeps both
    usual, once = both_ways(spec, tmp_path / "out", monkeypatch)
    assert_same_files(usual, once)
    spec = write_spec(tmp_path, {"name": "pics", "features": MANIFESTED, "label": "label", "output": {"shards": 2},
                                 "source": {"builder": "image_manifest", "path": manifest(tmp_path, "csv", 30)}})
    (tmp_path / "images" / "class_1" / "photo_0004.jpg").write_bytes(b"\xff\xd8\xff\xe0" + b"\x00" * 40)
    messages = errors_both_ways(spec, tmp_path / "bad", monkeypatch)
    assert messages[0] == messages[1] and "photos.csv, line 6" in messages[1]


ANNOTATED = {"image": {"type": "image", "encoding": "jpeg"},
             "boxes": {"type": "tensor", "dtype": "float32", "shape": [None, 4], "source": "bbox"},
             "labels": {"type": "class_label", "shape": [None], "source": "label"},
             "filename": {"dtype": "string"}, "height": {"dtype": "int64"}, "width": {"dtype": "int64"}}


@pytest.mark.parametrize("kind", ["coco", "voc", "yolo"])
def test_an_annotation_format_in_one_copy_is_the_usual_build_byte_for_byte(tmp_path, monkeypatch, kind):
    pytest.importorskip("skimage.data")  # the photos
    from support.annotated_photos import COCO_SOURCE, write_coco, write_voc, write_yolo

    sources = {"coco": (write_coco, COCO_SOURCE), "voc": (write_voc, {"builder": "voc", "path": "VOC/Annotations"}),
               "yolo": (write_yolo, {"builder": "yolo", "path": "dataset/", "names_file": "dataset/data.yaml"})}
    write, source = sources[kind]
    write(tmp_path)
    monkeypatch.setattr(local, "KEYED_PARALLEL_SECONDS", 0)
    spec = write_spec(tmp_path, {"name": "det", "source": source, "features": ANNOTATED,
                                 "splits": {"train": 0.6, "test": 0.4}, "output": {"shards": 2}})
    assert planned(spec) is not None
    usual, once = both_ways(spec, tmp_path / "out", monkeypatch)
    assert_same_files(usual, once)


def test_statistics_values_are_held_without_an_object_a_value():
    """A shard's bytes values come back as one buffer (HeldValues), and give the same values again."""
    from tfrecord_builder.build.runners.keyed import HeldValues
    from tfrecord_builder.features.values import Values

    names = Values("bytes", [b"a", b"", b"ccc", b"dd"], np.array([1, 0, 2, 1]))
    numbers = Values("float", np.array([1.5, 2.5, 3.5], np.float32), np.array([2, 0, 1]))
    held = HeldValues.joined([HeldValues.of(names), HeldValues.of(names)])
    assert held.data == b"acccddacccdd" and not isinstance(held.values.values, list)
    assert held.repeated(np.array([2, 3, 4, 6])).values == [b"", b"ccc", b"dd", b"a", b"", b"ccc"]
    assert HeldValues.of(numbers).repeated(np.array([0, 2])).values.tolist() == [1.5, 2.5, 3.5]
