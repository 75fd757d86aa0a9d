"""Issue 50, points 2-4: verdicts read from the container's and the kubelet's own words.

Each case is built from the field values and texts the real systems write, cited per test:
the kubelet (``pkg/kubelet``: prober.go, kuberuntime_manager.go, kubelet_pods.go, lifecycle,
cm/topologymanager, cm/cpumanager, sysctl) and Spark 4.1.1 (its jars, read with javap).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_spark.core.losses import classify
from kubectl_spark.core.model import Reason
from kubectl_spark.core.reasons import NodeHealth
from tests.core_pods import pod_context
from tests.loss_pods import pod

DRIVER_END = "2026-01-01T00:05:00Z"


def verdict(item: dict[str, Any], role: str = "executor", **ctx: Any) -> Reason:
    found = classify(pod_context(item, role, **ctx))
    assert found is not None
    return found


def ended(code: int, reason: str, finished: str = "2026-01-01T00:05:01Z") -> dict[str, Any]:
    return pod("Failed", terminated={"exitCode": code, "reason": reason, "finishedAt": finished})


OWNER_GONE: dict[str, Any] = {"owner_gone": True, "owner_attempt": 1}


# ---------------------------------------------------------------- point 2: its own end wins
@pytest.mark.parametrize(
    ("item", "code"),
    [
        (ended(137, "OOMKilled"), "OOMKilled"),
        (ended(52, "Error"), "JvmOutOfMemory"),
        (ended(137, "Error"), "PossibleOOM"),
        (ended(139, "Error"), "ExitCode"),
    ],
)
@pytest.mark.parametrize("owner_end", [DRIVER_END, None])
def test_an_oom_or_crash_is_not_owner_gone_when_the_driver_ended_about_then(
    item: dict[str, Any], code: str, owner_end: str | None
) -> None:
    """The container's own evidence wins over a driver that ended then, or whose end is unknown.

    Only the exits an executor makes because its driver went away read as OwnerGone:
    CoarseGrainedExecutorBackend's "Driver … disassociated! Shutting down." (exit 1) and
    ExecutorExitCode.HEARTBEAT_FAILURE (56).
    """
    found = verdict(item, owner_ended_at=owner_end, **OWNER_GONE)
    assert found.code == code
    assert found.counts_as_failure


@pytest.mark.parametrize("code", [1, 56])
def test_the_exits_of_a_driver_going_away_stay_owner_gone(code: int) -> None:
    """An executor ends 1 or 56 when its driver goes (CoarseGrainedExecutorBackend.onDisconnected
    exits 1; SparkExitCode.HEARTBEAT_FAILURE, 56, after Executor.reportHeartBeat fails).
    """
    found = verdict(ended(code, "Error"), owner_ended_at=DRIVER_END, **OWNER_GONE)
    assert (found.code, found.counts_as_failure) == ("OwnerGone", False)


# ---------------------------------------------------------------------- point 3: probe kills
def probe_events(kind: str, container: str = "spark-kubernetes-executor") -> list[dict[str, Any]]:
    """The kubelet's two Events: prober.go's Unhealthy, kuberuntime_manager.go's Killing."""
    return [
        {
            "reason": "Unhealthy",
            "message": f'{kind.capitalize()} probe failed: Get "http://10.0.0.7:4040/": '
            "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            "source": {"component": "kubelet"},
            "count": 3,
        },
        {
            "reason": "Killing",
            "message": f"Container {container} failed {kind} probe, will be restarted",
            "source": {"component": "kubelet"},
        },
    ]


@pytest.mark.parametrize("code", [143, 137])
def test_a_liveness_kill_ends_in_143_as_often_as_137(code: int) -> None:
    """The kubelet stops the container with SIGTERM, SIGKILL after the grace period."""
    found = verdict(ended(code, "Error"), events=probe_events("liveness"))
    assert (found.code, found.exit_code, found.category) == ("LivenessProbe", code, "app")
    assert any("failed liveness probe" in e for e in found.evidence)


def test_a_startup_probe_kill_is_named() -> None:
    """prober.go's "Startup probe failed" Unhealthy Event, then kuberuntime_manager.go's Killing
    ("Container ... failed startup probe, will be restarted"): SIGTERM, exit 143."""
    found = verdict(ended(143, "Error"), events=probe_events("startup"))
    assert found.code == "StartupProbe"
    assert "startup probe failed" in found.message


