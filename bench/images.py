"""Image benchmark: tfrecord_builder against the hand-written tutorial code, build and read.

Run by hand (everything it writes goes under bench/out/, which git ignores):

    .venv/bin/python bench/images.py [--images N] [--repeats R]

1. Generates N deterministic synthetic JPEG photos, 96x96 RGB at quality 90 (seeded numpy: smooth
   colour gradients, soft blobs and texture plus noise, so their JPEG sizes are realistic, ~3.4 KiB),
   in 10 class sub-folders (the image_folder layout), and the YAML specs that read them.
2. Build, in images/s, side by side, each `tb.build` case with 1 and with 2 workers:
   - ours, JPEG passthrough: `{type: image, encoding: jpeg, shape: [96, 96, 3]}` stores the files'
     own bytes;
   - ours, re-encoded: `shape: [64, 64, 3]` resizes and encodes a new JPEG;
   - ours, raw pixels: `encoding: raw, shape: [96, 96, 3]`;
   - the seed tutorials' raw-pixel loop: Pillow decode -> `tobytes()` -> a `tf.train.Example`
     per image (pixels, label, height, width) -> `SerializeToString` -> `tf.io.TFRecordWriter`;
   - the seed tutorials' JPEG loop: the file's bytes and the label in a `tf.train.Example`;
   - TensorFlow Datasets: a `tfds.core.GeneratorBasedBuilder` yielding each file's path as a
     `tfds.features.Image(encoding_format="jpeg")` and its folder as a `ClassLabel`
     (`download_and_prepare()` into a fresh data_dir, 4 shards; see tfds_case.py): TFDS stores
     the file's bytes, as the passthrough case does. "TFDS not installed" without the bench extra.
   Ratios are to the seed loop that stores the same thing (raw pixels for the raw and resized
   cases, which decode every image too; the JPEG bytes for the passthrough case and TFDS).
3. Read, in decoded images/s, one full epoch of the passthrough dataset, batches of 256, no
   shuffle: the generated module's `input_fn` (uint8), the same with `input: {image_dtype: float32}`,
   `tb.input_fn`, a hand-written batched `parse_example` + `map_fn(decode_jpeg)` pipeline, the
   generated module over the raw-pixel dataset (no decoding), the floor (raw records, no parsing)
   and TFDS's `builder.as_dataset(split="train", batch_size=256)` over the shards TFDS wrote.
   One warm-up epoch each, which also checks the count, dtype and shape of what it yields.
4. Prints Markdown tables and the machine, and writes the same as JSON to bench/out/images.json.

Every timing is the best of R rounds; each round runs every case of a table once, in turn. The
CPU time of that fastest call (this process and the build's worker processes) is reported beside it.
TensorFlow is imported before anything is timed.
Before timing the reads, the records of ours, of the seed loops and of TFDS are parsed and compared.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import sys
from typing import Any, Callable, Iterable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import PIL  # noqa: E402
from PIL import Image  # noqa: E402

if __name__ != "__mp_main__":
    # Imported up front: its import time is never timed. But not in `tb.build`'s worker processes:
    # they are spawned, and a spawned process re-imports the caller's main script (as
    # `__mp_main__`); TensorFlow's import there would be paid by every worker of every build
    # (~5 s per 2-worker build on 2 cores). Workers need only the package, numpy and Pillow.
    # See bench/README.md.
    import tensorflow as tf  # noqa: E402
    import tfds_case  # noqa: E402  (TensorFlow Datasets, if the bench extra is installed; imports TensorFlow)
    from tfds_case import tfds  # noqa: E402  (None without it)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the repository, should the package not be installed

import tfrecord_builder as tb  # noqa: E402
from harness import (  # noqa: E402
    Column, OutputPaths, Result, argument_parser, best_of_rounds, epoch, files_of, import_module, machine,
    machine_line, raw_records, record_writers, results_table, shard_paths, total_bytes, with_ratios, write_json,
)

NAME = "images"
SIZE = 96  # source photos: SIZE x SIZE RGB
RESIZED = 64  # the re-encode case's shape
QUALITY = 90
CLASSES = 10
SHARDS = 4
BATCH_SIZE = 256
WORKERS = (1, 2)
SEED = 20240601

# the datasets `tb.build` writes: (dataset name, image feature)
DATASETS = {
    "jpeg": ("images_jpeg", f"{{type: image, encoding: jpeg, shape: [{SIZE}, {SIZE}, 3]}}"),
    "resized": ("images_resized", f"{{type: image, encoding: jpeg, shape: [{RESIZED}, {RESIZED}, 3]}}"),
    "raw": ("images_raw", f"{{type: image, encoding: raw, shape: [{SIZE}, {SIZE}, 3]}}"),
}
FLOAT32 = "images_jpeg_float32"  # the jpeg spec with `input: {image_dtype: float32}`: its module only


# ---- data and specs -------------------------------------------------------------------------------

def class_names() -> list[str]:
    return [f"class_{index}" for index in range(CLASSES)]


def _texture(rng: np.random.Generator, cells: int, amplitude: float) -> np.ndarray:
    """Smooth random float32 [SIZE, SIZE, 3] variation: a cells x cells noise field, bicubic-upsampled."""
    low = rng.normal(0.0, amplitude, size=(cells, cells, 3)).astype(np.float32)
    return np.stack([np.asarray(Image.fromarray(low[..., channel], "F").resize((SIZE, SIZE), Image.Resampling.BICUBIC))
                     for channel in range(3)], axis=-1)


def synthetic_photo(rng: np.random.Generator) -> np.ndarray:
    """A photo-like uint8 [SIZE, SIZE, 3] image: a colour gradient, soft blobs, texture, sensor noise."""
    y, x = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32) / (SIZE - 1)
    angle = rng.uniform(0.0, 2.0 * np.pi)
    ramp = np.cos(angle) * x + np.sin(angle) * y
    ramp = (ramp - ramp.min()) / max(float(np.ptp(ramp)), 1e-6)
    start, end = rng.uniform(0.0, 255.0, size=(2, 3)).astype(np.float32)
    image = start + (end - start) * ramp[..., None]
    for _ in range(int(rng.integers(2, 6))):  # soft blobs: objects out of focus
        cy, cx = rng.uniform(0.0, 1.0, size=2)
        radius = rng.uniform(0.08, 0.3)
        weight = np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2.0 * radius**2))[..., None]
        image = image * (1.0 - weight) + rng.uniform(0.0, 255.0, size=3).astype(np.float32) * weight
    image += _texture(rng, 8, 20.0) + _texture(rng, 24, 12.0)  # shading and surface detail
    image += rng.normal(0.0, 6.0, size=image.shape).astype(np.float32)
    return np.clip(np.rint(image), 0, 255).astype(np.uint8)


def write_photos(folder: str, count: int, seed: int = SEED) -> int:
    """Writes `count` JPEGs, image i into class_{i % 10}/; deterministic. Returns their total bytes."""
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    for name in class_names():
        os.makedirs(os.path.join(folder, name))
    rng = np.random.default_rng(seed)
    total = 0
    for index in range(count):
        path = os.path.join(folder, class_names()[index % CLASSES], f"photo_{index:06d}.jpg")
        Image.fromarray(synthetic_photo(rng), "RGB").save(path, "JPEG", quality=QUALITY)
        total += os.path.getsize(path)
    return total


def spec_text(name: str, image: str, photos: str, output_dir: str, input_section: str = "") -> str:
    """The YAML spec of one image dataset (paths relative to the spec's folder)."""
    return "\n".join([
        f"name: {name}",
        "version: 1.0.0",
        "description: synthetic photos of the image benchmark (bench/images.py)",
        f"source: {{builder: image_folder, path: {photos}}}",
        "splits: {train: 1.0}",
        "features:",
        f"  image: {image}",
        "  label: {type: class_label}          # names from the sub-folders",
        "label: label",
        f"output: {{dir: {output_dir}, shards: {SHARDS}}}",
        *([input_section] if input_section else []),
        "",
    ])


class Paths(OutputPaths):
    """Where the benchmark writes its files: under `out`/images."""

    def __init__(self, out: str) -> None:
        super().__init__(out, NAME)
        self.photos = self.file("photos")
        self.seed_raw = self.file("seed_raw")
        self.seed_jpeg = self.file("seed_jpeg")
        self.modules = self.file("modules")
        self.tfds = self.file("tfds")  # a data_dir per round: tfds/round_K/bench_images/1.0.0/

    def spec(self, name: str) -> str:
        return self.file(f"{name}.yaml")


def prepare(paths: Paths, count: int) -> int:
    """Writes the photos and the specs; creates the output folders. Returns the photos' bytes."""
    for folder in (paths.root, paths.seed_raw, paths.seed_jpeg, paths.modules):
        os.makedirs(folder, exist_ok=True)
    photo_bytes = write_photos(paths.photos, count)
    photos, output = os.path.basename(paths.photos), os.path.basename(paths.ours)
    for name, image in DATASETS.values():
        with open(paths.spec(name), "w", encoding="utf-8") as file:
            file.write(spec_text(name, image, photos, output))
    with open(paths.spec(FLOAT32), "w", encoding="utf-8") as file:  # same name: reads the jpeg dataset
        file.write(spec_text(DATASETS["jpeg"][0], DATASETS["jpeg"][1], photos, output,
                             "input: {image_dtype: float32}   # pixels scaled to [0, 1]"))
    return photo_bytes


# ---- build cases ------------------------------------------------------------------------------------

SEED_RAW = "seed tutorial loop, raw pixels (Pillow decode + tf.train.Example per image)"
SEED_JPEG = "seed tutorial loop, JPEG bytes (file bytes + tf.train.Example per image)"
TFDS_BUILD = "TFDS `GeneratorBasedBuilder.download_and_prepare` (Image(jpeg) from the path + ClassLabel)"
OUR_CASES = {  # kind: (case label, the seed loop its ratio is taken to)
    "jpeg": ("ours, JPEG passthrough [96, 96, 3]", SEED_JPEG),
    "resized": ("ours, re-encoded JPEG, resized to [64, 64, 3]", SEED_RAW),
    "raw": ("ours, raw pixels [96, 96, 3]", SEED_RAW),
}


def list_photos(folder: str) -> list[tuple[str, int]]:
    """(path, label index) of every photo, classes in sorted order, as the tutorials list them."""
    classes = sorted(entry for entry in os.listdir(folder) if os.path.isdir(os.path.join(folder, entry)))
    return [(os.path.join(folder, name, file), label)
            for label, name in enumerate(classes)
            for file in sorted(os.listdir(os.path.join(folder, name)))]


def _int64(values: Iterable[int]) -> tf.train.Feature:
    return tf.train.Feature(int64_list=tf.train.Int64List(value=values))


def _bytes(values: Iterable[bytes]) -> tf.train.Feature:
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))


