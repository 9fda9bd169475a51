"""Is a read's gap to the hand-written pipeline a cost per record or per epoch?

Reads the shards of a dataset that bench/images.py (or tabular.py, sequences.py) built, as one
epoch and as an epoch of the same shards listed `--times` times over (a dataset that many times
larger, from the same files), with `tb.input_fn`'s batching (unshuffled: one record dataset of
all the shards, cut again to a whole pass's batch sizes, which names a damaged shard only when a
pass comes short; per-shard reads before issue 42) and with the sequential hand-written pipeline (`TFRecordDataset(files).batch`). Both parse
and decode with the dataset's own parse function, so only the batching differs. Steady state,
best of 7 interleaved rounds, ratios to the hand-written pipeline. Run by hand, after the
benchmark that built the dataset:

    .venv/bin/python bench/epoch_size.py [DATASET] [--times 1 5]

DATASET defaults to the image benchmark's JPEG photos (bench/out/images/build/images_jpeg).
A gap that shrinks as the epoch grows is a fixed cost of each epoch, not a cost of each record.
"""
from __future__ import annotations

import argparse
import glob
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import tfrecord_builder as tb  # noqa: E402
from tfrecord_builder.read import tfdata as reading  # noqa: E402

ROUNDS = 7


def pipelines(path: str, times: int, batch_size: int) -> dict[str, tf.data.Dataset]:
    dataset = tb.load(path)
    shards = dataset.info.splits["train"]
    files = [os.path.join(dataset.path, file) for file in shards.files] * times
    counts = [shard["num_examples"] for shard in shards.shards] * times
    parse = tf.autograph.experimental.do_not_convert(lambda records: reading.parse_records(records, dataset.reading))
    ours = reading.batched_records(files, counts, dataset.reading["compression"], batch_size, False, 0, False)
    hand = tf.data.TFRecordDataset(files, compression_type=dataset.reading["compression"]).batch(batch_size)
    return {name: source.map(parse, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)
            for name, source in (("tb.input_fn's batching", ours), ("hand-written, sequential", hand))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = os.path.join(HERE, "out", "images", "build", "images_jpeg")
    parser.add_argument("dataset", nargs="?", default=default)
    parser.add_argument("--times", type=int, nargs="+", default=[1, 5])
    parser.add_argument("--batch-size", type=int, default=256)
    args = parser.parse_args(argv)
    path = args.dataset
    if not os.path.exists(os.path.join(path, "dataset_info.json")):
        found = sorted(glob.glob(os.path.join(path, "*", "dataset_info.json")))  # a versioned folder
        if not found:
            raise SystemExit(f"{path}: no dataset there; run the benchmark that builds it first")
        path = os.path.dirname(found[-1])
    print("| epoch | records | tb.input_fn's batching | hand-written, sequential | ratio |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for times in args.times:
        cases = pipelines(path, times, args.batch_size)
        records = 0
        for batch in cases["hand-written, sequential"]:  # the warm-up
            records += int(tf.shape(next(iter(batch.values())))[0])
        for dataset in cases.values():
            for _ in dataset:
                pass
        best = {name: float("inf") for name in cases}
        for _ in range(ROUNDS):
            for name, dataset in cases.items():
                start = time.perf_counter()
                for _ in dataset:
                    pass
                best[name] = min(best[name], time.perf_counter() - start)
        ours, hand = best.values()
        print(f"| the shards x{times} | {records:,} | {ours * 1000:.1f} ms | {hand * 1000:.1f} ms | {hand / ours:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
