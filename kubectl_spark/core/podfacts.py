"""What the core needs from each pod, read once.

Grouping, states, loss reasons and the history all read the same few fields of a pod (name,
labels, owner, phase, container state). Reading them once per pod, with plain indexing for the
well-formed JSON an API server sends and ``raw``'s defensive accessors only when a pod is not
well formed, keeps the core at hundreds of thousands of pods per second (the performance issue).
``quiet`` marks a pod the classifier would find nothing to say about — most pods, most of the
time — so that only the others pay for a full classification with its evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from kubectl_spark.knowledge import printpod, times
from kubectl_spark.knowledge.labels import (
    ACTION_ANNOTATION,
    APACHE_APP,
    APACHE_CLUSTER,
    APP_ID,
    APP_NAME,
    EXEC_ID,
    FENCE_LABEL,
    INACTIVE,
    OPERATOR_APP,
    ROLE,
    SOURCE,
    SPARK_CONTAINERS,
    SUBMISSION,
)

from . import raw
from .raw import RawObject

KEPT = ("watch", "history", "recorder")


@dataclass(slots=True, kw_only=True)
class PodFacts:
    pod: RawObject
    name: str
    uid: str
    namespace: str
    created: str  # RFC 3339, "" when missing or unreadable
    role: str
    app_id: str
    exec_id: str
    app_name: str
    operator_app: str
    apache_app: str  # the Apache operator's application (spark.operator/spark-app-name)
    # A SparkCluster's master or worker, read as its application's driver or an executor
    cluster_member: bool = False
    submission: str
    owner_kind: str  # of the controller ownerReference
    owner_uid: str
    owner_name: str
    node: str | None
    phase: str  # "Unknown" when missing
    restarts: int  # as kubectl's RESTARTS counts them (kubectl_restarts)
    source: str  # cluster | watch | history
    action: str  # the kubectl-spark action that marked it (fence, force-kill), else ""
    fenced: bool  # labelled kubectl-spark.io/fenced=true
    deleting: bool  # has a deletionTimestamp
    quiet: bool  # Running, not deleting, fenced, inactive or kept, its container running, no disruption

    def label(self, key: str) -> str:
        """Any other label (``--group-by``): rare, so read from the pod."""
        return raw.labels(self.pod).get(key, "")


@lru_cache(maxsize=1 << 16)
def canonical_time(value: str) -> str:
    """An API timestamp in one RFC 3339 form ("" if unreadable); pods share few distinct ones."""
    return times.rfc3339(times.parse(value)) or ""


# Spark's StatefulSet and Deployment allocators build one pod template for every executor,
# with the executor id "EXECID" (KubernetesConf.createExecutorConf(conf, "EXECID", …) in
# StatefulSetPodsAllocator and DeploymentPodsAllocator); each JVM asks the driver for its id as
# it registers, so the pod's label never says it. Such a pod is told by its own name's suffix.
UNREGISTERED_ID = "EXECID"


def _named_id(name: object) -> str:
    """The last part of a controller-made pod's name (``spark-d-<appId>-0-<hash>-x7k2q``)."""
    return name.rpartition("-")[2] if isinstance(name, str) else ""


def _text(value: Any) -> str:
    """A label value as ``raw.labels`` reads it (numbers kept as text, anything else dropped)."""
    if type(value) is str:
        return value
    if isinstance(value, (int, float)):
        return str(value)
    return ""


def facts(pod: RawObject) -> PodFacts:
    """The facts of one pod; a pod that is not well formed is read field by field, safely.

    A function of the pod alone, so that facts a gateway read as the pod's page came serve
    every analysis of the snapshot (``Snapshot.pod_facts``).
    """
    return _as_cluster_member(_read(pod))


def _as_cluster_member(f: PodFacts) -> PodFacts:
    """A SparkCluster's master is read as its application's driver, each worker as an executor.

    SparkClusterResourceSpec (spark-submission-worker) makes a master StatefulSet and a worker
    StatefulSet, their pods labelled spark-role master or worker and
    spark.operator/spark-cluster-name. A worker's id is its StatefulSet ordinal.
    """
    if f.role not in ("master", "worker") or not f.label(APACHE_CLUSTER):
        return f
    f.cluster_member = True
    if f.role == "master":
        f.role = "driver"
    else:
        f.role = "executor"
        ordinal = f.name.rpartition("-")[2]
        f.exec_id = f.exec_id or (ordinal if ordinal.isdigit() else "")
    return f


