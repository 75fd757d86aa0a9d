"""A forked process (a warm worker) has a watchdog thread of its own: the parent's does not
survive the fork, and the deadlines of the child's reads are still kept."""

from __future__ import annotations

import multiprocessing
import multiprocessing.synchronize
import threading
import time

from kubectl_spark.kube.watchdog import Watchdog

WAIT = 30.0


def _in_child(dog: Watchdog, done: multiprocessing.synchronize.Event) -> None:
    acted = threading.Event()
    dog.watch(time.monotonic() - 1, acted.set)
    if acted.wait(WAIT):
        done.set()


def test_a_forked_process_has_a_watchdog_of_its_own() -> None:
    """The parent's thread does not survive the fork (a warm worker): the child starts one."""
    dog = Watchdog()
    started = threading.Event()
    dog.watch(time.monotonic() - 1, started.set)
    assert started.wait(WAIT)  # the parent's thread runs
    fork = multiprocessing.get_context("fork")
    done = fork.Event()
    child = fork.Process(target=_in_child, args=(dog, done))
    child.start()
    child.join(WAIT)
    assert done.is_set()
