"""Reads on daemon threads (``kube.background``): each call's outcome its future, in the order
given, never more threads at once than asked, and a call submitted after the threads went idle
still made."""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial

import pytest

from kubectl_spark.kube import background
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


class _Driven:
    """The process's CPU, its clock and the watchdog, driven by the test."""

    def __init__(self) -> None:
        self.cpu = 0.0
        self.now = 0.0
        self.looks: list[tuple[float, Callable[[], None]]] = []

    def schedule(self, end: float, act: Callable[[], None]) -> None:
        self.looks.append((end, act))

    def look(self, cpu_spent: float) -> None:
        """The next look, when it is due, after ``cpu_spent`` seconds of the process's CPU."""
        end, act = self.looks.pop(0)
        self.cpu += cpu_spent
        self.now = end
        act()


def _blocked_calls(pool: Background, count: int) -> tuple[threading.Event, Callable[[int], int]]:
    """``count`` calls that wait for the event, and a wait for ``expected`` of them to start."""
    release = threading.Event()
    started = threading.Semaphore(0)
    seen = 0

    def call() -> None:
        started.release()
        release.wait(WAIT)

    def running(expected: int) -> int:
        nonlocal seen
        while seen < expected and started.acquire(timeout=WAIT):
            seen += 1
        return seen

    for _ in range(count):
        pool.submit(call)
    return release, running


def test_paced_threads_double_only_when_the_process_was_idle_while_calls_waited() -> None:
    driven = _Driven()
    pool = Background(
        8, 2, cpu=lambda: driven.cpu, clock=lambda: driven.now, schedule=driven.schedule
    )
    release, running = _blocked_calls(pool, 20)
    assert running(2) == 2 and pool.allowed == 2
    assert [end for end, _ in driven.looks] == [background.TICK]  # one look, a tick later
    driven.look(cpu_spent=background.TICK)  # the process busy all along: computing
    assert pool.allowed == 2
    driven.look(cpu_spent=background.TICK * background.IDLE * 0.9)  # idle: the calls wait
    assert pool.allowed == 4 and running(4) == 4
    driven.look(cpu_spent=0.0)
    assert pool.allowed == 8 and running(8) == 8
    assert driven.looks == []  # eight allowed: no more looks
    release.set()


def test_no_look_once_every_call_has_its_thread_and_none_unless_paced() -> None:
    driven = _Driven()
    pool = Background(
        8, 2, cpu=lambda: driven.cpu, clock=lambda: driven.now, schedule=driven.schedule
    )
    release, running = _blocked_calls(pool, 2)
    assert running(2) == 2
    driven.look(cpu_spent=0.0)  # idle, but nothing waits for a thread: nothing to start
    assert pool.allowed == 2 and driven.looks == []
    release.set()
    unpaced = Background(
        8, cpu=lambda: driven.cpu, clock=lambda: driven.now, schedule=driven.schedule
    )
    unpaced_release, unpaced_running = _blocked_calls(unpaced, 9)
    assert unpaced_running(8) == 8 and unpaced.allowed == 8 and driven.looks == []
    unpaced_release.set()
