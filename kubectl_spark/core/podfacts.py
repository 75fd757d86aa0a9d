"""What the core needs from each pod, read once.

Grouping, states, loss reasons and the history all read the same few fields of a pod (name,
labels, owner, phase, container state). Reading them once per pod from its typed fields
(``core.pod``: a pod not well formed was read safely where it was typed) keeps the core at
hundreds of thousands of pods per second (the performance issue).
``quiet`` marks a pod the classifier would find nothing to say about — most pods, most of the
time — so that only the others pay for a full classification with its evidence.
"""

from __future__ import annotations

from functools import lru_cache

import msgspec

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
    SPARK_CONTAINERS,
    SUBMISSION,
)

from .pod import CLUSTER, ContainerStatus, Pod, as_json


class PodFacts(msgspec.Struct, gc=False):
    """A pod's facts, in the order ``_read`` passes them.

    Built for every pod of every list, so built cheaply: a struct given its fields by position
    takes 0.34 µs, by keyword 2.8 µs (a slotted dataclass 1.0 and 3.4 µs), 30 ms of a warm
    ``ls -A`` at 10,000 pods (docs/performance.md). mypy checks each position's type, and a
    property test checks every field by name against the pod it was read from.
    """

    pod: Pod
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
    # A SparkCluster's master or worker, read as its application's driver or an executor
    cluster_member: bool = False

    def label(self, key: str) -> str:
        """Any other label (``--group-by``): rare, so read from the pod."""
        return self.pod.metadata.labels.get(key, "")


@lru_cache(maxsize=1 << 16)
def canonical_time(value: str) -> str:
    """An API timestamp in one RFC 3339 form ("" if unreadable); pods share few distinct ones."""
    return times.rfc3339(times.parse(value)) or ""


# Spark's StatefulSet and Deployment allocators build one pod template for every executor,
# with the executor id "EXECID" (KubernetesConf.createExecutorConf(conf, "EXECID", …) in
# StatefulSetPodsAllocator and DeploymentPodsAllocator); each JVM asks the driver for its id as
# it registers, so the pod's label never says it. Such a pod is told by its own name's suffix.
UNREGISTERED_ID = "EXECID"


def facts(pod: Pod) -> PodFacts:
    """The facts of one pod.

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


def _read(pod: Pod) -> PodFacts:
    meta, status = pod.metadata, pod.status
    labels = meta.labels
    get = labels.get
    exec_id = get(EXEC_ID, "")
    if exec_id == UNREGISTERED_ID:
        exec_id = meta.name.rpartition("-")[2]
    owner = pod.controller()
    restarts, running = _restarts_and_running(pod)
    deleting = bool(meta.deletion_timestamp)
    fenced = get(FENCE_LABEL) == "true"
    annotations = meta.annotations
    action = annotations.get(ACTION_ANNOTATION, "") if annotations else ""
    quiet = (
        status.phase == "Running"
        and not deleting
        and not status.reason
        and running
        and pod.source == CLUSTER
        and not fenced
        and get(INACTIVE) != "true"
        and not any(c.type == "DisruptionTarget" for c in status.conditions)
    )
    return PodFacts(
        pod,
        meta.name,
        meta.uid,
        meta.namespace,
        canonical_time(meta.creation_timestamp),  # created
        get(ROLE, ""),
        get(APP_ID, ""),
        exec_id,
        get(APP_NAME, ""),
        get(OPERATOR_APP, ""),
        get(APACHE_APP, ""),
        get(SUBMISSION, ""),
        owner.kind if owner else "",
        owner.uid if owner else "",
        owner.name if owner else "",
        pod.spec.node_name or None,  # node
        status.phase or "Unknown",
        restarts,
        pod.source,
        action,
        fenced,
        deleting,
        quiet,
    )


def _restarts_and_running(pod: Pod) -> tuple[int, bool]:
    """Kubectl's restart count and whether the Spark container runs."""
    status = pod.status
    restarts, running = 0, True
    statuses = status.container_statuses
    if statuses:
        chosen = None
        ended = False  # any container terminated: a sidecar's exit can fail the executor
        for container in statuses:
            restarts += container.restart_count or 0
            if chosen is None and container.name in SPARK_CONTAINERS:
                chosen = container
            ended = ended or (
                container.state is not None and container.state.terminated is not None
            )
        # terminated, or waiting (CrashLoopBackOff): the classifiers look. Without Spark's
        # default names, which status is Spark's is the classifiers' to find (the last declared
        # container, reasons.spark_container): any container not running makes them look.
        looked = [chosen] if chosen is not None else statuses
        running = not ended and all(_running_or_untold(c) for c in looked)
    if status.init_container_statuses:  # rare in Spark pods: kubectl's careful count
        restarts = kubectl_restarts(pod)
    return restarts, running


def _running_or_untold(container: ContainerStatus) -> bool:
    """Running, or no state told at all (the kubelet has not reported it yet)."""
    state = container.state
    return (
        state is None
        or state.running is not None
        or (state.waiting is None and state.terminated is None)
    )


def kubectl_restarts(pod: Pod) -> int:
    """A pod's restarts as the RESTARTS column of ``kubectl get pods`` counts them.

    Init containers' restarts count while the pod initializes (a driver whose jar-fetching init
    container crash-looped has restarts, though its Spark container never ran).
    """
    return printpod.restarts(as_json(pod))
