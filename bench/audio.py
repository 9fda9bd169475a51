"""Audio benchmark: `type: audio` against a hand-written loop, build and read, and the stored
form's size against the alternatives.

Run by hand (everything it writes goes under bench/out/audio/, which git ignores):

    .venv/bin/python bench/audio.py [--copies C]

1. The clips: the demo's spoken digits (espeak-ng, data/make_spoken_digits.py: 660 WAV files,
   16-bit, 22,050 Hz), listed C times in the table (C = 1: about 9 minutes of audio).
2. Stored bytes per second of audio, resampled to 8 kHz as specs/spoken_digits.yaml stores it,
   of a `tf.train.Example` per clip holding: int16 PCM bytes (ours), float32 bytes, a float_list,
   an int64_list of the int16 values, the FLAC file's bytes.
3. Build, in hours of audio a minute: ours (`tb.build`, workers 1 and 2) against the hand-written
   loop: soundfile read -> resample_poly -> a `tf.train.Example` -> `tf.io.TFRecordWriter`.
4. Read, in hours of audio a minute, one epoch in batches of 32: the generated module's
   `input_fn` (one decode_raw a batch) against FLAC bytes decoded by soundfile in a
   `tf.py_function` (TensorFlow has no FLAC op), from memory.
"""
from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import soundfile
from scipy.signal import resample_poly

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "out", "audio")
RATE = 8000


def clips() -> tuple[str, list[tuple[str, str]]]:
    """The spoken digits' folder and its (path, digit) rows, made if missing."""
    folder = os.path.join(OUT, "spoken_digits_audio")
    if not os.path.exists(os.path.join(folder, "clips.csv")):
        subprocess.run([sys.executable, os.path.join(ROOT, "data", "make_spoken_digits.py"), folder], check=True)
    with open(os.path.join(folder, "clips.csv")) as file:
        rows = [line.strip().split(",")[:2] for line in file][1:]
    return folder, [(path, digit) for path, digit in rows]


