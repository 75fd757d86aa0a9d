"""The core's input: the snapshot a gateway read, and the lookups built from it once.

A module of its own so that the analysis, the alerts and the history all import it without
importing each other.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Self

from kubectl_spark.knowledge import times
from kubectl_spark.knowledge.labels import EXECUTOR_DELETED, ROLE

from . import raw
from .node import Node, nodes_of
from .pod import Pod, pods_of
from .podfacts import PodFacts, canonical_time
from .raw import RawObject
from .reasons import NodeHealth


@dataclass(frozen=True)
class Snapshot:
    """What the gateway read: pods and nodes typed (``core.pod``, ``core.node``), the rest JSON."""

    pods: Sequence[Pod] = ()  # typed as the gateway read them (``Snapshot.of`` types any left)
    jobs: Sequence[object] = ()
    events: Sequence[object] = ()
    nodes: Sequence[Node] = ()  # typed as the gateway read them (``Snapshot.of`` types any left)
    sparkapplications: Sequence[object] = ()
    # The Apache operator's SparkApplications (spark.apache.org) and SparkClusters
    apacheapps: Sequence[object] = ()
    sparkclusters: Sequence[object] = ()
    volumeattachments: Sequence[object] = ()
    pvcs: Sequence[object] = ()
    now: datetime = field(default_factory=lambda: datetime.now(UTC))
    pods_resource_version: str = ""  # where a watch of the pods continues from
    # Spark's own executor list per live driver pod uid: {"executors": [...]} or {"note": why not}
    spark_views: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    # A Spark History Server's executor lists by app id, for attempts whose driver does not run
    finished_views: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    unreadable: tuple[str, ...] = ()  # lists the gateway was refused (forbidden), by field name
    # Pods that executors name as their owner but that carry no spark-role label: a driver in
    # client mode, running in a pod of its own (a notebook), with spark.kubernetes.driver.pod.name.
    owners: Sequence[Pod] = ()
    # What the gateway already read of the pods as their pages came (``podfacts.facts``), in
    # the order of ``pods``: read while the next page was on its way, they cost the analysis
    # nothing. A fact whose ``pod`` is not the very pod at its place is not used (a list
    # that was changed after, or kept copies added at its end, are read again).
    pod_facts: Sequence[PodFacts] = ()
    # The pods as the API sent them, by uid, for the plans, which copy or patch whole objects
    # (a force-kill keeps a bare driver's spec, a resubmit copies it); empty where the pods
    # were read slim (``ls``, the live views: a plan reads them again, ``app.act.reread``).
    pod_objects: Mapping[str, RawObject] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        lists: Mapping[str, Sequence[object]],
        *,
        now: datetime,
        pods_resource_version: str = "",
        unreadable: Sequence[str] = (),
        pod_facts: Sequence[PodFacts] = (),
        pod_objects: Mapping[str, RawObject] | None = None,
    ) -> Self:
        """A snapshot from lists keyed by the field names (a gateway's reads); missing ones empty."""
        return cls(
            pods=pods_of(lists.get("pods", ())),
            owners=pods_of(lists.get("owners", ())),
            jobs=lists.get("jobs", ()),
            events=lists.get("events", ()),
            nodes=nodes_of(lists.get("nodes", ())),
            sparkapplications=lists.get("sparkapplications", ()),
            apacheapps=lists.get("apacheapps", ()),
            sparkclusters=lists.get("sparkclusters", ()),
            volumeattachments=lists.get("volumeattachments", ()),
            pvcs=lists.get("pvcs", ()),
            now=now,
            pods_resource_version=pods_resource_version,
            unreadable=tuple(unreadable),
            pod_facts=pod_facts,
            pod_objects=pod_objects or {},
        )

    def driver_pods(self) -> list[Pod]:
        """The pods labelled spark-role=driver.

        Told by the facts the gateway read where it read this very pod (``pod_facts``), so that
        asking costs a pass over the facts, not a read of every pod's labels (8 ms at 10,000
        pods); pods beyond them (kept copies added at the end) are read.
        """
        known = self.pod_facts
        found: list[Pod] = []
        for pod, f in zip(self.pods, known, strict=False):
            if f.pod is not pod:  # the list changed after the gateway read it
                if pod.metadata.labels.get(ROLE) == "driver":
                    found.append(pod)
            elif f.role == "driver" and not f.cluster_member:  # not a SparkCluster's master
                found.append(pod)
        return found + [
            p for p in self.pods[len(known) :] if p.metadata.labels.get(ROLE) == "driver"
        ]


# The snapshot's lists of the API's objects, by field name (what a gateway reads, and what
# several clusters' snapshots join side by side).
OBJECT_LISTS = (
    "pods",
    "owners",
    "jobs",
    "events",
    "nodes",
    "sparkapplications",
    "apacheapps",
    "sparkclusters",
    "volumeattachments",
    "pvcs",
)


@dataclass
class Index:
    """Lookups the classifiers need, built once per snapshot."""

    nodes: dict[str, NodeHealth]
    nodes_known: bool
    events_by_uid: dict[str, list[RawObject]]
    events_by_name: dict[tuple[str, str, str], list[RawObject]]
    # kubectl spark's Events on the executors an action deleted, by (namespace, driver pod):
    # what is left of them once their pods are gone (``core.plans.base.executor_deleted``).
    deleted_executors: dict[tuple[str, str], list[RawObject]] = field(default_factory=dict)

    def unreachable(self, name: str | None) -> bool:
        """Whether the node is known and its kubelet does not answer (gone counts too)."""
        health = self.node(name)
        return health is not None and not health.reachable

    def node(self, name: str | None) -> NodeHealth | None:
        if not name:
            return None
        found = self.nodes.get(name)
        if found is None and self.nodes_known:
            return NodeHealth(False, f"node {name} no longer exists")
        return found

    def events_for(self, obj: object, kind: str = "Pod") -> list[RawObject]:
        by_uid = self.events_by_uid.get(raw.uid(obj), [])
        if by_uid:
            return by_uid
        return self.events_by_name.get((raw.namespace(obj), kind, raw.name(obj)), [])

    def pod_events(self, f: PodFacts) -> list[RawObject]:
        """``events_for`` a pod whose facts are read: no JSON walked for the (usual) none."""
        return self.events_by_uid.get(f.uid) or self.events_by_name.get(
            (f.namespace, "Pod", f.name), []
        )


OUT_OF_SERVICE_TAINT = "node.kubernetes.io/out-of-service"


def node_health(node: Node) -> NodeHealth:
    name = node.name
    status = node.ready.status
    unreachable = node.tainted("node.kubernetes.io/unreachable")
    out_of_service = node.tainted(OUT_OF_SERVICE_TAINT)
    if status == "True" and not unreachable:
        return NodeHealth(True, f"node {name}: Ready", out_of_service=out_of_service)
    since = node.ready.since
    detail = node.ready.message or node.ready.reason
    return NodeHealth(
        False,
        f"node {name}: Ready={status or 'missing'}"
        + (f" ({detail})" if detail else "")
        + (f" since {since}" if since else "")
        + (", tainted unreachable" if unreachable else "")
        + (", tainted out-of-service" if out_of_service else ""),
        canonical_time(since) or None,
        out_of_service,
    )


def health_by_name(nodes: Iterable[Node]) -> dict[str, NodeHealth]:
    """Each named node's health (a node without a name is none the pods could name)."""
    return {n.name: node_health(n) for n in nodes if n.name}


def build_index(snapshot: Snapshot) -> Index:
    nodes = health_by_name(snapshot.nodes)
    by_uid: dict[str, list[RawObject]] = defaultdict(list)
    by_name: dict[tuple[str, str, str], list[RawObject]] = defaultdict(list)
    deleted: dict[tuple[str, str], list[RawObject]] = {}
    for event in snapshot.events:
        if not isinstance(event, dict):
            continue
        involved = raw.mapping(event, "involvedObject") or raw.mapping(event, "regarding")
        if raw.text(involved, "uid"):
            by_uid[raw.text(involved, "uid")].append(event)
        by_name[
            (
                raw.text(involved, "namespace") or raw.namespace(event),
                raw.text(involved, "kind"),
                raw.text(involved, "name"),
            )
        ].append(event)
        if event.get("reason") == EXECUTOR_DELETED:
            deleted.setdefault(deleted_under(event), []).append(event)
    known = bool(nodes)
    if not known:
        nodes = nodes_from_pod_events(snapshot.pods, by_uid)
    return Index(nodes, known, by_uid, by_name, deleted)


def deleted_under(event: object) -> tuple[str, str]:
    """(namespace, driver pod) of an executor kubectl spark deleted: its Event's ``related``."""
    related = raw.mapping(event, "related")
    return (raw.text(related, "namespace") or raw.namespace(event), raw.text(related, "name"))


NOT_READY_SLACK_SECONDS = 60


def nodes_from_pod_events(
    pods: Sequence[Pod], events_by_uid: Mapping[str, list[RawObject]]
) -> dict[str, NodeHealth]:
    """Unreachable nodes told by their pods, for when the Node objects cannot be read.

    A tenant may not list nodes. The node lifecycle controller still leaves its mark on each
    pod of a node that stops reporting: the pod's Ready condition turns False and a
    NodeNotReady Event names the pod. A pod still not Ready since about that Event (a later
    transition means the node came back and something else failed) says its node is lost.
    """
    told: dict[str, NodeHealth] = {}
    for pod in pods:
        events = events_by_uid.get(pod.metadata.uid)
        seen = [e for e in events or () if raw.text(e, "reason") == "NodeNotReady"]
        node = pod.spec.node_name if seen else ""
        if not node or node in told:
            continue
        ready = pod.condition("Ready")
        since = times.parse(ready.last_transition_time) if ready else None
        last = max(
            (
                t
                for e in seen
                if (t := times.parse(raw.text(e, "lastTimestamp") or raw.text(e, "eventTime")))
            ),
            default=None,
        )
        if ready is None or ready.status != "False" or since is None or last is None:
            continue
        if (since - last).total_seconds() <= NOT_READY_SLACK_SECONDS:
            told[node] = NodeHealth(
                False,
                f"node {node}: not ready since {times.rfc3339(since)} (told by pod "
                f"{pod.metadata.name}: a NodeNotReady Event and Ready=False; the nodes could not be read)",
                times.rfc3339(since),
            )
    return told
