"""A COCO detection set: `builder: coco` against the Object Detection API's per-image loop.

Run by hand (everything it writes goes under bench/out/coco/, which git ignores):

    .venv/bin/python bench/coco.py [--images 5000] [--repeats 1]

1. Writes a COCO-style set of N JPEG photos: crops of scikit-image's real photographs
   (astronaut, coffee, chelsea, rocket, motorcycle, ...), 320-640 pixels a side at quality 90,
   each written once (distinct bytes), and an instances JSON shaped as COCO's: 0-12 boxes an
   image (1 in 20 images without any), 80 categories with COCO's gaps in their ids, 1 in 50
   objects `iscrowd`.
2. Builds it into 8 shards, side by side, in fresh processes (each build's peak memory is its own):
   - ours the usual way (`TFRECORD_BUILDER_ONE_COPY=0`: records into sorted runs, shards merged
     from them), beside ours in one copy (each shard read, encoded and written by one worker):
   - the Object Detection API's way: what `create_coco_tf_record.py` does, written here from its
     description: `json.load`, annotations grouped by image, then per image a Python loop that
     reads the file (`tf.io.gfile`), opens it with Pillow, hashes it, turns each box into
     fractions of the JSON's width and height, builds a `tf.train.Example` of the Object Detection
     API's keys, serialises it and writes it (`tf.io.TFRecordWriter`, image i into shard i % 8);
   - ours: `tfrecord-builder build` of a spec with `builder: coco`, the image passed through
     (`key: image/encoded`), `bbox` (`format: xywh, units: pixels`, `layout: object_detection`),
     class ids and names, iscrowd, area, source id, filename, height and width: the same keys;
     default workers (all cores).
   - the floor: each image file read and its bytes written into 8 files (no JSON, no protobuf),
     what any build that passes the images through must at least do; 5x the loop's speed beyond
     the floor's can't be reached by anyone.
   Both outputs are checked to hold the same images with the same boxes (to float32) and classes.
3. Peak memory of our build at N/5 and N images (a fresh process each): flat in the number of
   images. And the JSON's parse memory as a ratio of its file size (`json.load` against
   `builder: coco`'s index; bench/coco_memory.py measures it at hundreds of MB).
4. Reads the smaller build (N/5 images, 8 shards), batches of 32, with the generated module's
   `input_fn` and `tb.input_fn` against three hand-written pipelines over the same shards
   (harness.hand_pipelines: sequential, interleaved, parallel reads) that give the same batches:
   `tf.io.parse_example` of the Object Detection API's keys (the boxes' four lists as
   `RaggedFeature`s), each image decoded (`decode_jpeg`, the accurate inverse DCT, as ours:
   the same pixels) and zero-padded to the batch's largest, the boxes stacked and scaled to the
   padded images, the other per-object values ragged; steady epochs and one cold pass
   (harness.steady_and_cold). The first batch of each is checked to be the same.
5. Prints Markdown tables and the targets (issue 42: ours at least 2x the loop; memory flat; the
   detection reads at least 1.0x steady and 0.95x cold) and writes them as JSON to bench/out/coco.json.
"""
from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time

import numpy as np
from PIL import Image

from harness import (
    HAND, HERE, Target, argument_parser, files_of, hand_pipelines, import_module, machine, machine_line, markdown_table,
    reading_targets, results_table, run_info, steady_and_cold, targets_table,
)
from coco_memory import peak

ROOT = os.path.dirname(HERE)
SHARDS = 8
SPEED_BAR = 2.0  # ours over the Object Detection API's loop (issue 42; the 5x before it was past the I/O floor)
BATCH_SIZE = 32  # the reads' batches
MODULE, LIBRARY = "generated module `input_fn`", "`tb.input_fn`"
PHOTOS = ("astronaut", "coffee", "chelsea", "rocket", "motorcycle_left", "hubble_deep_field", "immunohistochemistry",
          "camera", "moon", "coins", "page", "text", "grass", "gravel", "brick", "cell", "colorwheel")
# COCO's 80 categories have ids 1-90 with gaps: the same gaps here
CATEGORY_IDS = [i for i in range(1, 91) if i not in (12, 26, 29, 30, 45, 66, 68, 69, 71, 83)]

