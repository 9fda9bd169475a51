"""Where the wall-clock time of one small build goes: a timeline of a keyed build (an image
folder, JPEG passthrough, one copy) from the call to the last file written, phase by phase.

Run by hand (bench/memory.py writes the photos; everything goes under bench/out/):

    PYTHONPATH=$PWD .venv/bin/python bench/timeline.py [--spec bench/out/memory/images-2000.yaml] [--workers 2]

Each phase is a function of the build wrapped to note when it starts and ends (wall clock, this
process: the listing, the key hashes, the plan, the sampled pace, the pool, each shard's reads,
encoding and write, the manifest, the statistics, the metadata files, the module, the old
dataset's removal and the publishing). The build runs 4 times (the first warms the caches); the
timeline printed is the fastest run's, with the machine's load average.
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import os
import shutil
import time
from typing import Any, Callable, Iterator

import tfrecord_builder as tb
from tfrecord_builder import atomic, processes
from tfrecord_builder.build import plan, run
from tfrecord_builder.build.runners import keyed, local
from tfrecord_builder.builders import image_folder
from tfrecord_builder.write import manifest

HERE = os.path.dirname(os.path.abspath(__file__))
MARKS: list[tuple[str, float, float]] = []

# (module, function, phase): the build's own functions, timed where they are looked up
PHASES = [
    (run, "read_tasks", "listing (read tasks, each file's size)"),
    (image_folder.ImageFolderBuilder, "_listed", "  the folder walked, each file's size"),
    (local, "keyed_plan_of", "the plan (keys, hashes, splits, order, shards)"),
    (plan, "hash_keys_and_members", "  key hashes (split, order, membership)"),
    (local, "work_seconds", "the sampled pace (whether to start workers)"),
    (local, "write_keyed_shard", "a shard read, encoded and written (this process)"),
    (keyed, "encoded_chunks", "  its records read and encoded"),
    (atomic.AtomicFile, "commit", "  a file fsynced and renamed (any)"),
    (processes, "worker_pool", "the pool started"),
    (manifest.Manifest, "add", "a shard recorded in the manifest"),
    (local, "keyed_result", "the statistics (values back in the source's order)"),
    (run, "write_metadata_files", "the metadata files"),
    (run, "render_module", "the module rendered"),
    (run, "write_module", "the module written"),
    (run, "publish", "publishing (the new dataset moved in, the old removed)"),
    (shutil, "rmtree", "  a folder removed (the old dataset, leftovers)"),
]


IN_WORKERS = {"write_keyed_shard", "encoded_chunks", "commit"}


def timed(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    if getattr(function, "__wrapped__", None) is not None and getattr(function, "_phase", None):
        return function

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            MARKS.append((name, start, time.perf_counter()))
    wrapper._phase = True  # type: ignore[attr-defined]
    return wrapper


def install(workers: int) -> None:
    """Every phase timed; with workers, not the shard's (a pool's task pickles its function by name:
    the pool's time is theirs)."""
    for owner, attribute, name in PHASES:
        if workers > 1 and attribute in IN_WORKERS:
            continue
        if hasattr(owner, attribute):
            setattr(owner, attribute, timed(name, getattr(owner, attribute)))


@contextlib.contextmanager
def recorded() -> Iterator[list]:
    MARKS.clear()
    yield MARKS


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default=os.path.join(HERE, "out", "memory", "images-2000.yaml"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default=os.path.join(HERE, "out", "timeline"))
    arguments = parser.parse_args()
    install(arguments.workers)
    best: tuple[float, list] | None = None
    for _ in range(4):
        with recorded() as marks:
            start = time.perf_counter()
            tb.build(arguments.spec, output=arguments.out, overwrite=True, workers=arguments.workers)
            total = time.perf_counter() - start
        if best is None or total < best[0]:
            best = (total, [(name, low - start, high - start) for name, low, high in marks])
    assert best is not None
    total, marks = best
    print(f"{arguments.spec}, {arguments.workers} workers: {total * 1000:.1f} ms "
          f"(load average {', '.join(f'{load:.2f}' for load in os.getloadavg())})")
    summed: dict[str, list[float]] = {}
    for name, low, high in marks:
        entry = summed.setdefault(name, [low, high, 0.0, 0])
        entry[0], entry[1] = min(entry[0], low), max(entry[1], high)
        entry[2] += high - low
        entry[3] += 1
    print(f"{'phase':<58} {'from ms':>8} {'to ms':>8} {'spent ms':>9} {'calls':>6}")
    for name, (low, high, spent, calls) in sorted(summed.items(), key=lambda item: item[1][0]):
        print(f"{name:<58} {low * 1000:8.1f} {high * 1000:8.1f} {spent * 1000:9.1f} {calls:6d}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
