"""What a simulated kubelet runs: containers as processes with planned exits, and its node's state; the kubelet's timings."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

LEASE_RENEW_SECONDS = 10


# How long a container takes to exit on SIGTERM (a JVM's shutdown hooks); capped by the grace.
SIGTERM_EXIT_SECONDS = 2


CRASH_BACKOFF_BASE = 10


CRASH_BACKOFF_MAX = 300


@dataclass
class Container:
    name: str
    started: datetime
    restarts: int = 0
    exit_at: datetime | None = None
    exit_code: int = 0
    exit_reason: str = ""
    terminated: dict[str, Any] | None = None
    last_terminated: dict[str, Any] | None = None
    backoff_until: datetime | None = None


@dataclass
class Process:
    """A pod sandbox on the node and its containers: what `crictl ps` would show."""

    uid: str
    namespace: str
    name: str
    containers: dict[str, Container] = field(default_factory=dict)
    evicted: str | None = None  # the kubelet's eviction message, once decided
    terminating_since: datetime | None = None

    @property
    def alive(self) -> bool:
        return any(c.terminated is None for c in self.containers.values())


@dataclass
class NodeState:
    name: str
    status: str = "up"  # up, partitioned, down
    cpu: float = 8.0
    memory: float = 32 * 1024**3
    labels: dict[str, str] = field(default_factory=dict)
    processes: dict[str, Process] = field(default_factory=dict)
    last_lease: datetime | None = None
    rebooted: bool = False
    address: str = ""  # its InternalIP when set (a host network pod's IP is its node's)