# The Object Detection API's way, in a fresh process: create_coco_tf_record.py's loop.
OD_LOOP = r'''
import collections, hashlib, io, json, os, resource, sys, time
import tensorflow as tf
import PIL.Image

annotations_file, image_dir, output, shards = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
start = time.perf_counter()

def int64_list(values): return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
def bytes_list(values): return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
def float_list(values): return tf.train.Feature(float_list=tf.train.FloatList(value=values))

with tf.io.gfile.GFile(annotations_file, "r") as fid:
    groundtruth = json.load(fid)
categories = {category["id"]: category for category in groundtruth["categories"]}
by_image = collections.defaultdict(list)
for annotation in groundtruth["annotations"]:
    by_image[annotation["image_id"]].append(annotation)

def create_tf_example(image, annotations):
    height, width, filename, image_id = image["height"], image["width"], image["file_name"], image["id"]
    with tf.io.gfile.GFile(os.path.join(image_dir, filename), "rb") as fid:
        encoded_jpg = fid.read()
    PIL.Image.open(io.BytesIO(encoded_jpg))  # (the script opens it to check it is an image)
    key = hashlib.sha256(encoded_jpg).hexdigest()
    xmin, xmax, ymin, ymax, is_crowd, names, ids, area = [], [], [], [], [], [], [], []
    for annotation in annotations:
        x, y, w, h = annotation["bbox"]
        if w <= 0 or h <= 0 or x + w > width or y + h > height:
            continue
        xmin.append(float(x) / width); xmax.append(float(x + w) / width)
        ymin.append(float(y) / height); ymax.append(float(y + h) / height)
        is_crowd.append(annotation["iscrowd"])
        ids.append(annotation["category_id"])
        names.append(categories[annotation["category_id"]]["name"].encode("utf8"))
        area.append(annotation["area"])
    feature = {
        "image/height": int64_list([height]), "image/width": int64_list([width]),
        "image/filename": bytes_list([filename.encode("utf8")]),
        "image/source_id": bytes_list([str(image_id).encode("utf8")]),
        "image/key/sha256": bytes_list([key.encode("utf8")]), "image/encoded": bytes_list([encoded_jpg]),
        "image/format": bytes_list([b"jpeg"]),
        "image/object/bbox/xmin": float_list(xmin), "image/object/bbox/xmax": float_list(xmax),
        "image/object/bbox/ymin": float_list(ymin), "image/object/bbox/ymax": float_list(ymax),
        "image/object/class/text": bytes_list(names), "image/object/class/label": int64_list(ids),
        "image/object/is_crowd": int64_list(is_crowd), "image/object/area": float_list(area),
    }
    return tf.train.Example(features=tf.train.Features(feature=feature))

os.makedirs(output, exist_ok=True)
writers = [tf.io.TFRecordWriter(os.path.join(output, f"coco_train.record-{index:05d}-of-{shards:05d}"))
           for index in range(shards)]
for index, image in enumerate(groundtruth["images"]):
    example = create_tf_example(image, by_image[image["id"]])
    writers[index % shards].write(example.SerializeToString())
for writer in writers:
    writer.close()
print(json.dumps({"seconds": time.perf_counter() - start,
                  "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
'''

# The floor, in a fresh process: each image file read and its bytes written into 8 files, no
# protobuf, no JSON: what any build that passes the images through must at least do.
FLOOR = r'''
import json, os, resource, sys, time
image_dir, output, shards = sys.argv[1], sys.argv[2], int(sys.argv[3])
names = sorted(os.listdir(image_dir))
start = time.perf_counter()
os.makedirs(output, exist_ok=True)
files = [open(os.path.join(output, f"floor-{index:05d}"), "wb") for index in range(shards)]
for index, name in enumerate(names):
    with open(os.path.join(image_dir, name), "rb") as image:
        files[index % shards].write(image.read())
for file in files:
    file.close()
print(json.dumps({"seconds": time.perf_counter() - start,
                  "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
'''

# Ours, in a fresh process: the build and its peak memory (the process, and its largest worker).
OURS = r'''
import json, resource, sys, time
import tfrecord_builder as tb
start = time.perf_counter()
tb.build(sys.argv[1], output=sys.argv[2], overwrite=True)
print(json.dumps({"seconds": time.perf_counter() - start,
                  "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "workers_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
'''

