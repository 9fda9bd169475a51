"""Images per step: an `image` feature under a sequence_example's `sequence:`, one encoded image a
step, read back as [batch, steps, height, width, channels] padded to the batch's longest sequence
(with the length and mask numeric sequences get), through the generated module, tb.input_fn and
tb.read. Frames are crops of scikit-image's real photographs, stored as PNG (lossless: every
pixel compared) or passed through as the JPEG files they are (compared with Pillow's decode).
"""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image
from skimage import data as photos

import tfrecord_builder as tb
from tfrecord_builder.errors import DataError

from conftest import write_spec
from support.reading import read_both

ASTRONAUT = photos.astronaut()  # 512 x 512 x 3


def frame(index: int, size: tuple[int, int] = (24, 32)) -> np.ndarray:
    """A crop of the astronaut photograph, panned 5 pixels right per index: height x width x 3."""
    height, width = size
    return ASTRONAUT[100:100 + height, 5 * index:5 * index + width].copy()


def write_frames(folder: Path, clip: str, frames: list[np.ndarray], suffix: str = "png") -> list[str]:
    paths = []
    for index, pixels in enumerate(frames):
        path = folder / clip / f"frame_{index:03d}.{suffix}"
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(pixels).save(path, quality=90) if suffix == "jpg" else Image.fromarray(pixels).save(path)
        paths.append(f"{clip}/{path.name}")
    return paths


def build_clips(folder: Path, clips: dict[str, list[str]], frame_spec: dict, **extra) -> tb.DatasetInfo:
    rows = [{"clip": name, "frames": paths} for name, paths in clips.items()]
    spec = {"name": "clips", "format": "sequence_example",
            "source": {"builder": "sequence_jsonl", "path": "clips.jsonl"},
            "context": {"clip": {"dtype": "string"}}, "sequence": {"frames": frame_spec},
            "input": {"mask_feature": "mask"}, "output": {"shards": 1}, **extra}
    data = "".join(json.dumps(row) + "\n" for row in rows)
    return tb.build(write_spec(folder, spec, {"clips.jsonl": data}), output=folder / "out")


def check_clips(info, expected: dict[str, list[np.ndarray]], batch_size: int) -> None:
    """Every frame read back exactly, padded with zeros past its clip's length, through all three
    readers (in the build's record order, whatever it is)."""
    seen = []
    for batch in read_both(info, batch_size=batch_size):
        chunk = [name.decode() for name in batch["clip"].tolist()]
        seen.extend(chunk)
        lengths = [len(expected[name]) for name in chunk]
        assert batch["sequence_length"].tolist() == lengths
        assert batch["mask"].tolist() == [[step < length for step in range(max(lengths))] for length in lengths]
        assert batch["frames"].dtype == np.uint8
        height = max((expected[name][0].shape[0] for name in chunk if expected[name]), default=0)
        width = max((expected[name][0].shape[1] for name in chunk if expected[name]), default=0)
        assert batch["frames"].shape[:2] == (len(chunk), max(lengths))
        if max(lengths):
            assert batch["frames"].shape[2:] == (height, width, 3)
        for row, name in enumerate(chunk):
            for step in range(batch["frames"].shape[1]):
                wanted = np.zeros(batch["frames"].shape[2:], np.uint8)
                if step < lengths[row]:
                    pixels = expected[name][step]
                    wanted[:pixels.shape[0], :pixels.shape[1]] = pixels
                np.testing.assert_array_equal(batch["frames"][row, step], wanted, err_msg=f"{name} step {step}")
    assert sorted(seen) == sorted(expected)
    records = list(tb.read(info.path, "train"))
    assert [record["clip"].decode() for record in records] == seen
    for record in records:
        name = record["clip"].decode()
        assert record["sequence_length"] == len(expected[name])
        if expected[name]:
            np.testing.assert_array_equal(record["frames"], np.stack(expected[name]))
        else:
            assert len(record["frames"]) == 0


def test_png_frames_round_trip_exactly_padded_with_length_and_mask(tmp_path):
    clips = {"a": [frame(i) for i in range(3)], "b": [frame(i + 7, (20, 16)) for i in range(1)],
             "c": [frame(i + 2) for i in range(5)], "d": []}
    paths = {name: write_frames(tmp_path, name, frames) for name, frames in clips.items()}
    info = build_clips(tmp_path, paths, {"type": "image", "channels": 3})
    assert info.spec.features["frames"].describe() == "image png [null, null, null, 3] (steps, padded)"
    check_clips(info, clips, batch_size=2)
    check_clips(info, clips, batch_size=4)


def test_jpeg_frames_are_passed_through_byte_for_byte(tf, tmp_path):
    clips = {"a": [frame(i) for i in range(4)], "b": [frame(i, (24, 32)) for i in range(2)]}
    paths = {name: write_frames(tmp_path, name, frames, "jpg") for name, frames in clips.items()}
    info = build_clips(tmp_path, paths, {"type": "image", "encoding": "jpeg", "shape": [24, 32, 3]})
    files = [tmp_path / path for name in clips for path in paths[name]]
    stored = []
    for record in tf.data.TFRecordDataset(sorted(str(path) for path in Path(info.path).glob("*train*"))):
        _, lists = tf.io.parse_single_sequence_example(
            record, sequence_features={"frames": tf.io.FixedLenSequenceFeature([], tf.string)})
        stored.extend(lists["frames"].numpy().tolist())
    # the files' own bytes (no second lossy pass), in step order within each record
    assert sorted(stored) == sorted(path.read_bytes() for path in files)
    decoded = {name: [np.asarray(Image.open(tmp_path / path)) for path in paths[name]] for name in clips}
    check_clips(info, decoded, batch_size=2)


