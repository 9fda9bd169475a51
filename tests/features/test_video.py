"""`type: video`: clips written here with PyAV (MPEG-4 Part 2 in MP4, MOV, AVI; VP9 in WebM)
from scikit-image's real photographs (astronaut, coffee, chelsea: pans and zooms), built from a
plain table of paths (one clip per record) and read back through tb.read, the generated module
and tb.input_fn. Every stored frame is compared with PyAV's own decode of the same frame: equal
when stored losslessly (PNG), within a PSNR bar when re-encoded as JPEG (the default).
"""
from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path

import av
import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image
from skimage import data as photos

import tfrecord_builder as tb
from tfrecord_builder.errors import DataError, SpecError
from tfrecord_builder.media.video import natural_key

from conftest import ROOT, batches_as_numpy, import_module, write_spec
from support.clips import write_clip

PHOTOS = {"astronaut": photos.astronaut(), "coffee": photos.coffee(), "chelsea": photos.chelsea()}
MOTIONS = ["pan_left", "pan_right", "zoom_in", "zoom_out"]
JPEG_PSNR_BAR = 30.0  # dB: measured 36-38 dB at quality 90 on these clips


def pan(photo: str, count: int, size: tuple[int, int] = (48, 64)) -> list[np.ndarray]:
    """`count` frames panning right across the photograph, 6 pixels a frame."""
    pixels = PHOTOS[photo]
    return [pixels[60:60 + size[0], 6 * i:6 * i + size[1]].copy() for i in range(count)]


def zoom(photo: str, count: int, size: tuple[int, int] = (48, 64)) -> list[np.ndarray]:
    """`count` frames zooming into the photograph's centre (each a smaller crop resized to `size`)."""
    pixels = Image.fromarray(PHOTOS[photo])
    frames = []
    for i in range(count):
        scale = 1.0 - 0.6 * i / max(count, 1)
        width, height = int(pixels.width * scale), int(pixels.height * scale)
        left, top = (pixels.width - width) // 2, (pixels.height - height) // 2
        frames.append(np.asarray(pixels.crop((left, top, left + width, top + height)).resize((size[1], size[0]))))
    return frames


def pyav_frames(path: Path) -> list[np.ndarray]:
    """The clip's frames as PyAV decodes them (RGB)."""
    with av.open(str(path)) as container:
        return [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]


def build_clips(folder: Path, paths: list[str], video: dict, overwrite: bool = False, **extra) -> tb.DatasetInfo:
    table = "clip,path\n" + "".join(f"{number},{path}\n" for number, path in enumerate(paths))
    spec = {"name": "clips", "format": "sequence_example", "source": {"builder": "csv", "path": "clips.csv"},
            "context": {"clip": {"dtype": "int64"}},
            "sequence": {"frames": {"type": "video", "source": "path", **video}},
            "input": {"mask_feature": "mask"}, "output": {"shards": 1}, **extra}
    return tb.build(write_spec(folder, spec, {"clips.csv": table}), output=folder / "out", overwrite=overwrite)


def read_frames(info) -> dict[int, np.ndarray]:
    return {int(record["clip"]): record["frames"] for record in tb.read(info.path, "train")}


def contexts(tf, info) -> dict[int, dict[str, list]]:
    """Each record's video context keys, parsed by hand from the shard."""
    found = {}
    for record in tf.data.TFRecordDataset([str(path) for path in Path(info.path).glob("*.tfrecord*")]):
        context, _ = tf.io.parse_single_sequence_example(record, context_features={
            "clip": tf.io.FixedLenFeature([], tf.int64),
            "frames/duration": tf.io.FixedLenFeature([], tf.float32),
            "frames/frame_rate": tf.io.FixedLenFeature([], tf.float32),
            "frames/original_size": tf.io.FixedLenFeature([2], tf.int64)})
        found[int(context["clip"])] = {key: value.numpy().tolist() for key, value in context.items()}
    return found


def psnr(one: np.ndarray, other: np.ndarray) -> float:
    error = np.mean((one.astype(np.float64) - other.astype(np.float64)) ** 2)
    return float("inf") if error == 0 else 10 * np.log10(255.0**2 / error)


