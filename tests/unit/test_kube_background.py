"""Reads on daemon threads (``kube.background``): each call's outcome its future, in the order
given, never more threads at once than asked, and a call submitted after the threads went idle
still made."""

from __future__ import annotations

import threading
from functools import partial

import pytest

from kubectl_spark.kube.background import Background, in_background

WAIT = 30.0  # a bound for a hung test, never reached when it passes


def test_each_call_is_made_once_in_the_order_given_its_outcome_its_future() -> None:
    made: list[str] = []

    def call(key: str) -> str:
        made.append(key)
        if key == "bad":
            raise ValueError("refused")
        return key.upper()

    futures = in_background({k: partial(call, k) for k in ("a", "bad", "c")}, 1)
    assert futures["a"].result(WAIT) == "A"
    assert futures["c"].result(WAIT) == "C"
    with pytest.raises(ValueError, match="refused"):
        futures["bad"].result(WAIT)
    assert made == ["a", "bad", "c"]  # one thread: in the order given


def test_no_more_calls_run_at_once_than_workers_and_the_rest_wait_their_turn() -> None:
    pool = Background(2)
    release = threading.Event()
    started = threading.Semaphore(0)
    running = 0
    most = 0
    lock = threading.Lock()

    def call() -> None:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        started.release()
        release.wait(WAIT)
        with lock:
            running -= 1

    futures = [pool.submit(call) for _ in range(5)]
    assert started.acquire(timeout=WAIT) and started.acquire(timeout=WAIT)
    release.set()
    for future in futures:
        future.result(WAIT)
    assert most == 2


def test_a_call_submitted_once_the_threads_ended_is_made_too() -> None:
    pool = Background(1)
    assert pool.submit(lambda: 1).result(WAIT) == 1
    for thread in threading.enumerate():  # the first call's thread ends when nothing waits
        if thread.name == "kubectl-spark-read":
            thread.join(WAIT)
    assert pool.submit(lambda: 2).result(WAIT) == 2
