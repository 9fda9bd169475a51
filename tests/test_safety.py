"""Nothing from a spec runs: injection attempts through every string field leave the module inert."""
from __future__ import annotations

import ast
import subprocess
import sys

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfrecord_builder as tb
from tfrecord_builder.errors import SpecError

from conftest import write_spec

ATTACKS = [
    '"""; import os; os.system("touch PWNED"); """',
    "'''; __import__('os').system('touch PWNED'); '''",
    "\\n__import__('os').system('touch PWNED')\\n",
    "x'); __import__('os').system('touch PWNED'); ('",
    "{__import__('os').system('touch PWNED')}",
    "\u2028__import__('os').system('touch PWNED')",
    "#\nimport os; os.system('touch PWNED')",
]


def _spec(attack: str) -> dict:
    return {
        "name": "inert",
        "version": "1.0.0",
        "description": attack,
        "source": {"builder": "jsonl", "path": "data.jsonl"},
        "splits": {"train": 0.5, "test": 0.5},
        "features": {
            "x": {"dtype": "string", "key": attack, "description": attack, "source": "x", "default": attack},
            "y": {"type": "class_label", "names": [attack, "b"], "source": "y"},
        },
        "label": "y",
    }


@pytest.mark.parametrize("attack", ATTACKS)
def test_the_generated_module_is_inert(tmp_path, attack):
    path = write_spec(tmp_path, _spec(attack), {"data.jsonl": '{"x": "a", "y": "b"}\n{"x": "c", "y": "b"}\n'})
    text = tb.generate_module(path, data_dir=str(tmp_path / "data"))
    tree = ast.parse(text)
    calls = {node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
             for node in ast.walk(tree) if isinstance(node, ast.Call)}
    assert "system" not in calls and "__import__" not in calls
    imports = {alias.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
               for alias in node.names}
    assert imports == {"json", "os", "tensorflow"}
    # the attack text appears only inside string literals
    literals = [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    assert any(attack == value or attack in value for value in literals)
    # importing the module runs nothing: no file appears
    module_path = tmp_path / "inert_input.py"
    module_path.write_text(text)
    subprocess.run([sys.executable, "-c", f"import runpy; runpy.run_path({str(module_path)!r})"],
                   cwd=tmp_path, check=True, capture_output=True)
    assert not (tmp_path / "PWNED").exists()


def test_a_build_with_injection_attempts_runs_nothing_and_reads_back(tf, tmp_path):
    attack = ATTACKS[0]
    path = write_spec(tmp_path, _spec(attack), {"data.jsonl": '{"x": "a", "y": "b"}\n{"y": "b"}\n'})
    info = tb.build(path, output=tmp_path / "out", workers=1)
    values = [value for split in info.splits for features, _ in tb.input_fn(info.path, split, shuffle=False)
              for value in features["x"].numpy().tolist()]
    assert sorted(values) == sorted([b"a", attack.encode()])  # the missing value took the default
    assert not (tmp_path / "PWNED").exists() and not (tmp_path / "out" / "PWNED").exists()


@pytest.mark.parametrize("field, value, message", [
    ("name", "os; import sys", "name: expected an identifier"),
    ("version", "1.0/../../x", "version: expected a version such as 1.0.0"),
    ("features", {"x); import os; (": {"dtype": "int64"}}, "a feature name must be a Python identifier"),
    ("label", "__import__('os')", "label: expected the name of a feature"),
])
def test_fields_that_become_code_or_paths_are_refused(tmp_path, field, value, message):
    spec = {"name": "ok", "source": {"builder": "jsonl", "path": "d.jsonl"}, "features": {"x": {"dtype": "int64"}}}
    spec[field] = value
    with pytest.raises(SpecError, match=message.replace("(", r"\(")):
        tb.load_spec(write_spec(tmp_path, spec))


YAML_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
SPEC_KEYS = ["name", "version", "source", "features", "splits", "label", "output", "input", "format",
             "context", "sequence", "on_error", "description"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(SPEC_KEYS), YAML_VALUES, max_size=8))
def test_any_yaml_document_loads_or_fails_with_one_spec_error(tmp_path, document):
    path = tmp_path / "fuzz.yaml"
    path.write_text(yaml.safe_dump(document))
    try:
        tb.load_spec(path)
    except SpecError as error:
        text = str(error)
        assert text.startswith(str(path)) and "\n" not in text
    # anything else (TypeError, KeyError, ...) fails the test


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_any_bytes_load_or_fail_with_one_spec_error(tmp_path, data):
    path = tmp_path / "fuzz.yaml"
    path.write_bytes(data)
    try:
        tb.load_spec(path)
    except SpecError as error:
        assert "\n" not in str(error)