# ---- round trips ---------------------------------------------------------------------------------
@pytest.mark.parametrize("suffix,codec", [("mp4", "mpeg4"), ("mov", "mpeg4"), ("avi", "mpeg4"), ("webm", "libvpx-vp9")])
def test_png_frames_equal_pyav_decode_of_every_frame(tf, tmp_path, suffix, codec):
    clips = [write_clip(tmp_path / f"a.{suffix}", pan("astronaut", 7), codec=codec),
             write_clip(tmp_path / f"b.{suffix}", zoom("coffee", 4, (32, 48)), codec=codec)]
    info = build_clips(tmp_path, [clip.name for clip in clips], {"encoding": "png", "channels": 3})
    frames = read_frames(info)
    for number, clip in enumerate(clips):
        np.testing.assert_array_equal(frames[number], np.stack(pyav_frames(clip)))
    assert contexts(tf, info)[1] == {"clip": 1, "frames/duration": pytest.approx(0.4, abs=0.11),
                                     "frames/frame_rate": 10.0, "frames/original_size": [32, 48]}
    module = import_module(Path(info.path) / "clips_input.py")
    for dataset in (module.input_fn("train", batch_size=2, shuffle=False),
                    tb.input_fn(info.path, "train", batch_size=2, shuffle=False)):
        batch, = batches_as_numpy(dataset)
        assert batch["frames"].shape == (2, 7, 48, 64, 3)  # padded to the batch's longest and largest
        for row, number in enumerate(batch["clip"].tolist()):
            length = len(frames[number])
            assert batch["sequence_length"][row] == length
            assert batch["mask"][row].tolist() == [step < length for step in range(7)]
            height, width = frames[number].shape[1:3]
            np.testing.assert_array_equal(batch["frames"][row, :length, :height, :width], frames[number])
            assert not batch["frames"][row, length:].any() and not batch["frames"][row, :, height:].any()


def test_jpeg_frames_by_default_within_the_psnr_bar(tmp_path):
    clip = write_clip(tmp_path / "c.mp4", zoom("chelsea", 6))
    info = build_clips(tmp_path, ["c.mp4"], {"shape": [48, 64, 3]})
    assert info.spec.features["frames"].encoding == "jpeg"
    stored, decoded = read_frames(info)[0], pyav_frames(clip)
    assert len(stored) == len(decoded) == 6
    assert min(psnr(one, other) for one, other in zip(stored, decoded)) >= JPEG_PSNR_BAR


def test_fps_keeps_the_first_frame_at_or_after_each_step_and_resizes(tmp_path):
    clip = write_clip(tmp_path / "a.mp4", pan("astronaut", 12), rate=10)
    info = build_clips(tmp_path, ["a.mp4"], {"fps": 4, "encoding": "png", "shape": [24, 32, 3]})
    # 10 frames a second at 0.0, 0.1, ...: 4 a second keeps 0.0, 0.3 (first >= 0.25), 0.5, 0.8, 1.0
    wanted = [np.asarray(Image.fromarray(frame).resize((32, 24), Image.BILINEAR))
              for index, frame in enumerate(pyav_frames(clip)) if index in (0, 3, 5, 8, 10)]
    np.testing.assert_array_equal(read_frames(info)[0], np.stack(wanted))


def test_max_frames_cuts_a_clip_and_says_how_many_were_cut(tmp_path):
    clips = [write_clip(tmp_path / "a.mp4", pan("astronaut", 9)), write_clip(tmp_path / "b.mp4", pan("coffee", 3))]
    with pytest.warns(tb.BuildWarning):
        info = build_clips(tmp_path, ["a.mp4", "b.mp4"], {"max_frames": 4, "encoding": "png", "channels": 3})
    frames = read_frames(info)
    np.testing.assert_array_equal(frames[0], np.stack(pyav_frames(clips[0])[:4]))
    np.testing.assert_array_equal(frames[1], np.stack(pyav_frames(clips[1])))
    assert "feature `frames`: 1 clip cut at max_frames (4 frames kept)" in info.warnings


