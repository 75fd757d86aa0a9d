"""The fast read of a pod's facts says what the careful one says, and "quiet" never hides a loss."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubectl_spark.core.analyze import pod_state
from kubectl_spark.core.losses import classify
from kubectl_spark.core.podfacts import _careful, facts
from kubectl_spark.core.reasons import NodeHealth, PodContext, spark_container

RUNNING: dict[str, Any] = {
    "metadata": {
        "name": "app-exec-1",
        "namespace": "spark",
        "uid": "u-1",
        "creationTimestamp": "2026-03-01T02:00:00Z",
        "labels": {
            "spark-role": "executor",
            "spark-app-selector": "spark-1",
            "spark-exec-id": "1",
            "spark-app-name": "app",
        },
        "ownerReferences": [{"kind": "Pod", "name": "d", "uid": "d", "controller": True}],
    },
    "spec": {"nodeName": "node-1", "restartPolicy": "Never"},
    "status": {
        "phase": "Running",
        "containerStatuses": [
            {"name": "spark-kubernetes-executor", "restartCount": 0, "state": {"running": {}}}
        ],
    },
}

odd = st.one_of(
    st.none(),
    st.integers(-3, 3),
    st.booleans(),
    st.floats(allow_nan=False),
    st.just([]),
    st.just({}),
)
text = st.sampled_from(["", "x", "true", "Running", "2026-03-01T02:00:00+01:00", "not a time"])
value = st.one_of(text, odd)

# What a pod may say of a loss (each one makes it not quiet), and ways a pod can be malformed.
SIGNALS: list[tuple[tuple[Any, ...], Any]] = [
    (("metadata", "deletionTimestamp"), "2026-03-01T03:00:00Z"),
    (("metadata", "deletionTimestamp"), 0),
    (("metadata", "labels", "spark-exec-inactive"), "true"),
    (("metadata", "labels", "kubectl-spark.io/fenced"), "true"),
    (("metadata", "annotations"), {"kubectl-spark.io/source": "watch"}),
    (("metadata", "annotations"), {"kubectl-spark.io/source": "history"}),
    (("status", "phase"), "Failed"),
    (("status", "phase"), "Succeeded"),
    (("status", "phase"), "Pending"),
    (("status", "reason"), "Evicted"),
    (("status", "reason"), "Preempting"),
    (
        ("status", "conditions"),
        [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}],
    ),
    (
        ("status", "conditions"),
        [{"type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager"}],
    ),
    (
        ("status", "containerStatuses", 0, "state"),
        {"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
    ),
    (("status", "containerStatuses", 0, "state"), {"terminated": {"exitCode": 0}}),
    (
        ("status", "containerStatuses"),
        [
            {"name": "c", "state": {"terminated": {"exitCode": 1}}},
            {"name": "spark-kubernetes-executor", "state": {"running": {}}},
        ],
    ),
    (
        ("status", "containerStatuses"),
        [
            {"name": "sidecar", "state": {"running": {}}},
            {"name": "spark-kubernetes-executor", "state": {"terminated": {"exitCode": 52}}},
        ],
    ),
    # Init containers: one that failed, one crash-looping, one whose image cannot be pulled,
    # and a sidecar (an init container that always restarts) that restarted twice.
    (
        ("status", "initContainerStatuses"),
        [{"name": "fetch-jars", "restartCount": 0, "state": {"terminated": {"exitCode": 1}}}],
    ),
    (
        ("status", "initContainerStatuses"),
        [
            {"name": "istio-init", "restartCount": 0, "state": {"terminated": {"exitCode": 0}}},
            {
                "name": "fetch-jars",
                "restartCount": 3,
                "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                "lastState": {"terminated": {"exitCode": 2, "reason": "Error"}},
            },
        ],
    ),
    (
        ("status", "initContainerStatuses"),
        [{"name": "fetch-jars", "state": {"waiting": {"reason": "ImagePullBackOff"}}}],
    ),
    (
        ("status", "initContainerStatuses"),
        [
            {
                "name": "proxy",
                "restartCount": 2,
                "started": True,
                "ready": True,
                "state": {"running": {}},
                "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2026-03-01T02:30:00Z"}},
            }
        ],
    ),
    (("spec", "initContainers"), [{"name": "proxy", "image": "envoy", "restartPolicy": "Always"}]),
    (("status", "conditions"), [{"type": "Initialized", "status": "True"}]),
]
MALFORMED: list[tuple[tuple[Any, ...], st.SearchStrategy[Any]]] = [
    (("metadata", "name"), value),
    (("metadata", "uid"), value),
    (("metadata", "namespace"), value),
    (("metadata", "creationTimestamp"), value),
    (("metadata", "labels"), st.one_of(odd, st.just({"spark-role": "driver"}))),
    (("metadata", "labels", "spark-role"), value),
    (("metadata", "labels", "spark-exec-id"), value),
    (("metadata", "labels", "spark-exec-inactive"), value),
    (("metadata", "labels", "kubectl-spark.io/fenced"), value),
    (("metadata", "labels", "sparkoperator.k8s.io/app-name"), value),
    (("metadata", "annotations"), odd),
    (("metadata", "annotations", "kubectl-spark.io/source"), value),
    (("metadata", "deletionTimestamp"), odd),
    (
        ("metadata", "ownerReferences"),
        st.one_of(odd, st.just([{"controller": True}]), st.just(["x"])),
    ),
    (("metadata", "ownerReferences", 0, "controller"), value),
    (("metadata", "ownerReferences", 0, "uid"), value),
    (("spec",), odd),
    (("spec", "nodeName"), value),
    (("status",), odd),
    (("status", "phase"), value),
    (("status", "reason"), value),
    (("status", "conditions"), st.one_of(odd, st.just([{"type": "Ready", "status": "True"}, "x"]))),
    (("status", "containerStatuses"), st.one_of(odd, st.just(["x"]), st.just([{}]))),
    (("status", "containerStatuses", 0, "restartCount"), value),
    (("status", "containerStatuses", 0, "name"), value),
    (("status", "containerStatuses", 0, "state"), odd),
    (("status", "initContainerStatuses"), st.one_of(odd, st.just(["x"]), st.just([{}]))),
    (("status", "initContainerStatuses", 0, "restartCount"), value),
    (("status", "initContainerStatuses", 0, "name"), value),
    (("spec", "initContainers"), st.one_of(odd, st.just(["x"]), st.just([{"name": 3}]))),
]


def _set(pod: dict[str, Any], path: tuple[Any, ...], new: Any, delete: bool) -> None:
    where: Any = pod
    for key in path[:-1]:
        try:
            where = where[key]
        except (KeyError, IndexError, TypeError):
            return
    try:
        if delete:
            del where[path[-1]]
        else:
            where[path[-1]] = new
    except (KeyError, IndexError, TypeError):
        return


@st.composite
def pods(draw: Any) -> dict[str, Any]:
    pod = copy.deepcopy(RUNNING)
    for path, new in draw(st.lists(st.sampled_from(SIGNALS), max_size=2)):
        _set(pod, path, copy.deepcopy(new), delete=False)
    for path, values in draw(st.lists(st.sampled_from(MALFORMED), max_size=2)):
        _set(pod, path, draw(values), draw(st.booleans()))
    return pod


FIELDS = [f for f in facts(RUNNING).__slots__ if f not in ("pod", "quiet")]


@settings(
    max_examples=800, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(pods())
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
