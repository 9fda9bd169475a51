"""media/source.py: every media file is opened one way, so a clip, a recording and a photo in a
bucket (an S3 server on 127.0.0.1, reached through the standard variables) build exactly as the
same files on disk do, and each kind says the same of a file that isn't there or is a folder.
The clip is an MP4 written here by PyAV (and a folder of frames), the recording a WAV written by
soundfile, the photo a JPEG of scikit-image's coffee cup."""
from __future__ import annotations

import io
from pathlib import Path

import av
import numpy as np
import pytest
import soundfile
from PIL import Image
from skimage import data as photos

import tfrecord_builder as tb
from tfrecord_builder.media.audio import BadAudio, files
from tfrecord_builder.media.images import BadImage, pillow
from tfrecord_builder.media.video import BadVideo, Clip

from conftest import write_spec
from support.clips import mp4_bytes

PREFIX = "media"
pytestmark = [pytest.mark.server, pytest.mark.usefixtures("s3")]  # the server, and the variables that point clients at it


def _wav(samples: np.ndarray, rate: int) -> bytes:
    buffer = io.BytesIO()
    soundfile.write(buffer, samples, rate, format="WAV", subtype="PCM_16")
    return buffer.getvalue()


def _encoded(pixels: np.ndarray, format: str) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format)
    return buffer.getvalue()


def _files() -> dict[str, bytes]:
    """Two rows' clip, recording and photo, by their path below the table's folder: the second
    row's clip a folder of PNG frames."""
    coffee, cat = photos.coffee(), photos.chelsea()
    pan = [coffee[100:148, 8 * i:8 * i + 64].copy() for i in range(6)]
    rng = np.random.default_rng(7)
    found = {"clips/pan.mp4": mp4_bytes(pan)}
    found.update({f"clips/frames/frame_{i}.png": _encoded(cat[50 + 4 * i:98 + 4 * i, 100:164], "PNG")
                  for i in range(1, 11)})  # frame_2 comes before frame_10
    for row in range(2):
        found[f"sounds/{row}.wav"] = _wav(rng.uniform(-0.5, 0.5, (800 + 300 * row, 1)), 8000)
        found[f"photos/{row}.jpg"] = _encoded((coffee if row == 0 else cat)[:120, :160], "JPEG")
    return found


def _put(files: dict[str, bytes]) -> None:
    import boto3

    client = boto3.client("s3")
    for name, data in files.items():
        client.put_object(Bucket="data", Key=f"{PREFIX}/{name}", Body=data)


def _build(folder: Path, place: str) -> tb.DatasetInfo:
    """The table of two rows with its paths below `place` (a local folder or a URL), built."""
    table = "id,clip,sound,photo\n" + "".join(
        f"{row},{place}/{clip},{place}/sounds/{row}.wav,{place}/photos/{row}.jpg\n"
        for row, clip in enumerate(["clips/pan.mp4", "clips/frames"]))
    spec = {"name": "media", "format": "sequence_example", "source": {"builder": "csv", "path": "rows.csv", "key": "id"},
            "context": {"id": {"dtype": "int64"}, "sound": {"type": "audio", "sample_rate": 8000},
                        "photo": {"type": "image", "channels": 3}},
            "sequence": {"clip": {"type": "video", "encoding": "png", "clip_features": True}},
            "output": {"shards": 1}}
    return tb.build(write_spec(folder, spec, {"rows.csv": table}), output=folder / "out")


def _records(info: tb.DatasetInfo) -> dict[int, dict[str, np.ndarray]]:
    return {int(record["id"]): record for record in tb.read(info.path, "train")}


def test_a_clip_a_recording_and_a_photo_in_a_bucket_build_as_the_same_files_on_disk(tmp_path):
    media = _files()
    for name, data in media.items():
        (tmp_path / "files" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "files" / name).write_bytes(data)
    _put(media)
    local = _build(tmp_path / "local", str(tmp_path / "files"))
    remote = _build(tmp_path / "remote", f"s3://data/{PREFIX}")

    here, there = _records(local), _records(remote)
    assert sorted(here) == sorted(there) == [0, 1]
    for row in here:
        assert sorted(here[row]) == sorted(there[row])
        for name, value in here[row].items():
            assert np.array_equal(np.asarray(value), np.asarray(there[row][name])), (row, name)
    shards = {path.name: path.read_bytes() for path in sorted(Path(local.path).glob("*.tfrecord*"))}
    assert shards and shards == {path.name: path.read_bytes() for path in sorted(Path(remote.path).glob("*.tfrecord*"))}

    # and what was stored is the files' content: PyAV's frames (PNG: lossless), the frames of the
    # folder in their names' numbers' order, the WAV's samples, the photo's pixels
    with av.open(io.BytesIO(media["clips/pan.mp4"])) as container:
        decoded = [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]
    assert np.array_equal(there[0]["clip"], np.stack(decoded))
    frames = [np.asarray(Image.open(io.BytesIO(media[f"clips/frames/frame_{i}.png"]))) for i in range(1, 11)]
    assert np.array_equal(there[1]["clip"], np.stack(frames))
    assert list(there[1]["clip_original_size"]) == [48, 64] and float(there[1]["clip_frame_rate"]) == 0.0
    for row in (0, 1):
        samples, _ = soundfile.read(io.BytesIO(media[f"sounds/{row}.wav"]), dtype="float32")
        assert np.array_equal(there[row]["sound"], samples)
        photo = np.asarray(Image.open(io.BytesIO(media[f"photos/{row}.jpg"])).convert("RGB"))
        assert np.array_equal(there[row]["photo"], photo)


def _opening(kind: str, path: str) -> None:
    """Opens `path` as the media kind reads its files."""
    if kind == "image":
        pillow.opened(path)
    elif kind == "image header":
        pillow.stored_size(path)
    elif kind == "audio":
        with files.opened(path):
            pass
    else:
        list(Clip(path, None, None).frames())


@pytest.mark.parametrize("kind, error", [("image", BadImage), ("image header", BadImage), ("audio", BadAudio),
                                         ("video", BadVideo)])
def test_each_kind_says_the_same_of_a_missing_file_on_disk_and_in_a_bucket(tmp_path, kind, error):
    for missing in (str(tmp_path / "gone.bin"), f"s3://data/{PREFIX}/gone.bin"):
        with pytest.raises(error) as raised:
            _opening(kind, missing)
        assert str(raised.value) == "file not found", missing


@pytest.mark.parametrize("kind, error, words", [("image", BadImage, "is a folder, not an image file"),
                                                ("image header", BadImage, "is a folder, not an image file"),
                                                ("audio", BadAudio, "is a folder, not an audio file")])
def test_each_kind_says_the_same_of_a_folder_on_disk_and_in_a_bucket(tmp_path, kind, error, words):
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "inside.bin").write_bytes(b"x")
    _put({"folder/inside.bin": b"x"})
    for folder in (str(tmp_path / "folder"), f"s3://data/{PREFIX}/folder"):
        with pytest.raises(error) as raised:
            _opening(kind, folder)
        assert str(raised.value) == words, folder