def pcm16(wave: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(wave * 32768.0), -32768, 32767).astype(np.int16)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=1)
    copies = parser.parse_args().copies
    import tensorflow as tf

    import tfrecord_builder as tb

    folder, rows = clips()
    rows = rows * copies
    with open(os.path.join(folder, "table.csv"), "w") as file:
        file.write("path,digit\n" + "".join(f"{path},{digit}\n" for path, digit in rows))
    waves = [resample_poly(soundfile.read(os.path.join(folder, path), dtype="float64")[0], 160, 441)
             for path, _ in rows[: min(len(rows), 200)]]
    seconds = sum(len(wave) for wave in waves) / RATE

    def example(feature: dict) -> int:
        return len(tf.train.Example(features=tf.train.Features(feature={"audio": tf.train.Feature(**feature)}))
                   .SerializeToString())

    def flac(wave: np.ndarray) -> bytes:
        buffer = io.BytesIO()
        soundfile.write(buffer, pcm16(wave), RATE, format="FLAC")
        return buffer.getvalue()

    forms = {
        "int16 PCM bytes (ours)": [{"bytes_list": tf.train.BytesList(value=[pcm16(w).astype("<i2").tobytes()])}
                                   for w in waves],
        "float32 bytes": [{"bytes_list": tf.train.BytesList(value=[w.astype("<f4").tobytes()])} for w in waves],
        "float_list": [{"float_list": tf.train.FloatList(value=w.astype(np.float32))} for w in waves],
        "int64_list of int16": [{"int64_list": tf.train.Int64List(value=pcm16(w).astype(np.int64))} for w in waves],
        "FLAC bytes": [{"bytes_list": tf.train.BytesList(value=[flac(w)])} for w in waves],
    }
    sizes = {name: sum(example(feature) for feature in features) / seconds for name, features in forms.items()}
    print(f"\n## Stored bytes per second of audio ({len(waves)} clips, {seconds:.0f} s at {RATE} Hz)\n")
    print("| form | bytes/s | against ours |\n| --- | --- | --- |")
    ours = sizes["int16 PCM bytes (ours)"]
    for name, size in sizes.items():
        print(f"| {name} | {size:,.0f} | {size / ours:.2f}x |")

    total = sum(soundfile.info(os.path.join(folder, path)).duration for path, _ in rows)
    spec = os.path.join(folder, "spec.yaml")
    with open(spec, "w") as file:
        file.write("name: bench_audio\nsource: {builder: csv, path: table.csv}\n"
                   f"features:\n  audio: {{type: audio, source: path, sample_rate: {RATE}}}\n"
                   "  digit: {dtype: string}\noutput: {shards: 4}\n")
    builds = {}
    for workers in (1, 2):
        started = time.perf_counter()
        info = tb.build(spec, output=os.path.join(OUT, "ours"), overwrite=True, workers=workers, progress=False)
        builds[f"ours, {workers} worker{'s' if workers > 1 else ''}"] = time.perf_counter() - started
    started = time.perf_counter()
    hand = os.path.join(OUT, "hand")
    shutil.rmtree(hand, ignore_errors=True)
    os.makedirs(hand)
    writers = [tf.io.TFRecordWriter(os.path.join(hand, f"part-{index}.tfrecord")) for index in range(4)]
    for number, (path, digit) in enumerate(rows):
        wave, rate = soundfile.read(os.path.join(folder, path), dtype="float64")
        wave = resample_poly(wave, 160, 441) if rate != RATE else wave
        record = tf.train.Example(features=tf.train.Features(feature={
            "audio": tf.train.Feature(bytes_list=tf.train.BytesList(value=[pcm16(wave).tobytes()])),
            "digit": tf.train.Feature(bytes_list=tf.train.BytesList(value=[digit.encode()]))}))
        writers[number % 4].write(record.SerializeToString())
    for writer in writers:
        writer.close()
    builds["hand-written loop"] = time.perf_counter() - started
    print(f"\n## Build: hours of audio a minute ({len(rows)} clips, {total / 60:.1f} minutes)\n")
    print("| build | s | h/min | against the loop |\n| --- | --- | --- | --- |")
    for name, elapsed in builds.items():
        print(f"| {name} | {elapsed:.2f} | {total / 3600 / (elapsed / 60):.1f} | "
              f"{builds['hand-written loop'] / elapsed:.2f}x |")

    def epoch(dataset, key) -> tuple[float, float]:
        for _ in dataset:  # warm-up
            pass
        started = time.perf_counter()
        samples = sum(int(key(batch)) for batch in dataset)
        return samples / RATE, time.perf_counter() - started

    ours_seconds, ours_time = epoch(tb.input_fn(info.path, "train", batch_size=32, shuffle=False),
                                    lambda batch: tf.reduce_sum(batch["audio_length"]))
    encoded = [flac(w) for w in waves] * max(1, len(rows) // len(waves))

    def decode(data):
        return soundfile.read(io.BytesIO(data.numpy()), dtype="float32")[0]

    flacs = tf.data.Dataset.from_tensor_slices(encoded).map(
        lambda data: tf.py_function(decode, [data], tf.float32), num_parallel_calls=tf.data.AUTOTUNE
    ).padded_batch(32, padded_shapes=[None])
    flac_seconds, flac_time = epoch(flacs, lambda batch: tf.size(batch))
    print("\n## Read: hours of audio a minute, batches of 32\n")
    print("| reader | h/min | against ours |\n| --- | --- | --- |")
    ours_rate = ours_seconds / 3600 / (ours_time / 60)
    flac_rate = flac_seconds / 3600 / (flac_time / 60)
    print(f"| input_fn (int16 PCM, decode_raw) | {ours_rate:.1f} | 1.00x |")
    print(f"| FLAC + soundfile in tf.py_function | {flac_rate:.1f} | {flac_rate / ours_rate:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
