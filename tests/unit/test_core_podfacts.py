"""A pod's facts are read from its typed fields as ``raw`` reads its JSON; "quiet" hides no loss."""

from __future__ import annotations

import copy
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_spark.core import raw
from kubectl_spark.core.analyze import pod_state
from kubectl_spark.core.grouping import group
from kubectl_spark.core.losses import classify
from kubectl_spark.core.pod import Pod, _careful, as_json
from kubectl_spark.core.podfacts import UNREGISTERED_ID, canonical_time, facts
from kubectl_spark.core.reasons import NodeHealth, PodContext, spark_container
from kubectl_spark.knowledge import printpod
from kubectl_spark.knowledge.labels import (
    ACTION_ANNOTATION,
    APACHE_APP,
    APP_ID,
    APP_NAME,
    EXEC_ID,
    FENCE_LABEL,
    OPERATOR_APP,
    ROLE,
    SUBMISSION,
)
from tests.core_pods import typed_snapshot
from tests.hostile import RUNNING, varied_pods


@settings(
    max_examples=800, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(varied_pods())
def test_facts_read_as_raw_reads_the_json_and_quiet_pods_have_no_reason(
    pod: dict[str, Any],
) -> None:
    typed = Pod.of(pod)  # never raises, however the pod is shaped
    read = facts(typed)
    labels = raw.labels(pod)
    ref = raw.controller_ref(pod)
    assert (read.name, read.uid, read.namespace) == (
        raw.name(pod),
        raw.uid(pod),
        raw.namespace(pod),
    )
    assert (read.role, read.app_id) == (labels.get(ROLE, ""), labels.get(APP_ID, ""))
    assert read.phase == (raw.text(pod, "status", "phase") or "Unknown")
    assert read.node == (raw.text(pod, "spec", "nodeName") or None)
    assert (read.owner_kind, read.owner_uid) == (raw.text(ref, "kind"), raw.text(ref, "uid"))
    assert read.deleting == bool(raw.text(pod, "metadata", "deletionTimestamp"))
    # Every other field by name: ``_read`` passes them by position.
    assert read.created == canonical_time(raw.text(pod, "metadata", "creationTimestamp"))
    told = labels.get(EXEC_ID, "")
    name_suffix = raw.name(pod).rpartition("-")[2]
    assert read.exec_id == (name_suffix if told == UNREGISTERED_ID else told)
    assert (read.app_name, read.operator_app, read.apache_app, read.submission) == (
        labels.get(APP_NAME, ""),
        labels.get(OPERATOR_APP, ""),
        labels.get(APACHE_APP, ""),
        labels.get(SUBMISSION, ""),
    )
    assert read.owner_name == raw.text(ref, "name")
    assert read.restarts == printpod.restarts(as_json(typed))
    assert read.source == typed.source  # where it was read: a field, not the JSON
    assert read.action == raw.annotation_map(pod).get(ACTION_ANNOTATION, "")
    assert read.fenced == (labels.get(FENCE_LABEL) == "true")
    assert not read.cluster_member
    if read.quiet:
        ok = NodeHealth(True, "node: Ready")
        for role in ("driver", "executor"):
            assert classify(PodContext(typed, role, ok, ())) is None
        assert pod_state(read, ok, spark_container(typed)) == "Running"


@settings(max_examples=300, deadline=None, derandomize=True)
@given(varied_pods())
def test_the_decoder_and_the_careful_reader_agree_where_the_decoder_takes_a_pod(
    pod: dict[str, Any],
) -> None:
    """One schema, read two ways: msgspec's typed decode, and field by field with ``raw``'s
    rules for a pod it refuses. Wherever the decoder takes a pod, both read it the same."""
    try:
        decoded = msgspec.convert(pod, Pod)
    except msgspec.ValidationError:
        return
    assert _careful(pod, Pod) == decoded


def test_a_plain_running_pod_is_quiet_and_a_deleted_one_is_not() -> None:
    assert facts(Pod.of(RUNNING)).quiet
    deleting = copy.deepcopy(RUNNING)
    deleting["metadata"]["deletionTimestamp"] = "2026-03-01T03:00:00Z"
    assert not facts(Pod.of(deleting)).quiet


def test_a_kept_copy_is_never_quiet_and_an_annotation_does_not_make_one() -> None:
    """Where a pod was read is its ``source``, never an annotation a pod in the cluster could
    carry too (the bug fixed in cc488d2)."""
    marked = copy.deepcopy(RUNNING)
    marked["metadata"]["annotations"] = {"kubectl-spark.io/source": "history"}
    read = facts(Pod.of(marked))
    assert read.source == "cluster" and read.quiet
    kept = msgspec.structs.replace(Pod.of(RUNNING), source="watch", seen_at="2026-03-01T03:00:00Z")
    assert facts(kept).source == "watch" and not facts(kept).quiet


def test_grouping_takes_the_gateways_facts_of_the_very_pod_only() -> None:
    """``Snapshot.pod_facts`` (read as the pages came) serve the analysis; a fact whose pod is
    another object than the one at its place is read again from the pod listed."""
    pod, other = Pod.of(RUNNING), copy.deepcopy(RUNNING)
    other["metadata"]["uid"] = "u-2"
    read = facts(pod)
    groups, _ = group([pod], [], [], known=[read])
    assert groups[0].attempts[0].executors[0] is read
    groups, _ = group([pod], [], [], known=[facts(Pod.of(other))])
    (executor,) = groups[0].attempts[0].executors
    assert executor.pod is pod and executor.uid == "u-1"


def test_a_spark_clusters_members_are_read_as_its_driver_and_executors_by_facts_alone() -> None:
    """A function of the pod alone (no step of grouping's), so a fact read early is the whole
    fact: a SparkCluster's master is its driver, a worker an executor with its ordinal."""
    worker = copy.deepcopy(RUNNING)
    worker["metadata"]["name"] = "cluster-worker-3"
    worker["metadata"]["labels"] = {
        "spark-role": "worker",
        "spark.operator/spark-cluster-name": "cluster",
    }
    master = copy.deepcopy(worker)
    master["metadata"]["labels"]["spark-role"] = "master"
    read = facts(Pod.of(worker))
    assert (read.role, read.exec_id, read.cluster_member) == ("executor", "3", True)
    assert (facts(Pod.of(master)).role, facts(Pod.of(master)).cluster_member) == ("driver", True)
    plain = copy.deepcopy(worker)
    del plain["metadata"]["labels"]["spark.operator/spark-cluster-name"]
    assert (facts(Pod.of(plain)).role, facts(Pod.of(plain)).cluster_member) == ("worker", False)


@settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.lists(varied_pods(), max_size=6), st.integers(0, 6), st.data())
def test_the_snapshots_drivers_are_the_pods_labelled_so_however_its_facts_were_read(
    pods: list[dict[str, Any]], read: int, data: st.DataObject
) -> None:
    """``Snapshot.driver_pods`` tells them by the gateway's facts (kept copies added after
    them, and pods replaced since, read from the pods): the same pods as the labels' scan."""
    roles = st.sampled_from(["driver", "executor", "master", 3, ""])
    for pod in pods:
        labels = pod["metadata"].get("labels")
        if isinstance(labels, dict):
            labels["spark-role"] = data.draw(roles)
            if data.draw(st.booleans()):
                labels["spark.operator/spark-cluster-name"] = "c"
    snapshot = typed_snapshot(pods=pods)
    known = [facts(pod) for pod in snapshot.pods[:read]]
    changed: bool = data.draw(st.booleans())
    if known and changed:
        stale = copy.deepcopy(RUNNING)  # the list changed after the gateway read it
        stale["metadata"]["labels"]["spark-role"] = data.draw(roles)
        known[0] = facts(Pod.of(stale))
    snapshot = typed_snapshot(pods=snapshot.pods, pod_facts=known)
    labelled = [p for p in snapshot.pods if p.metadata.labels.get(ROLE) == "driver"]
    assert snapshot.driver_pods() == labelled
