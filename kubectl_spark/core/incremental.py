"""Keep an analysis current as watched objects change, re-analyzing only touched applications.

A full analysis of 10,000 pods takes most of a second; one application's pods take
milliseconds. ``LiveAnalysis`` remembers which pods and Events belong to which application
(by app id and by the spark-operator's app name) so that a change finds its applications
without scanning the cluster, analyzes those on their own and merges them into the previous
result. Whatever it cannot place (an ungroupable pod, a new Job or SparkApplication, a node
whose health changed, volumes) falls back to a full analysis, so the answer always equals
``analyze(snapshot)``: ``tests/functional/test_live_analysis.py`` checks that on each kind of scenario.
"""

from __future__ import annotations

import re
import threading
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from kubectl_spark.knowledge.labels import (
    APACHE_APP,
    EXECUTOR_DELETED,
    OPERATOR_APP,
    RESUBMITTED_FROM,
)
from kubectl_spark.memory import collector_paused

from . import raw
from .analyze import analyze
from .inputs import Snapshot, deleted_under, health_by_name
from .model import Analysis, App
from .pod import Pod
from .reasons import NodeHealth
from .reconstruct import job_of_pod
from .sparkview import exec_prefix_of_driver

Key = tuple[str, str, str]  # ("id" | "op" | "ap", namespace, app id | operator app name)
Target = tuple[str, str, str]  # (namespace, kind, name) of an Event's involved object


class Change(NamedTuple):
    obj: object  # the object now, or as it was when deleted
    deleted: bool = False


# resource key → uid → change; "spark_views": driver pod uid → its Spark executor list
Changes = Mapping[str, Mapping[str, Change]]


def _keys(pod: Pod) -> set[Key]:
    """The applications a pod's metadata names (read once a pod: 50,000 at a full analysis)."""
    labels = pod.metadata.labels
    ns = pod.metadata.namespace
    out: set[Key] = set()
    if labels.get("spark-app-selector"):
        out.add(("id", ns, labels["spark-app-selector"]))
    if labels.get(OPERATOR_APP):
        out.add(("op", ns, labels[OPERATOR_APP]))
    if labels.get(APACHE_APP):  # its attempts have app ids of their own: analysed together
        out.add(("ap", ns, labels[APACHE_APP]))
    return out


def _resubmit_family(snapshot: Snapshot, touched: set[Key]) -> set[Key]:
    """The Apache SparkApplications linked to a touched one by ``resubmit`` (one application).

    A copy names the one it copies (RESUBMITTED_FROM); the grouping shows the chain as one
    application, so analysing part of it alone would name it differently.
    """
    wanted = {(k[1], k[2]) for k in touched if k[0] == "ap"}
    if not wanted:
        return set()
    links: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for app in snapshot.apacheapps:
        source = raw.label(app, RESUBMITTED_FROM)
        if source:
            a, b = (raw.namespace(app), raw.name(app)), (raw.namespace(app), source)
            links.setdefault(a, set()).add(b)
            links.setdefault(b, set()).add(a)
    family, todo = set(wanted), list(wanted)
    while todo:
        for linked in links.get(todo.pop(), ()):
            if linked not in family:
                family.add(linked)
                todo.append(linked)
    return {("ap", ns, name) for ns, name in family}


def _target(event: Any) -> Target:
    involved = raw.mapping(event, "involvedObject") or raw.mapping(event, "regarding")
    return (
        raw.text(involved, "namespace") or raw.namespace(event),
        raw.text(involved, "kind"),
        raw.text(involved, "name"),
    )


def _involved_uid(event: Any) -> str:
    return raw.text(raw.mapping(event, "involvedObject") or raw.mapping(event, "regarding"), "uid")


_EXEC_NAME = re.compile(r"(.+-exec-)\d+")


