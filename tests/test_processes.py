"""The one way the package runs work in worker processes (processes.worker_pool)."""
from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

import pytest

from tfrecord_builder import processes
from tfrecord_builder.errors import DataError

_SET_UP_IN: int | None = None  # the process `_set_up` ran in


def _set_up() -> None:
    global _SET_UP_IN
    _SET_UP_IN = os.getpid()


def _describe(state: dict, item: int) -> tuple:
    time.sleep(0.05 * (3 - item) if item < 3 else 0)  # the first finish last: order kept regardless
    return item, state["scale"] * item, os.getpid(), _SET_UP_IN


def _death_signal(_: object, __: int) -> int:
    sig = ctypes.c_int()
    ctypes.CDLL(None, use_errno=True).prctl(2, ctypes.byref(sig))  # PR_GET_PDEATHSIG
    return sig.value


def _fail(_: object, item: int) -> int:
    if item == 2:
        raise DataError(f"record {item}: expected an int64, received 'x'")
    return item


def test_workers_hold_their_state_run_setup_once_and_return_in_order():
    with processes.worker_pool(2, {"scale": 10}, _set_up) as pool:
        results = list(pool.map(processes.in_worker(_describe), range(6)))
    assert [(item, value) for item, value, _, _ in results] == [(i, 10 * i) for i in range(6)]
    assert all(pid != os.getpid() and set_up == pid for _, _, pid, set_up in results)
    assert _SET_UP_IN is None  # not in this process


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_workers_die_with_their_parent():
    with processes.worker_pool(2) as pool:
        assert set(pool.map(processes.in_worker(_death_signal), range(4))) == {signal.SIGKILL}


def test_a_workers_error_is_raised_again_in_the_parent():
    with pytest.raises(DataError, match=r"^record 2: expected an int64, received 'x'$"):
        with processes.worker_pool(2) as pool:
            for item in pool.map(processes.in_worker(_fail), range(5)):
                assert item < 2
