"""Where the TUI's data comes from: a live cluster (watches), or a fixed snapshot (tests)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from kubectl_spark.core.inputs import Snapshot

if TYPE_CHECKING:  # the client library loads when the source connects, not with the TUI
    from kubectl_spark.core.incremental import Changes
    from kubectl_spark.core.model import Analysis
    from kubectl_spark.kube.client import Api


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

    context: str
    namespace: str | None

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

    def kept_log(
        self, namespace: str, uid: str, *, previous: bool = False
    ) -> dict[str, Any] | None: ...


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

    def kept_log(
        self, namespace: str, uid: str, *, previous: bool = False
    ) -> dict[str, Any] | None:
        return None  # no history store behind a frozen cluster


@dataclass
class LiveSource:
    """A cluster followed by watches (kubectl_spark.kube.live), for `kubectl spark tui`."""

    connection: Any
    all_namespaces: bool = False
    history: Path | None = None  # the history store to record into while open
    # An in-cluster recorder whose kept states seed the view (auto, NAMESPACE/NAME; None: not
    # asked), as every reading command merges them (kubectl_spark.app.view.kept)
    cluster_recorder: str | None = None
    clock: Callable[[], datetime] | None = None  # the demo's simulated clock; else the wall's
    live: Any = field(default=None, init=False)
    recorder: Any = field(default=None, init=False)
    context: str = field(default="", init=False)
    namespace: str | None = field(default=None, init=False)
    scope: Any = field(default=None, init=False)  # whose objects the history store files
    recorder_ref: Any = field(default=None, init=False)  # the in-cluster recorder found
    # Stopped containers' last lines are asked for in a thread of their own: a burst of failures
    # must not hold up the analysis (kubectl_spark.kube.logtails).
    _to_keep: Any = field(default=None, init=False)
    _keeping: Any = field(default=None, init=False)
    _stopped: bool = field(default=False, init=False)
    # Why the source could not start (an unknown context, an unusable kubeconfig): shown on
    # the status bar as what it is, instead of a "connecting" that never ends.
    failure: str = field(default="", init=False)

    def start(self, on_change: Callable[[], None] | None = None) -> None:
        from kubectl_spark.app.view import kept
        from kubectl_spark.errors import KubectlSparkError
        from kubectl_spark.history.store import HistoryError
        from kubectl_spark.kube.client import connect, history_scope
        from kubectl_spark.kube.incluster import Discovery
        from kubectl_spark.kube.live import LiveCluster
        from kubectl_spark.kube.snapshot import check_credentials, check_namespace

        try:
            with connect(self.connection) as api:
                self.context = api.resolved.context
                self.namespace = None if self.all_namespaces else api.namespace
                check_credentials(api, self.namespace)
                scope = self.scope = history_scope(api)
                if self.namespace is not None:
                    check_namespace(api, self.namespace)  # as `ls -n` says it, not an empty list
                # What the store and the recorder kept of pods the cluster has forgotten.
                found = Discovery(api)  # one Services list for both reads below
                try:
                    seeds = kept(api, self.namespace, self.history, self.cluster_recorder, found)
                except HistoryError:  # the TUI works without the store; `ls` says why
                    seeds = kept(api, self.namespace, None, self.cluster_recorder, found)
                if self.cluster_recorder:
                    from kubectl_spark.kube import recorder_api

                    self.recorder_ref = recorder_api.find(api, self.cluster_recorder, found)
        except KubectlSparkError as exc:
            self.failure = exc.message
            if on_change is not None:
                on_change()  # the status bar says so now
            return
        if self.history is not None:
            from kubectl_spark.history.store import HistoryStore
            from kubectl_spark.kube.recording import Recorder

            try:
                self.recorder = Recorder(HistoryStore(self.history), scope)
            except HistoryError:
                self.recorder = None  # the TUI works without it; `ls` says why
        self.live = LiveCluster(self.connect, self.namespace, clock=self.clock)
        pods, events = seeds
        for source in ("history", "recorder"):
            self.live.seed([(p, seen) for p, seen, s in pods if s == source], [], source)
        self.live.seed([], events)
        self.live.on_change = on_change
        self.live.start()
        if self.recorder is not None and not self._stopped:
            self._to_keep = queue.Queue()
            self._keeping = threading.Thread(target=self._keep_logs, name="keep-logs", daemon=True)
            self._keeping.start()

    def _keep_logs(self) -> None:
        """Ask for the last lines of containers that stopped, as the batches tell them."""
        import sqlite3

        from kubectl_spark.errors import KubectlSparkError
        from kubectl_spark.kube.logtails import LogKeeper

        try:
            with self.connect() as api:
                keeper = LogKeeper(api, self.recorder.store, self.scope)
                while True:
                    try:
                        batch = self._to_keep.get(timeout=0.2 if keeper.pending else None)
                    except queue.Empty:
                        batch = ([], False)  # drain what waits, a few at a time
                    if batch is None:
                        return
                    keeper.keep(batch[0], listed=batch[1])
        except (KubectlSparkError, sqlite3.Error):
            # No connection (the TUI says so through its watches) or a store that cannot be
            # written (the recorder says so): the lines are a bonus, never a crash.
            return

    def connect(self) -> Api:
        from kubectl_spark.kube.client import connect

        return connect(self.connection)

    def analyzer(self) -> Analyzer:
        return one_cluster()

    def member(self, context: str) -> Source:
        return self

    def now(self) -> datetime:
        """The time by the cluster's clock, as the watches have learned it (``LiveCluster``)."""
        if self.live is not None:
            return self.live.clock()  # type: ignore[no-any-return]
        return (self.clock or (lambda: datetime.now(UTC)))()

    def stop(self) -> None:
        self._stopped = True  # a start still under way (in its worker) starts no log keeper
        if self.live is not None:
            self.live.stop()
        if self._keeping is not None:
            self._to_keep.put(None)
            self._keeping.join(timeout=10)  # a log being read ends within its 5 s timeout
            self._keeping = None
        if self.recorder is not None:
            self.recorder.store.close()
            self.recorder = None

    def record(self, changes: Changes | None, snapshot: Snapshot) -> None:
        """Keep what was watched (in the analysis worker: never on the UI thread)."""
        if self.recorder is not None:
            pods = self.recorder.write(changes, snapshot)
            if self._to_keep is not None:
                self._to_keep.put((pods, changes is None))

    def take_changes(self) -> tuple[Changes | None, Snapshot]:
        return self.live.take_changes()  # type: ignore[no-any-return]

    def kept_log(
        self, namespace: str, uid: str, *, previous: bool = False
    ) -> dict[str, Any] | None:
        """The last lines ``kubectl spark record`` kept of a gone pod, from this TUI's store.

        With ``previous``, those of the run before the last.
        """
        if self.recorder is not None and self.scope is not None:
            from kubectl_spark.kube.logtails import kept_tail

            found = kept_tail(self.recorder.store, self.scope, namespace, uid, previous=previous)
            if found is not None:
                return found
        if self.recorder_ref is None:
            return None
        from kubectl_spark.errors import KubectlSparkError
        from kubectl_spark.kube import recorder_api

        try:
            with self.connect() as api:
                found = recorder_api.log_tail(
                    api, self.recorder_ref, namespace, uid, previous=previous
                )
        except KubectlSparkError:
            return None  # the recorder did not answer: no lines, as without one
        if found is None:
            return None
        return {**found, "keptBy": f"the recorder {self.recorder_ref}"}  # for the view's title

    # What the watches say, once they run; before, a source that is connecting.
    @property
    def version(self) -> int:
        return int(self.live.version) if self.live is not None else 0

    @property
    def state(self) -> str:
        if self.failure:
            return "failed"
        return str(self.live.state) if self.live is not None else "connecting"

    @property
    def error(self) -> str:
        if self.failure:
            return self.failure
        return str(self.live.error) if self.live is not None else ""

    @property
    def last_event(self) -> float | None:
        return self.live.last_event if self.live is not None else None


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
