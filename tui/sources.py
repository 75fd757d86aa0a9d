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

    def start(self, on_change: Callable[[], None] | None = None) -> None:
        if on_change is not None:
            on_change()  # the data is all there at once

    def stop(self) -> None:
        return None

    def take_changes(self) -> tuple[None, Snapshot]:
        return None, self.fixed

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

    def start(self, on_change: Callable[[], None] | None = None) -> None:
        from kubectl_spark.kube.client import connect
        from kubectl_spark.kube.live import LiveCluster

        with connect(self.connection) as api:
            self.context = api.resolved.context
            self.namespace = None if self.all_namespaces else api.namespace
        self.live = LiveCluster(self.connect, self.namespace)
        self.live.on_change = on_change
        self.live.start()

    def connect(self) -> Any:
        from kubectl_spark.kube.client import connect

        return connect(self.connection)

    def stop(self) -> None:
        if self.live is not None:
            self.live.stop()

    def take_changes(self) -> tuple[Any, Snapshot]:
        return self.live.take_changes()  # type: ignore[no-any-return]

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