def _read(pod: RawObject) -> PodFacts:
    # Read in line as the API's JSON: a field not shaped so raises, or fails the type checks
    # below, and ``_careful`` reads the pod instead.
    doc: Any = pod
    try:
        meta = doc["metadata"]
        status = doc["status"]
        labels = meta["labels"]
        name = meta["name"]
        uid = meta["uid"]
        namespace = meta["namespace"]
        created = meta["creationTimestamp"]
        phase = status["phase"]
        role = labels.get(ROLE, "")
        app_id = labels.get(APP_ID, "")
        exec_id = labels.get(EXEC_ID, "")
        if exec_id == UNREGISTERED_ID:
            exec_id = _named_id(meta.get("name"))
        app_name = labels.get(APP_NAME, "")
        operator_app = labels.get(OPERATOR_APP, "")
        apache_app = labels.get(APACHE_APP, "")
        submission = labels.get(SUBMISSION, "")
        # The API sends only strings; anything else (a hand-made or hostile object) is read safely.
        if not (
            type(name) is type(uid) is type(namespace) is type(created) is type(phase) is str
            and type(role) is type(app_id) is type(exec_id) is type(app_name) is str
            and type(operator_app) is type(submission) is type(apache_app) is str
        ):
            return _careful(pod)
        owner = _controller(meta)
        node = doc["spec"].get("nodeName")
        deletion = meta.get("deletionTimestamp")
        if (
            owner is None
            or not (node is None or type(node) is str)
            or not (deletion is None or type(deletion) is str)
        ):
            return _careful(pod)
        counted = _restarts_and_running(doc, status)
        if counted is None:
            return _careful(pod)
        restarts, running = counted
        deleting = bool(deletion)
        fenced = labels.get(FENCE_LABEL) == "true"
        source, kept, action = _source(meta)
        quiet = (
            phase == "Running"
            and not deleting
            and status.get("reason") in (None, "")
            and running
            and not kept
            and not fenced
            and labels.get(INACTIVE) != "true"
            and not any(c.get("type") == "DisruptionTarget" for c in status.get("conditions") or ())
        )
        return PodFacts(
            pod=pod,
            name=name,
            uid=uid,
            namespace=namespace,
            created=canonical_time(created),
            role=role,
            app_id=app_id,
            exec_id=exec_id,
            app_name=app_name,
            operator_app=operator_app,
            apache_app=apache_app,
            submission=submission,
            owner_kind=owner[0],
            owner_uid=owner[1],
            owner_name=owner[2],
            node=node or None,
            phase=phase or "Unknown",
            restarts=restarts,
            source=source,
            action=action,
            fenced=fenced,
            deleting=deleting,
            quiet=quiet,
        )
    except (KeyError, TypeError, AttributeError, IndexError):
        return _careful(pod)


def _controller(meta: dict[str, Any]) -> tuple[str, str, str] | None:
    """(kind, uid, name) of the controller ownerReference ("" each without one); None: malformed."""
    for ref in meta.get("ownerReferences") or ():
        if ref.get("controller") is True:
            found = (ref["kind"], ref["uid"], ref["name"])
            return found if type(found[0]) is type(found[1]) is type(found[2]) is str else None
    return ("", "", "")


def _restarts_and_running(pod: dict[str, Any], status: dict[str, Any]) -> tuple[int, bool] | None:
    """Kubectl's restart count and whether the Spark container runs; None: malformed."""
    restarts, running = 0, True
    statuses = status.get("containerStatuses")
    if statuses:
        chosen = None
        ended = False  # any container terminated: a sidecar's exit can fail the executor
        for container in statuses:
            count = container.get("restartCount") or 0
            if type(count) is not int:
                return None
            restarts += count
            if chosen is None and container.get("name") in SPARK_CONTAINERS:
                chosen = container
            ended = ended or "terminated" in (container.get("state") or ())
        # terminated, or waiting (CrashLoopBackOff): the classifiers look. Without Spark's
        # default names, which status is Spark's is the classifiers' to find (the last declared
        # container, reasons.spark_container): any container not running makes them look.
        looked = [chosen] if chosen is not None else statuses
        running = not ended and all(
            "running" in (container.get("state") or ("running",)) for container in looked
        )
    if status.get("initContainerStatuses"):  # rare in Spark pods: kubectl's careful count
        restarts = kubectl_restarts(pod)
    return restarts, running


def _source(meta: dict[str, Any]) -> tuple[str, bool, str]:
    """Where a pod was read, whether it carries the annotation at all, and its action.

    The cluster, or a kept copy of a gone pod (watch, history); a pod with the annotation is
    never quiet, whatever its value.
    """
    annotations = meta.get("annotations")
    if not annotations:
        return "cluster", False, ""
    action = _text(annotations.get(ACTION_ANNOTATION))
    if SOURCE in annotations:
        kept = _text(annotations[SOURCE])
        return (kept if kept in KEPT else "cluster"), True, action
    return "cluster", False, action


def _careful(pod: RawObject) -> PodFacts:
    """The same facts through ``raw``'s accessors, for a pod with missing or odd fields."""
    labels = raw.labels(pod)
    ref = raw.controller_ref(pod)
    notes = raw.annotation_map(pod)
    source = notes.get(SOURCE, "")
    return PodFacts(
        pod=pod,
        name=raw.name(pod),
        uid=raw.uid(pod),
        namespace=raw.namespace(pod),
        created=canonical_time(raw.text(pod, "metadata", "creationTimestamp")),
        role=labels.get(ROLE, ""),
        app_id=labels.get(APP_ID, ""),
        exec_id=_named_id(raw.name(pod))
        if labels.get(EXEC_ID, "") == UNREGISTERED_ID
        else labels.get(EXEC_ID, ""),
        app_name=labels.get(APP_NAME, ""),
        operator_app=labels.get(OPERATOR_APP, ""),
        apache_app=labels.get(APACHE_APP, ""),
        submission=labels.get(SUBMISSION, ""),
        owner_kind=raw.text(ref, "kind"),
        owner_uid=raw.text(ref, "uid"),
        owner_name=raw.text(ref, "name"),
        node=raw.text(pod, "spec", "nodeName") or None,
        phase=raw.text(pod, "status", "phase") or "Unknown",
        restarts=kubectl_restarts(pod),
        source=source if source in KEPT else "cluster",
        action=notes.get(ACTION_ANNOTATION, ""),
        fenced=labels.get(FENCE_LABEL) == "true",
        deleting=bool(raw.text(pod, "metadata", "deletionTimestamp")),
        quiet=False,
    )


def kubectl_restarts(pod: object) -> int:
    """A pod's restarts as the RESTARTS column of ``kubectl get pods`` counts them.

    Init containers' restarts count while the pod initializes (a driver whose jar-fetching init
    container crash-looped has restarts, though its Spark container never ran).
    """
    return printpod.restarts(pod)
