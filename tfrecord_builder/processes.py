"""How the build starts its worker processes (encoding, and writing shards in parallel)."""
from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import tempfile
from typing import Any, Callable, Iterator

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


@contextlib.contextmanager
def stderr_held(replay: Callable[[BaseException], bool]) -> Iterator[None]:
    """This process's standard error (file descriptor 2, which worker processes it starts inherit)
    goes to a temporary file meanwhile; on an exception for which `replay(error)` is true, what was
    written there is written out after all.

    Beam's workers log a dozen INFO and WARNING lines each, which would drown the build's own."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        try:
            yield
        except BaseException as error:
            sys.stderr.flush()
            os.dup2(saved, 2)
            if replay(error):
                held.seek(0)
                os.write(2, held.read())
            raise
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