SPEC = """\
name: coco_bench
source: {{builder: coco, path: {json}, images: {images}}}
splits: {{train: 1.0}}
features:
  image:    {{type: image, encoding: jpeg, key: image/encoded}}
  objects:  {{type: bbox, source: bbox, format: xywh, units: pixels, image: image, layout: object_detection}}
  labels:   {{dtype: int64, shape: [null], source: category_id, key: image/object/class/label}}
  text:     {{dtype: string, shape: [null], source: label, key: image/object/class/text}}
  is_crowd: {{dtype: int64, shape: [null], source: iscrowd, key: image/object/is_crowd}}
  area:     {{dtype: float32, shape: [null], key: image/object/area}}
  image_id: {{dtype: int64, key: image/source_id}}
  filename: {{dtype: string, key: image/filename}}
  height:   {{dtype: int64, key: image/height}}
  width:    {{dtype: int64, key: image/width}}
output: {{shards: {shards}, shuffle: false}}
"""


def photos() -> list[np.ndarray]:
    """The real photographs scikit-image ships, as RGB arrays."""
    from skimage import data

    arrays = []
    for name in PHOTOS:
        try:
            image = getattr(data, name)()
        except Exception:  # (a photo a given scikit-image version fetches from the network)
            continue
        image = np.asarray(image)
        if image.dtype != np.uint8:
            continue
        if image.ndim == 2:
            image = np.stack([image] * 3, axis=-1)
        arrays.append(image[..., :3])
    return arrays


def write_set(folder: str, count: int, seed: int = 0) -> str:
    """N JPEG crops of real photos and their COCO instances JSON in `folder`; the JSON's path."""
    rng = random.Random(seed)
    sources = [Image.fromarray(array) for array in photos()]
    os.makedirs(os.path.join(folder, "images"), exist_ok=True)
    images, annotations = [], []
    for number in range(1, count + 1):
        photo = rng.choice(sources)
        scale = rng.uniform(0.6, 1.25)
        width = max(64, min(640, round(photo.width * scale)))
        height = max(64, min(640, round(photo.height * scale)))
        image = photo.resize((width, height), Image.Resampling.BILINEAR)
        if rng.random() < 0.5:
            image = image.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
        name = f"{number:012d}.jpg"
        image.save(os.path.join(folder, "images", name), quality=90)
        images.append({"license": 1, "file_name": name, "height": height, "width": width, "id": number})
        for _ in range(0 if rng.random() < 0.05 else rng.randint(1, 12)):
            w, h = rng.uniform(4, width / 2), rng.uniform(4, height / 2)
            x, y = rng.uniform(0, width - w), rng.uniform(0, height - h)
            annotations.append({"id": len(annotations) + 1, "image_id": number, "iscrowd": int(rng.random() < 0.02),
                                "bbox": [round(x, 2), round(y, 2), round(w, 2), round(h, 2)],
                                "area": round(w * h * 0.7, 2), "category_id": rng.choice(CATEGORY_IDS),
                                "segmentation": [[round(x, 1), round(y, 1), round(x + w, 1), round(y, 1),
                                                  round(x + w, 1), round(y + h, 1)]]})
    categories = [{"supercategory": "thing", "id": index, "name": f"class{index}"} for index in CATEGORY_IDS]
    path = os.path.join(folder, "instances.json")
    with open(path, "w") as file:
        json.dump({"info": {}, "licenses": [], "images": images, "annotations": annotations,
                   "categories": categories}, file, separators=(",", ":"))
    return path


