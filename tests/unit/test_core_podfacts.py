"""The fast read of a pod's facts says what the careful one says, and "quiet" never hides a loss."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_spark.core import raw
from kubectl_spark.core.analyze import pod_state
from kubectl_spark.core.grouping import group
from kubectl_spark.core.inputs import Snapshot
from kubectl_spark.core.losses import classify
from kubectl_spark.core.podfacts import _careful, facts
from kubectl_spark.core.reasons import NodeHealth, PodContext, spark_container
from kubectl_spark.knowledge.labels import ROLE
from tests.hostile import RUNNING, varied_pods

FIELDS = [f for f in facts(RUNNING).__slots__ if f not in ("pod", "quiet")]


@settings(
    max_examples=800, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(varied_pods())
def test_fast_and_careful_reads_agree_and_quiet_pods_have_no_reason(pod: dict[str, Any]) -> None:
    fast, careful = facts(pod), _careful(pod)
    assert {f: getattr(fast, f) for f in FIELDS} == {f: getattr(careful, f) for f in FIELDS}
    if fast.quiet:
        ok = NodeHealth(True, "node: Ready")
        for role in ("driver", "executor"):
            assert classify(PodContext(pod, role, ok, ())) is None
        assert pod_state(careful, ok, spark_container(pod)) == "Running"


def test_a_plain_running_pod_is_quiet_and_a_deleted_one_is_not() -> None:
    assert facts(RUNNING).quiet
    deleting = copy.deepcopy(RUNNING)
    deleting["metadata"]["deletionTimestamp"] = "2026-03-01T03:00:00Z"
    assert not facts(deleting).quiet


def test_grouping_takes_the_gateways_facts_of_the_very_pod_only() -> None:
    """``Snapshot.pod_facts`` (read as the pages came) serve the analysis; a fact whose pod is
    another object than the one at its place is read again from the pod listed."""
    pod, other = copy.deepcopy(RUNNING), copy.deepcopy(RUNNING)
    other["metadata"]["uid"] = "u-2"
    read = facts(pod)
    groups, _ = group([pod], [], [], known=[read])
    assert groups[0].attempts[0].executors[0] is read
    groups, _ = group([pod], [], [], known=[facts(other)])
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
    read = facts(worker)
    assert (read.role, read.exec_id, read.cluster_member) == ("executor", "3", True)
    assert (facts(master).role, facts(master).cluster_member) == ("driver", True)
    plain = copy.deepcopy(worker)
    del plain["metadata"]["labels"]["spark.operator/spark-cluster-name"]
    assert (facts(plain).role, facts(plain).cluster_member) == ("worker", False)


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
    known = [facts(pod) for pod in pods[:read] if isinstance(pod, dict)]
    changed: bool = data.draw(st.booleans())
    if known and changed:
        stale = copy.deepcopy(RUNNING)  # the list changed after the gateway read it
        stale["metadata"]["labels"]["spark-role"] = data.draw(roles)
        known[0] = facts(stale)
    snapshot = Snapshot(pods=pods, pod_facts=known)
    assert snapshot.driver_pods() == raw.having_label(pods, ROLE, "driver")
