"""The Spark session a build runs on, and what keeps its failures to one line: the calling
program's active session, else a new one (on `local[workers]` unless the runner's options name a
master), whose JVM logs into a file rather than over the build's lines (`LOG`); a master that
doesn't answer and places the executors don't see, refused before the job (`check_master`,
`check_visible`); and a failed job's reason in one line (`ours`, `spark_reason`). Spark's runner
(spark.py) runs its job on this session; nothing here knows the build's steps."""
from __future__ import annotations

import atexit
import os
import re
import socket
import sys
import tempfile
import warnings
from typing import Any

with warnings.catch_warnings():  # PySpark 4.3 warns of pandas 3 on import; the build uses no pandas of Spark's
    warnings.simplefilter("ignore", FutureWarning)
    from pyspark.sql import SparkSession

from ... import errors
from ...builders.sources import check_sources
from ...errors import SpecError, TFRecordBuilderError, UsageError
from ...processes import stderr_into
from ...spec.model import Spec
from ...write.naming import MARKER_FILE
from .contract import RunJob, RunnerOptions

APP_NAME = "tfrecord-builder"
MASTER_TIMEOUT_SECONDS = 5.0  # a master that hasn't accepted a connection by then is refused
_CONF_EXAMPLE = "spark.master=spark://host:7077"  # a runner option, as an error shows it


class SparkJobError(TFRecordBuilderError, RuntimeError):
    """The Spark job failed for a reason of Spark's (executors lost for good, memory, a master gone)."""

    exit_code = 1


def conf(options: RunnerOptions) -> dict[str, str]:
    """The runner's options as Spark's conf (`KEY=VALUE` each); UsageError for one without `=`."""
    return {key: value or "" for key, value in options.pairs(_CONF_EXAMPLE)}


def check_master(master: str, options: RunnerOptions) -> None:
    """Raises UsageError unless one of the masters `spark://host:port[,host:port]` accepts a
    connection (Spark itself would retry for a minute before it gives up)."""
    reasons = []
    for place in master.removeprefix("spark://").split(","):
        host, _, port = place.rpartition(":")
        try:
            socket.create_connection((host, int(port)), timeout=MASTER_TIMEOUT_SECONDS).close()
            return
        except ValueError:
            raise UsageError(f"{options.named} spark.master={master}: expected spark://HOST:PORT") from None
        except OSError as error:
            reasons.append(f"{place}: {error.strerror or error}")
    raise UsageError(f"{options.named} spark.master={master}: no Spark master answers ({'; '.join(reasons)}); "
                     "start it, or name the host and port it listens on (7077 unless set)")


class _Log:
    """Where the JVM of a session this process starts writes its standard error (Spark's INFO and
    WARN lines, its console progress): a file of the temporary directory, named in an error of
    Spark's and removed at exit otherwise."""

    path: str | None = None
    keep = False

    def open(self) -> Any:
        file = tempfile.NamedTemporaryFile(prefix="tfrecord-builder-spark-", suffix=".log", delete=False)
        self.path = file.name
        atexit.register(self._remove)
        return file

    def where(self) -> str:
        if self.path is None:
            return ""
        self.keep = True
        return f" (Spark's log: {self.path})"

    def _remove(self) -> None:
        if self.path is not None and not self.keep and os.path.exists(self.path):
            os.remove(self.path)


LOG = _Log()


