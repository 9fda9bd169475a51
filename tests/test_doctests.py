"""The `>>>` examples of the package's docstrings run, as written, in a folder holding what they
name: the repository's `specs/` and `data/`, the wine dataset built into `build/`, a spec with a
misspelt key (`bad.yaml`), one whose data has a bad value (`broken.yaml`) and an unfinished
dataset folder (`unfinished/wine/1.0.0`)."""
from __future__ import annotations

import dataclasses
import doctest
import importlib
import shutil
import warnings

import pytest

import tfrecord_builder as tb
from tfrecord_builder.features import base as FEATURE_TYPES_MODULE

from conftest import ROOT

MODULES = sorted({path.relative_to(ROOT).with_suffix("").as_posix().replace("/", ".").removesuffix(".__init__")
                  for path in (ROOT / "tfrecord_builder").rglob("*.py") if ">>>" in path.read_text(encoding="utf-8")})


@pytest.fixture(scope="module")
def examples_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("doctests")
    shutil.copytree(ROOT / "specs", folder / "specs")
    shutil.copytree(ROOT / "data", folder / "data", ignore=shutil.ignore_patterns("digits", "japanese_vowels"))
    wine = (ROOT / "specs" / "wine.yaml").read_text(encoding="utf-8")
    (folder / "bad.yaml").write_text(wine.replace("path: ../data/wine.csv", "path: data/wine.csv")
                                     .replace("alcohol:              {dtype: float32}",
                                              "alcohol:              {dtype: float32, shpe: [1]}"), encoding="utf-8")
    rows = (ROOT / "data" / "wine.csv").read_text(encoding="utf-8").splitlines()
    header = rows[0].split(",")
    cells = rows[15].split(",")
    cells[header.index("alcohol")] = "n/a"
    rows[15] = ",".join(cells)
    (folder / "broken.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (folder / "broken.yaml").write_text(wine.replace("path: ../data/wine.csv", "path: broken.csv"), encoding="utf-8")
    built = tb.build(folder / "specs" / "wine.yaml", output=folder / "build")
    shutil.copytree(built.path, folder / "unfinished" / "wine" / "1.0.0")
    (folder / "unfinished" / "wine" / "1.0.0" / "dataset_info.json").unlink()
    return folder


@pytest.mark.parametrize("name", MODULES)
def test_the_examples_in_docstrings_run(examples_folder, monkeypatch, name):
    monkeypatch.chdir(examples_folder)
    # an example registers a feature type: the process's registry (and the schema) stay as they were
    monkeypatch.setattr(FEATURE_TYPES_MODULE, "FEATURE_TYPES", dict(FEATURE_TYPES_MODULE.FEATURE_TYPES))
    module = importlib.import_module(name)
    globs = {**vars(module), "tb": tb, "warnings": warnings, "dataclasses": dataclasses}
    result = doctest.testmod(module, globs=globs, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                             report=True, verbose=False)
    assert result.attempted > 0 and result.failed == 0
