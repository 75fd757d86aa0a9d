"""Pausing the cyclic garbage collector while large acyclic data is built.

Parsing a list of 50,000 pods and analyzing it allocate millions of dicts and lists; each
allocation burst sets off collections that walk every container object alive, which grows
with every page read — a third of ``ls``'s time at 50,000 pods. The API's JSON and the core's
answers hold no reference cycles, so nothing is left for a collection to find meanwhile.
Shared by the gateway (lists) and the core (analysis), which import nothing of each other. The
pause is process-wide: a TUI's background re-list pauses collection for its main thread too, for
as long as the list takes (seconds at 50,000 pods), which costs memory for a moment, nothing more.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn


class _Freezing:
    by_owner = False  # set by freeze_long_lived: the process keeps objects frozen on purpose


class _Pauses:
    """The pauses open in the whole process, and whether the collector ran before the first.

    The collector is one per process; its users are many threads.
    """

    lock = threading.Lock()
    open = 0
    collector_was_enabled = False
    per_thread = threading.local()


@contextmanager
def collector_paused() -> Iterator[None]:
    """Nests and restores, across threads.

    The collector runs again when the last open pause ends, and only if it ran before the first.

    What a thread's outermost pause allocated goes straight to the oldest generation
    (``gc.freeze`` then ``gc.unfreeze``, two list splices), even if another thread's pause
    began first. Left young, it would be walked whole by the first collection after the
    pause, a pass that finds nothing in acyclic data: a sixth of the core's time at 100,000
    pods. Cycles made meanwhile wait for the next full collection. A process that freezes
    objects on purpose (``freeze_long_lived``) is left as it is, since unfreezing would thaw
    them.
    """
    mine = _Pauses.per_thread
    depth = getattr(mine, "depth", 0)
    with _Pauses.lock:
        if _Pauses.open == 0:
            _Pauses.collector_was_enabled = gc.isenabled()
            gc.disable()
        _Pauses.open += 1
    mine.depth = depth + 1
    try:
        yield
    finally:
        mine.depth = depth
        with _Pauses.lock:
            _Pauses.open -= 1
            if _Pauses.collector_was_enabled:
                if depth == 0 and not _Freezing.by_owner:
                    gc.freeze()
                    gc.unfreeze()
                if _Pauses.open == 0:
                    gc.enable()


def freeze_long_lived() -> None:
    """Keep every object alive now out of all future collections (``gc.freeze``).

    For a long-running view that just built thousands of objects it will hold: collections
    then skip them, rather than walk them all (a pause the size of the cluster).
    """
    _Freezing.by_owner = True
    gc.freeze()


# What a one-shot command holds until its process ends (``hold_until_exit``).
_held: list[object] = []


def hold_until_exit(thing: object) -> None:
    """Keep ``thing`` alive until the process ends, which then frees nothing of it.

    A one-shot command's cluster view is a million objects at 50,000 pods: freeing them one by
    one when the command returned took 0.14 s after its output was written (a sixteenth of
    ``ls -A``), while the person waits for the prompt. The process's end gives the memory back
    to the system at once (``end_without_freeing``, and the warm worker's own end).
    """
    _held.append(thing)


def holding() -> bool:
    return bool(_held)


def end_without_freeing(code: int) -> NoReturn:
    """End the process now: stdio flushed, ``atexit``'s functions run, no object freed.

    How a warm worker ends (it must never run its server's interpreter teardown), and a
    reading command run cold that holds its view. Threads still running are not waited for:
    the reading commands leave only daemon threads.
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    with contextlib.suppress(Exception):
        atexit._run_exitfuncs()  # the kubernetes client's temporary files, logging
    os._exit(code)
