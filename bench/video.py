"""Video benchmark: `type: video` against a hand-written PyAV loop, build, memory and read.

Run by hand (everything it writes goes under bench/out/video/, which git ignores):

    .venv/bin/python bench/video.py [--clips N] [--repeats R]

1. The clips: N MP4s (MPEG-4 Part 2, 320x240, 25 frames a second, 4 s: 100 frames each) of pans
   and zooms over scikit-image's real photographs, written once with PyAV (seeded).
2. Build, in source frames a second: ours (`tb.build` of a `sequence_example` spec, `fps: 5`,
   `shape: [112, 112, 3]`, JPEG quality 90 per step), workers 1 and 2, against two hand-written
   loops on the same files, each writing one `tf.train.SequenceExample` per clip:
   - the loop the issue names, as tutorials write it: `container.decode(video=0)`, every frame
     `to_ndarray(format="rgb24")`, the same first-frame-at-or-after rule for 5 a second, Pillow's
     bilinear resize and JPEG (quality 90), the frames as a bytes feature list;
   - an expert loop: the same with only the kept frames converted to pictures by one `VideoReformatter` a clip (3-5x faster than a frame's
     `to_image` or `to_ndarray`, which make one each time), as ours does;
     and the expert loop in 2 processes at once (every other clip each): what the 2 cores give it.
   Both loops store the same frames as ours: checked (every stored JPEG decodes to the same pixels).
3. Memory and time, each build in a fresh process (the resident memory it adds at its peak, after
   the imports: Linux's `VmHWM`, reset then): one
   short clip against one 10-minute clip (64x48, 10 frames a second, 6,000 frames) with
   `max_frames: 32`, and N/4 clips against N clips of the main set.
4. Read, clips a second: the generated module's `input_fn` over the clips listed `--read-copies`
   times (default 8), built by ours (batches of 8, padded to the longest clip) against hand-written pipelines: `tf.io.parse_sequence_example` of a batch with
   the frames as a ragged feature, `tf.map_fn(tf.io.decode_jpeg)` over its frames, padded
   (`to_tensor`), sequential, interleaved and with parallel reads; steady and one cold pass.

Writes bench/out/video.json with the targets (bench/summary.py): build >= 3x the issue's loop,
memory of the 10-minute clip <= 1.1x the short one's, read >= 1.0x the best hand-written steady
and >= 0.95x for one cold pass (harness.READ_STEADY_BAR, READ_COLD_BAR).
"""
from __future__ import annotations

import io
import os
import random
import shutil
import subprocess
import sys
from typing import Any, Callable

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from harness import (  # noqa: E402
    READ_COLD_BAR, READ_STEADY_BAR, Result, Target, argument_parser, best_of_rounds, hand_pipelines, import_module, machine, machine_line,
    markdown_table, our_build, results_table, steady_and_cold, targets_table, with_ratios, write_json,
)

SIZE, RATE, SECONDS, FPS, QUALITY = (240, 320), 25, 4, 5, 90
SHAPE = [112, 112, 3]
ISSUE = "hand-written loop (every frame to_ndarray)"
EXPERT = "expert loop (kept frames only, one converter a clip)"
EXPERT_TWO = "expert loop, in 2 processes at once"
OURS = "ours, {workers} worker{s}"


def photos() -> list[np.ndarray]:
    from skimage import data

    return [data.astronaut(), data.coffee(), data.chelsea(), data.rocket()]


def write_clip(path: str, frames: Any, rate: int, size: tuple[int, int]) -> None:
    import av

    with av.open(path, "w") as out:
        stream = out.add_stream("mpeg4", rate=rate)
        stream.height, stream.width = size
        stream.pix_fmt = "yuv420p"
        stream.codec_context.thread_count = 1
        for pixels in frames:
            out.mux(stream.encode(av.VideoFrame.from_ndarray(pixels, format="rgb24")))
        out.mux(stream.encode())


