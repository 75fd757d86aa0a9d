"""Reads made on daemon threads, each one's outcome a future.

Daemon threads, not an executor's: a command that ends early (an error, Ctrl-C) never waits
for a read still in flight, which an API server that stopped answering would make last as
long as the read's timeout, or for ever without one. The optional lists beside the pods
(``snapshot``), the next page of a list (``paging``) and the drivers' Spark UIs asked while
the pods are listed (``sparkapi.ViewReads``) are read this way.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from .watchdog import DEADLINES

# How often paced threads look at the process's CPU, and the share of one CPU under which the
# calls running are found waiting on their servers rather than computing.
TICK = 0.01
IDLE = 0.5


class Background:
    """Calls made in the order given by at most ``workers`` daemon threads at a time.

    Calls may come one by one, as what to read becomes known (a driver on a page just kept). A
    thread ends when nothing waits; one is started for a call while fewer than allowed run.

    ``first``: fewer threads allowed at first, for calls that mostly compute when their server
    is near, as a read of a driver's Spark UI through a nearby API server does: many at a time
    only take turns on the interpreter, and each hand-off costs CPU (docs/performance.md, "The
    drivers' Spark UIs read two at a time until they wait"). Every ``TICK`` while calls wait
    for a thread, the process's CPU since the last look says which it is: under ``IDLE`` of
    one CPU, the calls running wait on their servers (a distant cluster, a slow driver), and
    twice as many threads are allowed, up to ``workers``. ``cpu``, ``clock`` and ``schedule``
    (when to look next) are the process's CPU time, ``time.monotonic`` and the process's
    watchdog; a test drives them.
    """

    def __init__(
        self,
        workers: int,
        first: int | None = None,
        *,
        cpu: Callable[[], float] = time.process_time,
        clock: Callable[[], float] = time.monotonic,
        schedule: Callable[[float, Callable[[], None]], object] = DEADLINES.watch,
    ) -> None:
        self._workers = workers
        self._allowed = workers if first is None else max(1, min(first, workers))
        self._running = 0
        self._waiting: deque[tuple[Future[Any], Callable[[], Any]]] = deque()
        self._lock = threading.Lock()
        self._cpu = cpu
        self._clock = clock
        self._schedule = schedule
        self._looked: tuple[float, float] | None = None  # (cpu, clock) at the last look

    @property
    def allowed(self) -> int:
        """Threads that may run at once now."""
        return self._allowed

    def submit(self, call: Callable[[], Any]) -> Future[Any]:
        future: Future[Any] = Future()
        with self._lock:  # with ``_work``'s check for more: no call is left with no thread
            self._waiting.append((future, call))
            start = self._running < self._allowed
            if start:
                self._running += 1
            self._pace()
        if start:
            self._start()
        return future

    def _pace(self) -> None:
        """Under the lock: the next look at the CPU, while more threads may yet be allowed."""
        if self._looked is None and self._allowed < self._workers:
            self._looked = (self._cpu(), self._clock())
            self._schedule(self._looked[1] + TICK, self._look)

    def _look(self) -> None:
        """On the watchdog's thread: more threads if the calls running were waiting."""
        with self._lock:
            assert self._looked is not None
            cpu, since = self._looked
            self._looked = None
            if not self._waiting:
                return  # every call has its thread; the next call submitted looks again
            passed = self._clock() - since
            if passed > 0 and self._cpu() - cpu < IDLE * passed:
                self._allowed = min(self._workers, self._allowed * 2)
            starts = min(len(self._waiting), self._allowed - self._running)
            self._running += starts
            self._pace()
        for _ in range(starts):
            self._start()

    def _start(self) -> None:
        threading.Thread(target=self._work, name="kubectl-spark-read", daemon=True).start()

    def _work(self) -> None:
        while True:
            with self._lock:
                if not self._waiting:
                    self._running -= 1
                    return
                future, call = self._waiting.popleft()
            try:
                future.set_result(call())
            except BaseException as exc:  # noqa: BLE001 - raised by .result(), where one waits
                future.set_exception(exc)


def in_background(calls: dict[str, Callable[[], Any]], workers: int) -> dict[str, Future[Any]]:
    """Each call's future, the calls made by ``workers`` daemon threads in the given order."""
    pool = Background(workers)
    return {key: pool.submit(call) for key, call in calls.items()}
