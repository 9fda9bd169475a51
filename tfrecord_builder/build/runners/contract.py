"""The runner contract: what a runner of the build's plan is given (`RunJob`), what it returns
(`RunResult`), and what it answers before the build starts (`Runner`).

A runner is one implementation of this protocol in a module of its own (build/runners/local.py,
build/runners/beam.py, build/runners/spark.py), named in the table of build/runners/__init__.py; build/run.py
knows only the protocol. Every runner writes the same shards, byte for byte, from the same plan (build/plan.py).
An engine's own options reach its runner as one record (`RunnerOptions`), however the user gave them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from ...errors import DataError, UsageError
from ...progress import Progress
from ...spec.model import Spec
from ...write.info import SplitInfo
from ...write.membership import KeptSplits

if TYPE_CHECKING:
    from ...builders.base import Builder
    from ...write.checkpoint import EncodingState
    from ..plan import ReadTask


@dataclass(frozen=True)
class RunnerOptions:
    """An engine's own options for one build, as the user gave them: `--runner-option KEY=VALUE`
    (`runner_options=`), or an old spelling of it (`--pipeline-options`, `--spark-conf`,
    `pipeline_options=`). Each engine reads them its way: Beam as its command-line flags, Spark
    as its session's conf.

    Attributes:
        given: the options in the order given: `KEY=VALUE` each, or with `flags`, Beam's own
            command-line flags as they are (`--runner=DataflowRunner`).
        named: the option as the user wrote it, which its errors name: `--runner-option`,
            `runner_options`, `--pipeline-options`, `pipeline_options` or `--spark-conf`.
        flags: whether `given` came as Beam's flags (`--pipeline-options`, `pipeline_options=`):
            Beam takes them as they are, Spark reads each as KEY=VALUE.
    """

    given: tuple[str, ...] = ()
    named: str = "runner_options"
    flags: bool = False

    @classmethod
    def of(cls, value: "list[str] | tuple[str, ...] | dict[str, Any] | RunnerOptions", named: str,
           flags: bool = False) -> "RunnerOptions":
        """The options a caller gave as `named`: a list of `KEY=VALUE` strings, or a dict (its
        values strings or numbers). Raises UsageError for anything else."""
        if isinstance(value, RunnerOptions):
            return value
        if isinstance(value, dict) and not flags:
            for key, item in value.items():
                if not isinstance(key, str) or isinstance(item, bool) or not isinstance(item, (str, int, float)):
                    raise UsageError(f"{named}: expected KEY: VALUE with a string key and a string or number value, "
                                     f"received {key!r}: {item!r}")
            return cls(tuple(f"{key}={item}" for key, item in value.items()), named, flags)
        if isinstance(value, (list, tuple)) and all(isinstance(option, str) for option in value):
            return cls(tuple(value), named, flags)
        shape = "a list of strings" if flags else "a list of KEY=VALUE strings or a dict"
        raise UsageError(f"{named}: expected {shape}, received {value!r}")

    def pairs(self, example: str, bare: bool = False) -> list[tuple[str, str | None]]:
        """The options as (KEY, VALUE), in the order given. Raises UsageError for one without `=`
        (`example` shows the form), unless `bare`, where KEY alone is (KEY, None): a flag."""
        found: list[tuple[str, str | None]] = []
        for option in self.given:
            key, equals, value = option.partition("=")
            if not key.strip() or not (equals or bare):
                raise UsageError(f"{self.named}: expected KEY=VALUE (e.g. {example}), received {option!r}")
            found.append((key.strip(), value.strip() if equals else None))
        return found


@dataclass
class RunJob:
    """Everything a runner is given to run the plan of one build."""

    spec: Spec  # with its source's columns and classes filled in
    tasks: list["ReadTask"]  # the plan's read tasks, in order
    builders: dict[str | None, "Builder"]  # by source split (a runner whose workers are elsewhere makes its own)
    staging: str  # this machine's staging folder: scratch files, checkpoints, and the shards unless `shards` differs
    shards: str  # where the shards go: `staging`, or a bucket's prefix (`Runner.shards_to_bucket`)
    build_id: str  # the build's fingerprint: finished shards and checkpoints are recorded under it
    kept: dict[str, dict]  # finished shards of an interrupted build kept (`write.manifest.finished_shards`)
    restored: "EncodingState | None"  # the checkpoint of an interrupted build (`Runner.checkpoints` only)
    workers: int  # processes (or the engine's workers) to use
    progress: Progress | None  # called with (phase, done, total or None)
    keep: KeptSplits | None = None  # an earlier version's splits to keep (--keep-splits)
    options: RunnerOptions = field(default_factory=RunnerOptions)  # the engine's own options, as given


@dataclass
class RunResult:
    """What running the plan made: the splits' shards, the statistics, the skipped records, how
    many different keys each split has (None: not counted), each split's seedless key hashes
    (write/membership.py) and how many records kept an earlier version's split (--keep-splits)."""

    splits: dict[str, SplitInfo]
    statistics: dict[str, Any]
    skipped: list[dict[str, str]]
    distinct: dict[str, int | None]
    notices: dict[str, int] = field(default_factory=dict)  # features/notices.py: by text, their counts
    members: dict[str, np.ndarray] = field(default_factory=dict)  # split -> its records' key hashes (write/membership.py)
    kept: int = 0  # records whose split an earlier version decided (--keep-splits)


@runtime_checkable
class Runner(Protocol):
    """An executor of the build's plan."""

    name: str  # as `--runner` takes it
    takes_options: bool  # whether it takes engine options (`--runner-option`, `runner_options`)
    checkpoints: bool  # whether it resumes from an encoding checkpoint (`RunJob.restored`)
    shards_to_bucket: bool  # for an output in a bucket: writes the shards there itself (its workers may be
    # other machines), rather than into the local staging folder, uploaded with the rest

    def check(self, spec: Spec, folder: str, options: RunnerOptions, workers: int) -> None:
        """Raises UsageError, before anything is made on disk, for options the engine refuses
        and for places (`folder`, the dataset's, or the sources) its workers can't reach."""

    def run(self, job: RunJob) -> RunResult:
        """Runs the plan: encodes every task's records and writes the shards into `job.shards`."""

    # Optional: `count_words(job) -> vocabulary.WordCounts`, a learned vocabulary's pass
    # (build/vocabulary.py: the words of the train split's texts, by feature, each task's counted by
    # `Steps.count_words` or its stage, and summed), run on the engine before `run`; a runner
    # without it has the pass run by this machine's processes (the local runner's).


def check_not_empty(spec: Spec, counts: dict[str, int], skipped: list[dict[str, str]]) -> None:
    """Raises DataError when no split has a record: the source has none, or every one was skipped."""
    if any(counts.values()):
        return
    source = spec.source.path or spec.source.builder
    if skipped:  # under on_error: skip
        first = skipped[0]
        raise DataError(f"{source}: every record was skipped ({len(skipped)}); the first: {first['reason']}")
    raise DataError(f"{source}: the source has no records")
