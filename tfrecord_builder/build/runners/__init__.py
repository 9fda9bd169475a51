"""Executors of a build's plan, each an implementation of the runner contract (contract.py) in a
module of its own: the local runner (processes on this machine), the Beam runner and the Spark
runner (both running the steps of steps.py).

They are chosen here, and only here: `RUNNERS` names each runner's class, imported only when the
runner is chosen (Beam's module imports apache_beam). A new engine is one more module and one
more line of the table.
"""
from __future__ import annotations

import importlib
import importlib.util
from typing import NamedTuple

from ...errors import UsageError
from ...processes import stderr_held
from .contract import Runner


class Implementation(NamedTuple):
    """Where a runner is, and the engine it needs installed (checked before its module is imported)."""

    path: str  # "module:class", the module relative to this package or absolute
    engine: str | None = None  # the package its module imports
    engine_name: str = ""  # the engine as the install hint names it (the extra is named for the runner)


RUNNERS: dict[str, Implementation] = {
    "local": Implementation(".local:LocalRunner"),
    "beam": Implementation(".beam:BeamRunner", "apache_beam", "Apache Beam"),
    "spark": Implementation(".spark:SparkRunner", "pyspark", "Apache Spark"),
}


def runner_names() -> tuple[str, ...]:
    """The runners `--runner` takes, the default first."""
    return tuple(RUNNERS)


def chosen_runner(name: str) -> Runner:
    """The runner called `name`. Raises UsageError for a name not in the table, or a runner whose
    engine isn't installed."""
    if not isinstance(name, str) or name not in RUNNERS:  # a list would be unhashable
        raise UsageError(f"runner: expected one of {', '.join(RUNNERS)}, received {name!r}")
    implementation = RUNNERS[name]
    if implementation.engine is not None and importlib.util.find_spec(implementation.engine) is None:
        raise UsageError(f"--runner {name} needs {implementation.engine_name}: install tfrecord-builder's `{name}` "
                         f"extra (pip install '.[{name}]' in a checkout; see docs/install.md)")
    module, _, attribute = implementation.path.partition(":")
    with stderr_held(lambda error: True):  # importing an engine may log warnings (Beam's about clients it lacks)
        return getattr(importlib.import_module(module, __package__), attribute)()
