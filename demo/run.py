"""`make demo`: builds every spec in specs/ with the command line, then trains from the generated input_fn."""
from __future__ import annotations

import glob
import importlib.util
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import tfrecord_builder as tb  # noqa: E402

TRAINERS = {"wine": "tabular", "digits": "images", "japanese_vowels": "sequences", "coins": "detection",
            "spoken_digits": "audio", "clips": "video", "reviews": "text", "turkish_pos": "tagger"}
# data made on the machine before the specs that read it are built (not committed: see the scripts),
# by spec file
MADE = {"spoken_digits": ("data/make_spoken_digits.py", "build/spoken_digits_audio/clips.csv"),
        "reviews": ("data/make_text_demo.py", "build/reviews_text/reviews.csv"),
        "turkish_pos": ("data/make_text_demo.py", "build/turkish_pos_text/train.conllu")}
# built and trained after the others (issue 40's text demo)
LAST = ("reviews", "turkish_pos")


def main() -> int:
    output = os.path.join(ROOT, "build")
    for spec_path in sorted(glob.glob(os.path.join(ROOT, "specs", "*.yaml")), key=_order):
        script, made = MADE.get(_stem(spec_path), (None, None))
        if script is not None and not os.path.exists(os.path.join(ROOT, made)):
            subprocess.run([sys.executable, os.path.join(ROOT, script)], check=True)
        spec = tb.load_spec(spec_path)
        print(f"\n=== {spec.name}: tfrecord-builder build {os.path.relpath(spec_path, ROOT)} --overwrite")
        command = [sys.executable, "-m", "tfrecord_builder", "build", spec_path, "--output", output, "--overwrite"]
        subprocess.run(command, check=True)
        info = tb.load(os.path.join(output, spec.name, spec.version)).info
        module = _import(os.path.join(info.path, f"{spec.name}_input.py"))
        started = time.monotonic()
        result = _train(spec.name, module, info)
        if result is not None:
            print(f"{spec.name}: {result} from {spec.name}_input.input_fn ({time.monotonic() - started:.1f} s)")
    return 0


def _stem(spec_path: str) -> str:
    return os.path.splitext(os.path.basename(spec_path))[0]


def _order(spec_path: str) -> tuple[bool, str]:
    return _stem(spec_path) in LAST, _stem(spec_path)


def _train(name: str, module, info) -> str | None:
    """What training a small model from the dataset's generated module gave, said in words."""
    import train  # the demo's Keras helpers (imports TensorFlow, so only here)

    kind = TRAINERS.get(name)
    if kind == "detection":
        first, last = train.train_detection(module.input_fn, info)
        return (f"a small KerasHub RetinaNet's loss fell from {first:.1f} to {last:.1f} ({first / last:.1f}x) "
                "in 8 epochs")
    if kind == "tagger":
        accuracy = train.train_tagger(module.input_fn, info)
        return f"held-out tag accuracy {accuracy:.3f} (over the test sentences' words) after training a small BiGRU tagger"
    trainers = {"tabular": train.train_tabular, "images": train.train_images, "sequences": train.train_sequences,
                "audio": train.train_audio, "video": train.train_video, "text": train.train_text}
    if kind in trainers:
        accuracy = trainers[kind](module.input_fn, info)
        return f"validation accuracy {accuracy:.3f} after training a small Keras model"
    print(f"{name}: built; no demo model for it")
    return None


def _import(path: str):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as `import` does; autograph looks functions up there
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    sys.exit(main())
