"""Where the TUI's data comes from: a live cluster (watches), or a fixed snapshot (tests)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from kubectl_spark.core.inputs import Snapshot

if TYPE_CHECKING:  # the client library loads when the source connects, not with the TUI
    from kubectl_spark.app.follow import Follow, RecorderRef
    from kubectl_spark.app.logtext import KeptLines
    from kubectl_spark.app.session import Api, Connection
    from kubectl_spark.core.incremental import Changes
    from kubectl_spark.core.model import Analysis


class Analyzer(Protocol):
    """What turns a source's batches into answers: one cluster's ``LiveAnalysis``, or several."""

    @property
    def max_age(self) -> float: ...

    @property
    def full_runs(self) -> int: ...

    def update(self, snapshot: Snapshot, changes: Any) -> Analysis: ...

    def prepare(self) -> None: ...


def one_cluster() -> Analyzer:
    from kubectl_spark.core.incremental import LiveAnalysis

    return LiveAnalysis()


class Source(Protocol):
    """What the TUI reads its data from: a live cluster, or a frozen one for tests."""

    namespace: str | None

    @property
    def context(self) -> str:
        """The kubeconfig context (several, comma-separated, for many clusters)."""

    @property
    def version(self) -> int:
        """Bumped on every change: the TUI re-analyzes when it moves."""

    @property
    def state(self) -> str:
        """connecting, live, reconnecting or forbidden (the status bar says it)."""

    @property
    def error(self) -> str: ...

    @property
    def last_event(self) -> float | None: ...

    def start(self, on_change: Callable[[], None] | None = None) -> None: ...

    def stop(self) -> None: ...

    def take_changes(self) -> tuple[Any, Snapshot]:
        """The changes since the last call (for the analyzer) and the cluster as it is now."""

    def record(self, changes: Any, snapshot: Snapshot) -> None: ...

    def connect(self) -> Api: ...

    def analyzer(self) -> Analyzer:
        """A fresh analysis for this source's batches."""

    def member(self, context: str) -> Source:
        """The source an application read through ``context`` is acted on through."""

    def kept_log(self, namespace: str, uid: str, *, previous: bool = False) -> KeptLines | None: ...


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

    def take_changes(self) -> tuple[Changes | None, Snapshot]:
        return None, self.fixed

    def record(self, changes: Changes | None, snapshot: Snapshot) -> None:
        return None

    def connect(self) -> Api:
        raise RuntimeError("a static source has no cluster to act on")

    def analyzer(self) -> Analyzer:
        return one_cluster()

    def member(self, context: str) -> Source:
        return self

    def kept_log(self, namespace: str, uid: str, *, previous: bool = False) -> KeptLines | None:
        return None  # no history store behind a frozen cluster


