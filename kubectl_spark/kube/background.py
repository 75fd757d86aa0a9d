"""Reads made on daemon threads, each one's outcome a future.

Daemon threads, not an executor's: a command that ends early (an error, Ctrl-C) never waits
for a read still in flight, which an API server that stopped answering would make last as
long as the read's timeout, or for ever without one. The optional lists beside the pods
(``snapshot``) and the next page of a list (``paging``) are read this way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any


def in_background(calls: dict[str, Callable[[], Any]], workers: int) -> dict[str, Future[Any]]:
    """Each call's future, the calls made by ``workers`` daemon threads in the given order."""
    futures: dict[str, Future[Any]] = {key: Future() for key in calls}
    waiting = [(futures[key], call) for key, call in calls.items()]
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                if not waiting:
                    return
                future, call = waiting.pop(0)
            try:
                future.set_result(call())
            except BaseException as exc:  # noqa: BLE001 - raised by .result(), where one waits
                future.set_exception(exc)

    for _ in range(min(workers, len(calls))):
        threading.Thread(target=work, name="kubectl-spark-read", daemon=True).start()
    return futures