def run(code: str, *arguments: str, env: dict[str, str] | None = None) -> dict:
    result = subprocess.run([sys.executable, "-c", code, *arguments], capture_output=True, text=True,
                            env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", **(env or {})})
    if result.returncode != 0:
        raise RuntimeError(result.stderr[-3000:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def compare(ours: str, theirs: str) -> str:
    """Whether the two outputs hold the same images, boxes (to float32) and classes; by source id."""
    import tensorflow as tf

    def records(folder: str) -> dict[bytes, dict]:
        found = {}
        files = sorted(os.path.join(folder, name) for name in os.listdir(folder) if ".tfrecord" in name
                       or ".record-" in name)
        for record in tf.data.TFRecordDataset(files):
            features = tf.train.Example.FromString(record.numpy()).features.feature
            found[features["image/source_id"].bytes_list.value[0] if features["image/source_id"].bytes_list.value
                  else str(features["image/source_id"].int64_list.value[0]).encode()] = {
                "image": features["image/encoded"].bytes_list.value[0],
                "boxes": np.array([list(features[f"image/object/bbox/{side}"].float_list.value)
                                   for side in ("ymin", "xmin", "ymax", "xmax")], np.float32),
                "text": list(features["image/object/class/text"].bytes_list.value)}
        return found

    mine, api = records(ours), records(theirs)
    differ = [key for key in api if key not in mine or mine[key]["image"] != api[key]["image"]
              or mine[key]["text"] != api[key]["text"]
              or not np.allclose(mine[key]["boxes"], api[key]["boxes"], atol=1e-6)]
    if len(mine) != len(api) or differ:
        return f"DIFFER: {len(mine)} and {len(api)} records, {len(differ)} differ (e.g. {differ[:3]})"
    return f"the same {len(mine)} images, boxes (to 1e-6) and class names"


# ---- reading: the generated module against hand-written pipelines ---------------------------------

SIDES = ("ymin", "xmin", "ymax", "xmax")


def parse_by_hand(serialized):
    """A batch of records -> the batch the generated module gives: `parse_example` of the Object
    Detection API's keys, each image decoded and zero-padded at the bottom and right to the batch's
    largest, the boxes [batch, None, 4] as fractions of the padded images, the per-object values ragged."""
    import tensorflow as tf

    ragged = {"image/object/class/label": tf.int64, "image/object/class/text": tf.string,
              "image/object/is_crowd": tf.int64, "image/object/area": tf.float32,
              **{f"image/object/bbox/{side}": tf.float32 for side in SIDES}}
    spec = {"image/encoded": tf.io.FixedLenFeature([], tf.string), "image/source_id": tf.io.FixedLenFeature([], tf.int64),
            "image/filename": tf.io.FixedLenFeature([], tf.string), "image/height": tf.io.FixedLenFeature([], tf.int64),
            "image/width": tf.io.FixedLenFeature([], tf.int64),
            **{key: tf.io.RaggedFeature(dtype, row_splits_dtype=tf.int64) for key, dtype in ragged.items()}}
    parsed = tf.io.parse_example(serialized, spec)
    sizes = tf.stack([parsed["image/height"], parsed["image/width"]], axis=1)
    height, width = tf.cast(tf.reduce_max(sizes[:, 0]), tf.int32), tf.cast(tf.reduce_max(sizes[:, 1]), tf.int32)
    images = tf.map_fn(lambda encoded: tf.image.pad_to_bounding_box(
        tf.io.decode_jpeg(encoded, channels=3, dct_method="INTEGER_ACCURATE"), 0, 0, height, width),
        parsed["image/encoded"], fn_output_signature=tf.TensorSpec([None, None, 3], tf.uint8))
    sides = [parsed[f"image/object/bbox/{side}"] for side in SIDES]
    boxes = tf.RaggedTensor.from_row_splits(tf.stack([side.flat_values for side in sides], axis=1),
                                            sides[0].row_splits, validate=False)
    scale = tf.cast(sizes, tf.float32) / tf.cast(tf.stack([height, width]), tf.float32)
    boxes = boxes * tf.tile(scale, [1, 2])[:, tf.newaxis, :]
    return {"image": images, "objects": boxes, "labels": parsed["image/object/class/label"],
            "text": parsed["image/object/class/text"], "is_crowd": parsed["image/object/is_crowd"],
            "area": parsed["image/object/area"], "image_id": parsed["image/source_id"],
            "filename": parsed["image/filename"], "height": parsed["image/height"], "width": parsed["image/width"]}


def _first_batches_alike(cases: dict) -> str:
    """Whether `tb.input_fn`'s and the sequential hand-written pipeline's first batch hold the
    generated module's values (images exact, boxes to 1e-6); the other hand-written pipelines
    parse as the sequential one does, in another order."""
    import tensorflow as tf

    def flat(value):
        return value.flat_values if isinstance(value, tf.RaggedTensor) else value

    reference = next(iter(cases[MODULE]()))
    for case in (LIBRARY, f"{HAND}, sequential"):
        batch = next(iter(cases[case]()))
        for name, value in reference.items():
            ours, theirs = flat(value).numpy(), flat(batch[name]).numpy()
            alike = (ours.shape == theirs.shape and (np.allclose(ours, theirs, atol=1e-6) if ours.dtype.kind == "f"
                                                      else (ours == theirs).all()))
            if not alike:
                raise RuntimeError(f"{case}: its first batch's {name} differs from the generated module's")
    return f"the first batch the same as the module's ({len(reference)} features): `tb.input_fn`, hand-written sequential"


def bench_read(info, count: int, repeats: int):
    """Steady and cold reads of the dataset `info` (a `tb.build` DatasetInfo of `count` records)."""
    import tfrecord_builder as tb

    module = import_module(os.path.join(info.path, f"{info.name}_input.py"))
    cases = {
        MODULE: lambda: module.input_fn("train", batch_size=BATCH_SIZE, shuffle=False),
        LIBRARY: lambda: tb.input_fn(info.path, "train", batch_size=BATCH_SIZE, shuffle=False),
        **hand_pipelines(files_of(info), BATCH_SIZE, parse_by_hand),
    }
    same = _first_batches_alike(cases)
    steady, cold = steady_and_cold(cases, (MODULE, LIBRARY), count, lambda batch: int(batch["image"].shape[0]),
                                   repeats)
    return steady, cold, same


def main() -> int:
    parser = argument_parser(__doc__, "--images", 5000, "images in the set (default 5,000)")
    arguments = parser.parse_args()
    out = os.path.join(arguments.out, "coco")
    count, small = arguments.images, max(1, arguments.images // 5)
    sets = {}
    for size in (small, count):
        folder = os.path.join(out, f"set-{size}")
        if not os.path.exists(os.path.join(folder, "instances.json")):
            shutil.rmtree(folder, ignore_errors=True)
            started = time.perf_counter()
            write_set(folder, size)
            print(f"wrote {size:,} images in {time.perf_counter() - started:.0f} s", flush=True)
        spec = os.path.join(folder, "spec.yaml")
        with open(spec, "w") as file:
            file.write(SPEC.format(json=os.path.join(folder, "instances.json"), images=os.path.join(folder, "images"),
                                   shards=SHARDS))
        sets[size] = (folder, spec)

    # the smaller build first: Linux carries a process's peak memory over fork and exec, so every
    # measured process is started from this one while it is still small (before `compare`)
    small_run = run(OURS, sets[small][1], os.path.join(out, "ours-small"))
    folder, spec = sets[count]
    rounds: dict[str, list[dict]] = {"api": [], "ours": [], "floor": [], "usual": []}
    for _ in range(arguments.repeats):  # interleaved: the machine's drift falls on all four
        rounds["floor"].append(run(FLOOR, os.path.join(folder, "images"), os.path.join(out, "floor"), str(SHARDS)))
        rounds["api"].append(run(OD_LOOP, os.path.join(folder, "instances.json"), os.path.join(folder, "images"),
                                 os.path.join(out, "api"), str(SHARDS)))
        rounds["ours"].append(run(OURS, spec, os.path.join(out, "ours")))
        # ours the way before one copy (sorted runs, then shards merged from them): what one copy gains
        rounds["usual"].append(run(OURS, spec, os.path.join(out, "usual"), env={"TFRECORD_BUILDER_ONE_COPY": "0"}))
    api, ours, floor, usual = (min(results, key=lambda result: result["seconds"])
                               for results in (rounds["api"], rounds["ours"], rounds["floor"], rounds["usual"]))
    same = compare(os.path.join(out, "ours", "coco_bench", "1.0.0"), os.path.join(out, "api"))
    speed = api["seconds"] / ours["seconds"]

    import tensorflow as tf  # noqa: F401  (before any read is timed)
    import tfrecord_builder as tb

    small_info = tb.load(os.path.join(out, "ours-small", "coco_bench", "1.0.0")).info
    steady, cold, read_same = bench_read(small_info, small, arguments.repeats)

    memory = ours["peak_kb"] / small_run["peak_kb"]
    json_path = os.path.join(folder, "instances.json")
    size = os.path.getsize(json_path)
    try:
        parse: dict[str, float] | None = {how: peak(json_path, how) / size
                                          for how in ("json.load", "coco, without segmentation")}
    except subprocess.CalledProcessError:  # the parse-memory measure failing leaves the rest of the report
        parse = None

    info = machine({"tensorflow": _version("tensorflow"), "pillow": _version("PIL")}, load_average=True)
    print(f"\nCOCO-style set: {count:,} JPEG photos ({_megabytes(os.path.join(folder, 'images')):.0f} MB), "
          f"{SHARDS} shards; {same}\n")
    print(markdown_table(["build", "images/s", "ratio", "time (s)", "peak memory"], ["---", "---:", "---:", "---:", "---:"], [
        ["Object Detection API's loop (create_coco_tf_record.py's way)", f"{count / api['seconds']:,.0f}", "1.00x",
         f"{api['seconds']:.1f}", f"{api['peak_kb'] / 1024:.0f} MiB"],
        ["the floor: each file read and written into 8 files, nothing else", f"{count / floor['seconds']:,.0f}",
         f"{api['seconds'] / floor['seconds']:.2f}x", f"{floor['seconds']:.2f}", f"{floor['peak_kb'] / 1024:.0f} MiB"],
        [f"ours, `builder: coco` ({os.cpu_count()} workers)", f"{count / ours['seconds']:,.0f}", f"{speed:.2f}x",
         f"{ours['seconds']:.1f}", f"{ours['peak_kb'] / 1024:.0f} MiB (workers {ours['workers_kb'] / 1024:.0f})"],
        ["ours, the usual path (TFRECORD_BUILDER_ONE_COPY=0: sorted runs, then a merge)", f"{count / usual['seconds']:,.0f}",
         f"{api['seconds'] / usual['seconds']:.2f}x", f"{usual['seconds']:.1f}",
         f"{usual['peak_kb'] / 1024:.0f} MiB (workers {usual['workers_kb'] / 1024:.0f})"],
    ]))
    print()
    print(markdown_table(["our build", "images", "peak memory", "largest worker", "time (s)"], ["---", "---:", "---:", "---:", "---:"], [
        ["smaller", f"{small:,}", f"{small_run['peak_kb'] / 1024:.0f} MiB", f"{small_run['workers_kb'] / 1024:.0f} MiB",
         f"{small_run['seconds']:.1f}"],
        ["larger", f"{count:,}", f"{ours['peak_kb'] / 1024:.0f} MiB", f"{ours['workers_kb'] / 1024:.0f} MiB",
         f"{ours['seconds']:.1f}"],
    ]))
    if parse is not None:
        print(f"\nThe JSON ({size / 1e6:.1f} MB): parse memory over its size, json.load {parse['json.load']:.2f}x, "
              f"builder: coco {parse['coco, without segmentation']:.2f}x")
    print(f"\nRead, {small:,} images in {SHARDS} shards, batches of {BATCH_SIZE}, steady epochs ({read_same}):\n")
    print(results_table(steady, "images", "best hand-written"))
    print("\nOne cold pass:\n")
    print(results_table(cold, "images", "best hand-written"))
    targets = [
        Target("COCO build, ours over the Object Detection API's loop", speed, SPEED_BAR, note="images/s"),
        Target(f"COCO build, peak memory at {count:,} over {small:,} images", memory, 1.25, at_least=False,
               note="peak resident memory of the build process"),
        *reading_targets("detection", steady, cold, MODULE, LIBRARY),
    ]
    print("\n" + targets_table(targets))
    print("\n" + machine_line(info))
    with open(os.path.join(arguments.out, "coco.json"), "w") as file:
        json.dump({"images": count, "shards": SHARDS, "same": same, "api": api, "ours": ours, "floor": floor,
                   "usual": usual,
                   "ours_small": small_run,
                   "json_bytes": size, "parse_over_size": parse, "machine": info,
                   "read": {"images": small, "batch_size": BATCH_SIZE, "checks": read_same,
                            "steady": [result.as_json() for result in steady],
                            "cold": [result.as_json() for result in cold]},
                   "targets": [target.as_json() for target in targets], "run": run_info()}, file, indent=2)
    return 0


def _version(module: str) -> str:
    return __import__(module).__version__


def _megabytes(folder: str) -> float:
    return sum(entry.stat().st_size for entry in os.scandir(folder)) / 1e6


if __name__ == "__main__":
    sys.exit(main())