def pan(photo: np.ndarray, count: int, size: tuple[int, int], draw: random.Random) -> Any:
    """`count` frames of a window of `size` sliding across `photo` (resized to fit it)."""
    from PIL import Image

    picture = Image.fromarray(photo).convert("RGB")
    height = size[0] + 40
    picture = picture.resize((int(picture.width * height / picture.height), height))
    top = draw.randrange(0, 40)
    reach = picture.width - size[1]
    for index in range(count):
        left = int(reach * index / max(1, count - 1))
        yield np.asarray(picture.crop((left, top, left + size[1], top + size[0])))


def make_clips(folder: str, count: int) -> list[str]:
    """The N clips' paths (relative to `folder`), written once."""
    os.makedirs(os.path.join(folder, "clips"), exist_ok=True)
    draw, pictures = random.Random(31), photos()
    names = []
    for index in range(count):
        name = f"clips/c{index:04d}.mp4"
        if not os.path.exists(os.path.join(folder, name)):
            write_clip(os.path.join(folder, name), pan(pictures[index % len(pictures)], RATE * SECONDS, SIZE, draw),
                       RATE, SIZE)
        names.append(name)
    return names


def spec_file(folder: str, table: str, names: list[str], max_frames: int | None = None, shards: int = 4) -> str:
    with open(os.path.join(folder, table), "w") as file:
        file.write("path,clip\n" + "".join(f"{name},{index}\n" for index, name in enumerate(names)))
    path = os.path.join(folder, table.replace(".csv", ".yaml"))
    cut = f", max_frames: {max_frames}" if max_frames else ""
    with open(path, "w") as file:
        file.write(f"name: bench_video\nformat: sequence_example\nsource: {{builder: csv, path: {table}}}\n"
                   "context:\n  clip: {dtype: int64}\n"
                   f"sequence:\n  frames: {{type: video, source: path, fps: {FPS}, shape: {SHAPE}{cut}}}\n"
                   f"output: {{shards: {shards}}}\n")
    return path


def jpeg(picture: Any) -> bytes:
    buffer = io.BytesIO()
    picture.save(buffer, format="JPEG", quality=QUALITY)
    return buffer.getvalue()


def loop(folder: str, names: list[str], out: str, expert: bool) -> None:
    """The hand-written loop: PyAV decode, the fps rule, Pillow's resize and JPEG, a
    SequenceExample per clip, round robin into 4 files."""
    import av
    import tensorflow as tf
    from av.video.reformatter import VideoReformatter
    from PIL import Image

    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    writers = [tf.io.TFRecordWriter(os.path.join(out, f"part-{index}.tfrecord")) for index in range(4)]
    for number, name in enumerate(names):
        frames = []
        with av.open(os.path.join(folder, name)) as container:
            stream = container.streams.video[0]
            start, converter = None, VideoReformatter()
            for frame in container.decode(stream):
                pixels = None if expert else frame.to_ndarray(format="rgb24")
                start = frame.time if start is None else start
                if frame.time - start < len(frames) / FPS - 1e-6:
                    continue
                picture = Image.fromarray(converter.reformat(frame, format="rgb24").to_ndarray() if expert else pixels)
                frames.append(jpeg(picture.resize((SHAPE[1], SHAPE[0]), Image.BILINEAR)))
        record = tf.train.SequenceExample(
            context=tf.train.Features(feature={"clip": tf.train.Feature(int64_list=tf.train.Int64List(value=[number]))}),
            feature_lists=tf.train.FeatureLists(feature_list={"frames": tf.train.FeatureList(feature=[
                tf.train.Feature(bytes_list=tf.train.BytesList(value=[frame])) for frame in frames])}))
        writers[number % 4].write(record.SerializeToString())
    for writer in writers:
        writer.close()


def loop_in_two(folder: str, names: list[str], out: str) -> None:
    """The expert loop in two processes at once, each on every other clip: what 2 cores give a
    hand-written loop (the bar's ceiling on this machine)."""
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(2) as pool:
        pool.starmap(loop, [(folder, names[half::2], os.path.join(out, str(half)), True) for half in (0, 1)])


def stored_frames(files: list[str]) -> dict[int, list[bytes]]:
    """Each clip's stored frames (the JPEGs' bytes), by its number, parsed with TensorFlow."""
    import tensorflow as tf

    found = {}
    for record in tf.data.TFRecordDataset(files):
        context, sequence = tf.io.parse_single_sequence_example(
            record, context_features={"clip": tf.io.FixedLenFeature([], tf.int64)},
            sequence_features={"frames": tf.io.FixedLenSequenceFeature([], tf.string)})
        found[int(context["clip"])] = [bytes(frame) for frame in sequence["frames"].numpy()]
    return found


