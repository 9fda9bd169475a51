"""The code's own hygiene: pyflakes' checks (ruff's F rules: unused imports and variables, undefined
names, redefinitions) find nothing in the package or the tests, and no test module imports another
or edits `sys.path`: what test modules share lives in tests/support/ (or, for one test package,
beside its tests), imported by name."""
from __future__ import annotations

import ast
import subprocess
import sys

from conftest import ROOT

TESTS = ROOT / "tests"


def test_pyflakes_finds_nothing_in_the_package_or_the_tests():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--select", "F", "--no-cache", "--output-format",
                           "concise", "tfrecord_builder", "tests"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def _imported(node: ast.AST) -> list[str]:
    """The modules an import statement names (`.name` for a relative one), by their last part."""
    if isinstance(node, ast.Import):
        return [alias.name.rsplit(".", 1)[-1] for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.module:
            return [node.module.rsplit(".", 1)[-1]]
        return [alias.name for alias in node.names]  # from . import test_x
    return []


def _edits_sys_path(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("insert", "append", "extend")
            and ast.unparse(node.func.value) == "sys.path")


def test_no_test_module_imports_another_or_edits_sys_path():
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        name = path.relative_to(ROOT)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            found += [f"{name}:{node.lineno}: imports {module}" for module in _imported(node)
                      if module.startswith("test_")]
            if _edits_sys_path(node) and path != TESTS / "conftest.py":  # conftest: demo/ for the demo's tests
                found.append(f"{name}:{node.lineno}: edits sys.path")
    assert not found, "move what is shared into tests/support/:\n" + "\n".join(found)


def test_test_modules_outside_packages_have_names_of_their_own():
    """pytest imports a test module of a folder without `__init__.py` by its file name alone, so
    two such files of one name can't run in one process: the second is an "import file mismatch"
    error, or, in a run of other files, passes unnoticed until they meet."""
    seen: dict[str, list[str]] = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        if not (path.parent / "__init__.py").exists():
            seen.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    assert {name: paths for name, paths in seen.items() if len(paths) > 1} == {}
