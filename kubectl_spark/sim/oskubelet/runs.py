"""What the OS kubelet keeps of each node, pod and container it runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from .network import PodAddress
from .runtime import ContainerProcess


@dataclass
class ContainerRun:
    name: str
    image: str
    process: ContainerProcess | None = None
    started: datetime | None = None
    restarts: int = 0
    terminated: dict[str, Any] | None = None
    last_terminated: dict[str, Any] | None = None
    backoff_until: float = 0.0


@dataclass
class PodRun:
    uid: str
    namespace: str
    name: str
    node: str
    address: PodAddress
    folder: Path
    containers: dict[str, ContainerRun] = field(default_factory=dict)
    stop_asked: float | None = None  # monotonic time SIGTERM was sent
    reported: dict[str, Any] | None = None

    def alive(self) -> bool:
        return any(c.process is not None and c.terminated is None for c in self.containers.values())


@dataclass
class NodeRun:
    name: str
    port: int
    state: str = "up"  # up, cut, down, frozen
    last_lease: float = 0.0
