"""Audio benchmark: `type: audio` against hand-written loops, build and read, and the stored
form's size against the alternatives.

Run by hand (everything it writes goes under bench/out/audio/, which git ignores):

    .venv/bin/python bench/audio.py [--copies C] [--repeats R]

1. The clips: the demo's spoken digits (espeak-ng, data/make_spoken_digits.py: 660 WAV files,
   16-bit, 22,050 Hz, 0.5-1.4 s each), listed C times in the table (C = 1: 9.6 minutes of audio;
   the default 5 amortises a build's fixed costs: planning, worker start-up, the shards' writing).
2. Stored bytes per second of audio, resampled to 8 kHz as specs/spoken_digits.yaml stores it,
   of a `tf.train.Example` per clip holding: int16 PCM bytes (ours), float32 bytes, a float_list,
   an int64_list of the int16 values, the FLAC file's bytes.
3. Build, in hours of audio a minute, side by side in interleaved rounds (the best counts), every
   case reading the same files and writing 4 shards:
   - ours: `tb.build` of `{type: audio, sample_rate: 8000}` and the digit, 1 and 2 workers;
   - the issue's loop (what tutorials write): soundfile read (float64) -> `resample_poly(wave, 160,
     441)` -> a `tf.train.SequenceExample` per clip: the digit and the length as context, the
     waveform as a feature list of 20 ms steps (a float_list of 160 samples each) ->
     `SerializeToString` -> `tf.io.TFRecordWriter`;
   - the tutorials' other form: the same, a `tf.train.Example` with a float_list of the samples;
   - the expert loop: the same read and resampler, the samples as int16 PCM bytes in a
     `tf.train.Example` (what ours stores, bit for bit: checked);
   - the expert loop with resample_poly's filter designed once and passed as `window=` (what ours
     does; for reference: it shows where our speed comes from).
   The loops hand protobuf Python lists (`.tolist()`): a NumPy array passed as it is costs them
   about 4x as much in that step. Ratios are to the issue's loop and to the expert loop.
4. Read, in hours of audio a minute, an epoch in batches of 32 (the best of R): the generated module's
   `input_fn` (one decode_raw a batch) against FLAC bytes decoded by soundfile in a
   `tf.py_function` (TensorFlow has no FLAC op), from memory.
5. Prints Markdown tables and writes them, with the target (ours, 2 workers, at least 3x the
   issue's loop), to bench/out/audio.json.
"""
from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import time
from typing import Any, Callable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import soundfile  # noqa: E402
from scipy.signal import firwin, resample_poly  # noqa: E402

if __name__ != "__mp_main__":
    # Imported up front, never timed; but not in `tb.build`'s spawned workers, which re-import this
    # script as `__mp_main__` and need only the package (bench/README.md).
    import tensorflow as tf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)  # the repository, should the package not be installed

import tfrecord_builder as tb  # noqa: E402
from harness import (  # noqa: E402
    Result, Target, argument_parser, best_of_rounds, machine, machine_line, markdown_table, our_build,
    record_writers, targets_table, with_ratios, write_json,
)

RATE = 8000
UP, DOWN = 160, 441  # 22,050 Hz to 8,000
STEP = 160  # the SequenceExample loop's samples a step: 20 ms at 8 kHz
SHARDS = 4
OURS = "ours, {workers} worker{s}"
ISSUE = "the issue's loop: SequenceExample, float_list steps"
FLOATS = "tutorial loop: Example, a float_list"
EXPERT = "expert loop: Example, int16 bytes"
EXPERT_ONCE = "expert loop, filter designed once"


def clips(out: str) -> tuple[str, list[tuple[str, str]]]:
    """The spoken digits' folder and its (path, digit) rows, made if missing."""
    folder = os.path.join(out, "spoken_digits_audio")
    if not os.path.exists(os.path.join(folder, "clips.csv")):
        subprocess.run([sys.executable, os.path.join(ROOT, "data", "make_spoken_digits.py"), folder], check=True)
    with open(os.path.join(folder, "clips.csv")) as file:
        rows = [line.strip().split(",")[:2] for line in file][1:]
    return folder, [(path, digit) for path, digit in rows]


