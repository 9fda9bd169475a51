"""`window:` on an audio feature: a long recording cut into fixed windows, one record each, with
its first sample kept; checked sample for sample against soundfile's read of the whole file,
through the generated module, `tb.read` and TFDS."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfrecord_builder as tb
from tfrecord_builder.features.audio import AudioWindow

from conftest import batches_as_numpy, import_module, write_spec
from support.cli import run_cli

soundfile = pytest.importorskip("soundfile")


def noise(samples: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(-32768, 32768, samples).astype(np.int16)


def spec_of(audio: dict, **keys) -> dict:
    return {"name": "long", "source": {"builder": "csv", "path": "table.csv"},
            "features": {"audio": {"type": "audio", "source": "path", "sample_rate": 8000, "dtype": "int16", **audio},
                         "name": {"dtype": "string"}}, **keys}


def build(folder: Path, audio: dict, recordings: dict[str, np.ndarray], **keys) -> tb.DatasetInfo:
    for name, samples in recordings.items():
        soundfile.write(folder / f"{name}.wav", samples, 8000, subtype="PCM_16")
    rows = "path,name\n" + "".join(f"{name}.wav,{name}\n" for name in recordings)
    return tb.build(write_spec(folder, spec_of(audio, **keys), {"table.csv": rows}), output=folder / "out")


def test_windows_are_records_with_their_offsets_read_back_everywhere(tf, tmp_path):
    recordings = {"long": noise(28000, 1), "short": noise(3000, 2), "odd": noise(10500, 3)}
    info = build(tmp_path, {"window": {"seconds": 1, "hop": 0.5}}, recordings)
    whole = {name: soundfile.read(tmp_path / f"{name}.wav", dtype="int16")[0] for name in recordings}
    # 1 s windows every 0.5 s: the long one's last full window ends at its end; the short one is
    # one short window; the odd one's last full window [2.5 s) leaves 500 samples: one more, short
    expected = [("long", start, 8000) for start in range(0, 20001, 4000)] + [("short", 0, 3000)] + \
        [("odd", 0, 8000), ("odd", 4000, 6500)]
    assert info.splits["train"].num_examples == len(expected)
    records = list(tb.read(info.path, "train"))
    got = sorted((record["name"].decode(), int(record["audio_offset"]), int(record["audio_length"]))
                 for record in records)
    assert got == sorted(expected)
    for record in records:
        start, length = int(record["audio_offset"]), int(record["audio_length"])
        np.testing.assert_array_equal(record["audio"], whole[record["name"].decode()][start: start + length])
    module = import_module(Path(info.path) / f"{info.name}_input.py")
    ours = batches_as_numpy(module.input_fn("train", batch_size=16, shuffle=False))
    library = batches_as_numpy(tb.input_fn(info.path, "train", batch_size=16, shuffle=False))
    (batch,), (other,) = ours, library
    assert set(batch) == {"audio", "audio_length", "audio_offset", "name"} and batch.keys() == other.keys()
    assert batch["audio_offset"].dtype == np.int64 and batch["audio"].shape == (len(expected), 8000)
    for key in batch:
        np.testing.assert_array_equal(batch[key], other[key])
    for row, name in enumerate(batch["name"]):
        start, length = batch["audio_offset"][row], batch["audio_length"][row]
        np.testing.assert_array_equal(batch["audio"][row, :length], whole[name.decode()][start: start + length])
        assert not batch["audio"][row, length:].any()
    tfds = pytest.importorskip("tensorflow_datasets")
    read = list(tfds.as_numpy(tfds.builder_from_directory(info.path).as_dataset(split="train", shuffle_files=False)))
    assert sorted((example["name"].decode(), int(example["audio_offset"])) for example in read) == \
        sorted((name, start) for name, start, _ in expected)


def test_a_recordings_windows_stay_in_its_split_whatever_the_row_order(tmp_path):
    recordings = {f"r{index}": noise(8000 * 3 + 100 * index, index) for index in range(12)}
    keys = {"splits": {"train": 0.5, "test": 0.5}, "output": {"shards": 2}}
    (tmp_path / "a").mkdir()
    one = build(tmp_path / "a", {"window": {"seconds": 1}}, recordings, **keys)
    splits: dict[str, set] = {}
    for split in ("train", "test"):
        for record in tb.read(one.path, split):
            splits.setdefault(record["name"].decode(), set()).add(split)
    assert sorted(splits) == sorted(recordings) and all(len(found) == 1 for found in splits.values())
    assert set().union(*splits.values()) == {"train", "test"}  # 12 recordings: both splits have some
    (tmp_path / "b").mkdir()  # the same rows backwards: the same records, byte for byte
    two = build(tmp_path / "b", {"window": {"seconds": 1}}, dict(reversed(recordings.items())), **keys)
    shards = sorted(path.name for path in Path(one.path).glob("*.tfrecord*"))
    assert len(shards) == 4 and shards == sorted(path.name for path in Path(two.path).glob("*.tfrecord*"))
    for name in shards:
        assert (Path(one.path) / name).read_bytes() == (Path(two.path) / name).read_bytes()


def test_last_drop_counts_what_it_drops(tmp_path):
    with pytest.warns(tb.BuildWarning):
        info = build(tmp_path, {"window": {"seconds": 1, "last": "drop"}},
                     {"a": noise(8000 * 2 + 10, 1), "b": noise(500, 2), "c": noise(8000, 3)})
    assert sorted(info.warnings) == ["feature `audio`: 1 recording shorter than one window: no records",
                                     "feature `audio`: 2 last windows shorter than 1 s dropped (window.last: drop)"]
    assert sorted((record["name"], int(record["audio_offset"])) for record in tb.read(info.path, "train")) == \
        [(b"a", 0), (b"a", 8000), (b"c", 0)]


@pytest.mark.parametrize("audio, keys, expected", [
    ({"window": {"seconds": 0.00001}}, {}, "audio.window.seconds: 1e-05 s is less than one sample at 8000 Hz"),
    ({"window": {"seconds": 1, "hop": 0}}, {}, "audio.window.hop: expected a positive number of seconds, received 0"),
    ({"offset_feature": "start"}, {}, "audio.offset_feature: names the start of a window: it needs `window:`"),
    ({"window": {"seconds": 1}, "offset_feature": "audio_length"}, {},
     "audio.offset_feature: `audio_length` is already the length_feature's name"),
    ({"window": {"seconds": 1}, "offset_feature": "name"}, {},
     "audio.offset_feature: `name` is already a feature's name; choose another (or null)"),
    ({"window": {"seconds": 1, "last": "pad"}}, {}, "audio.window.last: expected one of"),
])
def test_window_mistakes_are_one_line_at_their_key(tmp_path, audio, keys, expected):
    with pytest.raises(tb.SpecError) as error:
        tb.load_spec(write_spec(tmp_path, spec_of(audio, **keys), {"table.csv": "path,name\n"}))
    assert expected in str(error.value) and "\n" not in str(error.value)


def test_stratify_and_a_second_cut_are_refused(tmp_path):
    spec = spec_of({"window": {"seconds": 1}}, splits={"train": 0.5, "test": 0.5}, stratify="digit")
    spec["features"]["digit"] = {"type": "class_label", "names": ["a", "b"]}
    with pytest.raises(tb.SpecError, match=r"stratify: can't divide records that feature `audio` cuts from rows "
                                           r"\(window:\); divide them by key \(drop stratify:\)$"):
        tb.load_spec(write_spec(tmp_path, spec, {"table.csv": "path,name,digit\n"}))
    spec = spec_of({"window": {"seconds": 1}})
    spec["features"]["other"] = {"type": "audio", "source": "path", "sample_rate": 8000, "window": {"seconds": 2}}
    with pytest.raises(tb.SpecError, match=r"features.other: cuts each row into several records, as `audio` does; "
                                           r"a spec may cut rows by one feature only$"):
        tb.load_spec(write_spec(tmp_path, spec, {"table.csv": "path,name\n"}))


@settings(max_examples=200, deadline=None)
@given(samples=st.integers(1, 300), size=st.integers(1, 60), hop=st.integers(1, 80), keep=st.booleans())
def test_windows_start_every_hop_and_the_kept_ones_cover_what_full_windows_leave(samples, size, hop, keep):
    window = AudioWindow(seconds=1, last="keep" if keep else "drop")
    starts, dropped = window.starts(samples, size, hop)
    assert starts == [hop * index for index in range(len(starts))]  # every hop from the start, in order
    full = [start for start in starts if start + size <= samples]
    assert full == list(range(0, samples - size + 1, hop))  # every window that fits
    short = [start for start in starts if start + size > samples]
    assert len(short) <= 1 and all(start < samples for start in short)
    # a short window only where samples after the last full window (or a gap) start a new window
    following = full[-1] + hop if full else 0
    wanted = following < samples and (not full or full[-1] + size < samples)
    assert (short == [following]) == (wanted and keep) and dropped == (wanted and not keep)
    if keep and hop <= size:  # windows side by side or overlapping: every sample is in one
        covered = np.zeros(samples, dtype=bool)
        for start in starts:
            covered[start: start + size] = True
        assert covered.all()


def test_a_dry_run_counts_windows_and_verify_checks_their_offsets(tmp_path):
    for index in range(3):
        soundfile.write(tmp_path / f"r{index}.wav", noise(8000 * (2 + index), index), 8000, subtype="PCM_16")
    rows = "path,name\n" + "".join(f"r{index}.wav,r{index}\n" for index in range(3))
    write_spec(tmp_path, spec_of({"window": {"seconds": 1}}), {"table.csv": rows})
    result = run_cli("build", "spec.yaml", "--output", "out", "--dry-run", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "long 1.0.0: dry run, all 9 records encoded; nothing written" in result.stdout  # 2 + 3 + 4 windows
    assert "warning" not in result.stdout + result.stderr  # (windows of one length are no finding)
    assert run_cli("build", "spec.yaml", "--output", "out", cwd=tmp_path).returncode == 0
    result = run_cli("verify", "out/long/1.0.0", cwd=tmp_path)
    assert result.returncode == 0 and "9 records, checksums and every record match the spec" in result.stdout


def test_a_bad_recording_is_skipped_whole_and_the_others_cut(tmp_path):
    (tmp_path / "junk.wav").write_bytes(b"RIFF not a wave at all")
    recordings = {"a": noise(8000 * 2, 1), "b": noise(8000 * 3, 2)}
    for name, samples in recordings.items():
        soundfile.write(tmp_path / f"{name}.wav", samples, 8000, subtype="PCM_16")
    rows = "path,name\na.wav,a\njunk.wav,junk\nb.wav,b\n"
    spec = write_spec(tmp_path, spec_of({"window": {"seconds": 1}}, on_error="skip"), {"table.csv": rows})
    info = tb.build(spec, output=tmp_path / "out")
    assert info.skipped == 1
    assert sorted((record["name"], int(record["audio_offset"])) for record in tb.read(info.path, "train")) == \
        [(b"a", 0), (b"a", 8000), (b"b", 0), (b"b", 8000), (b"b", 16000)]
