"""The `audio` feature type: waveforms from WAV, FLAC, OGG and MP3 files written with soundfile,
built and read back sample for sample through the generated module, `tb.input_fn`, `tb.read` and
TFDS, against soundfile's own read of the same files."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfrecord_builder as tb
from tfrecord_builder.media.audio.files import EXACT_SUBTYPES
from tfrecord_builder.errors import DataError
from tfrecord_builder.features.audio import AudioFeature
from tfrecord_builder.read import numpy_decoding

from conftest import import_module, write_spec
from support.reading import read_all
from support.cli import assert_error, run_cli

soundfile = pytest.importorskip("soundfile")


def noise(samples: int, channels: int = 1, seed: int = 0) -> np.ndarray:
    """int16 [samples, channels] of loud noise (all 16 bits used)."""
    return np.random.default_rng(seed).integers(-32768, 32768, (samples, channels)).astype(np.int16)


def tone(seconds: float, rate: int, hertz: float, amplitude: float) -> np.ndarray:
    return amplitude * np.sin(2 * np.pi * hertz * np.arange(int(seconds * rate)) / rate)


def build(folder: Path, audio: dict, rows: str, **spec_keys) -> tb.DatasetInfo:
    spec = {"name": "sounds", "source": {"builder": "csv", "path": "table.csv"},
            "features": {"audio": {"type": "audio", "source": "path", **audio}, "name": {"dtype": "string"}},
            **spec_keys}
    return tb.build(write_spec(folder, spec, {"table.csv": rows}), output=folder / "out")


def test_wav_and_flac_round_trip_bit_for_bit_everywhere(tf, tmp_path):
    soundfile.write(tmp_path / "a.wav", noise(1000, seed=1), 8000, subtype="PCM_16")
    soundfile.write(tmp_path / "b.flac", noise(700, seed=2), 8000, subtype="PCM_16")
    info = build(tmp_path, {"sample_rate": 8000, "mask_feature": "audio_mask"},
                 "path,name\na.wav,a\nb.flac,b\n")
    batches, records = read_all(info, batch_size=2)
    batch, = batches
    files = {b"a": "a.wav", b"b": "b.flac"}
    expected = [soundfile.read(tmp_path / files[name], dtype="float32")[0] for name in batch["name"]]
    assert batch["audio"].shape == (2, 1000) and batch["audio"].dtype == np.float32
    assert batch["audio_length"].tolist() == [len(want) for want in expected]
    assert batch["audio_length"].dtype == np.int32
    assert batch["audio_mask"].tolist() == [[True] * len(want) + [False] * (1000 - len(want)) for want in expected]
    for row, want in enumerate(expected):
        np.testing.assert_array_equal(batch["audio"][row, : len(want)], want)  # bit for bit
        assert not batch["audio"][row, len(want):].any()  # zero padding
        np.testing.assert_array_equal(records[row]["audio"], want)
        assert records[row]["audio_length"] == len(want) and records[row]["audio_mask"].all()
    tfds = pytest.importorskip("tensorflow_datasets")
    read = list(tfds.as_numpy(tfds.builder_from_directory(info.path).as_dataset(split="train", shuffle_files=False)))
    for example in read:
        want = soundfile.read(tmp_path / files[example["name"]], dtype="int16")[0]
        np.testing.assert_array_equal(example["audio"], want)
        assert example["audio_num_samples"] == len(want)


def test_int16_reading_and_kept_channels(tf, tmp_path):
    stereo = noise(300, 2, seed=3)
    soundfile.write(tmp_path / "s.wav", stereo, 16000, subtype="PCM_16")
    info = build(tmp_path, {"sample_rate": 16000, "channels": 2, "dtype": "int16", "length_feature": None},
                 "path,name\ns.wav,s\n")
    (batch,), (record,) = read_all(info)
    assert set(batch) == {"audio", "name"}
    assert batch["audio"].dtype == np.int16 and batch["audio"].shape == (1, 300, 2)
    np.testing.assert_array_equal(batch["audio"][0], stereo)
    np.testing.assert_array_equal(record["audio"], stereo)


def test_channels_mixed_down_by_the_mean(tf, tmp_path):
    stereo = noise(400, 2, seed=4)
    soundfile.write(tmp_path / "s.flac", stereo, 8000, subtype="PCM_16")
    info = build(tmp_path, {"sample_rate": 8000, "dtype": "int16"}, "path,name\ns.flac,s\n")
    (batch,), (record,) = read_all(info)
    mean = np.clip(np.rint(stereo.astype(np.float64).mean(axis=1)), -32768, 32767).astype(np.int16)
    np.testing.assert_array_equal(batch["audio"][0], mean)
    np.testing.assert_array_equal(record["audio"], mean)


@pytest.mark.parametrize("format, subtype", [("OGG", "VORBIS"), ("MP3", "MPEG_LAYER_III")])
def test_lossy_files_equal_soundfiles_own_decode(tf, tmp_path, format, subtype):
    """pcm16 keeps soundfile's float64 decode rounded by the one rule (libsndfile's own int16 read
    scales lossy files by 32767 and floors 24-bit ones: not what resampled files get)."""
    path = tmp_path / f"t.{format.lower()}"
    soundfile.write(path, tone(0.5, 16000, 440, 0.5), 16000, format=format, subtype=subtype)
    with pytest.warns(tb.BuildWarning):
        info = build(tmp_path, {"sample_rate": 16000}, f"path,name\n{path.name},t\n")
    assert info.warnings == [f"feature `audio`: 1 {subtype} file rounded to 16-bit samples (x * 32768 to the "
                             "nearest integer, ties to even; encoding: float32 keeps them)"]
    (batch,), (record,) = read_all(info)
    rounded = np.clip(np.rint(soundfile.read(path, dtype="float64")[0] * 32768), -32768, 32767)
    np.testing.assert_array_equal(batch["audio"][0], rounded.astype(np.int16) / np.float32(32768))
    np.testing.assert_array_equal(record["audio"], batch["audio"][0])
    want = soundfile.read(path, dtype="float32")[0]
    float_info = build(tmp_path / "f", {"sample_rate": 16000, "encoding": "float32"}, f"path,name\n{path},t\n")
    (batch,), _ = read_all(float_info)
    np.testing.assert_array_equal(batch["audio"][0], want)  # float32: soundfile's decode as it is


def test_resampling_keeps_a_sines_frequency_and_amplitude(tf, tmp_path):
    soundfile.write(tmp_path / "t.wav", tone(1.0, 44100, 440, 0.5), 44100, subtype="FLOAT")
    info = build(tmp_path, {"sample_rate": 16000, "encoding": "float32"}, "path,name\nt.wav,t\n")
    (batch,), _ = read_all(info)
    wave = batch["audio"][0]
    assert wave.shape == (16000,)
    spectrum = np.abs(np.fft.rfft(wave * np.hanning(len(wave))))
    assert np.argmax(spectrum) == 440  # 1 Hz bins over one second
    middle = wave[2000:-2000]  # clear of the filter's edges
    assert abs(np.sqrt(2 * np.mean(middle**2)) - 0.5) < 0.005  # the amplitude, from its RMS


def test_max_seconds_cuts_and_says_so(tf, tmp_path):
    soundfile.write(tmp_path / "long.wav", noise(8000 * 3, seed=5), 8000, subtype="PCM_16")
    soundfile.write(tmp_path / "short.wav", noise(4000, seed=6), 8000, subtype="PCM_16")
    with pytest.warns(tb.BuildWarning):
        info = build(tmp_path, {"sample_rate": 8000, "max_seconds": 1, "dtype": "int16"},
                     "path,name\nlong.wav,l\nshort.wav,s\n")
    assert info.warnings == ["feature `audio`: 1 waveform cut at max_seconds: 1"]
    _, records = read_all(info)
    by_name = {record["name"]: record["audio"] for record in records}
    np.testing.assert_array_equal(by_name[b"l"], noise(8000 * 3, seed=5)[:8000, 0])
    np.testing.assert_array_equal(by_name[b"s"], noise(4000, seed=6)[:, 0])


@pytest.mark.parametrize("rate", [96000, 22050, 8000 * 3 // 2])
def test_a_long_file_cut_is_read_only_to_the_cut_and_resampled_as_the_whole_would_be(tmp_path, rate):
    from scipy.signal import resample_poly

    whole = np.random.default_rng(8).uniform(-0.5, 0.5, (rate * 3, 1))
    soundfile.write(tmp_path / "long.wav", whole, rate, subtype="DOUBLE")
    feature = AudioFeature(name="audio", sample_rate=8000, max_seconds=1, encoding="float32")
    cut = feature.waveform(str(tmp_path / "long.wav"))
    common = np.gcd(rate, 8000)
    expected = resample_poly(whole, 8000 // common, rate // common, axis=0)[:8000].astype(np.float32)
    np.testing.assert_allclose(cut, expected, rtol=0, atol=1e-6)


def test_a_rate_mismatch_with_resampling_off_is_one_line_naming_the_file_and_both_rates(tmp_path):
    soundfile.write(tmp_path / "a.wav", noise(100), 22050, subtype="PCM_16")
    with pytest.raises(DataError) as error:
        build(tmp_path, {"sample_rate": 16000, "resample": False}, "path,name\na.wav,a\n")
    assert str(error.value) == (f"table.csv, line 2: feature `audio`: {tmp_path / 'a.wav'}: sample rate 22050 Hz, "
                                "expected 16000 Hz (resample: false)")


def test_a_truncated_file_fails_the_build_in_one_line_or_is_skipped(tmp_path):
    soundfile.write(tmp_path / "good.wav", noise(500), 8000, subtype="PCM_16")
    soundfile.write(tmp_path / "whole.flac", noise(5000, seed=7), 8000, subtype="PCM_16")
    flac = (tmp_path / "whole.flac").read_bytes()
    (tmp_path / "cut.flac").write_bytes(flac[: len(flac) // 2])
    wav = (tmp_path / "good.wav").read_bytes()
    (tmp_path / "cut.wav").write_bytes(wav[: len(wav) // 2])  # libsndfile would read its first half in silence
    (tmp_path / "junk.wav").write_bytes(b"RIFF not a wave at all")
    rows = "path,name\ngood.wav,g\ncut.flac,c\n"
    spec = {"name": "sounds", "source": {"builder": "csv", "path": "table.csv"},
            "features": {"audio": {"type": "audio", "source": "path", "sample_rate": 8000}, "name": {"dtype": "string"}}}
    write_spec(tmp_path, spec, {"table.csv": rows})
    result = run_cli("build", "spec.yaml", "--output", "out", cwd=tmp_path)
    assert_error(result, 1, [f"error: table.csv, line 3: feature `audio`: {tmp_path / 'cut.flac'}: can't be "
                             "decoded, corrupt or truncated (Internal psf_fseek() failed.)"])
    with pytest.raises(DataError) as error:
        build(tmp_path / "w", {"sample_rate": 8000}, f"path,name\n{tmp_path / 'cut.wav'},w\n")
    assert str(error.value) == (f"table.csv, line 2: feature `audio`: {tmp_path / 'cut.wav'}: truncated: its header "
                                "declares 1000 bytes of samples, the file holds 478")
    with pytest.raises(DataError, match=r"^table.csv, line 2: feature `audio`: .*junk.wav: can't be decoded, corrupt or truncated \("):
        build(tmp_path / "j", {"sample_rate": 8000}, f"path,name\n{tmp_path / 'junk.wav'},j\n")
    info = build(tmp_path / "s", {"sample_rate": 8000}, f"path,name\n{tmp_path / 'good.wav'},g\n"
                 f"{tmp_path / 'cut.flac'},c\n{tmp_path / 'junk.wav'},j\n{tmp_path / 'cut.wav'},w\n", on_error="skip")
    assert info.skipped == 3 and info.splits["train"].num_examples == 1


@pytest.mark.slow
def test_the_demos_spoken_digits_train_a_classifier_from_the_generated_module(tf, tmp_path):
    """`make demo`'s audio: espeak-ng's digits, built by specs/spoken_digits.yaml, learnt by the
    demo's spectrogram CNN from the generated module, tested on two voices it never heard (the demo
    reaches 1.00 in 20 epochs)."""
    import shutil
    import subprocess

    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is missing (`make test` installs it)")
    root = Path(__file__).resolve().parents[2]
    made = tmp_path / "build" / "spoken_digits_audio"
    subprocess.run([sys.executable, str(root / "data" / "make_spoken_digits.py"), str(made)], check=True,
                   capture_output=True)
    (tmp_path / "specs").mkdir()
    shutil.copy(root / "specs" / "spoken_digits.yaml", tmp_path / "specs")
    info = tb.build(tmp_path / "specs" / "spoken_digits.yaml", output=tmp_path / "out")
    assert {name: split.num_examples for name, split in info.splits.items()} == {"train": 540, "test": 120}
    assert {record["voice"] for record in tb.read(info.path, "test")} == {b"en+m3", b"en+f2"}
    import train  # the demo's Keras helpers (demo/ is on the path: tests/conftest.py)

    module = import_module(Path(info.path) / "spoken_digits_input.py")
    assert train.train_audio(module.input_fn, info, epochs=8) >= 0.9


@pytest.mark.parametrize("audio, expected", [
    ({"length_feature": "name"}, "audio.length_feature: `name` is already a feature's name; choose another (or null)"),
    ({"mask_feature": "audio_length"}, "audio.mask_feature: `audio_length` is already the length_feature's name"),
    ({"mask_feature": "a mask"}, "audio.mask_feature: expected an identifier, received 'a mask'"),
    ({"encoding": "float32", "dtype": "int16"}, "audio.dtype: int16 samples need `encoding: pcm16`"),
])
def test_spec_mistakes_are_one_line_at_their_key(tmp_path, audio, expected):
    spec = {"name": "sounds", "source": {"builder": "csv", "path": "table.csv"},
            "features": {"audio": {"type": "audio", "source": "path", "sample_rate": 8000, **audio},
                         "name": {"dtype": "string"}}}
    with pytest.raises(tb.SpecError) as error:
        tb.load_spec(write_spec(tmp_path, spec, {"table.csv": "path,name\n"}))
    assert expected in str(error.value) and "\n" not in str(error.value)


# ---- the property: any length, rate and channel count round-trips --------------------------------
clips = st.lists(st.tuples(st.integers(1, 400), st.sampled_from([8000, 11025, 16000, 22050, 44100, 48000]),
                           st.integers(1, 3), st.integers(0, 2**32 - 1)), min_size=1, max_size=4)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(clips=clips, format=st.sampled_from(["WAV", "FLAC"]), kept=st.booleans())
def test_any_clip_round_trips_through_the_batch_decoder_and_its_numpy_twin(tf, tmp_path_factory, clips, format,
                                                                           kept):
    from tfrecord_builder.read import tfdata

    folder = tmp_path_factory.mktemp("clips")
    channels = clips[0][2]
    paths, expected = [], []
    for index, (length, rate, _, seed) in enumerate(clips):
        path = folder / f"c{index}.{format.lower()}"
        data = noise(length, channels, seed)
        soundfile.write(path, data, rate, format=format, subtype="PCM_16")
        paths.append(str(path))
        expected.append(soundfile.read(path, dtype="int16", always_2d=True)[0])
    rate = clips[0][1]  # the first clip's rate: the others are resampled to it
    feature = AudioFeature(name="audio", sample_rate=rate, channels=channels if kept else 1, dtype="int16")
    same = [clip[1] == rate for clip in clips]
    encoded = feature.encode([path for path, length in zip(paths, expected)], tb.EncodeContext(lambda row: f"row {row}"))
    batch = tfdata.padded_audio(tf.constant(encoded["audio"].values),
                                tf.constant(encoded["audio_num_samples"].values), "pcm16", feature.channels,
                                "int16").numpy()
    for row, (want, exact) in enumerate(zip(expected, same)):
        length = int(encoded["audio_num_samples"].values[row])
        one = numpy_decoding.padded_audio(encoded["audio"].values[row], length, "pcm16", feature.channels, "int16")
        np.testing.assert_array_equal(batch[row, :length], one)
        assert not batch[row, length:].any()
        if exact and (kept or channels == 1):
            np.testing.assert_array_equal(one.reshape(want.shape), want)
        elif exact:  # mixed down by the mean
            mean = np.clip(np.rint(want.astype(np.float64).mean(axis=1)), -32768, 32767)
            np.testing.assert_array_equal(one, mean.astype(np.int16))
        else:  # resampled: as many samples as the rates say
            assert length == -(-len(want) * rate // clips[row][1])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(subtype=st.sampled_from(["PCM_U8", "PCM_S8", "PCM_16", "PCM_24", "PCM_32", "FLOAT", "DOUBLE", "ULAW"]),
       encoding=st.sampled_from(["pcm16", "float32"]), length=st.integers(1, 300), seed=st.integers(0, 2**32 - 1))
def test_any_bit_depth_is_stored_as_soundfile_reads_it_in_the_stored_type(tmp_path_factory, subtype, encoding,
                                                                          length, seed):
    format = "AIFF" if subtype == "PCM_S8" else "WAV"  # (WAV's 8 bits are unsigned; AIFF's signed)
    path = tmp_path_factory.mktemp("depth") / f"a.{format.lower()}"
    waveform = np.random.default_rng(seed).uniform(-1, 1, length)
    soundfile.write(path, waveform, 8000, format=format, subtype=subtype)
    feature = AudioFeature(name="audio", sample_rate=8000, encoding=encoding)
    stored = feature.waveform(str(path))
    if encoding == "float32":
        want = soundfile.read(path, dtype="float32", always_2d=True)[0]  # libsndfile's own conversion
    elif subtype in EXACT_SUBTYPES:
        want = soundfile.read(path, dtype="int16", always_2d=True)[0]  # its integers as they are
    else:  # the one rule: x * 32768 to the nearest integer, ties to even (libsndfile's int16 read of a
        # float file isn't scaled at all: 0.8 -> 1)
        want = np.clip(np.rint(soundfile.read(path, dtype="float64", always_2d=True)[0] * 32768), -32768, 32767)
        want = want.astype(np.int16)
    assert stored.dtype == want.dtype
    np.testing.assert_array_equal(stored, want)