def _exec_prefix(name: str) -> str:
    """``<prefix>-exec-`` of an executor pod's name as Spark makes it, else "".

    Spark's executor list names executors whose pods are gone by id alone; the core gives them
    the name a sibling's pattern says (``sparkview._gone_name``) and reads the Events about that
    name. Ending in "-", the prefix is no pod's name: it can share ``by_name`` with them.
    """
    found = _EXEC_NAME.fullmatch(name)
    return found.group(1) if found else ""


def _event_prefix(event: Any) -> tuple[str, str] | None:
    """(ns, executor name prefix) of the pod an Event is about, if Spark could have named it."""
    ns, kind, name = _target(event)
    prefix = _exec_prefix(name) if kind == "Pod" else ""
    return (ns, prefix) if prefix else None


class _NeedsFull(Exception):
    """A change this index cannot place: analyze everything."""


@dataclass
class _Index:
    pods: dict[str, Pod]
    members: defaultdict[Key, dict[str, Pod]]  # application → its pods by uid
    # (ns, pod or owner name, or an executor name's prefix) → applications
    by_name: dict[tuple[str, str], set[Key]]
    owned: defaultdict[str, set[Key]]  # owner uid (Job, driver pod) → applications
    events: dict[str, Any]
    by_target: defaultdict[Target, dict[str, Any]]
    by_involved_uid: defaultdict[str, dict[str, Any]]
    # (ns, an executor name's prefix) → Events about pods so named, by uid
    by_exec_prefix: defaultdict[tuple[str, str], dict[str, Any]]
    # (ns, driver pod) → kubectl spark's Events on the executors an action deleted under it
    by_related: defaultdict[tuple[str, str], dict[str, Any]]


