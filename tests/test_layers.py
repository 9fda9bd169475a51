"""The package's layers: each part imports only the parts below it, and no module imports itself
back through others. The folders are the architecture:

    the core: errors  <- atomic  <- fs, optional, pandas_probe, processes, progress, registry, sizes, version, _tf,
              tfds_refusal
    <- media (images: Pillow, libjpeg-turbo; audio: libsndfile, FFmpeg; video: PyAV)  <- text (the
       tokenizers: Hugging Face tokenizers, SentencePiece; files opened by media.source)  <- spec.fields (declared fields)
    <- features (the feature types)
    <- spec (the model, loading)  <- codec (the wire format)  <- write (the on-disk layout)
    <- read/: tfdata (the reading functions generated modules copy), numpy_decoding  <- records, torch_dataset
       <- report (a dataset's page)  <- dataset (tb.read)
    / codegen (the module's text and its file)
    <- builders (the sources)
    <- build/: encode_batch  <- encoding  <- plan  <- vocabulary  <- metadata  <- runners/ (the contract and the engines)
       <- run (tb.build), dry_run
    <- tools/: verify / infer / diff  <- generate
    <- cli

read/ and build/ never import tools/, and read/ never imports build/. Imports made inside a
function count too: a lazy import is still a dependency, and two modules that import each other
that way are one job split in two.

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
    {"atomic"},  # files written whole or not at all (fs writes through it)
    {"fs", "optional", "pandas_probe", "processes", "progress", "registry", "sizes", "version", "_tf",
     "tfds_refusal"},  # the core
    {"build", "read", "tools"},  # the folders' own docstrings: they import nothing
    {"media"},  # media files opened one way (media.source) and decoded: images, audio, video
    {"text"},  # the tokenizers, their files opened as media files are
    {"spec.fields"},
    {"features"},
    {"spec"},
    {"codec"},
    {"write"},
    {"read.tfdata", "read.numpy_decoding"},  # the reading functions (TensorFlow), and their twin in NumPy
    {"read.records", "read.torch_dataset"},  # records as NumPy, no TensorFlow; as a torch Dataset
    {"read.report"},  # a page of a dataset: its statistics and records (Dataset.report shows it)
    {"read.dataset", "codegen"},  # side by side: neither imports the other
    {"builders"},
    {"build.encode_batch"},  # a batch's rows into records
    {"build.packing"},  # a batch's records packed (the spec's pack:)
    {"build.encoding"},  # batches encoded in worker processes
    {"build.plan"},  # read tasks, statistics
    {"build.vocabulary"},  # a learned vocabulary: the train split's words counted, the tokenizer learned
    {"build.metadata"},  # a dataset's files besides its shards, written at the end of a build
    {"build.runners"},  # the engines that run the plan: this machine's processes, Apache Beam
    {"build.run", "build.dry_run"},
    {"tools.verify", "tools.infer", "tools.diff"},  # records checked, a spec from raw data, two versions compared
    {"tools.generate"},  # the module of a spec, with what its sources define, as a file
    {"cli"},
    {"__main__", ""},  # python -m tfrecord_builder, and the package's public names
]

FOLDERS = ("build", "read", "tools")


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _part(module: str) -> str:
    """The part of the package a module belongs to (`spec.fields`, with the YAML positions it
    reports errors at, is a part of its own; in build/, read/ and tools/ each module or folder is a
    part)."""
    if module in ("spec.fields", "spec.yaml_source"):
        return "spec.fields"
    if module.split(".", 1)[0] in FOLDERS:  # a folder of parts: build/, read/, tools/
        return ".".join(module.split(".")[:2])
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


def test_no_module_imports_itself_back():
    """No cycle of imports, at load time or later: an import inside a function counts too."""
    graph = _graph()
    known = set(graph)
    edges = {module: sorted({target if target in known else target.rsplit(".", 1)[0]
                             for target, _ in imports} & known - {module})
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


def _module_level(tree: ast.Module) -> list[ast.AST]:
    """The nodes that run when the module is imported: everything outside function bodies (a
    class body runs at import too)."""
    found, todo = [], list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        found.append(node)
        todo += list(ast.iter_child_nodes(node))
    return found


def _reads_environment(node: ast.AST) -> bool:
    """`os.environ.get(...)`, `os.environ[...]`, `... in os.environ` or `os.getenv(...)`.
    `os.environ.setdefault` is a write (a default for a library that reads it itself)."""
    def environ(value: ast.AST) -> bool:
        return isinstance(value, ast.Attribute) and value.attr == "environ"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return (environ(node.func.value) and node.func.attr in ("get", "copy", "items", "keys", "values")) \
            or node.func.attr == "getenv"
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        return environ(node.value)
    if isinstance(node, ast.Compare):
        return any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) and any(map(environ, node.comparators))
    return False


def test_no_environment_variable_is_read_at_import():
    """Settings from the environment are read when they are used: a value read at import is
    fixed before a test, a caller or a worker's start-up could set it."""
    read = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        read += [f"{_module(path)}:{node.lineno}" for node in _module_level(tree) if _reads_environment(node)]
    assert read == []


