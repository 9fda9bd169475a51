"""Image benchmark: tfrecord_builder against the hand-written tutorial code, build and read.

Run by hand (everything it writes goes under bench/out/, which git ignores):

    .venv/bin/python bench/images.py [--images N] [--repeats R]

1. Generates N deterministic synthetic JPEG photos, 96x96 RGB at quality 90 (seeded numpy: smooth
   colour gradients, soft blobs and texture plus noise, so their JPEG sizes are realistic, ~3.4 KiB),
   in 10 class sub-folders (the image_folder layout), and the YAML specs that read them.
2. Build, in images/s, side by side, each `tb.build` case with 1 and with 2 workers:
   - ours, JPEG passthrough: `{type: image, encoding: jpeg, shape: [96, 96, 3]}` stores the files'
     own bytes (in one copy: each shard read, encoded and written by one worker), and the same the
     usual way (`TFRECORD_BUILDER_ONE_COPY=0`: sorted runs, then a merge);
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
import camera_photos as camera  # noqa: E402
from harness import (  # noqa: E402
    Column, OutputPaths, Result, Target, argument_parser, best_of_rounds, files_of, import_module, machine,
    machine_line, markdown_table, raw_records, record_writers, results_table, shard_paths, targets_table, total_bytes, with_ratios,
    write_json,
)
from harness import hand_pipelines, reading_targets, steady_and_cold  # noqa: E402  (reading)

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
LARGE = "images_jpeg_large"  # the passthrough spec over the larger folder (--large photos)
CAMERA = {kind: f"camera_{kind}" for kind in camera.KINDS}  # a dataset per camera source kind
# the targets (bench/README.md): the passthrough's 1.5x the seed loop at 2,000 and 20,000 photos is issue 42's
BARS = {"camera": 2.5, "passthrough": 1.5, "scaling": 1.8}


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


def spec_text(name: str, image: str, photos: str, output_dir: str, input_section: str = "",
              filename: bool = False) -> str:
    """The YAML spec of one image dataset (paths relative to the spec's folder); with `filename`,
    each record also keeps its file's name (the camera cases' quality check finds the photo by it)."""
    return "\n".join([
        f"name: {name}",
        "version: 1.0.0",
        "description: synthetic photos of the image benchmark (bench/images.py)",
        f"source: {{builder: image_folder, path: {photos}}}",
        "splits: {train: 1.0}",
        "features:",
        f"  image: {image}",
        "  label: {type: class_label}          # names from the sub-folders",
        *(["  filename: {dtype: string}"] if filename else []),
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
        self.large = self.file("photos_large")
        self.seed_large = self.file("seed_large")
        self.camera = {kind: self.file(f"camera_{kind}") for kind in camera.KINDS}

    def loop(self, kind: str, method: str) -> str:
        """Where a hand-written camera loop writes its shards."""
        return self.file(f"loop_{kind}_{method}")

    def spec(self, name: str) -> str:
        return self.file(f"{name}.yaml")


def prepare(paths: Paths, count: int, large: int, photos: int) -> dict[str, int]:
    """Writes the photos (`count` small ones, `large` for the larger passthrough, `photos` camera
    photos of each kind) and the specs; creates the output folders. Returns the photos' bytes."""
    for folder in (paths.root, paths.seed_raw, paths.seed_jpeg, paths.seed_large, paths.modules,
                   *(paths.loop(kind, method) for kind in camera.KINDS for method in LOOPS)):
        os.makedirs(folder, exist_ok=True)
    photo_bytes = {"small": write_photos(paths.photos, count)}
    if large:
        photo_bytes["large"] = write_photos(paths.large, large)
        with open(paths.spec(LARGE), "w", encoding="utf-8") as file:
            file.write(spec_text(LARGE, DATASETS["jpeg"][1], os.path.basename(paths.large), os.path.basename(paths.ours)))
    if photos:
        photo_bytes.update({f"camera_{kind}": size
                            for kind, size in camera.write_camera_photos(paths.camera, photos).items()})
        for kind, name in CAMERA.items():
            with open(paths.spec(name), "w", encoding="utf-8") as file:
                file.write(spec_text(name, camera.KINDS[kind].feature, os.path.basename(paths.camera[kind]),
                                     os.path.basename(paths.ours), filename=True))
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
USUAL_CASE = "ours, JPEG passthrough [96, 96, 3], the usual path (TFRECORD_BUILDER_ONE_COPY=0)"
ONE_COPY = "TFRECORD_BUILDER_ONE_COPY"
SEED_LARGE = "seed tutorial loop, JPEG bytes, the larger folder"
LARGE_CASE = "ours, JPEG passthrough [96, 96, 3], the larger folder"
LOOPS = {"pillow": camera.pillow_resized, "tf": camera.tf_resized}  # the camera cases' hand-written loops
LOOP_LABELS = {"pillow": "Pillow loop (open, full decode, resize, encode)",
               "tf": "`tf.image` loop (decode, resize antialias, encode)"}