class LiveAnalysis:
    """The latest analysis of a watched cluster; ``update`` with each batch of changes."""

    def __init__(self, *, group_by: str | None = None, max_age: float = 60.0) -> None:
        """Analyze everything again, changes or not, once ``max_age`` seconds have passed.

        Some findings depend on the time alone: an alert's "for 86s", a churn window.
        """
        self.group_by = group_by
        self.max_age = max_age
        self.analysis = Analysis()
        self._full_at: datetime | None = None
        self.full_runs = 0  # how often the slow path ran (benchmarks and tests read it)
        self._index: _Index | None = None
        self._unindexed: Snapshot | None = None  # the last full analysis's, not indexed yet
        # ``update`` and ``prepare`` come from worker threads, one index between them.
        self._lock = threading.Lock()
        self._nodes: dict[str, NodeHealth] = {}
        # Pod uid (a driver's, an executor's) → the applications of the analysis holding it:
        # a merge finds the ones a part replaces by the part's pods, not by reading every
        # executor of every application (15 ms of each change at 50,000 pods, issue 26).
        self._holding: dict[str, list[App]] = {}

    def update(self, snapshot: Snapshot, changes: Changes | None) -> Analysis:
        """``changes`` None means "anything may have changed" (a list, a re-list)."""
        with self._lock:
            if changes is not None:
                self._prepare()
            if (
                changes is None
                or self._index is None
                or self.group_by
                or self._full_at is None
                or (snapshot.now - self._full_at).total_seconds() > self.max_age
                or "nodes" in snapshot.unreadable  # node health then comes from all pods' Events
            ):
                return self._full(snapshot)
            try:
                touched = self._apply(snapshot, changes, self._index)
                if touched:
                    self.analysis = self._partial(snapshot, touched, self._index)
            except _NeedsFull:
                return self._full(snapshot)
            return self.analysis

    def prepare(self) -> None:
        """Build what the next change needs, when the last full analysis left it for later.

        A full analysis answers first and indexes after: a front end shows the answer, then
        calls this (off its UI thread) while the operator reads it. ``update`` builds it
        itself when not called: the answers are the same either way.
        """
        with self._lock:
            self._prepare()

    # ------------------------------------------------------------------ the slow path
    def _full(self, snapshot: Snapshot) -> Analysis:
        self.full_runs += 1
        self._full_at = snapshot.now
        self.analysis = analyze(snapshot, group_by=self.group_by)
        self._nodes = health_by_name(snapshot.nodes)
        # The index of the pods and Events (as many objects again as the analysis: 0.5-1 s
        # at 50,000 pods) is built from this very snapshot, later: the TUI's first paint
        # waits for the analysis alone (issue 26).
        self._index, self._unindexed = None, snapshot
        return self.analysis

    def _prepare(self) -> None:
        snapshot, self._unindexed = self._unindexed, None
        if snapshot is None:
            return
        # As free of cycles as the analysis: with the collector running, its collections
        # walked every pod (twice the time).
        with collector_paused():
            self._holding = {}
            self._hold(self.analysis.apps)
            index = _Index(
                {},
                defaultdict(dict),
                {},
                defaultdict(set),
                {},
                defaultdict(dict),
                defaultdict(dict),
                defaultdict(dict),
                defaultdict(dict),
            )
            for pod in snapshot.pods:
                self._add_pod(index, pod)
            for event in snapshot.events:
                if isinstance(event, dict):
                    self._add_event(index, event)
            self._index = index

    # ------------------------------------------------------------------- bookkeeping
    def _add_pod(self, index: _Index, pod: Pod) -> set[Key]:
        meta = pod.metadata  # read once: this runs for every pod at a full analysis
        uid, ns, name = meta.uid, meta.namespace, meta.name
        keys = _keys(pod)
        index.pods[uid] = pod
        for key in keys:
            index.members[key][uid] = pod
        owners = meta.owner_references
        by_name = index.by_name
        for named in (
            name,
            _exec_prefix(name),
            exec_prefix_of_driver(name),
            *(r.name for r in owners),
        ):
            if not named:  # no prefix: nothing is looked up by ""
                continue
            found = by_name.get((ns, named))
            if found is None:
                by_name[(ns, named)] = set(keys)
            else:
                found.update(keys)
        for ref in owners:
            index.owned[ref.uid].update(keys)
        return keys

    def _drop_pod(self, index: _Index, uid: str) -> set[Key]:
        old = index.pods.pop(uid, None)
        if old is None:
            return set()
        keys = _keys(old)
        for key in keys:
            members = index.members.get(key)
            if members is not None:
                members.pop(uid, None)
        return keys

    def _add_event(self, index: _Index, event: Any) -> None:
        uid = raw.uid(event)
        index.events[uid] = event
        index.by_target[_target(event)][uid] = event
        if _involved_uid(event):
            index.by_involved_uid[_involved_uid(event)][uid] = event
        prefix = _event_prefix(event)
        if prefix is not None:
            index.by_exec_prefix[prefix][uid] = event
        if event.get("reason") == EXECUTOR_DELETED:
            index.by_related[deleted_under(event)][uid] = event

    def _drop_event(self, index: _Index, uid: str) -> None:
        old = index.events.pop(uid, None)
        if old is not None:
            index.by_target[_target(old)].pop(uid, None)
            index.by_involved_uid[_involved_uid(old)].pop(uid, None)
            prefix = _event_prefix(old)
            if prefix is not None:
                index.by_exec_prefix[prefix].pop(uid, None)
            index.by_related[deleted_under(old)].pop(uid, None)

    def _apply(self, snapshot: Snapshot, changes: Changes, index: _Index) -> set[Key]:
        """Bring the index up to date; return the applications the changes touched."""
        if changes.get("volumeattachments") or changes.get("pvcs") or changes.get("sparkclusters"):
            raise _NeedsFull
        if changes.get("nodes"):
            health = health_by_name(snapshot.nodes)
            if health != self._nodes:
                raise _NeedsFull
        touched: set[Key] = set()
        for uid, change in (changes.get("pods") or {}).items():
            touched |= self._drop_pod(index, uid) | set(index.owned.get(uid, ()))
            changed = Pod.of(change.obj)  # typed where it was watched: as it is
            for ref in changed.metadata.owner_references:
                owner = index.pods.get(ref.uid)
                touched |= _keys(owner) if owner is not None else set()
            if not change.deleted:
                keys = self._add_pod(index, changed)
                if not keys:
                    raise _NeedsFull  # ungrouped, or grouped by its Job alone
                touched |= keys
        for uid in changes.get("spark_views") or {}:  # a driver's executor list, by its uid
            driver = index.pods.get(uid)
            touched |= _keys(driver) if driver is not None else set()
        for uid, change in (changes.get("events") or {}).items():
            self._drop_event(index, uid)
            if not change.deleted:
                self._add_event(index, change.obj)
            touched |= self._event_keys(snapshot, index, change.obj)
        for kind, by_name in (("jobs", ""), ("sparkapplications", "op"), ("apacheapps", "ap")):
            for uid, change in (changes.get(kind) or {}).items():
                keys = set(index.owned.get(uid, ()))
                if by_name:
                    keys.add((by_name, raw.namespace(change.obj), raw.name(change.obj)))
                if not any(index.members.get(k) for k in keys):
                    raise _NeedsFull  # an owner without pods is an application of its own
                touched |= keys
        return touched

    def _event_keys(self, snapshot: Snapshot, index: _Index, event: Any) -> set[Key]:
        ns, kind, name = _target(event)
        if kind == "SparkApplication":  # either operator's: the Event does not say which
            return {("op", ns, name), ("ap", ns, name)}
        if kind != "Pod":
            return set()  # the core reads Events about pods and SparkApplications only
        pod = index.pods.get(_involved_uid(event))
        if pod is not None:
            return _keys(pod)
        # By name (a gone driver its executors name), or a gone executor Spark still lists.
        keys = set(index.by_name.get((ns, name)) or ())
        keys |= index.by_name.get((ns, _exec_prefix(name)), set()) if _exec_prefix(name) else set()
        for job in snapshot.jobs:  # a Job's vanished attempt, counted by the Events naming it
            if raw.namespace(job) == ns and name.startswith(raw.name(job) + "-"):
                owned = index.owned.get(raw.uid(job))
                if not owned:
                    raise _NeedsFull
                keys |= owned
        return keys

    # ------------------------------------------------------------------ the fast path
    def _partial(self, snapshot: Snapshot, touched: set[Key], index: _Index) -> Analysis:
        touched = touched | _resubmit_family(snapshot, touched)
        pods: dict[str, Pod] = {}
        for key in touched:
            pods.update(index.members.get(key) or {})
        if not pods:  # the last pods of an application are gone: its owner may remain
            raise _NeedsFull
        owners = {r.uid for p in pods.values() for r in p.metadata.owner_references}
        jobs = [j for j in snapshot.jobs if raw.uid(j) in owners]
        operator = {(k[1], k[2]) for k in touched if k[0] == "op"}
        sparkapps = [
            a for a in snapshot.sparkapplications if (raw.namespace(a), raw.name(a)) in operator
        ]
        apache = {(k[1], k[2]) for k in touched if k[0] == "ap"}
        apacheapps = [a for a in snapshot.apacheapps if (raw.namespace(a), raw.name(a)) in apache]
        events: dict[str, Any] = {}
        # Executors Spark lists by id, their pods gone, are named after a sibling or the driver.
        named = [(p.metadata.namespace, p.metadata.name) for p in pods.values()]
        for prefix in {(ns, _exec_prefix(name)) for ns, name in named} | {
            (ns, exec_prefix_of_driver(name)) for ns, name in named
        }:
            if prefix[1]:  # about executors Spark lists by id, their pods gone
                events.update(index.by_exec_prefix.get(prefix) or {})
        for uid, pod in pods.items():
            events.update(index.by_involved_uid.get(uid) or {})
            ns = pod.metadata.namespace
            for name in [pod.metadata.name] + [r.name for r in pod.metadata.owner_references]:
                events.update(index.by_target.get((ns, "Pod", name)) or {})
        for app in [*sparkapps, *apacheapps]:
            events.update(index.by_involved_uid.get(raw.uid(app)) or {})
            events.update(
                index.by_target.get((raw.namespace(app), "SparkApplication", raw.name(app))) or {}
            )
        if jobs:  # a Job's attempts whose pods are gone are still named by Events
            mine = {(raw.namespace(j), raw.name(j)) for j in jobs}
            every_job = {(raw.namespace(j), raw.name(j)) for j in snapshot.jobs}
            for (ns, kind, name), found in index.by_target.items():
                owner = job_of_pod(ns, name, every_job) if kind == "Pod" else None
                if owner is not None and (ns, owner) in mine:
                    events.update(found)
        # The executors an action deleted, under a driver present or named by an Event.
        drivers = {(p.metadata.namespace, p.metadata.name) for p in pods.values()}
        drivers |= {(t[0], t[2]) for t in map(_target, events.values()) if t[1] == "Pod"}
        for driver in drivers:
            events.update(index.by_related.get(driver) or {})
        part = analyze(
            Snapshot(
                pods=list(pods.values()),
                jobs=jobs,
                events=list(events.values()),
                nodes=snapshot.nodes,
                sparkapplications=sparkapps,
                apacheapps=apacheapps,
                sparkclusters=snapshot.sparkclusters,
                volumeattachments=snapshot.volumeattachments,
                pvcs=snapshot.pvcs,
                now=snapshot.now,
                owners=[o for o in snapshot.owners if o.metadata.uid in owners],
                spark_views={u: v for u, v in snapshot.spark_views.items() if u in pods},
                unreadable=snapshot.unreadable,
            )
        )
        return self._merge(part, touched, set(pods))

    def _merge(self, part: Analysis, touched: set[Key], uids: set[str]) -> Analysis:
        ids = {(k[1], k[2]) for k in touched if k[0] == "id"} | {
            (a.namespace, a.app_id) for a in part.apps
        }
        operator = {(k[1], k[2]) for k in touched if k[0] == "op"} | {
            (a.namespace, a.name) for a in part.apps if a.source == "sparkapplication"
        }
        apache = {(k[1], k[2]) for k in touched if k[0] == "ap"} | {
            (a.namespace, a.name) for a in part.apps if a.source == "apache-operator"
        }
        holding = {id(a) for u in uids for a in self._holding.get(u, ())}
        kept, replaced = [], []
        for a in self.analysis.apps:
            if (
                id(a) in holding
                or (a.namespace, a.app_id) in ids
                or (a.source == "sparkapplication" and (a.namespace, a.name) in operator)
                or (a.source == "apache-operator" and (a.namespace, a.name) in apache)
            ):
                replaced.append(a)
            else:
                kept.append(a)
        self._let_go(replaced)
        self._hold(part.apps)
        return Analysis(
            tuple(
                sorted([*kept, *part.apps], key=lambda a: (a.namespace, a.name, a.created_at or ""))
            ),
            self.analysis.ungrouped,
        )

    def _hold(self, apps: Iterable[App]) -> None:
        for app in apps:
            for uid in _uids(app):
                self._holding.setdefault(uid, []).append(app)

    def _let_go(self, apps: Iterable[App]) -> None:
        for app in apps:
            for uid in _uids(app):
                held = [a for a in self._holding.get(uid, ()) if a is not app]
                if held:
                    self._holding[uid] = held
                else:
                    self._holding.pop(uid, None)


def _uids(app: App) -> set[str]:
    """The pods an application's answer was made of: its drivers' and executors' uids."""
    return {uid for t in app.attempts for uid in (t.uid, *(e.uid for e in t.executors)) if uid}
