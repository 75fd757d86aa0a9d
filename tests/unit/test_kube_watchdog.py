"""The process's one watchdog thread acts on each read's deadline in turn, never on a read that
ended first (a forked process has its own: tests/functional/test_watchdog_fork.py)."""

from __future__ import annotations

import threading
import time

from kubectl_spark.kube.watchdog import Watchdog

WAIT = 30.0  # only a machine that stalls that long fails these; none waits for a deadline


def test_a_passed_deadline_is_acted_on_and_a_later_one_is_not() -> None:
    dog = Watchdog()
    now = time.monotonic()
    later, due = threading.Event(), threading.Event()
    dog.watch(now + 3600, later.set)
    dog.watch(now - 1, due.set)
    assert due.wait(WAIT)
    assert not later.is_set()


def test_a_cancelled_watch_is_never_acted_on() -> None:
    """Deadlines come up in order: once the one after it acted, the cancelled one never will."""
    dog = Watchdog()
    now = time.monotonic()
    cancelled, after = threading.Event(), threading.Event()
    entry = dog.watch(now - 2, cancelled.set)
    Watchdog.cancel(entry)
    dog.watch(now - 1, after.set)
    assert after.wait(WAIT)
    assert not cancelled.is_set()


def test_an_earlier_deadline_wakes_the_watchdog_waiting_on_a_later_one() -> None:
    dog = Watchdog()
    now = time.monotonic()
    dog.watch(now + 3600, lambda: None)  # the thread now waits an hour on it
    due = threading.Event()
    dog.watch(now - 1, due.set)
    assert due.wait(WAIT)