MEASURE = """
import os, sys, time
sys.path.insert(0, {root!r})
import av, PIL.Image, tensorflow
import tfrecord_builder as tb

def status(key):
    with open("/proc/self/status") as file:
        return next(int(line.split()[1]) * 1024 for line in file if line.startswith(key + ":"))

with open("/proc/self/clear_refs", "w") as file:  # the peak from here on: what the build adds to the imports
    file.write("5")
before = status("VmRSS")
started = time.perf_counter()
tb.build({spec!r}, output={out!r}, overwrite=True, workers=1, progress=False)
print(time.perf_counter() - started, (status("VmHWM") - before) / 2**20)
"""


def peak(spec: str, out: str) -> tuple[float, float]:
    """(MiB of resident memory the build adds at its peak, build seconds) of a build of `spec` in
    a fresh process, after its imports (Linux: the peak `VmHWM`, reset after the imports)."""
    output = subprocess.run([sys.executable, "-c", MEASURE.format(root=ROOT, spec=spec, out=out)],
                            stdout=subprocess.PIPE, text=True, check=True).stdout
    seconds, mib = output.split()[-2:]
    return float(mib), float(seconds)


def memory(folder: str, out: str, names: list[str]) -> tuple[list[list[str]], float]:
    """The memory table's rows and the 10-minute clip's peak over the short clip's."""
    long_path, short_path = os.path.join(folder, "long.mp4"), os.path.join(folder, "short.mp4")
    if not os.path.exists(long_path):
        draw, picture = random.Random(7), photos()[0]
        for path, seconds in ((long_path, 600), (short_path, 10)):
            write_clip(path, (frame for _ in range(seconds // 5) for frame in pan(picture, 50, (48, 64), draw)),
                       10, (48, 64))
    cases = {
        "1 clip of 10 s (64x48, 10 fps), max_frames: 32": spec_file(folder, "short.csv", ["short.mp4"], 32, 1),
        "1 clip of 10 minutes (6,000 frames), max_frames: 32": spec_file(folder, "long.csv", ["long.mp4"], 32, 1),
        f"{len(names) // 4} clips of the main set": spec_file(folder, "quarter.csv", names[: len(names) // 4]),
        f"{len(names)} clips of the main set": spec_file(folder, "all.csv", names),
    }
    measured = {case: peak(spec, os.path.join(out, "memory")) for case, spec in cases.items()}
    rows = [[case, f"{mib:.0f}", f"{seconds:.2f}"] for case, (mib, seconds) in measured.items()]
    values = list(measured.values())
    return rows, values[1][0] / values[0][0]


def main() -> int:
    parser = argument_parser(__doc__, "--clips", 160, "clips of 4 s at 25 frames a second (default 160)")
    parser.add_argument("--read-copies", type=int, default=8, help="times the clips are listed in the read "
                        "benchmark's dataset (default 8)")
    arguments = parser.parse_args()
    out = os.path.join(arguments.out, "video")
    import tensorflow as tf

    import tfrecord_builder as tb

    before = machine({}, load_average=True)["load_average"]
    folder = os.path.join(out, "data")
    names = make_clips(folder, arguments.clips)
    spec = spec_file(folder, "table.csv", names)
    frames = arguments.clips * RATE * SECONDS  # source frames decoded
    built: dict[int, Any] = {}

    def ours(workers: int) -> Callable[[], None]:
        return our_build(spec, out, workers, built)

    cases: dict[str, Callable[[], None]] = {
        OURS.format(workers=1, s=""): ours(1),
        OURS.format(workers=2, s="s"): ours(2),
        ISSUE: lambda: loop(folder, names, os.path.join(out, "loop"), expert=False),
        EXPERT: lambda: loop(folder, names, os.path.join(out, "expert"), expert=True),
        EXPERT_TWO: lambda: loop_in_two(folder, names, os.path.join(out, "expert-two")),
    }
    times = best_of_rounds(arguments.repeats, list(cases.values()))
    results = with_ratios([Result("build", case, timing.seconds, frames, timing.cpu_seconds)
                           for case, timing in zip(cases, times)], ISSUE)
    info = built[2]
    ours_frames = stored_frames([os.path.join(info.path, name) for name in info.splits["train"].files])
    loops = {case: stored_frames([os.path.join(out, folder_name, f"part-{index}.tfrecord") for index in range(4)])
             for case, folder_name in ((ISSUE, "loop"), (EXPERT, "expert"))}
    same = all(found == ours_frames for found in loops.values())
    print(f"\n## Build: source frames a second ({arguments.clips} clips, {frames:,} frames, best of "
          f"{arguments.repeats}; ours and both loops store {'the same JPEG bytes' if same else 'DIFFERENT frames'})\n")
    print(results_table(results, "frames/s", ISSUE))

    rows, long_over_short = memory(folder, out, names)
    print("\n## Memory: resident memory a build adds at its peak, in a fresh process after its imports (workers: 1)\n")
    print(markdown_table(["build", "peak added, MiB", "s"], ["---", "---:", "---:"], rows))

    # read: the clips listed --read-copies times (each its own record), built once by ours, so that
    # an epoch is long beside tf.data's fixed costs of one (about 15 ms a shard)
    read_names = names * arguments.read_copies
    read_info = tb.build(spec_file(folder, "read.csv", read_names, shards=8), output=os.path.join(out, "read"),
                         overwrite=True, workers=2, progress=False)
    module = import_module(os.path.join(read_info.path, f"{read_info.name}_input.py"))
    files = [os.path.join(read_info.path, name) for name in read_info.splits["train"].files]

    def parse(serialized: Any) -> Any:
        _, sequence, _ = tf.io.parse_sequence_example(
            serialized, context_features={"clip": tf.io.FixedLenFeature([], tf.int64)},
            sequence_features={"frames": tf.io.RaggedFeature(tf.string)})
        ragged = sequence["frames"]
        pictures = tf.map_fn(lambda data: tf.io.decode_jpeg(data, channels=3), ragged.flat_values,
                             fn_output_signature=tf.TensorSpec(SHAPE, tf.uint8))
        return tf.RaggedTensor.from_row_lengths(pictures, ragged.row_lengths()).to_tensor()

    read_cases = {"generated module": lambda: module.input_fn("train", batch_size=8, shuffle=False),
                  **hand_pipelines(files, 8, parse)}
    steady, cold = steady_and_cold(
        read_cases, ["generated module"], len(read_names),
        lambda batch: int((batch["frames"] if isinstance(batch, dict) else batch).shape[0]), arguments.repeats)
    print(f"\n## Read: clips a second, batches of 8 ({len(read_names):,} clips in 8 shards)\n")
    print(results_table(steady + cold, "clips/s", "the best hand-written"))

    after = machine({}, load_average=True)["load_average"]
    by_case = {result.case: result for result in results}
    targets = [
        Target("video build, ours (2 workers) over the issue's loop", by_case[OURS.format(workers=2, s="s")].ratio, 3.0,
               note="source frames a second"),
        Target("video build memory, a 10-minute clip over a 10 s one (max_frames: 32)", long_over_short, 1.1,
               at_least=False, note="resident memory the build adds at its peak"),
        Target("video read, generated module, steady", steady[0].ratio, READ_STEADY_BAR,
               note=f"over the best hand-written ({steady[0].reference})"),
        Target("video read, generated module, one cold pass", cold[0].ratio, READ_COLD_BAR,
               note=f"over the best hand-written ({cold[0].reference})"),
    ]
    print("\n" + targets_table(targets))
    import av
    import PIL

    document_machine = machine({"tensorflow": tf.__version__, "av": av.__version__, "pillow": PIL.__version__})
    print(f"\n{machine_line(document_machine)}; load average (1, 5, 15 min) {before} before, {after} after")
    write_json(os.path.join(arguments.out, "video.json"),
               {"clips": arguments.clips, "frames": frames, "same": same, "memory": rows,
                "load_average": {"before": before, "after": after}, "machine": document_machine},
               results, steady + cold, targets)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
