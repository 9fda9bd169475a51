"""The generated module's text is pinned by a golden file, and the module runs."""
from __future__ import annotations

import os

import tfrecord_builder as tb
from tfrecord_builder.version import __version__

from conftest import ROOT

GOLDEN = ROOT / "tests" / "golden"


def render():
    text = tb.generate_module(GOLDEN / "reference.yaml", data_dir="/data/reference/2.1.0")
    return text.replace(f"tfrecord_builder {__version__}", "tfrecord_builder VERSION")


def test_generated_module_matches_the_golden_file():
    if os.environ.get("UPDATE_GOLDEN"):
        (GOLDEN / "reference_input.py").write_text(render())
    expected = (GOLDEN / "reference_input.py").read_text()
    assert render() == expected, "regenerate with UPDATE_GOLDEN=1 pytest tests/codegen and review the diff"


def test_generated_module_is_valid_python_importing_only_tensorflow():
    text = render()
    compile(text, "reference_input.py", "exec")
    imports = sorted(line for line in text.splitlines() if line.startswith(("import ", "from ")))
    assert imports == ["import json", "import os", "import tensorflow as tf"]
