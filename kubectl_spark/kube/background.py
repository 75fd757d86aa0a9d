"""Reads made on daemon threads, each one's outcome a future.

Daemon threads, not an executor's: a command that ends early (an error, Ctrl-C) never waits
for a read still in flight, which an API server that stopped answering would make last as
long as the read's timeout, or for ever without one. The optional lists beside the pods
(``snapshot``), the next page of a list (``paging``) and the drivers' Spark UIs asked while
the pods are listed (``sparkapi.ViewReads``) are read this way.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any


class Background:
    """Calls made in the order given by at most ``workers`` daemon threads at a time.

    Calls may come one by one, as what to read becomes known (a driver on a page just kept). A
    thread ends when nothing waits; one is started for a call while fewer than ``workers`` run.
    """

    def __init__(self, workers: int) -> None:
        self._workers = workers
        self._running = 0
        self._waiting: deque[tuple[Future[Any], Callable[[], Any]]] = deque()
        self._lock = threading.Lock()

    def submit(self, call: Callable[[], Any]) -> Future[Any]:
        future: Future[Any] = Future()
        with self._lock:  # with ``_work``'s check for more: no call is left with no thread
            self._waiting.append((future, call))
            start = self._running < self._workers
            if start:
                self._running += 1
        if start:
            threading.Thread(target=self._work, name="kubectl-spark-read", daemon=True).start()
        return future

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