def test_a_driver_killed_by_its_own_ui_liveness_probe_says_so() -> None:
    """A liveness probe on the driver's UI port (Constants.UI_PORT_NAME, 4040)."""
    item = ended(143, "Error")
    item["status"]["containerStatuses"][0]["name"] = "spark-kubernetes-driver"
    item["spec"]["containers"] = [
        {
            "name": "spark-kubernetes-driver",
            "livenessProbe": {"httpGet": {"path": "/", "port": 4040}, "failureThreshold": 3},
        }
    ]
    found = verdict(item, "driver", events=probe_events("liveness", "spark-kubernetes-driver"))
    assert found.code == "LivenessProbe"
    assert "Spark UI" in found.message


def test_a_bare_sigterm_is_from_outside_and_nobodys_fault_yet() -> None:
    """143 with no Event or condition to say who sent it: Spark 4.1.1's
    ExecutorPodsLifecycleManager writes "143(unexpected)"; a person, a controller or the node."""
    found = verdict(ended(143, "Error"))
    assert (found.code, found.category, found.counts_as_failure) == ("Sigterm", "unknown", True)
    assert "SIGTERM from outside" in found.message


# ------------------------------------------------------------ point 4: the kubelet's words
@pytest.mark.parametrize(
    ("why", "message", "category"),
    [
        # cm/topologymanager: TopologyAffinityError{}.Error()
        (
            "TopologyAffinityError",
            "Resources cannot be allocated with Topology locality",
            "cluster",
        ),
        # cm/cpumanager static policy: SMTAlignmentError
        (
            "SMTAlignmentError",
            "SMT Alignment Error: requested 3 cpus not multiple cpus per core = 2",
            "cluster",
        ),
        # pkg/kubelet/sysctl: the pod asked for a sysctl the node does not allow
        ("SysctlForbidden", 'forbidden sysctl: "net.core.somaxconn" not allowlisted', "app"),
        ("OutOfmemory", "Node didn't have enough resource: memory", "cluster"),
        (
            "UnexpectedAdmissionError",
            "Allocate failed due to no healthy devices present",
            "cluster",
        ),
    ],
)
def test_kubelet_admission_rejections_by_their_reasons(
    why: str, message: str, category: str
) -> None:
    """lifecycle/predicate.go (admission): the pod Failed with the admit handler's reason and
    message, no container ever created; the reasons are each handler's own (cited per case)."""
    rejected = pod("Failed", reason=why, message=message)
    rejected["status"]["containerStatuses"] = []
    found = verdict(rejected)
    assert (found.code, found.category, found.counts_as_failure) == (
        "AdmissionRejected",
        category,
        True,
    )
    assert why in found.message and message in found.message


def test_container_status_unknown_is_lost_state_not_a_lost_node() -> None:
    """kubelet_pods.go: "The container could not be located when the pod was terminated"."""
    item = pod(
        "Failed",
        terminated={
            "exitCode": 137,
            "reason": "ContainerStatusUnknown",
            "message": "The container could not be located when the pod was terminated",
        },
    )
    found = verdict(item, node=NodeHealth(True))
    assert (found.code, found.category) == ("ContainerStateLost", "cluster")
    assert "runtime or kubelet restart" in found.message


def test_oomkilled_is_worded_as_an_oom_kill_wherever_it_struck() -> None:
    """kuberuntime (container status from the runtime): OOMKilled for a kill by the kernel's
    OOM killer at the container's limit, the pod's cgroup limit or on a node out of memory."""
    found = verdict(ended(137, "OOMKilled"))
    assert found.message.startswith("OOM-killed")
    assert "pod's memory limit" in found.message and "node ran out" in found.message
    assert "memory limit exceeded" not in found.message


def test_with_a_sidecar_the_reason_is_sparks_containers() -> None:
    """A pod template renamed Spark's container: Spark appends it after the template's others
    (ExecutorPodsAllocator ``addToContainers(SparkPod.container)``), and the kubelet sorts the
    statuses by name, so the first status is the sidecar's."""
    item = pod("Failed", labels={"spark-version": "4.1.1"})
    item["spec"]["containers"] = [{"name": "istio-proxy"}, {"name": "main"}]
    item["status"]["containerStatuses"] = [
        {"name": "istio-proxy", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
        {"name": "main", "state": {"terminated": {"exitCode": 52, "reason": "Error"}}},
    ]
    found = verdict(item)
    assert (found.code, found.exit_code) == ("JvmOutOfMemory", 52)
    assert any("containerStatuses[main]" in e for e in found.evidence)
