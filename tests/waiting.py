"""Waiting for something a server or a thread does, by the wall clock, with one bounded poll.

Only for what runs on its own time (a process, a watch thread, a real control plane); a
simulated cluster's time is driven by the test instead. On time-out the test fails naming
what it waited for.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest


def wait_until(
    condition: Callable[[], object],
    what: str | Callable[[], object] = "the condition",
    seconds: float = 15,
    every: float = 0.05,
) -> None:
    """Poll ``condition`` until it holds; ``what`` (or what it returns then) names the wait."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            said = what() if callable(what) else what
            pytest.fail(f"timed out after {seconds:g} s waiting for {said}")
        time.sleep(every)
