"""COCO JSON parse memory: peak memory over the file's size, `json.load` against `builder: coco`.

Run by hand (everything it writes goes under bench/out/, which git ignores):

    .venv/bin/python bench/coco_memory.py [--megabytes 100]

Writes a synthetic COCO instances JSON of about the given size, shaped as COCO's own (7 objects
an image, each with a polygon of 20-60 coordinates, 1 decimal), then in a fresh process each
measures the peak resident memory that parsing it adds (Linux: the peak `VmHWM`, reset
after the imports, less the resident memory before):

- `json.load`: the whole document as Python dicts and lists (what `create_coco_tf_record.py` and
  pycocotools' `COCO()` do first);
- `builder: coco` indexing the file as a build does (its images with their objects, packed into
  arrays as they are read), without and with `segmentation` kept (a spec that reads it).

The issue's bar: a 450 MB train JSON must not need 10x its size: the targets, `builder: coco`'s
parse (without and with `segmentation`) under PARSE_BAR times the file's size. Prints a Markdown
table and the targets and writes them as JSON to bench/out/coco_memory.json (`--out DIR`).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from harness import Target, machine, machine_line, run_info, targets_table  # noqa: E402

PARSE_BAR = 10.0  # the peak memory a parse adds over the file's size

MEASURE = """
import json, sys
sys.path.insert(0, {root!r})
from tfrecord_builder.builders import coco

def status(key):
    with open("/proc/self/status") as file:
        return next(int(line.split()[1]) * 1024 for line in file if line.startswith(key + ":"))

with open("/proc/self/clear_refs", "w") as file:
    file.write("5")  # the peak (VmHWM) starts again from here: the imports' own peak doesn't count
before = status("VmRSS")
if {how!r} == "json.load":
    with open({path!r}) as file:
        kept = json.load(file)
else:  # what a build's index does (CocoBuilder._indexed): the JSON streamed into packed arrays, then arranged
    images = coco.Images({path!r})
    annotations = coco.Annotations({path!r}, ("segmentation",) if {how!r} == "coco, with segmentation" else ())
    rest = coco.parse({path!r}, {{"images": images.add, "annotations": annotations.add}})
    kept = coco.arrange({path!r}, images, annotations, rest, False)
print(status("VmHWM") - before)
"""
WAYS = ["json.load", "coco, without segmentation", "coco, with segmentation"]


def write_coco(path: str, megabytes: float, seed: int = 0) -> int:
    """A COCO-shaped JSON of about `megabytes` MB at `path`; its size in bytes."""
    rng = random.Random(seed)
    target = megabytes * 1e6
    images, annotations, size = [], [], 0
    while size < target:
        image_id = len(images) + 1
        images.append({"license": 1, "file_name": f"{image_id:012d}.jpg", "coco_url": "", "height": 480,
                       "width": 640, "date_captured": "2013-11-14 16:28:13", "flickr_url": "", "id": image_id})
        size += 200
        for _ in range(7):
            x, y = rng.uniform(0, 500), rng.uniform(0, 350)
            polygon = [round(rng.uniform(0, 600), 1) for _ in range(rng.randrange(20, 61, 2))]
            annotation = {"segmentation": [polygon], "area": round(rng.uniform(10, 5e4), 2), "iscrowd": 0,
                          "image_id": image_id, "bbox": [round(x, 2), round(y, 2), 100.5, 80.25],
                          "category_id": rng.randrange(1, 91), "id": len(annotations) + 1}
            annotations.append(annotation)
            size += 130 + 6 * len(polygon)
    categories = [{"supercategory": "thing", "id": index, "name": f"class{index}"} for index in range(1, 91)]
    with open(path, "w") as file:
        json.dump({"info": {}, "licenses": [], "images": images, "annotations": annotations,
                   "categories": categories}, file, separators=(",", ":"))
    return os.path.getsize(path)


def peak(path: str, how: str) -> int:
    code = MEASURE.format(root=ROOT, path=path, how=how)
    return int(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--megabytes", type=float, default=100.0)
    parser.add_argument("--out", default=os.path.join(HERE, "out"), help="output folder (default bench/out)")
    arguments = parser.parse_args()
    out = arguments.out
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "coco_memory.json.data")
    size = write_coco(path, arguments.megabytes)
    results = {how: peak(path, how) for how in WAYS}
    print(f"COCO JSON of {size / 1e6:.1f} MB\n")
    print("| parse | peak memory added | over the file's size |\n| --- | ---: | ---: |")
    for how, added in results.items():
        print(f"| {how} | {added / 1e6:.0f} MB | {added / size:.2f}x |")
    targets = [Target(f"COCO JSON parse memory, `builder: coco` {how.removeprefix('coco, ')}", results[how] / size, PARSE_BAR,
                      at_least=False, note=f"peak memory the parse adds / the file's size ({size / 1e6:.0f} MB)")
               for how in WAYS[1:]]
    info = machine({}, load_average=True)
    print("\n" + targets_table(targets) + "\n\n" + machine_line(info))
    with open(os.path.join(out, "coco_memory.json"), "w") as file:
        json.dump({"megabytes": arguments.megabytes, "file_bytes": size, "peak_bytes": results, "machine": info,
                   "targets": [target.as_json() for target in targets], "run": run_info()}, file, indent=1)
    os.remove(path)


if __name__ == "__main__":
    main()
