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

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Nests and restores: the collector runs again only if it ran before the outermost pause."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
