"""`infer` on tables naming masks, clips and recordings. On 850d6ac a column of palette PNG masks
was an RGB image (the palette's colours stored, not the classes) and columns of video or audio
paths were text; now `type: mask` linked to its image, `type: video` (the spec a
SequenceExample's, a frame a step) and `type: audio` at the files' rate, each building as written
with the values the files hold.
"""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import tfrecord_builder as tb
from tfrecord_builder.errors import DataError

from support.clips import write_clip

from .helpers import comment, infer_validate_build

skimage_data = pytest.importorskip("skimage.data")
skimage_filters = pytest.importorskip("skimage.filters")
skimage_measure = pytest.importorskip("skimage.measure")


def write_csv(path: Path, rows: list[list]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as file:
        csv.writer(file).writerows(rows)


# ---- masks -----------------------------------------------------------------------------------------
def coins_masks(folder: Path) -> dict[str, np.ndarray]:
    """Four crops of scikit-image's coins, each with its palette mask: Otsu's regions, as 4 classes."""
    folder.mkdir(parents=True)
    photo = skimage_data.coins()
    classes = (skimage_measure.label(photo > skimage_filters.threshold_otsu(photo)) % 4).astype(np.uint8)
    crops = {"a": (slice(0, 150), slice(0, 200)), "b": (slice(100, 303), slice(50, 384)),
             "c": (slice(0, 303), slice(0, 384)), "d": (slice(20, 120), slice(200, 380))}
    written = {}
    for name, crop in crops.items():
        Image.fromarray(photo[crop]).save(folder / f"{name}.png")
        mask = Image.fromarray(classes[crop], "P")
        mask.putpalette([0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255])  # shown in colour, read as 0-3
        mask.save(folder / f"{name}_mask.png")
        written[name] = classes[crop]
    write_csv(folder / "table.csv", [["image", "mask", "kind"]] +
              [[f"{name}.png", f"{name}_mask.png", ["heads", "tails"][index % 2]] for index, name in enumerate(crops)])
    return written


def test_a_column_of_palette_pngs_is_a_mask_of_class_indices_linked_to_its_image(tmp_path):
    written = coins_masks(tmp_path / "coins")

    text, spec, records = infer_validate_build(tmp_path, "coins/table.csv")

    assert spec["source"]["builder"] == "image_manifest"
    assert spec["features"]["image"] == {"type": "image", "encoding": "png", "shape": [None, None, 1]}
    assert spec["features"]["mask"] == {"type": "mask", "image": "image"}
    assert comment(text, "mask:") == ("guessed: palette PNGs: a mask of class indices; indices 0-3 in all 4 masks; "
                                      "linked to `image`: each mask its image's size in every row")
    found = {record["image"].shape: record for split in records.values() for record in split}
    for classes in written.values():
        record = found[(*classes.shape, 1)]
        np.testing.assert_array_equal(record["mask"][:, :, 0], classes)  # the indices, never the palette's colours


def test_a_mask_of_another_size_than_its_image_is_one_line(tmp_path):
    coins_masks(tmp_path / "coins")
    Image.open(tmp_path / "coins" / "a_mask.png").resize((100, 75), Image.Resampling.NEAREST).save(
        tmp_path / "coins" / "a_mask.png")
    with pytest.raises(DataError) as error:
        tb.infer(tmp_path / "coins" / "table.csv", tmp_path / "spec.yaml")
    assert str(error.value) == ("table.csv, line 2: mask " f"{tmp_path / 'coins' / 'a_mask.png'} is 100×75 but its "
                                f"image {tmp_path / 'coins' / 'a.png'} is 200×150 (width×height, upright); a mask must "
                                "have its image's size")


# ---- video -------------------------------------------------------------------------------------------
def decoded(path: Path) -> list[np.ndarray]:
    av = pytest.importorskip("av")
    with av.open(str(path)) as container:
        return [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]


@pytest.mark.slow
def test_a_column_of_clips_makes_a_sequence_example_spec_with_a_frame_a_step(tmp_path):
    """Pans across scikit-image's photographs, 48x64, 8 to 11 frames at 10 or 12 a second."""
    folder = tmp_path / "clips"
    folder.mkdir()
    rows = [["path", "motion", "photo"]]
    for number, (photo, count, rate) in enumerate([("astronaut", 8, 10), ("coffee", 11, 12), ("chelsea", 9, 10),
                                                   ("coffee", 10, 12)]):
        pixels = getattr(skimage_data, photo)()
        step = 1 if number % 2 else -1
        frames = [pixels[60:108, 100 + step * 6 * i:164 + step * 6 * i].copy() for i in range(count)]
        write_clip(folder / f"clip{number}.mp4", frames, rate)
        rows.append([f"clip{number}.mp4", "pan_left" if step < 0 else "pan_right", photo])
    write_csv(folder / "clips.csv", rows)

    text, spec, records = infer_validate_build(tmp_path, "clips/clips.csv")

    assert spec["format"] == "sequence_example"
    assert spec["sequence"] == {"path": {"type": "video", "shape": [48, 64, 3]}}
    assert spec["context"]["motion"] == {"type": "class_label", "names": ["pan_left", "pan_right"]}
    assert comment(text, "  path: {type") == ("guessed: all 4 clips are 48x64, 10-12 frames a second, 0.8-0.9 s: every frame "
                                      "kept (`fps:`, `max_frames:` keep fewer); a clip is one frame a step")
    clips = {len(frames): frames for frames in (decoded(folder / f"clip{number}.mp4") for number in range(4))}
    found = {record["path"].shape[0]: record for split in records.values() for record in split}
    assert sorted(found) == sorted(clips) == [8, 9, 10, 11]  # every frame of every clip
    for count, record in found.items():
        error = np.mean((record["path"].astype(np.float64) - np.stack(clips[count]).astype(np.float64)) ** 2)
        assert 10 * np.log10(255**2 / error) > 30  # each frame stored as JPEG: within the video tests' PSNR bar


# ---- audio -------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_a_column_of_recordings_is_audio_at_the_rate_most_files_have(tmp_path):
    soundfile = pytest.importorskip("soundfile")
    folder = tmp_path / "sounds"
    folder.mkdir()
    written = {}
    rows = [["file", "word"]]
    for number, (rate, hertz) in enumerate([(16000, 440.0), (16000, 660.0), (8000, 330.0), (16000, 550.0)]):
        time = np.arange(int(rate * (0.5 + 0.1 * number))) / rate
        samples = np.round(0.3 * np.sin(2 * np.pi * hertz * time) * 32767).astype(np.int16)
        soundfile.write(folder / f"say{number}.wav", samples, rate, subtype="PCM_16")
        written[f"say{number}.wav"] = samples
        rows.append([f"say{number}.wav", ["yes", "no"][number % 2]])
    write_csv(folder / "words.csv", rows)

    text, spec, records = infer_validate_build(tmp_path, "sounds/words.csv")

    assert spec["features"]["file"] == {"type": "audio", "sample_rate": 16000}
    assert comment(text, "file:") == "guessed: all 4 files: 8000-16000 Hz, 0.5-0.8 s; the others resampled to 16000 Hz"
    found = {int(record["file_length"]): record for split in records.values() for record in split}
    for name, samples in written.items():
        if name == "say2.wav":  # the 8 kHz file, resampled: twice as many samples
            assert len(samples) * 2 in found
            continue
        np.testing.assert_array_equal(found[len(samples)]["file"], samples / 32768.0)  # 16-bit at the rate: exact
