"""A Spark standalone cluster on this machine for tests: a master on 127.0.0.1 and two workers,
each a JVM of its own on an address of its own (127.0.0.2, 127.0.0.3: Spark runs a speculative
copy of a task only on another host than the first attempt's), one core and 1 GiB each. Their
executors are more processes again, started by the workers, with their own Python workers. Two
test runs at once on one machine (two clones) each start their own cluster: every port is chosen
at bind time, and a worker registers only with the master it is given."""
from __future__ import annotations

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
    import pyspark

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