def camera_case(kind: str, method: str) -> str:
    """The build table's name of a camera case: `method` is ours, pillow or tf."""
    source = camera.KINDS[kind]
    what = f"{source.label} -> [{camera.TARGET}, {camera.TARGET}, {source.channels}] {source.encoding.upper()}"
    return f"{what}: {'ours' if method == 'ours' else LOOP_LABELS[method]}"


def workers_label(case: str, workers: int) -> str:
    return f"{case}, {workers} worker{'s' if workers > 1 else ''}"


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


def bench_build(paths: Paths, count: int, large: int, photos: int,
                repeats: int) -> tuple[list[Result], dict[str, tb.DatasetInfo], Any]:
    """Times the build cases; returns them, the info of each dataset `tb.build` wrote (by kind
    for the small photos' datasets, by name for the others) and the TFDS builder that built last
    (None without TFDS). `large` or `photos` 0 leaves those cases out."""
    infos: dict[str, tb.DatasetInfo] = {}

    def ours(kind: str, workers: int) -> Callable[[], None]:
        def run() -> None:
            infos[kind] = tb.build(paths.spec(DATASETS[kind][0]), output=paths.ours, overwrite=True, workers=workers)
        return run

    def usual(kind: str, workers: int) -> Callable[[], None]:
        """Ours the way before one copy (TFRECORD_BUILDER_ONE_COPY=0): records into sorted runs,
        shards merged from them; what one copy gains is the ratio of the two."""
        def run() -> None:
            os.environ[ONE_COPY] = "0"
            try:
                tb.build(paths.spec(DATASETS[kind][0]), output=paths.ours, overwrite=True, workers=workers)
            finally:
                del os.environ[ONE_COPY]
        return run

    def ours_named(name: str, workers: int) -> Callable[[], None]:
        def run() -> None:
            infos[name] = tb.build(paths.spec(name), output=paths.ours, overwrite=True, workers=workers)
        return run

    cases: dict[str, tuple[Callable[[], None], str, int]] = {}
    for kind, (label, reference) in OUR_CASES.items():
        for workers in WORKERS:
            cases[workers_label(label, workers)] = (ours(kind, workers), reference, count)
    for workers in WORKERS:
        cases[workers_label(USUAL_CASE, workers)] = (usual("jpeg", workers), SEED_JPEG, count)
    cases[SEED_RAW] = (lambda: seed_loop(paths.photos, paths.seed_raw, "seed_raw", seed_raw_example), SEED_RAW, count)
    cases[SEED_JPEG] = (lambda: seed_loop(paths.photos, paths.seed_jpeg, "seed_jpeg", seed_jpeg_example), SEED_JPEG,
                        count)
    if large:
        for workers in WORKERS:
            cases[workers_label(LARGE_CASE, workers)] = (ours_named(LARGE, workers), SEED_LARGE, large)
        cases[SEED_LARGE] = (lambda: seed_loop(paths.large, paths.seed_large, "seed_large", seed_jpeg_example),
                             SEED_LARGE, large)
    for kind in camera.KINDS if photos else ():
        pillow = camera_case(kind, "pillow")
        for workers in WORKERS:
            cases[workers_label(camera_case(kind, "ours"), workers)] = (ours_named(CAMERA[kind], workers), pillow, photos)
        for method, resize in LOOPS.items():
            cases[camera_case(kind, method)] = (
                lambda kind=kind, method=method, resize=resize: camera.loop(
                    paths.camera[kind], paths.loop(kind, method), method, camera.KINDS[kind], resize, SHARDS),
                pillow, photos)
    fresh = None
    if tfds is not None:
        fresh = tfds_case.FreshBuilds(tfds_builder_class(), paths.tfds, paths.photos)
        cases[TFDS_BUILD] = (fresh, SEED_JPEG, count)  # TFDS stores the files' bytes too
    times = best_of_rounds(repeats, [run for run, _, _ in cases.values()])
    results = [Result("build", case, seconds, items, cpu_seconds=cpu, reference=reference)
               for (case, (_, reference, items)), (seconds, cpu) in zip(cases.items(), times)]
    if fresh is not None:
        fresh.tidy()
    return with_ratios(results), infos, fresh and fresh.builder


# ---- read cases ---------------------------------------------------------------------------------------

def hand_spec() -> dict[str, Any]:
    """The hand-written parse spec of the JPEG records (ours and the seed loop's use the same keys)."""
    return {"image": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64)}