@dataclass
class LiveSource:
    """A cluster followed by watches (``app.follow``), for `kubectl spark tui`."""

    connection: Connection
    all_namespaces: bool = False
    history: Path | None = None  # the history store to record into while open
    # An in-cluster recorder whose kept states seed the view (auto, NAMESPACE/NAME; None: not
    # asked), as every reading command merges them (kubectl_spark.app.view.kept)
    cluster_recorder: str | None = None
    clock: Callable[[], datetime] | None = None  # the demo's simulated clock; else the wall's
    follow: Follow | None = field(default=None, init=False)
    context: str = field(default="", init=False)
    namespace: str | None = field(default=None, init=False)
    recorder_ref: RecorderRef | None = field(default=None, init=False)  # the recorder found
    _stopped: bool = field(default=False, init=False)
    # Why the source could not start (an unknown context, an unusable kubeconfig): shown on
    # the status bar as what it is, instead of a "connecting" that never ends.
    failure: str = field(default="", init=False)

    def start(self, on_change: Callable[[], None] | None = None) -> None:
        from kubectl_spark.app.follow import Follow, open_cluster
        from kubectl_spark.errors import KubectlSparkError, LocalStoreError

        try:
            opening = open_cluster(
                self.connection,
                all_namespaces=self.all_namespaces,
                history=self.history,
                cluster_recorder=self.cluster_recorder,
            )
        except KubectlSparkError as exc:
            self.failure = exc.message
            if on_change is not None:
                on_change()  # the status bar says so now
            return
        self.context, self.namespace = opening.context, opening.namespace
        self.recorder_ref = opening.recorder
        follow = Follow(self.connection, self.namespace, clock=self.clock)
        follow.seed_kept(opening.seeds)
        if self.history is not None and not self._stopped:
            with contextlib.suppress(LocalStoreError):  # the TUI works without it; `ls` says why
                follow.keep_into(self.history, opening.scope, logs_in_background=True)
        self.follow = follow
        follow.start(on_change)

    def connect(self) -> Api:
        from kubectl_spark.app.session import connect

        return connect(self.connection)

    def analyzer(self) -> Analyzer:
        return one_cluster()

    def member(self, context: str) -> Source:
        return self

    def now(self) -> datetime:
        """The time by the cluster's clock, as the watches have learned it."""
        if self.follow is not None:
            return self.follow.now()
        return (self.clock or (lambda: datetime.now(UTC)))()

    def stop(self) -> None:
        self._stopped = True  # a start still under way (in its worker) keeps nothing
        if self.follow is not None:
            self.follow.stop()
            self.follow.close()

    def record(self, changes: Changes | None, snapshot: Snapshot) -> None:
        """Keep what was watched (in the analysis worker: never on the UI thread)."""
        if self.follow is not None:
            self.follow.keep(changes, snapshot)

    def take_changes(self) -> tuple[Changes | None, Snapshot]:
        assert self.follow is not None, "taken before the source started"
        return self.follow.take_changes()

    def kept_log(self, namespace: str, uid: str, *, previous: bool = False) -> KeptLines | None:
        """The last lines kept of a gone pod: this TUI's store's, else the recorder's.

        With ``previous``, those of the run before the last.
        """
        from kubectl_spark.app.logtext import kept_lines
        from kubectl_spark.errors import KubectlSparkError

        keeping = self.follow.keeping if self.follow is not None else None
        if keeping is None and self.recorder_ref is None:
            return None
        try:
            with self.connect() as api:
                return kept_lines(
                    api,
                    namespace,
                    uid,
                    previous=previous,
                    store=keeping.store if keeping is not None else None,
                    recorder=self.recorder_ref,
                )
        except KubectlSparkError:
            return None  # no connection: no lines, as without a keeper

    # What the watches say, once they run; before, a source that is connecting.
    @property
    def version(self) -> int:
        return self.follow.version if self.follow is not None else 0

    @property
    def state(self) -> str:
        if self.failure:
            return "failed"
        return self.follow.state if self.follow is not None else "connecting"

    @property
    def error(self) -> str:
        if self.failure:
            return self.failure
        return self.follow.error if self.follow is not None else ""

    @property
    def last_event(self) -> float | None:
        return self.follow.last_event if self.follow is not None else None


Factory = Callable[[], Source]


@dataclass(frozen=True)
class Target:
    """What ``:ns`` or ``:ctx`` asks to show."""

    namespace: str | None
    context: str | None
    all_namespaces: bool

    @classmethod
    def asked(cls, words: list[str], now: Target) -> Target | None:
        """What ``:ns NAME``, ``:ns all`` or ``:ctx NAME`` (``a,b``, ``all``) asks; None: neither."""
        if len(words) == 2 and words[0] == "ns":
            everywhere = words[1] == "all"
            return cls(None if everywhere else words[1], now.context, everywhere)
        if len(words) == 2 and words[0] == "ctx":
            return cls(now.namespace, words[1], now.all_namespaces)
        return None


def why_not_started(source: Source, on_change: Callable[[], None]) -> str:
    """Start ``source``; why it shows nothing (an unknown context, a namespace not found), or ""."""
    try:
        source.start(on_change=on_change)
    except Exception as exc:  # noqa: BLE001 - said, never fatal
        return str(exc)
    return source.error if source.state == "failed" else ""
