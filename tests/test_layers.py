"""The package's layers: each part imports only the parts below it, and no module imports itself
back through others.

    errors  <- base (atomic, fs, processes, progress, registry, sizes, version, _tf, tfds_refusal)  <- images (Pillow, libjpeg-turbo)
    <- spec.fields (the declared-field machinery, spec.yaml_source)  <- features  <- spec (the model, loading)
    <- codec (the wire format)  <- write (the on-disk layout)  <- records (NumPy reading), torch_data  <- report
    <- read / verify / codegen
    <- builders  <- infer / diff  <- generate (the module as a file)  <- metadata (a dataset's files besides its shards)
    <- runner  <- build, dry_run  <- cli

Imports under `if TYPE_CHECKING:` are left out: they name types for annotations and import
nothing when the package runs.
"""
from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "tfrecord_builder"
LAYERS = [
    {"errors"},
    {"atomic", "fs", "processes", "progress", "registry", "sizes", "version", "_tf", "tfds_refusal"},
    {"images"},  # image files: Pillow and libjpeg-turbo
    {"spec.fields"},
    {"features"},
    {"spec"},
    {"codec"},
    {"write"},
    {"records", "torch_data"},  # records as NumPy, no TensorFlow; as a torch Dataset
    {"report"},  # a page of a dataset: its statistics and records (Dataset.report shows it)
    {"read", "verify", "codegen"},  # side by side: none imports another
    {"builders"},
    {"infer", "diff"},  # the tools: a spec from raw data, two versions compared
    {"generate"},
    {"metadata"},  # a dataset's files besides its shards, written at the end of a build
    {"runner"},
    {"build", "dry_run"},
    {"cli"},
    {"__main__", ""},  # python -m tfrecord_builder, and the package's public names
]


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _part(module: str) -> str:
    """The part of the package a module belongs to (`spec.fields`, with the YAML positions it
    reports errors at, is a part of its own)."""
    if module in ("spec.fields", "spec.yaml_source"):
        return "spec.fields"
    return module.split(".", 1)[0]


def _layer(module: str) -> int:
    part = _part(module)
    return next(index for index, parts in enumerate(LAYERS) if part in parts)


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(module imported, at the module's top level) for every import of the package in `path`."""
    module = _module(path)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {id(node) for block in ast.walk(tree) if isinstance(block, ast.If)
                   and isinstance(block.test, ast.Name) and block.test.id == "TYPE_CHECKING"
                   for node in ast.walk(block)}
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[:len(package) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
            names = [target] if node.module else [".".join(base + [alias.name]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tfrecord_builder"):
            names = [node.module.removeprefix("tfrecord_builder").lstrip(".")]
        elif isinstance(node, ast.Import):
            names = [alias.name.removeprefix("tfrecord_builder").lstrip(".") for alias in node.names
                     if alias.name.startswith("tfrecord_builder")]
        else:
            continue
        found += [(name, node in tree.body) for name in names]
    return found


def _graph() -> dict[str, list[tuple[str, bool]]]:
    return {_module(path): _imports(path) for path in sorted(PACKAGE.rglob("*.py"))}


def test_every_part_imports_only_the_layers_below_it():
    wrong = []
    for module, imports in _graph().items():
        for target, _ in imports:
            if _part(target) == _part(module):
                continue
            if _layer(target) >= _layer(module):
                wrong.append(f"{module} imports {target}")
    assert wrong == []


def test_no_module_imports_itself_back_at_load_time():
    graph = _graph()
    known = set(graph)
    edges = {module: sorted({target if target in known else target.rsplit(".", 1)[0]
                             for target, top in imports if top} & known - {module})
             for module, imports in graph.items()}
    state: dict[str, int] = {}
    cycles = []

    def visit(module: str, trail: list[str]) -> None:
        state[module] = 1
        for target in edges[module]:
            if state.get(target) == 1:
                cycles.append(" -> ".join(trail[trail.index(target):] + [target]))
            elif target not in state:
                visit(target, trail + [target])
        state[module] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def _calls(path: Path) -> set[str]:
    """`module.name` (or `.name`, on anything else) for every attribute called in `path`, and every
    bare name called."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value.id if isinstance(node.func.value, ast.Name) else ""
            found.add(f"{owner}.{node.func.attr}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            found.add(node.func.id)
    return found


def test_one_way_to_move_a_file_into_place_and_one_way_to_start_worker_processes():
    """Files are moved into place only by atomic.py (whose temporary names the clean-up after a
    killed build knows), and worker processes are started only by processes.py."""
    moves, pools = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        calls, module = _calls(path), _module(path)
        if module != "atomic":
            moves += [f"{module}: {call}" for call in sorted(calls & {"os.replace", "os.rename", "shutil.move"})]
        if module != "processes":
            pools += [f"{module}: {call}" for call in sorted(calls) if call.endswith(("ProcessPoolExecutor", ".Pool"))
                      or call == "Pool"]
    assert moves == []
    assert pools == []
