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

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from kubectl_spark.knowledge.labels import APACHE_APP, OPERATOR_APP, RESUBMITTED_FROM

from . import raw
from .analyze import analyze
from .inputs import Snapshot, node_health
from .model import Analysis
from .reconstruct import job_of_pod

Key = tuple[str, str, str]  # ("id" | "op" | "ap", namespace, app id | operator app name)
Target = tuple[str, str, str]  # (namespace, kind, name) of an Event's involved object


class Change(NamedTuple):
    obj: Any  # the object now, or as it was when deleted
    deleted: bool = False


Changes = Mapping[str, Mapping[str, Change]]  # resource key → uid → change


def _keys(pod: Any) -> set[Key]:
    labels = raw.labels(pod)
    ns = raw.namespace(pod)
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


class _NeedsFull(Exception):
    """A change this index cannot place: analyze everything."""


@dataclass
class _Index:
    pods: dict[str, Any]
    members: defaultdict[Key, dict[str, Any]]  # application → its pods by uid
    by_name: dict[tuple[str, str], set[Key]]  # (ns, pod or owner name) → applications
    owned: defaultdict[str, set[Key]]  # owner uid (Job, driver pod) → applications
    events: dict[str, Any]
    by_target: defaultdict[Target, dict[str, Any]]
    by_involved_uid: defaultdict[str, dict[str, Any]]


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
        self._nodes: dict[str, Any] = {}

    def update(self, snapshot: Snapshot, changes: Changes | None) -> Analysis:
        """``changes`` None means "anything may have changed" (a list, a re-list)."""
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

    # ------------------------------------------------------------------ the slow path
    def _full(self, snapshot: Snapshot) -> Analysis:
        self.full_runs += 1
        self._full_at = snapshot.now
        self.analysis = analyze(snapshot, group_by=self.group_by)
        index = _Index(
            {}, defaultdict(dict), {}, defaultdict(set), {}, defaultdict(dict), defaultdict(dict)
        )
        for pod in snapshot.pods:
            if isinstance(pod, dict):
                self._add_pod(index, pod)
        for event in snapshot.events:
            if isinstance(event, dict):
                self._add_event(index, event)
        self._index = index
        self._nodes = {raw.name(n): node_health(n) for n in snapshot.nodes if raw.name(n)}
        return self.analysis

    # ------------------------------------------------------------------- bookkeeping
    def _add_pod(self, index: _Index, pod: Any) -> set[Key]:
        uid = raw.uid(pod)
        keys = _keys(pod)
        index.pods[uid] = pod
        ns = raw.namespace(pod)
        for key in keys:
            index.members[key][uid] = pod
        for name in [raw.name(pod)] + [
            str(r.get("name")) for r in raw.items(pod, "metadata", "ownerReferences")
        ]:
            index.by_name.setdefault((ns, name), set()).update(keys)
        for ref in raw.items(pod, "metadata", "ownerReferences"):
            index.owned[str(ref.get("uid"))].update(keys)
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

    def _drop_event(self, index: _Index, uid: str) -> None:
        old = index.events.pop(uid, None)
        if old is not None:
            index.by_target[_target(old)].pop(uid, None)
            index.by_involved_uid[_involved_uid(old)].pop(uid, None)

    def _apply(self, snapshot: Snapshot, changes: Changes, index: _Index) -> set[Key]:
        """Bring the index up to date; return the applications the changes touched."""
        if changes.get("volumeattachments") or changes.get("pvcs") or changes.get("sparkclusters"):
            raise _NeedsFull
        if changes.get("nodes"):
            health = {raw.name(n): node_health(n) for n in snapshot.nodes if raw.name(n)}
            if health != self._nodes:
                raise _NeedsFull
        touched: set[Key] = set()
        for uid, change in (changes.get("pods") or {}).items():
            touched |= self._drop_pod(index, uid) | set(index.owned.get(uid, ()))
            for ref in raw.items(change.obj, "metadata", "ownerReferences"):
                owner = index.pods.get(str(ref.get("uid")))
                touched |= _keys(owner) if owner is not None else set()
            if not change.deleted:
                keys = self._add_pod(index, change.obj)
                if not keys:
                    raise _NeedsFull  # ungrouped, or grouped by its Job alone
                touched |= keys
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
        keys = set(index.by_name.get((ns, name)) or ())  # by name, or a gone driver executors name
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
        pods: dict[str, Any] = {}
        for key in touched:
            pods.update(index.members.get(key) or {})
        if not pods:  # the last pods of an application are gone: its owner may remain
            raise _NeedsFull
        owners = {
            str(r.get("uid"))
            for p in pods.values()
            for r in raw.items(p, "metadata", "ownerReferences")
        }
        jobs = [j for j in snapshot.jobs if raw.uid(j) in owners]
        operator = {(k[1], k[2]) for k in touched if k[0] == "op"}
        sparkapps = [
            a for a in snapshot.sparkapplications if (raw.namespace(a), raw.name(a)) in operator
        ]
        apache = {(k[1], k[2]) for k in touched if k[0] == "ap"}
        apacheapps = [a for a in snapshot.apacheapps if (raw.namespace(a), raw.name(a)) in apache]
        events: dict[str, Any] = {}
        for uid, pod in pods.items():
            events.update(index.by_involved_uid.get(uid) or {})
            ns = raw.namespace(pod)
            for name in [raw.name(pod)] + [
                str(r.get("name")) for r in raw.items(pod, "metadata", "ownerReferences")
            ]:
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
                owners=[o for o in snapshot.owners if raw.uid(o) in owners],
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
        kept = [
            a
            for a in self.analysis.apps
            if (a.namespace, a.app_id) not in ids
            and not (a.source == "sparkapplication" and (a.namespace, a.name) in operator)
            and not (a.source == "apache-operator" and (a.namespace, a.name) in apache)
            and not any(
                t.uid in uids or any(e.uid in uids for e in t.executors) for t in a.attempts
            )
        ]
        return Analysis(
            tuple(
                sorted([*kept, *part.apps], key=lambda a: (a.namespace, a.name, a.created_at or ""))
            ),
            self.analysis.ungrouped,
        )
