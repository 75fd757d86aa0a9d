"""A switchable, seeded fault layer: the emulator misbehaving the ways real API servers do.

A profile gives each kind of fault a probability per request: 500/503 answers, 429 with
``Retry-After``, slow answers, connections dropped in the middle of a body, watch streams cut
without a final event, ``ERROR 410`` when a watch resumes, and continue tokens expiring (410
Expired on a page). The simulator's requests (its User-Agent) are spared, so the simulated
world keeps running while clients suffer. The random generator is seeded: a run can
be repeated exactly. ``counts`` says how many faults of each kind were injected.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class FaultProfile:
    seed: int = 0
    error_rate: float = 0.0  # 500 or 503
    throttle_rate: float = 0.0  # 429 Too Many Requests, Retry-After: retry_after
    retry_after: int = 1
    slow_rate: float = 0.0  # the answer waits slow_seconds
    slow_seconds: float = 1.0
    drop_rate: float = 0.0  # a list's connection closes mid-body
    watch_cut_seconds: float = 0.0  # watch streams end after this long, without a final event
    watch_gone_rate: float = 0.0  # a watch resuming from a resourceVersion gets ERROR 410
    expire_continue_rate: float = 0.0  # a page asked with a continue token gets 410 Expired
    max_faults: int = 0  # stop after this many faults (0: never)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FaultProfile:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown fault settings: {', '.join(sorted(unknown))}")
        return cls(**data)


SPARED_AGENT = "kubectl-spark-simulator"  # the simulator's User-Agent (sim/client.py)

PROFILES = {
    "none": FaultProfile(),
    # A bad day: about 5% of requests fail, watches are cut every few seconds.
    "flaky": FaultProfile(
        seed=1,
        error_rate=0.05,
        throttle_rate=0.02,
        slow_rate=0.02,
        drop_rate=0.02,
        watch_cut_seconds=5.0,
        watch_gone_rate=0.2,
        expire_continue_rate=0.2,
    ),
}


class Faults:
    def __init__(self, profile: FaultProfile | None = None) -> None:
        self.set(profile or FaultProfile())

    def set(self, profile: FaultProfile) -> None:
        self.profile = profile
        self.random = random.Random(profile.seed)
        self.counts: Counter[str] = Counter()

    @property
    def active(self) -> bool:
        p = self.profile
        exhausted = p.max_faults and sum(self.counts.values()) >= p.max_faults
        return not exhausted and any(
            (
                p.error_rate,
                p.throttle_rate,
                p.slow_rate,
                p.drop_rate,
                p.watch_cut_seconds,
                p.watch_gone_rate,
                p.expire_continue_rate,
            )
        )

    @staticmethod
    def spares(user_agent: str) -> bool:
        return user_agent.startswith(SPARED_AGENT)

    def _roll(self, kind: str, rate: float) -> bool:
        if rate > 0 and self.active and self.random.random() < rate:
            self.counts[kind] += 1
            return True
        return False

    def before(self, method: str, query: dict[str, str]) -> str | None:
        """The fault for a request about to be served, if any: a kind from ``counts``."""
        watching = query.get("watch") not in (None, "0", "false")
        if (
            method == "GET"
            and query.get("continue")
            and self._roll("expired-continue", self.profile.expire_continue_rate)
        ):
            return "expired-continue"
        if (
            watching
            and query.get("resourceVersion")
            and self._roll("watch-gone", self.profile.watch_gone_rate)
        ):
            return "watch-gone"
        if self._roll("throttle", self.profile.throttle_rate):
            return "throttle"
        if self._roll("error", self.profile.error_rate):
            return "error"
        if self._roll("slow", self.profile.slow_rate):
            return "slow"
        if method == "GET" and not watching and self._roll("drop", self.profile.drop_rate):
            return "drop"
        return None

    def watch_seconds(self, asked: float) -> float:
        """How long a watch may run: cut short (and counted) when the profile says so."""
        cut = self.profile.watch_cut_seconds
        if cut and self.active and cut < asked:
            self.counts["watch-cut"] += 1
            return cut
        return asked
