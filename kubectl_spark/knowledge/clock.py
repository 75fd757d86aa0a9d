"""Clocks shared by the emulator and the simulator.

The emulator stamps objects (creationTimestamp, deletionTimestamp, event times) with the time of
an injected clock, so a simulated scenario on a manual clock produces the same timestamps on
every run, and a demo on a sped-up clock shows believable ages.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """Return the current time, timezone-aware, in UTC."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class ManualClock:
    """A clock that moves only when told to: deterministic tests and scenario playback."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> datetime:
        with self._lock:
            self._now += timedelta(seconds=seconds)
            return self._now


class ScaledClock:
    """Real time sped up by a factor, from a start in the past: the demo's clock.

    Started ``lead`` simulated seconds before the wall clock, it runs ``speed`` times faster
    until it has caught up, then at real speed, so the objects it stamps are never in the future
    (kubectl would print their AGE as ``<invalid>``). ``real`` is where real seconds come from:
    the monotonic clock, or a test's, which moves only when the test says (no test may
    depend on how fast a loaded machine schedules it).
    """

    def __init__(
        self,
        speed: float = 1.0,
        lead: float = 0.0,
        *,
        real: Callable[[], float] = time.monotonic,
    ) -> None:
        self.speed = speed
        self._real = real
        self._wall0 = datetime.now(UTC)
        self._start = self._wall0 - timedelta(seconds=lead)
        self._t0 = real()
        # Real seconds until it meets the wall clock: it gains (speed - 1) s on it each second,
        # so lead / (speed - 1). Switching at lead / speed (where it has run ``lead`` simulated
        # seconds but the wall clock has moved on too) jumped the clock forward by lead / speed:
        # 60 s in the demo, longer than a node's grace period, so every node flapped NotReady.
        self._catch_up = lead / (speed - 1) if speed > 1 else 0.0

    def now(self) -> datetime:
        real = self._real() - self._t0
        if real <= self._catch_up:
            return self._start + timedelta(seconds=real * self.speed)
        return self._wall0 + timedelta(seconds=real)
