"""A Spark standalone cluster on this machine for tests: a master on 127.0.0.1 and two workers,
each a JVM of its own on an address of its own (127.0.0.2, 127.0.0.3: Spark runs a speculative
copy of a task only on another host than the first attempt's), one core and 1 GiB each. Their
executors are more processes again, started by the workers, with their own Python workers. Two
test runs at once on one machine (two clones) each start their own cluster: every port is chosen
at bind time, and a worker registers only with the master it is given.

`spark`: the one SparkSession on that cluster every test that names it shares (its executors
start once: about 20 s on a busy machine), with what each test module needs set once for all.
The tests that name it run one after another in one test process (tests/conftest.py puts them
last, and in one xdist group: tests/support/xdist_groups.py), and the session stops after the last
of them, so no other test of the process finds a session active (a build with runner="spark"
would run on it). A test that kills a driver starts one of its own: the CLI in a subprocess."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

WORKERS = ("127.0.0.2", "127.0.0.3")
START_SECONDS = 300  # a bound for a cluster that doesn't start, not a measure: JVMs start slowly on a busy machine
MASTER_URL = re.compile(r"Starting Spark master at (spark://\S+)")
# ports: every one the system's choice at bind time (0), so two test runs on one machine (two
# clones) never pick the same: the master's RPC port (read back from its log), the master's and the
# workers' web UIs; the master's REST server for spark-submit (port 6066 by default) is off
OPTIONS = "-Dspark.master.rest.enabled=false"


def _daemon(home: str, folder: Path, name: str, *args: str) -> subprocess.Popen:
    log = open(folder / f"{name}.log", "wb")
    env = {**os.environ, "SPARK_HOME": home, "SPARK_LOG_DIR": str(folder), "SPARK_WORKER_DIR": str(folder / name),
           "PYSPARK_PYTHON": sys.executable, "SPARK_MASTER_OPTS": OPTIONS}
    return subprocess.Popen([os.path.join(home, "bin", "spark-class"), *args], stdout=log, stderr=subprocess.STDOUT,
                            env=env, start_new_session=True)


def _wait_for(started: list[subprocess.Popen], folder: Path, found: Callable[[str], Any]) -> Any:
    """What `found` finds in the master's log once it is there; the test fails if a daemon ends
    or START_SECONDS pass first."""
    deadline = time.monotonic() + START_SECONDS
    while not (value := found((folder / "master.log").read_text(errors="replace"))):
        if time.monotonic() > deadline or any(process.poll() is not None for process in started):
            pytest.fail(f"the Spark cluster didn't start: see {folder}")
        time.sleep(0.2)
    return value


@pytest.fixture(scope="session")
def spark_master(tmp_path_factory):
    """The URL of a standalone master with two registered workers; stopped after the tests."""
    pyspark = pytest.importorskip("pyspark")

    if shutil.which("java") is None:
        pytest.skip("Spark needs Java 17 or later (on PATH)")
    home = os.path.dirname(pyspark.__file__)
    folder = tmp_path_factory.mktemp("spark-cluster")
    started = [_daemon(home, folder, "master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                       "--port", "0", "--webui-port", "0")]
    try:
        master = _wait_for(started, folder, lambda log: (found := MASTER_URL.search(log)) and found.group(1))
        started += [_daemon(home, folder, f"worker-{host}", "org.apache.spark.deploy.worker.Worker", "--host", host,
                            "--cores", "1", "--memory", "1g", "--webui-port", "0", master)
                    for host in WORKERS]
        _wait_for(started, folder, lambda log: log.count("Registering worker") >= len(WORKERS))
        yield master
    finally:
        for process in reversed(started):
            process.terminate()
        for process in started:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()


def executors(session: Any) -> dict[int, str]:
    """The executor JVMs of `session`'s application running on this machine (other tests' and
    programs' may run too): their executor ids, by pid."""
    driver = f"@127.0.0.1:{session.sparkContext.getConf().get('spark.driver.port')}".encode()
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"org.apache.spark.executor.CoarseGrainedExecutorBackend" in command and any(
                    part.endswith(driver) for part in command):
                found[int(entry.name)] = command[command.index(b"--executor-id") + 1].decode()
    return found


SESSION = "spark"  # the fixture of the shared session: a test naming it is in the group of SESSION


def uses_session(item: pytest.Item | None) -> bool:
    return item is not None and SESSION in getattr(item, "fixturenames", ())


_STARTED: list[Any] = []  # the shared session, once started


@pytest.fixture(scope="session")
def spark_s3():
    """The S3 server the shared session's executors are pointed at (their environment is fixed
    when the session starts): a test module that writes there overrides `s3` with it."""
    from support.object_store import s3_server

    with s3_server() as env:
        yield env


@pytest.fixture(scope="session")
def spark(spark_master, spark_s3, tmp_path_factory):
    """The one session on the cluster (a master and two workers, each a JVM of its own), started
    once for every test that names it, with both executors up; stopped after the last of them."""
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (SparkSession.builder.master(spark_master).appName("tfrecord-builder tests")
               .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.executor.memory", "768m").config("spark.executorEnv.PYTHONPATH", os.pathsep.join(sys.path))
               # tests/builders/test_spark_table.py's tables (a static setting: fixed when the session starts)
               .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("warehouse")))
               .config("spark.executorEnv.AWS_ENDPOINT_URL", spark_s3["AWS_ENDPOINT_URL"])  # as a cluster's own
               .config("spark.executorEnv.AWS_ACCESS_KEY_ID", spark_s3["AWS_ACCESS_KEY_ID"])  # settings would
               .config("spark.executorEnv.AWS_SECRET_ACCESS_KEY", spark_s3["AWS_SECRET_ACCESS_KEY"])
               .config("spark.executorEnv.AWS_DEFAULT_REGION", spark_s3["AWS_DEFAULT_REGION"])
               # a request the S3 server holds (object_store.GATE) is held until Spark stops its
               # attempt, far longer on a busy machine than s3fs's read timeout (15 s), which would
               # send it again meanwhile: fsspec's own setting for every S3 filesystem made there
               .config("spark.executorEnv.FSSPEC_S3", json.dumps({"config_kwargs": {"read_timeout": 900}}))
               # every build on the session with speculation on: a task slower than 1.5x the median
               # of half its stage's gets a second attempt (on the other worker), both running at once
               .config("spark.speculation", "true").config("spark.speculation.interval", "100ms")
               .config("spark.speculation.multiplier", "1.5").config("spark.speculation.quantile", "0.5")
               .config("spark.speculation.minTaskRuntime", "500ms")
               .getOrCreate())
    _STARTED.append(session)
    deadline = time.monotonic() + 300  # a bound, not a measure: executors' JVMs start slowly on a busy machine
    while len(executors(session)) < 2 and time.monotonic() < deadline:  # the workers start them once the app is known
        time.sleep(0.1)
    yield session
    if not _stopped(session):
        session.stop()


def _stopped(session: Any) -> bool:
    return session.sparkContext._jsc is None


def pytest_runtest_setup(item):
    if uses_session(item) and _STARTED and _stopped(_STARTED[0]):
        pytest.fail("the shared Spark session stopped before this test: the tests naming `spark` must run one "
                    "after another (tests/conftest.py puts them together)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """The shared session stopped once the last test naming it is done (and its module's fixtures
    are), before any other test of the process runs."""
    yield
    if uses_session(item) and not uses_session(nextitem) and _STARTED and not _stopped(_STARTED[0]):
        _STARTED[0].stop()
