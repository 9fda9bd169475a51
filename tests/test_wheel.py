"""`make wheel`: the package as a wheel in dist/, which is how it is installed where there is no
checkout (the package isn't on the package index): every module, the console script and the
extras, and a build run by the installed copy.

Built from a copy of the sources in tmp_path (setuptools builds in the source tree), by the
Makefile's own target."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT, write_spec
from tfrecord_builder.version import __version__

pytestmark = pytest.mark.slow  # a wheel built, and installed into an environment of its own


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    checkout = tmp_path_factory.mktemp("checkout")
    for name in ("Makefile", "setup.cfg", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, checkout / name)
    shutil.copytree(ROOT / "tfrecord_builder", checkout / "tfrecord_builder",
                    ignore=shutil.ignore_patterns("__pycache__"))
    made = subprocess.run(["make", "wheel", f"PYTHON={sys.executable}"], cwd=checkout, capture_output=True,
                          text=True, timeout=600)
    assert made.returncode == 0, made.stdout + made.stderr
    wheels = list((checkout / "dist").glob("*.whl"))
    assert [path.name for path in wheels] == [f"tfrecord_builder-{__version__}-py3-none-any.whl"]
    return wheels[0]


def test_the_wheel_holds_every_module_the_console_script_and_the_extras(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = f"tfrecord_builder-{__version__}.dist-info"
        metadata = archive.read(f"{info}/METADATA").decode()
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
    package = ROOT / "tfrecord_builder"
    modules = {str(path.relative_to(ROOT)) for path in package.rglob("*.py") if "__pycache__" not in path.parts}
    assert modules <= names and "tfrecord_builder/py.typed" in names
    assert "tfrecord-builder = tfrecord_builder.cli.main:main" in entry_points
    for extra, requirement in (("spark", "pyspark==4.3.0"), ("beam", "apache-beam>=2.60"), ("cpu", "tensorflow-cpu==2.21.0")):
        assert f"Provides-Extra: {extra}" in metadata
        assert f'Requires-Dist: {requirement}; extra == "{extra}"' in metadata


def test_the_installed_wheel_builds_a_dataset(wheel, tmp_path):
    target = tmp_path / "site"
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                                "--no-deps", "--target", str(target), str(wheel)], capture_output=True, text=True,
                               timeout=300)
    assert installed.returncode == 0, installed.stderr
    spec = write_spec(tmp_path / "spec", {"name": "wheeled", "source": {"builder": "csv", "path": "t.csv"},
                                          "features": {"x": {"dtype": "int64"}}},
                      {"t.csv": "x\n" + "".join(f"{row}\n" for row in range(10))})
    env = {**os.environ, "PYTHONPATH": str(target)}  # the installed copy, before any other (the dependencies are ours)
    where = subprocess.run([sys.executable, "-c", "import tfrecord_builder; print(tfrecord_builder.__file__)"],
                           capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert where.stdout.strip() == str(target / "tfrecord_builder" / "__init__.py"), where.stderr
    built = subprocess.run([sys.executable, "-m", "tfrecord_builder", "build", str(spec), "--output", str(tmp_path / "out")],
                           capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "out" / "wheeled" / "1.0.0" / "dataset_info.json").exists()