def seed_loop(photos: str, folder: str, name: str, example: Callable[[str, int], tf.train.Example]) -> None:
    """The tutorials' loop: list, build, serialise and write each image (round-robin over 4 shards)."""
    with record_writers(shard_paths(folder, name, SHARDS)) as writers:
        for index, (path, label) in enumerate(list_photos(photos)):
            writers[index % SHARDS].write(example(path, label).SerializeToString())


def seed_raw_example(path: str, label: int) -> tf.train.Example:
    """One photo as decoded pixels, the way the seed tutorials write it."""
    image = Image.open(path).convert("RGB")
    pixels = np.asarray(image)
    return tf.train.Example(features=tf.train.Features(feature={
        "image": _bytes([pixels.tobytes()]),
        "label": _int64([label]),
        "height": _int64([pixels.shape[0]]),
        "width": _int64([pixels.shape[1]]),
    }))


def seed_jpeg_example(path: str, label: int) -> tf.train.Example:
    """One photo as its JPEG file's bytes, the way the seed tutorials write it."""
    with open(path, "rb") as file:
        data = file.read()
    return tf.train.Example(features=tf.train.Features(feature={"image": _bytes([data]), "label": _int64([label])}))


def tfds_builder_class() -> type:
    """TFDS's builder of the photos: the class folders in the manual_dir, each file's path as its
    image (TFDS reads the file and stores its bytes: no decoding, no re-encoding), its folder's
    name as its label, keyed by "class/file" (TFDS shuffles by hashed key)."""

    class BenchImages(tfds.core.GeneratorBasedBuilder):
        """The image benchmark's photos (bench/images.py)."""

        VERSION = tfds.core.Version("1.0.0")
        MANUAL_DOWNLOAD_INSTRUCTIONS = "bench/images.py writes the photos, a sub-folder per class, into the manual_dir."

        def _info(self) -> tfds.core.DatasetInfo:
            return tfds.core.DatasetInfo(builder=self, features=tfds.features.FeaturesDict({
                "image": tfds.features.Image(shape=(SIZE, SIZE, 3), encoding_format="jpeg"),
                "label": tfds.features.ClassLabel(names=class_names()),
            }), supervised_keys=("image", "label"))

        def _split_generators(self, dl_manager: Any) -> dict[str, Any]:
            return {"train": self._generate_examples(os.fspath(dl_manager.manual_dir))}

        def _generate_examples(self, folder: str) -> Any:
            for label in sorted(os.listdir(folder)):
                for file in sorted(os.listdir(os.path.join(folder, label))):
                    yield f"{label}/{file}", {"image": os.path.join(folder, label, file), "label": label}

    return BenchImages


