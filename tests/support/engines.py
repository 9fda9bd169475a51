"""The same build on two engines: the CLI in a process of its own (the main environment's Python
or the Beam environment's), and the sources the engine tests build on every runner (a table with
bad rows, sequences two ways, an image folder resized, photos passed through, a custom builder in
parts, a table big enough to kill mid-write). tests/build/test_beam.py, test_beam_faults.py, test_spark.py and
test_object_store.py compare their runners' datasets with the local runner's, byte for byte
(`support.reading.files_of`, `assert_same_files`)."""
from __future__ import annotations

import inspect
import json
import os
import random
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from conftest import ROOT, write_spec

# Beam lives in an environment of its own (`make test` makes .venv-beam): it caps protobuf and
# pyarrow below what TensorFlow takes, and a build's workers need no TensorFlow
BEAM_PYTHON = Path(os.environ.get("TFRECORD_BUILDER_BEAM_PYTHON", ROOT / ".venv-beam" / "bin" / "python"))
SMALL_TASKS = {"TFRECORD_BUILDER_TASK_BYTES": "20000"}  # many read tasks from small files


def run_in(python: Path | str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`python -m tfrecord_builder ARGS` from the checkout, `env` added to this process's."""
    return subprocess.run([str(python), "-m", "tfrecord_builder", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=ROOT, timeout=600)


def run_beam(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`ARGS --runner beam` in the Beam environment (a failure, saying how to make it, if there is none)."""
    if not BEAM_PYTHON.exists():
        pytest.fail(f"{BEAM_PYTHON}: no Beam environment; `make test` makes it (or set TFRECORD_BUILDER_BEAM_PYTHON)")
    return run_in(BEAM_PYTHON, *args, "--runner", "beam", env=env)


def table(rows: int, bad: tuple[int, ...] = (), quoted: bool = False) -> str:
    """A CSV of `rows` rows (`bad`: rows whose `y` isn't a number), and 39 of them repeated.
    `quoted`: each name quoted, some holding a comma, a doubled quote or a newline (a row of two
    lines), so that read tasks are cut where rows end, not lines."""
    generator = random.Random(7)
    lines = ["id,x,y,name,label"]
    for row in range(rows):
        y = "oops" if row in bad else str(generator.randint(-5, 5))
        x = f"{generator.random() * 100:.6f}"  # (drawn in this order: the rows are those tests count on)
        name = f"{generator.choice('abcde') * 3}{row % 37}"
        if quoted:
            name = '"' + name + (', a ""b""' if row % 7 == 0 else "") + (",\nc" if row % 11 == 0 else "") + '"'
        lines.append(f"{row},{x},{y},{name},{generator.choice(['cat', 'dog', 'bird'])}")
    lines += lines[1:40]  # rows repeated: equal keys, the same split
    return "\n".join(lines) + "\n"


def tabular(**output) -> dict:
    """The spec of `table`'s rows.csv in three splits, bad rows skipped (`output` added)."""
    return {"name": "rows", "source": {"builder": "csv", "path": "rows.csv"},
            "features": {"x": {"dtype": "float32"}, "y": {"dtype": "int64"}, "name": {"dtype": "string"},
                         "label": {"type": "class_label", "names": ["cat", "dog", "bird"]}},
            "splits": {"train": 0.7, "validation": 0.1, "test": 0.2}, "on_error": "skip",
            "output": {"shards": 3, **output}}


def sequence_sources() -> tuple[dict[str, dict], dict[str, str]]:
    """Two specs of the same 400 sequences, from JSON lines and from a long table (rows shuffled),
    and their files."""
    generator = random.Random(3)
    lines, rows = [], ["id,t,value,label"]
    for group in range(400):
        steps = [[round(generator.random(), 4), round(generator.random(), 4)] for _ in range(generator.randint(1, 9))]
        lines.append(json.dumps({"id": group, "frames": steps, "label": group % 3}))
        rows += [f"g{group},{t},{step[0]},{group % 3}" for t, step in enumerate(steps)]
    generator.shuffle(body := rows[1:])
    jsonl = {"name": "seq", "format": "sequence_example", "source": {"builder": "sequence_jsonl", "path": "seq.jsonl"},
             "context": {"id": {"dtype": "int64"}, "label": {"dtype": "int64"}},
             "sequence": {"frames": {"dtype": "float32", "shape": [2]}}, "output": {"shards": 2}}
    long = {"name": "long", "format": "sequence_example",
            "source": {"builder": "csv", "path": "long.csv", "group_by": "id", "order_by": "t"},
            "context": {"id": {"dtype": "string"}, "label": {"dtype": "int64"}},
            "sequence": {"value": {"dtype": "float32"}}, "output": {"shards": 2}}
    files = {"seq.jsonl": "\n".join(lines) + "\n", "long.csv": "\n".join([rows[0], *body]) + "\n"}
    return {"seq": jsonl, "long": long}, files


def shapes_spec(tmp_path: Path) -> Path:
    """60 PNGs of random pixels in three class folders, and a spec resizing them."""
    generator = np.random.default_rng(5)
    for index in range(60):
        folder = tmp_path / "images" / ["circle", "square", "star"][index % 3]
        folder.mkdir(parents=True, exist_ok=True)
        pixels = generator.integers(0, 255, (24 + index % 5, 20, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(folder / f"{index:03d}.png")
    return write_spec(tmp_path, {"name": "shapes", "source": {"builder": "image_folder", "path": "images"},
                                 "features": {"image": {"type": "image", "shape": [16, 16, 3], "resize": "stretch"},
                                              "label": {"type": "class_label"}},
                                 "splits": {"train": 0.75, "test": 0.25}, "output": {"shards": 2}})


def photos_spec(tmp_path: Path, output: dict, count: int = 40, bad: int | None = None, seed: int = 8,
                manifest: bool = False) -> Path:
    """`count` small JPEG photos (16x16, random pixels) in three class folders, the one numbered
    `bad` cut after its header, and a spec storing their bytes (`output` its output options): a
    source the build writes in one copy (build/runners/keyed.py). With `manifest`, the source is
    a CSV of the photos' paths and classes beside them (`image_manifest`), not the folder."""
    generator = np.random.default_rng(seed)
    rows = ["image,label\n"]
    for index in range(count):
        path = tmp_path / "photos" / f"class_{index % 3}" / f"photo_{index:03d}.jpg"
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(generator.integers(0, 256, (16, 16, 3), dtype=np.uint8)).save(path, quality=90)
        if index == bad:
            path.write_bytes(b"\xff\xd8\xff\xe0" + b"\x00" * 40)
        rows.append(f"class_{index % 3}/photo_{index:03d}.jpg,class_{index % 3}\n")
    features = {"image": {"type": "image", "encoding": "jpeg", "shape": [16, 16, 3]}, "label": {"type": "class_label"},
                "filename": {"dtype": "string"}}
    source = {"builder": "image_folder", "path": "photos"}
    if manifest:
        (tmp_path / "photos" / "photos.csv").write_text("".join(rows))
        source = {"builder": "image_manifest", "path": "photos/photos.csv"}
        features = {"image": features["image"], "label": {"type": "class_label", "names": ["class_0", "class_1", "class_2"]}}
    return write_spec(tmp_path, {"name": "photos", "source": source, "splits": {"train": 0.7, "test": 0.3},
                                 "label": "label", "output": output, "features": features})


PARTS_BUILDER = '''
import os
import tfrecord_builder as tb


class Parts(tb.Builder):
    """Records in parts of its own; each part notes the process that read it."""

    def tasks(self, split):
        if os.path.exists(os.path.join(os.path.dirname(self.path), "vanish")):
            os.remove(__file__)  # once loaded: Beam's workers get its text with the job
        return [(start, start + 50) for start in range(0, 400, 50)]

    def generate_task(self, split, task):
        with open(os.path.join(os.path.dirname(self.path), "readers.txt"), "a") as file:
            file.write(f"{os.getpid()}\\n")
        for number in range(*task):
            yield f"n{number % KEYS}", {"x": number, "y": [number] * (number % 4)}

    def generate(self, split):
        for task in self.tasks(split):
            yield from self.generate_task(split, task)
'''


def parts_spec(tmp_path: Path, keys: int, **output) -> Path:
    """A spec of PARTS_BUILDER's 400 records in 8 parts, with `keys` different keys."""
    code = PARTS_BUILDER.replace("KEYS", str(keys))
    return write_spec(tmp_path, {"name": "parts", "source": {"builder": "parts.py:Parts", "path": "anchor"},
                                 "features": {"x": {"dtype": "int64"}, "y": {"dtype": "int64", "shape": [None]}},
                                 "splits": {"train": 0.5, "test": 0.5}, "output": {"shards": 2, **output}},
                      {"parts.py": code, "anchor": ""})


def big_table(folder: Path, rows: int = 60000) -> Path:
    """A spec of `rows` rows of a CSV in 24 shards: long enough a build to be killed mid-write."""
    generator = random.Random(11)
    lines = ["id,x,label"] + [f"{row},{generator.random():.6f},{generator.choice(['cat', 'dog'])}" for row in range(rows)]
    spec = {"name": "rows", "source": {"builder": "csv", "path": "rows.csv"},
            "features": {"x": {"dtype": "float32"}, "label": {"type": "class_label", "names": ["cat", "dog"]}},
            "splits": {"train": 0.8, "test": 0.2}, "output": {"shards": 24}}
    return write_spec(folder, spec, {"rows.csv": "\n".join(lines) + "\n"})


def _parameters(function) -> list[str]:
    return list(inspect.signature(function).parameters)


def assert_chosen_runner(name: str, cls: type, flags: tuple[bool, bool, bool]) -> None:
    """The table's runner `name` is a `cls`, meets the contract (its methods' parameters too) and
    has these (takes_options, checkpoints, shards_to_bucket)."""
    from tfrecord_builder.build import runners
    from tfrecord_builder.build.runners.contract import Runner

    chosen = runners.chosen_runner(name)
    assert isinstance(chosen, cls) and isinstance(chosen, Runner)
    assert (chosen.name, chosen.takes_options, chosen.checkpoints, chosen.shards_to_bucket) == (name, *flags)
    for method in ("check", "run"):
        assert _parameters(getattr(cls, method)) == _parameters(getattr(Runner, method))


def stopped_before_metadata(monkeypatch, spec: Path, output: Path, **build) -> None:
    """A build of `spec` into `output` stopped after its shards were written, before its metadata
    (dataset_info.json): what `--resume` finishes. Stopped in-process, not killed: no clock decides
    where it stops. `build`: tb.build's other arguments (runner="spark"; workers=1 unless given)."""
    import importlib

    import tfrecord_builder as tb

    def stop(*args, **kwargs):
        raise KeyboardInterrupt
    with monkeypatch.context() as patched:
        patched.setattr(importlib.import_module("tfrecord_builder.build.run"), "write_metadata_files", stop)
        with pytest.raises(KeyboardInterrupt):
            tb.build(spec, output=output, **{"workers": 1, **build})
