"""What a DirectRunner job's workers, this machine's processes, do to it that Beam doesn't say in a
line: a worker that dies (Beam waits forever for the bundle it held: `watched_workers` fails the
job), and an OSError a worker raised (a full disk: `worker_os_error`). Beam's runner (beam.py)
runs its job under these; nothing here knows the build's steps."""
from __future__ import annotations

import contextlib
import os
import re
import signal
import threading
from typing import Any, Callable

from ...errors import TFRecordBuilderError


def watched_workers(job: Callable[[], None]) -> None:
    """Runs `job` (a DirectRunner job in this process), failing it with one line when one of its
    worker processes dies (killed, out of memory). Beam 2.77's FnApiRunner reports such a death
    only as an exception in the thread that started the process (`SubprocessSdkWorker.run` in
    runners/portability/local_job_service.py) and then waits forever for the bundle that worker
    held (`BundleManager._run_bundle`, fn_api_runner/fn_runner.py): so the job runs in a thread of
    its own, and when Beam reports a death the other workers are stopped and the build fails
    (its finished shards are in the manifest, for `--resume`)."""
    done = threading.Event()
    died: list[str] = []
    failed: list[BaseException] = []
    previous = threading.excepthook

    def reported(args: Any) -> None:
        if args.thread is not None and args.thread.name == "run_worker" and isinstance(args.exc_value, RuntimeError):
            died.append(str(args.exc_value))  # "Worker subprocess exited with return code 137"
            done.set()
        else:
            previous(args)

    def run() -> None:
        try:
            job()
        except BaseException as error:
            failed.append(error)
        finally:
            done.set()

    threading.excepthook = reported
    try:
        threading.Thread(target=run, name="beam-job", daemon=True).start()
        try:
            done.wait()
        except BaseException:  # Ctrl-C: the job's thread can't be stopped, its workers can
            _stop_workers()
            raise
        if died:  # the job's thread waits on for the dead worker: stop the others, so the process can end
            _stop_workers()
    finally:
        threading.excepthook = _without_channel_errors(previous) if died else previous
    if died:
        raise TFRecordBuilderError(f"a Beam worker process {_how_it_ended(died[0])} while the job ran; the "
                                   "DirectRunner doesn't retry: build again with --resume to keep the shards it finished")
    if failed:
        raise failed[0]


Hook = Callable[[threading.ExceptHookArgs], Any]  # threading.excepthook's type


def _without_channel_errors(hook: Hook) -> Hook:
    """`hook`, but silent on the gRPC errors Beam's data-channel threads raise once the job they
    served is abandoned: after a worker's death the job fails in one line, and those threads, which
    Beam leaves running, would print a traceback after it, whenever the dead channels time out."""
    def reported(args: threading.ExceptHookArgs) -> None:
        if not type(args.exc_value).__module__.startswith("grpc"):
            hook(args)
    return reported


def _how_it_ended(reported: str) -> str:
    """Beam's "Worker subprocess exited with return code N" in words: a signal by its name (N is
    the shell's 128 + signal, or Python's -signal), else the exit status."""
    code = reported.rpartition(" ")[2]
    if not code.lstrip("-").isdigit():
        return f"died ({reported})"
    number = -int(code) if int(code) < 0 else int(code) - 128
    try:
        return f"was killed ({signal.Signals(number).name})"
    except ValueError:
        return f"exited with status {code}"


def _stop_workers() -> None:
    """Kills the DirectRunner's worker processes and waits (a while) for Beam's threads that watch them."""
    for pid in _worker_processes():
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    for thread in threading.enumerate():
        if thread.name == "run_worker":
            thread.join(timeout=10)


def _worker_processes() -> list[int]:
    """The DirectRunner's worker processes (`sdk_worker_main`) this process started (Linux's /proc)."""
    parents: dict[int, int] = {}
    workers = []
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else []:
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as file:
                parents[int(entry.name)] = int(file.read().rpartition(")")[2].split()[1])
            with open(f"/proc/{entry.name}/cmdline", "rb") as file:
                if b"sdk_worker_main" in file.read():
                    workers.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    me = os.getpid()

    def ours(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == me:
                return True
        return False

    return [pid for pid in workers if ours(pid)]


def worker_os_error(error: Exception) -> OSError | None:
    """The OSError a worker raised, which Beam reports as the text of its traceback (`RuntimeError:
    OSError: [Errno 28] No space left on device: '/path' [while running 'Step']`); None if none.
    The last one the text shows: the error raised, after those it was raised from."""
    found = list(_OS_ERROR.finditer(str(error)))
    if not found:
        return None
    code, reason, path = found[-1].groups()
    return OSError(int(code), reason, path) if path else OSError(int(code), reason)


_OS_ERROR = re.compile(r"OSError: \[Errno (\d+)\] ([^:'\n\[]+?)(?:: '([^'\n]+)')?(?: \[while running|\n|$)")
