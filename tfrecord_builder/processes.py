"""How the build starts its worker processes (encoding, merging runs, writing shards, verifying):
the one place a process pool is made."""
from __future__ import annotations

import contextlib
import ctypes
import functools
import multiprocessing
import os
import signal
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Iterator, TypeVar

R = TypeVar("R")

_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def can_fork() -> bool:
    """fork where there is one: it starts in milliseconds and, unlike spawn and forkserver, doesn't
    re-import the caller's main module (a script calling `tb.build` without a __main__ guard would
    otherwise run again in every worker), and a child sees its parent's memory without copying it.
    The workers run only NumPy, Arrow, Pillow and this package, not TensorFlow, so a caller's
    TensorFlow threads don't matter to them. (macOS offers fork, but its system libraries don't
    support it.)"""
    return "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin"


def context() -> Any:
    """The multiprocessing context the build's workers start in."""
    return multiprocessing.get_context("fork" if can_fork() else "spawn")


def allow_open_files(count: int) -> None:
    """Raises this process's limit of open files (up to the system's hard limit) to `count` and
    some to spare, should it be lower: a merge opens up to 128 runs at once, and macOS allows a
    process 256 files by default. Processes forked afterwards inherit it."""
    try:
        import resource
    except ImportError:  # Windows: no such limit to raise
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = count + 256  # the build's own files, sockets and libraries
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted if hard == resource.RLIM_INFINITY else min(wanted, hard), hard))


def die_with_parent(parent: int) -> None:
    """In a worker of the process `parent`: be killed when it dies (Linux).

    A build killed with SIGKILL would otherwise leave its workers finishing their batch or shard,
    holding the dataset's lock (they share its file) and writing into the staging folder that
    `--resume` is about to use."""
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


# What the worker process this is was given by the pool that started it (`worker_pool`'s
# `state`): the one place per-worker state is kept, read by the functions `in_worker` wraps
_STATE: Any = None


@contextlib.contextmanager
def worker_pool(workers: int, state: Any = None, setup: Callable[[], None] | None = None
                ) -> Iterator[ProcessPoolExecutor]:
    """A pool of `workers` processes, started as `context()` says, each of which dies with this
    process (`die_with_parent`), runs `setup()` once (e.g. drawing its own run names) and holds
    `state` for the functions `in_worker` wraps. Forked, a worker inherits `state` without a copy
    (held records, a spec); spawned, it gets a pickled copy once, not one per task.

    Results come back as the executor gives them (`map`: in order); a worker's exception is
    raised again here. On leaving with an error, tasks not yet started are cancelled."""
    pool = _executor(workers, state, setup)
    try:
        yield pool
    except BaseException:
        # the error stands, not a second one from the shutdown: a generator over the pool that an
        # error left suspended (a loop over its results raised) may be closed only at the
        # interpreter's exit, after concurrent.futures closed the pool's queues (EBADF)
        with contextlib.suppress(OSError):
            pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _executor(workers: int, state: Any, setup: Callable[[], None] | None) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(workers, mp_context=context(), initializer=_start_worker,
                               initargs=(os.getpid(), state, setup))


class SharedPool:
    """One `worker_pool` for the phases of a job, started by the first that wants one (`started`)
    and kept for the later ones (`running`), which then don't start processes again: a pool of 2
    took 35-50 ms to start and stop on 2 busy cores, a twentieth of a 200,000-row table's build.

    The workers hold the state the first phase gave them: a later phase's tasks must not need
    their own (a shard writer merging runs needs none). Leaving the `with` stops the pool (on an
    error, cancelling what hasn't started); so does `close`, after which `started` makes a new one.
    """

    def __init__(self) -> None:
        self.running: ProcessPoolExecutor | None = None

    def started(self, workers: int, state: Any = None, setup: Callable[[], None] | None = None
                ) -> ProcessPoolExecutor:
        """The pool: started now with `workers` processes, `state` and `setup` (`worker_pool`'s),
        unless it runs already."""
        if self.running is None:
            self.running = _executor(workers, state, setup)
        return self.running

    def close(self, cancel: bool = False) -> None:
        """Stops the pool (if started), once the tasks it began are done; `cancel`: the rest dropped."""
        if self.running is not None:
            running, self.running = self.running, None
            running.shutdown(wait=True, cancel_futures=cancel)

    def __enter__(self) -> "SharedPool":
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: object) -> None:
        self.close(cancel=kind is not None)


@contextlib.contextmanager
def pool_in(shared: SharedPool | None, workers: int, state: Any = None, setup: Callable[[], None] | None = None
            ) -> Iterator[ProcessPoolExecutor]:
    """A phase's pool: `shared`'s (started now if it isn't, and left running for a later phase), or
    without one a `worker_pool` of its own, stopped on leaving the `with`."""
    if shared is not None:
        yield shared.started(workers, state, setup)
        return
    with worker_pool(workers, state, setup) as pool:
        yield pool


def _start_worker(parent: int, state: Any, setup: Callable[[], None] | None) -> None:
    global _STATE
    die_with_parent(parent)
    if setup is not None:
        setup()
    _STATE = state


def in_worker(function: Callable[..., R]) -> Callable[..., R]:
    """`function(state, *args)` as a task of a `worker_pool`: called with the arguments of the
    task after the worker's state. (A module-level `function`, so it pickles by name.)"""
    return functools.partial(_with_state, function)


def _with_state(function: Callable[..., R], *args: Any) -> R:
    return function(_STATE, *args)


@contextlib.contextmanager
def stderr_into(file: Any) -> Iterator[None]:
    """This process's standard error (file descriptor 2, which processes it starts meanwhile
    inherit for good) goes to the open `file` meanwhile."""
    sys.stderr.flush()
    saved = os.dup(2)
    os.dup2(file.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


@contextlib.contextmanager
def stderr_held(replay: Callable[[BaseException], bool]) -> Iterator[None]:
    """This process's standard error goes to a temporary file meanwhile (`stderr_into`); on an
    exception for which `replay(error)` is true, what was written there is written out after all.

    Beam's workers log a dozen INFO and WARNING lines each, which would drown the build's own."""
    with tempfile.TemporaryFile() as held:
        try:
            with stderr_into(held):
                yield
        except BaseException as error:
            if replay(error):
                held.seek(0)
                os.write(2, held.read())
            raise