def bench_build(paths: Paths, count: int, repeats: int) -> tuple[list[Result], dict[str, tb.DatasetInfo], Any]:
    """Times the build cases; returns them, the info of each dataset `tb.build` wrote and the
    TFDS builder that built last (None without TFDS)."""
    infos: dict[str, tb.DatasetInfo] = {}

    def ours(kind: str, workers: int) -> Callable[[], None]:
        def run() -> None:
            infos[kind] = tb.build(paths.spec(DATASETS[kind][0]), output=paths.ours, overwrite=True, workers=workers)
        return run

    cases: dict[str, tuple[Callable[[], None], str]] = {}
    for kind, (label, reference) in OUR_CASES.items():
        for workers in WORKERS:
            cases[f"{label}, {workers} worker{'s' if workers > 1 else ''}"] = (ours(kind, workers), reference)
    cases[SEED_RAW] = (lambda: seed_loop(paths.photos, paths.seed_raw, "seed_raw", seed_raw_example), SEED_RAW)
    cases[SEED_JPEG] = (lambda: seed_loop(paths.photos, paths.seed_jpeg, "seed_jpeg", seed_jpeg_example), SEED_JPEG)
    fresh = None
    if tfds is not None:
        fresh = tfds_case.FreshBuilds(tfds_builder_class(), paths.tfds, paths.photos)
        cases[TFDS_BUILD] = (fresh, SEED_JPEG)  # TFDS stores the files' bytes too
    times = best_of_rounds(repeats, [run for run, _ in cases.values()])
    results = [Result("build", case, seconds, count, cpu_seconds=cpu, reference=reference)
               for (case, (_, reference)), (seconds, cpu) in zip(cases.items(), times)]
    if fresh is not None:
        fresh.tidy()
    return with_ratios(results), infos, fresh and fresh.builder