# fs.py knows local paths from URLs and does each thing both ways (open, join, write whole, ...);
# a module branches on fs.is_url only where the difference is its point
IS_URL_ALLOWED = {
    "build.run": "a dataset bound for a store is put together here and published by copying (a store has no rename)",
    "build.runners.beam": "Dataflow's workers reach only a store; a store's shards are written in place",
    "build.runners.spark": "a speculative copy's temporary file is looked for only in a folder, not a store",
    "read.dataset": "a dataset in a store is read through TensorFlow's filesystems, which input_fn reads it with",
    "codec.tfrecord": "a gzip shard in a store is read through its file object, closed with the stream",
    "builders.image_folder": "a store has no folders or links: its classes are prefixes, its images one listing",
    "write.info": "a store has no folders: a missing dataset there is a missing info file",
    "write.publish": "a store has no flock: a build's lock there is an object created only if absent",
    "cli.inspect": "in a store a folder is a prefix: what isn't a file is taken for a dataset",
    "tools.diff.sides": "in a store a folder is a prefix: what isn't a file is taken for a dataset",
    "tools.infer": "infer samples local files: a URL is refused",
    "builders.annotations": "a local image's size is a stat; a stored one's a request each, so its batches are cut by count",
    "builders.opened": "a worker reads its lines of a local file again at their place; a store's are read once, handed on",
}


def test_only_fs_tells_local_paths_from_urls_where_the_difference_is_not_the_point():
    found = sorted(_module(path) for path in PACKAGE.rglob("*.py")
                   if path.name != "fs.py" and "is_url" in path.read_text(encoding="utf-8"))
    assert [module for module in found if module not in IS_URL_ALLOWED] == []


def test_no_code_is_run_through_exec():
    """Code is loaded through the import system (a builder file too: registry's loader), so every
    module has its spec, its source lines and a name its classes pickle by."""
    assert [_module(path) for path in sorted(PACKAGE.rglob("*.py")) if {"exec", "eval"} & _calls(path)] == []


# A feature type answers for itself, through the hooks of features/base.py (its TFDS features,
# statistics, report card, classes, ...): code outside features/ never asks which concrete type a
# feature is, so a type of one's own is treated as the built-in ones are. What still does is
# listed here, by module, with why: shrink it, never grow it.
CONCRETE_TYPE_CHECKS_ALLOWED: dict[str, str] = {}
# `getattr(feature, "key", default)` reads a key some types have: the same question in disguise
# (found by the variable's name: `feature`, `image_feature`, `self.feature`...)
FEATURE_GETATTR_ALLOWED: dict[str, str] = {}