def parse_by_hand(batch: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    """A batch of JPEG records -> (uint8 images, labels): `parse_example`, then `map_fn(decode_jpeg)`."""
    parsed = tf.io.parse_example(batch, hand_spec())
    images = tf.map_fn(lambda data: tf.io.decode_jpeg(data, channels=3), parsed["image"],
                       fn_output_signature=tf.TensorSpec([SIZE, SIZE, 3], tf.uint8))
    return images, parsed["label"]


MODULE = "generated module `input_fn`, uint8"
LIBRARY = "`tb.input_fn`, uint8"
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
        (MODULE, lambda: module.input_fn("train", batch_size=BATCH_SIZE, shuffle=False), (tf.uint8, shape)),
        ("generated module `input_fn`, `image_dtype: float32`",
         lambda: float_module.input_fn("train", batch_size=BATCH_SIZE, shuffle=False), (tf.float32, shape)),
        (LIBRARY, lambda: tb.input_fn(jpeg.path, "train", batch_size=BATCH_SIZE, shuffle=False), (tf.uint8, shape)),
        *((case, make, (tf.uint8, shape))
          for case, make in hand_pipelines(files_of(jpeg), BATCH_SIZE, parse_by_hand).items()),
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
               repeats: int) -> tuple[list[Result], list[Result]]:
    """Checks one epoch of each read pipeline (`check_epoch`), then times each in steady state,
    and ours and the hand-written ones for one cold pass (harness.steady_and_cold); ratios to the
    best hand-written pipeline of each table."""
    cases = read_cases(paths, infos, builder)
    for case, make, expected in cases:
        check_epoch(case, make(), count, expected)
    return steady_and_cold({case: make for case, make, _ in cases}, (MODULE, LIBRARY), count, batch_size_of, repeats)


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


def camera_quality(paths: Paths, infos: dict[str, tb.DatasetInfo]) -> dict[str, dict[str, float]]:
    """The mean PSNR (dB) of the stored 224x224 images of ours and of each loop, per camera kind,
    against the reference (camera_photos.reference)."""
    quality = {}
    for kind, source in camera.KINDS.items():
        wanted = camera.references(paths.camera[kind], source)
        quality[kind] = {"ours": camera.mean_psnr(files_of(infos[CAMERA[kind]]), wanted),
                         **{method: camera.mean_psnr(shard_paths(paths.loop(kind, method), method, SHARDS), wanted)
                            for method in LOOPS}}
    return quality