# ---- read cases ---------------------------------------------------------------------------------------

def hand_spec() -> dict[str, Any]:
    """The hand-written parse spec of the JPEG records (ours and the seed loop's use the same keys)."""
    return {"image": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64)}


def hand_written(files: list[str]) -> tf.data.Dataset:
    """TFRecordDataset -> batch -> map(parse_example + map_fn(decode_jpeg)) -> prefetch."""
    spec = hand_spec()

    def parse(batch: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        parsed = tf.io.parse_example(batch, spec)
        images = tf.map_fn(lambda data: tf.io.decode_jpeg(data, channels=3), parsed["image"],
                           fn_output_signature=tf.TensorSpec([SIZE, SIZE, 3], tf.uint8))
        return images, parsed["label"]

    dataset = tf.data.TFRecordDataset(files, num_parallel_reads=tf.data.AUTOTUNE).batch(BATCH_SIZE)
    return dataset.map(parse, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)


HAND_WRITTEN = "hand-written: batch -> parse_example + map_fn(decode_jpeg)"
TFDS_READ = f"TFDS `builder.as_dataset(batch_size={BATCH_SIZE})` (its own shards)"


def read_cases(paths: Paths, infos: dict[str, tb.DatasetInfo],
               builder: Any) -> list[tuple[str, Callable[[], tf.data.Dataset], Any]]:
    """(case, dataset factory, (dtype, shape) of its images or None) for every read pipeline: over
    the datasets `tb.build` wrote, but TFDS's, over the shards TFDS wrote (`builder`, left out
    where it is None)."""
    jpeg, raw = infos["jpeg"], infos["raw"]
    module = import_module(os.path.join(jpeg.path, f"{jpeg.name}_input.py"))
    # the float32 module: rendered from the spec with `input: {image_dtype: float32}`, reading the jpeg dataset
    float_path = os.path.join(paths.modules, f"{jpeg.name}_input.py")
    tb.generate_module(paths.spec(FLOAT32), float_path, data_dir=jpeg.path)
    float_module = import_module(float_path, f"{FLOAT32}_input")
    raw_module = import_module(os.path.join(raw.path, f"{raw.name}_input.py"))
    shape = (SIZE, SIZE, 3)
    return [
        ("generated module `input_fn`, uint8",
         lambda: module.input_fn("train", batch_size=BATCH_SIZE, shuffle=False), (tf.uint8, shape)),
        ("generated module `input_fn`, `image_dtype: float32`",
         lambda: float_module.input_fn("train", batch_size=BATCH_SIZE, shuffle=False), (tf.float32, shape)),
        ("`tb.input_fn`, uint8",
         lambda: tb.input_fn(jpeg.path, "train", batch_size=BATCH_SIZE, shuffle=False), (tf.uint8, shape)),
        (HAND_WRITTEN, lambda: hand_written(files_of(jpeg)), (tf.uint8, shape)),
        ("generated module `input_fn` over the raw-pixel dataset (no decoding)",
         lambda: raw_module.input_fn("train", batch_size=BATCH_SIZE, shuffle=False), (tf.uint8, shape)),
        ("floor: raw records, batched, no parsing", lambda: raw_records(files_of(jpeg), BATCH_SIZE), None),
        *([(TFDS_READ, lambda: tfds_case.as_dataset(builder, BATCH_SIZE), (tf.uint8, shape))]
          if builder is not None else []),
    ]


def images_of(batch: Any) -> Any:
    """The images of a batch: raw records, or a (features, label) / (images, label) pair."""
    if isinstance(batch, tuple):
        batch = batch[0]
    return batch["image"] if isinstance(batch, dict) else batch


def batch_size_of(batch: Any) -> int:
    """Images in a batch."""
    return int(images_of(batch).shape[0])


def check_epoch(case: str, dataset: tf.data.Dataset, count: int, expected: Any) -> None:
    """One epoch (the warm-up): every example once, images of the expected dtype, shape and range."""
    seen = 0
    for batch in dataset:
        images = images_of(batch)
        seen += int(images.shape[0])
        if expected is None:
            continue
        dtype, shape = expected
        if images.dtype != dtype or tuple(images.shape[1:]) != shape:
            raise RuntimeError(f"{case}: yielded {images.dtype.name} {images.shape}, expected {dtype.name} [n, {shape}]")
        if dtype == tf.float32 and not 0.0 <= float(tf.reduce_min(images)) <= float(tf.reduce_max(images)) <= 1.0:
            raise RuntimeError(f"{case}: float32 pixels outside [0, 1]")
    if seen != count:
        raise RuntimeError(f"{case}: one epoch yielded {seen} examples, expected {count}")


def bench_read(paths: Paths, infos: dict[str, tb.DatasetInfo], builder: Any, count: int,
               repeats: int) -> list[Result]:
    """Times one epoch of each read pipeline, after a warm-up epoch of each that checks it."""
    cases = read_cases(paths, infos, builder)
    datasets = [make() for _, make, _ in cases]
    for (case, _, expected), dataset in zip(cases, datasets):
        check_epoch(case, dataset, count, expected)
    times = best_of_rounds(repeats, [lambda dataset=dataset: epoch(dataset, batch_size_of)
                                     for dataset in datasets])
    results = [Result("read", case, seconds, count, cpu_seconds=cpu, reference=HAND_WRITTEN)
               for (case, _, _), (seconds, cpu) in zip(cases, times)]
    return with_ratios(results)


# ---- checks -------------------------------------------------------------------------------------------

def record_digests(files: list[str], spec: dict[str, Any]) -> list[tuple[int, str]]:
    """(label, sha256 of the image bytes) of every record, sorted: the records' content, in no order.

    Other keys (the seed raw loop's height and width) are not compared."""
    digests = []
    for batch in raw_records(files, BATCH_SIZE):
        parsed = tf.io.parse_example(batch, spec)
        for data, label in zip(parsed["image"].numpy(), parsed["label"].numpy()):
            digests.append((int(label), hashlib.sha256(data).hexdigest()))
    return sorted(digests)


def resized_ok(info: tb.DatasetInfo, count: int) -> bool:
    """Every record of the re-encoded dataset decodes to [64, 64, 3]."""
    seen = 0
    for batch in raw_records(files_of(info), BATCH_SIZE):
        for data in tf.io.parse_example(batch, hand_spec())["image"]:
            if tuple(tf.io.decode_jpeg(data, channels=3).shape) != (RESIZED, RESIZED, 3):
                return False
            seen += 1
    return seen == count


def checks(paths: Paths, infos: dict[str, tb.DatasetInfo], builder: Any, count: int) -> dict[str, Any]:
    """Our records and TFDS's against the seed loops' (as multisets of label and image bytes), sizes, bytes.

    TFDS's records hold the image's bytes under "image" and the label index under "label" too."""
    seed_jpeg = record_digests(shard_paths(paths.seed_jpeg, "seed_jpeg", SHARDS), hand_spec())
    return {
        "jpeg_same_as_seed": record_digests(files_of(infos["jpeg"]), hand_spec()) == seed_jpeg,
        "tfds_same_as_seed": (record_digests(tfds_case.files(builder), hand_spec()) == seed_jpeg
                              if builder is not None else None),
        "raw_same_as_seed": record_digests(files_of(infos["raw"]), hand_spec())
        == record_digests(shard_paths(paths.seed_raw, "seed_raw", SHARDS), hand_spec()),
        "resized_shapes_ok": resized_ok(infos["resized"], count),
        "bytes": {
            "ours_jpeg": infos["jpeg"].splits["train"].num_bytes,
            "seed_jpeg": total_bytes(shard_paths(paths.seed_jpeg, "seed_jpeg", SHARDS)),
            "ours_resized": infos["resized"].splits["train"].num_bytes,
            "ours_raw": infos["raw"].splits["train"].num_bytes,
            "seed_raw": total_bytes(shard_paths(paths.seed_raw, "seed_raw", SHARDS)),
            "tfds": tfds_case.num_bytes(builder) if builder is not None else None,
        },
    }


# ---- report -------------------------------------------------------------------------------------------

def machine_info() -> dict[str, Any]:
    """The machine, its load average (1, 5, 15 minutes) at the call, and the versions that matter here."""
    return machine({"tensorflow": tf.__version__, "numpy": np.__version__, "pillow": PIL.__version__,
                    "tfrecord_builder": tb.__version__, "tfds": tfds_case.version()}, load_average=True)


SEED_LOOP_SHORT = {SEED_RAW: "seed loop, raw pixels", SEED_JPEG: "seed loop, JPEG bytes"}
PASSTHROUGH = [f"{OUR_CASES['jpeg'][0]}, {workers} worker{'s' if workers > 1 else ''}" for workers in WORKERS]


def report(count: int, repeats: int, build: list[Result], read: list[Result], extra: dict[str, Any]) -> str:
    """The Markdown report: machine, build table, read table, notes."""
    info = machine_info()
    sizes = extra["bytes"]

    def same(flag: bool) -> str:
        return "identical" if flag else "DIFFER"

    if extra["tfds_same_as_seed"] is None:
        tfds_note = f" {tfds_case.missing_note()}"
    else:
        tfds_note = (f" TFDS: shard bytes {sizes['tfds']:,}, records (label, image bytes) vs the JPEG seed loop "
                     f"{same(extra['tfds_same_as_seed'])} (the files' own bytes, not re-encoded).")

    return "\n".join([
        f"## Image benchmark: {count:,} JPEG photos {SIZE}x{SIZE} RGB (quality {QUALITY}, "
        f"{extra['photo_bytes'] / count / 1024:.1f} KiB each), {CLASSES} classes, best of {repeats}",
        "",
        f"{machine_line(info)}. Load average (1 min) {extra['load_at_start']:.2f} "
        f"at the start, {info['load_average'][0]:.2f} at the end (other processes share the CPUs when it "
        f"exceeds what this benchmark runs).",
        "",
        f"### Build (image folder -> {SHARDS} TFRecord shards)",
        "",
        results_table(build, "images", "its seed loop",
                      [Column("seed loop", lambda result: SEED_LOOP_SHORT[result.reference], "---"),
                       *tfds_case.vs_tfds(build, TFDS_BUILD, PASSTHROUGH)],
                      absent=tfds_case.absent(TFDS_BUILD)),
        "",
        f"### Read (one epoch of the JPEG passthrough dataset, decoded, batch {BATCH_SIZE}, no shuffle)",
        "",
        results_table(read, "images", "hand-written", absent=tfds_case.absent(TFDS_READ)),
        "",
        f"Shard bytes: ours JPEG {sizes['ours_jpeg']:,} (seed loop {sizes['seed_jpeg']:,}), "
        f"ours re-encoded {RESIZED}x{RESIZED} {sizes['ours_resized']:,}, "
        f"ours raw {sizes['ours_raw']:,} (seed loop {sizes['seed_raw']:,}). "
        f"Records (label, image bytes) ours vs seed loop: JPEG {same(extra['jpeg_same_as_seed'])}, "
        f"raw pixels {same(extra['raw_same_as_seed'])}; re-encoded images all "
        f"{RESIZED}x{RESIZED}x3: {'yes' if extra['resized_shapes_ok'] else 'NO'}.{tfds_note}",
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser(__doc__, "--images", 2000, "synthetic photos to generate (default 2000)")
    args = parser.parse_args(argv)
    if args.images < CLASSES:
        parser.error(f"--images: expected at least {CLASSES} (one per class)")
    paths = Paths(os.path.abspath(args.out))
    load_at_start = os.getloadavg()[0]

    photo_bytes = prepare(paths, args.images)
    build, infos, builder = bench_build(paths, args.images, args.repeats)
    extra = {"photo_bytes": photo_bytes, "load_at_start": load_at_start, **checks(paths, infos, builder, args.images)}
    read = bench_read(paths, infos, builder, args.images, args.repeats)

    print(report(args.images, args.repeats, build, read, extra))
    document = {
        "images": args.images, "size": [SIZE, SIZE, 3], "quality": QUALITY, "classes": CLASSES,
        "repeats": args.repeats, "batch_size": BATCH_SIZE, "shards": SHARDS, "workers": list(WORKERS),
        "machine": machine_info(), **extra,
        "tfds": tfds_case.settings(paths.photos, BATCH_SIZE) if tfds is not None else tfds_case.MISSING,
    }
    write_json(paths.json, document, build, read)
    return 0


if __name__ == "__main__":
    sys.exit(main())
