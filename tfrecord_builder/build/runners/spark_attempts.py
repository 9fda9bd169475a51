"""Attempts of a Spark job's tasks that lost to another (speculation's copies, a task run again
after its executor was lost): Spark ends a job at the first attempt of each task to succeed,
while the others run on until it stops them, and one may be writing its shard meanwhile. Spark's
runner (spark.py) runs the job that writes the shards in a job group of its own (`job_group`) and
waits for every attempt of it to end (`every_attempt_ended`) before the dataset is published."""
from __future__ import annotations

import contextlib
import time
from typing import Any, Iterator

# how long the driver waits, at most, for the attempts of a job's tasks that lost to end (Spark
# stops one in seconds; an executor lost is noticed within spark.network.timeout, 120 s)
ATTEMPTS_SECONDS = 300.0


@contextlib.contextmanager
def job_group(context: Any, group: str, description: str) -> Iterator[None]:
    """The block's Spark jobs in the job group `group`; a calling program's own group after it."""
    saved = {name: context.getLocalProperty(name) for name in _GROUP_PROPERTIES}
    context.setJobGroup(group, description)
    try:
        yield
    finally:
        for name, value in saved.items():
            context.setLocalProperty(name, value)


_GROUP_PROPERTIES = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")


def every_attempt_ended(context: Any, group: str, jobs: int) -> str | None:
    """Waits until every attempt of the tasks of `group`'s jobs (`jobs` of them, at least, were
    run) has ended, not only the attempt that won each task; what to say where one still runs
    after ATTEMPTS_SECONDS, else None.

    A job ends at the first attempt of each task to succeed, while the copies that lost
    (speculation's, or a task run again after its executor was lost) run on until Spark stops
    them (a Python worker only after its task poller's 2 s and spark.python.task.killTimeout):
    one may be writing its shard and its record in the manifest. Written after the driver has
    published the dataset and cleared the staging, that would be an object left in the user's
    bucket, or a file moved into the finished dataset. Spark ends an attempt of a Python task
    only once its Python worker has answered or gone (its reader waits for one or the other),
    so its writes are over then. The status store learns of jobs and attempts from Spark's
    listener bus, later than the job returns (later still on a busy machine), but in order: once
    it has the jobs' ends it has every attempt's start. A job or stage gone from it (there are too
    many to keep) ended long ago."""
    tracker = context.statusTracker()
    deadline = time.monotonic() + ATTEMPTS_SECONDS
    while time.monotonic() < deadline:
        found = [tracker.getJobInfo(job) for job in tracker.getJobIdsForGroup(group)]
        if len(found) >= jobs and all(job is None or job.status in ("SUCCEEDED", "FAILED") for job in found):
            stages = [tracker.getStageInfo(stage) for job in found if job is not None for stage in job.stageIds]
            if all(stage is None or stage.numActiveTasks == 0 for stage in stages):
                return None
        time.sleep(0.05)
    return (f"the Spark runner: an attempt of a task that lost to another still ran {ATTEMPTS_SECONDS:g} s after its "
            "job ended, and may write into the build's staging folder after the build")