def test_a_fixed_shape_resizes_frames_of_mixed_sizes(tmp_path):
    sizes = [(24, 32), (48, 64), (30, 20)]
    paths = write_frames(tmp_path, "a", [frame(i, size) for i, size in enumerate(sizes)])
    info = build_clips(tmp_path, {"a": paths}, {"type": "image", "shape": [12, 16, 3], "resize": "stretch"})
    record, = tb.read(info.path, "train")
    wanted = [np.asarray(Image.open(tmp_path / path).resize((16, 12), Image.BILINEAR)) for path in paths]
    np.testing.assert_array_equal(record["frames"], np.stack(wanted))
    batch, = read_both(info, batch_size=1)
    assert batch["frames"].shape == (1, 3, 12, 16, 3)
    np.testing.assert_array_equal(batch["frames"][0], record["frames"])


def test_frames_of_mixed_sizes_without_a_shape_are_an_error_naming_record_step_and_sizes(tmp_path):
    paths = write_frames(tmp_path, "a", [frame(0), frame(1), frame(2, (20, 16))])
    with pytest.raises(DataError) as error:
        build_clips(tmp_path, {"a": paths}, {"type": "image", "channels": 3})
    assert str(error.value) == (
        "clips.jsonl, line 1, step 2: feature `frames`: a frame of 16x20 pixels, but step 0 is 32x24 pixels: "
        "the frames of a record share one size (give the feature a fixed `shape` to resize them)")


def test_a_missing_frame_file_names_record_and_step(tmp_path):
    paths = write_frames(tmp_path, "a", [frame(0)]) + ["a/frame_001.png"]
    with pytest.raises(DataError) as error:
        build_clips(tmp_path, {"a": paths}, {"type": "image", "channels": 3})
    assert str(error.value) == f"clips.jsonl, line 1, step 1: feature `frames`: {tmp_path}/a/frame_001.png: file not found"


def test_frames_from_the_rows_of_a_long_table(tmp_path):
    clips = {"a": [frame(i) for i in range(3)], "b": [frame(i + 4) for i in range(2)]}
    paths = {name: write_frames(tmp_path, name, frames) for name, frames in clips.items()}
    rows = [(name, step, path) for name in clips for step, path in enumerate(paths[name])]
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(["clip", "step", "path"])
    writer.writerows(reversed(rows))  # out of order: order_by puts the steps back
    spec = {"name": "clips", "format": "sequence_example",
            "source": {"builder": "csv", "path": "frames.csv", "group_by": "clip", "order_by": "step"},
            "context": {"clip": {"dtype": "string"}},
            "sequence": {"frames": {"type": "image", "channels": 3, "source": "path"}},
            "input": {"mask_feature": "mask"}, "output": {"shards": 1}}
    info = tb.build(write_spec(tmp_path, spec, {"frames.csv": text.getvalue()}), output=tmp_path / "out")
    check_clips(info, clips, batch_size=2)


def test_a_per_step_image_is_no_longer_refused(tmp_path):
    spec = {"name": "clips", "format": "sequence_example",
            "source": {"builder": "sequence_jsonl", "path": "clips.jsonl"},
            "sequence": {"frame": {"type": "image", "channels": 3}}}
    loaded = tb.load_spec(write_spec(tmp_path, spec))
    assert loaded.features["frame"].sequence
    reading = loaded.features["frame"].reading(loaded.input)
    assert reading["parse"] == {"frame": ("fixed_steps", "string", []),
                                "frame/shape": ("fixed_steps", "int64", [3])}


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(lengths=st.lists(st.integers(0, 4), min_size=1, max_size=4), batch_size=st.integers(1, 3))
def test_random_clip_lengths_round_trip(tmp_path_factory, lengths, batch_size):
    folder = tmp_path_factory.mktemp("clips")
    clips = {f"c{number}": [frame(number + step, (8, 8)) for step in range(length)]
             for number, length in enumerate(lengths)}
    paths = {name: write_frames(folder, name, frames) for name, frames in clips.items()}
    info = build_clips(folder, paths, {"type": "image", "channels": 3})
    check_clips(info, clips, batch_size)


@pytest.mark.parametrize("frame_spec,options,shape,dtype", [
    ({"type": "image", "channels": 3, "encoding": "raw"}, {}, (24, 32), np.uint8),
    ({"type": "image", "channels": 3}, {"image_size": [10, 12]}, (10, 12), np.uint8),
    ({"type": "image", "channels": 3}, {"image_dtype": "float32"}, (24, 32), np.float32),
])
def test_raw_frames_and_the_reading_options_apply_per_step(tmp_path, frame_spec, options, shape, dtype):
    clips = {"a": [frame(i) for i in range(3)], "b": [frame(1, (20, 16))]}
    paths = {name: write_frames(tmp_path, name, frames) for name, frames in clips.items()}
    info = build_clips(tmp_path, paths, frame_spec, input={"mask_feature": "mask", **options})
    batch, = read_both(info, batch_size=2)
    assert batch["frames"].shape == (2, 3, *shape, 3) and batch["frames"].dtype == dtype
    records = {record["clip"].decode(): record["frames"] for record in tb.read(info.path, "train")}
    for row, name in enumerate(batch["clip"].tolist()):
        stored = records[name.decode()]
        height, width = stored.shape[1:3]
        np.testing.assert_array_equal(batch["frames"][row, :len(stored), :height, :width], stored)
        if "image_size" not in options:  # (resized: compared between the readers alone)
            wanted = np.stack(clips[name.decode()]).astype(dtype) / (255 if dtype == np.float32 else 1)
            np.testing.assert_array_equal(stored, wanted.astype(dtype))
