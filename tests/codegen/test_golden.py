"""The generated module's text is pinned by golden files (an Example spec, a SequenceExample spec
and an image spec), and each module is Python that imports only TensorFlow."""
from __future__ import annotations

import ast
import os

import pytest

import tfrecord_builder as tb
from tfrecord_builder.version import __version__

from conftest import ROOT

GOLDEN = ROOT / "tests" / "golden"
SPECS = {"reference": "/data/reference/2.1.0", "sequence": "/data/tagging/1.0.0", "images": "/data/photos/0.1.0"}


def render(name: str) -> str:
    text = tb.generate_module(GOLDEN / f"{name}.yaml", data_dir=SPECS[name])
    return text.replace(f"tfrecord_builder {__version__}", "tfrecord_builder VERSION")


@pytest.mark.parametrize("name", SPECS)
def test_generated_module_matches_the_golden_file(name):
    if os.environ.get("UPDATE_GOLDEN"):
        (GOLDEN / f"{name}_input.py").write_text(render(name))
    expected = (GOLDEN / f"{name}_input.py").read_text()
    assert render(name) == expected, "regenerate with UPDATE_GOLDEN=1 pytest tests/codegen and review the diff"


@pytest.mark.parametrize("name", SPECS)
def test_generated_module_is_valid_python_importing_only_tensorflow(name):
    text = render(name)
    compile(text, f"{name}_input.py", "exec")
    imports = sorted(line for line in text.splitlines() if line.startswith(("import ", "from ")))
    assert imports == ["import json", "import os", "import tensorflow as tf"]


@pytest.mark.parametrize("name", SPECS)
def test_the_module_is_the_reading_functions_verbatim_plus_literals(name):
    """Everything the spec contributes is a literal; the code is read/tfdata.py's, as written."""
    text = render(name)
    reading = (ROOT / "tfrecord_builder" / "read" / "tfdata.py").read_text()
    functions = [node for node in ast.parse(reading).body if isinstance(node, ast.FunctionDef)]
    for function in functions:
        assert ast.get_source_segment(reading, function) in text, function.name
    tree = ast.parse(text)
    spec_values = {node.targets[0].id: node.value for node in tree.body if isinstance(node, ast.Assign)
                   and node.targets[0].id in ("NAME", "VERSION", "DESCRIPTION", "SPEC_FILE", "DATA_DIR", "SPLITS",
                                              "CLASS_NAMES", "READING")}
    assert len(spec_values) == 8
    for value in spec_values.values():
        ast.literal_eval(value)  # raises unless a literal
    assert ast.literal_eval(spec_values["READING"]) == tb.load_spec(GOLDEN / f"{name}.yaml").reading()