def checks(paths: Paths, infos: dict[str, tb.DatasetInfo], builder: Any, count: int) -> dict[str, Any]:
    """Our records and TFDS's against the seed loops' (as multisets of label and image bytes), sizes,
    bytes; the camera cases' quality.

    TFDS's records hold the image's bytes under "image" and the label index under "label" too."""
    seed_jpeg = record_digests(shard_paths(paths.seed_jpeg, "seed_jpeg", SHARDS), hand_spec())
    return {
        "large_same_as_seed": (record_digests(files_of(infos[LARGE]), hand_spec())
                               == record_digests(shard_paths(paths.seed_large, "seed_large", SHARDS), hand_spec())
                               if LARGE in infos else None),
        "camera_psnr": camera_quality(paths, infos) if CAMERA["jpeg"] in infos else None,
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


SEED_LOOP_SHORT = {SEED_RAW: "seed loop, raw pixels", SEED_JPEG: "seed loop, JPEG bytes",
                   SEED_LARGE: "seed loop, JPEG bytes", **{camera_case(kind, "pillow"): "Pillow loop" for kind in camera.KINDS}}
PASSTHROUGH = [workers_label(OUR_CASES['jpeg'][0], workers) for workers in WORKERS]


def targets(build: list[Result]) -> list[Target]:
    """The images targets (bench/README.md) from the build results: the camera photos against the
    Pillow loop, the passthrough against the seed loop (with the default 2 workers), and 2 workers
    over 1 for every case of ours."""
    speed = {result.case: result.per_second for result in build}
    found: list[Target] = []
    ours_jpeg = workers_label(camera_case("jpeg", "ours"), max(WORKERS))
    if ours_jpeg in speed:
        found.append(Target("images: 12 MP JPEG -> 224 JPEG, ours (2 workers) vs Pillow loop",
                            speed[ours_jpeg] / speed[camera_case("jpeg", "pillow")], BARS["camera"],
                            note="images/s, ours over the Pillow loop's"))
    for case, seed in ((OUR_CASES["jpeg"][0], SEED_JPEG), (LARGE_CASE, SEED_LARGE)):
        if seed in speed:
            count = next(result.items for result in build if result.case == seed)
            found.append(Target(f"images: JPEG passthrough, {count:,} photos, ours (2 workers) vs seed loop",
                                speed[workers_label(case, max(WORKERS))] / speed[seed], BARS["passthrough"],
                                note="images/s, ours over the seed loop's"))
    cases = [label for label, _ in OUR_CASES.values()] + [LARGE_CASE] + [camera_case(kind, "ours") for kind in camera.KINDS]
    for case in cases:
        if workers_label(case, 1) in speed:
            found.append(Target(f"images: 2 workers over 1, {case.removeprefix('ours, ')}",
                                speed[workers_label(case, 2)] / speed[workers_label(case, 1)], BARS["scaling"],
                                note="images/s, 2 workers over 1"))
    return found


def quality_table(quality: dict[str, dict[str, float]]) -> str:
    """The camera cases' PSNR per source kind and method."""
    return markdown_table(["source -> stored", "ours", "Pillow loop", "`tf.image` loop"], ["---", "---:", "---:", "---:"],
                          [[camera_case(kind, "ours").removesuffix(": ours"),
                            *(f"{quality[kind][method]:.2f} dB" for method in ("ours", *LOOPS))]
                           for kind in camera.KINDS])


def report(count: int, repeats: int, build: list[Result], read: list[Result], cold: list[Result],
           extra: dict[str, Any], found: list[Target]) -> str:
    """The Markdown report: machine, build table, camera quality, read table, notes, targets."""
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
        f"{extra['photo_bytes']['small'] / count / 1024:.1f} KiB each), {CLASSES} classes, best of {repeats}",
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
        *([f"Camera photos: mean PSNR of the stored {camera.TARGET}x{camera.TARGET} images against Pillow's "
           "LANCZOS resize of the full decode (in float):", "", quality_table(extra["camera_psnr"]), ""]
          if extra["camera_psnr"] else []),
        f"### Read (one epoch of the JPEG passthrough dataset, decoded, batch {BATCH_SIZE}, no shuffle)",
        "",
        results_table(read, "images", "the best hand-written", absent=tfds_case.absent(TFDS_READ)),
        "",
        "One cold pass (a fresh pipeline: tracing, graph rewrites, opening the shards, one epoch):",
        "",
        results_table(cold, "images", "the best hand-written"),
        "",
        f"Shard bytes: ours JPEG {sizes['ours_jpeg']:,} (seed loop {sizes['seed_jpeg']:,}), "
        f"ours re-encoded {RESIZED}x{RESIZED} {sizes['ours_resized']:,}, "
        f"ours raw {sizes['ours_raw']:,} (seed loop {sizes['seed_raw']:,}). "
        f"Records (label, image bytes) ours vs seed loop: JPEG {same(extra['jpeg_same_as_seed'])}, "
        f"raw pixels {same(extra['raw_same_as_seed'])}; re-encoded images all "
        f"{RESIZED}x{RESIZED}x3: {'yes' if extra['resized_shapes_ok'] else 'NO'}.{tfds_note}"
        + (f" The larger folder: ours vs seed loop {same(extra['large_same_as_seed'])}."
           if extra["large_same_as_seed"] is not None else ""),
        "",
        "### Targets",
        "",
        targets_table(found),
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser(__doc__, "--images", 2000, "synthetic photos to generate (default 2000)")
    parser.add_argument("--large", type=int, default=20000,
                        help="photos of the larger passthrough folder (default 20000; 0 leaves it out)")
    parser.add_argument("--photos", type=int, default=24,
                        help="12-megapixel camera photos of each kind (default 24; 0 leaves them out)")
    args = parser.parse_args(argv)
    for option, value, least in (("--images", args.images, CLASSES), ("--large", args.large, CLASSES),
                                 ("--photos", args.photos, camera.CLASSES)):
        if (value or option == "--images") and value < least:
            parser.error(f"{option}: expected at least {least} (one per class)")
    paths = Paths(os.path.abspath(args.out))
    load_at_start = os.getloadavg()[0]

    photo_bytes = prepare(paths, args.images, args.large, args.photos)
    build, infos, builder = bench_build(paths, args.images, args.large, args.photos, args.repeats)
    extra = {"photo_bytes": photo_bytes, "load_at_start": load_at_start, **checks(paths, infos, builder, args.images)}
    read, cold = bench_read(paths, infos, builder, args.images, args.repeats)
    found = targets(build) + reading_targets("images", read, cold, MODULE, LIBRARY)

    print(report(args.images, args.repeats, build, read, cold, extra, found))
    document = {
        "images": args.images, "large": args.large, "size": [SIZE, SIZE, 3], "quality": QUALITY, "classes": CLASSES,
        "repeats": args.repeats, "batch_size": BATCH_SIZE, "shards": SHARDS, "workers": list(WORKERS),
        "camera": {"photos": args.photos, **camera.settings()},
        "machine": machine_info(), **extra,
        "tfds": tfds_case.settings(paths.photos, BATCH_SIZE) if tfds is not None else tfds_case.MISSING,
    }
    write_json(paths.json, document, build, read + cold, targets=found)
    return 0


if __name__ == "__main__":
    sys.exit(main())