def test_max_frames_stops_decoding_before_the_rest_of_the_clip(tmp_path):
    """A clip cut in half (its index up front, so FFmpeg reads what is left): decoding it whole
    fails, but max_frames stops before the damage, so the frames past it are never decoded."""
    clip = write_clip(tmp_path / "full.mp4", pan("astronaut", 60), options={"movflags": "faststart"})
    whole = clip.read_bytes()
    (tmp_path / "cut.mp4").write_bytes(whole[:len(whole) // 2])
    with pytest.raises(DataError, match=r"cut\.mp4: truncated: \d+ frames decoded of the 60 the file lists$"):
        build_clips(tmp_path, ["cut.mp4"], {"channels": 3})
    with pytest.warns(tb.BuildWarning):
        info = build_clips(tmp_path, ["cut.mp4"], {"channels": 3, "encoding": "png", "max_frames": 2})
    np.testing.assert_array_equal(read_frames(info)[0], np.stack(pyav_frames(clip)[:2]))


def test_a_folder_of_frames_in_natural_order(tmp_path):
    frames = pan("chelsea", 12, (20, 24))
    for index, pixels in enumerate(frames):
        path = tmp_path / "clip_0001" / f"frame_{index}.png"  # frame_10 sorts before frame_2 as text
        path.parent.mkdir(exist_ok=True)
        Image.fromarray(pixels).save(path)
    info = build_clips(tmp_path, ["clip_0001"], {"encoding": "png", "channels": 3})
    np.testing.assert_array_equal(read_frames(info)[0], np.stack(frames))
    assert sorted(["f10.jpg", "f2.jpg", "f1.jpg"], key=natural_key) == ["f1.jpg", "f2.jpg", "f10.jpg"]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(length=st.integers(1, 10), fps=st.sampled_from([None, 3.0, 5.0, 20.0]),
       max_frames=st.sampled_from([None, 1, 4]))
def test_random_clip_lengths_keep_the_frames_the_rules_say(tmp_path_factory, length, fps, max_frames):
    folder = tmp_path_factory.mktemp("clip")
    clip = write_clip(folder / "a.mp4", pan("coffee", length, (16, 16)), rate=10)
    with av.open(str(clip)) as container:
        times = [frame.time for frame in container.decode(video=0)]
    kept: list[int] = []
    for index, time in enumerate(times):
        if fps is None or time - times[0] >= len(kept) / fps - 1e-6:
            kept.append(index)
    kept = kept[:max_frames]
    video = {"encoding": "png", "channels": 3, "fps": fps, "max_frames": max_frames}
    info = build_clips(folder, ["a.mp4"], {key: value for key, value in video.items() if value is not None})
    decoded = pyav_frames(clip)
    np.testing.assert_array_equal(read_frames(info)[0], np.stack([decoded[index] for index in kept]))


# ---- the bundled clips (data/clips: pans and zooms over scikit-image's photographs) ---------------
def test_the_bundled_clips_build_as_pyav_decodes_them_with_their_labels_and_figures(tf, tmp_path):
    """specs/clips.yaml as committed (JPEG frames, within the PSNR bar) and with `encoding: png`
    (every kept frame equal to PyAV's decode of it): the frames `fps: 6` keeps, the motion from
    clips.csv, the clip's duration, frame rate and size as PyAV reads them, and input_fn's batches."""
    table = {row["path"]: row for row in csv.DictReader(open(ROOT / "data" / "clips" / "clips.csv"))}
    assert len(table) == 64 and {row["motion"] for row in table.values()} == {
        "pan_left", "pan_right", "zoom_in", "zoom_out"}
    spec = yaml.safe_load((ROOT / "specs" / "clips.yaml").read_text())
    video = spec["sequence"]["frames"]
    (tmp_path / "data").symlink_to(ROOT / "data", target_is_directory=True)
    write_spec(tmp_path / "specs", {**spec, "sequence": {"frames": {**video, "encoding": "png"}}})
    built = {"jpeg": tb.build(ROOT / "specs" / "clips.yaml", output=tmp_path / "jpeg"),
             "png": tb.build(tmp_path / "specs" / "spec.yaml", output=tmp_path / "png")}
    wanted, figures = {}, {}
    for path in table:
        with av.open(str(ROOT / "data" / "clips" / path)) as container:
            stream = container.streams.video[0]
            decoded = [(frame.time, frame.to_ndarray(format="rgb24")) for frame in container.decode(stream)]
            figures[path] = {"frames/duration": pytest.approx(container.duration / 1e6),
                             "frames/frame_rate": float(stream.average_rate),
                             "frames/original_size": [stream.height, stream.width]}
        kept = []
        for time, pixels in decoded:  # the first frame at or after each 1/6 s, up to 10 of them
            if time - decoded[0][0] >= len(kept) / video["fps"] - 1e-6 and len(kept) < video["max_frames"]:
                kept.append(pixels)
        wanted[path] = np.stack(kept)
    assert {len(frames) for frames in wanted.values()} == {6, 7, 8, 9, 10}  # 1.0-1.6 s at 6 a second
    for encoding, info in built.items():
        stored = {record["clip"].decode(): record for split in ("train", "test") for record in tb.read(info.path, split)}
        assert stored.keys() == table.keys()
        for path, record in stored.items():
            names = info.spec.features["motion"].names
            assert names[int(record["motion"])] == table[path]["motion"]
            assert record["photo"].decode() == table[path]["photo"]
            if encoding == "png":
                np.testing.assert_array_equal(record["frames"], wanted[path], err_msg=path)
            else:
                assert record["frames"].shape == wanted[path].shape
                assert min(psnr(one, other) for one, other in zip(record["frames"], wanted[path])) >= JPEG_PSNR_BAR
    found = {}
    for record in tf.data.TFRecordDataset([str(path) for path in Path(built["jpeg"].path).glob("*.tfrecord*")]):
        context, _ = tf.io.parse_single_sequence_example(record, context_features={
            "clip": tf.io.FixedLenFeature([], tf.string),
            "frames/duration": tf.io.FixedLenFeature([], tf.float32),
            "frames/frame_rate": tf.io.FixedLenFeature([], tf.float32),
            "frames/original_size": tf.io.FixedLenFeature([2], tf.int64)})
        clip = context.pop("clip").numpy().decode()
        found[clip] = {key: value.numpy().tolist() for key, value in context.items()}
    assert found == figures
    module = import_module(Path(built["png"].path) / "clips_input.py")
    (features, labels), = batches_as_numpy(module.input_fn("test", batch_size=16, shuffle=False))
    steps = max(len(wanted[clip.decode()]) for clip in features["clip"])
    assert features["frames"].shape == (16, steps, 64, 64, 3) and features["frames"].dtype == np.uint8
    for row, clip in enumerate(features["clip"].tolist()):
        length = len(wanted[clip.decode()])
        assert features["sequence_length"][row] == length
        assert features["frames_mask"][row].tolist() == [step < length for step in range(steps)]
        np.testing.assert_array_equal(features["frames"][row, :length], wanted[clip.decode()])
        assert MOTIONS[labels[row]] == table[clip.decode()]["motion"]


@pytest.mark.slow
def test_the_demos_clips_train_a_classifier_from_the_generated_module(tf, tmp_path):
    """`make demo`'s video: specs/clips.yaml built, its four camera moves learnt by the demo's 3-D
    CNN from the generated module (the 16 test clips of two photographs never seen in training; the
    demo reaches 0.94-1.00 over seeds 0-3 in its 40 epochs, 0.875-1.00 in 20: seed 0 1.00)."""
    import train  # the demo's Keras helpers (demo/ is on the path: tests/conftest.py)

    info = tb.build(ROOT / "specs" / "clips.yaml", output=tmp_path)
    module = import_module(Path(info.path) / "clips_input.py")
    assert train.train_video(module.input_fn, info, epochs=20) >= 0.75


# ---- bad input -----------------------------------------------------------------------------------
def test_bad_clips_are_one_line_naming_the_file(tmp_path):
    (tmp_path / "junk.mp4").write_bytes(bytes(range(256)) * 20)
    whole = write_clip(tmp_path / "full.mp4", pan("astronaut", 20)).read_bytes()
    (tmp_path / "cut.mp4").write_bytes(whole[:len(whole) // 2])  # its index (at the end) cut off
    (tmp_path / "empty").mkdir()
    with av.open(str(tmp_path / "sound.mp4"), "w") as out:  # a clip of sound alone
        stream = out.add_stream("aac", rate=16000)
        silence = av.AudioFrame.from_ndarray(np.zeros((1, 1024), np.float32), format="fltp", layout="mono")
        silence.sample_rate = 16000
        out.mux(stream.encode(silence))
        out.mux(stream.encode())
    sizes = tmp_path / "sizes"
    sizes.mkdir()
    for index, size in enumerate([(20, 24), (20, 24), (16, 24)]):
        Image.fromarray(pan("coffee", 1, size)[0]).save(sizes / f"f{index}.png")
    expected = {
        "junk.mp4": f"clips.csv, line 2: feature `frames`: {tmp_path}/junk.mp4: not a video FFmpeg can read "
                    "(Invalid data found when processing input)",
        "cut.mp4": f"clips.csv, line 2: feature `frames`: {tmp_path}/cut.mp4: not a video FFmpeg can read "
                   "(Invalid data found when processing input)",
        "missing.mp4": f"clips.csv, line 2: feature `frames`: {tmp_path}/missing.mp4: file not found",
        "empty": f"clips.csv, line 2: feature `frames`: {tmp_path}/empty: no frames",
        "sound.mp4": f"clips.csv, line 2: feature `frames`: {tmp_path}/sound.mp4: no video stream",
        "sizes": f"clips.csv, line 2, step 2: feature `frames`: {tmp_path}/sizes: a frame of 24x16 pixels, but "
                 "step 0 is 24x20 pixels: the frames of a record share one size (give the feature a fixed `shape` "
                 "to resize them)",
    }
    for path, message in expected.items():
        with pytest.raises(DataError) as error:
            build_clips(tmp_path, [path], {"channels": 3})
        assert str(error.value) == message
    with pytest.raises(DataError) as error:
        build_clips(tmp_path, ["sizes"], {"channels": 3, "fps": 5})
    assert str(error.value) == (f"clips.csv, line 2: feature `frames`: {tmp_path}/sizes: a folder of frames has no "
                                "times: `fps` applies to video files only")


def write_with_sound(path: Path, frames: list[np.ndarray], codec: str, sound: str, seconds: float) -> Path:
    """A clip with a sound track `seconds` long (longer than its video): the file lasts as long as the sound."""
    with av.open(str(path), "w") as out:
        video = out.add_stream(codec, rate=10)
        video.height, video.width = frames[0].shape[:2]
        video.pix_fmt = "yuv420p"
        audio = out.add_stream(sound, rate=48000)
        for pixels in frames:
            out.mux(video.encode(av.VideoFrame.from_ndarray(pixels, format="rgb24")))
        out.mux(video.encode())
        for start in range(0, int(48000 * seconds), 960):
            silence = av.AudioFrame.from_ndarray(np.zeros((1, 960), np.float32), format="fltp", layout="mono")
            silence.sample_rate, silence.pts = 48000, start
            out.mux(audio.encode(silence))
        out.mux(audio.encode())
    return path


@pytest.mark.parametrize("name,codec", [("vp9.webm", "libvpx-vp9"), ("vp8.webm", "libvpx"), ("mpeg4.mkv", "mpeg4")])
def test_a_cut_webm_or_matroska_file_is_refused_wherever_it_is_cut(tmp_path, name, codec):
    """Matroska and WebM count no frames, so FFmpeg ends a cut one in silence: before, these
    built with the frames that were left. Their header says how long the video lasts (4 s here)."""
    whole = write_clip(tmp_path / name, pan("astronaut", 40), codec=codec).read_bytes()
    for fraction in (0.3, 0.6, 0.9):
        cut = tmp_path / f"{int(fraction * 100)}_{name}"
        cut.write_bytes(whole[:int(len(whole) * fraction)])
        with av.open(str(cut)) as container:
            times = [frame.time for frame in container.decode(video=0)]  # what is left, as PyAV decodes it
        assert len(times) < 40
        left = (f"{len(times)} frames decoded, ending at {times[-1] + 0.1:.2f} s" if times else "no frames decoded")
        with pytest.raises(DataError) as error:
            build_clips(tmp_path, [cut.name], {"channels": 3})
        assert str(error.value) == (f"clips.csv, line 2: feature `frames`: {cut}: truncated: {left} of the 4.00 s "
                                    "the file lists")


def test_an_mp4_cut_inside_its_index_is_one_line(tmp_path):
    """An MP4 whose index (at its end) is cut part way: FFmpeg opens it with no stream, a data
    stream, or a video stream without its codec. Before, the last was a traceback (AttributeError)."""
    whole = write_clip(tmp_path / "full.mp4", pan("astronaut", 20, (16, 24))).read_bytes()
    index = whole.rindex(b"moov") - 4
    said = set()
    for end in range(index + 8, len(whole), 8):
        (tmp_path / "cut.mp4").write_bytes(whole[:end])
        try:
            info = build_clips(tmp_path, ["cut.mp4"], {"channels": 3}, overwrite=True)
        except DataError as error:
            said.add(str(error).removeprefix(f"clips.csv, line 2: feature `frames`: {tmp_path}/cut.mp4: "))
        else:  # only what follows the frames' index was cut (its tags)
            assert len(read_frames(info)[0]) == 20
            said.add("every frame")
    assert said == {"every frame", "not a video FFmpeg can read (Invalid data found when processing input)",
                    "not a video FFmpeg can read (End of file)", "no frames decoded (an empty, cut or corrupt file)",
                    "truncated: 0 frames decoded of the 20 the file lists",
                    "no video stream, nor sound (a cut or corrupt file?)",
                    "no decoder for its video stream (a codec FFmpeg doesn't know, or a cut or corrupt file)"}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(fraction=st.floats(0.02, 0.9999), suffix=st.sampled_from(["webm", "mkv", "mp4", "avi", "mov"]))
def test_a_clip_cut_anywhere_is_refused_or_keeps_every_frame(tmp_path_factory, fraction, suffix):
    """Never fewer frames in silence: a cut that takes frames is an error; one that takes only
    what follows them (an index, tags) keeps them all."""
    folder = tmp_path_factory.mktemp("cut")
    codec = "libvpx-vp9" if suffix == "webm" else "mpeg4"
    whole = write_clip(folder / f"whole.{suffix}", pan("chelsea", 20, (16, 24)), codec=codec)
    data = whole.read_bytes()
    (folder / f"cut.{suffix}").write_bytes(data[:max(1, int(len(data) * fraction))])
    try:
        info = build_clips(folder, [f"cut.{suffix}"], {"channels": 3, "encoding": "png"})
    except DataError as error:
        assert re.search(r"cut\.\w+: (truncated: |corrupt or truncated video |not a video FFmpeg can read |"
                         r"no decoder for its video stream |no video stream, nor sound |no frames decoded )", str(error)), \
            str(error)
    else:
        np.testing.assert_array_equal(read_frames(info)[0], np.stack(pyav_frames(whole)))


def test_every_whole_clip_builds_with_all_its_frames(tmp_path):
    """No false alarm: whole files of every container, a sound track longer than the video, and a
    WebM written live (no duration in its header) keep every frame PyAV decodes."""
    frames = pan("coffee", 23)
    clips = [write_clip(tmp_path / f"a.{suffix}", frames, codec=codec)
             for suffix, codec in [("mp4", "mpeg4"), ("mov", "mpeg4"), ("avi", "mpeg4"), ("mkv", "mpeg4"),
                                   ("webm", "libvpx-vp9")]]
    clips += [write_clip(tmp_path / "vp8.webm", frames, codec="libvpx"),
              write_clip(tmp_path / "start.mp4", frames, options={"movflags": "faststart"}),
              write_clip(tmp_path / "live.webm", frames, codec="libvpx-vp9", options={"live": "1"}),
              write_with_sound(tmp_path / "sound.webm", frames, "libvpx-vp9", "libopus", 3.1),
              write_with_sound(tmp_path / "sound.mkv", frames, "mpeg4", "aac", 3.1),
              write_with_sound(tmp_path / "sound.mp4", frames, "mpeg4", "aac", 3.1)]
    info = build_clips(tmp_path, [clip.name for clip in clips], {"channels": 3, "encoding": "png"})
    stored = read_frames(info)
    for number, clip in enumerate(clips):
        np.testing.assert_array_equal(stored[number], np.stack(pyav_frames(clip)), err_msg=clip.name)
        assert len(stored[number]) == 23


def test_the_command_line_exits_1_on_a_bad_clip_and_skips_it_under_on_error_skip(tmp_path):
    write_clip(tmp_path / "good.mp4", pan("chelsea", 3))
    (tmp_path / "junk.mp4").write_bytes(b"\x00" * 4000)
    (tmp_path / "clips.csv").write_text("clip,path\n0,good.mp4\n1,junk.mp4\n")
    spec = {"name": "clips", "format": "sequence_example", "source": {"builder": "csv", "path": "clips.csv"},
            "context": {"clip": {"dtype": "int64"}},
            "sequence": {"frames": {"type": "video", "source": "path", "channels": 3}}}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    command = [sys.executable, "-m", "tfrecord_builder", "build", str(tmp_path / "spec.yaml"),
               "--output", str(tmp_path / "out")]
    failed = subprocess.run(command, capture_output=True, text=True)
    assert failed.returncode == 1
    assert f"clips.csv, line 3: feature `frames`: {tmp_path}/junk.mp4: not a video FFmpeg can read" in failed.stderr
    spec["on_error"] = "skip"
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    skipped = subprocess.run(command, capture_output=True, text=True)
    assert skipped.returncode == 0, skipped.stderr
    assert [int(record["clip"]) for record in tb.read(tmp_path / "out" / "clips" / "1.0.0", "train")] == [0]


def test_a_video_under_context_is_refused(tmp_path):
    spec = {"name": "clips", "format": "sequence_example", "source": {"builder": "csv", "path": "clips.csv"},
            "context": {"frames": {"type": "video"}}, "sequence": {"step": {"dtype": "int64"}}}
    with pytest.raises(SpecError, match=r"context\.frames: a video is one frame per step: declare it under "
                                        r"`sequence:` of a format: sequence_example spec$"):
        tb.load_spec(write_spec(tmp_path, spec))


# ---- readers -------------------------------------------------------------------------------------
def test_the_report_shows_a_strip_of_frames_per_clip_and_the_steps(tmp_path):
    from tfrecord_builder.read.report import report_data
    from tfrecord_builder.write.info import read_info

    clips = [write_clip(tmp_path / "a.mp4", pan("astronaut", 12)), write_clip(tmp_path / "b.mp4", zoom("chelsea", 3))]
    table = "clip,path,motion\n0,a.mp4,pan\n1,b.mp4,zoom\n"
    spec = {"name": "clips", "format": "sequence_example", "source": {"builder": "csv", "path": "clips.csv"},
            "context": {"clip": {"dtype": "int64"}, "motion": {"type": "class_label", "names": ["pan", "zoom"]}},
            "sequence": {"frames": {"type": "video", "source": "path", "encoding": "png", "channels": 3}}}
    info = tb.build(write_spec(tmp_path, spec, {"clips.csv": table}), output=tmp_path / "out")
    data = report_data(read_info(info.path), sample=None)
    frames = next(feature for feature in data.features if feature.name == "frames")
    grid, = frames.images
    assert [label for label, _ in grid.rows] == ["pan", "zoom"]
    assert grid.note == ("2 clips (the first of each class of motion), one a row: up to 8 frames each, evenly "
                         "spaced from its first to its last")
    decoded = [pyav_frames(clip) for clip in clips]
    for (_, shown), clip, spaced in zip(grid.rows, decoded, [[0, 2, 3, 5, 6, 8, 9, 11], [0, 1, 2]]):
        assert len(shown) == len(spaced)
        for image, index in zip(shown, spaced):
            np.testing.assert_array_equal(image, clip[index])
    assert sum(frames.steps.counts["train"]) == 2  # steps per clip, counted for both


def test_tensorflow_datasets_refuses_a_video_dataset_in_one_line(tmp_path):
    """TFDS' Video is a Sequence of images inside a tf.train.Example; ours are SequenceExamples,
    which TFDS doesn't read: a refusal with the reason, never a dataset that reads back empty."""
    tfds = pytest.importorskip("tensorflow_datasets")
    write_clip(tmp_path / "a.mp4", pan("coffee", 3))
    info = build_clips(tmp_path, ["a.mp4"], {"channels": 3})
    with pytest.raises(ValueError, match=r"^clips 1\.0\.0 holds tf\.train\.SequenceExample records, which TensorFlow "
                                         r"Datasets does not read .*read it with clips_input\.py, tb\.input_fn or "
                                         r"tb\.read$"):
        tfds.builder_from_directory(info.path)


def test_clip_features_yield_each_clips_duration_rate_and_size_beside_its_frames(tf, tmp_path):
    write_clip(tmp_path / "a.mp4", pan("astronaut", 12), rate=10)
    write_clip(tmp_path / "b.mp4", zoom("coffee", 5), rate=5)
    info = build_clips(tmp_path, ["a.mp4", "b.mp4"], {"shape": [24, 32, 3], "clip_features": True})
    stored = contexts(tf, info)
    module = import_module(Path(info.path) / f"{info.name}_input.py")
    ours = batches_as_numpy(module.input_fn("train", batch_size=2, shuffle=False))
    library = batches_as_numpy(tb.input_fn(info.path, "train", batch_size=2, shuffle=False))
    (batch,), (other,) = ours, library
    for key in batch:
        np.testing.assert_array_equal(batch[key], other[key])
    assert batch["frames_duration"].dtype == np.float32 and batch["frames_original_size"].dtype == np.int64
    records = {int(record["clip"]): record for record in tb.read(info.path, "train")}
    for row, clip in enumerate(batch["clip"].tolist()):
        assert batch["frames_duration"][row] == np.float32(stored[clip]["frames/duration"])
        assert batch["frames_frame_rate"][row] == [10.0, 5.0][clip] == stored[clip]["frames/frame_rate"]
        assert batch["frames_original_size"][row].tolist() == [48, 64] == stored[clip]["frames/original_size"]
        assert records[clip]["frames_original_size"].tolist() == [48, 64]
        assert records[clip]["frames_frame_rate"] == [10.0, 5.0][clip]
    assert stored[0]["frames/duration"] == pytest.approx(1.2, abs=0.11)  # 12 frames at 10 a second
    spec = {"name": "clips", "format": "sequence_example", "source": {"builder": "csv", "path": "clips.csv"},
            "context": {"frames_duration": {"dtype": "float32"}},
            "sequence": {"frames": {"type": "video", "source": "path", "clip_features": True}}}
    with pytest.raises(SpecError, match=r"sequence.frames: yields `frames_duration` beside it, already a feature's "
                                        r"name; rename one$"):
        tb.load_spec(write_spec(tmp_path / "clash", spec, {"clips.csv": "path\n"}))


@pytest.mark.parametrize("name,codec,sound", [("clip.mp4", "mpeg4", "aac"), ("clip.webm", "libvpx-vp9", "libopus"),
                                              ("clip.mkv", "mpeg4", "aac")])
def test_the_duration_is_the_video_streams_not_a_longer_sound_tracks(tf, tmp_path, name, codec, sound):
    """12 frames at 10 a second beside 3 s of sound: the file lasts 3 s, its video 1.2 s. Before,
    KEY/duration held the container's 3 s."""
    path = write_with_sound(tmp_path / name, pan("coffee", 12), codec, sound, 3.0)
    with av.open(str(path)) as container:
        assert container.duration / av.time_base == pytest.approx(3.0, abs=0.05)  # the sound's
        stream = container.streams.video[0]
        if stream.duration is not None:
            expected = float(stream.duration * stream.time_base)
        else:  # Matroska and WebM: the track's DURATION tag, hh:mm:ss.nnnnnnnnn
            hours, minutes, seconds = stream.metadata["DURATION"].split(":")
            expected = int(hours) * 3600 + int(minutes) * 60 + float(seconds)
    assert expected == pytest.approx(1.2, abs=0.01)
    info = build_clips(tmp_path, [name], {"channels": 3, "encoding": "png", "clip_features": True})
    (record,) = tb.read(info.path, "train")
    assert record["frames"].shape[0] == 12
    assert record["frames_duration"] == np.float32(expected)
    assert contexts(tf, info)[0]["frames/duration"] == pytest.approx(expected)
