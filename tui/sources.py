"""Where the TUI's data comes from: a live cluster (watches), or a fixed snapshot (tests)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubectl_spark.core.analyze import Snapshot


@dataclass
class StaticSource:
    """A frozen cluster: for snapshot tests and screenshots."""

    fixed: Snapshot
    context: str = "static"
    namespace: str | None = None
    version: int = 1
    state: str = "live"
    error: str = ""
    last_event: float | None = None
    api: Any = None

    def start(self) -> None:
        return None

    def stop(self) -> None:
        return None

    def snapshot(self) -> Snapshot:
        return self.fixed

    def connect(self) -> Any:
        raise RuntimeError("a static source has no cluster to act on")


@dataclass
class LiveSource:
    """A cluster followed by watches (kubectl_spark.kube.live), for `kubectl spark tui`."""

    connection: Any
    all_namespaces: bool = False
    live: Any = field(default=None, init=False)
    context: str = field(default="", init=False)
    namespace: str | None = field(default=None, init=False)

    def start(self) -> None:
        from kubectl_spark.kube.client import connect
        from kubectl_spark.kube.live import LiveCluster

        with connect(self.connection) as api:
            self.context = api.resolved.context
            self.namespace = None if self.all_namespaces else api.namespace
        self.live = LiveCluster(self.connect, self.namespace)
        self.live.start()

    def connect(self) -> Any:
        from kubectl_spark.kube.client import connect

        return connect(self.connection)

    def stop(self) -> None:
        if self.live is not None:
            self.live.stop()

    def snapshot(self) -> Snapshot:
        return self.live.snapshot()

    def __getattr__(self, name: str) -> Any:
        if name in ("version", "state", "error", "last_event"):
            live = self.__dict__.get("live")
            return (
                getattr(live, name)
                if live is not None
                else {"version": 0, "state": "connecting", "error": "", "last_event": None}[name]
            )
        raise AttributeError(name)


Source = StaticSource | LiveSource
Factory = Callable[[], Source]