def _feature_types() -> set[str]:
    """The names of the classes features/ defines that extend `Feature` (directly or not)."""
    bases: dict[str, set[str]] = {}
    for path in sorted((PACKAGE / "features").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases[node.name] = {base.id if isinstance(base, ast.Name) else getattr(base, "attr", "")
                                    for base in node.bases}
    found = {"Feature"}
    while grown := {name for name, extends in bases.items() if extends & found} - found:
        found |= grown
    return found - {"Feature"}


def _named(node: ast.AST) -> set[str]:
    """The class names an isinstance's second argument (a name, `module.Name` or a tuple) gives."""
    if isinstance(node, ast.Tuple):
        return {name for item in node.elts for name in _named(item)}
    if isinstance(node, ast.Name):
        return {node.id}
    return {node.attr} if isinstance(node, ast.Attribute) else set()


def _outside_features() -> list[tuple[str, Path]]:
    return [(_module(path), path) for path in sorted(PACKAGE.rglob("*.py")) if _part(_module(path)) != "features"]


def test_no_code_outside_features_asks_which_concrete_feature_type_a_feature_is():
    types = _feature_types()
    assert {"TensorFeature", "ClassLabelFeature", "ImageFeature", "MaskFeature", "BBoxFeature", "KeypointsFeature",
            "AudioFeature", "VideoFeature"} <= types
    found = []
    for module, path in _outside_features():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            asked: set[str] = set()
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
                    "isinstance", "issubclass") and len(node.args) == 2:
                asked = _named(node.args[1])
            elif isinstance(node, ast.Compare) and isinstance(node.left, ast.Call) and \
                    isinstance(node.left.func, ast.Name) and node.left.func.id == "type":  # type(x) is X
                asked = {name for comparator in node.comparators for name in _named(comparator)}
            elif isinstance(node, ast.MatchClass):  # case ImageFeature(): ...
                asked = _named(node.cls)
            if asked & types:
                found.append(f"{module}:{node.lineno}: {', '.join(sorted(asked & types))}")
    assert sorted(line for line in found if line.split(":")[0] not in CONCRETE_TYPE_CHECKS_ALLOWED) == []


def test_no_code_outside_features_reads_a_feature_key_by_getattr():
    found = []
    for module, path in _outside_features():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
                    "getattr", "hasattr") and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) \
                    and isinstance(node.args[0], (ast.Name, ast.Attribute)):
                owner = node.args[0].id if isinstance(node.args[0], ast.Name) else node.args[0].attr
                if owner.endswith("feature"):  # (feature, image_feature, self.feature...)
                    found.append(f"{module}:{node.lineno}: {ast.unparse(node)}")
    assert sorted(line for line in found if line.split(":")[0] not in FEATURE_GETATTR_ALLOWED) == []


# the extras' libraries (and what they bring: pyiceberg pydantic, the ADBC driver polars,
# pyarrow.dataset pandas), which only the sources that read through them import (optional.py);
# TensorFlow only the reading side (_tf.py)
HEAVY = ("tensorflow", "duckdb", "adbc_driver_postgresql", "deltalake", "pyiceberg", "pydantic", "polars", "pandas",
         "pyarrow.dataset", "pyspark", "apache_beam", "datasets")


def test_the_package_and_a_command_that_reads_no_such_source_import_none_of_the_heavy_libraries(tmp_path):
    """`import tfrecord_builder` and `validate` in a fresh process load none of HEAVY: each costs
    start-up time in every command and in every worker process of every build."""
    import subprocess
    import sys

    spec = tmp_path / "spec.yaml"
    spec.write_text("name: s\nsource: {builder: csv, path: rows.csv}\nfeatures: {a: {dtype: int64}}\n")
    (tmp_path / "rows.csv").write_text("a\n1\n")
    code = ("import sys, tfrecord_builder\n"
            "from tfrecord_builder.cli.main import main\n"
            f"code = main(['validate', {str(spec)!r}])\n"
            f"print(sorted(name for name in {HEAVY!r} if name in sys.modules), code)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.stdout.splitlines()[-1] == "[] 0", done.stdout + done.stderr