def session(options: RunnerOptions, workers: int) -> SparkSession:
    """The calling program's active session, else a new one (on `local[workers]` unless the
    options name a master), whose JVM logs into `LOG` rather than over the build's lines. An
    active session on another master than the options name is refused (UsageError): a process has
    one session, and a build can't have the master it asks for."""
    active = SparkSession.getActiveSession()
    if active is not None:
        if type(active).__module__.startswith("pyspark.sql.connect"):
            raise UsageError("the active Spark session is a Spark Connect one (Databricks serverless or a shared "
                             "access mode cluster, `spark.remote`), which has no RDD API; the Spark runner needs a "
                             "classic session: a dedicated (single user) cluster, or `spark-submit`")
        master, running = conf(options).get("spark.master"), active.sparkContext.master
        if master is not None and master != running:  # getOrCreate would build on the active one, in silence
            raise UsageError(f"{options.named}: spark.master={master}: a Spark session is already active on "
                             f"{running}; stop it, or leave out spark.master to build on it")
        return active
    given = {"spark.ui.showConsoleProgress": "false", **conf(options)}
    # the executors' Python: this one (with the package and its dependencies) unless told otherwise
    # (PySpark reads PYSPARK_PYTHON as it makes the context; spark.pyspark.python is spark-submit's)
    python = given.pop("spark.pyspark.python", None) or os.environ.get("PYSPARK_PYTHON") or sys.executable
    os.environ["PYSPARK_PYTHON"] = python
    given["spark.pyspark.python"] = python
    builder = SparkSession.builder.appName(APP_NAME).master(given.pop("spark.master", f"local[{max(1, workers)}]"))
    for key, value in given.items():
        builder = builder.config(key, value)
    with LOG.open() as log, stderr_into(log):  # the JVM starts now, and keeps this standard error
        return builder.getOrCreate()


def check_visible(context: Any, spec: Spec, job: RunJob, sources_only: bool = False) -> None:
    """Raises UsageError where some executor doesn't see what it must: the sources (read there),
    and the staging folder where the shards go to one (not a bucket; `sources_only`: a pass that
    writes nothing, before the folder is made). On a cluster of other machines, a path of the
    driver's is neither. Looked for: the sources, the staging folder's marker."""
    marker = os.path.join(job.staging, MARKER_FILE) if job.shards == job.staging and not sources_only else None
    probes = max(2, context.defaultParallelism)
    unseen = set(context.parallelize(range(probes), probes).map(lambda _: _unseen(spec, marker))
                 .filter(lambda found: found is not None).collect())
    hosts = ", ".join(sorted({host for _, host, _ in unseen}))
    for kind, _, said in sorted(unseen):
        if kind == "source":
            raise UsageError(f"{said} on Spark's executors (on {hosts}), which read the sources themselves; give a "
                             "path every executor sees (the same on each) or an object-store URL")
        folder = os.path.dirname(job.staging)
        raise UsageError(f"{folder}: Spark's executors (on {hosts}) can't see this folder of the driver's machine; "
                         "build into a folder every executor shares (the same path on each), or into an object "
                         "store (s3://..., gs://...)")


def _unseen(spec: Spec, marker: str | None) -> tuple[str, str, str] | None:
    """On an executor: what of the build it doesn't see, (kind, host, what was said), or None."""
    host = socket.gethostname()
    try:
        check_sources(spec)
    except SpecError as error:
        return "source", host, str(error)
    if marker is not None and not os.path.exists(marker):
        return "folder", host, marker
    return None


def ours(error: Exception) -> Exception:
    """The error a Python worker raised, as its own class where it is one of ours (SpecError,
    DataError, ...), else as SparkJobError; either way one line."""
    reason = spark_reason(error)
    name, _, message = reason.partition(": ")
    found = getattr(errors, name.rpartition(".")[2], None) if name.startswith("tfrecord_builder.errors.") else None
    if isinstance(found, type) and issubclass(found, TFRecordBuilderError):
        return found(message)
    return SparkJobError(f"the Spark job failed: {reason}{LOG.where()}")


def spark_reason(error: Exception) -> str:
    """The first line of what failed a Spark job: a Python worker's exception where there is one."""
    java = getattr(error, "java_exception", None)
    text = str(java.toString()) if java is not None and hasattr(java, "toString") else str(error)
    if "Traceback (most recent call last)" in text:
        trace = text[text.index("Traceback (most recent call last)"):].split("\n\tat ")[0]
        lines = [line for line in trace.splitlines() if line.strip() and not line.startswith((" ", "\t"))]
        if len(lines) > 1:
            return lines[-1]
    first = text.strip().splitlines()[0] if text.strip() else type(error).__name__
    return re.sub(r"^org\.apache\.spark\.SparkException: ", "", first)
