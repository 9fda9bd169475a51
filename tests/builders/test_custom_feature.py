"""A feature type of one's own (builders/boxes.py): named by a spec as `file.py:Class`, or by an
installed package's entry point; built, checked, verified and read back like the built-in ones."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import tfrecord_builder as tb

from conftest import ROOT, batches_as_numpy, import_module, write_spec

ROWS = [json.loads(line) for line in (ROOT / "data" / "boxes.jsonl").read_text(encoding="utf-8").splitlines()]


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tfrecord_builder", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, **(env or {})}, timeout=300)


def test_the_example_feature_type_builds_verifies_and_reads_back(tf, tmp_path):
    built = _cli("build", "specs/boxes.yaml", "--output", str(tmp_path))
    assert built.returncode == 0, built.stderr
    folder = tmp_path / "boxes" / "1.0.0"
    assert _cli("verify", str(folder)).returncode == 0
    module = import_module(folder / "boxes_input.py")
    seen = {}
    for batches in (tb.input_fn(folder, "train", shuffle=False), module.input_fn("train", shuffle=False)):
        for features, labels in batches_as_numpy(batches):
            for index, identifier in enumerate(features["id"].tolist()):
                boxes = features["boxes"][index]
                assert np.asarray(boxes, np.float32).reshape(-1, 4).tolist() == \
                    np.asarray(ROWS[identifier]["boxes"], np.float32).reshape(-1, 4).tolist()
                assert labels[index] == ["cat", "dog"].index(ROWS[identifier]["label"])
                seen[identifier] = seen.get(identifier, 0) + 1
    assert len(seen) == 44 and set(seen.values()) == {2}  # every train record, from both readers
    info = json.loads((folder / "tfrecord_builder.json").read_text(encoding="utf-8"))
    assert info["spec"]["features"]["boxes"]["type"] == "../builders/boxes.py:Boxes"
    assert info["spec"]["features"]["boxes"]["min_size"] == 0.01


def test_a_box_its_type_refuses_stops_the_build_at_its_line(tmp_path):
    shutil.copy(ROOT / "builders" / "boxes.py", tmp_path / "boxes.py")
    rows = "".join(json.dumps(row) + "\n" for row in [
        {"id": 0, "boxes": [[0.1, 0.1, 0.5, 0.5]]},
        {"id": 1, "boxes": [[0.1, 0.1, 0.5, 0.5], [0.6, 0.2, 0.4, 0.9]]},  # upside down
    ])
    spec = write_spec(tmp_path, {"name": "b", "source": {"builder": "jsonl", "path": "rows.jsonl"},
                                 "features": {"boxes": {"type": "boxes.py:Boxes"}}}, {"rows.jsonl": rows})
    with pytest.raises(tb.DataError) as raised:
        tb.build(spec, output=tmp_path / "out")
    assert str(raised.value) == ("rows.jsonl, line 2: feature `boxes`: box 1 [0.6000000238418579, 0.20000000298023224, "
                                 "0.4000000059604645, 0.8999999761581421]: expected [ymin, xmin, ymax, xmax] in [0, 1] "
                                 "with ymin + 0 <= ymax and xmin + 0 <= xmax")
    assert not (tmp_path / "out" / "b" / "1.0.0").exists()


@pytest.mark.parametrize("declared, message", [
    ({"type": "nowhere.py:Boxes"}, "features.boxes.type: {folder}/nowhere.py not found"),
    ({"type": "boxes.py:Nothing"}, "features.boxes.type: module 'boxes.py' has no class 'Nothing'"),
    ({"type": "boxes.py:Boxes", "dtype": "int64"}, "features.boxes: boxes are float32 with shape [null, 4]; "
                                                    "leave `dtype` and `shape` out"),
    ({"type": "boxs"}, "features.boxes.type: unknown type 'boxs' (did you mean `boxes`?)"),
], ids=["no-file", "no-class", "wrong-dtype", "unknown"])
def test_a_feature_type_that_cannot_be_had_is_a_spec_error_at_its_line(tmp_path, declared, message):
    shutil.copy(ROOT / "builders" / "boxes.py", tmp_path / "boxes.py")
    spec = write_spec(tmp_path, {"name": "b", "source": {"builder": "jsonl", "path": "rows.jsonl"},
                                 "features": {"boxes": declared}}, {"rows.jsonl": "{}\n"})
    env = {"PYTHONPATH": str(_installed(tmp_path / "site"))} if declared["type"] == "boxs" else None
    done = _cli("validate", str(spec), env=env)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert message.format(folder=tmp_path) in done.stderr


def _installed(site):
    """A package that declares the example type in the `tfrecord_builder.features` entry-point
    group, as `pip install` would leave it: its module and its dist-info."""
    package = site / "box_types"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    shutil.copy(ROOT / "builders" / "boxes.py", package / "boxes.py")
    info = site / "box_types-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: box-types\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[tfrecord_builder.features]\nboxes = box_types.boxes:Boxes\n")
    return site


@pytest.mark.slow
def test_an_installed_package_offers_its_type_by_name(tmp_path):
    site = _installed(tmp_path / "site")
    rows = "".join(json.dumps({"id": index, "boxes": [[0.1, 0.2, 0.3, 0.4]] * index}) + "\n" for index in range(5))
    spec = write_spec(tmp_path, {"name": "b", "source": {"builder": "jsonl", "path": "rows.jsonl", "key": "id"},
                                 "features": {"id": {"dtype": "int64"}, "boxes": {"type": "boxes"}}},
                      {"rows.jsonl": rows})
    env = {"PYTHONPATH": str(site)}
    built = _cli("build", str(spec), "--output", str(tmp_path / "out"), env=env)
    assert built.returncode == 0, built.stderr
    shown = _cli("inspect", str(tmp_path / "out" / "b" / "1.0.0"), "--show", "5", env=env)
    assert shown.returncode == 0, shown.stderr
    assert "boxes: min 0.1, max 0.4" in shown.stdout and shown.stdout.count("example ") == 5