def pcm16(wave: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(wave * 32768.0), -32768, 32767).astype(np.int16)


def _bytes(value: bytes) -> Any:
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))


def sequence_example(wave: np.ndarray, digit: str) -> bytes:
    """The issue's form: context digit and length, the waveform as 20 ms float_list steps."""
    samples = wave.astype(np.float32).tolist()
    steps = [tf.train.Feature(float_list=tf.train.FloatList(value=samples[start:start + STEP]))
             for start in range(0, len(samples), STEP)]
    return tf.train.SequenceExample(
        context=tf.train.Features(feature={
            "digit": _bytes(digit.encode()),
            "num_samples": tf.train.Feature(int64_list=tf.train.Int64List(value=[len(samples)]))}),
        feature_lists=tf.train.FeatureLists(feature_list={"audio": tf.train.FeatureList(feature=steps)}),
    ).SerializeToString()


def float_example(wave: np.ndarray, digit: str) -> bytes:
    return tf.train.Example(features=tf.train.Features(feature={
        "audio": tf.train.Feature(float_list=tf.train.FloatList(value=wave.astype(np.float32).tolist())),
        "digit": _bytes(digit.encode())})).SerializeToString()


def int16_example(wave: np.ndarray, digit: str) -> bytes:
    return tf.train.Example(features=tf.train.Features(feature={
        "audio": _bytes(pcm16(wave).tobytes()), "digit": _bytes(digit.encode())})).SerializeToString()


def loop(folder: str, rows: list[tuple[str, str]], output: str, serialise: Callable[[np.ndarray, str], bytes],
         window: Any = ("kaiser", 5.0)) -> None:
    """A hand-written build: per clip soundfile read -> resample_poly -> `serialise` -> a writer."""
    shutil.rmtree(output, ignore_errors=True)
    os.makedirs(output)
    with record_writers([os.path.join(output, f"part-{index}.tfrecord") for index in range(SHARDS)]) as writers:
        for number, (path, digit) in enumerate(rows):
            wave, rate = soundfile.read(os.path.join(folder, path), dtype="float64")
            if rate != RATE:
                wave = resample_poly(wave, UP, DOWN, window=window)
            writers[number % SHARDS].write(serialise(wave, digit))


def stored_audio(files: list[str], key: str = "audio") -> list[bytes]:
    """The int16 bytes under `key` of every record of `files`, sorted (the builds order differently)."""
    return sorted(tf.train.Example.FromString(record.numpy()).features.feature[key].bytes_list.value[0]
                  for record in tf.data.TFRecordDataset(files))


def sizes(waves: list[np.ndarray]) -> None:
    """Prints the stored bytes a second of audio of each form of the samples."""
    seconds = sum(len(wave) for wave in waves) / RATE

    def example(feature: dict) -> int:
        return len(tf.train.Example(features=tf.train.Features(feature={"audio": tf.train.Feature(**feature)}))
                   .SerializeToString())

    forms = {
        "int16 PCM bytes (ours)": [{"bytes_list": tf.train.BytesList(value=[pcm16(w).astype("<i2").tobytes()])}
                                   for w in waves],
        "float32 bytes": [{"bytes_list": tf.train.BytesList(value=[w.astype("<f4").tobytes()])} for w in waves],
        "float_list": [{"float_list": tf.train.FloatList(value=w.astype(np.float32))} for w in waves],
        "int64_list of int16": [{"int64_list": tf.train.Int64List(value=pcm16(w).astype(np.int64))} for w in waves],
        "FLAC bytes": [{"bytes_list": tf.train.BytesList(value=[flac(w)])} for w in waves],
    }
    per_second = {name: sum(example(feature) for feature in features) / seconds for name, features in forms.items()}
    print(f"\n## Stored bytes per second of audio ({len(waves)} clips, {seconds:.0f} s at {RATE} Hz)\n")
    ours = per_second["int16 PCM bytes (ours)"]
    print(markdown_table(["form", "bytes/s", "against ours"], ["---", "---:", "---:"],
                         [[name, f"{size:,.0f}", f"{size / ours:.2f}x"] for name, size in per_second.items()]))


