"""One thread that ends the reads whose deadline passed, for every read of the process.

A read with a budget (``--request-timeout``, a Spark UI's five seconds) must end at its
deadline even when the server trickles bytes, which urllib3's per-read timeout never catches;
the read's socket is shut then (``answers.cut``). A ``threading.Timer`` a read did that at
the cost of a thread started and stopped each time, about 180 µs of CPU: more than a quarter
of what one request to a driver's Spark UI costs, and ``ls`` sends one to each running
driver. One daemon thread waits on the earliest deadline instead; a read done cancels its
entry, which is then dropped when it comes up.

A warm worker is a fork: threads do not survive it, so a forked child starts its own thread
(and takes a new lock, which the fork may have copied held).
"""

from __future__ import annotations

import heapq
import itertools
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(order=True)
class Watch:
    """A deadline (``time.monotonic()``) and what to do when it comes first."""

    end: float
    order: int
    act: Callable[[], None] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)


class Watchdog:
    def __init__(self) -> None:
        self._order = itertools.count()
        self._reset()
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        """No thread yet: at start, and in a fork (its parent's thread and reads are not its)."""
        self._wake = threading.Condition()  # a fork's copy may be held by a thread now gone
        self._due: list[Watch] = []
        self._running = False

    def watch(self, end: float, act: Callable[[], None]) -> Watch:
        """``act`` called on the watchdog's thread at ``end``, unless ``cancel`` came first."""
        entry = Watch(end, next(self._order), act)
        with self._wake:
            if not self._running:
                self._running = True
                threading.Thread(
                    target=self._run,
                    args=(self._wake, self._due),
                    name="kubectl-spark-deadlines",
                    daemon=True,
                ).start()
            heapq.heappush(self._due, entry)
            if self._due[0] is entry:
                self._wake.notify()
        return entry

    @staticmethod
    def cancel(entry: Watch) -> None:
        """No call for it any more (it may have been made already: the caller checks the clock).

        What it would have acted on is let go at once, not when its deadline comes up.
        """
        entry.cancelled = True
        entry.act = _nothing

    @staticmethod
    def _run(wake: threading.Condition, due: list[Watch]) -> None:
        while True:
            with wake:
                while due and due[0].cancelled:
                    heapq.heappop(due)
                if not due:
                    wake.wait()
                    continue
                left = due[0].end - time.monotonic()
                if left > 0:
                    wake.wait(left)
                    continue
                entry = heapq.heappop(due)
            if not entry.cancelled:
                entry.act()


def _nothing() -> None:
    pass


DEADLINES = Watchdog()
