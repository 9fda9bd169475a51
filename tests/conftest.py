"""Shared fixtures: temporary datasets from spec text and data files, and module import. The
helpers test modules share are in tests/support/ (its __init__ says which is where)."""
from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "demo"))

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# the servers and disks of tests/support, fixtures every test can name: an S3 server (`s3`), a
# Cloud Storage emulator (`gcs`), a Spark cluster (`spark_master`), a small tmpfs (`small_disk`), a
# PostgreSQL server (`postgres`), the one Spark session of the run (`spark`); and the scheduling of
# `pytest -n 2 --dist loadgroup` (support/xdist_groups.py)
pytest_plugins = ["support.object_store", "support.small_disk", "support.spark_cluster", "support.postgres_server",
                  "support.xdist_groups"]
# the fixtures that start a server or a cluster, and the marker (setup.cfg) a test using one must
# carry, so that `-m "not server"` (make test-fast) never starts one
MARKER_OF_FIXTURE = {"s3": "server", "gcs_server": "server", "spark_master": "spark", "postgres": "server"}

# Hypothesis on a machine that may be busy with other work: no deadline (a slow example is slow
# because the machine is, not the code), no health check that times data generation. Under CI
# (`make test` and .ci/run set it) the examples are the same every run, drawn from a seed of each
# test's own (derandomized), and no example database is read or written: a failure there fails
# again. Elsewhere the examples are drawn afresh and the ones that failed are kept in the clone's
# .hypothesis/ and tried first next time. A test's own @settings override these for what they name
# (one that lists suppressed health checks lists too_slow too).
SLOW_MACHINE = [HealthCheck.too_slow]
settings.register_profile("ci", deadline=None, suppress_health_check=SLOW_MACHINE, derandomize=True, database=None,
                          print_blob=True)
settings.register_profile("local", deadline=None, suppress_health_check=SLOW_MACHINE)
settings.load_profile("ci" if os.environ.get("CI", "").lower() not in ("", "0", "false") else "local")

# Raw values of every dtype, as a source gives them, for the round-trip property tests. float16
# and float64 are decoded through a cast, and TensorFlow's casts flush subnormals to zero: normal
# floats only there; float64 is stored as float32, so its values are float32-representable.
VALUES_BY_DTYPE = {
    "int64": st.integers(-(2**63), 2**63 - 1),
    "int32": st.integers(-(2**31), 2**31 - 1),
    "uint8": st.integers(0, 255),
    "bool": st.booleans(),
    "float32": st.floats(width=32, allow_nan=False, allow_infinity=False),
    "float16": st.floats(width=16, allow_nan=False, allow_infinity=False, allow_subnormal=False),
    "float64": st.floats(width=32, allow_nan=False, allow_infinity=False),  # subnormals too (exact_float64)
    "string": st.text(max_size=8),
    "bytes": st.text(max_size=8),
}


def pytest_collection_modifyitems(config, items):
    """Refuses the run when a test uses a server's fixture but lacks its marker (MARKER_OF_FIXTURE).
    The tests of the shared Spark session (the fixture `spark`) go last, one after another, in the
    xdist group "spark": one worker runs them all, on one session, which stops after the last
    (support/spark_cluster.py); every other test keeps its place, and its file is its group."""
    from support.spark_cluster import uses_session

    unmarked = [f"{item.nodeid}: uses the fixture `{fixture}`, so needs @pytest.mark.{marker}"
                for item in items for fixture, marker in MARKER_OF_FIXTURE.items()
                if fixture in getattr(item, "fixturenames", ()) and item.get_closest_marker(marker) is None]
    if unmarked:
        raise pytest.UsageError("\n".join(unmarked))
    on_session = [item for item in items if uses_session(item)]
    for item in on_session:
        item.add_marker(pytest.mark.xdist_group("spark"))
    items[:] = [item for item in items if not uses_session(item)] + on_session


@pytest.fixture(scope="session", autouse=True)
def temporary_folder_of_its_own(tmp_path_factory):
    """The temporary folder (TMPDIR) of this test process and of the processes it starts: a folder
    of its own below pytest's. Two test runs at once on one machine (two clones) would otherwise
    share what is made under a fixed name in /tmp: a build into a URL puts the dataset together in
    a folder named for the URL and its endpoint (`/tmp/tfrecord-builder-USER/...`), and both runs build into the same
    URLs on their own servers."""
    folder = tmp_path_factory.mktemp("tmp")
    saved = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(folder)
    tempfile.tempdir = None  # found again from TMPDIR
    yield folder
    if saved is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = saved
    tempfile.tempdir = None


@pytest.fixture(autouse=True)
def workers_at_once(monkeypatch):
    """A build asked for workers starts them after its first batch, as it does once its work runs
    past IN_PROCESS_SECONDS with PARALLEL_SECONDS of work ahead: the tests' small sources would
    otherwise all be encoded in the calling process, and the worker path would go untested
    (tests/build/test_encoding.py checks the default)."""
    from tfrecord_builder.build import encoding

    monkeypatch.setattr(encoding, "IN_PROCESS_SECONDS", 0.0)
    monkeypatch.setattr(encoding, "PARALLEL_SECONDS", 0.0)


@pytest.fixture(scope="session")
def tf():
    """TensorFlow, imported once per test process."""
    from tfrecord_builder._tf import tensorflow

    return tensorflow()


def write_spec(folder: Path, spec: dict[str, Any] | str, files: dict[str, str | bytes] | None = None,
               name: str = "spec.yaml") -> Path:
    """Writes data files and a spec (a dict dumped as YAML, or YAML text) into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for file_name, content in (files or {}).items():
        path = folder / file_name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content) if content.startswith("\n") else content, encoding="utf-8")
    text = spec if isinstance(spec, str) else yaml.safe_dump(spec, sort_keys=False)
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def import_module(path: str | Path, name: str | None = None):
    """Imports a generated module from its file, as `import` would (registered in sys.modules)."""
    name = name or f"generated_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, str(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def batches_as_numpy(dataset) -> list[Any]:
    """Every element of a tf.data.Dataset with tensors (dense or ragged) turned into NumPy / lists."""
    import tensorflow as tf

    def convert(value):
        if isinstance(value, dict):
            return {key: convert(item) for key, item in value.items()}
        if isinstance(value, tuple):
            return tuple(convert(item) for item in value)
        if isinstance(value, tf.RaggedTensor):
            return value.to_list()
        return value.numpy()

    return [convert(element) for element in dataset]
