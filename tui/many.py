"""Several clusters in one TUI (``--context a,b``, ``--all-contexts``, ``:ctx a,b``).

Each context is a source of its own (its watches, its history store scope, its deadline), so a
cluster that is cut reconnects by itself and never holds the others: its rows stay as last
seen while the status bar names it. Each cluster is analyzed on its own, as ``ls --context
NAME`` would, and the answers are put side by side, each application marked with its context.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from kubectl_spark.core.incremental import LiveAnalysis
from kubectl_spark.core.inputs import OBJECT_LISTS, Snapshot
from kubectl_spark.core.model import Analysis, App, UngroupedPod

if TYPE_CHECKING:
    from kubectl_spark.app.logtext import KeptLines
    from kubectl_spark.app.session import Api
    from kubectl_spark.core.incremental import Changes

    from .sources import Source

# The worse state wins the status bar: one cluster cut is what the operator must see.
WORST_FIRST = ("failed", "forbidden", "reconnecting", "connecting", "live")


@dataclass(frozen=True)
class ManySnapshot(Snapshot):
    """Every cluster's lists side by side (for lookups by uid), and each cluster's own."""

    parts: Mapping[str, Snapshot] = field(default_factory=dict)

    @classmethod
    def joined(cls, parts: Mapping[str, Snapshot]) -> ManySnapshot:
        lists = {
            name: [o for part in parts.values() for o in getattr(part, name)]
            for name in OBJECT_LISTS
        }
        now = max((p.now for p in parts.values()), default=datetime.now(UTC))
        return replace(cls.of(lists, now=now), parts=dict(parts))


class ManyAnalysis:
    """One ``LiveAnalysis`` per cluster; their answers joined, each application marked."""

    def __init__(self) -> None:
        self.per: dict[str, LiveAnalysis] = {}
        self.analysis = Analysis()
        self._answers: dict[str, Analysis] = {}  # each cluster's last answer, as analyzed
        # By id(an application as analyzed): it and its marked copy. The analysis hands back
        # what a change did not touch as the same object, so its row is not made again.
        self._marked: dict[int, tuple[App, App]] = {}

    @property
    def max_age(self) -> float:
        return min((a.max_age for a in self.per.values()), default=60.0)

    @property
    def full_runs(self) -> int:
        return sum(a.full_runs for a in self.per.values())

    def update(self, snapshot: Snapshot, changes: Mapping[str, Changes | None] | None) -> Analysis:
        parts = snapshot.parts if isinstance(snapshot, ManySnapshot) else {}
        answers = {
            name: self.per.setdefault(name, LiveAnalysis()).update(
                part, None if changes is None else changes.get(name)
            )
            for name, part in parts.items()
        }
        if answers.keys() == self._answers.keys() and all(
            answers[n] is self._answers[n] for n in answers
        ):
            return self.analysis  # nothing changed: the same object (the TUI draws nothing)
        self._answers = answers
        marked: dict[int, tuple[App, App]] = {}
        apps: list[App] = []
        ungrouped: list[UngroupedPod] = []
        for name, answer in answers.items():
            for app in answer.apps:
                known = self._marked.get(id(app))
                if known is None or known[0] is not app:
                    known = (app, replace(app, context=name))
                marked[id(app)] = known
                apps.append(known[1])
            ungrouped.extend(replace(u, context=name) for u in answer.ungrouped)
        self._marked = marked
        self.analysis = Analysis(tuple(apps), tuple(ungrouped))
        return self.analysis

    def prepare(self) -> None:
        for analysis in list(self.per.values()):
            analysis.prepare()


@dataclass
class ManySource:
    """Several contexts, each a ``LiveSource``, shown as one."""

    members: dict[str, Source]
    namespace: str | None = None

    @property
    def context(self) -> str:
        return ",".join(self.members)

    def analyzer(self) -> ManyAnalysis:
        return ManyAnalysis()

    def member(self, context: str) -> Any:
        """The source an application's keys act through: its own cluster's."""
        return self.members.get(context, self)

    def start(self, on_change: Callable[[], None] | None = None) -> None:
        """Each context starts in a thread of its own: one slow to connect holds none."""
        threads = [
            threading.Thread(target=m.start, args=(on_change,), name=f"start-{name}", daemon=True)
            for name, m in self.members.items()
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        namespaces = {m.namespace for m in self.members.values() if m.state != "failed"}
        self.namespace = next(iter(namespaces)) if len(namespaces) == 1 else self.namespace

    def stop(self) -> None:
        for m in self.members.values():
            m.stop()

    def take_changes(self) -> tuple[dict[str, Changes | None], Snapshot]:
        taken = {name: m.take_changes() for name, m in self.members.items() if m.version > 0}
        return (
            {name: changes for name, (changes, _) in taken.items()},
            ManySnapshot.joined({name: snap for name, (_, snap) in taken.items()}),
        )

    def record(self, changes: Any, snapshot: Snapshot) -> None:
        if not isinstance(snapshot, ManySnapshot):
            return
        for name, part in snapshot.parts.items():
            self.members[name].record((changes or {}).get(name), part)

    def connect(self) -> Api:
        raise RuntimeError("several clusters: act through the application's own (member)")

    def kept_log(self, namespace: str, uid: str, *, previous: bool = False) -> KeptLines | None:
        for m in self.members.values():
            found = m.kept_log(namespace, uid, previous=previous)
            if found is not None:
                return found
        return None

    def now(self) -> datetime:
        told = [getattr(m, "now", None) for m in self.members.values()]  # a live one's clock
        return max((now() for now in told if callable(now)), default=datetime.now(UTC))

    @property
    def version(self) -> int:
        return sum(m.version for m in self.members.values())

    @property
    def state(self) -> str:
        states = {m.state for m in self.members.values()}
        if states == {"failed"} or not states:
            return "failed"
        return next(s for s in WORST_FIRST if s in states or s == "live")

    @property
    def error(self) -> str:
        """Each cluster that is not live, and why, by context name."""
        return "; ".join(
            f"{name}: {m.error or m.state}"
            for name, m in self.members.items()
            if m.state != "live" or m.error
        )

    @property
    def last_event(self) -> float | None:
        seen = [m.last_event for m in self.members.values() if m.last_event is not None]
        return max(seen) if seen else None
