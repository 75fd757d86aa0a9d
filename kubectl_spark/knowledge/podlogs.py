"""Container logs, as a kubelet keeps them.

The emulator serves them through ``pods/<name>/log``; on the real control plane the simulated
kubelets' HTTPS endpoint (sim.kubeletapi) does.

Keyed by pod UID, so a pod recreated under the same name starts with empty logs, and with a
``previous`` slot that a container restart rotates into (what ``kubectl logs -p`` reads).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from kubectl_spark.knowledge.times import parse_time


@dataclass
class ContainerLog:
    lines: list[tuple[datetime, str]] = field(default_factory=list)

    def text(
        self,
        *,
        tail: int | None = None,
        since: datetime | None = None,
        timestamps: bool = False,
        start: int = 0,
    ) -> str:
        lines = self.lines[start:]
        if since is not None:
            lines = [entry for entry in lines if entry[0] >= since]
        if tail is not None:
            lines = lines[-tail:] if tail > 0 else []
        if timestamps:
            return "".join(
                f"{t.strftime('%Y-%m-%dT%H:%M:%S.%f')}000Z {line}\n" for t, line in lines
            )
        return "".join(f"{line}\n" for _, line in lines)


@dataclass
class PodLogs:
    current: ContainerLog = field(default_factory=ContainerLog)
    previous: ContainerLog | None = None


@dataclass
class LogStore:
    logs: dict[tuple[str, str], PodLogs] = field(default_factory=dict)

    def get(self, uid: str, container: str) -> PodLogs | None:
        return self.logs.get((uid, container))

    def append(self, uid: str, container: str, text: str, now: datetime) -> None:
        entry = self.logs.setdefault((uid, container), PodLogs())
        for line in text.splitlines():
            entry.current.lines.append((now, line))

    def rotate(self, uid: str, container: str) -> None:
        """A container restarted: what it wrote becomes ``previous``."""
        entry = self.logs.setdefault((uid, container), PodLogs())
        entry.previous = entry.current
        entry.current = ContainerLog()

    def forget(self, uid: str) -> None:
        for key in [k for k in self.logs if k[0] == uid]:
            del self.logs[key]


@dataclass(frozen=True)
class LogQuery:
    """What a ``pods/<name>/log`` (or a kubelet's ``containerLogs``) request asks for."""

    tail: int | None
    since: datetime | None
    limit_bytes: int | None
    timestamps: bool

    @classmethod
    def parse(
        cls, query: dict[str, str], now: datetime, truthy: Callable[[str | None], bool]
    ) -> LogQuery:
        """Read the query; ValueError for a number that is not one (the caller's 400)."""
        tail = int(query["tailLines"]) if query.get("tailLines") else None
        since_seconds = int(query["sinceSeconds"]) if query.get("sinceSeconds") else None
        limit = int(query["limitBytes"]) if query.get("limitBytes") else None
        if since_seconds is not None and since_seconds < 1:
            raise ValueError("sinceSeconds: must be greater than 0")  # PodLogOptions validation
        try:
            since = now - timedelta(seconds=since_seconds) if since_seconds else None
        except OverflowError:
            since = None  # before any log line: the whole log, as the kubelet answers it
        if query.get("sinceTime"):
            since = parse_time(query["sinceTime"])
        return cls(tail, since, limit, truthy(query.get("timestamps")))

    def body(self, log: ContainerLog) -> bytes:
        text = log.text(tail=self.tail, since=self.since, timestamps=self.timestamps)
        data = text.encode("utf-8", "surrogateescape")
        return data if self.limit_bytes is None else data[: self.limit_bytes]