def flac(wave: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    soundfile.write(buffer, pcm16(wave), RATE, format="FLAC")
    return buffer.getvalue()


def hours_a_minute(audio_seconds: float, seconds: float) -> float:
    return audio_seconds / 3600 / (seconds / 60)


def main() -> int:
    parser = argument_parser(__doc__, "--copies", 5, "times the 660 clips are listed in the table (default 5)")
    arguments = parser.parse_args()
    copies, out = arguments.copies, os.path.join(arguments.out, "audio")
    before = machine({}, load_average=True)["load_average"]
    folder, rows = clips(out)
    rows = rows * copies
    with open(os.path.join(folder, "table.csv"), "w") as file:
        file.write("path,digit\n" + "".join(f"{path},{digit}\n" for path, digit in rows))
    sizes([resample_poly(soundfile.read(os.path.join(folder, path), dtype="float64")[0], UP, DOWN)
           for path, _ in rows[: min(len(rows), 200)]])

    audio_seconds = sum(soundfile.info(os.path.join(folder, path)).duration for path, _ in rows)
    spec = os.path.join(folder, "spec.yaml")
    with open(spec, "w") as file:
        file.write("name: bench_audio\nsource: {builder: csv, path: table.csv}\n"
                   f"features:\n  audio: {{type: audio, source: path, sample_rate: {RATE}}}\n"
                   f"  digit: {{dtype: string}}\noutput: {{shards: {SHARDS}}}\n")
    built: dict[int, Any] = {}

    def ours(workers: int) -> Callable[[], None]:
        return our_build(spec, out, workers, built)

    # resample_poly's default filter for 160/441, designed once (audio/resampling.py's `lowpass`)
    taps = firwin(2 * 10 * max(UP, DOWN) + 1, 1.0 / max(UP, DOWN), window=("kaiser", 5.0))
    cases: dict[str, Callable[[], None]] = {
        OURS.format(workers=1, s=""): ours(1),
        OURS.format(workers=2, s="s"): ours(2),
        ISSUE: lambda: loop(folder, rows, os.path.join(out, "sequence"), sequence_example),
        FLOATS: lambda: loop(folder, rows, os.path.join(out, "floats"), float_example),
        EXPERT: lambda: loop(folder, rows, os.path.join(out, "expert"), int16_example),
        EXPERT_ONCE: lambda: loop(folder, rows, os.path.join(out, "expert-once"), int16_example, window=taps),
    }
    times = best_of_rounds(arguments.repeats, list(cases.values()))
    results = [Result("build", case, timing.seconds, len(rows), timing.cpu_seconds, reference=EXPERT)
               for case, timing in zip(cases, times)]
    against_issue = {result.case: result.ratio for result in with_ratios(results, ISSUE)}
    with_ratios(results)  # each to the expert loop, as the JSON's `reference` says
    info = built[2]
    ours_bytes = stored_audio([os.path.join(info.path, name) for name in info.splits["train"].files])
    expert_bytes = stored_audio([os.path.join(out, "expert", f"part-{index}.tfrecord") for index in range(SHARDS)])
    same = "the same int16 samples, bit for bit" if ours_bytes == expert_bytes else "DIFFERENT samples"
    print(f"\n## Build: hours of audio a minute ({len(rows):,} clips, {audio_seconds / 60:.1f} minutes, "
          f"best of {arguments.repeats}; ours and the expert loop store {same})\n")
    print(markdown_table(
        ["build", "h/min", "against the issue's loop", "against the expert loop", "s", "CPU (s)"],
        ["---", "---:", "---:", "---:", "---:", "---:"],
        [[result.case, f"{hours_a_minute(audio_seconds, result.seconds):.1f}", f"{against_issue[result.case]:.2f}x",
          f"{result.ratio:.2f}x", f"{result.seconds:.2f}", f"{result.cpu_seconds:.2f}"] for result in results]))

    read = reading(info, len(rows), folder, arguments.repeats)
    after = machine({}, load_average=True)["load_average"]
    best = OURS.format(workers=2, s="s")
    targets = [Target("audio build, ours (2 workers) over the issue's loop (SequenceExample per clip)",
                      against_issue[best], 3.0, note="hours of audio a minute")]
    print("\n" + targets_table(targets))
    document_machine = machine({"tensorflow": tf.__version__, "numpy": np.__version__,
                                "soundfile": soundfile.__version__, "scipy": _version("scipy")})
    print(f"\n{machine_line(document_machine)}; load average (1, 5, 15 min) {before} before, {after} after")
    write_json(os.path.join(arguments.out, "audio.json"),
               {"clips": len(rows), "copies": copies, "audio_seconds": audio_seconds, "same": same,
                "ratios_to_the_issues_loop": against_issue, "load_average": {"before": before, "after": after},
                "machine": document_machine},
               results, read, targets)
    return 0 if ours_bytes == expert_bytes else 1


def reading(info: Any, count: int, folder: str, repeats: int) -> list[Result]:
    """An epoch of ours through `tb.input_fn` against FLAC bytes decoded in a py_function (the
    best of `repeats`)."""
    waves = [resample_poly(soundfile.read(path, dtype="float64")[0], UP, DOWN) for path in _first_paths(folder, 200)]

    def epoch(dataset: Any, key: Callable[[Any], Any]) -> tuple[float, float]:
        """Seconds of audio in an epoch, and the best time of `repeats` epochs after a warm-up."""
        for _ in dataset:  # warm-up
            pass
        best = float("inf")
        for _ in range(repeats):
            started = time.perf_counter()
            samples = sum(int(key(batch)) for batch in dataset)
            best = min(best, time.perf_counter() - started)
        return samples / RATE, best

    ours_seconds, ours_time = epoch(tb.input_fn(info.path, "train", batch_size=32, shuffle=False),
                                    lambda batch: tf.reduce_sum(batch["audio_length"]))
    encoded = [flac(w) for w in waves] * max(1, count // len(waves))

    def decode(data: Any) -> Any:
        return soundfile.read(io.BytesIO(data.numpy()), dtype="float32")[0]

    flacs = tf.data.Dataset.from_tensor_slices(encoded).map(
        lambda data: tf.py_function(decode, [data], tf.float32), num_parallel_calls=tf.data.AUTOTUNE
    ).padded_batch(32, padded_shapes=[None])
    flac_seconds, flac_time = epoch(flacs, lambda batch: tf.size(batch))
    ours_rate, flac_rate = hours_a_minute(ours_seconds, ours_time), hours_a_minute(flac_seconds, flac_time)
    print("\n## Read: hours of audio a minute, batches of 32\n")
    print(markdown_table(["reader", "h/min", "against ours"], ["---", "---:", "---:"], [
        ["input_fn (int16 PCM, decode_raw)", f"{ours_rate:.1f}", "1.00x"],
        ["FLAC + soundfile in tf.py_function", f"{flac_rate:.1f}", f"{flac_rate / ours_rate:.2f}x"]]))
    results = [Result("read", "input_fn (int16 PCM, decode_raw)", ours_time, round(ours_seconds)),
               Result("read", "FLAC + soundfile in tf.py_function", flac_time, round(flac_seconds))]
    return with_ratios(results, results[0].case)


def _first_paths(folder: str, count: int) -> list[str]:
    with open(os.path.join(folder, "clips.csv")) as file:
        return [os.path.join(folder, line.split(",")[0]) for line in list(file)[1:count + 1]]


def _version(module: str) -> str:
    return __import__(module).__version__


if __name__ == "__main__":
    sys.exit(main())
